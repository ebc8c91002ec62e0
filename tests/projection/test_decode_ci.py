"""CI maps: jobs, local commands, coverage, and UNKNOWN when there is no map."""

from __future__ import annotations

import pytest

from yupana.projection.errors import ProjectionError

from .helpers import AEGIS, CI


def test_a_map_projects(projected):
    ci = projected(CI).cache["ci_map"]
    pytest_cmd = {"iri": AEGIS + "cmd_pytest", "command": "pytest -q", "scopes": ["src/**", "tests/**"]}
    assert ci == {"complete": True, "jobs": [
        {"iri": AEGIS + "cijob_lint", "job": "lint", "label": "Lint",
         "commands": [pytest_cmd, {"iri": AEGIS + "cmd_ruff", "command": "ruff check", "scopes": ["**/*.py"]}]},
        {"iri": AEGIS + "cijob_unit", "job": "unit-tests", "label": "Unit tests", "commands": [pytest_cmd]},
    ]}


def test_no_map_is_unknown_not_empty(projected):
    assert projected("").cache["ci_map"] is None


def test_maps_merge_and_partial_wins(projected):
    body = CI + 'aegis:cimap_extra a aegis:CiMap ; aegis:coverage "partial" ; aegis:ciJob aegis:cijob_unit .'
    ci = projected(body).cache["ci_map"]
    assert ci["complete"] is False and len(ci["jobs"]) == 2


@pytest.mark.parametrize("old,new,subject,prop", [
    ('aegis:coverage "complete"', 'aegis:coverage "mostly"', "cimap_main", "aegis:coverage"),
    ('aegis:coverage "complete" ;', "", "cimap_main", "aegis:coverage"),
    ('aegis:command "pytest -q"', 'aegis:command "  "', "cmd_pytest", "aegis:command"),
    ('aegis:appliesTo "**/*.py"', 'aegis:appliesTo "a**"', "cmd_ruff", "aegis:appliesTo"),
    ('aegis:command "ruff check" ; aegis:appliesTo "**/*.py"', 'aegis:command "ruff check"', "cmd_ruff", "aegis:appliesTo"),
    ('aegis:name "lint" ;', "", "cijob_lint", "aegis:name"),
    ('rdfs:label "Lint" ;', 'rdfs:label "" ;', "cijob_lint", "rdfs:label"),
    ("aegis:localCommand aegis:cmd_ruff ,", "aegis:localCommand aegis:cmd_missing ,", "cijob_lint", "aegis:localCommand"),
    ("aegis:cijob_unit a aegis:CiJob", "aegis:cijob_unit a aegis:LocalCommand", "cimap_main", "aegis:ciJob"),
    ('aegis:ciJob aegis:cijob_unit , aegis:cijob_lint', 'aegis:ciJob "unit"', "cimap_main", "aegis:ciJob"),
])
def test_malformed_maps_refuse(projected, old, new, subject, prop):
    assert old in CI
    with pytest.raises(ProjectionError) as err:
        projected(CI.replace(old, new))
    assert (err.value.subject, err.value.property) == (AEGIS + subject, prop)
