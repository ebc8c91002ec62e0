"""The rule-set digest, as the Rust original computes it (interop §6)."""

from __future__ import annotations

import hashlib

from yupana.projection.digest import rule_set_digest


def cache(text_rules=(), policies=()):
    return {"text_rules": list(text_rules), "policies": list(policies)}


TEXT = {"name": "no-hosts", "pattern": "corp", "tier": "block", "exempt_path_regex": None, "class": "hostname"}
STRUCT = {"rule": {"name": "no-ticket", "pattern": "[A-Z]+-[0-9]+", "applies_to": [], "match_type": "must-not-match",
                   "class": "hard"}, "effect": "deny"}


def test_digest_follows_the_documented_recipe():
    entries = sorted(["text\x1fno-hosts\x1fcorp\x1fBlock\x1f", "struct\x1fno-ticket\x1f[A-Z]+-[0-9]+\x1fdeny"])
    expected = "sha256:" + hashlib.sha256("\x1e".join(entries).encode()).hexdigest()
    assert rule_set_digest(cache([TEXT], [STRUCT])) == expected


def test_digest_ignores_order_and_fields_outside_the_recipe():
    other = {**TEXT, "name": "b"}
    base = rule_set_digest(cache([TEXT, other], [STRUCT]))
    assert rule_set_digest(cache([other, TEXT], [STRUCT])) == base
    changed = {"rule": {**STRUCT["rule"], "applies_to": ["src/**"], "match_type": "must-match", "class": "soft"},
               "effect": "deny"}
    assert rule_set_digest(cache([TEXT, other], [changed])) == base
    assert rule_set_digest({**cache([TEXT, other], [STRUCT]), "tripwires": [{"name": "w"}]}) == base


def test_digest_changes_with_what_it_covers():
    base = rule_set_digest(cache([TEXT], [STRUCT]))
    assert rule_set_digest(cache([{**TEXT, "tier": "warn"}], [STRUCT])) != base
    assert rule_set_digest(cache([{**TEXT, "exempt_path_regex": "^docs/"}], [STRUCT])) != base
    assert rule_set_digest(cache([TEXT], [{**STRUCT, "effect": "warn"}])) != base
    assert rule_set_digest(cache()) == "sha256:" + hashlib.sha256(b"").hexdigest()
