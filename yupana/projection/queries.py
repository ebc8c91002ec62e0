"""The SPARQL text of every projection query, and the only way values get into it. Cold path.

Each query is a file in ``<repo>/queries/<name>.rq``. A file may hold placeholders that
this module fills, and nothing else ever touches the text:

* ``{{VALUES ?var}}`` — a ``VALUES ?var { … }`` block of terms, each serialised by
  :func:`serialise_term` (IRIs validated and written ``<…>``, literals escaped per the
  SPARQL grammar); a value that cannot be written safely raises :class:`TermError`;
* ``{{LIMIT}}`` / ``{{OFFSET}}`` — non-negative integers (paged reads);
* ``{{AFTER ?var}}`` — ``FILTER(!isIRI(?var) || STR(?var) > "…")`` with the last key of the previous page
  serialised as a literal (keyset paging of discovery: no large sorted OFFSET);
* ``{{PAGE ?var}}`` — ``ORDER BY STR(?var) LIMIT n`` (one page of a keyset-paged discovery).

A discovery rendered ``whole`` has neither: ``AFTER`` and ``PAGE`` render empty, so the
store answers the whole plane unsorted in one request (sorting is most of a large
discovery's cost on Oxigraph); a store that caps that answer is then paged.

Strings are never pasted into query text: there is no other substitution.
:func:`counted` wraps a rendered query so the same answer carries its own row count;
:func:`digested` and :func:`digested_read` wrap a batched read (``SELECT ?s ?p ?o``) so the
store digests each subject's triples (docs/refresh.md, "Incremental refresh").
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from yupana.state import paths
from yupana.endpoint.base import Term

_PLACEHOLDER = re.compile(r"\{\{\s*(VALUES\s+\?([A-Za-z_][A-Za-z0-9_]*)|AFTER\s+\?([A-Za-z_][A-Za-z0-9_]*)"
                          r"|PAGE\s+\?([A-Za-z_][A-Za-z0-9_]*)|LIMIT|OFFSET)\s*\}\}")
#: The variable :func:`counted` binds to the answer's row count.
COUNT_VAR = "yupanaRowCount"
#: The variables :func:`digested` binds per subject: its digest, its rows, its blank-node objects.
DIGEST_VAR, ROWS_VAR, BLANKS_VAR = "yupanaDigest", "yupanaRows", "yupanaBlanks"
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
           limit: int | None = None, offset: int | None = None, after: str = "", whole: bool = False) -> str:
    """``queries/<name>.rq`` with its placeholders filled; every placeholder must be given
    (``after`` defaults to ``""``, before every key: the first page). ``whole``: the
    ``AFTER`` and ``PAGE`` placeholders render empty (a discovery asked in one request)."""
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
            return "" if whole else f"FILTER(!isIRI(?{key}) || STR(?{key}) > {serialise_literal(after)})"
        if match.group(4):
            if whole:
                return ""
            if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
                raise QueryError(f"query {name}: PAGE needs a positive limit, got {limit!r}")
            return f"ORDER BY STR(?{match.group(4)})\nLIMIT {limit}"
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
    prologue, select = _split_select(query, "counted")
    return (f"{prologue}SELECT * WHERE {{\n  {{ SELECT (COUNT(*) AS ?{COUNT_VAR}) WHERE {{ {{\n{select}\n  }} }} }}\n"
            f"  UNION\n  {{\n{select}\n  }}\n}}\n")


def pageable(name: str) -> bool:
    """Whether ``queries/<name>.rq`` is a keyset-paged discovery (so it can be asked ``whole``)."""
    return _PAGE_MARK.search(load(name)) is not None


_PAGE_MARK = re.compile(r"\{\{\s*PAGE\s+\?")

# One triple's digest input: the predicate, the length of the object's lexical form, the
# form itself, then the datatype ("<" for an IRI) and the language. An IRI holds no tab
# and no space and a language tag neither nor an "@", so with the length the fields read
# back unambiguously: distinct triples give distinct strings, and space-joined lists of
# them distinct lists. A blank node has no stable label and no lexical form: it is counted
# instead, and a subject with one is never taken as unchanged. (Hashing each triple
# separately cost Oxigraph twice as much: 1.25 s against 0.7 s for 10 000 rules.)
_TRIPLE = ('CONCAT(STR(?p), "\\t", STR(STRLEN(STR(?o))), "\\t", STR(?o), "\\t", '
           'COALESCE(STR(DATATYPE(?o)), "<"), "@", COALESCE(LANG(?o), ""))')


def _digest_select(select: str, rows: bool = True) -> str:
    """Per subject of a ``SELECT ?s ?p ?o`` read: the SHA-256 of its triples (joined in the
    store's order), its row count (``rows``) and how many of its objects are blank nodes."""
    counted = f"(COUNT(*) AS ?{ROWS_VAR}) " if rows else ""
    return (f"SELECT ?s {counted}(SUM(IF(isBlank(?o), 1, 0)) AS ?{BLANKS_VAR}) "
            f'(SHA256(GROUP_CONCAT({_TRIPLE}; separator=" ")) AS ?{DIGEST_VAR}) WHERE {{\n'
            f"  {{\n{select}\n  }}\n"
            f"}}\nGROUP BY ?s")


def _split_select(query: str, caller: str) -> tuple[str, str]:
    """``(prologue, select)``: the PREFIX/BASE lines and the SELECT with its modifiers."""
    found = _SELECT_LINE.search(query)
    if found is None:
        raise QueryError(f"{caller}(): the query has no SELECT line")
    return query[:found.start()], query[found.start():].strip()


def digested(query: str) -> str:
    """``query`` (a rendered ``SELECT ?s ?p ?o`` read) answered as one row per subject instead
    of its triples: the subject's digest and blank-node count (:data:`DIGEST_VAR`,
    :data:`BLANKS_VAR`). A subject with no triples has no row."""
    prologue, select = _split_select(query, "digested")
    return f"{prologue}{_digest_select(select, rows=False)}\n"


def digested_read(query: str) -> str:
    """``query`` (a rendered ``SELECT ?s ?p ?o`` read) answering its triples and, in the same
    answer, :func:`digested`'s row per subject. One evaluation of one query gives both, so a
    subject's digest is the digest of exactly the triples read (a store changing between two
    requests cannot pair one subject's digest with other triples), and its row count proves
    the triples complete: rows a store's cap cut are seen missing, as with :func:`counted`."""
    prologue, select = _split_select(query, "digested_read")
    return f"{prologue}SELECT * WHERE {{\n  {{ {_digest_select(select)} }}\n  UNION\n  {{\n{select}\n  }}\n}}\n"


def batched(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    """``items`` in consecutive slices of at most ``size`` (size >= 1)."""
    size = max(1, int(size))
    for start in range(0, len(items), size):
        yield items[start:start + size]
