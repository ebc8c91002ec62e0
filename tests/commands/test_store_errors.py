"""Issue 14 §4 through the real CLI: a store error says which failure it is (refused, DNS, TLS,
timeout, HTTP, the wrong URL) at once, quotes the endpoint the operator configured, and says
what to try."""

from __future__ import annotations

import shutil
import subprocess
import sys
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


@pytest.mark.parametrize("server", ["never-answer"], indirect=True)
def test_a_store_that_never_answers_is_a_timeout_naming_the_setting_to_raise(env, server):
    configured = f"{server.url}/sparql"
    env.update(YUPANA_QUIPU__ENDPOINT=configured, YUPANA_QUIPU__DIALECT="sparql11",
               YUPANA_QUIPU__REQUEST_TIMEOUT_SECS="1")
    err = run_yupana(["project"], env).stderr.decode()
    assert "refresh FAILED (timeout)" in err and configured in err, err
    assert "within 1s" in err and "raise [yupana.quipu] request_timeout_secs" in err
    assert "connection refused" not in err


@pytest.mark.parametrize("server", ["http-500"], indirect=True)
def test_an_http_error_quotes_the_status_and_the_stores_words(env, server):
    configured = f"{server.url}/sparql"
    env.update(YUPANA_QUIPU__ENDPOINT=configured, YUPANA_QUIPU__DIALECT="sparql11")
    err = run_yupana(["project"], env).stderr.decode()
    assert "refresh FAILED (http)" in err and f"{configured} failed a SPARQL query (HTTP 500)" in err, err
    assert "the database is locked" in err and "check the store's logs" in err


def test_a_host_name_that_does_not_resolve_is_named_as_dns(env):
    """In a private network namespace (no resolver reachable, so nothing leaves the machine)."""
    unshare = shutil.which("unshare")
    if not unshare or subprocess.run([unshare, "-rn", "true"], capture_output=True).returncode != 0:
        pytest.skip("unshare -rn (a user and network namespace) is not allowed here")
    configured = "http://store.yupana-test.invalid:3030"
    env["YUPANA_QUIPU__ENDPOINT"] = configured
    done = subprocess.run([unshare, "-rn", sys.executable, "-m", "yupana", "project"], env=env, capture_output=True,
                          timeout=60)
    err = done.stderr.decode()
    assert done.returncode == 1
    assert "refresh FAILED (connect)" in err and f"[yupana.quipu] endpoint = {configured}:" in err, err
    assert "the host name does not resolve" in err and "check the spelling of the host" in err
    assert "connection refused" not in err and "within" not in err.split("\n")[0]
