"""yupana's hooks under the real Claude Code CLI (pinned, from npm), driven by a scripted fake model.

Each case asserts on the file system, on yupana's own records and on what the model was sent.
"""

from __future__ import annotations

import json
import re

import kit
import pytest

pytestmark = pytest.mark.clients

SCOPE = """[yupana.policy]
mode = "enforce"
action_scope = "{action_scope}"

[yupana.policy.scopes.polecat-3]
deny_paths = ["secrets/**"]
deny_targets = ["host:prod-*"]
"""
TRIPWIRE = """[yupana.policy]
mode = "enforce"

[[yupana.policy.tripwires]]
name = "auth-boundary"
paths = ["src/auth/**"]
effect = "deny"
message = "auth code is owned by the security team"
"""
MODES = ["acceptEdits", "default", "manual", "auto", "dontAsk", "bypassPermissions", "plan"]


@pytest.fixture
def case(tmp_path):
    return kit.Case(tmp_path, "claude")


def scope(action_scope: str = "enforce") -> str:
    return SCOPE.format(action_scope=action_scope)


@pytest.mark.parametrize("mode", MODES)
def test_a_deny_paths_write_is_denied_in_every_permission_mode_and_nothing_is_written(case, mode):
    case.config(scope()).register()
    target = case.repo / "secrets" / "prod.env"
    run = case.run(kit.write(str(target), "API_KEY=1\n"), mode=mode)
    assert not target.exists()
    [result] = run.tool_results()
    assert result.startswith("PreToolUse:Write hook error: yupana: edit to secrets/prod.env is outside the capability")
    assert "the denied path `secrets/**`" in result
    [guard] = case.records("guard")
    assert (guard["result"], guard["rule"], guard["tool"]) == ("deny", "scope-declared:polecat-3", "Write")
    assert run.events[-1]["type"] == "result" and run.rc == 0


@pytest.mark.parametrize("mode", ["acceptEdits", "bypassPermissions"])
def test_a_tripwire_edit_of_an_existing_file_is_denied_and_the_file_keeps_its_content(case, mode):
    case.config(TRIPWIRE).register()
    target = case.file("src/auth/login.rs", "fn login() {}\n")
    turns = [[{"tool": "Read", "input": {"file_path": str(target)}}],
             [{"tool": "Edit", "input": {"file_path": str(target), "old_string": "fn login() {}",
                                          "new_string": "fn login() { bypass() }"}}]]
    run = case.run(turns, mode=mode)
    assert target.read_text() == "fn login() {}\n"
    results = run.tool_results()
    assert "fn login() {}" in results[0]  # the Read went through
    assert results[1].startswith("PreToolUse:Edit hook error: yupana:") and "auth-boundary" in results[1]
    guard = [r for r in case.records("guard") if r["tool"] == "Edit"]
    assert [g["result"] for g in guard] == ["deny"]


def _normalised(run: kit.Run, root: str) -> dict:
    """What a user and the model see of a run, without ids, timings and the sandbox path."""
    def clean(text: str) -> str:
        return re.sub(r"[0-9a-f]{8}-[0-9a-f-]{27}", "<id>", text.replace(root, "<repo>"))
    result = run.events[-1]
    return {"events": [(e.get("type"), e.get("subtype")) for e in run.events],
            "tool_results": [clean(t) for t in run.tool_results()],
            "roles": [m.get("role") for m in run.conversation[-1]["messages"]],
            "result": {k: result.get(k) for k in ("subtype", "is_error", "num_turns", "result", "terminal_reason")},
            "denials": [clean(str(d.get("tool_name"))) for d in result.get("permission_denials") or []],
            "requests": len(run.requests)}


@pytest.mark.parametrize("mode", ["acceptEdits", "default"])
def test_an_unrelated_edit_behaves_exactly_as_with_no_hook(tmp_path, mode):
    seen = {}
    for hooked in (True, False):
        case = kit.Case(tmp_path / ("hooked" if hooked else "bare"), "claude")
        case.config(scope())
        if hooked:
            case.register()
        run = case.run(kit.write(str(case.repo / "src" / "lib.rs"), "pub fn ok() {}\n"), mode=mode)
        written = (case.repo / "src" / "lib.rs")
        seen[hooked] = (_normalised(run, str(case.repo)), written.read_text() if written.exists() else None)
        if hooked:
            assert [g["result"] for g in case.records("guard")] == ["allow"]
        else:
            assert case.records() == []
    assert seen[True] == seen[False]
    if mode == "acceptEdits":
        assert seen[True][1] == "pub fn ok() {}\n"
    else:  # the client's own permission flow still asks (and -p cannot answer): silence granted nothing
        assert seen[True][1] is None and seen[True][0]["denials"] == ["Write"]


def test_pre_bash_denies_a_resolved_prod_host_and_lets_an_echo_of_it_run(case):
    case.config(scope()).register()
    run = case.run(kit.bash("ssh prod-db.example.com uptime"), mode="bypassPermissions")
    assert case.ssh_calls() == []
    [result] = run.tool_results()
    assert "host `prod-db.example.com`" in result and "the denied target `host:prod-*` matches it" in result
    assert [(r["result"], r["target"]) for r in case.records("action_scope")] == [("deny", "prod-db.example.com")]

    run = case.run(kit.bash('echo "ssh prod-db.example.com uptime"'), mode="bypassPermissions")
    assert case.ssh_calls() == []
    assert run.tool_results() == ["ssh prod-db.example.com uptime"]
    assert len(case.records("action_scope")) == 1


def test_control_the_same_ssh_runs_when_the_scope_does_not_deny_it(case):
    case.config(scope(action_scope="off")).register()
    run = case.run(kit.bash("ssh prod-db.example.com uptime"), mode="bypassPermissions")
    assert case.ssh_calls() == ["prod-db.example.com uptime"]
    assert run.tool_results() == ["fake-ssh-ran"]
    assert [r["target"] for r in case.records("action")] == ["prod-db.example.com"]


def test_a_fail_open_notice_appears_once_per_session_in_the_operator_pane(case):
    case.config('[yupana.policy]\nmode = "enforce"\n[yupana.policy.scopes.polecat-3]\nallow_paths = ["src/***"]\n')
    case.register()
    turns = [[{"tool": "Write", "input": {"file_path": str(case.repo / "docs" / "a.md"), "content": "a\n"}}],
             [{"tool": "Write", "input": {"file_path": str(case.repo / "docs" / "b.md"), "content": "b\n"}}]]
    run = case.run(turns)
    assert (case.repo / "docs" / "a.md").exists() and (case.repo / "docs" / "b.md").exists()
    notices = [e for e in run.system_events() if "yupana" in str(e)]
    assert len(notices) == 1, run.system_events()
    assert "malformed glob" in str(notices[0]) and "NOT enforced" in str(notices[0])
    assert [r["fail_kind"] for r in case.records("fail_open")] == ["globs", "globs"]
    assert "malformed glob" not in run.model_text()  # systemMessage is the operator's, not the model's


def test_a_hook_slower_than_its_registered_timeout_is_an_allow(case):
    """The client's timeout is an allow: yupana's own deadline is what guards."""
    case.config(scope())
    case.register({"pre-edit": "sleep 4; " + kit.wrapped("pre-edit")}, timeout=1)
    target = case.repo / "secrets" / "prod.env"
    run = case.run(kit.write(str(target), "API_KEY=1\n"))
    assert target.read_text() == "API_KEY=1\n"
    assert run.tool_results()[0].startswith("File created successfully")


def test_garbage_or_truncated_hook_output_is_an_allow(case):
    """Why yupana writes its one JSON object in a single write at the very end."""
    case.config(scope())
    truncated = '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny"'
    case.register({"pre-edit": f"printf '%s' '{truncated}'"})
    target = case.repo / "secrets" / "prod.env"
    run = case.run(kit.write(str(target), "API_KEY=1\n"))
    assert target.read_text() == "API_KEY=1\n"
    assert run.tool_results()[0].startswith("File created successfully")


SUBDIR = '[yupana.policy]\nmode = "enforce"\n[yupana.policy.scopes.polecat-3]\ndeny_paths = ["src/vault/**"]\n'


def test_an_agent_started_in_a_subdirectory_is_still_governed(case):
    """Claude Code 2.1.332 started in repo/src does not read repo/.claude/settings.json, so a
    project registration never runs there — and `yupana status` says so (registered, never
    invoked: exit 3). Registered for the user, the same agent is governed by the project's
    configuration (found from the file, not the cwd)."""
    case.config(SUBDIR)
    assert case.yupana("install", "claude").returncode == 0
    target = case.repo / "src" / "vault" / "key.pem"
    target.parent.mkdir(parents=True)
    case.run(kit.write(str(target), "KEY\n"), cwd=case.repo / "src", mode="bypassPermissions")
    assert target.exists() and case.records("guard") == []
    done = case.yupana("status", "--json", "--offline", cwd=case.repo / "src")
    claude = json.loads(done.stdout)["clients"]["claude-code"]
    assert done.returncode == 3 and claude["state"] == "degraded"
    assert any("never invoked" in p["problem"] and "--user" in p["fix"] for p in claude["problems"])

    target.unlink()
    assert case.yupana("uninstall", "claude").returncode == 0
    assert case.yupana("install", "claude", "--user").returncode == 0
    run = case.run(kit.write(str(target), "KEY\n"), cwd=case.repo / "src", mode="bypassPermissions")
    assert not target.exists()
    assert "the denied path `src/vault/**`" in run.tool_results()[0]
    done = case.yupana("status", "--json", "--offline", cwd=case.repo / "src")
    assert done.returncode == 0 and json.loads(done.stdout)["clients"]["claude-code"]["state"] == "ok"
