"""Plane membership: how action-boundary policies divide, and what no plane takes."""

from __future__ import annotations

import pytest

from yupana.projection.errors import ProjectionError

from .helpers import AEGIS, MEMORY, OTHERS, WIRE_TTL, structural


def test_policies_divide_among_the_planes(projected):
    cache = projected(structural() + MEMORY + WIRE_TTL + OTHERS).cache
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
