"""Issue 14 §4 through the real CLI: a store error says which failure it is (refused, TLS) at
once, quotes the endpoint the operator configured, and says what to try."""

from __future__ import annotations

import time

import pytest
from conftest import run_yupana
from servers.faulty import FaultyServer


@pytest.fixture
def server(request):
    srv = FaultyServer(request.param).start()
    yield srv
    srv.stop()


@pytest.mark.parametrize("server", ["refuse"], indirect=True)
def test_a_refused_connection_is_named_at_once_with_the_configured_endpoint(env, server):
    configured = f"{server.url}/query"
    env["YUPANA_QUIPU__ENDPOINT"] = configured
    started = time.monotonic()
    done = run_yupana(["project"], env)
    assert done.returncode != 0
    err = done.stderr.decode()
    assert "connection refused" in err and "nothing listens" in err, err
    assert f"[yupana.quipu] endpoint = {configured}:" in err  # what the operator wrote, not only the probe URL
    assert "within" not in err.split("\n")[0]  # no "no connection within 2s" for an instant refusal
    assert time.monotonic() - started < 30


@pytest.mark.parametrize("server", ["garbage"], indirect=True)
def test_https_at_a_port_that_speaks_something_else_is_a_tls_failure(env, server):
    configured = f"https://127.0.0.1:{server.port}/query"
    env["YUPANA_QUIPU__ENDPOINT"] = configured
    done = run_yupana(["project"], env)
    assert done.returncode != 0
    err = done.stderr.decode()
    assert "TLS handshake failed" in err and "plain http" in err, err
    assert f"[yupana.quipu] endpoint = {configured}:" in err


def test_the_update_url_of_a_real_oxigraph_is_named_as_the_wrong_url(env, tmp_path):
    from servers.oxigraph import OxigraphServer, binary

    if binary() is None:
        pytest.skip("no oxigraph binary (the oxigraph PyPI package)")
    store = OxigraphServer(str(tmp_path / "ox")).start()
    try:
        env["YUPANA_QUIPU__ENDPOINT"] = store.update_url
        done = run_yupana(["project"], env)
    finally:
        store.stop()
    err = done.stderr.decode()
    assert done.returncode != 0
    assert f"[yupana.quipu] endpoint = {store.update_url} is the store's update URL, not its query URL" in err, err
    assert "use the query URL" in err
