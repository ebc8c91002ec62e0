"""Tripwires: path-only and rule-conditioned wires, class first, misconfigured wires named."""

from __future__ import annotations

from yupana.state import cache
from yupana.evaluate import UNKNOWN, UNSATISFIED
from yupana.evaluate import tripwires


def _local(*entries: dict, rules=("no-ticket-in-comment",)):
    return tripwires.load_local(list(entries), set(rules))


def test_path_only_wire_trips_on_its_paths_only():
    wires, broken = _local({"name": "auth", "paths": ["src/auth/**"], "effect": "deny", "message": "security workflow"})
    assert broken == []
    found = tripwires.evaluate(wires, "src/auth/login.rs", None, set(), set())
    assert [(f.id, f.outcome, f.blocking) for f in found] == [("tripwire:auth", UNSATISFIED, True)]
    assert "security workflow" in found[0].message and found[0].verification_point == "PAG"
    assert tripwires.evaluate(wires, "src/core.rs", None, set(), set()) == []


def test_symlinked_path_trips_the_wire():
    wires, _ = _local({"name": "auth", "paths": ["src/auth/**"], "effect": "deny"})
    assert tripwires.evaluate(wires, "src/link.rs", "src/auth/real.rs", set(), set())


def test_warn_and_throttle_never_block():
    wires, broken = _local({"name": "w", "paths": ["a"], "effect": "warn"},
                           {"name": "t", "paths": ["a"], "effect": "throttle", "backoff_secs": 300})
    assert broken == []
    found = tripwires.evaluate(wires, "a", None, set(), set())
    assert [f.blocking for f in found] == [False, False]
    assert found[1].extra["backoff"] == {"kind": "fixed", "secs": 300}


def test_rule_conditioned_wire_needs_the_rule_to_fire_and_to_have_run():
    wires, _ = _local({"name": "nt", "paths": ["src/auth/**"], "rule": "no-ticket-in-comment", "effect": "deny"})
    assert tripwires.evaluate(wires, "src/auth/a.rs", None, set(), {"no-ticket-in-comment"}) == []
    fired = tripwires.evaluate(wires, "src/auth/a.rs", None, {"no-ticket-in-comment"}, {"no-ticket-in-comment"})
    assert fired[0].outcome == UNSATISFIED and "fired inside the boundary" in fired[0].message
    unknown = tripwires.evaluate(wires, "src/auth/a.rs", None, set(), set())
    assert unknown[0].outcome == UNKNOWN
    assert tripwires.evaluate(wires, "src/other.rs", None, {"no-ticket-in-comment"}, {"no-ticket-in-comment"}) == []


def test_every_kind_of_misconfiguration_is_named():
    wires, broken = _local(
        {"name": "glob", "paths": ["src/***"], "effect": "deny"},
        {"name": "norule", "paths": ["a"], "rule": "undefined-rule", "effect": "deny"},
        {"name": "nobackoff", "paths": ["a"], "effect": "throttle"},
        {"name": "empty", "effect": "warn"},
        {"name": "effect", "paths": ["a"], "effect": "require-approval"},
        {"paths": ["a"], "effect": "deny"},  # unnamed but well-formed
    )
    assert [name for name, _ in broken] == ["glob", "norule", "nobackoff", "empty", "effect"]
    assert "undefined-rule" in broken[1][1] and "backoff_secs" in broken[2][1] and "no paths and no rule" in broken[3][1]
    assert [w.name for w in wires] == ["tripwires[5]"]


def test_governed_wires_class_first_and_paa_skipped():
    entries = cache.derive_hot({"tripwires": [
        {"iri": "urn:w1", "name": "hard", "paths": ["src/**"], "effect": "deny", "class": "hard", "verification_point": "PAG"},
        {"iri": "urn:w2", "name": "soft", "paths": ["src/**"], "effect": "deny", "class": "soft", "verification_point": "PAG"},
        {"iri": "urn:w3", "name": "paa", "paths": ["src/**"], "effect": "throttle", "class": "soft",
         "verification_point": "PAA", "backoff": {"kind": "fixed", "secs": 5}},
        {"iri": "urn:w4", "name": "exp", "paths": ["src/**"], "effect": "throttle", "backoff": {"kind": "exp", "d": 2, "c": 5}},
        {"iri": "urn:w5", "name": "nob", "paths": ["src/**"], "effect": "throttle", "backoff": None},
    ]})["tripwires"]
    wires, broken = tripwires.load_governed(entries)
    assert [w.name for w in wires] == ["hard", "soft", "exp"]
    assert [name for name, _ in broken] == ["nob"]
    found = tripwires.evaluate(wires, "src/a.rs", None, set(), set())
    assert [(f.id, f.blocking) for f in found] == [("tripwire:hard", True), ("tripwire:soft", False), ("tripwire:exp", False)]
    assert found[0].source == "urn:w1" and found[0].class_ == "hard"
