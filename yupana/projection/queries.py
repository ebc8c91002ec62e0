"""The SPARQL text of every projection query, and the only way values get into it. Cold path.

Each query is a file in ``<repo>/queries/<name>.rq``. A file may hold placeholders that
this module fills, and nothing else ever touches the text:

* ``{{VALUES ?var}}`` — a ``VALUES ?var { … }`` block of terms, each serialised by
  :func:`serialise_term` (IRIs validated and written ``<…>``, literals escaped per the
  SPARQL grammar); a value that cannot be written safely raises :class:`TermError`;
* ``{{LIMIT}}`` / ``{{OFFSET}}`` — non-negative integers (paged reads);
* ``{{AFTER ?var}}`` — ``FILTER(!isIRI(?var) || STR(?var) > "…")`` with the last key of the previous page
  serialised as a literal (keyset paging of discovery: no large sorted OFFSET).

Strings are never pasted into query text: there is no other substitution.
:func:`counted` wraps a rendered query so the same answer carries its own row count.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from yupana.state import paths
from yupana.endpoint.base import Term

_PLACEHOLDER = re.compile(r"\{\{\s*(VALUES\s+\?([A-Za-z_][A-Za-z0-9_]*)|AFTER\s+\?([A-Za-z_][A-Za-z0-9_]*)|LIMIT|OFFSET)"
                          r"\s*\}\}")
#: The variable :func:`counted` binds to the answer's row count.
COUNT_VAR = "yupanaRowCount"
_SELECT_LINE = re.compile(r"^\s*SELECT\b", re.MULTILINE | re.IGNORECASE)
_VAR = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
_LANG = re.compile(r"[A-Za-z]+(?:-[A-Za-z0-9]+)*\Z")
# IRIREF excludes these characters and everything from U+0000 to U+0020.
_IRI_FORBIDDEN = frozenset('<>"{}|^`\\')
_IRI_OK = re.compile(r'[A-Za-z][A-Za-z0-9+.\-]*:[^<>"{}|^`\\\x00-\x20\ud800-\udfff]*\Z')
_ECHAR = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}

_cache: dict[str, str] = {}


class TermError(ValueError):
    """A value that cannot be written into a query safely (the message says why)."""


class QueryError(ValueError):
    """A query file that is missing or whose placeholders do not match what was given."""


def queries_dir() -> str:
    """``<repo>/queries``: where the .rq files live."""
    return os.path.join(paths.source_root(), "queries")


def load(name: str) -> str:
    """The text of ``queries/<name>.rq`` (read once per process)."""
    text = _cache.get(name)
    if text is None:
        path = os.path.join(queries_dir(), name + ".rq")
        try:
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
        except OSError as exc:
            raise QueryError(f"cannot read query {path}: {exc.strerror or exc}") from None
        _cache[name] = text
    return text


def serialise_iri(iri: str) -> str:
    """``<iri>``, or TermError when the IRI is relative or holds a character IRIREF forbids."""
    if isinstance(iri, str) and _IRI_OK.match(iri):
        return f"<{iri}>"
    if not isinstance(iri, str) or not _SCHEME.match(iri):
        raise TermError(f"{iri!r} is not an absolute IRI")
    for ch in iri:
        if ch in _IRI_FORBIDDEN or ord(ch) <= 0x20:
            raise TermError(f"{iri!r} contains {ch!r}, which an IRI may not hold")
        if 0xD800 <= ord(ch) <= 0xDFFF:
            raise TermError(f"{iri!r} contains a lone surrogate")
    raise TermError(f"{iri!r} is not a valid IRI")


def serialise_literal(value: str, datatype: str | None = None, lang: str | None = None) -> str:
    """A quoted SPARQL literal for ``value``, escaped so no content can end the string.

    Quote, backslash and line breaks use the grammar's ECHAR escapes; other control
    characters use ``\\uXXXX``. Because some parsers expand ``\\u`` escapes anywhere in the
    query before parsing, a ``u``/``U`` right after an escaped backslash is itself written
    as ``\\u0075``/``\\u0055``, so ``\\\\u0022`` can never turn into a quote.
    """
    if not isinstance(value, str):
        raise TermError(f"literal value {value!r} is not a string")
    out = ['"']
    after_backslash = False
    for ch in value:
        code = ord(ch)
        if after_backslash and ch in "uU":
            out.append("\\u0075" if ch == "u" else "\\u0055")
        elif ch in _ECHAR:
            out.append(_ECHAR[ch])
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\u{code:04X}")
        elif 0xD800 <= code <= 0xDFFF:
            raise TermError("literal contains a lone surrogate")
        else:
            out.append(ch)
        after_backslash = ch == "\\"
    out.append('"')
    if lang:
        if not _LANG.match(lang):
            raise TermError(f"{lang!r} is not a language tag")
        out.append("@" + lang)
    elif datatype:
        out.append("^^" + serialise_iri(datatype))
    return "".join(out)


def serialise_term(term: Term | str) -> str:
    """A :class:`Term` (or a bare ``str``, taken as an IRI) written as SPARQL."""
    if isinstance(term, str):
        return serialise_iri(term)
    if term.kind == "uri":
        return serialise_iri(term.value)
    if term.kind == "literal":
        return serialise_literal(term.value, term.datatype, term.lang)
    raise TermError(f"a {term.kind} ({term.value!r}) cannot be named in a query")


def values_block(var: str, terms: Iterable[Term | str]) -> str:
    """``VALUES ?var { t1 t2 … }`` with every term serialised."""
    if not _VAR.match(var):
        raise QueryError(f"{var!r} is not a SPARQL variable name")
    return f"VALUES ?{var} {{ " + " ".join(serialise_term(t) for t in terms) + " }"


def render(name: str, *, values: dict[str, Sequence[Term | str]] | None = None,
           limit: int | None = None, offset: int | None = None, after: str = "") -> str:
    """``queries/<name>.rq`` with its placeholders filled; every placeholder must be given
    (``after`` defaults to ``""``, before every key: the first page)."""
    values = values or {}
    used: set[str] = set()

    def fill(match: re.Match[str]) -> str:
        if match.group(2):
            var = match.group(2)
            if var not in values:
                raise QueryError(f"query {name}: no values given for ?{var}")
            used.add(var)
            return values_block(var, values[var])
        if match.group(3):
            key = match.group(3)  # a blank node passes on every page, so discovery sees (and refuses) it
            return f"FILTER(!isIRI(?{key}) || STR(?{key}) > {serialise_literal(after)})"
        number = limit if match.group(1) == "LIMIT" else offset
        if not isinstance(number, int) or isinstance(number, bool) or number < 0:
            raise QueryError(f"query {name}: {match.group(1)} needs a non-negative integer, got {number!r}")
        return str(number)

    text = _PLACEHOLDER.sub(fill, load(name))
    unused = set(values) - used
    if unused:
        raise QueryError(f"query {name}: has no VALUES placeholder for {sorted(unused)}")
    return text


def counted(query: str) -> str:
    """``query`` (a rendered SELECT) made to carry its own row count: the same SELECT as a
    subquery, UNIONed with ``SELECT (COUNT(*) AS ?yupanaRowCount)`` over it.

    A complete answer holds exactly one row binding ``?yupanaRowCount`` and that many other
    rows. A store that cuts the answer at a row cap (Virtuoso's ``ResultSetMaxRows``)
    either drops rows (fewer than the count) or the count row itself (no count): both are
    visible, whatever order the store returns the union in. The prologue (``PREFIX`` /
    ``BASE``) stays in front; the SELECT, with its modifiers, is embedded verbatim.
    """
    found = _SELECT_LINE.search(query)
    if found is None:
        raise QueryError("counted(): the query has no SELECT line")
    prologue, select = query[:found.start()], query[found.start():].strip()
    return (f"{prologue}SELECT * WHERE {{\n  {{ SELECT (COUNT(*) AS ?{COUNT_VAR}) WHERE {{ {{\n{select}\n  }} }} }}\n"
            f"  UNION\n  {{\n{select}\n  }}\n}}\n")


def batched(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    """``items`` in consecutive slices of at most ``size`` (size >= 1)."""
    size = max(1, int(size))
    for start in range(0, len(items), size):
        yield items[start:start + size]
