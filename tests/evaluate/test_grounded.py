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


def test_a_huge_text_is_scanned_in_windows_that_find_what_a_whole_scan_finds():
    import time

    # tokens straddle every 64 KB boundary, one token is longer than a window, non-ASCII separates too
    text = ("see yup-12 and yup-77 café-3 é " * 9000) + "x" * 200_000 + " yup-40 aegis-zz ß yup-12\n" * 300
    whole = grounded.classify(grounded.tokens(text), set(GROUNDING["ids"]), set(GROUNDING["prefixes"]))
    assert grounded.scan(text, set(GROUNDING["ids"]), set(GROUNDING["prefixes"]), time.monotonic() + 60) == whole
    assert whole == (["yup-12", "yup-40"], ["yup-77", "aegis-zz"])


def test_a_huge_text_past_the_deadline_leaves_every_grounded_rule_unknown():
    import time

    rules = [_rule("must-not-ground", tier="block"), _rule("must-ground", name="cites")]
    big = "word " * 100_000 + "yup-12"  # 500 KB: the reference is past the first window
    found = grounded.evaluate(rules, GROUNDING, big, "a.md", deadline_at=time.monotonic() - 1)
    assert [(f.id, f.outcome, f.extra.get("deadline")) for f in found] == [
        ("no_ticket", UNKNOWN, True), ("cites", UNKNOWN, True)]
    # without a deadline (and on small texts) the scan is whole
    assert [f.id for f in grounded.evaluate(rules, GROUNDING, big, "a.md")] == ["no_ticket"]
    assert [f.id for f in grounded.evaluate(rules, GROUNDING, "yup-12", "a.md", deadline_at=time.monotonic() - 1)] == [
        "no_ticket"]


# ── the needle prefilter (issue 12 §1): a few searches instead of tokenising ────────────

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from yupana.state.hot_derive import grounding_needles  # noqa: E402

_id = st.from_regex(r"[a-zA-Z]{1,4}(-[a-z0-9]{1,3}){0,2}", fullmatch=True)


@settings(max_examples=600, deadline=None)
@given(st.lists(_id, max_size=8), st.lists(st.sampled_from(["yup", "ab", "x-y", "q"]), max_size=2),
       st.text(alphabet="abxyqYUP-1203 _.\n", max_size=60), st.sampled_from(["must-ground", "must-not-ground"]))
def test_the_needles_decide_as_the_scan(ids, extra_prefixes, text, match_type):
    """With the derived needles the findings are exactly the full tokenising scan's."""
    prefixes = sorted({i.rsplit("-", 1)[0] for i in ids if "-" in i} | set(extra_prefixes))
    plain = {"ids": sorted(set(ids)), "prefixes": prefixes}
    derived = dict(plain, _needles=grounding_needles(plain))
    rules = [_rule(match_type)]
    fast = [(f.id, f.message) for f in grounded.evaluate(rules, derived, text, "a.rs")]
    slow = [(f.id, f.message) for f in grounded.evaluate(rules, plain, text, "a.rs")]
    assert fast == slow


def test_a_large_edit_without_any_needle_is_not_tokenised(monkeypatch):
    derived = dict(GROUNDING, _needles=grounding_needles(GROUNDING))
    monkeypatch.setattr(grounded, "scan", lambda *a, **k: (_ for _ in ()).throw(AssertionError("tokenised")))
    text = "fn main() { let x = compute(a, b); }\n" * 5000
    assert grounded.evaluate([_rule("must-not-ground")], derived, text, "src/a.rs") == []
    assert [f.id for f in grounded.evaluate([_rule("must-ground", name="impl")], derived, text, None)] == ["impl"]
