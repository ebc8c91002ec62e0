"""quipu's native dialect against the quipu-dialect test server (real HTTP over pyoxigraph)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import QUIPU_FIXTURES
from yupana.endpoint.base import XSD, Deadline, EndpointError, Term
from yupana.endpoint.embedded import EmbeddedStore
from yupana.endpoint.quipu import QuipuEndpoint, parse_inference_header

DATA = Path(__file__).parent / "data"
TERMS = DATA / "terms.ttl"
NAMED = DATA / "named.ttl"
AEGIS = "http://aegis.gastown.local/ontology/"
EX = "http://example.org/terms/"
PREFIXES = f"PREFIX aegis: <{AEGIS}> PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#> PREFIX ex: <{EX}>\n"


def quipu_files() -> list[Path]:
    if not QUIPU_FIXTURES.is_dir():
        pytest.skip(f"quipu reference data absent ({QUIPU_FIXTURES})")
    return sorted(QUIPU_FIXTURES.rglob("*.ttl"))


def test_select_is_a_json_post_to_query_read_in_the_w3c_shape(quipu_server):
    server = quipu_server(TERMS)
    ep = QuipuEndpoint(server.url + "/")
    query = PREFIXES + "SELECT ?o WHERE { ex:rule1 rdfs:comment ?o }"
    result = ep.select(query, Deadline(10))
    assert result.rows == [{"o": Term("literal", "Keine Ticketnummern im Code", None, "de")}]
    sent = server.requests[-1]
    assert (sent.method, sent.path) == ("POST", "/query")
    assert sent.json == {"query": query}
    assert sent.headers["content-type"] == "application/json"
    assert sent.headers["accept"] == "application/sparql-results+json"
    assert ep.requests == 1 and len(server.requests) == 1


def test_iris_and_strings_stay_distinct_as_in_the_embedded_store(quipu_server):
    """The bespoke shape cannot tell an IRI from a string; the transport never reads
    SELECT rows from it, so terms decode exactly as the embedded store gives them."""
    server = quipu_server(TERMS)
    query = PREFIXES + "SELECT ?s ?p ?o WHERE { ?s ?p ?o FILTER(!isBlank(?s) && !isBlank(?o)) } ORDER BY ?s ?p ?o"
    served = QuipuEndpoint(server.url).select(query, Deadline(10))
    assert served.rows == EmbeddedStore.from_location(str(TERMS)).select(query, Deadline(10)).rows
    kinds = {(r["p"].value, r["o"].kind) for r in served.rows}
    assert ("http://www.w3.org/1999/02/22-rdf-syntax-ns#type", "uri") in kinds
    assert (AEGIS + "enforcementTier", "literal") in kinds


def test_default_graph_is_sent_as_quipus_graph_field(quipu_server):
    graph = "http://example.org/graphs/catalogue"
    server = quipu_server(TERMS, graphs={graph: [NAMED]})
    rows = QuipuEndpoint(server.url, graph=graph).select(
        "SELECT ?s WHERE { ?s <http://www.w3.org/2000/01/rdf-schema#label> ?l }", Deadline(10)).rows
    assert rows == [{"s": Term("uri", EX + "only-in-named-graph")}]
    assert server.requests[-1].json["graph"] == graph


def test_withheld_subclass_inference_becomes_a_notice(quipu_server):
    server = quipu_server(TERMS)
    ep = QuipuEndpoint(server.url)
    plain = ep.select(PREFIXES + "SELECT ?s WHERE { ?s a aegis:TextRule }", Deadline(10))
    assert [r["s"].value for r in plain.rows] == [EX + "rule1"]  # asserted-only
    assert len(plain.notices) == 1
    assert f"<{AEGIS}TextRule>" in plain.notices[0] and "rdfs:subClassOf*" in plain.notices[0]
    expanded = ep.select(PREFIXES + "SELECT ?s WHERE { ?s a/rdfs:subClassOf* aegis:TextRule } ORDER BY ?s",
                         Deadline(10))
    assert [r["s"].value for r in expanded.rows] == [EX + "rule1", EX + "rule2"]
    assert expanded.notices == []


def test_real_quipu_catalogue_withholds_directive_subclasses(quipu_server):
    """quipu's shipped data: Policy ⊑ Directive is asserted, so a plain Directive pattern
    misses the policies and says so; the explicit path finds them."""
    server = quipu_server(*quipu_files())
    ep = QuipuEndpoint(server.url)
    plain = ep.select(PREFIXES + "SELECT ?d WHERE { ?d a aegis:Directive }", Deadline(10))
    expanded = ep.select(PREFIXES + "SELECT ?d WHERE { ?d a/rdfs:subClassOf* aegis:Directive }", Deadline(10))
    policies = {r["d"].value for r in ep.select(PREFIXES + "SELECT ?d WHERE { ?d a aegis:Policy }", Deadline(10)).rows}
    assert AEGIS + "policy_no_ticket_in_comment" in policies
    assert policies <= {r["d"].value for r in expanded.rows}
    assert not policies & {r["d"].value for r in plain.rows}
    assert any(f"<{AEGIS}Directive>" in n for n in plain.notices)


def test_bespoke_inference_field_is_what_the_server_sends_without_w3c(quipu_server):
    """The server half of the marker: the bespoke shape carries an `inference` object."""
    import httpx

    server = quipu_server(TERMS)
    doc = httpx.post(server.url + "/query", json={"query": PREFIXES + "SELECT ?s WHERE { ?s a aegis:TextRule }"}).json()
    assert doc["rows"] == [{"s": EX + "rule1"}] and doc["truncated"] is False
    assert doc["inference"]["withheldTypes"] == [{"type": AEGIS + "TextRule",
                                                 "subclasses": [AEGIS + "InternalIdentifierPattern"]}]


def test_parse_inference_header_accepts_bracketed_and_bare_iris():
    assert parse_inference_header("withheld: <urn:a>, <urn:b>") == ["urn:a", "urn:b"]
    assert parse_inference_header("withheld: http://x/A") == ["http://x/A"]
    assert parse_inference_header("") == []


# -- truncation --------------------------------------------------------------------------

ALL_LABELS = PREFIXES + "SELECT ?s ?l WHERE { ?s rdfs:label ?l }"  # 3 rows in terms.ttl


def test_rows_at_the_cap_that_quipu_truncated_fail_the_read(quipu_server):
    server = quipu_server(TERMS, max_rows=2)
    ep = QuipuEndpoint(server.url, max_rows=2)
    with pytest.raises(EndpointError) as err:
        ep.select(ALL_LABELS, Deadline(10))
    assert err.value.kind == "truncated"
    assert "max_sparql_rows" in err.value.message and "batch_size" in err.value.message
    # The W3C answer was silent; the bespoke re-ask said so.
    assert [r.headers["accept"] for r in server.requests] == ["application/sparql-results+json", "application/json"]
    assert ep.requests == 2


def test_rows_exactly_at_the_cap_but_complete_are_accepted(quipu_server):
    server = quipu_server(TERMS, max_rows=3)
    result = QuipuEndpoint(server.url, max_rows=3).select(ALL_LABELS, Deadline(10))
    assert len(result.rows) == 3
    assert len(server.requests) == 2  # checked, then accepted


def test_answers_below_the_cap_cost_one_request(quipu_server):
    server = quipu_server(TERMS, max_rows=3)
    QuipuEndpoint(server.url, max_rows=3).select(PREFIXES + "SELECT ?s WHERE { ?s aegis:regex ?r }", Deadline(10))
    assert len(server.requests) == 1


# -- quipu's errors ----------------------------------------------------------------------


@pytest.mark.parametrize("status, kind, words", [
    (400, "query", ["400", "unknown prefix"]),
    (403, "auth", ["403", "PolicyDenied"]),
    (408, "timeout", ["408", "query_timeout_ms"]),
    (422, "query", ["422", "max_join_rows", "batch_size"]),
    (503, "http", ["503", "retry later"]),
])
def test_quipu_error_bodies_become_named_errors(quipu_server, status, kind, words):
    server = quipu_server(TERMS)
    server.fail_next(status, "unknown prefix" if status == 400 else "server said no")
    with pytest.raises(EndpointError) as err:
        QuipuEndpoint(server.url).select(ALL_LABELS, Deadline(10))
    assert err.value.kind == kind
    for word in words:
        assert word in err.value.message


def test_a_real_parse_error_carries_quipus_message(quipu_server):
    server = quipu_server(TERMS)
    with pytest.raises(EndpointError) as err:
        QuipuEndpoint(server.url).select("SELECT ?s WHERE { ?s ex:nope ?o }", Deadline(10))
    assert err.value.kind == "query" and "SPARQL parse error" in err.value.message


def test_a_plain_text_extractor_error_is_shown(quipu_server):
    server = quipu_server(TERMS)
    server.fail_next(415, "Expected request with `Content-Type: application/json`", plain=True)
    with pytest.raises(EndpointError) as err:
        QuipuEndpoint(server.url).select(ALL_LABELS, Deadline(10))
    assert err.value.kind == "protocol" and "Content-Type" in err.value.message


def test_the_query_url_instead_of_the_base_url_is_explained(quipu_server):
    server = quipu_server(TERMS)
    with pytest.raises(EndpointError) as err:
        QuipuEndpoint(server.url + "/query").select(ALL_LABELS, Deadline(10))
    assert err.value.kind == "http" and "without /query" in err.value.message


def test_ask(quipu_server):
    ep = QuipuEndpoint(quipu_server(TERMS).url)
    assert ep.ask(PREFIXES + "ASK { ex:rule2 a aegis:InternalIdentifierPattern }", Deadline(10)) is True
    assert ep.ask(PREFIXES + "ASK { ex:rule2 a aegis:TextRule }", Deadline(10)) is False


# -- /policy/check -----------------------------------------------------------------------

EXPOSURE = AEGIS + "policy_no-internal-ids-in-public-repos"


def test_policy_check_returns_quipus_reply(quipu_server):
    server = quipu_server(TERMS)
    server.policy_outcomes[AEGIS + "repo_yupana"] = "satisfied"
    reply = QuipuEndpoint(server.url).policy_check(EXPOSURE, AEGIS + "repo_yupana", Deadline(10))
    assert reply["outcome"] == "satisfied" and reply["target_ref"] == AEGIS + "repo_yupana"
    assert reply["evidence_hash"].startswith("fnv1a:")
    assert server.requests[-1].path == "/policy/check"
    assert server.requests[-1].json == {"policy": EXPOSURE, "target": AEGIS + "repo_yupana"}


def test_policy_check_evaluates_an_ask_claim(quipu_server, tmp_path):
    policy = tmp_path / "exposure.ttl"
    policy.write_text(f"""@prefix aegis: <{AEGIS}> .
<{EXPOSURE}> a aegis:Policy ; aegis:claim "ASK {{ $target <{AEGIS}visibility> \\"public\\" }}" .
aegis:repo_open aegis:visibility "public" .
aegis:repo_closed aegis:visibility "internal" .
""")
    ep = QuipuEndpoint(quipu_server(policy).url)
    assert ep.policy_check(EXPOSURE, AEGIS + "repo_open", Deadline(10))["outcome"] == "satisfied"
    assert ep.policy_check(EXPOSURE, AEGIS + "repo_closed", Deadline(10))["outcome"] == "unsatisfied"


def test_policy_check_on_a_policy_without_claim_is_a_query_error(quipu_server):
    server = quipu_server(TERMS)
    with pytest.raises(EndpointError) as err:
        QuipuEndpoint(server.url).policy_check(EXPOSURE, AEGIS + "repo_x", Deadline(10))
    assert err.value.kind == "query" and "no aegis:claim" in err.value.message


# -- /knot writes ------------------------------------------------------------------------

OBSERVATION = f'@prefix aegis: <{AEGIS}> . <{EX}obs1> a aegis:CommandDiskImpactObservation ; aegis:bytes 42 .'


def test_write_turtle_with_the_right_token_inserts(quipu_server):
    server = quipu_server(TERMS, auth_token="tok-123")
    ep = QuipuEndpoint(server.url)
    reply = ep.write_turtle(OBSERVATION, "tok-123", Deadline(10))
    assert reply["triples"] == 2
    assert server.requests[-1].headers["authorization"] == "Bearer tok-123"
    rows = ep.select(f"SELECT ?n WHERE {{ <{EX}obs1> <{AEGIS}bytes> ?n }}", Deadline(10)).rows
    assert rows == [{"n": Term("literal", "42", XSD + "integer")}]


@pytest.mark.parametrize("token", ["wrong", None])
def test_write_turtle_without_a_valid_token_is_an_auth_error(quipu_server, token):
    server = quipu_server(TERMS, auth_token="tok-123")
    with pytest.raises(EndpointError) as err:
        QuipuEndpoint(server.url).write_turtle(OBSERVATION, token, Deadline(10))
    assert err.value.kind == "auth" and "401" in err.value.message and "QUIPU_AUTH_TOKEN" in err.value.message
    assert "tok-123" not in err.value.message
    assert len(server.store) == len(EmbeddedStore.from_location(str(TERMS)).store)  # nothing inserted


def test_write_turtle_to_a_read_only_server_is_an_auth_error(quipu_server):
    server = quipu_server(TERMS, auth_token="tok-123", read_only=True)
    with pytest.raises(EndpointError) as err:
        QuipuEndpoint(server.url).write_turtle(OBSERVATION, "tok-123", Deadline(10))
    assert err.value.kind == "auth" and "read-only" in err.value.message
