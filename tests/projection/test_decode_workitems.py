"""The grounding set, work-item scopes and parents: non-fatal, UNKNOWN never empty."""

from __future__ import annotations

from .helpers import AEGIS, ITEMS, WIRED, Noting, failing, grounded


def test_grounding_set_and_prefixes(projected):
    cache = projected(grounded() + ITEMS).cache
    assert cache["grounding"] == {"ids": ["QUIP-12", "QUIP-7", "aegis-0upyu"], "prefixes": ["QUIP", "aegis"]}
    assert cache["counts"]["grounding"] == 3


def test_grounding_set_only_with_grounded_rules(projected):
    proj = projected(ITEMS)
    assert proj.cache["grounding"] is None
    assert "grounding" not in proj.planes
    assert proj.notices == []


def test_an_empty_grounding_set_is_a_real_answer(projected):
    assert projected(grounded()).cache["grounding"] == {"ids": [], "prefixes": []}


def test_a_failed_grounding_fetch_is_unknown_with_a_notice(projected):
    proj = projected(grounded() + ITEMS, cls=failing("a aegis:WorkItem"))
    assert proj.cache["grounding"] is None
    assert proj.cache["grounded_rules"]  # the fatal planes are unaffected
    assert len(proj.notices) == 1 and "grounding set is UNKNOWN" in proj.notices[0]
    assert proj.notices[0] in proj.cache["notices"]


def test_scopes_and_parents_need_the_tracker_env(store):
    from yupana.endpoint.base import Deadline
    from yupana.projection.refresh import project

    for env in ({}, {"SHANTY_ROOT": "/srv"}, {"SHANTY_AGENT": "a"}, {"SHANTY_ROOT": "", "SHANTY_AGENT": "a"}):
        endpoint = store(ITEMS)
        cache = project(endpoint, {}, Deadline(10), env=env).cache
        assert cache["work_item_scopes"] is None and cache["work_item_parents"] is None
        assert not any("aegis:implements" in q or "aegis:contains" in q for q in endpoint.sent)


def test_scopes_and_parents_are_fetched_when_wired(store):
    from yupana.endpoint.base import Deadline
    from yupana.projection.refresh import project

    endpoint = store(ITEMS)
    cache = project(endpoint, {}, Deadline(10), env=WIRED).cache
    assert cache["work_item_scopes"] == {"QUIP-12": ["src/x.rs", "src/y.rs"]}
    # two parents: the smallest id wins, whatever the row order
    assert cache["work_item_parents"] == {"QUIP-12": "EPIC-1", "QUIP-7": "EPIC-0"}


def test_failed_scope_fetch_is_unknown(projected):
    proj = projected(ITEMS, env=WIRED, cls=failing("aegis:implements"))
    assert proj.cache["work_item_scopes"] is None
    assert proj.cache["work_item_parents"] == {"QUIP-12": "EPIC-1", "QUIP-7": "EPIC-0"}
    assert any("work-item scopes is UNKNOWN" in n for n in proj.notices)


def test_store_notices_reach_the_cache(projected):
    proj = projected(grounded() + ITEMS, cls=Noting)
    assert proj.cache["notices"] == [f"quipu withheld subclass inference for {AEGIS}WorkItem"]
    assert proj.notices == []  # nothing went UNKNOWN
