"""The example catalogue (fixtures/catalogue) is a real deployment in miniature: it conforms
to the shapes, projects cleanly with every plane populated, and is accepted by quipu's own
shapes too. quipu's shipped catalogues validate against our shapes as the interop reference
predicts. Tests reading /work/shared skip when it is absent."""

from __future__ import annotations

import re

import pytest
import rdflib

from conftest import QUIPU_FIXTURES, REPO
from yupana.endpoint.base import Deadline
from yupana.endpoint.embedded import EmbeddedStore, files_of
from yupana.projection import gate
from yupana.projection.refresh import project

CATALOGUE = REPO / "fixtures" / "catalogue"
AEGIS = "http://aegis.gastown.local/ontology/"
WIRED = {"SHANTY_ROOT": "/srv/shanty", "SHANTY_AGENT": "polecat-3"}
needs_quipu = pytest.mark.skipif(not (QUIPU_FIXTURES / "shapes").is_dir(), reason="quipu fixtures absent")


def graph_of(*paths) -> rdflib.Graph:
    graph = rdflib.Graph()
    for path in paths:
        graph.parse(str(path), format="turtle")
    return graph


@pytest.fixture(scope="module")
def projection():
    return project(EmbeddedStore.from_location(str(CATALOGUE)), {}, Deadline(30), env=WIRED)


def test_the_catalogue_conforms_to_the_shapes():
    report = gate.validate_graph(graph_of(*files_of(str(CATALOGUE))))
    assert report.conforms
    # The one result is deliberate: a commit-time policy the edit seam does not enforce,
    # there so `project --dump` shows what "not projected" looks like.
    assert [(r.severity, r.focus) for r in report.results] == [("info", AEGIS + "policy_commit_cites_work_item")]


def test_the_catalogue_projects_cleanly_and_its_triples_pass_the_gate(projection):
    assert projection.notices == [] and projection.cache["notices"] == []
    report = gate.validate(projection.triples)
    assert report.conforms and report.count("warning") == 0


def test_every_plane_is_populated(projection):
    counts = projection.cache["counts"]
    for plane in ("policies", "text_rules", "exemption_selectors", "grounded_rules", "tripwires",
                  "memory_policies", "unprojected", "ci_map", "grounding", "work_item_scopes",
                  "work_item_parents", "disk_history", "repo_exposure"):
        assert counts[plane], plane
    rules = counts["policies"] + counts["text_rules"] + counts["grounded_rules"] + counts["tripwires"] + counts["memory_policies"]
    assert rules >= 24, counts


def test_structural_policies_cover_languages_match_types_gates_and_placements(projection):
    policies = projection.cache["policies"]
    rules = [p["rule"] for p in policies]
    assert {r["language"] for r in rules} >= {"rust", "python", "typescript", "tsx", "go"}
    assert {r["match_type"] for r in rules} == {"must-match", "must-not-match", "must-exist"}
    assert any(r["gate"] for r in rules) and any(r["applies_to"] for r in rules)
    assert {r["class"] for r in rules} >= {"hard", "soft", "escalation", None}
    assert [r["name"] for r in rules if r["verification_point"] == "PAA"] == ["todo-has-owner"]


def test_text_rules_use_subclasses_local_and_shared_exemptions(projection):
    cache = projection.cache
    rules = {r["name"]: r for r in cache["text_rules"]}
    assert len(rules) >= 12
    # rules typed with subclasses two levels below aegis:TextRule are found
    assert "rule_no_aws_access_keys" in rules and "rule_no_internal_hostnames" in rules
    hostnames = rules["rule_no_internal_hostnames"]
    assert hostnames["exempt_path_regexes"] == ["^docs/internal/"]
    assert hostnames["exemption_selectors"] == [AEGIS + "sel_guard_fixtures", AEGIS + "sel_infra_inventory"]
    assert hostnames["exempt_path_regex"].count("(?:") == 5  # one local + 2 + 2 shared, as alternatives
    canary = rules["rule_liveness_canary"]
    assert canary["exempt_path_regex"] is None and canary["exemption_selectors"] == []
    shared = {s["name"] for s in cache["exemption_selectors"]}
    assert shared == {"guard-fixtures", "infra-inventory", "incident-records"}
    assert len(rules["rule_no_tracker_ids"]["labels"]) == 2 and len(rules["rule_no_tracker_ids"]["rationales"]) == 2


def test_tripwires_memory_ci_and_disk_read_like_a_deployment(projection):
    cache = projection.cache
    wires = {w["name"]: w for w in cache["tripwires"]}
    assert {w["effect"] for w in wires.values()} == {"deny", "warn", "throttle"}
    assert {(w["backoff"] or {}).get("kind") for w in wires.values()} == {None, "fixed", "exp"}
    assert wires["scheduler-hot-file"]["verification_point"] == "PAA"
    memory = {m["name"]: m for m in cache["memory_policies"]}
    assert memory["cargo-memory-floor"]["threshold_gib"] == 8.0 and memory["cargo-memory-floor"]["effect"] == "deny"
    assert {m["effect"] for m in memory.values()} == {"deny", "warn"}
    assert cache["ci_map"]["complete"] is True and len(cache["ci_map"]["jobs"]) >= 5
    assert cache["disk_history"]["cargo:build|repo:git|cwd:repo-root|mount:5d41402abc4b"]["n"] == 3
    assert cache["work_item_parents"]["FRT-1201"] == "FRT-1200"
    assert "crates/planner/src/cost.rs" in cache["work_item_scopes"]["FRT-1201"]
    assert "FRT" in cache["grounding"]["prefixes"]
    assert [u["iri"] for u in cache["unprojected"]] == [AEGIS + "policy_commit_cites_work_item"]


def test_no_real_hostnames_in_the_catalogue():
    text = "".join(p.read_text() for p in CATALOGUE.glob("*.ttl"))
    hosts = set(re.findall(r"\b(?:[a-z0-9-]+\.)+(?:com|net|org|io|dev|local|internal)\b", text))
    assert hosts <= {"aegis.gastown.local", "www.w3.org"}, hosts  # namespaces only; example.* elsewhere


# ── interop with quipu ───────────────────────────────────────────────────────────────


@needs_quipu
def test_quipu_accepts_the_catalogue_with_its_own_shapes():
    """What a quipu with SHACL on write would say about loading this catalogue."""
    names = ("governance.ttl", "aegis-ontology.shapes.ttl", "provenance.ttl", "aegis-properties.ttl",
             "code-entities.ttl", "dispatch-inventory.ttl")
    shapes = graph_of(*(QUIPU_FIXTURES / "shapes" / n for n in names))
    import pyshacl

    conforms, _, text = pyshacl.validate(graph_of(*files_of(str(CATALOGUE))), shacl_graph=shapes,
                                         inference="none", advanced=True)
    assert conforms, text


@needs_quipu
def test_quipu_treesitter_catalogue_conforms_to_our_shapes():
    report = gate.validate_graph(graph_of(QUIPU_FIXTURES / "shapes" / "policies" / "treesitter.ttl"))
    assert report.conforms and report.results == []


@needs_quipu
def test_quipu_linkage_policy_is_reported_as_not_enforced_at_this_seam():
    # interop §1.1/§1.4: policy_implements_claim_grounded has a predicate and no selector, so
    # it is not a structural policy (and its citation predicate is not a token predicate).
    report = gate.validate_graph(graph_of(QUIPU_FIXTURES / "shapes" / "policies" / "linkage.ttl"))
    assert report.conforms
    assert [(r.severity, r.focus, r.shape) for r in report.results] == [
        ("info", AEGIS + "policy_implements_claim_grounded", "aegis:UnprojectedActionPolicyShape")]


@needs_quipu
def test_quipus_whole_graph_projects_through_the_gate():
    files = [str(p) for pattern in ("shapes/*.ttl", "shapes/policies/*.ttl", "ontologies/*.ttl")
             for p in sorted(QUIPU_FIXTURES.glob(pattern))]
    projected = project(EmbeddedStore(files, "file:quipu"), {}, Deadline(60), env={})
    report = gate.validate(projected.triples)
    assert report.conforms, report.text
    assert [r.severity for r in report.results] == ["info"]
