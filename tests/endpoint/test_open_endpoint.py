"""open_endpoint: from the ``[yupana.quipu]`` table to a transport, detecting the dialect."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from yupana.state import paths
from yupana.config import resolve
from yupana.endpoint import bundled_location, open_endpoint
from yupana.endpoint.base import Deadline, EndpointError
from yupana.endpoint.embedded import EmbeddedStore
from yupana.endpoint.quipu import QuipuEndpoint
from yupana.endpoint.sparql11 import Sparql11Endpoint

DATA = Path(__file__).parent / "data"
TERMS = DATA / "terms.ttl"
COUNT = "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"


def test_no_endpoint_is_an_error_unless_the_bundled_catalogue_is_allowed():
    with pytest.raises(EndpointError) as err:
        open_endpoint({"endpoint": ""})
    assert "[yupana.quipu] endpoint" in err.value.message


def test_bundled_location_is_the_checkouts_example_catalogue():
    assert bundled_location() == os.path.join(paths.source_root(), "fixtures", "catalogue")


def test_the_bundled_catalogue_opens_in_the_embedded_store():
    if not os.path.isdir(bundled_location()):
        pytest.skip("fixtures/catalogue not present yet")
    store = open_endpoint({"endpoint": ""}, allow_bundled=True)
    assert isinstance(store, EmbeddedStore)
    assert store.identity.startswith("file:" + bundled_location())
    assert int(store.select(COUNT, Deadline(10)).rows[0]["n"].value) > 0


def test_file_endpoint_opens_the_embedded_store():
    for form in (f"file:{TERMS}", f"file://{TERMS}"):
        store = open_endpoint({"endpoint": form})
        assert isinstance(store, EmbeddedStore) and store.identity == f"file:{TERMS}"


def test_a_configured_dialect_is_used_without_asking(quipu_server, oxigraph_server):
    server = quipu_server(TERMS)
    ep = open_endpoint({"endpoint": server.url, "dialect": "quipu"})
    assert isinstance(ep, QuipuEndpoint) and ep.requests == 0 and server.requests == []
    ep = open_endpoint({"endpoint": oxigraph_server(TERMS), "dialect": "sparql11"})
    assert isinstance(ep, Sparql11Endpoint) and ep.requests == 0


def test_detects_quipu_with_one_request(quipu_server):
    server = quipu_server(TERMS)
    ep = open_endpoint({"endpoint": server.url + "/"})
    assert isinstance(ep, QuipuEndpoint) and ep.dialect == "quipu"
    assert ep.identity == server.url
    assert ep.requests == 1 and server.requests[0].json == {"query": "ASK {}"}
    assert int(ep.select(COUNT, Deadline(10)).rows[0]["n"].value) > 10


def test_detects_a_sparql11_store_and_counts_both_probes(oxigraph_server):
    url = oxigraph_server(TERMS)
    ep = open_endpoint({"endpoint": url})
    assert isinstance(ep, Sparql11Endpoint) and ep.dialect == "sparql11"
    assert ep.requests == 2  # the quipu probe, then the SPARQL 1.1 probe
    assert int(ep.select(COUNT, Deadline(10)).rows[0]["n"].value) > 10


def test_an_unrecognised_url_names_both_attempts_and_the_fix(oxigraph_server):
    base = oxigraph_server(TERMS).rsplit("/query", 1)[0]
    with pytest.raises(EndpointError) as err:
        open_endpoint({"endpoint": base + "/nowhere"})
    assert err.value.kind == "unsupported"
    assert "not recognised as quipu" in err.value.message and "[yupana.quipu] dialect" in err.value.message


def test_an_unreachable_store_fails_detection_as_connect(faulty_server):
    with pytest.raises(EndpointError) as err:
        open_endpoint({"endpoint": faulty_server("refuse")})
    assert err.value.kind == "connect" and "detecting the dialect" in err.value.message


def test_credentials_in_the_url_are_refused_without_echoing_them():
    with pytest.raises(EndpointError) as err:
        open_endpoint({"endpoint": "https://reader:hunter2@store.example/sparql", "dialect": "sparql11"})
    assert err.value.kind == "auth" and "hunter2" not in str(err.value)
    assert "store.example" in err.value.message


@pytest.mark.parametrize("endpoint", ["ftp://store.example/sparql", "store.example:7878", "http://"])
def test_other_schemes_are_unsupported(endpoint):
    with pytest.raises(EndpointError) as err:
        open_endpoint({"endpoint": endpoint, "dialect": "sparql11"})
    assert err.value.kind == "unsupported"


def test_works_with_the_resolved_configuration(tmp_path, monkeypatch, quipu_server):
    """The table straight from the settings model (every key filled) opens the store."""
    server = quipu_server(TERMS)
    (tmp_path / ".bobbin").mkdir()
    (tmp_path / ".bobbin" / "config.toml").write_text(
        f'[yupana.quipu]\nendpoint = "{server.url}"\ndialect = "quipu"\nrequest_timeout_secs = 3.5\n'
        'max_rows = 500\n')
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    quipu = resolve(str(tmp_path))["config"]["quipu"]
    assert quipu["update_endpoint"] is None
    ep = open_endpoint(quipu)
    assert isinstance(ep, QuipuEndpoint) and ep.max_rows == 500
    assert ep.select(COUNT, Deadline(10)).rows
