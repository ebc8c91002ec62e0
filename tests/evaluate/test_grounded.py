"""Grounded predicates: tokens, the grounding set, fabricated references, an unknown set."""

from __future__ import annotations

from yupana.evaluate import UNKNOWN, UNSATISFIED
from yupana.evaluate import grounded

GROUNDING = {"ids": ["yup-12", "yup-40", "aegis-0upyu"], "prefixes": ["yup", "aegis"]}


def _rule(match_type: str, tier: str = "warn", name: str = "no_ticket") -> dict:
    return {"iri": f"http://aegis.gastown.local/ontology/{name}", "name": name, "label": None,
            "match_type": match_type, "tier": tier, "rationale": "tickets belong in the tracker"}


def test_tokens_are_maximal_runs_in_first_seen_order():
    assert grounded.tokens("see yup-12, (yup-12) and foo_bar-9/x café-1 é") == [
        "see", "yup-12", "and", "foo_bar-9", "x", "caf", "-1"]


def test_must_not_ground_flags_grounded_and_fabricated_separately():
    found = grounded.evaluate([_rule("must-not-ground", tier="block")], GROUNDING,
                              "// fixes yup-12 and yup-999, not ABC-1 or yup-", "src/a.rs")
    ids = [f.id for f in found]
    assert ids == ["no_ticket#fabricated-reference", "no_ticket"]
    assert all(f.blocking and f.outcome == UNSATISFIED for f in found)
    assert "`yup-999`" in found[0].message and "`yup-12`" in found[1].message
    assert "ABC-1" not in found[0].message  # prefix ABC is not a known prefix


def test_must_ground_needs_a_reference():
    rules = [_rule("must-ground", name="implements")]
    assert grounded.evaluate(rules, GROUNDING, "implements yup-40", None) == []
    missing = grounded.evaluate(rules, GROUNDING, "no reference here", None)
    assert [f.id for f in missing] == ["implements"] and not missing[0].blocking
    fabricated = grounded.evaluate(rules, GROUNDING, "implements yup-41", None)
    assert [f.id for f in fabricated] == ["implements#fabricated-reference"]


def test_case_sensitive_grounding():
    found = grounded.evaluate([_rule("must-not-ground")], GROUNDING, "YUP-12", None)
    assert found == []


def test_unknown_set_leaves_every_rule_unevaluated_loudly():
    rules = [_rule("must-not-ground"), _rule("must-ground", name="implements")]
    found = grounded.evaluate(rules, None, "yup-12", None)
    assert [f.outcome for f in found] == [UNKNOWN, UNKNOWN]
    assert "not evaluated" in found[0].message and "`no_ticket`" in found[0].message and "`implements`" in found[0].message


def test_empty_set_is_a_real_answer():
    found = grounded.evaluate([_rule("must-ground", name="implements")], {"ids": [], "prefixes": []}, "yup-1", None)
    assert [f.id for f in found] == ["implements"]


def test_no_rules_or_no_text_is_silent():
    assert grounded.evaluate([], GROUNDING, "yup-12", None) == []
    assert grounded.evaluate([_rule("must-ground")], GROUNDING, "", None) == []
