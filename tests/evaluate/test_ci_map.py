"""The CI-map selector: selected / quiet / unknown, partial coverage, and broken maps."""

from __future__ import annotations

import copy

import pytest

from yupana.evaluate import ci_map
from yupana.evaluate.ci_map import INVALID_MAP, NO_MAP, PARTIAL_NO_MATCH, QUIET, SELECTED, UNKNOWN, select

A = "http://aegis.gastown.local/ontology/"
PYTEST = {"iri": A + "cmd_pytest", "command": "pytest -q", "scopes": ["src/**", "tests/**"]}
RUFF = {"iri": A + "cmd_ruff", "command": "ruff check", "scopes": ["**/*.py"]}
DOCS = {"iri": A + "cmd_docs", "command": "mdbook build docs", "scopes": ["docs/**", "*.md"]}


def a_map(complete: bool = True) -> dict:
    """The shape ``yupana project`` writes: jobs sorted by IRI, commands as linked."""
    return {"complete": complete, "jobs": [
        {"iri": A + "cijob_docs", "job": "docs", "label": "Docs", "commands": [copy.deepcopy(DOCS)]},
        {"iri": A + "cijob_lint", "job": "lint", "label": "Lint", "commands": [copy.deepcopy(RUFF), copy.deepcopy(PYTEST)]},
        {"iri": A + "cijob_unit", "job": "unit-tests", "label": "Unit tests", "commands": [copy.deepcopy(PYTEST)]},
    ]}


def commands(sel) -> list[str]:
    return [c.command for c in sel.commands]


def test_matching_scopes_select_their_commands_in_map_order_once_each():
    sel = select(a_map(), ["src/app/main.py", "README.md"])
    assert sel.state == SELECTED and sel.complete is True and sel.runnable and sel.cause is None
    assert commands(sel) == ["mdbook build docs", "ruff check", "pytest -q"]
    pytest_cmd = sel.commands[2]
    assert [j["job"] for j in pytest_cmd.jobs] == ["lint", "unit-tests"]  # one command, two jobs, run once
    assert (pytest_cmd.job, pytest_cmd.label, pytest_cmd.iri) == ("lint", "Lint", A + "cmd_pytest")
    assert pytest_cmd.scopes == ["src/**"] and pytest_cmd.paths == ["src/app/main.py"]
    assert sel.commands[0].scopes == ["*.md"] and sel.commands[0].paths == ["README.md"]
    assert "3 local command(s) of 4 cover 2 changed path(s)" in sel.reason


def test_matched_paths_keep_change_order_across_scopes():
    sel = select(a_map(), ["tests/test_a.py", "src/b.py", "src/c.txt"])
    pytest_cmd = next(c for c in sel.commands if c.command == "pytest -q")
    assert pytest_cmd.scopes == ["src/**", "tests/**"]
    assert pytest_cmd.paths == ["tests/test_a.py", "src/b.py", "src/c.txt"]
    ruff = next(c for c in sel.commands if c.command == "ruff check")
    assert ruff.paths == ["tests/test_a.py", "src/b.py"]


def test_rust_glob_dialect_star_crosses_directories():
    # `*` crosses `/` in the Rust dialect: "*.md" covers deep/down/notes.md too.
    sel = select(a_map(), ["deep/down/notes.md"])
    assert commands(sel) == ["mdbook build docs"]


def test_a_complete_map_with_no_match_is_quiet():
    sel = select(a_map(), ["web/app.ts", "Cargo.lock"])
    assert sel.state == QUIET and sel.complete is True and sel.commands == [] and sel.cause is None
    assert "nothing to run" in sel.reason and not sel.runnable


def test_a_complete_map_and_no_change_is_quiet():
    sel = select(a_map(), [])
    assert sel.state == QUIET and "no changed paths" in sel.reason


def test_no_map_is_unknown_never_quiet():
    sel = select(None, ["web/app.ts"])
    assert sel.state == UNKNOWN and sel.cause == NO_MAP and sel.complete is None and sel.commands == []
    assert "no CI map" in sel.reason


def test_a_partial_map_with_no_match_does_not_certify_the_change():
    sel = select(a_map(complete=False), ["web/app.ts"])
    assert sel.state == UNKNOWN and sel.cause == PARTIAL_NO_MATCH and sel.complete is False
    assert "cannot certify" in sel.reason


def test_a_partial_map_returns_its_matches_but_says_they_are_not_the_whole_set():
    sel = select(a_map(complete=False), ["src/a.py"])
    assert sel.state == SELECTED and sel.complete is False and not sel.runnable
    assert commands(sel) == ["ruff check", "pytest -q"]
    assert "partial" in sel.reason and "not the whole check set" in sel.reason


@pytest.mark.parametrize("scopes", [[], None, [""], ["   "], ["a**"], ["src/[z-a]"], "src/**", [3]])
def test_an_invalid_or_empty_scope_list_is_unknown_even_when_another_command_matches(scopes):
    broken = a_map()
    broken["jobs"][0]["commands"][0]["scopes"] = scopes  # the docs command; the change is Python
    sel = select(broken, ["src/a.py"])
    assert sel.state == UNKNOWN and sel.cause == INVALID_MAP and sel.commands == []
    assert "mdbook build docs" in sel.reason


@pytest.mark.parametrize("mutate,named", [
    (lambda m: m.update(complete="complete"), "coverage marker"),
    (lambda m: m.pop("complete"), "coverage marker"),
    (lambda m: m.update(jobs=[]), "no jobs"),
    (lambda m: m["jobs"][1].update(job=" "), "job name"),
    (lambda m: m["jobs"][1].update(label=""), "label"),
    (lambda m: m["jobs"][1].update(commands=[]), "links no local command"),
    (lambda m: m["jobs"][1]["commands"][0].update(command=""), "blank or missing command"),
    (lambda m: m["jobs"].append("lint"), "jobs[3]"),
])
def test_other_malformed_maps_are_unknown_and_say_where(mutate, named):
    broken = a_map()
    mutate(broken)
    sel = select(broken, ["src/a.py"])
    assert sel.state == UNKNOWN and sel.cause == INVALID_MAP and named in sel.reason


def test_a_map_that_is_not_an_object_is_unknown():
    assert select(["jobs"], ["src/a.py"]).cause == INVALID_MAP  # type: ignore[arg-type]


def test_changed_paths_are_normalised_and_deduplicated():
    assert ci_map.normalise_paths(["./src/a.py", "src/a.py", "", "docs/x.md"]) == ["src/a.py", "docs/x.md"]
    sel = select(a_map(), ["./src/a.py", "src/a.py"])
    assert sel.changed == ["src/a.py"] and sel.commands[0].paths == ["src/a.py"]


def test_the_selection_does_not_change_the_map():
    original = a_map()
    kept = copy.deepcopy(original)
    select(original, ["src/a.py", "docs/x.md"])
    assert original == kept


def test_json_form_is_stable():
    out = select(a_map(), ["src/a.py"]).to_dict()
    assert set(out) == {"state", "complete", "cause", "reason", "changed", "commands"}
    assert set(out["commands"][0]) == {"command", "iri", "job", "label", "jobs", "scopes", "paths"}
    assert out["commands"][1]["jobs"] == [{"job": "lint", "label": "Lint", "iri": A + "cijob_lint"},
                                          {"job": "unit-tests", "label": "Unit tests", "iri": A + "cijob_unit"}]
