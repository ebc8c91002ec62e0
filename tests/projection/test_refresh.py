"""A whole refresh over a catalogue with every plane: the cache, triples, stats, failures."""

from __future__ import annotations

import math
import random
import re

import pytest

from yupana.state import cache as cache_mod
from yupana import fastjson
from yupana.state import paths
from yupana.endpoint.base import Deadline, EndpointError
from yupana.projection.digest import rule_set_digest
from yupana.projection.errors import ProjectionError
from yupana.projection.refresh import project
from yupana.projection.vocab import RDF_TYPE, RDFS_SUBCLASS_OF

from .helpers import (
    AEGIS,
    CI,
    ITEMS,
    LANDING,
    MEMORY,
    OTHERS,
    SELECTOR,
    WIRED,
    failing,
    grounded,
    history,
    many_rules,
    rule,
    structural,
    wire,
)

EVERYTHING = (structural('; aegis:hostedAtLayer "tool"') + MEMORY + wire() + OTHERS
              + rule("; aegis:exemptionSelector aegis:sel_fixtures") + SELECTOR + grounded() + ITEMS + CI + LANDING + history(3))


def documented_fields() -> set[str]:
    with open(f"{paths.source_root()}/docs/cache-format.md", encoding="utf-8") as fh:
        doc = fh.read()
    section = doc.split("## Top-level fields", 1)[1].split("##", 1)[0]
    return set(re.findall(r"^\| `([a-z_]+)` \|", section, re.M))


def test_the_cache_has_exactly_the_documented_fields(projected):
    proj = projected(EVERYTHING, env=WIRED)
    assert set(proj.cache) == documented_fields() - {"written_at", "dataset"}  # the refresher's to set
    cache = proj.cache
    assert cache["version"] == 1 and cache["dialect"] == "embedded"
    assert cache["digest"] == rule_set_digest(cache)
    for field in ("policies", "text_rules", "exemption_selectors", "grounded_rules", "tripwires", "memory_policies"):
        assert len(cache[field]) == cache["counts"][field] == 1, field
    assert cache["counts"]["unprojected"] == 3
    for field in ("grounding", "work_item_scopes", "work_item_parents", "ci_map", "disk_history"):
        assert cache[field], field
    assert any("hosting overclaim" in n for n in cache["notices"])


def test_the_cache_round_trips_through_the_cache_file(projected, tmp_path):
    cache = dict(projected(EVERYTHING, env=WIRED).cache)
    cache["written_at"] = 1_780_000_000
    cache["dataset"] = cache["endpoint"] + " | default_graph=- | auth=none | masked=-"
    target = str(tmp_path / "projection.json")
    assert cache_mod.save(cache, target) is None
    loaded, miss = cache_mod.read_json(target)
    assert miss is None
    assert loaded == fastjson.loads(fastjson.dumps(cache))
    hot, miss = cache_mod.read(target)
    assert miss is None and hot["policies"][0]["_applies_to"] == []


def test_triples_are_what_was_read_plus_the_class_chain(projected):
    proj = projected(EVERYTHING, env=WIRED)
    triples = {(s, p, o.value) for s, p, o in proj.triples}
    rule_iri = AEGIS + "rule_no_hostnames"
    assert (rule_iri, RDF_TYPE, AEGIS + "InternalIdentifierPattern") in triples
    assert (AEGIS + "InternalIdentifierPattern", RDFS_SUBCLASS_OF, AEGIS + "TextRule") in triples
    assert (AEGIS + "sel_fixtures", AEGIS + "exemptPathRegex", "^tests/fixtures/") in triples
    assert (AEGIS + "policy_ticket", AEGIS + "hostedAtLayer", "tool") in triples
    assert (AEGIS + "cmd_pytest", AEGIS + "command", "pytest -q") in triples
    subjects = {s for s, _, _ in triples}
    assert AEGIS + "bead_1" not in subjects  # work items are not governed subjects
    assert not any("diskobs" in s for s in subjects)
    assert proj.triples == sorted(proj.triples, key=lambda t: (t[0], t[1], t[2].kind, t[2].value,
                                                               t[2].datatype or "", t[2].lang or ""))


def test_plane_stats_account_for_every_request(store):
    endpoint = store(EVERYTHING)
    proj = project(endpoint, {}, Deadline(30), env=WIRED)
    assert sum(p.requests for p in proj.planes.values()) == len(endpoint.sent)
    assert set(proj.planes) == {"policies", "text_rules", "exemption_selectors", "grounded_rules", "ci_map", "classes",
                                "grounding", "work_item_scopes", "work_item_parents", "work_item_status", "disk_history",
                                "repo_exposure", "landing_policies"}
    assert proj.planes["text_rules"].count == 1 and proj.planes["policies"].count == 6
    assert all(p.duration_s >= 0 for p in proj.planes.values())


@pytest.mark.parametrize("n,batch,max_rows", [(0, 200, 10000), (1, 200, 10000), (450, 100, 201), (1000, 200, 10000)])
def test_text_rule_requests_grow_with_batches_and_pages(projected, n, batch, max_rows):
    proj = projected(many_rules(n), batch_size=batch, max_rows=max_rows)
    # discovery is asked whole (the embedded store has no cap, so max_rows never pages it)
    assert proj.planes["text_rules"].requests == 1 + math.ceil(n / batch)
    assert proj.cache["counts"]["text_rules"] == n


def test_every_store_row_order_projects_the_same_cache(projected):
    lines = [line for line in EVERYTHING.splitlines() if line.strip()]
    statements, current = [], []
    for line in lines:
        current.append(line)
        if line.rstrip().endswith("."):
            statements.append("\n".join(current))
            current = []
    shuffled = statements[:]
    random.Random(7).shuffle(shuffled)
    a = projected("\n".join(statements), env=WIRED).cache
    b = projected("\n".join(shuffled), env=WIRED).cache
    a.pop("endpoint"), b.pop("endpoint")
    assert a == b


def test_a_strict_failure_fails_the_whole_projection(projected):
    with pytest.raises(ProjectionError):
        projected(EVERYTHING + '\naegis:rule_no_hostnames aegis:enforcementTier "advise" .', env=WIRED)


@pytest.mark.parametrize("marker", ["aegis:TextRule", "aegis:boundary", "aegis:CiMap", "aegis:candidateSource",
                                    "rdfs:subClassOf* ?s"])
def test_a_failed_read_of_a_fatal_plane_fails_the_projection(projected, marker):
    with pytest.raises(EndpointError):
        projected(EVERYTHING, cls=failing(marker))


def test_a_passed_deadline_fails_the_projection(store):
    with pytest.raises(EndpointError) as err:
        project(store(EVERYTHING), {}, Deadline(0))
    assert err.value.kind == "deadline"


def test_env_defaults_to_the_process_environment(store, monkeypatch):
    monkeypatch.setenv("SHANTY_ROOT", "/srv/shanty")
    monkeypatch.setenv("SHANTY_AGENT", "polecat-3")
    assert project(store(ITEMS), {}, Deadline(10)).cache["work_item_scopes"] == {"QUIP-12": ["src/x.rs", "src/y.rs"]}
    monkeypatch.delenv("SHANTY_AGENT")
    assert project(store(ITEMS), {}, Deadline(10)).cache["work_item_scopes"] is None
