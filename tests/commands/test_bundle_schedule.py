"""A bundle host asks its server once per interval, however old the bundle is (issue 23 §2).

Through the real hooks and their detached refresh workers, against a real loopback static
server that counts the GETs it answers.
"""

from __future__ import annotations

import fcntl
import os
import time

from commands import test_bundle
from commands.test_bundle import build, project
from commands.test_bundle_forward import edit, resign, signed_host
from hooks.guard_kit import hook

fleet = test_bundle.fleet  # the publisher, its key and a real static server (a fixture)
INTERVAL = 2


def settle(lock: str) -> None:
    """Wait until no detached refresh worker holds the single-flight lock."""
    end = time.monotonic() + 60
    while time.monotonic() < end:
        fd = os.open(lock, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            time.sleep(0.05)
        finally:
            os.close(fd)
    raise AssertionError("a refresh worker still holds the lock after 60s")


def test_after_a_check_hooks_start_no_request_until_an_interval_has_passed_and_stale_stays_stale(fleet):
    assert build(fleet).returncode == 0
    resign(fleet, lambda p: None, confirmed_at=int(time.time()) - 100)  # older than the interval, within the TTL
    env, root = signed_host(fleet, "storm")
    config = root / ".bobbin" / "config.toml"
    config.write_text(config.read_text().replace("[yupana.bundle]", f"refresh_interval_secs = {INTERVAL}\n[yupana.bundle]"))
    started = time.monotonic()
    code, out, err = project(env, root)
    assert code == 0 and out["status"] == "refreshed", err
    server = fleet["server"]
    lock = str(env.cache_path.with_name("refresh.lock"))
    hooks = 30
    for _ in range(hooks):
        result = hook(env, edit(root, "see ACME0-42"), cwd=root)
        assert result.denied
        assert "policy STALE: cache age 1" in result.reason  # a check re-confirms nothing: ~100s old, stale
    settle(lock)
    elapsed = time.monotonic() - started
    # one request when installing, then at most one per interval (and one more in flight at the end)
    assert server.requests <= 2 + int(elapsed // INTERVAL), (server.statuses, elapsed, hooks)
    assert server.statuses[0] == 200 and set(server.statuses[1:]) <= {304}
    # an interval after the last check, the next hook asks again: exactly once, a 304
    time.sleep(INTERVAL + 1.1)
    before = server.requests
    result = hook(env, edit(root, "see ACME0-42"), cwd=root)
    # the model reads only the staleness; the operator's stderr line says what the hook did about it
    assert result.denied and "policy STALE" in result.reason and "a refresh was started" in result.stderr
    settle(lock)
    assert server.requests == before + 1 and server.statuses[-1] == 304
    result = hook(env, edit(root, "see ACME0-42"), cwd=root)
    assert "the bundle server had nothing newer" in result.stderr and "next check in" in result.stderr
    settle(lock)
    assert server.requests == before + 1
