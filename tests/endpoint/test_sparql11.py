"""The SPARQL 1.1 Protocol transport against the real Oxigraph server (and a credentialed
SPARQL server for Basic / Bearer)."""

from __future__ import annotations

from pathlib import Path

import pytest

from servers import oxigraph
from yupana.endpoint import open_endpoint
from yupana.endpoint.base import XSD, Deadline, EndpointError, Term
from yupana.endpoint.embedded import EmbeddedStore
from yupana.endpoint.sparql11 import Sparql11Endpoint

DATA = Path(__file__).parent / "data"
TERMS = DATA / "terms.ttl"
NAMED = DATA / "named.ttl"
GRAPH = "http://example.org/graphs/catalogue"
EX = "http://example.org/terms/"
AEGIS = "http://aegis.gastown.local/ontology/"
PREFIXES = f"PREFIX aegis: <{AEGIS}> PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#> PREFIX ex: <{EX}>\n"

RULE1 = PREFIXES + """SELECT ?p ?o WHERE { ex:rule1 ?p ?o }"""


@pytest.fixture
def endpoint(oxigraph_server):
    ep = Sparql11Endpoint(oxigraph_server(TERMS), request_timeout=10)
    yield ep
    ep.close()


def test_every_term_kind_arrives_typed(endpoint):
    rows = endpoint.select(RULE1, Deadline(10)).rows
    by_predicate = {r["p"].value: r["o"] for r in rows}
    assert by_predicate[AEGIS + "enforcementTier"] == Term("literal", "block", XSD + "string")
    assert by_predicate[AEGIS + "regex"].value == r"\b[A-Z]+-[0-9]+\b"
    assert by_predicate["http://www.w3.org/2000/01/rdf-schema#comment"] == Term(
        "literal", "Keine Ticketnummern im Code", None, "de")
    assert by_predicate[AEGIS + "latencyBudgetMs"] == Term("literal", "5", XSD + "integer")
    assert by_predicate[AEGIS + "threshold"] == Term("literal", "0.25", XSD + "decimal")
    assert by_predicate[AEGIS + "inheritedByDelegates"] == Term("literal", "true", XSD + "boolean")
    assert by_predicate[AEGIS + "validFrom"].datatype == XSD + "date"
    assert by_predicate[AEGIS + "selector"].kind == "bnode"
    assert by_predicate["http://www.w3.org/1999/02/22-rdf-syntax-ns#type"] == Term("uri", AEGIS + "TextRule")


def test_the_server_and_the_embedded_store_agree_on_every_row(endpoint):
    """The same file through the Oxigraph server and the embedded store decodes the same,
    so a catalogue projects identically whichever way it is served."""
    query = PREFIXES + "SELECT ?s ?p ?o WHERE { ?s ?p ?o FILTER(!isBlank(?o) && !isBlank(?s)) } ORDER BY ?s ?p ?o"
    served = endpoint.select(query, Deadline(10))
    embedded = EmbeddedStore.from_location(str(TERMS)).select(query, Deadline(10))
    assert served.variables == embedded.variables == ["s", "p", "o"]
    assert served.rows == embedded.rows
    assert len(served.rows) > 15


def test_unbound_variables_are_absent_from_the_row(endpoint):
    query = PREFIXES + "SELECT ?s ?comment WHERE { ?s aegis:enforcementTier ?t OPTIONAL { ?s rdfs:comment ?comment } } ORDER BY ?s"
    result = endpoint.select(query, Deadline(10))
    assert result.variables == ["s", "comment"]
    assert [sorted(r) for r in result.rows] == [["comment", "s"], ["s"]]


def test_ask_answers_true_and_false(endpoint):
    assert endpoint.ask(PREFIXES + "ASK { ex:rule1 a aegis:TextRule }", Deadline(10)) is True
    assert endpoint.ask(PREFIXES + "ASK { ex:rule2 a aegis:TextRule }", Deadline(10)) is False  # asserted-only


def test_each_select_is_one_form_encoded_post(endpoint):
    before = endpoint.requests
    endpoint.select(RULE1, Deadline(10))
    endpoint.select(RULE1, Deadline(10))
    assert endpoint.requests == before + 2


def test_a_long_values_batch_goes_through(endpoint):
    """Long VALUES blocks are why queries are POSTed: a 100 KB query must work."""
    values = " ".join(f"<{EX}item-{i:05d}>" for i in range(3000)) + f" <{EX}rule1>"
    query = PREFIXES + f"SELECT ?s ?label WHERE {{ VALUES ?s {{ {values} }} ?s rdfs:label ?label }}"
    assert len(query) > 100_000
    rows = endpoint.select(query, Deadline(10)).rows
    assert rows == [{"s": Term("uri", EX + "rule1"), "label": Term("literal", "no-ticket-ids", XSD + "string")}]


def test_a_runaway_answer_is_refused_not_buffered_forever(endpoint, monkeypatch):
    monkeypatch.setattr("yupana.endpoint.http.MAX_BODY_BYTES", 2000)
    with pytest.raises(EndpointError) as err:
        endpoint.select(PREFIXES + "SELECT * WHERE { ?s ?p ?o }", Deadline(10))
    assert err.value.kind == "protocol" and "batch_size" in err.value.message


def test_default_graph_uri_scopes_the_dataset(oxigraph_server):
    url = oxigraph_server(TERMS, graphs={GRAPH: [NAMED]})
    query = "SELECT ?s WHERE { ?s <http://www.w3.org/2000/01/rdf-schema#label> ?l }"
    plain = Sparql11Endpoint(url)
    scoped = Sparql11Endpoint(url, default_graph=GRAPH)
    plain_subjects = {r["s"].value for r in plain.select(query, Deadline(10)).rows}
    scoped_subjects = {r["s"].value for r in scoped.select(query, Deadline(10)).rows}
    assert scoped_subjects == {EX + "only-in-named-graph"}
    assert EX + "rule1" in plain_subjects and EX + "only-in-named-graph" not in plain_subjects


def test_update_inserts_through_the_update_url(oxigraph_server):
    url = oxigraph_server(TERMS, fresh=True)
    ep = Sparql11Endpoint(url, update_url=oxigraph.update_url(url))
    ep.update(PREFIXES + 'INSERT DATA { ex:obs1 a aegis:CommandDiskImpactObservation ; rdfs:label "du -sh" }',
              Deadline(10))
    rows = ep.select(PREFIXES + "SELECT ?l WHERE { ex:obs1 rdfs:label ?l }", Deadline(10)).rows
    assert rows == [{"l": Term("literal", "du -sh", XSD + "string")}]


def test_update_sent_to_a_query_only_url_is_a_named_error(oxigraph_server):
    ep = Sparql11Endpoint(oxigraph_server(TERMS))  # update_url defaults to the query URL
    with pytest.raises(EndpointError) as err:
        ep.update(PREFIXES + "INSERT DATA { ex:a ex:b ex:c }", Deadline(10))
    assert err.value.kind in ("query", "unsupported")
    assert "update" in err.value.message


def test_a_malformed_query_says_what_the_store_said(endpoint):
    with pytest.raises(EndpointError) as err:
        endpoint.select("SELECT ?s WHERE { ?s ?p }", Deadline(10))
    assert err.value.kind == "query"
    assert "400" in err.value.message and endpoint.url in err.value.message


def test_an_ask_answer_is_not_taken_for_select_results(endpoint):
    with pytest.raises(EndpointError) as err:
        endpoint.select("ASK { ?s ?p ?o }", Deadline(10))
    assert err.value.kind == "protocol" and "boolean" in err.value.message


def test_the_base_url_instead_of_the_query_url_is_explained(oxigraph_server):
    base = oxigraph_server(TERMS).rsplit("/query", 1)[0]
    with pytest.raises(EndpointError) as err:
        Sparql11Endpoint(base + "/nothing-here").select(RULE1, Deadline(10))
    assert err.value.kind == "http" and "404" in err.value.message and "/query" in err.value.message


def test_identity_is_the_url_without_trailing_slash(oxigraph_server):
    url = oxigraph_server(TERMS)
    assert Sparql11Endpoint(url + "/").identity == url


# -- credentials ------------------------------------------------------------------------


def _quipu_table(url: str, **extra) -> dict:
    return {"endpoint": url, "dialect": "sparql11", **extra}


def test_basic_credentials_from_the_environment(guarded_server, monkeypatch):
    server = guarded_server(TERMS, basic=("reader", "s3cret-basic"))
    monkeypatch.setenv("YUPANA_SPARQL_SECRET", "s3cret-basic")
    ep = open_endpoint(_quipu_table(server.url, auth="basic", auth_user="reader"))
    assert len(ep.select(RULE1, Deadline(10)).rows) > 5
    assert server.requests[-1]["headers"]["authorization"].startswith("Basic ")
    assert server.requests[-1]["form"]["query"] == RULE1


def test_bearer_credentials_from_a_file_and_a_custom_variable(guarded_server, tmp_path, monkeypatch):
    server = guarded_server(TERMS, bearer="tok-from-file")
    secret = tmp_path / "sparql.token"
    secret.write_text("tok-from-file\n")
    monkeypatch.delenv("MY_STORE_TOKEN", raising=False)
    ep = open_endpoint(_quipu_table(server.url, auth="bearer", credentials_env="MY_STORE_TOKEN",
                                    credentials_file=str(secret)))
    assert ep.ask(PREFIXES + "ASK { ex:rule1 ?p ?o }", Deadline(10)) is True
    assert server.requests[-1]["headers"]["authorization"] == "Bearer tok-from-file"


def test_refused_credentials_are_an_auth_error_that_never_shows_the_secret(guarded_server, monkeypatch):
    server = guarded_server(TERMS, basic=("reader", "right-password"))
    monkeypatch.setenv("YUPANA_SPARQL_SECRET", "wrong-password-xyz")
    ep = open_endpoint(_quipu_table(server.url, auth="basic", auth_user="reader"))
    with pytest.raises(EndpointError) as err:
        ep.select(RULE1, Deadline(10))
    assert err.value.kind == "auth" and "401" in err.value.message
    assert "wrong-password-xyz" not in str(err.value)
    assert "wrong-password-xyz" not in ep.identity and "wrong-password-xyz" not in repr(ep.__dict__)


def test_no_credentials_against_a_guarded_store_is_an_auth_error(guarded_server):
    server = guarded_server(TERMS, bearer="needed")
    with pytest.raises(EndpointError) as err:
        open_endpoint(_quipu_table(server.url)).select(RULE1, Deadline(10))
    assert err.value.kind == "auth"
    assert "authorization" not in server.requests[-1]["headers"]


def test_configured_auth_without_a_secret_is_refused_before_any_request(guarded_server, monkeypatch):
    server = guarded_server(TERMS, bearer="needed")
    monkeypatch.delenv("YUPANA_SPARQL_SECRET", raising=False)
    with pytest.raises(EndpointError) as err:
        open_endpoint(_quipu_table(server.url, auth="bearer"))
    assert err.value.kind == "auth" and "$YUPANA_SPARQL_SECRET" in err.value.message
    assert server.requests == []
