"""Required-literal prefilters for RE2 patterns: computed on the cold path, checked on the hot.

A hook that evaluates 500 text rules against an edit would otherwise import ``re2`` and run
500 searches. Most rule patterns contain text that every match must include (``\\.corp\\.``,
``TODO``, ``AKIA``); when none of those literals occurs in the introduced text, the regex
cannot match and need not run — often ``re2`` need not even be imported.

``prefilter(pattern)`` returns None (no prefilter: always run the regex) or a tuple
``(literals, case_insensitive)`` with this guarantee: whenever ``re2.search(pattern, text)``
matches, at least one of ``literals`` is a substring of ``text`` — of ``text.casefold()``
when ``case_insensitive`` (the literals are then already case-folded).

The analysis (:mod:`yupana.regex.literals`, imported only when a prefilter is computed)
parses RE2 syntax with a small, conservative hand-written parser (no :mod:`re`: it costs
~6 ms to import and hooks import this module for :func:`may_match`). Anything it does
not understand — backreference-like escapes, Unicode classes it cannot enumerate, unknown
flags, nesting deeper than :data:`MAX_DEPTH` — yields None, which is always safe.

A second, independent prefilter covers the patterns with no useful literal
(``[A-Za-z0-9+/]{40,}``, an IPv4 address): ``required_run(pattern)`` is None or ``(table, k)``,
and ``may_run`` is False only when the text has no run of ``k`` characters of the pattern's
alphabet, which every match is (:mod:`yupana.regex.runs`). A rule runs its regex only when
both admit the text.

Case-insensitivity: when any part of a pattern is under ``(?i)`` the whole prefilter
compares case-folded (``s in t`` implies ``s.casefold() in t.casefold()``, because
``str.casefold`` folds each character on its own). Inside a ``(?i)`` region only ASCII
characters become literals: their RE2 fold orbits (``k``/``K``/KELVIN SIGN,
``s``/``S``/LONG S) all case-fold to the same ASCII letter; non-ASCII characters there are
treated as unknown.
"""

from __future__ import annotations

import time

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    from yupana.regex.runs import Run
    from yupana.regex.syntax import Node

#: Bumped whenever the analysis changes, so hot twins derived by an older one are rebuilt
#: (5: a required run may carry its tail, 6: and its head, 7: pivots anywhere in it,
#: :mod:`yupana.regex.runs`).
ALGORITHM = 7

MAX_PATTERN = 20000  # longer patterns are always evaluated
CHECK_ABOVE_CHARS = 64 * 1024  # texts this large check the deadline between rules and between windows
SCAN_CHUNK = 256 * 1024  # characters a bounded literal search takes per window (the deadline is checked between)
FOLD_CHUNK = 1 << 20  # characters case-folded between deadline checks (~0.5 ms)
RUN_CHECK_LIMIT = 1 << 20  # longer texts skip the required-run check (admitting is always sound)


def prefilter(pattern: str) -> tuple[tuple[str, ...], bool] | None:
    """The required literals of ``pattern`` (see the module docstring), or None."""
    return prefilters(pattern)[0]


def prefilters(pattern: str) -> tuple[tuple[tuple[str, ...], bool] | None, Run | None]:
    """(:func:`prefilter`, :func:`required_run`) of ``pattern``, from one parse of it."""
    literal, run, _ = analyse(pattern)
    return literal, run


def analyse(pattern: str) -> tuple[Any, Any, tuple[str, ...] | None]:
    """(:func:`prefilter`, :func:`required_run`, kind trigrams) of ``pattern``, from one parse:
    the third is the index key of a pattern without a literal of three characters
    (:func:`yupana.regex.classgrams.kind_key_of`), or None."""
    if not isinstance(pattern, str) or not pattern or len(pattern) > MAX_PATTERN:
        return None, None, None
    from yupana.regex import classgrams, runs
    from yupana.regex.syntax import Parser

    try:
        parser = Parser(pattern)
        ast = parser.parse()
    except Exception:  # noqa: BLE001 - Unsupported, RecursionError, a parser gap: no prefilter, never a crash
        return None, None, None
    return (_literal_prefilter(ast, parser.any_ci), _guarded(runs.required_run_of, ast),
            _guarded(classgrams.kind_key_of, ast))


def _literal_prefilter(ast: Node, any_ci: bool) -> tuple[tuple[str, ...], bool] | None:
    from yupana.regex import literals as lit

    req = _guarded(lit.required_literals_of, ast, any_ci)
    if not req or len(req) > lit.MAX_LITERALS or "" in req:
        return None
    if len(req) > lit.MAX_WEAK and all(len(x) == 1 for x in req):
        return None  # e.g. \\d or [0-9a-f]: nearly every text passes; not worth the scans
    return tuple(sorted(req, key=lambda x: (-len(x), x))), any_ci


def _guarded(analysis: Any, *args: Any) -> Any:
    """``analysis(*args)``, or None when it gives up (a gap in the model means no prefilter)."""
    try:
        return analysis(*args)
    except Exception:  # noqa: BLE001 - Unsupported, RecursionError, ValueError: all mean "none"
        return None


def may_match(pf: tuple[tuple[str, ...], bool] | None, text: str, folded: str | None = None) -> bool:
    """False only when ``text`` cannot match the pattern ``pf`` was computed for.

    ``folded`` is ``text.casefold()`` when the caller already has it (one per edit, shared by
    every case-insensitive rule).
    """
    if pf is None:
        return True
    literals, ci = pf
    hay = (folded if folded is not None else text.casefold()) if ci else text
    for lit in literals:
        if lit in hay:
            return True
    return False


def required_run(pattern: str) -> Run | None:
    """The required-run prefilter of ``pattern`` (see the module docstring), or None."""
    return prefilters(pattern)[1]


def may_run(rr: Run | None, text: str, marked: dict[bytes, bytes] | None = None) -> bool:
    """False only when ``text`` has no run of the required length over the pattern's alphabet.

    ``marked`` memoises the translated text per table (rules share alphabets); it also holds
    the UTF-8 encoding of ``text`` under the key ``b""``.
    """
    if rr is None:
        return True
    if marked is None:
        marked = {}
    table, k = rr[0], rr[1]
    hay = _marked(table, text, marked)
    if len(rr) == 2:
        return b"x" * k in hay
    return all(_pivot_fits(hay, _marked(pivot, text, marked), k, lo, before) for pivot, lo, before in rr[2])


def _pivot_fits(hay: bytes, marks: bytes, k: int, lo: int, before: int) -> bool:
    """Is there a place with ``lo`` bytes of the pivot's class (``y`` in ``marks``) whose
    ``k`` bytes from ``before`` bytes earlier have no gap in ``hay`` (:mod:`yupana.regex.runs`)?"""
    need = b"y" * lo
    at = marks.find(need, before)
    while at >= 0:
        start = at - before
        if start + k > len(hay):
            return False
        gap = hay.rfind(b" ", start, start + k)
        if gap < 0:
            return True
        at = marks.find(need, gap + 1 + before)  # any place up to there has the gap in its k bytes
    return False


def _marked(table: bytes, text: str, marked: dict[bytes, bytes]) -> bytes:
    """``text``'s UTF-8 bytes translated by ``table``, memoised in ``marked``."""
    hay = marked.get(table)
    if hay is None:
        raw = marked.get(b"")
        if raw is None:
            raw = marked[b""] = text.encode("utf-8", "surrogatepass")
        hay = marked[table] = raw.translate(table)
    return hay


class Admission:
    """Whether a rule's two prefilters admit one text, with what every rule shares computed
    once: the case fold, the UTF-8 bytes and their translations.

    With ``deadline_at`` (time.monotonic) and a text over :data:`CHECK_ABOVE_CHARS`, the fold
    and each literal search go window by window, the deadline checked between windows (one
    literal searched over 10 MB is ~10 ms of C, and a rule has several); :meth:`admits` then
    answers None once the deadline has passed.
    """

    __slots__ = ("text", "deadline_at", "bounded", "_folded", "_marked")

    def __init__(self, text: str, deadline_at: float | None = None) -> None:
        self.text = text
        self.deadline_at = deadline_at
        self.bounded = deadline_at is not None and len(text) > CHECK_ABOVE_CHARS
        self._folded: str | None = None
        self._marked: dict[bytes, bytes] = {}

    def expired(self) -> bool:
        return self.bounded and time.monotonic() > self.deadline_at  # type: ignore[operator]

    def folded(self) -> str | None:
        """``text.casefold()``, computed once (None: the deadline passed while folding)."""
        if self._folded is None:
            if not self.bounded:
                self._folded = self.text.casefold()
            else:
                pieces = []
                for at in range(0, len(self.text), FOLD_CHUNK):  # casefold folds each character alone
                    if self.expired():
                        return None
                    pieces.append(self.text[at:at + FOLD_CHUNK].casefold())
                self._folded = "".join(pieces)
        return self._folded

    def admits(self, pf: tuple[tuple[str, ...], bool] | None, rr: Run | None) -> bool | None:
        """False when the pattern cannot match the text; None when the deadline cut the check."""
        if pf is not None:
            literals, ci = pf
            hay = self.folded() if ci else self.text
            if hay is None:
                return None
            if self.bounded:
                hit = self._contains_any(literals, hay)
                if not hit:
                    return hit
            elif not any(lit in hay for lit in literals):
                return False
        if rr is not None and len(self.text) <= RUN_CHECK_LIMIT:
            return may_run(rr, self.text, self._marked)
        return True

    def select(self, rules: Iterable[dict[str, Any]], total: int) -> tuple[list[dict[str, Any]], int]:
        """The rules (cache entries with ``_prefilter`` and ``_run``) this text admits, in
        order, and how many of the ``total`` were not looked at because the deadline passed."""
        out: list[dict[str, Any]] = []
        for n, rule in enumerate(rules):
            if self.expired():
                return out, total - n
            admitted = self.admits(rule.get("_prefilter"), rule.get("_run"))
            if admitted is None:
                return out, total - n
            if admitted:
                out.append(rule)
        return out, 0

    def _contains_any(self, literals: tuple[str, ...], hay: str) -> bool | None:
        """Whether any of ``literals`` is a substring of ``hay`` — what ``lit in hay`` answers —
        searched ``SCAN_CHUNK`` characters at a time (each window reads on by the longest
        literal less one, so no occurrence straddles unseen); None once the deadline passed."""
        reach = max(len(lit) for lit in literals) - 1
        n = len(hay)
        for at in range(0, n, SCAN_CHUNK):
            if self.expired():
                return None
            end = min(at + SCAN_CHUNK + reach, n)
            for lit in literals:
                if hay.find(lit, at, end) >= 0:
                    return True
        return False
