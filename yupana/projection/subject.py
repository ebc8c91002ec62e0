"""What was read about one governed subject, and strict accessors over it. Cold path.

A :class:`Subject` holds, per predicate IRI, the distinct object terms a batched read
returned, in a stable order (the store's row order is not defined, so values are sorted:
every store then projects the same cache). Its accessors are where strictness lives: a
missing required value, two values for a single-valued property, an IRI where a string
belongs, an empty string, an unknown enum value, a regex RE2 refuses or a glob that does
not compile raise :class:`ProjectionError` naming the subject and the property.
"""

from __future__ import annotations

from typing import Any, Literal, overload

from collections.abc import Iterable

from yupana.endpoint.base import Term
from yupana.projection.errors import ProjectionError
from yupana.projection.vocab import RDF_TYPE, curie


_LONG = 16  # values of one predicate past which membership is kept in a set


def _order(term: Term) -> tuple[Any, ...]:
    return (term.kind, term.value, term.datatype or "", term.lang or "")


class Subject:
    """Everything read about one subject: predicate IRI -> distinct object terms.

    A refresh holds hundreds of thousands of values, most of them the one value of their
    predicate: a value is kept bare until a second arrives, then in a list (with a set
    beside it once the list grows long) — a dict per predicate cost ~3x the memory."""

    __slots__ = ("iri", "_values", "_big", "classes")

    def __init__(self, iri: str) -> None:
        self.iri = iri
        self._values: dict[str, Term | list[Term]] = {}  # in the order first read
        self._big: dict[str, set[Term]] | None = None  # membership of the long lists
        #: Asserted types plus every superclass the class chain read found (filled by refresh).
        self.classes: set[str] = set()

    def add(self, predicate: str, term: Term) -> bool:
        """Record one value; False when it was already there."""
        found = self._values.get(predicate)
        if found is None:
            self._values[predicate] = term
            return True
        if not isinstance(found, list):  # one value so far (a Term: a tuple, never a list)
            if found == term:
                return False
            self._values[predicate] = [found, term]
            return True
        if len(found) < _LONG:
            if term in found:
                return False
        else:
            if self._big is None:
                self._big = {}
            seen = self._big.get(predicate)
            if seen is None:
                seen = self._big[predicate] = set(found)
            if term in seen:
                return False
            seen.add(term)
        found.append(term)
        return True

    def predicates(self) -> list[str]:
        return sorted(self._values)

    def terms(self, predicate: str) -> tuple[Term, ...]:
        """Every distinct object of ``predicate``, sorted."""
        found = self._values.get(predicate)
        if found is None:
            return ()
        if not isinstance(found, list):
            return (found,)
        return tuple(sorted(found, key=_order))

    def triples(self) -> list[tuple[str, str, Term]]:
        """``(iri, predicate, term)`` for every value, by predicate then term."""
        return [(self.iri, p, o) for p in self.predicates() for o in self.terms(p)]

    def has(self, predicate: str) -> bool:
        return bool(self._values.get(predicate))

    def types(self) -> list[str]:
        """The asserted ``rdf:type`` IRIs."""
        return [t.value for t in self.terms(RDF_TYPE) if t.is_iri]

    def is_a(self, cls: str) -> bool:
        """Typed ``cls`` directly or through a subclass (the chain must have been read)."""
        return cls in self.classes or cls in self.types()

    def error(self, predicate: str, message: str) -> ProjectionError:
        return ProjectionError(self.iri, curie(predicate), message)

    # ── strict accessors ──────────────────────────────────────────────────────────────

    @overload
    def one(self, predicate: str, *, required: Literal[True] = ...) -> Term: ...
    @overload
    def one(self, predicate: str, *, required: bool) -> Term | None: ...

    def one(self, predicate: str, *, required: bool = True) -> Term | None:
        """The single value of a single-valued property (None when optional and absent)."""
        terms = self.terms(predicate)
        if len(terms) > 1:
            shown = ", ".join(_show(t) for t in terms)
            raise self.error(predicate, f"has {len(terms)} values ({shown}); exactly one is allowed")
        if not terms:
            if required:
                raise self.error(predicate, "is missing; it is required")
            return None
        return terms[0]

    @overload
    def string(self, predicate: str, *, required: Literal[True] = ...) -> str: ...
    @overload
    def string(self, predicate: str, *, required: bool) -> str | None: ...

    def string(self, predicate: str, *, required: bool = True) -> str | None:
        """The single literal value, non-blank."""
        term = self.one(predicate, required=required)
        if term is None:
            return None
        return self._text(predicate, term)

    def strings(self, predicate: str, *, min_count: int = 0) -> list[str]:
        """Every distinct literal value (sorted, de-duplicated by text), each non-blank."""
        out: list[str] = []
        for term in self.terms(predicate):
            text = self._text(predicate, term)
            if text not in out:
                out.append(text)
        if len(out) < min_count:
            raise self.error(predicate, f"is missing; at least {min_count} value{'s' if min_count > 1 else ''} required")
        return out

    def enum(self, predicate: str, allowed: Iterable[str], *, required: bool = False,
             default: str | None = None) -> str | None:
        """The single value, which must be one of ``allowed`` (case-sensitive)."""
        value = self.string(predicate, required=required)
        if value is None:
            return default
        allowed = tuple(allowed)
        if value not in allowed:
            raise self.error(predicate, f"{value!r} is not one of {', '.join(allowed)}")
        return value

    def links(self, predicate: str, *, min_count: int = 0, max_count: int | None = None) -> list[str]:
        """The IRIs this subject links to through ``predicate`` (blank nodes and literals refused)."""
        terms = self.terms(predicate)
        if max_count is not None and len(terms) > max_count:
            shown = ", ".join(_show(t) for t in terms)
            raise self.error(predicate, f"has {len(terms)} values ({shown}); at most {max_count} allowed")
        if len(terms) < min_count:
            raise self.error(predicate, "is missing; it is required")
        out = []
        for term in terms:
            if not term.is_iri:
                raise self.error(predicate, f"{_show(term)} is not an IRI; governed links must name an IRI")
            out.append(term.value)
        return out

    def _text(self, predicate: str, term: Term) -> str:
        if not term.is_literal:
            raise self.error(predicate, f"{_show(term)} is not a literal; a string is required")
        if not term.value.strip():
            raise self.error(predicate, "is blank; a non-empty string is required")
        return term.value


def _show(term: Term) -> str:
    if term.is_iri:
        return f"<{term.value}>"
    if term.kind == "bnode":
        return f"_:{term.value}"
    return repr(term.value)


# ── value checks shared by the decoders ───────────────────────────────────────────────

_RE2_CHECKED: dict[str, str | None] = {}


def re2_problem(pattern: str) -> str | None:
    """Why RE2 refuses ``pattern`` (None when it compiles). Empty patterns are refused.

    The decoders' compile step for every governed regex, and ``yupana shapes validate``'s
    (projection/gate_compiles.py): both say the same thing about the same pattern."""
    if not pattern:
        return "the regex is empty"
    if pattern not in _RE2_CHECKED:
        if len(_RE2_CHECKED) > 100_000:
            _RE2_CHECKED.clear()
        _RE2_CHECKED[pattern] = _re2_compile_problem(pattern)
    return _RE2_CHECKED[pattern]


def _re2_compile_problem(pattern: str) -> str | None:
    from yupana.regex import re2_binding

    try:
        re2_binding.compile(pattern)
    except re2_binding.error as exc:
        detail = exc.args[0] if exc.args else exc
        if isinstance(detail, bytes):
            detail = detail.decode("utf-8", "replace")
        return f"RE2 refuses the regex {pattern!r}: {detail}"
    return None


def glob_problem(pattern: str) -> str | None:
    """Why ``pattern`` is not a glob of docs/globs.md (None when it compiles): the decoders'
    compile step for every governed glob, and ``yupana shapes validate``'s."""
    from yupana.globs import GlobError, compile_glob

    try:
        compile_glob(pattern)
    except GlobError as exc:
        return f"invalid glob: {exc}"
    return None


def regex(subject: Subject, predicate: str, pattern: str) -> str:
    """``pattern`` if RE2 compiles it, else a ProjectionError for ``subject``/``predicate``."""
    problem = re2_problem(pattern)
    if problem:
        raise subject.error(predicate, problem)
    return pattern


def glob(subject: Subject, predicate: str, pattern: str) -> str:
    """``pattern`` if it compiles in the glob dialect of docs/globs.md, else ProjectionError."""
    problem = glob_problem(pattern)
    if problem:
        raise subject.error(predicate, problem)
    return pattern


def merged(values: list[str]) -> str | None:
    """Distinct values joined as the Rust original merges labels (`` — ``), or None."""
    return " \u2014 ".join(values) if values else None


def name_from_iri(subject: Subject) -> str:
    """The part of the IRI after its last ``/`` (the text rule name rule)."""
    tail = subject.iri.rsplit("/", 1)[-1]
    if not tail:
        raise ProjectionError(subject.iri, "(subject IRI)", "the IRI ends in '/', so the rule has no name")
    return tail
