"""quipu's real shapes, ontologies and policy catalogues, loaded as data, project as the
interop reference predicts. Skipped when the shared fixtures are absent."""

from __future__ import annotations

import pytest

from yupana.endpoint.base import Deadline
from yupana.projection.refresh import project
from yupana.projection.vocab import RDF_TYPE, RDFS_SUBCLASS_OF

from conftest import QUIPU_FIXTURES

from .helpers import AEGIS, Recording

pytestmark = pytest.mark.skipif(not (QUIPU_FIXTURES / "shapes").is_dir(), reason="quipu fixtures absent")


def quipu_files() -> list[str]:
    found = []
    for pattern in ("shapes/*.ttl", "shapes/policies/*.ttl", "ontologies/*.ttl"):
        found += sorted(str(p) for p in QUIPU_FIXTURES.glob(pattern))
    return found


@pytest.fixture(scope="module")
def quipu_projection():
    files = quipu_files()
    return project(Recording(files, "file:" + ",".join(files)), {}, Deadline(30), env={})


def test_no_ticket_in_comment_is_hard_pag_deny(quipu_projection):
    policies = {p["rule"]["name"]: p for p in quipu_projection.cache["policies"]}
    entry = policies["no-ticket-in-comment"]
    assert entry["iri"] == AEGIS + "policy_no_ticket_in_comment"
    assert entry["effect"] == "deny"
    assert entry["rule"]["class"] == "hard" and entry["rule"]["verification_point"] == "PAG"
    assert entry["rule"]["pattern"] == r"\b[A-Z]+-[0-9]+\b"
    assert entry["rule"]["match_type"] == "must-not-match"
    assert entry["rule"]["language"] == "rust" and entry["rule"]["query"] == "(line_comment) @c"
    assert entry["rule"]["gate"] is None and entry["rule"]["applies_to"] == []
    assert entry["latency_budget_ms"] == 5 and entry["hosted_at_layer"] == "orchestration"


def test_todo_needs_ticket_is_soft_paa_with_its_gate(quipu_projection):
    policies = {p["rule"]["name"]: p for p in quipu_projection.cache["policies"]}
    entry = policies["todo-needs-ticket"]
    assert entry["effect"] == "warn"
    assert entry["rule"]["class"] == "soft" and entry["rule"]["verification_point"] == "PAA"
    assert entry["rule"]["match_type"] == "must-match" and entry["rule"]["gate"] == r"\bTODO\b"
    assert entry["latency_budget_ms"] == 10
    assert len(policies) == 2


def test_the_v2_grounded_predicate_is_a_warn_tier_must_not_ground_rule(quipu_projection):
    assert quipu_projection.cache["grounded_rules"] == [{
        "iri": AEGIS + "pred_no_ticket_in_comment_v2", "name": "no-ticket-in-comment", "label": None,
        "match_type": "must-not-ground", "tier": "warn", "rationale": None,
    }]
    # the citation-sourced linkage predicate is not a token predicate
    assert all("implements" not in g["iri"] for g in quipu_projection.cache["grounded_rules"])
    # grounded rules exist, so the grounding set was fetched: quipu ships no work items
    assert quipu_projection.cache["grounding"] == {"ids": [], "prefixes": []}


def test_policy_implements_claim_grounded_is_listed_unprojected_with_the_reason(quipu_projection):
    unprojected = quipu_projection.cache["unprojected"]
    assert [u["iri"] for u in unprojected] == [AEGIS + "policy_implements_claim_grounded"]
    assert "no aegis:selector" in unprojected[0]["reason"]
    assert all(p["iri"] != unprojected[0]["iri"] for p in quipu_projection.cache["policies"])


def test_other_planes_are_empty_or_unknown_as_the_data_says(quipu_projection):
    cache = quipu_projection.cache
    assert cache["text_rules"] == [] and cache["tripwires"] == [] and cache["memory_policies"] == []
    assert cache["ci_map"] is None
    assert cache["work_item_scopes"] is None and cache["work_item_parents"] is None
    assert cache["notices"] == []
    assert not any("hosting overclaim" in n for n in cache["notices"])


def test_triples_carry_types_and_the_policy_superclass(quipu_projection):
    triples = {(s, p, o.value) for s, p, o in quipu_projection.triples}
    assert (AEGIS + "policy_no_ticket_in_comment", RDF_TYPE, AEGIS + "Policy") in triples
    assert (AEGIS + "sel_rust_line_comments", RDF_TYPE, AEGIS + "Selector") in triples
    assert (AEGIS + "Policy", RDFS_SUBCLASS_OF, AEGIS + "Directive") in triples
    # only the properties the planes read: aegis:claim is quipu's, not ours
    assert not any(p == AEGIS + "claim" for _, p, _ in triples)
