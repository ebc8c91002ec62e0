"""The plane registry agrees with the parts it names and with a real projected cache."""

from __future__ import annotations

import importlib
import os

from yupana import planes
from yupana.projection import dump, dump_turtle, queries
from yupana.state import cache as cache_mod, cache_entries

from .test_refresh import EVERYTHING, WIRED


def _resolve(path: str):
    module, _, name = path.rpartition(".")
    return getattr(importlib.import_module(module), name)


def test_every_row_has_its_queries_decoder_check_and_renderers():
    for p in planes.PLANES:
        assert p.shape in ("list", "object"), p.key
        assert p.queries, p.key
        for name in p.queries:
            assert os.path.exists(os.path.join(queries.queries_dir(), name + ".rq")), (p.key, name)
        assert callable(_resolve(p.decoder)), p.key
        assert p.table is not None and callable(_resolve(p.table)), p.key
        if p.turtle is not None:
            assert callable(_resolve(p.turtle)), p.key
        if p.check is not None:
            assert p.shape == "list" and p.check in cache_entries.CHECKS, p.key
    assert set(cache_entries.CHECKS) == {p.check for p in planes.PLANES if p.check}
    assert set(cache_mod.LIST_FIELDS) | set(cache_mod.OPTIONAL_FIELDS) == set(planes.BY_KEY)


def test_every_plane_key_of_a_real_projected_cache_is_a_registry_row(projected):
    cache = projected(EVERYTHING, env=WIRED).cache
    plane_keys = set(cache) - set(planes.META_KEYS)
    assert plane_keys == set(planes.BY_KEY)
    for p in planes.PLANES:
        assert cache["counts"][p.key] == planes.count(p.key, cache[p.key]), p.key
        assert cache[p.key] is not None, p.key


def test_the_cache_version_and_the_aegis_namespace_are_defined_once():
    assert cache_mod.CACHE_VERSION is planes.CACHE_VERSION
    assert dump_turtle.AEGIS is planes.AEGIS
    root = os.path.dirname(planes.__file__)
    spelled = []
    for base, _, files in os.walk(root):
        for f in files:
            if f.endswith(".py") and f != "planes.py":
                with open(os.path.join(base, f), encoding="utf-8") as fh:
                    text = fh.read()
                if '"http://aegis.gastown.local/ontology/"' in text or "CACHE_VERSION = " in text:
                    spelled.append(f)
    assert spelled == []


def test_the_dump_iterates_the_registry():
    assert dump.planes is planes and dump_turtle.planes is planes


def test_status_counts_every_labelled_plane_as_the_projection_counted_it(projected):
    from yupana.commands.status.rule_set import RULE_PLANES, plane_counts

    cache = projected(EVERYTHING, env=WIRED).cache
    counts = plane_counts(cache)
    labelled = [p for p in planes.PLANES if p.status is not None]
    assert list(counts) == [p.status for p in labelled] + ["unprojected"]
    for p in labelled:
        assert counts[p.status] == cache["counts"][p.key], p.key
    assert set(RULE_PLANES) <= set(counts) and "exemption_selectors" not in RULE_PLANES
    assert {p.key for p in planes.PLANES if p.stage} == set(planes.GOVERNED_PLANES)
