"""The rule-set digest, computed exactly as the Rust original does (interop §6). Cold path.

One entry per text rule — ``text``, name, pattern, tier in Rust Debug form (``Block`` /
``Warn``) and the exemption (empty when there is none) — and per structural policy —
``struct``, name, pattern and effect — each joined by U+001F; the entries are sorted,
joined by U+001E and hashed with SHA-256. ``applies_to``, ``match_type`` and ``class`` do
not affect it, nor do the planes the original does not have.
"""

from __future__ import annotations

from typing import Any

import hashlib

_US, _RS = "\x1f", "\x1e"
_DEBUG_TIER = {"block": "Block", "warn": "Warn"}


def rule_set_digest(cache: dict[str, Any]) -> str:
    """``"sha256:<hex>"`` of the cache's text rules and structural policies."""
    entries = []
    for rule in cache.get("text_rules") or ():
        tier = _DEBUG_TIER.get(rule.get("tier"), str(rule.get("tier")))
        entries.append(_US.join(("text", rule["name"], rule["pattern"], tier, rule.get("exempt_path_regex") or "")))
    for policy in cache.get("policies") or ():
        rule = policy["rule"]
        entries.append(_US.join(("struct", rule["name"], rule["pattern"], policy["effect"])))
    entries.sort()
    return "sha256:" + hashlib.sha256(_RS.join(entries).encode("utf-8")).hexdigest()
