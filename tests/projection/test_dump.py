"""``project --dump`` renderings: the table an operator audits, the JSON, and Turtle that
round-trips through a store back to the same catalogue."""

from __future__ import annotations

import json

import pytest
import rdflib

from conftest import REPO
from yupana.endpoint.base import Deadline
from yupana.endpoint.embedded import EmbeddedStore
from yupana.projection import dump, gate
from yupana.projection.refresh import project

from .helpers import AEGIS, CI, ITEMS, MEMORY, SELECTOR, WIRED, grounded, history, rule, structural, wire

CATALOGUE = REPO / "fixtures" / "catalogue"
FRESH = {"state": "fresh", "age_secs": 12, "endpoint": "http://store.example/sparql", "ttl_secs": 3600}
STALE = {"state": "stale", "age_secs": 4210, "endpoint": "http://store.example/sparql", "ttl_secs": 3600}


@pytest.fixture(scope="module")
def catalogue():
    cache = project(EmbeddedStore.from_location(str(CATALOGUE)), {}, Deadline(30), env=WIRED).cache
    return dict(cache, written_at=1_780_030_000)


def comparable(cache: dict) -> dict:
    """The catalogue a round trip must preserve: all but where it came from, the
    not-projected list and notices (comments in Turtle, not catalogue)."""
    out = {k: v for k, v in cache.items() if k not in ("endpoint", "source", "dialect", "written_at", "unprojected", "notices")}
    out["counts"] = {k: v for k, v in cache["counts"].items() if k != "unprojected"}
    return out


def reproject(tmp_path, text: str, env: dict | None = None) -> dict:
    path = tmp_path / "dump.ttl"
    path.write_text(text, encoding="utf-8")
    return project(EmbeddedStore.from_location(str(path)), {}, Deadline(30), env=env or {}).cache


# ── table ────────────────────────────────────────────────────────────────────────────


def test_table_header_states_endpoint_digest_freshness_and_age(catalogue):
    head = dump.render(catalogue, fmt="table", freshness=FRESH).splitlines()[:3]
    assert catalogue["endpoint"] in head[0] and "(embedded)" in head[0]
    assert "policy fresh: cache age 12s" in head[1] and "2026-05-29" in head[1]
    assert catalogue["digest"] in head[2]
    stale = dump.render(catalogue, fmt="table", freshness=STALE)
    assert "policy STALE: cache age 4210s" in stale and "fresh" not in stale.splitlines()[1]


def test_table_has_one_section_per_plane_with_its_count(catalogue):
    text = dump.render(catalogue, fmt="table", freshness=FRESH)
    counts = catalogue["counts"]
    for heading in (f"STRUCTURAL POLICIES ({counts['policies']})", f"TEXT RULES ({counts['text_rules']})",
                    f"SHARED EXEMPTION SELECTORS ({counts['exemption_selectors']})",
                    f"GROUNDED RULES ({counts['grounded_rules']})", f"TRIPWIRES ({counts['tripwires']})",
                    f"HOST-MEMORY POLICIES ({counts['memory_policies']})", f"CI MAP (complete, {counts['ci_map']} jobs)",
                    "WORK ITEMS", f"DISK-IMPACT HISTORY ({counts['disk_history']})", "NOT PROJECTED (1)", "NOTICES (0)"):
        assert heading in text, heading


def test_table_rows_show_what_an_auditor_checks(catalogue):
    lines = dump.render(catalogue, fmt="table", freshness=FRESH).splitlines()

    def row(name: str) -> str:
        return next(line for line in lines if line.startswith(f"  {name} "))

    assert row("no-ticket-in-comment").split()[1:6] == ["rust", "must-not-match", "deny", "hard", "PAG"]
    assert "(all paths)" in row("no-ticket-in-comment")
    assert row("todo-has-owner").split()[5] == "PAA"
    hostnames = row("rule_no_internal_hostnames")
    assert "block" in hostnames and "^docs/internal/, @guard-fixtures, @infra-inventory" in hostnames
    assert "300s fixed" in row("lockfile-churn") and "exp(min(n/2, 8))s" in row("vendored-dependencies")
    assert "8 GiB" in row("cargo-memory-floor") and "deny" in row("cargo-memory-floor")
    assert "FRT-1201, FRT-1202, FRT-1203, FRT-1204" in row("FRT-1200")
    assert "+2.0 GiB" in row("cargo:build|repo:git|cwd:repo-root") and "-2.8 GiB" in row("cargo:clean|repo:git|cwd:repo-root")
    assert "not a structural policy" in row("policy_commit_cites_work_item")
    assert "grounding set: 9 work-item ids; prefixes FRT, OPS, SEC" in "\n".join(lines)


def test_wide_values_are_cut_but_json_keeps_them_whole(catalogue):
    long_pattern = "x" * 200
    cache = dict(catalogue, text_rules=[dict(catalogue["text_rules"][0], pattern=long_pattern)])
    table = dump.render(cache, fmt="table", freshness=FRESH)
    assert long_pattern not in table and ("x" * 39 + "…") in table
    assert max(len(line) for line in table.splitlines() if "TEXT" not in line and "yupana projection" not in line) < 260
    assert json.loads(dump.render(cache, fmt="json", freshness=FRESH))["text_rules"][0]["pattern"] == long_pattern


def test_unknown_planes_say_unknown_never_empty(catalogue):
    cache = dict(catalogue, ci_map=None, grounding=None, work_item_scopes=None, work_item_parents=None,
                 disk_history=None)
    text = dump.render(cache, fmt="table", freshness=STALE)
    assert "CI MAP: none — UNKNOWN" in text
    assert "grounding set: UNKNOWN" in text
    assert "scopes (observed rung): UNKNOWN" in text and "parents (derived rung): UNKNOWN" in text
    assert "DISK-IMPACT HISTORY: UNKNOWN" in text
    empty = dict(cache, disk_history={}, text_rules=[])
    text = dump.render(empty, fmt="table", freshness=FRESH)
    assert "DISK-IMPACT HISTORY (0)" in text and "TEXT RULES (0)\n  (none)" in text


def test_an_unknown_format_is_an_error(catalogue):
    with pytest.raises(ValueError, match="table, json, turtle"):
        dump.render(catalogue, fmt="yaml", freshness=FRESH)


# ── json ─────────────────────────────────────────────────────────────────────────────


def test_json_is_the_cache_plus_freshness_and_age(catalogue):
    text = dump.render(catalogue, fmt="json", freshness=STALE)
    doc = json.loads(text)
    assert doc.pop("freshness") == "stale" and doc.pop("age_secs") == 4210
    assert doc == json.loads(json.dumps(catalogue))
    assert text == dump.render(dict(reversed(list(catalogue.items()))), fmt="json", freshness=STALE)  # key order is stable
    assert list(json.loads(text)) == sorted(json.loads(text))


# ── turtle ───────────────────────────────────────────────────────────────────────────


def test_turtle_round_trips_the_example_catalogue(catalogue, tmp_path):
    text = dump.render(catalogue, fmt="turtle", freshness=FRESH)
    again = reproject(tmp_path, text, env=WIRED)
    assert comparable(again) == comparable(catalogue)
    assert again["digest"] == catalogue["digest"]


def test_turtle_is_valid_data_for_the_gate(catalogue):
    graph = rdflib.Graph().parse(data=dump.render(catalogue, fmt="turtle", freshness=FRESH), format="turtle")
    report = gate.validate_graph(graph)
    assert report.conforms and report.results == []


def test_turtle_round_trips_awkward_values(projected, tmp_path):
    awkward = 'quote \\" backslash \\\\ newline \\n tab \\t and “unicode”'  # Turtle-escaped
    body = (structural(f'; rdfs:comment "x" ; aegis:appliesTo "src/[ab]*/**" ; aegis:latencyBudgetMs 0 ; '
                       f'aegis:backoffFormula "{awkward}"', predicate_extra='; aegis:gate "\\\\bTODO\\\\b"')
            + wire('; aegis:backoffFormula " exp( min( overage/2.5 , -1.5 ) )"', effect='"throttle"')
            + MEMORY.replace("8.0", "0.000125")
            + rule(f'; aegis:exemptionSelector aegis:sel_fixtures ; rdfs:comment "{awkward}" , "second" ; '
                   f'aegis:identifierClass "b" , "a" ; rdfs:label "z label"')
            + SELECTOR + grounded(f'; rdfs:label "{awkward}" ; aegis:enforcementTier "block"') + CI + ITEMS
            + history(3)
            + '<http://aegis.gastown.local/ontology/rule%20odd/x_y> a aegis:TextRule ; rdfs:label "odd" ; '
              'aegis:regex "odd" ; aegis:enforcementTier "warn" .\n')
    first = projected(body, env=WIRED).cache
    text = dump.render(first, fmt="turtle", freshness=FRESH)
    assert comparable(reproject(tmp_path, text, env=WIRED)) == comparable(first)


def test_turtle_says_what_it_cannot_carry(catalogue, tmp_path):
    cache = dict(catalogue, grounding=None, work_item_scopes=None, work_item_parents=None, ci_map=None,
                 disk_history=None, notices=["the store withheld subclass inference"])
    text = dump.render(cache, fmt="turtle", freshness=STALE)
    for comment in ("# grounding set UNKNOWN", "# work-item scopes UNKNOWN", "# work-item parents UNKNOWN",
                    "# no CI map in this cache (UNKNOWN)", "# disk history UNKNOWN",
                    f"# {AEGIS}policy_commit_cites_work_item: it has an aegis:predicate",
                    "# the store withheld subclass inference", "# policy stale: cache age 4210s"):
        assert comment in text, comment
    again = reproject(tmp_path, text)
    assert again["ci_map"] is None and again["work_item_scopes"] is None
    assert again["text_rules"] == catalogue["text_rules"]


# ── through the real CLI ─────────────────────────────────────────────────────────────


def test_project_dump_shows_the_example_catalogue_on_a_fresh_machine(yupana):
    run = yupana("project", "--dump")
    assert run.returncode == 0, run.stderr.decode()
    out = run.stdout.decode()
    assert "policy fresh: cache age" in out
    assert "STRUCTURAL POLICIES (10)" in out and "no-ticket-in-comment" in out and "NOT PROJECTED (1)" in out


def test_project_dump_turtle_through_the_cli_round_trips(yupana, tmp_path):
    run = yupana("project", "--dump", "--format", "turtle")
    assert run.returncode == 0, run.stderr.decode()
    as_json = json.loads(yupana("project", "--dump", "--json", "--no-refresh").stdout)
    again = reproject(tmp_path, run.stdout.decode())
    original = {k: v for k, v in as_json.items()
                if k not in ("freshness", "age_secs", "block_tier", "schema", "yupana_version",  # the dump's,
                             "dataset")}  # and the refresher's: not the projection's
    # the CLI's refresh runs without the tracker wired: scopes and parents are UNKNOWN on both sides
    assert comparable(again) == comparable(original)
