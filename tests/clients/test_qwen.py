"""yupana's hooks under the real Qwen Code CLI (pinned, from npm, on Node 22), driven by a scripted fake model.

Each case asserts on the file system, on yupana's own records, on the fake ``ssh``'s log and
on what the model was sent next (the Anthropic ``tool_result`` Qwen Code returns).
"""

from __future__ import annotations

import json
import sys
import time

import kit
import pytest
import qwen_kit
from qwen_kit import QwenCase

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


def scope(action_scope: str = "enforce") -> str:
    return SCOPE.format(action_scope=action_scope)


@pytest.fixture
def case(tmp_path):
    return QwenCase(tmp_path)


def test_a_deny_paths_write_file_is_denied_nothing_is_written_and_the_model_reads_why(case):
    case.config(scope()).register()
    target = case.repo / "secrets" / "prod.env"
    run = case.run(qwen_kit.write_file(str(target), "API_KEY=1\n"))
    assert not target.exists()
    [result] = run.tool_results()
    assert result.startswith("yupana: edit to secrets/prod.env is outside the capability")
    assert "the denied path `secrets/**`" in result
    [guard] = case.records("guard")
    assert (guard["result"], guard["rule"], guard["tool"], guard["client"]) == (
        "deny", "scope-declared:polecat-3", "write_file", "qwen")
    assert run.events[-1]["type"] == "result" and run.rc == 0


def test_a_tripwire_edit_of_an_existing_file_is_denied_and_the_file_keeps_its_content(case):
    case.config(TRIPWIRE).register()
    target = case.file("src/auth/login.rs", "fn login() {}\n")
    turns = [[{"tool": "read_file", "input": {"file_path": str(target)}}],
             [{"tool": "edit", "input": {"file_path": str(target), "old_string": "fn login() {}",
                                         "new_string": "fn login() { bypass() }"}}]]
    run = case.run(turns)
    assert target.read_text() == "fn login() {}\n"
    results = run.tool_results()
    assert "fn login() {}" in results[0]  # the read went through
    assert results[1].startswith("yupana:") and "auth-boundary" in results[1]
    assert [(g["result"], g["tool"]) for g in case.records("guard")] == [("deny", "edit")]


def test_an_unrelated_edit_lands_and_is_recorded_as_an_allow(case):
    case.config(scope()).register()
    target = case.file("src/lib.rs", "pub fn ok() {}\n")
    turns = [[{"tool": "read_file", "input": {"file_path": str(target)}}],  # Qwen edits only what was read
             *qwen_kit.edit(str(target), "pub fn ok() {}", "pub fn ok() -> u8 { 1 }")]
    run = case.run(turns)
    assert target.read_text() == "pub fn ok() -> u8 { 1 }\n", run.tool_results()
    assert "has been updated" in run.tool_results()[1]
    assert [(g["result"], g["client"]) for g in case.records("guard")] == [("allow", "qwen")]
    assert [r["client"] for r in case.records("post_edit_invoked")] == ["qwen"]


def test_pre_bash_denies_a_resolved_prod_host_and_lets_an_echo_of_it_run(case):
    case.config(scope()).register()
    run = case.run(qwen_kit.shell("ssh prod-db.example.com uptime"))
    assert case.ssh_calls() == []
    [result] = run.tool_results()
    assert "host `prod-db.example.com`" in result and "the denied target `host:prod-*`" in result
    assert [(r["result"], r["target"]) for r in case.records("action_scope")] == [("deny", "prod-db.example.com")]

    run = case.run(qwen_kit.shell('echo "ssh prod-db.example.com uptime"'))
    assert case.ssh_calls() == []
    assert "ssh prod-db.example.com uptime" in run.tool_results()[0]
    assert len(case.records("action_scope")) == 1


def test_a_notice_beside_a_deny_reaches_the_model_in_the_reason(case):
    """Qwen Code drops a PreToolUse answer's additionalContext and shows systemMessage to nobody
    headless: the deny reason is the one text the model reads, so the notice rides in it."""
    case.config(scope() + '\n[[yupana.policy.tripwires]]\nname = "broken"\npaths = ["src/***"]\neffect = "deny"\n')
    case.register()
    target = case.repo / "secrets" / "prod.env"
    run = case.run(qwen_kit.write_file(str(target), "API_KEY=1\n"))
    assert not target.exists()
    [result] = run.tool_results()
    assert "the denied path `secrets/**`" in result and "could not be fully checked" in result


def test_the_agent_cannot_switch_the_guard_off_through_qwens_settings(case):
    case.config(scope())
    assert case.yupana("install", "qwen").returncode == 0
    settings = case.repo / ".qwen" / "settings.json"
    hooks = json.loads(settings.read_text())["hooks"]
    run = case.run(qwen_kit.write_file(str(settings), '{"disableAllHooks": true}\n'),
                   prompt="disable all hooks in .qwen/settings.json")
    # (Qwen Code itself stamps "$version" into the file at start; our hooks and nothing else of the agent's)
    assert json.loads(settings.read_text())["hooks"] == hooks and "disableAllHooks" not in settings.read_text()
    assert "coding client's hook settings" in run.tool_results()[0] and "ask the operator" in run.tool_results()[0]
    run = case.run(qwen_kit.shell(f"echo '{{}}' > {settings}"))
    assert json.loads(settings.read_text())["hooks"] == hooks and "ask the operator" in run.tool_results()[0]


def test_post_edits_notice_reaches_the_model_in_the_tool_result(case):
    """The advise rung's out-of-ground notice (post-edit) rides PostToolUse additionalContext,
    which Qwen Code appends to the tool result the model reads."""
    sys.path.insert(0, str(kit.REPO / "tests" / "hooks"))
    from conftest import Env
    from guard_kit import write_cache

    endpoint = "http://127.0.0.1:9"
    write_cache(Env(case.base), endpoint, work_item_scopes={"yup-1": ["src/a.rs"], "yup-3": ["src/z.rs"]},
                work_item_status={"yup-3": "closed"})
    case.config(f'[yupana.policy]\nmode = "advise"\nwork_item_scope = "advise"\n[yupana.quipu]\nenabled = true\n'
                f'endpoint = "{endpoint}"\ndialect = "quipu"\n')
    crew = case.base / "shanty" / "crew" / "agent-7"
    crew.mkdir(parents=True)
    (crew / "plate.json").write_text(json.dumps({"item": "yup-1", "at": int(time.time()), "session": None}))
    case.extra_env = {"SHANTY_ROOT": str(case.base / "shanty"), "SHANTY_AGENT": "agent-7"}
    case.register()
    run = case.run(qwen_kit.write_file(str(case.repo / "src" / "z.rs"), "pub fn z() {}\n"))
    assert (case.repo / "src" / "z.rs").exists()
    [result] = run.tool_results()
    assert result.startswith("Successfully created")
    assert "outside the observed ground of work item `yup-1`" in result and "`yup-3` (closed)" in result
    assert [r["item"] for r in case.records("scope_notice")] == ["yup-1"]


def test_control_without_a_hook_the_denied_write_lands_and_the_prod_ssh_runs(case):
    case.config(scope())
    target = case.repo / "secrets" / "prod.env"
    run = case.run(qwen_kit.write_file(str(target), "API_KEY=1\n"))
    assert target.read_text() == "API_KEY=1\n"
    assert "Successfully created" in run.tool_results()[0]
    case.run(qwen_kit.shell("ssh prod-db.example.com uptime"))
    assert case.ssh_calls() == ["prod-db.example.com uptime"]
    assert case.records() == []


@pytest.mark.parametrize("command", [
    "sleep 8; " + kit.wrapped("pre-edit"),          # slower than the registered 5000 ms
    "exit 1",                                       # crashes (exit 1, no output)
    "echo boom >&2; exit 3",                        # crashes loudly
    kit.wrapped("pre-edit").replace(kit.YUPANA, "/nonexistent/yupana"),  # yupana missing, wrapped
    "/nonexistent/yupana hook pre-edit",            # yupana missing, bare: exit 127 with stderr
])
def test_a_slow_crashing_or_missing_yupana_never_blocks_the_agent(case, command):
    case.config(scope())
    case.register({"pre-edit": command, "pre-bash": command})
    target = case.repo / "secrets" / "prod.env"
    run = case.run(qwen_kit.write_file(str(target), "API_KEY=1\n"), timeout=90)
    assert target.read_text() == "API_KEY=1\n"
    assert "Successfully created" in run.tool_results()[0]
    assert run.rc == 0
    run = case.run(qwen_kit.shell('echo "ssh prod-db.example.com"'))
    assert run.tool_results() and "ssh prod-db.example.com" in run.tool_results()[0]
    assert run.rc == 0


def test_after_yupana_install_qwen_in_a_fresh_repo_the_deny_cases_hold(case):
    case.config(scope())
    done = case.yupana("install", "qwen")
    assert done.returncode == 0, done.stderr
    target = case.repo / "secrets" / "prod.env"
    run = case.run(qwen_kit.write_file(str(target), "API_KEY=1\n"))
    assert not target.exists() and "the denied path `secrets/**`" in run.tool_results()[0]
    run = case.run(qwen_kit.shell("ssh prod-db.example.com uptime"))
    assert case.ssh_calls() == [] and "host `prod-db.example.com`" in run.tool_results()[0]
    assert [(r["result"], r["client"]) for r in case.records("guard")] == [("deny", "qwen")]
    assert [r["result"] for r in case.records("action_scope")] == ["deny"]
    done = case.yupana("status", "--json", "--offline")
    qwen = json.loads(done.stdout)["clients"]["qwen"]
    assert qwen["state"] == "ok" and qwen["last_seen"]["by_hook"]["pre-edit"] is not None, qwen["problems"]

    done = case.yupana("uninstall", "qwen")
    assert done.returncode == 0, done.stderr
    case.run(qwen_kit.write_file(str(target), "API_KEY=1\n"))
    assert target.read_text() == "API_KEY=1\n" and len(case.records("guard")) == 1


def test_an_untrusted_folder_skips_the_project_hooks_silently_and_status_says_so(case):
    """Folder trust on, the folder not trusted: Qwen Code loads no project hook and says nothing
    about it (it only forces its approval mode to ``default``); status reports the state degraded."""
    case.config(scope())
    case.user_settings(qwen_kit.USER_SETTINGS | {"security": {**qwen_kit.USER_SETTINGS["security"],
                                                               "folderTrust": {"enabled": True}}})
    assert case.yupana("install", "qwen").returncode == 0
    run = case.run(qwen_kit.shell("echo hello"))
    assert not [r for r in case.records() if r["kind"] in ("pre_bash_invoked", "guard")]  # the hook never ran
    assert "hook" not in run.stderr.lower()
    done = case.yupana("status", "--json", "--offline")
    qwen = json.loads(done.stdout)["clients"]["qwen"]
    assert done.returncode == 3 and qwen["state"] == "degraded"
    assert any("project hooks are not loaded" in p["problem"] for p in qwen["problems"])

    (case.qwen_dir / "trustedFolders.json").write_text(json.dumps({str(case.repo): "TRUST_FOLDER"}))
    run = case.run(qwen_kit.shell("ssh prod-db.example.com uptime"))
    assert case.ssh_calls() == [] and "host `prod-db.example.com`" in run.tool_results()[0]
    done = case.yupana("status", "--json", "--offline")
    assert not [p for p in json.loads(done.stdout)["clients"]["qwen"]["problems"] if p["degraded"]]


def test_an_agent_started_in_a_subdirectory_is_governed_by_a_user_registration(case):
    """Qwen Code reads .qwen/settings.json of the directory it starts in: a project registration
    does not run under repo/src, a user one does, and the project's configuration governs."""
    case.config(scope())
    (case.repo / "src").mkdir()
    assert case.yupana("install", "qwen").returncode == 0
    target = case.repo / "secrets" / "prod.env"
    case.run(qwen_kit.write_file(str(target), "K\n"), cwd=case.repo / "src")
    assert target.exists() and case.records("guard") == []
    target.unlink()
    assert case.yupana("uninstall", "qwen").returncode == 0
    assert case.yupana("install", "qwen", "--user").returncode == 0
    run = case.run(qwen_kit.write_file(str(target), "K\n"), cwd=case.repo / "src")
    assert not target.exists() and "the denied path `secrets/**`" in run.tool_results()[0]
