"""The shapes govern aegis:rolloutStage (docs/vocabulary.md "Rollout stage") on text rules, every
aegis:Policy and grounded predicates: at most one value, one of shadow, advise, enforce — as
pySHACL checks them (``shapes validate``, the store's CI). The refresh's decoder refuses the
same values through the real CLI (tests/hooks/test_rollout_stage.py)."""

from __future__ import annotations

import pytest
import rdflib

from yupana.projection import gate

AEGIS = "http://aegis.gastown.local/ontology/"
PREFIXES = ("@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n@prefix aegis: <" + AEGIS + "> .\n"
            "aegis:InternalIdentifierPattern rdfs:subClassOf aegis:TextRule .\n")
RULE = ('aegis:rule_x a aegis:InternalIdentifierPattern ; rdfs:label "x" ; aegis:regex "x[0-9]+" ; '
        'aegis:enforcementTier "warn" %s.\n')
WIRE = ('aegis:wire_x a aegis:Policy ; rdfs:label "x" ; aegis:boundary "action" ; aegis:appliesTo "src/**" ; '
        'aegis:effect "deny" %s.\n')
PREDICATE = ('aegis:pred_x a aegis:Predicate ; aegis:name "x" ; aegis:evidenceSource "graph:work-item-id-set" ; '
             'aegis:candidateSource "token" ; aegis:groundingQuery "SELECT ?id WHERE { ?w aegis:identifier ?id }" ; '
             'aegis:matchType "must-not-ground" %s.\n')


def violations(body: str) -> set[tuple[str, str | None]]:
    report = gate.validate_graph(rdflib.Graph().parse(data=PREFIXES + body, format="turtle"))
    return {(r.focus, r.path) for r in report.results if r.severity == "violation"}


@pytest.mark.parametrize("template,subject", [(RULE, "rule_x"), (WIRE, "wire_x"), (PREDICATE, "pred_x")])
@pytest.mark.parametrize("stage", ["shadow", "advise", "enforce", None])
def test_each_stage_and_none_conform(template, subject, stage):
    assert violations(template % (f'; aegis:rolloutStage "{stage}" ' if stage else "")) == set()


@pytest.mark.parametrize("template,subject", [(RULE, "rule_x"), (WIRE, "wire_x"), (PREDICATE, "pred_x")])
@pytest.mark.parametrize("bad", ['"staged"', '"Shadow"', '"shadow" , "enforce"'])
def test_a_bad_stage_is_a_violation_naming_subject_and_property(template, subject, bad):
    assert (AEGIS + subject, "aegis:rolloutStage") in violations(template % f"; aegis:rolloutStage {bad} ")
