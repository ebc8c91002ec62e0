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

Case-insensitivity: when any part of a pattern is under ``(?i)`` the whole prefilter
compares case-folded (``s in t`` implies ``s.casefold() in t.casefold()``, because
``str.casefold`` folds each character on its own). Inside a ``(?i)`` region only ASCII
characters become literals: their RE2 fold orbits (``k``/``K``/KELVIN SIGN,
``s``/``S``/LONG S) all case-fold to the same ASCII letter; non-ASCII characters there are
treated as unknown.
"""

from __future__ import annotations

#: Bumped whenever the analysis changes, so hot twins derived by an older one are rebuilt.
ALGORITHM = 2

MAX_PATTERN = 20000  # longer patterns are always evaluated


def prefilter(pattern: str) -> tuple[tuple[str, ...], bool] | None:
    """The required literals of ``pattern`` (see the module docstring), or None."""
    if not isinstance(pattern, str) or not pattern or len(pattern) > MAX_PATTERN:
        return None
    from yupana.regex import literals as lit

    try:
        req, any_ci = lit.required_literals(pattern)
    except (lit.Unsupported, RecursionError, ValueError):
        return None
    except Exception:  # noqa: BLE001 - a parser gap means "no prefilter" (always evaluate), never a crash
        return None
    if not req or len(req) > lit.MAX_LITERALS or "" in req:
        return None
    if len(req) > lit.MAX_WEAK and all(len(x) == 1 for x in req):
        return None  # e.g. \\d or [0-9a-f]: nearly every text passes; not worth the scans
    return tuple(sorted(req, key=lambda x: (-len(x), x))), any_ci


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
