"""Structural policies: defaults, unions and every strict refusal."""

from __future__ import annotations

import pytest

from yupana.projection.errors import ProjectionError

from .helpers import AEGIS, structural

POLICY = AEGIS + "policy_ticket"


def test_a_minimal_policy_projects_with_defaults(projected):
    p = projected(structural()).cache["policies"]
    assert len(p) == 1
    entry = p[0]
    assert entry["iri"] == POLICY
    assert entry["effect"] == "warn"
    assert entry["latency_budget_ms"] is None and entry["hosted_at_layer"] is None
    rule = entry["rule"]
    assert rule == {
        "name": "no-ticket", "language": "rust", "query": "(line_comment) @c", "gate": None,
        "match_type": "must-not-match", "pattern": "\\b[A-Z]+-[0-9]+\\b", "applies_to": [],
        "message": None, "class": None, "verification_point": None, "backoff_formula": None,
    }


def test_every_optional_field_is_carried(projected):
    entry = projected(structural(
        '; aegis:effect "deny" ; aegis:constraintClass "hard" ; aegis:verificationPoint "PAG" ; '
        'aegis:hostedAtLayer "orchestration" ; aegis:latencyBudgetMs 5 ; aegis:backoffFormula "exp(min(overage / 60, 5))" ; '
        'aegis:appliesTo "src/**" , "crates/*/src/**" , "src/**"',
        predicate_extra='; aegis:gate "\\\\bTODO\\\\b"',
    )).cache["policies"][0]
    assert entry["effect"] == "deny"
    assert entry["latency_budget_ms"] == 5
    assert entry["hosted_at_layer"] == "orchestration"
    assert entry["rule"]["class"] == "hard" and entry["rule"]["verification_point"] == "PAG"
    assert entry["rule"]["gate"] == "\\bTODO\\b"
    assert entry["rule"]["backoff_formula"] == "exp(min(overage / 60, 5))"
    # union, de-duplicated, in a stable (sorted) order whatever the store's row order
    assert entry["rule"]["applies_to"] == ["crates/*/src/**", "src/**"]


@pytest.mark.parametrize("extra,prop", [
    ('; aegis:effect "deny" , "warn"', "aegis:effect"),
    ('; aegis:effect "explode"', "aegis:effect"),
    ('; aegis:constraintClass "hard" , "soft"', "aegis:constraintClass"),
    ('; aegis:constraintClass "firm"', "aegis:constraintClass"),
    ('; aegis:verificationPoint "pag"', "aegis:verificationPoint"),
    ('; aegis:hostedAtLayer "prompt"', "aegis:hostedAtLayer"),
    ('; aegis:latencyBudgetMs "fast"', "aegis:latencyBudgetMs"),
    ('; aegis:latencyBudgetMs -3', "aegis:latencyBudgetMs"),
    ('; aegis:latencyBudgetMs 5 , 6', "aegis:latencyBudgetMs"),
    ('; aegis:appliesTo "src/***"', "aegis:appliesTo"),
    ('; aegis:appliesTo "src/[unclosed"', "aegis:appliesTo"),
    ('; rdfs:label "second-name"', "rdfs:label"),
    ('; aegis:boundary "transition"', "aegis:boundary"),
    ('; aegis:predicate aegis:pred_other', "aegis:predicate"),
    ('; aegis:backoffFormula "a" , "b"', "aegis:backoffFormula"),
])
def test_malformed_policy_fields_fail_naming_subject_and_property(projected, extra, prop):
    body = structural(extra) + '\naegis:pred_other a aegis:Predicate ; aegis:evidenceSource "x" ; aegis:matchType "must-match" .'
    with pytest.raises(ProjectionError) as err:
        projected(body)
    assert err.value.subject == POLICY
    assert err.value.property == prop
    assert POLICY in str(err.value) and prop in str(err.value)


@pytest.mark.parametrize("pattern_ttl,problem", [
    ('"(?=lookahead)"', "RE2"),
    ('"(\\\\w)\\\\1"', "RE2"),
    ('"unclosed("', "RE2"),
    ('""', "blank"),
    ('"   "', "blank"),
    ('<http://example.org/not-a-string>', "not a literal"),
])
def test_predicate_pattern_must_compile_in_re2(projected, pattern_ttl, problem):
    body = structural().replace('aegis:evidenceSource "\\\\b[A-Z]+-[0-9]+\\\\b"', f"aegis:evidenceSource {pattern_ttl}")
    with pytest.raises(ProjectionError) as err:
        projected(body)
    assert err.value.subject == AEGIS + "pred_ticket"
    assert err.value.property == "aegis:evidenceSource"
    assert problem in err.value.message


def test_gate_must_compile(projected):
    with pytest.raises(ProjectionError) as err:
        projected(structural(predicate_extra='; aegis:gate "(?<=x)y"'))
    assert (err.value.subject, err.value.property) == (AEGIS + "pred_ticket", "aegis:gate")


@pytest.mark.parametrize("match_type", ["must-ground", "must-not-ground", "should-match"])
def test_match_type_must_be_lexical(projected, match_type):
    body = structural().replace('"must-not-match"', f'"{match_type}"')
    with pytest.raises(ProjectionError) as err:
        projected(body)
    assert err.value.property == "aegis:matchType"


def test_missing_label_is_an_error(projected):
    with pytest.raises(ProjectionError) as err:
        projected(structural().replace('rdfs:label "no-ticket" ;', ""))
    assert (err.value.subject, err.value.property) == (POLICY, "rdfs:label")


def test_missing_predicate_is_an_error(projected):
    body = structural().replace("aegis:predicate aegis:pred_ticket", 'aegis:effect "deny"')
    with pytest.raises(ProjectionError) as err:
        projected(body)
    assert (err.value.subject, err.value.property) == (POLICY, "aegis:predicate")


def test_selector_fields_are_required(projected):
    with pytest.raises(ProjectionError) as err:
        projected(structural().replace('aegis:language "rust" ;', ""))
    assert (err.value.subject, err.value.property) == (AEGIS + "sel_comments", "aegis:language")
    with pytest.raises(ProjectionError) as err:
        projected(structural(selector_extra='; aegis:tier "live"'))
    assert err.value.property == "aegis:tier"


def test_atoms_must_have_their_class(projected):
    body = structural().replace("aegis:pred_ticket a aegis:Predicate ;", "aegis:pred_ticket a aegis:Selector ;")
    with pytest.raises(ProjectionError) as err:
        projected(body)
    assert (err.value.subject, err.value.property) == (POLICY, "aegis:predicate")
    assert "aegis:Predicate" in err.value.message


def test_a_subclass_of_the_atom_class_is_accepted(projected):
    body = structural().replace("aegis:pred_ticket a aegis:Predicate ;", "aegis:pred_ticket a aegis:RegexPredicate ;")
    body += "\naegis:RegexPredicate rdfs:subClassOf aegis:Predicate ."
    assert projected(body).cache["policies"][0]["rule"]["match_type"] == "must-not-match"


def test_a_link_to_nothing_is_an_error_not_a_demotion(projected):
    body = structural().replace("aegis:predicate aegis:pred_ticket", "aegis:predicate aegis:pred_typo")
    with pytest.raises(ProjectionError) as err:
        projected(body)
    assert (err.value.subject, err.value.property) == (POLICY, "aegis:predicate")
    assert "holds nothing" in err.value.message


def test_hosting_overclaim_is_a_notice_and_still_projected(projected):
    proj = projected(structural('; aegis:hostedAtLayer "tool"'))
    assert proj.cache["policies"][0]["hosted_at_layer"] == "tool"
    assert len(proj.hosting_overclaims) == 1
    assert POLICY in proj.hosting_overclaims[0] and '"tool"' in proj.hosting_overclaims[0]
    assert proj.hosting_overclaims[0] in proj.cache["notices"]
    assert not projected(structural('; aegis:hostedAtLayer "orchestration"')).hosting_overclaims
