"""Every network fault is a named EndpointError, raised within the deadline, whichever
dialect is talking. The faults come from a real misbehaving socket server."""

from __future__ import annotations

import time

import pytest

from yupana.endpoint import open_endpoint
from yupana.endpoint.base import Deadline, EndpointError

QUERY = "SELECT ?s WHERE { ?s ?p ?o }"
SLACK = 0.5  # scheduling slack on a loaded 2-core machine; the limits themselves are exact

# behaviour -> (kind, words the message must contain so an operator knows what to do)
FAULTS = {
    "refuse": ("connect", ["cannot connect", "is the store running"]),
    "never-answer": ("timeout", ["request_timeout_secs", "0 bytes received"]),
    "slow-drip": ("timeout", ["request_timeout_secs", "bytes received"]),
    "slow-headers": ("timeout", ["request_timeout_secs"]),
    "http-500": ("http", ["500", "the database is locked", "logs"]),
    "invalid-json": ("protocol", ["not valid JSON"]),
    "deep-json": ("protocol", ["deeper than any SPARQL result"]),
    "truncated": ("protocol", ["connection broke", "120 bytes received"]),
    "html": ("protocol", ["text/html"]),
    "wrong-shape": ("protocol", []),
    "redirect": ("http", ["302", "https://elsewhere.example/sparql", "final URL"]),
}


def _open(url: str, dialect: str, request_timeout: float = 0.8):
    return open_endpoint({"endpoint": url, "dialect": dialect, "connect_timeout_secs": 0.8,
                          "request_timeout_secs": request_timeout})


@pytest.mark.parametrize("dialect", ["sparql11", "quipu"])
@pytest.mark.parametrize("behaviour", list(FAULTS))
def test_fault_gives_a_named_error_within_the_request_limit(faulty_server, behaviour, dialect):
    ep = _open(faulty_server(behaviour), dialect)
    kind, words = FAULTS[behaviour]
    started = time.monotonic()
    with pytest.raises(EndpointError) as err:
        ep.select(QUERY, Deadline(5))
    elapsed = time.monotonic() - started
    assert err.value.kind == kind, str(err.value)
    for word in words:
        assert word in err.value.message
    assert elapsed < 0.8 + SLACK
    assert ep.requests == 1


@pytest.mark.parametrize("behaviour", ["never-answer", "slow-drip", "slow-headers"])
@pytest.mark.parametrize("dialect", ["sparql11", "quipu"])
def test_the_refresh_deadline_cuts_a_request_short(faulty_server, behaviour, dialect):
    """A generous per-request limit does not let a stuck or dripping server hold the refresh
    past its deadline: each socket read is clamped to the time left."""
    ep = _open(faulty_server(behaviour, drip_secs=0.05), dialect, request_timeout=30)
    started = time.monotonic()
    with pytest.raises(EndpointError) as err:
        ep.select(QUERY, Deadline(1.0))
    elapsed = time.monotonic() - started
    assert err.value.kind == "deadline", str(err.value)
    assert "refresh_deadline_secs" in err.value.message
    assert 0.9 < elapsed < 1.0 + SLACK


def test_a_spent_deadline_sends_nothing(faulty_server):
    ep = _open(faulty_server("never-answer"), "sparql11")
    deadline = Deadline(0.05)
    time.sleep(0.06)
    with pytest.raises(EndpointError) as err:
        ep.select(QUERY, deadline)
    assert err.value.kind == "deadline"
    assert ep.requests == 0


def test_a_later_request_after_a_fault_works(faulty_server, quipu_server):
    """A fault leaves no poisoned state behind: the next request on the same transport
    (here, to a healthy server after a broken one) succeeds."""
    from yupana.endpoint.quipu import QuipuEndpoint

    healthy = quipu_server()
    ep = QuipuEndpoint(healthy.url, request_timeout=0.5)
    healthy.delay_secs = 2
    with pytest.raises(EndpointError) as err:
        ep.select(QUERY, Deadline(5))
    assert err.value.kind == "timeout"
    healthy.delay_secs = 0
    assert ep.select(QUERY, Deadline(5)).rows == []


def test_detection_against_a_dead_store_fails_once_and_says_how_to_skip_it(faulty_server):
    started = time.monotonic()
    with pytest.raises(EndpointError) as err:
        open_endpoint({"endpoint": faulty_server("never-answer"), "connect_timeout_secs": 0.5,
                       "request_timeout_secs": 0.5})
    assert err.value.kind == "timeout"
    assert "[yupana.quipu] dialect" in err.value.message
    assert time.monotonic() - started < 0.5 + SLACK  # not asked twice


@pytest.mark.parametrize("dialect", ["sparql11", "quipu"])
def test_a_request_the_deadline_cuts_hangs_up_so_the_store_can_stop_answering(dialect):
    """The connection of an abandoned request is closed at once (not kept for reuse, not left
    open until the endpoint closes): the store sees the client gone and can drop the query."""
    from servers.faulty import FaultyServer

    server = FaultyServer("never-answer").start()
    try:
        ep = _open(server.url, dialect, request_timeout=30)
        with pytest.raises(EndpointError) as err:
            ep.select(QUERY, Deadline(0.5))
        assert err.value.kind == "deadline"
        for _ in range(100):  # the server thread notices the hang-up within its 50 ms poll
            if server.hung_up:
                break
            time.sleep(0.02)
        assert server.hung_up == 1 and server.connections == 1
    finally:
        server.stop()
