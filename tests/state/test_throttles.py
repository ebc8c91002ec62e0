"""Throttle back-offs: latest until wins, expiry, formulas, compaction."""

from __future__ import annotations

import math

from yupana.state import throttles


def test_record_and_latest_until_wins(tmp_path):
    path = str(tmp_path / "throttles.jsonl")
    assert throttles.record("tripwire:a", "/repo", 2000, 1, path=path)
    assert throttles.record("tripwire:a", "/repo", 1500, 2, path=path)
    assert throttles.record("tripwire:b", "/other", 3000, path=path)
    with open(path, "a") as fh:
        fh.write('{"constraint_id": "tripwire:c", "until": 9999}\n{torn\n')  # no scope: ignored
    table = throttles.load(1000, path)
    assert table == {("tripwire:a", "/repo"): {"until": 2000, "n": 1}, ("tripwire:b", "/other"): {"until": 3000, "n": 1}}
    assert throttles.active_for("/repo", 1000, table) == [("tripwire:a", 2000)]
    assert throttles.load(2500, path) == {("tripwire:b", "/other"): {"until": 3000, "n": 1}}


def test_backoff_formulas():
    assert throttles.backoff_secs({"kind": "fixed", "secs": 300}, 7) == 300
    assert throttles.backoff_secs({"kind": "exp", "d": 2, "c": 5}, 1) == math.ceil(math.exp(0.5))
    assert throttles.backoff_secs({"kind": "exp", "d": 1, "c": 100}, 50) == throttles.MAX_BACKOFF_SECS
    assert throttles.backoff_secs({"kind": "exp", "d": 0, "c": 1}, 1) is None
    assert throttles.backoff_secs(None, 1) is None
    assert throttles.backoff_secs({"kind": "poly"}, 1) is None


def test_compaction_keeps_only_active(tmp_path, monkeypatch):
    path = str(tmp_path / "throttles.jsonl")
    monkeypatch.setattr(throttles, "COMPACT_BYTES", 200)
    for i in range(20):
        throttles.record(f"tripwire:old{i}", "/repo", 10, path=path, now=100)
    throttles.record("tripwire:new", "/repo", 500, path=path, now=100)
    assert throttles.load(100, path) == {("tripwire:new", "/repo"): {"until": 500, "n": 1}}
    assert len(open(path).read().splitlines()) < 20


def test_unwritable_location_is_silent(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert throttles.record("tripwire:a", "/repo", 10, path=str(blocker / "sub" / "t.jsonl")) is False
    assert throttles.load(0, str(blocker / "sub" / "t.jsonl")) == {}
