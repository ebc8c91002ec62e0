"""governed.load: what a hook serves, how fresh it says it is, and the one detached refresh.

Freshness is what a user reads in every verdict (fresh, or STALE with the age); the
refresh a hook starts must be one per cache however many agents edit at once, must never
hold the harness's stdout, and must respect the back-off so a down store is asked once.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from catalogue_kit import configure, write_catalogue
from servers.faulty import FaultyServer

from yupana.state import cache, refresh_state
from yupana.hooks import governed

TTL, INTERVAL = 3600, 300


@pytest.fixture
def state(env, monkeypatch):
    for key in [k for k in os.environ if k.startswith(("YUPANA_", "SHANTY_", "BOBBIN_"))]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("HOME", str(env.home))
    monkeypatch.setenv("XDG_STATE_HOME", str(env.state))
    return env


@pytest.fixture
def root(tmp_path, state) -> Path:
    root = tmp_path / "project"
    write_catalogue(root / "cat", 2)
    configure(root, "file:cat")
    return root


def cfg(endpoint: str, **quipu) -> dict:
    table = {"enabled": True, "endpoint": endpoint, "projection_cache_ttl_secs": TTL,
             "refresh_interval_secs": INTERVAL}
    table.update(quipu)
    return {"quipu": table}


def save(env, endpoint: str, age: int) -> int:
    written = int(time.time()) - age
    body = {"version": 1, "written_at": written, "endpoint": endpoint, "text_rules": [
        {"name": "r1", "pattern": r"\bACME-[0-9]+\b", "tier": "block"}]}
    assert cache.save(body, str(env.cache_for(endpoint))) is None
    return written


def wait_for(predicate, timeout: float = 20.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def state_file(env) -> Path:
    return env.cache_path.parent / "refresh-state.json"


def lock_is_free(env) -> bool:
    import fcntl

    fd = os.open(env.cache_path.parent / "refresh.lock", os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


# ── freshness ────────────────────────────────────────────────────────────────────────


def test_a_cache_confirmed_within_the_interval_is_fresh(root, state):
    key = cache.endpoint_key("file:cat", str(root))
    save(state, key, age=12)
    gov = governed.load(cfg("file:cat"), int(time.time()), root=str(root))
    assert gov.cache is not None and gov.freshness == "fresh" and gov.age_secs == 12
    assert gov.note() == "(policy fresh, cache age 12s)"
    assert not gov.refresh_started and gov.miss is None
    assert state.records("served_from_cache") == []


def test_an_overdue_cache_is_stale_with_its_age_and_starts_one_refresh(root, state):
    key = cache.endpoint_key("file:cat", str(root))
    written = save(state, key, age=INTERVAL + 100)
    gov = governed.load(cfg("file:cat"), int(time.time()), root=str(root))
    assert gov.freshness == "stale" and gov.age_secs >= INTERVAL + 100
    assert gov.note().startswith(f"(policy STALE: cache age {gov.age_secs}s; refresh overdue")
    assert gov.refresh_started
    [record] = state.records("served_from_cache")
    assert record["age_secs"] == gov.age_secs and record["ttl_secs"] == TTL and "overdue" in record["reason"]
    # the detached worker really refreshes the cache from the store, then lets go of the lock
    assert wait_for(lambda: json.loads(state.cache_path.read_text())["written_at"] > written)
    assert wait_for(lambda: lock_is_free(state))
    again = governed.load(cfg("file:cat"), int(time.time()), root=str(root))
    assert again.freshness == "fresh" and not again.refresh_started
    log = (state.cache_path.parent / "refresh.log").read_text()
    assert "refreshed " + key in log


def test_a_failed_refresh_after_the_cache_was_written_makes_it_stale(root, state):
    key = cache.endpoint_key("file:cat", str(root))
    written = save(state, key, age=5)
    now = int(time.time())
    refresh_state.write(str(state.cache_path), {
        "endpoint": key, "last_attempt_at": now, "last_failure_at": now, "last_success_at": written,
        "last_error": "timeout: quipu did not answer within 2s", "consecutive_failures": 1,
        "backoff_until": now + 60})
    gov = governed.load(cfg("file:cat"), now, root=str(root))
    assert gov.freshness == "stale" and gov.last_error.startswith("timeout")
    assert gov.note() == f"(policy STALE: cache age {gov.age_secs}s; last refresh failed: timeout: quipu did not " \
                         "answer within 2s)"
    assert not gov.refresh_started  # not overdue, and backing off anyway
    assert state.records("served_from_cache")[0]["reason"].startswith("last refresh failed: timeout")


def test_a_failure_before_the_cache_was_written_does_not_make_it_stale(root, state):
    key = cache.endpoint_key("file:cat", str(root))
    now = int(time.time())
    refresh_state.write(str(state.cache_path), {"endpoint": key, "last_failure_at": now - 50,
                                               "last_error": "old", "consecutive_failures": 1})
    save(state, key, age=10)
    assert governed.load(cfg("file:cat"), now, root=str(root)).freshness == "fresh"


def test_no_servable_cache_is_a_named_miss_and_starts_a_refresh(root, state):
    gov = governed.load(cfg("file:cat"), int(time.time()), root=str(root))
    assert gov.cache is None and gov.miss.label == "absent" and gov.freshness is None
    assert gov.refresh_started
    assert "UNAVAILABLE" in gov.note()
    assert wait_for(lambda: state.cache_path.exists())
    assert wait_for(lambda: lock_is_free(state))
    assert governed.load(cfg("file:cat"), int(time.time()), root=str(root)).freshness == "fresh"


@pytest.mark.parametrize(("age", "label"), [(TTL + 1, "expired"), (-30, "future-dated")])
def test_refused_caches_are_misses(root, state, age, label):
    key = cache.endpoint_key("file:cat", str(root))
    save(state, key, age=age)
    gov = governed.load(cfg("file:cat"), int(time.time()), root=str(root), spawn=False)
    assert gov.cache is None and gov.miss.label == label and not gov.refresh_started


def test_a_cache_for_another_endpoint_is_a_miss(root, state, monkeypatch):
    save(state, "http://other.example:3030", age=0)
    gov = governed.load(cfg("file:cat"), int(time.time()), root=str(root), spawn=False)
    assert gov.miss.label == "absent"  # each store has its own directory: another's cache is not this one's
    # one explicit cache path for every endpoint (the contract's YUPANA_PROJECTION_CACHE_PATH): refused by name
    monkeypatch.setenv("YUPANA_PROJECTION_CACHE_PATH", str(state.cache_for("http://other.example:3030")))
    gov = governed.load(cfg("file:cat"), int(time.time()), root=str(root), spawn=False)
    assert gov.miss.label == "endpoint"


def test_the_backoff_holds_back_refreshes(root, state):
    key = cache.endpoint_key("file:cat", str(root))
    now = int(time.time())
    refresh_state.write(str(state.cache_for(key)), {"endpoint": key, "last_failure_at": now, "last_error": "down",
                                                   "consecutive_failures": 3, "backoff_until": now + 240})
    gov = governed.load(cfg("file:cat"), now, root=str(root))
    assert gov.miss.label == "absent" and not gov.refresh_started and gov.backoff_until == now + 240
    # a back-off recorded for another endpoint does not hold this one back
    refresh_state.write(str(state.cache_for(key)), {"endpoint": "http://old.example", "backoff_until": now + 240,
                                                   "consecutive_failures": 3})
    assert governed.load(cfg("file:cat"), now, root=str(root)).refresh_started


def test_a_running_refresh_is_not_joined_by_another(root, state):
    import fcntl

    lock = state.cache_for(cache.endpoint_key("file:cat", str(root))).parent / "refresh.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock, os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        gov = governed.load(cfg("file:cat"), int(time.time()), root=str(root))
        assert gov.miss.label == "absent" and not gov.refresh_started
    finally:
        os.close(fd)


# ── concurrent hooks ─────────────────────────────────────────────────────────────────

HOOK = """
import json, os, sys, time
from yupana import settings
from yupana.hooks import governed
root, barrier = sys.argv[1], sys.argv[2]
snap = settings.load(root)
while not os.path.exists(barrier):
    time.sleep(0.002)
gov = governed.load(snap["config"], int(time.time()), root=root)
print(json.dumps({"started": gov.refresh_started, "miss": gov.miss.label if gov.miss else None}))
"""


def run_hooks(env, root: Path, n: int, tmp: Path) -> list[dict]:
    barrier = tmp / f"go-{time.monotonic_ns()}"
    procs = [subprocess.Popen([sys.executable, "-c", HOOK, str(root), str(barrier)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(n)]
    time.sleep(1.0)  # let every process reach the barrier
    barrier.touch()
    out = []
    for proc in procs:
        stdout, stderr = proc.communicate(timeout=60)
        assert proc.returncode == 0, stderr
        out.append(json.loads(stdout))
    return out


@pytest.mark.slow
def test_twenty_concurrent_hooks_start_one_refresh_and_the_backoff_stops_the_next(root, state, tmp_path):
    server = FaultyServer("never-answer").start()
    try:
        configure(root, server.url, dialect="sparql11", refresh_deadline_secs=2, request_timeout_secs=2,
                  refresh_backoff_secs=600)
        from yupana import settings

        settings.load(str(root))  # resolve the snapshot once, as the first hook would
        results = run_hooks(state, root, 20, tmp_path)
        assert all(r["miss"] == "absent" for r in results)
        assert sum(r["started"] for r in results) == 1
        assert wait_for(lambda: state_file(state).exists() and lock_is_free(state))
        assert server.connections == 1  # the store was asked once
        st = json.loads(state_file(state).read_text())
        assert st["consecutive_failures"] == 1 and st["backoff_until"] - st["last_failure_at"] == 600
        # the next burst of edits sees the back-off: nobody asks the down store again
        results = run_hooks(state, root, 20, tmp_path)
        assert sum(r["started"] for r in results) == 0
        time.sleep(0.5)
        assert server.connections == 1
    finally:
        server.stop()


def test_a_hook_that_starts_a_refresh_returns_at_once_and_keeps_no_pipe_open(root, state, tmp_path):
    server = FaultyServer("never-answer").start()
    try:
        configure(root, server.url, dialect="sparql11", refresh_deadline_secs=3, request_timeout_secs=3)
        from yupana import settings

        settings.load(str(root))
        barrier = tmp_path / "go"
        barrier.touch()
        t0 = time.monotonic()
        done = subprocess.run([sys.executable, "-c", HOOK, str(root), str(barrier)], env=state,
                              capture_output=True, text=True, timeout=30)
        elapsed = time.monotonic() - t0
        assert json.loads(done.stdout)["started"]
        # capture_output waits for EOF on stdout/stderr: a worker holding them would keep
        # this waiting for its whole 3 s deadline
        assert elapsed < 2.5
        assert not lock_is_free(state)  # the worker holds the single-flight lock …
        assert wait_for(lambda: lock_is_free(state))  # … until it gives up
        log = (state.cache_path.parent / "refresh.log").read_text()
        assert "refresh FAILED" in log and "no prior cache" in log
    finally:
        server.stop()
