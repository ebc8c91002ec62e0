"""Plane membership: how action-boundary policies divide, and what no plane takes."""

from __future__ import annotations

import pytest

from conftest import AEGIS, structural
from yupana.projection.errors import ProjectionError

MEMORY = """
aegis:sel_shell a aegis:Selector ; aegis:name "shell" ; aegis:evidenceSource "argv" ;
    aegis:language "shell" ; aegis:tier "live" .
aegis:pred_heavy a aegis:Predicate ; aegis:name "heavy" ;
    aegis:evidenceSource "\\\\bcargo\\\\s+(build|test)\\\\b" ; aegis:matchType "must-not-match" .
aegis:op_floor a aegis:OperatingPoint ; aegis:kind "deterministic_threshold" ;
    aegis:threshold 8.0 ; aegis:calibrationBasis "MemAvailable GiB" .
aegis:policy_memory a aegis:Policy ; rdfs:label "build-memory-floor" ; aegis:boundary "action" ;
    aegis:selector aegis:sel_shell ; aegis:predicate aegis:pred_heavy ; aegis:operatingPoint aegis:op_floor ;
    aegis:effect "deny" ; aegis:constraintClass "hard" ; aegis:verificationPoint "PAG" .
"""

WIRE = """
aegis:wire_auth a aegis:Policy ; rdfs:label "auth-boundary" ; aegis:boundary "action" ;
    aegis:appliesTo "src/auth/**" ; aegis:effect "deny" .
"""

OTHERS = """
aegis:pred_claim a aegis:Predicate ; aegis:name "claim" ; aegis:evidenceSource "x" ; aegis:matchType "must-ground" .
aegis:policy_claim a aegis:Policy ; rdfs:label "claim" ; aegis:boundary "action" ; aegis:predicate aegis:pred_claim .
aegis:policy_empty a aegis:Policy ; rdfs:label "empty" ; aegis:boundary "action" .
aegis:sel_lsp a aegis:Selector ; aegis:name "lsp" ; aegis:evidenceSource "q" ; aegis:tier "lsp" .
aegis:policy_lsp a aegis:Policy ; rdfs:label "lsp" ; aegis:boundary "action" ; aegis:selector aegis:sel_lsp ;
    aegis:predicate aegis:pred_claim .
aegis:policy_transition a aegis:Policy ; rdfs:label "transition" ; aegis:boundary "transition" ;
    aegis:appliesTo "x/**" .
aegis:policy_untyped rdfs:label "untyped" ; aegis:boundary "action" ; aegis:appliesTo "x/**" .
"""


def test_policies_divide_among_the_planes(projected):
    cache = projected(structural() + MEMORY + WIRE + OTHERS).cache
    assert [p["iri"] for p in cache["policies"]] == [AEGIS + "policy_ticket"]
    assert [p["iri"] for p in cache["memory_policies"]] == [AEGIS + "policy_memory"]
    assert [p["iri"] for p in cache["tripwires"]] == [AEGIS + "wire_auth"]
    unprojected = {u["iri"]: u["reason"] for u in cache["unprojected"]}
    # transition-boundary and untyped subjects are not action policies at all
    assert set(unprojected) == {AEGIS + "policy_claim", AEGIS + "policy_empty", AEGIS + "policy_lsp"}
    assert "predicate but no aegis:selector" in unprojected[AEGIS + "policy_claim"]
    assert "no aegis:appliesTo" in unprojected[AEGIS + "policy_empty"]
    assert "'lsp'" in unprojected[AEGIS + "policy_lsp"]
    assert cache["counts"]["unprojected"] == 3


def test_a_blank_node_policy_is_refused(projected):
    with pytest.raises(ProjectionError) as err:
        projected('[] a aegis:Policy ; rdfs:label "anon" ; aegis:boundary "action" ; aegis:appliesTo "x" .')
    assert "not an IRI" in err.value.message


def test_a_blank_node_atom_is_refused(projected):
    body = """aegis:policy_b a aegis:Policy ; rdfs:label "b" ; aegis:boundary "action" ;
        aegis:selector [ a aegis:Selector ; aegis:tier "tree-sitter" ] ."""
    with pytest.raises(ProjectionError) as err:
        projected(body)
    assert (err.value.subject, err.value.property) == (AEGIS + "policy_b", "aegis:selector")


def test_a_structural_selector_with_a_memory_operating_point_is_a_memory_policy(projected):
    body = MEMORY.replace('aegis:tier "live"', 'aegis:tier "tree-sitter"')
    with pytest.raises(ProjectionError) as err:
        projected(body)
    assert (err.value.subject, err.value.property) == (AEGIS + "sel_shell", "aegis:tier")
