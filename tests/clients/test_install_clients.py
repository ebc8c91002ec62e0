"""After ``yupana install`` in a fresh repository, and nothing else, the deny cases hold in both clients.

(And after ``yupana uninstall`` the client is back to running no yupana hook at all.)
"""

from __future__ import annotations

import kit
import pytest

pytestmark = pytest.mark.clients

SCOPE = """[yupana.policy]
mode = "enforce"
action_scope = "enforce"

[yupana.policy.scopes.polecat-3]
deny_paths = ["secrets/**"]
deny_targets = ["host:prod-*"]
"""


def test_after_yupana_install_claude_denies_the_edit_and_the_prod_host(tmp_path):
    case = kit.Case(tmp_path, "claude").config(SCOPE)
    done = case.yupana("install", "claude")
    assert done.returncode == 0, done.stderr
    target = case.repo / "secrets" / "prod.env"
    run = case.run(kit.write(str(target), "API_KEY=1\n"), mode="bypassPermissions")
    assert not target.exists()
    assert "the denied path `secrets/**`" in run.tool_results()[0]
    run = case.run(kit.bash("ssh prod-db.example.com uptime"), mode="bypassPermissions")
    assert case.ssh_calls() == [] and "host `prod-db.example.com`" in run.tool_results()[0]
    assert [r["result"] for r in case.records("guard")] == ["deny"]
    assert [r["result"] for r in case.records("action_scope")] == ["deny"]

    done = case.yupana("uninstall", "claude")
    assert done.returncode == 0, done.stderr
    case.run(kit.write(str(target), "API_KEY=1\n"), mode="bypassPermissions")
    assert target.exists() and len(case.records("guard")) == 1


def test_after_yupana_install_codex_denies_the_patch_whole_and_the_prod_host(tmp_path):
    case = kit.Case(tmp_path, "codex").config(SCOPE)
    done = case.yupana("install", "codex")
    assert done.returncode == 0, done.stderr + done.stdout
    assert "codex app-server reports all 3 trusted" in done.stdout
    secret = case.file("secrets/prod.env", "KEY=old\n")
    mixed = ("*** Begin Patch\n*** Add File: src/ok.rs\n+pub fn ok() {}\n*** Update File: secrets/prod.env\n"
             "@@\n-KEY=old\n+KEY=new\n*** End Patch\n")
    run = case.run(kit.patch(mixed))
    assert secret.read_text() == "KEY=old\n" and not (case.repo / "src" / "ok.rs").exists()
    assert "the denied path `secrets/**`" in run.tool_results()[0]
    run = case.run(kit.shell("ssh prod-db.example.com uptime"))
    assert case.ssh_calls() == [] and "host `prod-db.example.com`" in run.tool_results()[0]

    done = case.yupana("uninstall", "codex")
    assert done.returncode == 0, done.stderr
    case.run(kit.patch(mixed))
    assert secret.read_text() == "KEY=new\n" and (case.repo / "src" / "ok.rs").exists()
    assert [r["result"] for r in case.records("guard")] == ["deny"]
