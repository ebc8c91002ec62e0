"""The first hooks after a config change: resolved in process, never a fail-open on ``config``.

30 hooks start at once on a fresh state directory (no snapshot: every one of them misses)
while 10 cold commands resolve the same configuration; each hook must still enforce the
declared scope, inside the harness's 5 s timeout, with no ``config`` fail-open record.
"""

from __future__ import annotations

import json
import subprocess
import sys

from guard_kit import Repo

HARNESS_TIMEOUT_MS = 5000  # the timeout the hooks are registered with (docs/integration.md)


def _start(env, argv: list[str], stdin: bytes | None = None) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-m", "yupana", *argv], env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdin.write(stdin or b"")
    proc.stdin.close()
    proc.stdin = None  # written and closed: communicate() only reads
    return proc


def test_thirty_concurrent_cold_hooks_all_enforce_without_a_config_fail_open(env, tmp_path):
    repo = Repo(tmp_path / "repo", env).config(
        '[yupana.policy]\nmode = "enforce"\ndeadline_ms = 60000\n'
        '[yupana.policy.scopes.t]\nallow_paths = ["src/**"]\ndeny_paths = ["src/config.rs"]\n')
    env["BOBBIN_ROLE"] = "t"
    assert not (env.state / "yupana" / "config").exists()  # fresh state directory: every hook misses
    payload = json.dumps(repo.payload(rel="src/config.rs")).encode()
    hooks = [_start(env, ["hook", "pre-edit"], payload) for _ in range(30)]
    cold = [_start(env, ["config", "check", "--root", str(repo.root)]) for _ in range(10)]
    results = [(p, *p.communicate(timeout=120)) for p in hooks]
    for p in cold:
        p.communicate(timeout=120)
    for proc, out, err in results:
        assert proc.returncode == 0, err[-800:]
        decision = json.loads(out)["hookSpecificOutput"]
        assert decision["permissionDecision"] == "deny", (out, err[-800:])
        assert "the denied path `src/config.rs`" in decision["permissionDecisionReason"]
        assert b"configuration error" not in err and b"failed open" not in err, err[-800:]
    assert [r for r in env.records("fail_open") if r.get("fail_kind") == "config"] == []
    guards = env.records("guard")
    assert len(guards) == 30 and all(g["result"] == "deny" for g in guards), guards
    assert max(g["duration_ms"] for g in guards) < HARNESS_TIMEOUT_MS, sorted(g["duration_ms"] for g in guards)[-5:]
