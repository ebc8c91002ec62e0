"""The embedded store: RDF files loaded in-process with pyoxigraph."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from conftest import QUIPU_FIXTURES
from yupana.endpoint.base import XSD, Deadline, EndpointError, Term
from yupana.endpoint.embedded import EmbeddedStore, files_of

DATA = Path(__file__).parent / "data"
TERMS = DATA / "terms.ttl"
NAMED = DATA / "named.ttl"
AEGIS = "http://aegis.gastown.local/ontology/"
PREFIXES = f"PREFIX aegis: <{AEGIS}> PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>\n"


def test_terms_keep_their_kind_datatype_and_language():
    store = EmbeddedStore.from_location(str(TERMS))
    rows = store.select(PREFIXES + "SELECT ?l WHERE { <http://example.org/terms/rule2> rdfs:label ?l }",
                        Deadline(5)).rows
    assert sorted(rows, key=lambda r: r["l"].value) == [
        {"l": Term("literal", "internal-hostnames", XSD + "string")},
        {"l": Term("literal", "interne Hostnamen", None, "de")}]
    typed = store.select(PREFIXES + "SELECT ?n WHERE { ?r aegis:latencyBudgetMs ?n }", Deadline(5)).rows
    assert typed == [{"n": Term("literal", "5", XSD + "integer")}]


def test_unbound_optionals_are_absent():
    store = EmbeddedStore.from_location(str(TERMS))
    rows = store.select(PREFIXES + "SELECT ?r ?c WHERE { ?r aegis:regex ?x OPTIONAL { ?r rdfs:comment ?c } }",
                        Deadline(5)).rows
    assert sorted(len(r) for r in rows) == [1, 2]


def test_identity_lists_every_file_loaded(tmp_path):
    nested = tmp_path / "catalogue" / "text"
    nested.mkdir(parents=True)
    (nested / "rules.ttl").write_text(TERMS.read_text())
    (tmp_path / "catalogue" / "README.md").write_text("not RDF: skipped")
    store = EmbeddedStore.from_location(f"{tmp_path / 'catalogue'},{NAMED}")
    assert store.identity == f"file:{nested / 'rules.ttl'},{NAMED}"
    assert store.dialect == "embedded"
    assert len(store.select("SELECT * WHERE { ?s ?p ?o }", Deadline(5)).rows) == len(store.store)


def test_files_of_walks_directories_in_sorted_order(tmp_path):
    for name in ("b.ttl", "a.nt", "c.txt"):
        (tmp_path / name).write_text("")
    assert files_of(str(tmp_path)) == [str(tmp_path / "a.nt"), str(tmp_path / "b.ttl")]


def test_a_missing_file_is_a_connect_error_naming_it(tmp_path):
    with pytest.raises(EndpointError) as err:
        EmbeddedStore.from_location(str(tmp_path / "absent.ttl"))
    assert err.value.kind == "connect" and "absent.ttl" in err.value.message


def test_broken_turtle_names_the_file(tmp_path):
    bad = tmp_path / "bad.ttl"
    bad.write_text("<urn:a> <urn:b> .\n")
    with pytest.raises(EndpointError) as err:
        EmbeddedStore.from_location(str(bad))
    assert err.value.kind == "protocol" and str(bad) in err.value.message


def test_an_unknown_file_type_says_which_are_known(tmp_path):
    odd = tmp_path / "rules.json"
    odd.write_text("{}")
    with pytest.raises(EndpointError) as err:
        EmbeddedStore.from_location(str(odd))
    assert ".ttl" in err.value.message


def test_an_empty_location_is_an_error(tmp_path):
    with pytest.raises(EndpointError) as err:
        EmbeddedStore.from_location(str(tmp_path))
    assert "no RDF files" in err.value.message


def test_a_malformed_query_is_a_query_error():
    with pytest.raises(EndpointError) as err:
        EmbeddedStore.from_location(str(TERMS)).select("SELECT ?s WHERE { ?s ?p }", Deadline(5))
    assert err.value.kind == "query"


def test_a_non_select_query_is_refused():
    with pytest.raises(EndpointError) as err:
        EmbeddedStore.from_location(str(TERMS)).select("ASK { ?s ?p ?o }", Deadline(5))
    assert err.value.kind == "protocol"


def test_a_spent_deadline_stops_the_query():
    store = EmbeddedStore.from_location(str(TERMS))
    deadline = Deadline(0.01)
    time.sleep(0.02)
    with pytest.raises(EndpointError) as err:
        store.select("SELECT * WHERE { ?s ?p ?o }", deadline)
    assert err.value.kind == "deadline"


def test_quipu_reference_data_loads_and_type_patterns_are_asserted_only():
    """quipu's shipped ontology, shapes and catalogues load as data; like quipu, the store
    does no subclass inference, so only the explicit path reaches the policies."""
    if not QUIPU_FIXTURES.is_dir():
        pytest.skip(f"quipu reference data absent ({QUIPU_FIXTURES})")
    store = EmbeddedStore.from_location(str(QUIPU_FIXTURES))
    policies = store.select(PREFIXES + "SELECT ?p ?label WHERE { ?p a aegis:Policy ; rdfs:label ?label }",
                            Deadline(10)).rows
    assert {r["label"].value for r in policies} >= {"no-ticket-in-comment", "todo-needs-ticket"}
    plain = store.select(PREFIXES + "SELECT ?d WHERE { ?d a aegis:Directive }", Deadline(10)).rows
    path = store.select(PREFIXES + "SELECT ?d WHERE { ?d a/rdfs:subClassOf* aegis:Directive }", Deadline(10)).rows
    policy_iris = {r["p"] for r in policies}
    assert policy_iris <= {r["d"] for r in path}
    assert not policy_iris & {r["d"] for r in plain}


def test_requests_count_the_queries_answered():
    store = EmbeddedStore.from_location(str(TERMS))
    assert store.requests == 0
    store.select("SELECT * WHERE { ?s ?p ?o }", Deadline(5))
    store.select("SELECT * WHERE { ?s ?p ?o } LIMIT 1", Deadline(5))
    assert store.requests == 2
