"""refresh_now: a refresh writes the cache and the state; a failure keeps the prior cache,
names the error and grows the back-off; one refresh at a time.

Real catalogues through the real embedded store, decoder and SHACL gate; real misbehaving
socket servers for network failures.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import time
from pathlib import Path

import pytest
from catalogue_kit import configure, overclaiming_policy, write_catalogue
from servers.faulty import FaultyServer

from yupana.state import cache, refresh_state

from yupana.workers import refresher
from yupana.projection import gate


@pytest.fixture
def state(env, monkeypatch):
    """Point this process at the test's HOME / XDG_STATE_HOME (refresh_now runs in-process)."""
    for key in [k for k in os.environ if k.startswith(("YUPANA_", "SHANTY_", "BOBBIN_"))]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("HOME", str(env.home))
    monkeypatch.setenv("XDG_STATE_HOME", str(env.state))
    return env


@pytest.fixture
def root(tmp_path, state) -> Path:
    root = tmp_path / "project"
    write_catalogue(root / "cat", 3)
    configure(root, "file:cat")
    return root


def files(env) -> dict[str, bytes]:
    directory = env.cache_path.parent
    return {p.name: p.read_bytes() for p in directory.iterdir() if p.name.startswith("projection")}


def read_state(env) -> dict:
    return json.loads((env.cache_path.parent / "refresh-state.json").read_text())


def test_a_refresh_writes_the_cache_its_twin_and_the_state(root, state):
    before = int(time.time())
    outcome = refresher.refresh_now(str(root))
    assert outcome.ok, outcome.reason()
    assert outcome.counts["text_rules"] == 3 and outcome.digest.startswith("sha256:")
    key = "file:" + str(root / "cat")
    written = json.loads(state.cache_path.read_text())
    assert written["endpoint"] == key and written["written_at"] >= before
    assert written["source"].startswith("file:") and written["source"].endswith("catalogue.ttl")
    assert [r["name"] for r in written["text_rules"]] == ["rule_acme_0", "rule_acme_1", "rule_acme_2"]
    served, miss = cache.load_servable(str(state.cache_path), key, 3600, int(time.time()), dataset=written["dataset"])
    assert miss is None and served["text_rules"][0]["_prefilter"] == (("ACME0-",), False)
    st = read_state(state)
    assert st["endpoint"] == key and st["last_success_at"] == written["written_at"]
    assert st["consecutive_failures"] == 0 and st["backoff_until"] is None and st["last_attempt_at"] >= before


def test_a_failed_refresh_keeps_the_prior_cache_and_names_the_error(root, state):
    assert refresher.refresh_now(str(root)).ok
    before = files(state)
    (root / "cat" / "catalogue.ttl").write_text("this is not turtle {")
    outcome = refresher.refresh_now(str(root))
    assert outcome.status == refresher.FAILED and outcome.error_kind == "protocol"
    assert "catalogue.ttl" in outcome.error
    assert outcome.prior_age_secs is not None and "prior cache kept" in outcome.reason()
    assert files(state) == before
    st = read_state(state)
    assert st["consecutive_failures"] == 1 and st["last_error_kind"] == "protocol"
    assert st["last_failure_at"] >= st["last_success_at"]


def test_a_strict_decode_failure_names_the_subject_and_property(root, state):
    assert refresher.refresh_now(str(root)).ok
    before = files(state)
    write_catalogue(root / "cat", 3, tier="sometimes")
    outcome = refresher.refresh_now(str(root))
    assert outcome.error_kind == "projection"
    assert "rule_acme_0" in outcome.error and "aegis:enforcementTier" in outcome.error
    assert files(state) == before


STRICTER = """@prefix sh: <http://www.w3.org/ns/shacl#> .
@prefix aegis: <http://aegis.gastown.local/ontology/> .
aegis:OnlyHostnamesShape a sh:NodeShape ;
    sh:targetClass aegis:TextRule ;
    sh:property [ sh:path aegis:identifierClass ; sh:in ( "hostname" ) ;
                  sh:message "this deployment only governs hostnames" ] .
"""


def test_the_shacl_gate_refuses_a_non_conforming_projection_with_its_report(root, state, tmp_path):
    assert refresher.refresh_now(str(root)).ok
    before = files(state)
    shapes = tmp_path / "shapes"
    shutil.copytree(gate.default_shapes_dir(), shapes)
    (shapes / "zz-stricter.ttl").write_text(STRICTER)
    outcome = refresher.refresh_now(str(root), shapes_dir=str(shapes))
    assert outcome.error_kind == "shapes"
    assert "3 SHACL violations" in outcome.error and "only governs hostnames" in outcome.error
    assert "aegis:rule_acme_0" in outcome.error  # the report names the focus node
    assert outcome.gate is not None and not outcome.gate.conforms
    assert files(state) == before
    assert read_state(state)["last_error_kind"] == "shapes"


def test_backoff_doubles_with_each_failure_and_a_success_clears_it(root, state):
    configure(root, "file:cat", refresh_backoff_secs=7)
    (root / "cat" / "catalogue.ttl").rename(root / "cat" / "catalogue.ttl.off")
    waits = []
    for n in (1, 2, 3, 4):
        outcome = refresher.refresh_now(str(root))
        assert not outcome.ok and outcome.consecutive_failures == n
        st = read_state(state)
        waits.append(st["backoff_until"] - st["last_failure_at"])
    assert waits == [7, 14, 28, 56]
    (root / "cat" / "catalogue.ttl.off").rename(root / "cat" / "catalogue.ttl")
    assert refresher.refresh_now(str(root)).ok
    st = read_state(state)
    assert st["consecutive_failures"] == 0 and st["backoff_until"] is None
    assert st["last_error"]  # the last failure stays on record for status


def test_backoff_is_capped_at_an_hour():
    assert refresh_state.backoff_secs(60, 1) == 60
    assert refresh_state.backoff_secs(60, 6) == 1920
    assert refresh_state.backoff_secs(60, 7) == 3600
    assert refresh_state.backoff_secs(60, 500) == 3600
    assert refresh_state.backoff_secs(60, 0) == 0


def test_a_new_endpoint_does_not_inherit_the_old_ones_backoff(root, state):
    configure(root, "file:missing")
    assert not refresher.refresh_now(str(root)).ok
    assert not refresher.refresh_now(str(root)).ok
    configure(root, "file:cat")
    outcome = refresher.refresh_now(str(root), only_if_due=True)
    assert outcome.ok, outcome.reason()


def test_one_deadline_bounds_the_whole_refresh(root, state):
    server = FaultyServer("never-answer").start()
    try:
        configure(root, server.url, dialect="sparql11", refresh_deadline_secs=1.5, request_timeout_secs=30)
        t0 = time.monotonic()
        outcome = refresher.refresh_now(str(root))
        elapsed = time.monotonic() - t0
    finally:
        server.stop()
    assert outcome.error_kind in ("timeout", "deadline") and elapsed < 6
    assert outcome.prior_miss == "absent" and "no prior cache" in outcome.reason()


def test_hosting_overclaims_are_spooled_on_a_successful_refresh(root, state):
    write_catalogue(root / "cat", 1, extra=overclaiming_policy())
    assert refresher.refresh_now(str(root)).ok
    records = state.records("hosting_overclaim")
    assert len(records) == 1
    assert records[0]["count"] == 1 and records[0]["actual_layer"] == "orchestration"
    assert "policy_no_ticket" in records[0]["notices"][0]


# ── single flight ────────────────────────────────────────────────────────────────────


def hold_lock(env) -> int:
    lock = env.cache_path.parent / "refresh.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock, os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    os.write(fd, f"{os.getpid()} {int(time.time())}\n".encode())
    return fd


def test_a_running_refresh_makes_another_report_busy_without_touching_anything(root, state):
    assert refresher.refresh_now(str(root)).ok
    before = files(state), read_state(state)
    fd = hold_lock(state)
    try:
        t0 = time.monotonic()
        outcome = refresher.refresh_now(str(root), lock_wait_secs=0.5)
        assert 0.4 < time.monotonic() - t0 < 3
    finally:
        os.close(fd)
    assert outcome.status == refresher.BUSY and f"pid {os.getpid()}" in outcome.error
    assert (files(state), read_state(state)) == before


def test_a_waiting_refresh_runs_once_the_lock_is_released(root, state):
    import threading

    fd = hold_lock(state)
    threading.Timer(0.5, os.close, args=(fd,)).start()
    outcome = refresher.refresh_now(str(root), lock_wait_secs=10)
    assert outcome.ok, outcome.reason()


def test_a_handed_over_lock_is_used_and_released(root, state):
    fd = hold_lock(state)
    outcome = refresher.refresh_now(str(root), lock_fd=fd)
    assert outcome.ok, outcome.reason()
    with pytest.raises(OSError):
        os.fstat(fd)  # refresh_now closed it …
    fd2 = hold_lock(state)  # … so the lock is free again
    os.close(fd2)


def test_the_worker_mode_skips_when_the_cache_is_fresh_or_the_store_is_backing_off(root, state):
    assert refresher.refresh_now(str(root)).ok
    outcome = refresher.refresh_now(str(root), only_if_due=True)
    assert outcome.status == refresher.SKIPPED and "refreshed 0s ago" in outcome.error
    server = FaultyServer("never-answer").start()
    try:
        configure(root, server.url, dialect="sparql11", refresh_deadline_secs=1)
        assert refresher.refresh_now(str(root)).error_kind in ("timeout", "deadline")
        assert server.connections == 1
        outcome = refresher.refresh_now(str(root), only_if_due=True)
        assert outcome.status == refresher.SKIPPED and "back-off" in outcome.error
        assert server.connections == 1  # the store was not asked again
    finally:
        server.stop()


def test_no_endpoint_means_no_refresh_unless_the_bundled_catalogue_is_allowed(tmp_path, state):
    root = tmp_path / "bare"
    root.mkdir()
    outcome = refresher.refresh_now(str(root))
    assert outcome.error_kind == "config" and "no endpoint configured" in outcome.error
    outcome = refresher.refresh_now(str(root), allow_bundled=True)
    assert outcome.ok, outcome.reason()
    bundled = cache.endpoint_key("", str(root))
    assert outcome.cache_path == str(state.cache_for(bundled))  # a store of its own: never a real cache's
    assert (state.cache_for(bundled).parent / "endpoint").read_text() == state.dataset_for(bundled) + "\n"


READER = """
import os, sys, time
from yupana.state import cache, dataset
path, key, stop = sys.argv[1], sys.argv[2], sys.argv[3]
reads = misses = 0
labels = set()
while not os.path.exists(stop):
    found, miss = cache.load_servable(path, key, 3600, int(time.time()) + 1,
                                      dataset=dataset.identity({"endpoint": key}))
    reads += 1
    if miss is not None and miss.label != "absent":
        misses += 1
        labels.add(miss.label + ": " + miss.reason)
    elif found is not None:
        assert [r["name"] for r in found["text_rules"]] == ["rule_acme_0", "rule_acme_1", "rule_acme_2"]
print(reads, misses, sorted(labels)[:3])
"""


@pytest.mark.slow
def test_twenty_workers_at_once_refresh_one_at_a_time_and_readers_never_see_a_torn_cache(root, state, tmp_path):
    import subprocess
    import sys

    key = "file:" + str(root / "cat")
    stop = tmp_path / "stop"
    readers = [subprocess.Popen([sys.executable, "-c", READER, str(state.cache_path), key, str(stop)], env=state,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    workers = [subprocess.Popen([sys.executable, "-m", "yupana", "refresh-worker", "--root", str(root), "--force"],
                                env=state, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(20)]
    for proc in workers:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0 and out == b"" and err == b""
    stop.touch()
    for proc in readers:
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
        reads, misses, labels = out.split(" ", 2)
        assert int(reads) > 10 and int(misses) == 0, labels
    log = (state.cache_path.parent / "refresh.log").read_text().splitlines()
    refreshed = [line for line in log if " refreshed file:" in line]
    busy = [line for line in log if "not started: a refresh is already running" in line]
    assert len(refreshed) >= 1 and len(refreshed) + len(busy) == 20
    assert read_state(state)["consecutive_failures"] == 0


def test_a_refresh_longer_than_its_deadline_fails_whichever_step_it_is_in_and_keeps_the_prior_cache(state, tmp_path):
    # 10 000 rules: reading, then a gate of several seconds. Where the 1 s deadline strikes
    # depends on the machine (a query, a chunk of the gate, the write); that it strikes,
    # names itself and writes nothing does not (the gate's own check: test_gate_chunks.py).
    root = tmp_path / "big"
    write_catalogue(root / "cat", 3)
    configure(root, "file:cat", refresh_deadline_secs=60)
    assert refresher.refresh_now(str(root)).ok
    before = files(state)
    write_catalogue(root / "cat", 10000)
    configure(root, "file:cat", refresh_deadline_secs=1)
    outcome = refresher.refresh_now(str(root))
    assert outcome.status == refresher.FAILED and outcome.error_kind == "deadline", outcome.reason()
    assert outcome.prior_age_secs is not None
    # It passed, or it left less than the next request would take (that request is not sent).
    assert outcome.error.startswith(("the refresh deadline of 1s passed before ", "the refresh deadline of 1s leaves ")), \
        outcome.error
    after = files(state)
    assert {k: v for k, v in after.items() if k != "projection.memo"} == {
        k: v for k, v in before.items() if k != "projection.memo"}
    # The memo changes only to keep the rules this attempt read, decoded and validated.
    kept = outcome.progress["kept_in_memo"]
    assert (after["projection.memo"] != before["projection.memo"]) == bool(kept), outcome.progress
    assert not kept or f"the {kept} text rules decoded and validated so far are kept" in outcome.error


@pytest.mark.slow
def test_a_gate_the_deadline_cuts_keeps_what_it_validated_and_the_next_refresh_goes_on(state, tmp_path):
    # Where a deadline strikes depends on the machine: time a whole refresh, then search for a
    # budget that cuts the gate itself (after reading, after some of its chunks): too short cuts
    # the reads, too long lets the refresh finish. Then refresh again with that budget.
    root = tmp_path / "big"
    write_catalogue(root / "cat", 12000)
    configure(root, "file:cat", refresh_deadline_secs=120)
    shutil.rmtree(state.state / "yupana", ignore_errors=True)
    whole = refresher.refresh_now(str(root))
    assert whole.ok and whole.phases.get("gate"), whole.reason()
    low, high = 0.0, whole.duration_s
    budget = sum(whole.phases.get(p) or 0.0 for p in ("server", "transfer", "decode")) + whole.phases["gate"] / 2
    for _ in range(14):
        configure(root, "file:cat", refresh_deadline_secs=round(budget, 3))
        shutil.rmtree(state.state / "yupana", ignore_errors=True)
        first = refresher.refresh_now(str(root))
        if "kept for the next refresh" in (first.error or ""):
            break
        if first.ok:
            high = budget
        else:
            assert first.error_kind == "deadline", first.reason()
            low = budget
        budget = (low + high) / 2
    else:
        pytest.fail(f"no budget between {low:.3f}s and {high:.3f}s cut the gate after some of its chunks")
    assert first.error_kind == "deadline" and not state.cache_path.exists()
    kept = [0]
    for _ in range(12):  # each keeps at least as much (more, unless a busy CPU starved it): the same budget gets there
        outcome = refresher.refresh_now(str(root))
        assert outcome.progress["from_memo"] >= kept[-1], outcome.reason()
        kept.append(outcome.progress["from_memo"])
        if outcome.ok:
            break
    assert outcome.ok and outcome.counts["text_rules"] == 12000, (kept, outcome.reason())
    assert kept[1] > 0  # the attempt after the cut went on from what the cut kept
    configure(root, "file:cat", refresh_deadline_secs=120)
    written = json.loads(state.cache_path.read_text())
    for path in state.cache_path.parent.glob("projection.*"):
        path.unlink()
    whole = refresher.refresh_now(str(root))
    assert whole.ok and whole.incremental["rules_kept"] == 0
    again = json.loads(state.cache_path.read_text())
    assert {k: v for k, v in again.items() if k != "written_at"} == {k: v for k, v in written.items() if k != "written_at"}
