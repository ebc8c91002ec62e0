"""Host-memory policy evaluation: the meminfo reader, regex matching, floors and classes."""

from __future__ import annotations

import pytest

from yupana.state import cache
from yupana.regex import prefilter as regex_prefilter
from yupana.evaluate import memory

GIB_KB = 1048576


def meminfo(tmp_path, text: str) -> str:
    path = tmp_path / "meminfo"
    path.write_text(text)
    return str(path)


def policy(regex=r"^cargo\s+build\b", gib=8.0, cls="hard", effect="deny", name="floor") -> dict:
    return {"iri": f"urn:{name}", "name": name, "command_regex": regex, "threshold_gib": gib, "effect": effect,
            "class": cls, "verification_point": "PAG", "message": None}


def test_reads_memavailable_and_memtotal(tmp_path):
    path = meminfo(tmp_path, f"MemTotal: {16 * GIB_KB} kB\nMemFree: 100 kB\nMemAvailable: {3 * GIB_KB} kB\n")
    assert memory.read_meminfo(path) == (3 * GIB_KB, 16 * GIB_KB)


@pytest.mark.parametrize("text,words", [
    ("MemTotal: 100 kB\nMemFree: 50 kB\n", "no MemAvailable (MemFree is not a substitute)"),
    ("MemAvailable: 100 kB\n", "no MemTotal"),
    ("MemTotal: 100 MB\nMemAvailable: 10 kB\n", "unreadable MemTotal line"),
    ("MemTotal: 0 kB\nMemAvailable: 0 kB\n", "MemTotal 0"),
    ("", "no MemAvailable"),
])
def test_an_incomplete_signal_is_unreadable_not_guessed(tmp_path, text, words):
    found = memory.read_meminfo(meminfo(tmp_path, text))
    assert isinstance(found, str) and words in found


def test_a_missing_file_is_unreadable(tmp_path):
    assert "cannot read" in memory.read_meminfo(str(tmp_path / "nope"))


def test_the_real_proc_meminfo_is_readable():
    found = memory.read_meminfo("/proc/meminfo")
    if isinstance(found, str):
        pytest.skip(found)
    assert 0 <= found[0] <= found[1]


def test_below_the_floor_reports_the_three_numbers(tmp_path):
    path = meminfo(tmp_path, f"MemTotal: {16 * GIB_KB} kB\nMemAvailable: {int(2.5 * GIB_KB)} kB\n")
    [f] = memory.evaluate([policy()], ["cargo build --release"], meminfo=path)
    assert f.outcome == "unsatisfied" and f.blocking
    assert f.extra == {"available_gib": 2.5, "total_gib": 16.0, "threshold_gib": 8.0}
    assert "2.50 GiB" in f.message and "16.00 GiB" in f.message and "8.00 GiB" in f.message


def test_at_or_above_the_floor_is_satisfied_and_unmatched_is_nothing(tmp_path):
    path = meminfo(tmp_path, f"MemTotal: {16 * GIB_KB} kB\nMemAvailable: {8 * GIB_KB} kB\n")
    [f] = memory.evaluate([policy()], ["cargo build"], meminfo=path)
    assert f.outcome == "satisfied"
    assert memory.evaluate([policy()], ["echo cargo build", "ls"], meminfo=path) == []


@pytest.mark.parametrize("cls,effect,certain,blocking", [
    ("hard", "warn", True, True), ("escalation", "warn", True, True), ("soft", "deny", True, False),
    (None, "deny", True, True), (None, "warn", True, False), ("hard", "deny", False, False),
])
def test_class_decides_blocking_first_and_uncertainty_never_blocks(tmp_path, cls, effect, certain, blocking):
    path = meminfo(tmp_path, f"MemTotal: {16 * GIB_KB} kB\nMemAvailable: {GIB_KB} kB\n")
    [f] = memory.evaluate([policy(cls=cls, effect=effect)], ["cargo build"], certain=certain, meminfo=path)
    assert f.blocking is blocking


def test_a_floor_above_memtotal_is_a_misconfiguration(tmp_path):
    path = meminfo(tmp_path, f"MemTotal: {4 * GIB_KB} kB\nMemAvailable: {GIB_KB} kB\n")
    [f] = memory.evaluate([policy(gib=8.0)], ["cargo build"], meminfo=path)
    assert f.outcome == "unknown" and f.extra["fail"] == "memory-threshold"


def test_memory_is_read_only_when_some_policy_matches(tmp_path):
    assert memory.evaluate([policy()], ["ls"], meminfo=str(tmp_path / "absent")) == []
    [f] = memory.evaluate([policy()], ["cargo build"], meminfo=str(tmp_path / "absent"))
    assert f.extra["fail"] == "memory-signal"


def test_the_hot_twin_prefilter_skips_the_regex_engine(tmp_path):
    hot = cache.derive_hot({"memory_policies": [policy(regex=r"^cargo\s+build\b")]})
    [pol] = hot["memory_policies"]
    assert pol["_prefilter"] == regex_prefilter.prefilter(r"^cargo\s+build\b") and pol["_prefilter"] is not None
    memory._compiled.clear()
    assert memory.evaluate([pol], ["ls -la", "git status"], meminfo=str(tmp_path / "absent")) == []
    assert memory._compiled == {}  # never compiled: the required literal is absent
    assert memory.evaluate([pol], ["cargo fmt"], meminfo=str(tmp_path / "absent")) == []
    assert list(memory._compiled) == [r"^cargo\s+build\b"]


def test_a_regex_that_does_not_compile_is_unknown(tmp_path):
    [f] = memory.evaluate([policy(regex="cargo(")], ["cargo build"], meminfo=str(tmp_path / "x"))
    assert f.outcome == "unknown" and f.extra["fail"] == "memory-regex"
