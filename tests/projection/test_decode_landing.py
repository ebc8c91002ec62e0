"""Landing policies (issue 13 §2 vocabulary): the repository's own aegis:landingPolicy first,
else its repository type's; strict decoding; the bundled catalogue's statements pass the
shapes and decode; the refresh projects them as the ``landing_policies`` plane."""

from __future__ import annotations

import pytest
import rdflib

from conftest import REPO
from yupana.endpoint.base import Term
from yupana.projection import decode_landing, gate
from yupana.projection.errors import ProjectionError
from yupana.projection.subject import Subject

from .helpers import LANDING

AEGIS = "http://aegis.gastown.local/ontology/"
PREFIXES = "@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n@prefix aegis: <" + AEGIS + "> .\n"
FIXTURE = REPO / "fixtures" / "catalogue" / "landing.ttl"


def subjects(turtle: str) -> dict[str, Subject]:
    graph = rdflib.Graph().parse(data=turtle, format="turtle")
    out: dict[str, Subject] = {}
    for s, p, o in graph:
        term = (Term("uri", str(o)) if isinstance(o, rdflib.URIRef)
                else Term("literal", str(o), str(o.datatype) if getattr(o, "datatype", None) else None))
        out.setdefault(str(s), Subject(str(s))).add(str(p), term)
    return out


def lookup(found: dict[str, Subject], repo: str) -> dict | None:
    subject = found.get(AEGIS + repo)
    kind = decode_landing.type_link(subject)
    return decode_landing.decode(subject, found.get(kind) if kind else None, found)


def test_the_repositorys_own_policy_comes_before_its_types():
    body = FIXTURE.read_text() + "aegis:repo_larkspur-freight aegis:repositoryType aegis:repotype_service .\n"
    found = subjects(body)
    own = lookup(found, "repo_larkspur-freight")
    assert own == {"iri": AEGIS + "landing_strict", "label": "strict: the whole CI selection, run locally and passed",
                   "requires": ["ci-selection-complete", "local-commands-pass"], "source": "repository"}
    inherited = lookup(found, "repo_larkspur-infra")
    assert inherited["iri"] == AEGIS + "landing_service" and inherited["source"] == "repository-type"
    assert inherited["requires"] == ["ci-selection-complete"]


def test_no_policy_is_unknown_not_an_empty_policy():
    assert lookup(subjects(FIXTURE.read_text()), "repo_elsewhere") is None


@pytest.mark.parametrize("old,new,subject,prop", [
    ('"ci-selection-complete" .', '"tests-green" .', "landing_service", "aegis:requires"),
    ("aegis:repo_larkspur-freight aegis:landingPolicy aegis:landing_strict",
     "aegis:repo_larkspur-freight aegis:landingPolicy aegis:landing_missing",
     "repo_larkspur-freight", "aegis:landingPolicy"),
    ('aegis:landing_service a aegis:LandingPolicy ;', 'aegis:landing_service a aegis:CiMap ;',
     "repotype_service", "aegis:landingPolicy"),
])
def test_a_malformed_landing_statement_names_subject_and_property(old, new, subject, prop):
    body = FIXTURE.read_text().replace(old, new)
    assert body != FIXTURE.read_text()
    found = subjects(body)
    with pytest.raises(ProjectionError) as err:
        for repo in ("repo_larkspur-freight", "repo_larkspur-infra"):
            lookup(found, repo)
    assert AEGIS + subject in str(err.value) and prop in str(err.value)


def test_the_shapes_refuse_an_unknown_requirement_and_a_second_policy():
    good = gate.validate_graph(rdflib.Graph().parse(FIXTURE))
    assert good.conforms
    bad = FIXTURE.read_text().replace('"ci-selection-complete" .', '"tests-green" .') + (
        "aegis:repo_larkspur-freight aegis:landingPolicy aegis:landing_service .\n")
    report = gate.validate_graph(rdflib.Graph().parse(data=bad, format="turtle"))
    assert not report.conforms
    focus = {r.focus for r in report.results if r.severity == "violation"}
    assert {AEGIS + "landing_service", AEGIS + "repo_larkspur-freight"} <= focus


# ── the plane, through a real refresh over the embedded store ─────────────────────────


def test_the_refresh_projects_one_entry_per_repository_with_a_policy(projected):
    cache = projected(LANDING).cache
    assert cache["landing_policies"] == [
        {"iri": AEGIS + "repo_infra", "repo": "infra", "policy": AEGIS + "landing_service", "label": "service",
         "requires": ["ci-selection-complete"], "source": "repository-type",
         "repository_type": AEGIS + "repotype_service"},
        {"iri": AEGIS + "repo_widgets", "repo": "widgets", "policy": AEGIS + "landing_strict", "label": "strict",
         "requires": ["ci-selection-complete", "local-commands-pass"], "source": "repository",
         "repository_type": None},  # its own policy wins over its type's
    ]  # repo_scratch: its type names no policy, so it has none (UNKNOWN)
    assert cache["counts"]["landing_policies"] == 2


def test_no_landing_statement_is_an_empty_plane(projected):
    assert projected("").cache["landing_policies"] == []


@pytest.mark.parametrize("old,new,subject,prop", [
    ("aegis:repo_widgets aegis:landingPolicy", "aegis:widgets aegis:landingPolicy", "widgets", "aegis:landingPolicy"),
    ("aegis:repo_infra aegis:repositoryType aegis:repotype_service",
     "aegis:repo_infra aegis:repositoryType aegis:repotype_gone", "repo_infra", "aegis:repositoryType"),
    ("aegis:repotype_bare a aegis:RepositoryType .", "aegis:repotype_bare a aegis:GitRepo .", "repo_scratch",
     "aegis:repositoryType"),
    ("aegis:repotype_service a aegis:RepositoryType ; aegis:landingPolicy aegis:landing_service .",
     "aegis:repotype_service a aegis:RepositoryType ; aegis:landingPolicy aegis:landing_gone .",
     "repotype_service", "aegis:landingPolicy"),
    ('rdfs:label "strict"', 'rdfs:label " "', "landing_strict", "rdfs:label"),
    ('aegis:requires "ci-selection-complete" .', 'aegis:requires "all-green" .', "landing_service", "aegis:requires"),
])
def test_a_malformed_statement_fails_the_refresh_naming_subject_and_property(projected, old, new, subject, prop):
    assert old in LANDING
    with pytest.raises(ProjectionError) as err:
        projected(LANDING.replace(old, new))
    assert err.value.subject == AEGIS + subject and err.value.property == prop, str(err.value)


def test_a_broken_policy_on_an_unused_type_still_fails_the_refresh(projected):
    body = LANDING + "aegis:repotype_lonely a aegis:RepositoryType ; aegis:landingPolicy aegis:repo_infra .\n"
    with pytest.raises(ProjectionError) as err:
        projected(body)
    assert err.value.subject == AEGIS + "repotype_lonely" and "not an aegis:LandingPolicy" in err.value.message
