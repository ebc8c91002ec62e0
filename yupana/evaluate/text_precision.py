"""A text rule's precision checks on the hot path (issue 25 §5; docs/vocabulary.md "Precision").
Standard library only (``math`` is imported only when an entropy is measured).

* :func:`keywords_absent`: a rule with ``keywords`` runs only when the introduced text contains
  one of them, case-insensitively — checked before the rule's regex is compiled or run;
* :func:`allowed`: why one match does not fire (``None``: it fires). Its *secret* is the named
  group ``secret_group`` when the rule has one and it took part in the match, else the whole
  match; the match is allowed when the secret's Shannon entropy is below ``min_entropy``,
  when ``allow_match_regex`` finds something in the secret, or when the secret contains one
  of the (case-folded) ``stopwords``.

A rule without these keys is checked exactly as before: :func:`has_precision` is False and
the evaluator never calls :func:`allowed` for it.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

PRECISION_KEYS = ("min_entropy", "secret_group", "allow_match_regex", "stopwords")


def has_precision(rule: dict[str, Any]) -> bool:
    """Whether any match of ``rule`` may be allowed by its content (entropy, allowlists)."""
    return any(rule.get(k) is not None for k in PRECISION_KEYS)


def keywords_absent(rule: dict[str, Any], folded: Callable[[], str]) -> bool:
    """True when ``rule`` requires keywords and ``folded()`` (the introduced text, case-folded)
    contains none of them."""
    keywords = rule.get("keywords")
    if not keywords:
        return False
    hay = folded()
    return not any(k.casefold() in hay for k in keywords)


def entropy(text: str) -> float:
    """Shannon entropy of ``text`` in bits per character (0.0 for the empty string)."""
    if not text:
        return 0.0
    from math import log2

    counts: dict[str, int] = {}
    for ch in text:
        counts[ch] = counts.get(ch, 0) + 1
    n = len(text)
    return 0.0 - sum(c / n * log2(c / n) for c in counts.values())  # 0.0, not -0.0, for one repeated character


def secret_of(rule: dict[str, Any], match: Any) -> str:
    """The part of ``match`` a rule's content checks look at (see the module docstring)."""
    group = rule.get("secret_group")
    if group:
        try:
            value = match.group(group)
        except (IndexError, KeyError, TypeError, ValueError):
            value = None
        if value is not None:
            return str(value)
    return str(match.group(0))


def allowed(rule: dict[str, Any], match: Any, compile_regex: Callable[[str], Any]) -> str | None:
    """Why ``match`` of ``rule`` does not fire, or None when it fires. ``compile_regex`` compiles
    the allowlist regex (it raises ValueError: the caller reports a broken allowlist as an
    error and the match fires — an allowlist that cannot run allows nothing)."""
    secret = secret_of(rule, match)
    floor = rule.get("min_entropy")
    if floor is not None:
        bits = entropy(secret)
        if bits < floor:
            return f"entropy {bits:.2f} < {floor:g} bits/char"
    folded = secret.casefold()
    for word in rule.get("stopwords") or ():
        if word in folded:
            return f"stopword `{word}`"
    allow = rule.get("allow_match_regex")
    if allow:
        hit = compile_regex(allow).search(secret)
        if hit is not None:
            return f"allowlist regex matched `{hit.group(0)}`"
    return None
