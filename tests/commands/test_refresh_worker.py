"""``yupana refresh-worker``: silent, single-flight, logs to refresh.log beside the cache."""

from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path

import pytest
from catalogue_kit import configure, write_catalogue


@pytest.fixture
def root(tmp_path) -> Path:
    root = tmp_path / "project"
    write_catalogue(root / "cat", 2)
    configure(root, "file:cat")
    return root


def log_lines(env) -> list[str]:
    path = env.cache_path.parent / "refresh.log"
    return path.read_text().splitlines() if path.exists() else []


def test_the_worker_refreshes_silently_and_logs_what_it_did(yupana, env, root):
    done = yupana("refresh-worker", "--root", str(root))
    assert done.returncode == 0 and done.stdout == b"" and done.stderr == b""
    assert json.loads(env.cache_path.read_text())["endpoint"] == "file:" + str(root / "cat")
    lines = log_lines(env)
    assert any("projecting from file:" in line for line in lines)  # the stages, for a refresh that hangs
    assert "pid " in lines[-1] and "refreshed file:" in lines[-1] and "text_rules 2" in lines[-1]
    assert env.records("command") == []  # an internal command is not counted as operator use


def test_a_second_worker_finds_nothing_due(yupana, env, root):
    assert yupana("refresh-worker", "--root", str(root)).returncode == 0
    done = yupana("refresh-worker", "--root", str(root))
    assert done.returncode == 0 and done.stderr == b""
    assert "skipped: the cache was refreshed" in log_lines(env)[-1]
    assert yupana("refresh-worker", "--root", str(root), "--force").returncode == 0
    assert "refreshed" in log_lines(env)[-1]


def test_a_worker_does_not_run_beside_another_refresh(yupana, env, root):
    lock = env.cache_for("file:" + str(root / "cat")).parent / "refresh.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock, os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        done = yupana("refresh-worker", "--root", str(root))
    finally:
        os.close(fd)
    assert done.returncode == 0 and done.stderr == b""
    assert "not started: a refresh is already running" in log_lines(env)[-1]
    assert not env.cache_path.exists()


def test_a_failed_refresh_is_logged_with_its_backoff(yupana, env, root):
    configure(root, "file:missing-directory")
    done = yupana("refresh-worker", "--root", str(root))
    assert done.returncode == 1 and done.stderr == b""
    line = log_lines(env)[-1]
    assert "refresh FAILED (1 in a row; next attempt after" in line and "no prior cache" in line


def test_the_log_is_size_bounded(yupana, env, root):
    log = env.cache_for("file:" + str(root / "cat")).parent / "refresh.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("old line\n" * 150_000)  # > 1 MiB
    assert yupana("refresh-worker", "--root", str(root)).returncode == 0
    assert (log.parent / "refresh.log.old").stat().st_size > 1 << 20
    assert log.stat().st_size < 4096 and "refreshed" in log.read_text()
