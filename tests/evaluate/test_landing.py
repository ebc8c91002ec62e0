"""The landing evaluator: each requirement met, unmet or unknown, and the certification they make
(unknown never certified, refused wins). The real push is tests/commands/test_landing.py."""

from __future__ import annotations

import pytest

from yupana.evaluate import ci_map, landing

MAP = {"complete": True, "jobs": [{"iri": "j", "job": "unit", "label": "Unit", "commands": [
    {"iri": "c1", "command": "make test", "scopes": ["src/**"]},
    {"iri": "c2", "command": "make lint", "scopes": ["**/*.py"]}]}]}
STRICT = {"repo": "widgets", "requires": ["ci-selection-complete", "local-commands-pass"]}


def run_of(*codes: int) -> dict:
    commands = ["make test", "make lint"]
    results = [{"command": c, "exit_code": code, "duration_secs": 0.1} for c, code in zip(commands, codes)]
    failed = next((r["command"] for r in results if r["exit_code"] != 0), None)
    return {"refused": None, "results": results, "failed": failed, "not_run": commands[len(results):] if failed else []}


def evaluate(policy: dict | None, selection: ci_map.Selection | None, run: dict | None = None,
             attribution: str | None = None) -> tuple[str, str, list[landing.Requirement]]:
    reqs = [landing.ci_selection_complete(selection, "no change"),
            landing.local_commands_pass(selection, "no change", attribution=attribution, run=run)]
    outcome, reason = landing.certify(policy, reqs, "no policy")
    return outcome, reason, reqs


def test_a_complete_selection_that_passes_is_certified():
    selection = ci_map.select(MAP, ["src/app.py"])
    assert landing.needs_run(STRICT, selection)
    outcome, _, reqs = evaluate(STRICT, selection, run_of(0, 0))
    assert outcome == landing.CERTIFIED and [r.outcome for r in reqs] == ["met", "met"]


def test_a_quiet_complete_map_certifies_without_running():
    selection = ci_map.select(MAP, ["README.txt"])
    assert not landing.needs_run(STRICT, selection)
    assert evaluate(STRICT, selection)[0] == landing.CERTIFIED


@pytest.mark.parametrize("codes,outcome,words", [
    ((0, 1), landing.REFUSED, "`make lint` failed (exit 1)"),
    ((2,), landing.REFUSED, "`make test` failed (exit 2); 1 later command(s) not run"),
    ((127,), landing.UNKNOWN, "`make test` could not run (exit 127"),
    ((126,), landing.UNKNOWN, "could not run (exit 126"),
    ((-9,), landing.UNKNOWN, "`make test` was killed by signal 9"),
    ((0,), landing.UNKNOWN, "1 of 2 selected command(s) ran"),
])
def test_command_results(codes, outcome, words):
    selection = ci_map.select(MAP, ["src/app.py"])
    got, reason, _ = evaluate(STRICT, selection, run_of(*codes))
    assert got == outcome and words in reason


@pytest.mark.parametrize("selection,words", [
    (None, "no change"),
    (ci_map.select(None, ["src/app.py"]), "no CI map is projected"),
    (ci_map.select(dict(MAP, complete=False), ["src/app.py"]), "the CI map is partial"),
    (ci_map.select(dict(MAP, complete=False), ["README.txt"]), "partial knowledge"),
    (ci_map.select({"complete": True, "jobs": []}, ["src/app.py"]), "the CI map is invalid"),
])
def test_what_cannot_be_shown_is_unknown_never_met(selection, words):
    outcome, reason, reqs = evaluate(STRICT, selection)
    assert outcome == landing.UNKNOWN and words in reason
    assert {r.outcome for r in reqs} == {landing.UNKNOWN}


def test_no_policy_is_unknown_and_an_unattributable_tree_runs_nothing():
    assert landing.certify(None, [], "no landing policy for repository `x`") == (
        landing.UNKNOWN, "no landing policy for repository `x`")
    selection = ci_map.select(MAP, ["src/app.py"])
    outcome, reason, _ = evaluate(STRICT, selection, attribution="the working tree differs")
    assert outcome == landing.UNKNOWN and "not run: the working tree differs" in reason


def test_refused_wins_over_unknown_and_only_required_count():
    unmet = landing.Requirement(landing.LOCAL_COMMANDS_PASS, landing.UNMET, "failed")
    unknown = landing.Requirement(landing.CI_SELECTION_COMPLETE, landing.UNKNOWN, "partial")
    assert landing.certify(STRICT, [unknown, unmet], "")[0] == landing.REFUSED
    only_ci = {"repo": "w", "requires": ["ci-selection-complete"]}
    met = landing.Requirement(landing.CI_SELECTION_COMPLETE, landing.MET, "complete")
    assert landing.certify(only_ci, [met, unmet], "")[0] == landing.CERTIFIED
    assert landing.certify({"requires": []}, [met], "")[0] == landing.UNKNOWN


def test_a_record_kind_must_follow_from_its_requirements():
    record = {"policy": STRICT, "requirements": [{"requirement": "ci-selection-complete", "outcome": "met", "reason": ""},
                                                 {"requirement": "local-commands-pass", "outcome": "unknown", "reason": ""}]}
    assert landing.consistent("landing-unknown", record) is None
    assert "make it landing-unknown" in landing.consistent("landing-certified", record)
    assert landing.consistent("landing-certified", dict(record, policy=None)) is not None
    assert landing.find_policy([{"repo": "a"}, {"repo": "widgets", "x": 1}], "widgets") == {"repo": "widgets", "x": 1}
    assert landing.find_policy([{"repo": "Widgets"}], "widgets") is None  # matched exactly
