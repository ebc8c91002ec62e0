"""The same catalogue through all three stores — embedded, a real Oxigraph server and the
quipu-dialect server — projects to the same cache, with HTTP requests growing with batches."""

from __future__ import annotations

import pytest

from conftest import QUIPU_FIXTURES
from yupana.endpoint.base import Deadline, EndpointError
from yupana.endpoint.embedded import EmbeddedStore
from yupana.endpoint.quipu import QuipuEndpoint
from yupana.endpoint.sparql11 import Sparql11Endpoint
from yupana.projection.refresh import project

from .helpers import (
    CI,
    EXPOSURE,
    ITEMS,
    MEMORY,
    OTHERS,
    SELECTOR,
    WIRED,
    grounded,
    history,
    many_rules,
    rule,
    structural,
    wire,
    write_ttl,
)

CATALOGUE = (structural('; aegis:hostedAtLayer "tool" ; aegis:appliesTo "src/**" , "crates/**"') + MEMORY + wire()
             + OTHERS + rule('; aegis:exemptionSelector aegis:sel_fixtures ; aegis:exemptPathRegex "^docs/" , "^x/"')
             + SELECTOR + grounded('; rdfs:label "ids" , "work ids"') + ITEMS + CI + history(120)
             + "aegis:Bead rdfs:subClassOf aegis:WorkItem .\n" + EXPOSURE)
STORE_SPECIFIC = ("endpoint", "dialect", "notices")


def comparable(cache: dict) -> dict:
    return {k: v for k, v in cache.items() if k not in STORE_SPECIFIC}


def three_stores(files, oxigraph_server, quipu_server, max_rows=10000):
    paths = [str(f) for f in files]
    embedded = EmbeddedStore(paths, "file:" + ",".join(paths))
    oxigraph = Sparql11Endpoint(oxigraph_server(*paths), request_timeout=20)
    quipu = QuipuEndpoint(quipu_server(*paths, max_rows=max_rows).url, max_rows=max_rows, request_timeout=20)
    return embedded, oxigraph, quipu


def test_all_three_stores_project_the_same_cache(tmp_path, oxigraph_server, quipu_server):
    files = [write_ttl(tmp_path, CATALOGUE)]
    results = [project(e, {}, Deadline(60), env=WIRED) for e in three_stores(files, oxigraph_server, quipu_server)]
    embedded, oxigraph, quipu = results
    assert comparable(oxigraph.cache) == comparable(embedded.cache)
    assert comparable(quipu.cache) == comparable(embedded.cache)
    assert oxigraph.triples == embedded.triples == quipu.triples
    assert [c.cache["dialect"] for c in results] == ["embedded", "sparql11", "quipu"]
    # the cache has every plane filled, so the comparison covered them all
    for field in ("policies", "text_rules", "exemption_selectors", "grounded_rules", "tripwires", "memory_policies",
                  "unprojected", "grounding", "work_item_scopes", "work_item_parents", "ci_map", "disk_history",
                  "repo_exposure"):
        assert embedded.cache[field], field


def test_quipu_withheld_inference_reaches_the_notices(tmp_path, quipu_server):
    server = quipu_server(write_ttl(tmp_path, CATALOGUE))
    cache = project(QuipuEndpoint(server.url, request_timeout=20), {}, Deadline(60), env={}).cache
    assert any("WorkItem" in n for n in cache["notices"]), cache["notices"]
    # the text-rule discovery spells the subclass path out, so quipu withholds nothing there
    assert any("a/rdfs:subClassOf* aegis:TextRule" in q for q in server.queries())


@pytest.mark.skipif(not (QUIPU_FIXTURES / "shapes").is_dir(), reason="quipu fixtures absent")
def test_quipus_own_catalogue_through_all_three_stores(oxigraph_server, quipu_server):
    files = []
    for pattern in ("shapes/*.ttl", "shapes/policies/*.ttl", "ontologies/*.ttl"):
        files += sorted(QUIPU_FIXTURES.glob(pattern))
    caches = [project(e, {}, Deadline(60), env={}).cache for e in three_stores(files, oxigraph_server, quipu_server)]
    assert comparable(caches[1]) == comparable(caches[0]) == comparable(caches[2])
    assert [p["rule"]["name"] for p in caches[0]["policies"]] == ["no-ticket-in-comment", "todo-needs-ticket"]


def test_a_small_server_cap_pages_and_splits_but_projects_the_same(tmp_path, quipu_server):
    body = CATALOGUE + many_rules(120).replace("aegis:InternalIdentifierPattern rdfs:subClassOf aegis:TextRule .", "")
    path = write_ttl(tmp_path, body)
    whole = project(EmbeddedStore([str(path)], "file:x"), {}, Deadline(60), env=WIRED)
    server = quipu_server(path, max_rows=50)
    endpoint = QuipuEndpoint(server.url, max_rows=50, request_timeout=20)
    capped = project(endpoint, {"max_rows": 50, "batch_size": 40}, Deadline(60), env=WIRED)
    assert comparable(capped.cache) == comparable(whole.cache)
    assert capped.planes["text_rules"].requests > whole.planes["text_rules"].requests


@pytest.mark.parametrize("n", [10, 400])
def test_http_requests_grow_with_batches_not_subjects(tmp_path, oxigraph_server, n):
    url = oxigraph_server(write_ttl(tmp_path, many_rules(n)))
    endpoint = Sparql11Endpoint(url, request_timeout=20)
    proj = project(endpoint, {"batch_size": 200}, Deadline(60), env={})
    assert endpoint.requests == sum(p.requests for p in proj.planes.values())
    assert proj.planes["text_rules"].requests == 1 + -(-n // 200)
    assert proj.cache["counts"]["text_rules"] == n


def test_a_failing_store_fails_the_projection(tmp_path, quipu_server):
    server = quipu_server(write_ttl(tmp_path, CATALOGUE))
    server.fail_next(500, "boom")
    with pytest.raises(EndpointError):
        project(QuipuEndpoint(server.url, request_timeout=20), {}, Deadline(60), env={})


STATUS = ITEMS + """
aegis:bead_1 aegis:status "closed" .
aegis:bead_2 aegis:status "abandoned" .
"""


def test_work_item_status_projects_the_same_through_oxigraph_and_embedded(tmp_path, oxigraph_server, quipu_server):
    files = [write_ttl(tmp_path, STATUS)]
    embedded, oxigraph, _ = three_stores(files, oxigraph_server, quipu_server)
    for store in (embedded, oxigraph):
        cache = project(store, {}, Deadline(60), env=WIRED).cache
        assert cache["work_item_status"] == {"QUIP-12": "closed", "QUIP-7": "abandoned"}
        assert cache["counts"]["work_item_status"] == 2


def test_two_statuses_for_one_item_make_the_plane_unknown_naming_it(tmp_path, oxigraph_server, quipu_server):
    files = [write_ttl(tmp_path, STATUS + 'aegis:bead_1 aegis:status "open" .\n')]
    embedded, oxigraph, _ = three_stores(files, oxigraph_server, quipu_server)
    for store in (embedded, oxigraph):
        cache = project(store, {}, Deadline(60), env=WIRED).cache
        assert cache["work_item_status"] is None and cache["work_item_scopes"]  # the other planes still serve
        told = [n for n in cache["notices"] if "work-item status is UNKNOWN" in n]
        assert told and "bead_1" in told[0] and "aegis:status" in told[0]
