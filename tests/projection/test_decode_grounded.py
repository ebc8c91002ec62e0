"""Grounded predicates: token candidates, grounded match types, tiers."""

from __future__ import annotations

import pytest

from yupana.projection.errors import ProjectionError

from .helpers import AEGIS, grounded

PRED = AEGIS + "pred_grounded"


def test_a_grounded_predicate_projects(projected):
    cache = projected(grounded('; rdfs:label "ids" , "work ids" ; rdfs:comment "why" ; aegis:enforcementTier "block"')).cache
    assert cache["grounded_rules"] == [{
        "iri": PRED, "name": "no-fabricated-ids", "label": "ids \u2014 work ids", "match_type": "must-not-ground",
        "tier": "block", "rationale": "why",
    }]


def test_tier_defaults_to_warn_and_name_to_the_iri_tail(projected):
    entry = projected(grounded().replace('aegis:name "no-fabricated-ids" ;', "")).cache["grounded_rules"][0]
    assert entry["tier"] == "warn" and entry["name"] == "pred_grounded"


@pytest.mark.parametrize("body,prop", [
    (grounded('; aegis:enforcementTier "advise"'), "aegis:enforcementTier"),
    (grounded(match_type="must-not-match"), "aegis:matchType"),
    (grounded().replace('aegis:matchType "must-not-ground"', 'aegis:tier "model"'), "aegis:matchType"),
    (grounded('; aegis:candidateSource "citation"'), "aegis:candidateSource"),
    (grounded('; aegis:name "second"'), "aegis:name"),
])
def test_malformed_grounded_predicates_refuse(projected, body, prop):
    with pytest.raises(ProjectionError) as err:
        projected(body)
    assert (err.value.subject, err.value.property) == (PRED, prop)


def test_the_grounding_query_is_required(projected):
    body = grounded().split("aegis:groundingQuery")[0] + 'aegis:matchType "must-ground" .'
    with pytest.raises(ProjectionError) as err:
        projected(body)
    assert (err.value.subject, err.value.property) == (PRED, "aegis:groundingQuery")
