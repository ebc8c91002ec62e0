"""The store boundary's exception tree: each fault arrives as the branch a caller can catch
(Refused, NotFound, Redirected, BrokenConnection, NotAnEndpoint …), its ``kind`` still the
label records carry, and every transport declares what it can do."""

from __future__ import annotations

import pytest

from yupana import endpoint as ep_mod
from yupana.endpoint import (ASK, POLICY_CHECK, SELECT, UPDATE, WRITE, BadResponse, BrokenConnection, Deadline,
                             EndpointError, HTTPStatus, NotAnEndpoint, NotFound, Redirected, Refused, StoreTimeout,
                             TooLarge, UnsupportedError, Unreachable, WrongURL, open_endpoint)

QUERY = "SELECT ?s WHERE { ?s ?p ?o }"

# behaviour -> (the class raised, the branch it belongs to, kind)
FAULTS = {
    "refuse": (Refused, Unreachable, "connect"),
    "never-answer": (StoreTimeout, StoreTimeout, "timeout"),
    "http-500": (HTTPStatus, HTTPStatus, "http"),
    "truncated": (BrokenConnection, BadResponse, "protocol"),
    "redirect": (Redirected, WrongURL, "http"),
}


@pytest.mark.parametrize("dialect", ["sparql11", "quipu"])
@pytest.mark.parametrize("behaviour", list(FAULTS))
def test_a_fault_is_raised_as_its_branch_of_the_tree(faulty_server, behaviour, dialect):
    ep = open_endpoint({"endpoint": faulty_server(behaviour), "dialect": dialect, "connect_timeout_secs": 0.8,
                        "request_timeout_secs": 0.8})
    cls, branch, kind = FAULTS[behaviour]
    with pytest.raises(branch) as err:
        ep.select(QUERY, Deadline(5))
    assert type(err.value) is cls and err.value.kind == kind
    assert str(err.value) == f"{kind}: {err.value.message}"


def test_a_query_url_that_is_not_there_is_a_wrong_url(oxigraph_server):
    base = oxigraph_server().rsplit("/query", 1)[0]
    ep = open_endpoint({"endpoint": base + "/nowhere", "dialect": "sparql11"})
    with pytest.raises(WrongURL) as err:
        ep.select(QUERY, Deadline(5))
    assert isinstance(err.value, NotFound) and err.value.kind == "http" and "404" in err.value.message


@pytest.mark.parametrize("endpoint", ["ftp://store.example/sparql", "http://"])
def test_a_url_that_is_no_endpoint_is_a_wrong_url_of_kind_unsupported(endpoint):
    with pytest.raises(WrongURL) as err:
        open_endpoint({"endpoint": endpoint, "dialect": "sparql11"})
    assert isinstance(err.value, NotAnEndpoint) and isinstance(err.value, UnsupportedError)
    assert err.value.kind == "unsupported"


def test_the_labels_are_the_nine_they_were():
    assert sorted(ep_mod.KINDS) == sorted(["connect", "timeout", "deadline", "http", "protocol", "truncated", "query",
                                           "auth", "unsupported"])
    assert issubclass(TooLarge, BadResponse) and TooLarge.kind == "protocol"
    assert all(issubclass(cls, EndpointError) for cls in ep_mod.KINDS.values())


def test_each_transport_declares_what_it_can_do(quipu_server, oxigraph_server):
    quipu = open_endpoint({"endpoint": quipu_server().url, "dialect": "quipu"})
    sparql = open_endpoint({"endpoint": oxigraph_server(), "dialect": "sparql11"})
    embedded = open_endpoint({}, allow_bundled=True)
    assert [quipu.can(c) for c in (SELECT, ASK, UPDATE, WRITE, POLICY_CHECK)] == [True, True, False, True, True]
    assert [sparql.can(c) for c in (SELECT, ASK, UPDATE, WRITE, POLICY_CHECK)] == [True, True, True, True, False]
    assert [embedded.can(c) for c in (SELECT, ASK, UPDATE, WRITE, POLICY_CHECK)] == [True, False, False, False, False]
    with pytest.raises(UnsupportedError):
        embedded.update("INSERT DATA { <urn:a> <urn:b> <urn:c> }", Deadline(1))
    with pytest.raises(ValueError):
        quipu.can("delete")
