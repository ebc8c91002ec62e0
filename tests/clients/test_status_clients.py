"""``yupana status`` hook health under the real clients (issue 11 §3): "not invoked" is a state.

After ``yupana install`` and before any edit the client's hooks are registered but never
seen: degraded (exit 3) with the fix. After one edit in the client, the record it left
(``client`` + ``project``) makes it healthy. For Codex, the trust verdict status computes
without the app-server agrees with the app-server's own, trusted and modified.
"""

from __future__ import annotations

import json
import subprocess
import sys

import kit
import pytest

pytestmark = pytest.mark.clients

SCOPE = '[yupana.policy]\nmode = "enforce"\n[yupana.policy.scopes.polecat-3]\ndeny_paths = ["secrets/**"]\n'


def status(case: kit.Case) -> tuple[int, dict]:
    done = case.yupana("status", "--json", "--offline")
    return done.returncode, json.loads(done.stdout)


def app_server_hooks(case: kit.Case) -> dict:
    done = subprocess.run(kit.isolated([sys.executable, str(kit.HERE / "hooks_list.py"), str(case.repo)]),
                          env=case.env(), capture_output=True, text=True, timeout=90)
    assert done.returncode == 0, done.stderr
    return {h["key"]: h for h in json.loads(done.stdout)}


def test_claude_registered_but_never_invoked_is_degraded_until_its_first_edit(tmp_path):
    case = kit.Case(tmp_path, "claude").config(SCOPE)
    assert case.yupana("install", "claude").returncode == 0
    code, out = status(case)
    claude = out["clients"]["claude-code"]
    assert code == 3 and out["exit_code"] == 3 and claude["state"] == "degraded"
    assert claude["registered"] == ["pre-edit", "pre-bash", "post-edit"]
    [reg] = claude["registrations"]
    assert reg["scope"] == "project" and reg["path"] == str(case.repo / ".claude" / "settings.json")
    assert {(h["event"], h["timeout"], h["wrapped"]) for h in reg["hooks"]} == {
        ("pre-edit", 5, True), ("pre-bash", 5, True), ("post-edit", 5, True)}
    [problem] = [p for p in claude["problems"] if p["degraded"]]
    assert "never invoked" in problem["problem"] and "run an edit in Claude Code" in problem["fix"]
    assert out["clients"]["codex"]["state"] in ("not-registered", "not-found")
    text = case.yupana("status", "--offline").stdout
    assert "  claude    : ⚠ DEGRADED (exit 3)" in text and "never seen in this project" in text

    case.run(kit.write(str(case.repo / "secrets" / "prod.env"), "K=1\n"), mode="bypassPermissions")
    [guard] = case.records("guard")
    assert guard["client"] == "claude-code" and guard["project"] == out["clients"]["project_key"]
    code, out = status(case)
    claude = out["clients"]["claude-code"]
    assert code == 0 and claude["state"] == "ok" and not [p for p in claude["problems"] if p["degraded"]]
    assert claude["last_seen"]["by_hook"]["pre-edit"] == guard["ts"]


def test_codex_trust_as_status_computes_it_agrees_with_the_app_server(tmp_path):
    case = kit.Case(tmp_path, "codex").config(SCOPE)
    done = case.yupana("install", "codex")
    assert done.returncode == 0, done.stderr
    code, out = status(case)
    codex = out["clients"]["codex"]
    [reg] = codex["registrations"]
    server = app_server_hooks(case)
    assert {h["key"]: (h["current_hash"], h["trust"]) for h in reg["hooks"]} == {
        k: (h["currentHash"], h["trustStatus"]) for k, h in server.items()}
    assert {h["trust"] for h in reg["hooks"]} == {"trusted"}
    assert code == 3 and codex["state"] == "degraded"  # trusted, but not invoked yet
    assert [p["problem"] for p in codex["problems"] if p["degraded"]] == [
        "registered, but no record of a codex hook for this project in the spool: never invoked"]

    case.run(kit.patch("*** Begin Patch\n*** Add File: src/ok.rs\n+pub fn ok() {}\n*** End Patch\n"))
    code, out = status(case)
    assert code == 0 and out["clients"]["codex"]["state"] == "ok"
    assert out["clients"]["codex"]["last_seen"]["by_hook"]["pre-edit"] == case.records("guard")[-1]["ts"]

    # any change after trust — here only the timeout — and Codex skips the hook silently
    hooks_path = case.codex_home / "hooks.json"
    hooks_path.write_text(hooks_path.read_text().replace('"timeout": 5', '"timeout": 7', 1))
    code, out = status(case)
    codex = out["clients"]["codex"]
    changed = [h for h in codex["registrations"][0]["hooks"] if h["trust"] != "trusted"]
    assert [(h["event"], h["trust"]) for h in changed] == [("pre-edit", "modified")]
    assert server_says_modified(case, changed[0]["key"])
    assert code == 3 and codex["state"] == "degraded"
    [problem] = [p for p in codex["problems"] if p["degraded"]]
    assert "changed since it was trusted" in problem["problem"] and "yupana install codex" in problem["fix"]
    secret = case.file("secrets/prod.env", "KEY=old\n")
    case.run(kit.patch("*** Begin Patch\n*** Update File: secrets/prod.env\n@@\n-KEY=old\n+KEY=new\n*** End Patch\n"))
    assert secret.read_text() == "KEY=new\n"  # why status calls it degraded: the guard did not run

    assert case.yupana("install", "codex").returncode == 0
    code, out = status(case)
    # exit 4 only for the tamper evidence: the hook file was changed behind the guard's back above
    assert code == (4 if (out.get("tamper") or {}).get("warn") else 0)
    assert {h["trust"] for h in out["clients"]["codex"]["registrations"][0]["hooks"]} == {"trusted"}


def server_says_modified(case: kit.Case, key: str) -> bool:
    return app_server_hooks(case)[key]["trustStatus"] == "modified"
