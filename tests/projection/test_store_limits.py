"""Row caps and large planes on real stores (issue 9 §3): a real Virtuoso (its own database,
its own virtuoso.ini) and a real Oxigraph server, through the real CLI where a user sees it.

* A Virtuoso that caps answers (``[SPARQL] ResultSetMaxRows``) never yields a short
  catalogue: a capped batch is split and read again, a capped discovery page fails the
  refresh with an error that blames the cap (header, setting, what to do).
* Stock Virtuoso, Oxigraph and the embedded store discover 50 000 subjects in one plane
  (keyset pages; stock Virtuoso refuses a sorted OFFSET past 19 998 rows).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from catalogue_kit import PREFIXES, configure

from yupana.endpoint.base import Deadline
from yupana.endpoint.embedded import EmbeddedStore
from yupana.endpoint.sparql11 import Sparql11Endpoint
from yupana.projection import discover
from yupana.projection.read import Reader

SELECTOR = """
aegis:sel_vendored a aegis:Selector ; aegis:name "vendored" ;
    aegis:evidenceSource "vendored code is not ours" ;
    aegis:exemptPathRegex "^vendor/" .
"""


def rules_with_exemptions(n: int) -> str:
    """``n`` text rules, each with two local exemptions and a link to a shared selector
    (nine rows a rule in the batched read)."""
    rules = [f"""aegis:rule_cap_{i:05d} a aegis:InternalIdentifierPattern ;
    rdfs:label "no CAP{i} ids" ; aegis:regex "\\\\bCAP{i}-[0-9]+\\\\b" ; aegis:enforcementTier "warn" ;
    aegis:identifierClass "ticket" ; rdfs:comment "queue CAP{i} stays in the tracker" ;
    aegis:exemptPathRegex "^docs/q{i}/" , "^notes/q{i}/" ; aegis:exemptionSelector aegis:sel_vendored .
""" for i in range(n)]
    return PREFIXES + SELECTOR + "".join(rules)


def loaded(server, tmp_path: Path, name: str, body: str) -> str:
    """Load ``body`` (Turtle) into a graph of its own; returns the graph IRI."""
    path = tmp_path / f"{name}.ttl"
    path.write_text(body)
    graph = f"http://yupana.test/{name}"
    server.load_turtle(str(path), graph)
    return graph


def project_root(tmp_path: Path, url: str, **quipu) -> Path:
    root = tmp_path / "project"
    configure(root, url, dialect="sparql11", request_timeout_secs=30.0, refresh_deadline_secs=120.0, **quipu)
    return root


def test_a_capped_virtuoso_batch_is_split_and_every_exemption_is_kept(yupana, env, tmp_path, virtuoso_server):
    server = virtuoso_server(max_rows=500)
    graph = loaded(server, tmp_path, "split", rules_with_exemptions(120))  # 1 080 rows in one batch of 200
    root = project_root(tmp_path, server.url, default_graph=graph)
    done = yupana("project", cwd=root, timeout=180)
    assert done.returncode == 0, done.stderr
    cached = json.loads(env.cache_path.read_text())
    assert len(cached["text_rules"]) == 120
    assert all(r["exemption_selectors"] == ["http://aegis.gastown.local/ontology/sel_vendored"]
               and len(r["exempt_path_regexes"]) == 2 for r in cached["text_rules"])
    assert "row cap" in done.stdout.decode()  # the notice says batches were split, and why


def test_a_small_virtuoso_cap_fails_the_refresh_and_blames_the_cap(yupana, env, tmp_path, virtuoso_server):
    server = virtuoso_server(max_rows=500)
    graph = loaded(server, tmp_path, "capped", rules_with_exemptions(600))  # a discovery page of 600 > 500
    root = project_root(tmp_path, server.url, default_graph=graph)
    done = yupana("project", cwd=root, timeout=180)
    err = done.stderr.decode()
    assert done.returncode != 0, done.stdout
    assert "(truncated)" in err and "X-SPARQL-MaxRows: 500" in err and "ResultSetMaxRows" in err, err
    assert "max_rows" in err and "nothing was stored" in err
    assert not env.cache_path.exists()


def policies(n: int) -> str:
    return PREFIXES + "".join(f'aegis:p{i:06d} a aegis:Policy ; aegis:boundary "action" .\n' for i in range(n))


N = 50_000


@pytest.fixture(scope="module")
def big_plane(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("big") / "policies.ttl"
    path.write_text(policies(N))
    return path


def _discover(endpoint) -> tuple[list[str], float, int]:
    reader = Reader(endpoint, Deadline(120))
    start = time.perf_counter()
    found = discover.action_policies(reader)
    return found, time.perf_counter() - start, reader.requests["policies"]


@pytest.mark.slow
def test_stock_virtuoso_discovers_50k_subjects_in_one_plane(tmp_path, virtuoso_server, big_plane):
    server = virtuoso_server()
    graph = "http://yupana.test/big"
    server.load_turtle(str(big_plane), graph)
    found, secs, requests = _discover(Sparql11Endpoint(server.url, default_graph=graph, request_timeout=60))
    assert len(found) == N == len(set(found)), secs
    assert requests == 7  # the whole answer, cut at the cap; then pages of 9 998 (max_rows 10 000, less the count row and one)


@pytest.mark.slow
def test_oxigraph_and_the_embedded_store_discover_50k_subjects(oxigraph_server, big_plane):
    # neither caps rows: the whole plane in one unsorted request, proven complete by its count
    found, _, requests = _discover(Sparql11Endpoint(oxigraph_server(big_plane), request_timeout=60))
    assert len(found) == N == len(set(found)) and requests == 1 and found == sorted(found)
    found, _, requests = _discover(EmbeddedStore([str(big_plane)], "file:big"))
    assert len(found) == N == len(set(found)) and requests == 1
