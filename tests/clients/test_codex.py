"""yupana's hooks under the real Codex CLI (pinned, from npm), driven by a scripted fake Responses API.

Each case asserts on the file system, on yupana's own records and on what the model was sent.
"""

from __future__ import annotations

import json

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
MODES = {"never-full-access": (), "workspace-write": ("-s", "workspace-write"), "read-only": ("-s", "read-only"),
         "on-request": ("-c", 'approval_policy="on-request"'),
         "bypass-approvals-and-sandbox": ("--dangerously-bypass-approvals-and-sandbox",)}
MIXED = "*** Begin Patch\n*** Add File: src/ok.rs\n+pub fn ok() {}\n*** Update File: secrets/prod.env\n@@\n-KEY=old\n+KEY=new\n*** End Patch\n"


@pytest.fixture
def case(tmp_path):
    return kit.Case(tmp_path, "codex")


def scope(action_scope: str = "enforce") -> str:
    return SCOPE.format(action_scope=action_scope)


def test_a_patch_touching_an_allowed_and_a_denied_file_is_denied_whole(case):
    case.config(scope()).register()
    secret = case.file("secrets/prod.env", "KEY=old\n")
    run = case.run(kit.patch(MIXED))
    assert secret.read_text() == "KEY=old\n" and not (case.repo / "src" / "ok.rs").exists()
    [result] = run.tool_results()
    assert result.startswith("Command blocked by PreToolUse hook: yupana: edit to secrets/prod.env is outside")
    [guard] = case.records("guard")
    assert (guard["result"], guard["tool"]) == ("deny", "apply_patch")


@pytest.mark.parametrize("mode", list(MODES))
def test_a_tripwire_patch_is_denied_in_every_sandbox_and_approval_mode_and_the_file_keeps_its_content(case, mode):
    case.config(TRIPWIRE).register()
    target = case.file("src/auth/login.rs", "fn login() {}\n")
    run = case.run(kit.patch("*** Begin Patch\n*** Update File: src/auth/login.rs\n@@\n-fn login() {}\n"
                             "+fn login() { bypass() }\n*** End Patch\n"), codex_args=MODES[mode])
    assert target.read_text() == "fn login() {}\n"
    [result] = run.tool_results()
    assert result.startswith("Command blocked by PreToolUse hook: yupana: edit to src/auth/login.rs crosses "
                             "tripwire `auth-boundary`")
    assert [(g["result"], g["rule"]) for g in case.records("guard")] == [("deny", "tripwire:auth-boundary")]


def test_an_allowed_patch_behaves_exactly_as_with_no_hook(tmp_path):
    seen = {}
    for hooked in (True, False):
        case = kit.Case(tmp_path / ("hooked" if hooked else "bare"), "codex")
        case.config(scope())
        if hooked:
            case.register()
        run = case.run(kit.patch("*** Begin Patch\n*** Add File: src/ok.rs\n+pub fn ok() {}\n*** End Patch\n"))
        events = [(e.get("type"), (e.get("item") or {}).get("type"), (e.get("item") or {}).get("status"))
                  for e in run.events if e.get("type") != "thread.started"]
        results = [r.split("Wall time:")[0] + r.split("Output:")[-1] for r in run.tool_results()]
        seen[hooked] = (events, results, (case.repo / "src" / "ok.rs").read_text(), len(run.requests))
        if hooked:
            assert [g["result"] for g in case.records("guard")] == ["allow"]
    assert seen[True] == seen[False]
    assert seen[True][2] == "pub fn ok() {}\n"


def test_pre_bash_denies_a_resolved_prod_host_and_lets_an_echo_of_it_run(case):
    case.config(scope()).register()
    run = case.run(kit.shell("ssh prod-db.example.com uptime"))
    assert case.ssh_calls() == []
    [result] = run.tool_results()
    assert result.startswith("Command blocked by PreToolUse hook: yupana: this command would act on host "
                             "`prod-db.example.com` (ssh)")
    assert [(r["result"], r["target"]) for r in case.records("action_scope")] == [("deny", "prod-db.example.com")]

    run = case.run(kit.shell('echo "ssh prod-db.example.com uptime"'))
    assert case.ssh_calls() == []
    assert run.tool_results()[0].endswith("Output:\nssh prod-db.example.com uptime\n")
    assert len(case.records("action_scope")) == 1


def test_control_the_same_ssh_runs_when_the_scope_does_not_deny_it(case):
    case.config(scope(action_scope="off")).register()
    run = case.run(kit.shell("ssh prod-db.example.com uptime"))
    assert case.ssh_calls() == ["prod-db.example.com uptime"]
    assert run.tool_results()[0].endswith("Output:\nfake-ssh-ran\n")


def test_a_hook_slower_than_its_registered_timeout_is_an_allow(case):
    case.config(scope())
    case.register({"pre-edit": "sleep 4; " + kit.wrapped("pre-edit")}, timeout=1)
    run = case.run(kit.patch("*** Begin Patch\n*** Add File: secrets/new.env\n+K=1\n*** End Patch\n"))
    assert (case.repo / "secrets" / "new.env").read_text() == "K=1\n"
    assert "Success" in run.tool_results()[0]


def test_garbage_or_truncated_hook_output_is_an_allow(case):
    case.config(scope())
    truncated = '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny"'
    case.register({"pre-edit": f"printf '%s' '{truncated}'"})
    run = case.run(kit.patch("*** Begin Patch\n*** Add File: secrets/new.env\n+K=1\n*** End Patch\n"))
    assert (case.repo / "secrets" / "new.env").read_text() == "K=1\n"
    assert "Success" in run.tool_results()[0]


def test_an_untrusted_hook_is_skipped_silently_and_the_denied_edit_lands(case):
    """Why `yupana install codex` writes and verifies trust: without it the guard never runs."""
    case.config(scope())
    hooks = {"hooks": {"PreToolUse": [{"matcher": "apply_patch", "hooks": [
        {"type": "command", "command": kit.wrapped("pre-edit"), "timeout": 5}]}]}}
    (case.codex_home / "hooks.json").write_text(json.dumps(hooks))
    run = case.run(kit.patch("*** Begin Patch\n*** Add File: secrets/new.env\n+K=1\n*** End Patch\n"))
    assert (case.repo / "secrets" / "new.env").exists()
    assert case.records("guard") == [] and "yupana" not in run.stdout + run.stderr


SUBDIR = '[yupana.policy]\nmode = "enforce"\n[yupana.policy.scopes.polecat-3]\ndeny_paths = ["src/vault/**"]\n'


def test_an_agent_started_in_a_subdirectory_is_still_governed(case):
    case.config(SUBDIR).register()
    (case.repo / "src").mkdir()
    run = case.run(kit.patch("*** Begin Patch\n*** Add File: vault/key.pem\n+KEY\n*** End Patch\n"),
                   cwd=case.repo / "src")
    assert not (case.repo / "src" / "vault" / "key.pem").exists()
    assert "the denied path `src/vault/**`" in run.tool_results()[0]
