"""A text rule's precision properties (issue 25 §5), strictly. Cold path.

All optional; a rule with none of them decodes to exactly the entry it always had (no key is
added), so its meaning and the rule-set digest are unchanged. docs/vocabulary.md
"Precision: entropy, keywords, content allowlists".

* ``aegis:minEntropy`` (0..1, a number ≥ 0 and ≤ 8): a match fires only if the Shannon entropy
  (bits per character) of its *secret* is at least this;
* ``aegis:secretGroup`` (0..1): the name of a capture group of the rule's regex (``(?P<name>…)``)
  — the secret is that group's text; without it, the whole match;
* ``aegis:requiredKeyword`` (0..n, non-blank): the rule runs only on an introduced text that
  contains one of them, case-insensitively (also a prefilter: checked before any regex);
* ``aegis:allowMatchRegex`` (0..n, RE2) and ``aegis:allowStopword`` (0..n, non-blank): a match
  whose secret the regex finds (searched, unanchored) or that contains the stopword
  (case-insensitively) is allowed. The rule's own values plus those of every linked
  selector (``aegis:exemptionSelector``), as alternatives.
"""

from __future__ import annotations

from typing import Any

from yupana.projection.subject import Subject, regex
from yupana.projection.vocab import A

MIN_ENTROPY = A("minEntropy")
SECRET_GROUP = A("secretGroup")
KEYWORD = A("requiredKeyword")
ALLOW_REGEX = A("allowMatchRegex")
STOPWORD = A("allowStopword")
MAX_ENTROPY = 8.0  # bits per character can exceed it only over more than 256 distinct characters


def selector_allowlist(selector: Subject) -> dict[str, Any]:
    """A selector's shared content allowlist: ``allow_match_regexes`` and ``stopwords``, each
    only when present."""
    out: dict[str, Any] = {}
    regexes = [regex(selector, ALLOW_REGEX, r) for r in selector.strings(ALLOW_REGEX)]
    stopwords = selector.strings(STOPWORD)
    if regexes:
        out["allow_match_regexes"] = regexes
    if stopwords:
        out["stopwords"] = stopwords
    return out


def rule_precision(rule: Subject, pattern: str, selectors: list[dict[str, Any]]) -> dict[str, Any]:
    """The precision fields of a text rule's cache entry (none when it has no such property):
    ``min_entropy``, ``secret_group``, ``keywords``, the rule's own ``allow_match_regexes`` and
    ``allow_stopwords``, and the combined ``allow_match_regex`` (one RE2 alternation) and
    ``stopwords`` (case-folded, with the linked ``selectors``' values)."""
    out: dict[str, Any] = {}
    entropy = _entropy(rule)
    if entropy is not None:
        out["min_entropy"] = entropy
    group = rule.string(SECRET_GROUP, required=False)
    if group is not None:
        _check_group(rule, pattern, group)
        out["secret_group"] = group
    keywords = rule.strings(KEYWORD)
    if keywords:
        out["keywords"] = sorted(keywords)
    local = [regex(rule, ALLOW_REGEX, r) for r in rule.strings(ALLOW_REGEX)]
    words = rule.strings(STOPWORD)
    if local:
        out["allow_match_regexes"] = local
    if words:
        out["allow_stopwords"] = words
    alternatives: list[str] = []
    for r in local + [r for sel in selectors for r in sel.get("allow_match_regexes") or ()]:
        if r not in alternatives:
            alternatives.append(r)
    if alternatives:
        combined = alternatives[0] if len(alternatives) == 1 else "|".join(f"(?:{a})" for a in alternatives)
        out["allow_match_regex"] = regex(rule, ALLOW_REGEX, combined)
    folded = sorted({w.casefold() for w in words + [w for sel in selectors for w in sel.get("stopwords") or ()]})
    if folded:
        out["stopwords"] = folded
    return out


def _entropy(rule: Subject) -> float | None:
    term = rule.one(MIN_ENTROPY, required=False)
    if term is None:
        return None
    if not term.is_literal:
        raise rule.error(MIN_ENTROPY, "is not a literal; a number of bits per character (e.g. 3.5) is required")
    try:
        value = float(term.value)
    except ValueError:
        value = float("nan")
    if not 0.0 <= value <= MAX_ENTROPY:  # NaN fails both comparisons
        raise rule.error(MIN_ENTROPY, f"{term.value!r} is not a number of bits per character between 0 and "
                         f"{MAX_ENTROPY:g} (e.g. \"3.5\"^^xsd:decimal)")
    return value


def _check_group(rule: Subject, pattern: str, group: str) -> None:
    from yupana.regex import re2_binding

    names = dict(getattr(re2_binding.compile(pattern), "groupindex", {}) or {})
    if group not in names:
        shown = ", ".join(sorted(names)) or "none"
        raise rule.error(SECRET_GROUP, f"names the capture group {group!r}, which the rule's aegis:regex does not "
                         f"have (its named groups: {shown}); write it as (?P<{group}>…)")
