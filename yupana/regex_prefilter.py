"""Literal prefilters for RE2 patterns (placeholder: every pattern is evaluated).

``prefilter(pattern)`` returns None (no prefilter: always run the regex) or a tuple
``(literals, case_insensitive)``: the regex can only match a text that contains at least one
of ``literals`` (compared case-folded when ``case_insensitive``).
"""

from __future__ import annotations


def prefilter(pattern: str) -> tuple[tuple[str, ...], bool] | None:
    return None


def may_match(pf: tuple[tuple[str, ...], bool] | None, text: str, folded: str | None = None) -> bool:
    if pf is None:
        return True
    literals, ci = pf
    hay = (folded if folded is not None else text.casefold()) if ci else text
    for lit in literals:
        if lit in hay:
            return True
    return False
