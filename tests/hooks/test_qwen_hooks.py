"""Qwen Code's payloads, as the real binary (0.24.4) sent them, through the real yupana CLI.

The payloads are /work/shared/fixtures/clients-more/qwen-*.json (``<proj>`` and ``<home>``
filled in here). Qwen Code names its tools ``write_file``, ``edit``, ``notebook_edit``,
``run_shell_command`` and ``monitor`` with Claude-like arguments, and reads Claude's deny
(``hookSpecificOutput.permissionDecision``); docs/clients/qwen.md. tests/clients/test_qwen.py
proves the same under the real binary.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import SHARED
from guard_kit import Repo, hook, text_rule, write_cache

FIXTURES = SHARED / "clients-more"
ENDPOINT = "http://127.0.0.1:9"
SCOPE = """[yupana.policy]
mode = "enforce"
action_scope = "enforce"

[yupana.policy.scopes.t]
deny_paths = ["secrets/**", "README.md"]
deny_targets = ["host:*.prod.example"]

[[yupana.policy.tripwires]]
name = "auth-boundary"
paths = ["src/auth/**"]
effect = "deny"
message = "auth code is owned by the security team"
"""


@pytest.fixture
def repo(tmp_path, env):
    env["BOBBIN_ROLE"] = "t"
    return Repo(tmp_path / "repo", env).config(SCOPE)


def recorded(name: str, repo: Repo, **changes) -> dict:
    """The recorded payload ``qwen-adapter-<name>.json`` for this repository and home."""
    path = FIXTURES / f"qwen-adapter-{name}.json"
    if not path.exists():
        pytest.skip(f"{path} is not here (YUPANA_SHARED_FIXTURES points elsewhere)")
    text = path.read_text().replace("<proj-slug>", "proj").replace("<proj>", str(repo.root))
    text = text.replace("<home>", str(repo.env.home))
    payload = json.loads(text)
    payload.update(changes)
    return payload


def test_a_tripwire_write_file_is_denied_in_the_channel_qwen_reads(env, repo):
    result = hook(env, recorded("write_file", repo))
    assert result.denied and result.reason.startswith("yupana: edit to src/auth/login.rs")
    assert "auth-boundary" in result.reason
    [guard] = env.records("guard")
    assert (guard["result"], guard["tool"], guard["client"]) == ("deny", "write_file", "qwen")


def test_a_deny_paths_edit_is_denied(env, repo):
    repo.file("README.md", "hello\n")
    result = hook(env, recorded("edit", repo))
    assert result.denied and "the denied path `README.md`" in result.reason
    [guard] = env.records("guard")
    assert (guard["result"], guard["tool"], guard["client"]) == ("deny", "edit", "qwen")


def test_an_unrelated_edit_is_a_silent_allow(env, repo):
    target = repo.file("src/lib.rs", "hello\n")
    payload = recorded("edit", repo)
    payload["tool_input"]["file_path"] = str(target)
    result = hook(env, payload)
    assert result.allowed_silently
    [guard] = env.records("guard")
    assert (guard["result"], guard["client"]) == ("allow", "qwen")


def test_the_text_an_edit_introduces_is_read_from_new_string(env, tmp_path):
    env["BOBBIN_ROLE"] = "t"
    repo = Repo(tmp_path / "gov", env).config(
        f'[yupana.policy]\nmode = "enforce"\nexposure = "public"\n[yupana.quipu]\nenabled = true\n'
        f'endpoint = "{ENDPOINT}"\ndialect = "quipu"\nprojection_cache_ttl_secs = 7200\n')
    write_cache(env, ENDPOINT, text_rules=[text_rule("rule_no_world", r"\bworld\b", label="no world")])
    repo.file("README.md", "hello\n")
    result = hook(env, recorded("edit", repo))
    assert result.denied and "introduces `world`" in result.reason and "no world" in result.reason
    payload = recorded("write_file", repo)
    payload["tool_input"].update(file_path=str(repo.root / "src" / "lib.rs"), content="hello world\n")
    assert hook(env, payload).denied


def test_a_notebook_edit_is_read_as_an_edit(env, repo):
    payload = recorded("edit", repo, tool_name="notebook_edit",
                       tool_input={"notebook_path": str(repo.root / "secrets" / "a.ipynb"), "new_source": "x = 1",
                                   "cell_id": "c1", "edit_mode": "replace"})
    result = hook(env, payload)
    assert result.denied and "the denied path `secrets/**`" in result.reason


def test_pre_bash_denies_the_resolved_prod_host_of_run_shell_command(env, repo):
    result = hook(env, recorded("run_shell_command", repo), event="pre-bash")
    assert result.denied and "host `db1.prod.example`" in result.reason
    [rec] = env.records("action_scope")
    assert (rec["result"], rec["target"]) == ("deny", "db1.prod.example")
    [invoked] = env.records("pre_bash_invoked")
    assert invoked["client"] == "qwen"


def test_pre_bash_lets_an_echo_of_the_host_run(env, repo):
    payload = recorded("run_shell_command", repo)
    payload["tool_input"]["command"] = 'echo "ssh deploy@db1.prod.example uptime"'
    assert hook(env, payload, event="pre-bash").allowed_silently


def test_pre_bash_reads_monitor_as_a_shell_command(env, repo):
    payload = recorded("run_shell_command", repo, tool_name="monitor")
    payload["tool_input"] = {"command": "ssh deploy@db1.prod.example tail -f /var/log/syslog",
                             "description": "watch"}
    result = hook(env, payload, event="pre-bash")
    assert result.denied and "host `db1.prod.example`" in result.reason


@pytest.mark.parametrize("event,tool", [("pre-edit", "apply_diff"), ("pre-bash", "exec_shell")])
def test_an_unknown_tool_from_qwen_is_a_loud_unknown_not_a_silent_allow(env, repo, event, tool):
    payload = recorded("edit", repo, tool_name=tool)
    result = hook(env, payload, event=event)
    assert not result.denied
    assert tool in result.stderr and tool in (result.message + result.context)
    assert any(tool in json.dumps(r) for r in env.records())


def test_the_record_and_the_recognition_need_no_qwen_transcript_path(env, repo):
    """Qwen with QWEN_HOME elsewhere: the transcript is not under ~/.qwen; the tool names still tell."""
    payload = recorded("write_file", repo, transcript_path=os.path.join(str(repo.root), "t.jsonl"))
    assert hook(env, payload).denied
    assert env.records("guard")[-1]["client"] == "qwen"


def test_claude_code_payloads_are_still_claude_code(env, repo):
    payload = repo.payload("Write", "secrets/a.env", content="x\n")
    payload["prompt_id"] = "p1"
    assert hook(env, payload).denied
    assert env.records("guard")[-1]["client"] == "claude-code"


def test_post_edit_answers_qwen_in_its_post_tool_use_shape(env, repo):
    payload = recorded("write_file", repo, hook_event_name="PostToolUse")
    payload["tool_input"]["file_path"] = str(Path(repo.root) / "src" / "lib.rs")
    result = hook(env, payload, event="post-edit")
    assert not result.denied
    [rec] = env.records("post_edit_invoked")
    assert rec["client"] == "qwen"


# ── self-protection: the agent cannot switch the guard off through Qwen Code's own settings ────────


@pytest.mark.parametrize("where", [
    lambda repo, env: repo.root / ".qwen" / "settings.json",          # the project registration
    lambda repo, env: env.home / ".qwen" / "settings.json",           # the user's (disableAllHooks, folderTrust)
    lambda repo, env: env.home / ".qwen" / "trustedFolders.json",     # DO_NOT_TRUST drops the project hooks
    lambda repo, env: Path(env["QWEN_HOME"]) / "settings.json",       # a moved QWEN_HOME
], ids=["project", "user", "trusted-folders", "qwen-home"])
def test_qwens_hook_settings_are_refused_to_its_agent(env, repo, tmp_path, where):
    env["QWEN_HOME"] = str(tmp_path / "qhome")
    target = where(repo, env)
    payload = recorded("write_file", repo)
    payload["tool_input"] = {"file_path": str(target), "content": '{"disableAllHooks": true}'}
    result = hook(env, payload)
    assert result.denied and "ask the operator" in result.reason
    assert env.records("guard")[-1]["self_protection"] == ["client"]
    shell = recorded("run_shell_command", repo)
    shell["tool_input"]["command"] = f"echo '{{}}' > {target}"
    assert hook(env, shell, event="pre-bash").denied


def test_a_qwen_named_file_that_is_no_setting_is_an_ordinary_edit(env, repo):
    payload = recorded("write_file", repo)
    payload["tool_input"] = {"file_path": str(repo.root / ".qwen" / "commands" / "x.md"), "content": "x\n"}
    assert hook(env, payload).allowed_silently


def test_a_shell_commands_directory_is_where_its_relative_paths_resolve(env, repo):
    shell = recorded("run_shell_command", repo)
    shell["tool_input"] = {"command": "echo 'mode = \"off\"' > config.toml", "directory": str(repo.root / ".bobbin")}
    assert hook(env, shell, event="pre-bash").denied
    shell["tool_input"]["directory"] = str(repo.root / "docs")
    assert hook(env, shell, event="pre-bash").allowed_silently
