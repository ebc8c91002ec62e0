"""The advise readout over traffic the real clients made: Claude Code and Codex (pinned, from npm),
each in its own sandbox — two hosts' spools — under advise, read at once by ``yupana report``."""

from __future__ import annotations

import json
import subprocess
import sys

import kit
import pytest

pytestmark = pytest.mark.clients

ADVISE = """[yupana.policy]
mode = "advise"
action_scope = "enforce"

[yupana.policy.scopes.polecat-3]
deny_targets = ["host:prod-*"]

[[yupana.policy.tripwires]]
name = "auth-boundary"
paths = ["src/auth/**"]
effect = "deny"
message = "auth code is owned by the security team"
"""


def test_report_reads_both_clients_spools_and_tells_would_deny_by_client(tmp_path):
    claude = kit.Case(tmp_path / "claude", "claude")
    claude.config(ADVISE).register()
    claude.run(kit.write(str(claude.repo / "src" / "auth" / "login.rs"), "fn login() {}\n"))
    assert (claude.repo / "src" / "auth" / "login.rs").exists()  # advise: written, and recorded as a would-deny
    codex = kit.Case(tmp_path / "codex", "codex")
    codex.config(ADVISE).register()
    codex.run(kit.shell("ssh prod-db.example.com uptime"))
    assert [g["would_deny"] for g in claude.records("guard")] == [True]
    assert [r["would_deny"] for r in codex.records("action_scope")] == [True]

    spools = [str(case.state / "yupana") for case in (claude, codex)]
    done = subprocess.run([sys.executable, "-m", "yupana", "report", "--by", "client", "--json", "--spool", *spools],
                          env=claude.env(), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["hosts"] == 2 and doc["malformed"] == 0
    clients = {g["key"]: g for g in doc["groups"]}
    assert clients["claude-code"]["would_deny"] == 1 and clients["claude-code"]["hooks"].get("pre-edit") == 1
    assert clients["codex"]["would_deny"] == 1 and clients["codex"]["hooks"].get("pre-bash") == 1
    by_rule = json.loads(subprocess.run([sys.executable, "-m", "yupana", "report", "--json", "--spool", *spools],
                                        env=claude.env(), capture_output=True, text=True, timeout=60).stdout)
    rules = {g["key"]: g for g in by_rule["groups"]}
    assert rules["tripwire:auth-boundary"]["would_deny"] == 1
    assert rules["deny_targets:host:prod-*"]["would_deny"] == 1
