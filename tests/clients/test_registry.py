"""The client registry (issue 26 §1): one row per client, who sent a payload, and the answer in
its shape — through the real CLI where a user would notice it (the hook's stdout, its record)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "hooks"))
from guard_kit import Repo, hook

from yupana import clients

ENFORCE = '[yupana.policy]\nmode = "enforce"\n[yupana.policy.scopes.t]\ndeny_paths = ["secrets/**"]\n'


@pytest.fixture
def repo(tmp_path, env):
    return Repo(tmp_path / "repo", env).config(ENFORCE)


def test_every_row_names_an_adapter_and_an_installer_that_exist():
    assert {"claude-code", "codex"} <= set(clients.names())
    for row in clients.ROWS:
        adapter = clients.adapter(row)
        assert callable(adapter.translate) and callable(adapter.shape), row
        installer = clients.installer(row)
        assert callable(installer.run) and callable(installer.found) and callable(installer.registrations), row
        assert set(row.tools.values()) <= set(clients.CANONICAL), row
        assert {event for _e, _m, event in row.plan} == {"pre-edit", "pre-bash", "post-edit"}, row
        assert clients.get(row.install) is row and clients.get(row.name) is row


@pytest.mark.parametrize("data,name", [
    ({"turn_id": "t", "tool_name": "Bash"}, "codex"),
    ({"hook_event_name": "PreToolUse", "tool_name": "apply_patch", "tool_input": {"command": "*** Begin Patch"}},
     "codex"),  # Copilot lists apply_patch too (under its own preToolUse event)
    ({"tool_name": "Edit", "tool_input": {"command": "*** Begin Patch\n*** End Patch"}}, "codex"),
    ({"prompt_id": "p", "tool_name": "Bash"}, "claude-code"),
    ({"transcript_path": "/home/u/.claude/projects/x.jsonl", "tool_name": "Bash"}, "claude-code"),
    ({"transcript_path": "/home/u/.codex/sessions/x.jsonl", "tool_name": "Bash"}, "codex"),
    ({"tool_name": "Write", "tool_input": {"file_path": "/x", "content": ""}}, "claude-code"),
    ({"tool_name": "Bash", "tool_input": {"command": "ls"}}, None),  # both run a Bash tool: nothing tells
])
def test_the_payload_tells_the_client(data, name):
    row = clients.identify(data)
    assert (row.name if row else None) == name


def test_the_registrations_client_flag_wins_over_the_payload():
    assert clients.identify({"prompt_id": "p"}, "codex").name == "codex"
    assert clients.identify({"prompt_id": "p"}, "claude").name == "claude-code"  # the install word too
    assert clients.identify({"prompt_id": "p"}, "no-such-client").name == "claude-code"  # unknown: the payload


def test_the_record_carries_the_registry_name_given_by_client_flag(env, repo):
    payload = {"session_id": "s", "cwd": str(repo.root), "hook_event_name": "PreToolUse", "tool_name": "Bash",
               "tool_input": {"command": "ls"}}  # both clients run a Bash tool: nothing in it tells
    hook(env, payload, "--tenant", "t", event="pre-bash")
    hook(env, payload, "--tenant", "t", "--client", "codex", event="pre-bash")
    clients_seen = [r.get("client") for r in env.records("pre_bash_invoked")]
    assert clients_seen == [None, "codex"]


def test_a_deny_is_written_in_the_senders_shape(env, repo):
    result = hook(env, dict(repo.payload("Write", "secrets/a.env", content="k\n"), prompt_id="p"), "--tenant", "t")
    assert result.denied and "secrets/**" in result.reason
    assert env.records("guard")[-1]["client"] == "claude-code"


def test_a_client_flag_without_its_value_is_a_loud_allow_never_a_block(env, repo):
    done = hook(env, repo.payload("Write", "secrets/a.env", content="k\n"), "--tenant", "t", "--client")
    assert done.allowed_silently and "hook invocation not understood" in done.stderr


def test_an_unknown_client_name_falls_back_to_the_payload(env, repo):
    done = hook(env, dict(repo.payload("Write", "secrets/a.env", content="k\n"), prompt_id="p"), "--tenant", "t",
                "--client", "no-such-client")
    assert done.denied and env.records("guard")[-1]["client"] == "claude-code"


def test_install_writes_the_rows_plan_and_timeout(env, tmp_path, yupana):
    project = tmp_path / "p"
    Repo(project, env)
    done = yupana("install", "claude", cwd=project)
    assert done.returncode == 0, done.stderr
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    row = clients.get("claude-code")
    wrote = sorted((event, group["matcher"], group["hooks"][0]["timeout"])
                   for event, groups in settings["hooks"].items() for group in groups)
    assert wrote == sorted((e, m, row.timeout) for e, m, _h in row.plan)


def test_a_known_clients_unknown_tool_is_a_loud_unknown_not_a_silent_allow(env, repo):
    payload = {"session_id": "s", "turn_id": "t1", "cwd": str(repo.root), "hook_event_name": "PreToolUse",
               "tool_name": "shell_command", "tool_input": {"command": "ssh prod-db uptime"}}
    first = hook(env, payload, "--tenant", "t", event="pre-bash")
    assert "Codex tool 'shell_command' is not one yupana reads" in first.message
    assert "could not be fully checked" in first.context  # Codex shows the user nothing: the model is told
    again = hook(env, dict(payload, tool_use_id="2"), "--tenant", "t", event="pre-bash")
    assert again.allowed_silently  # the notice once per session; the record every time
    fails = [r for r in env.records("fail_open") if r.get("fail_kind") == "unknown_tool"]
    assert [(r["client"], r["tool"], r["hook"]) for r in fails] == [("codex", "shell_command", "pre-bash")] * 2
    assert [r["client"] for r in env.records("pre_bash_invoked")] == ["codex", "codex"]


def test_an_unknown_tool_reaching_pre_edit_reads_nothing_and_says_so(env, repo):
    payload = dict(repo.payload("Read", "secrets/a.env"), prompt_id="p")
    result = hook(env, payload, "--tenant", "t")
    assert not result.denied and "Claude Code tool 'Read' is not one yupana reads" in result.message
    assert env.records("guard")[-1]["tool"] == "Read"


def test_explain_names_the_client_and_whether_the_call_is_a_patch(env, repo, yupana):
    patch = "*** Begin Patch\n*** Add File: secrets/a.env\n+k\n*** End Patch\n"
    done = yupana("--tenant", "t", "explain", "--json",
                  stdin=json.dumps(dict(repo.patch(patch), turn_id="t1")), cwd=repo.root)
    out = json.loads(done.stdout)
    assert out["invocation"]["client"] == "codex" and out["invocation"]["patch"] is True, out["invocation"]


@pytest.mark.parametrize("row", clients.ROWS, ids=lambda r: r.name)
def test_every_rows_hook_settings_are_the_guards_own_controls(env, repo, row):
    """A row's ``controls`` are refused to the agent, in the project and in the user's home."""
    assert row.controls, f"{row.name} names no settings file: an agent could unregister the guard"
    for dirname, below in row.controls:
        rel = "/".join([dirname, *(part.replace("*", "x") for part in below.split("/"))])
        result = hook(env, dict(repo.payload("Write", rel, content="{}"), prompt_id="p"), "--tenant", "t")
        assert result.denied and "coding client's hook settings" in result.reason, (rel, result)


def test_a_tool_name_no_client_explains_is_a_loud_unknown_too(env, repo):
    """An unregistered client's payload (Cline's ``write_to_file`` under the Claude snippet; Qwen
    Code's ``write_file`` was one until its row) was a silent allow: the deny landed on disk. Now it
    says the call was not checked."""
    payload = {"session_id": "s", "cwd": str(repo.root), "hook_event_name": "PreToolUse", "tool_name": "write_to_file",
               "tool_input": {"file_path": str(repo.root / "secrets" / "a.env"), "content": "k\n"}}
    result = hook(env, payload, "--tenant", "t")
    assert "tool 'write_to_file' is not one yupana reads" in result.message and "yupana install" in result.message
    fail = [r for r in env.records("fail_open") if r.get("fail_kind") == "unknown_tool"]
    assert [(r.get("client"), r["tool"]) for r in fail] == [(None, "write_to_file")]


def test_explain_takes_the_registrations_client_and_infers_the_hook_from_its_row(env, repo, yupana):
    payload = {"session_id": "s", "cwd": str(repo.root), "hook_event_name": "PreToolUse", "tool_name": "Bash",
               "tool_input": {"command": "ls"}}
    done = yupana("--tenant", "t", "explain", "--json", "--client", "codex", stdin=json.dumps(payload), cwd=repo.root)
    out = json.loads(done.stdout)
    assert out["hook"] == "pre-bash" and out["hook_from"] == "tool_name Bash", out["hook_from"]
    assert out["invocation"]["client"] == "codex"
    text = yupana("--tenant", "t", "explain", stdin=json.dumps(payload), cwd=repo.root).stdout.decode()
    assert "client unknown (nothing in the payload tells)" in text


def test_a_native_rows_translate_is_the_identity():
    """``native`` skips the adapter on the hot path: only true when translating changes nothing."""
    payload = {"session_id": "s", "tool_name": "Edit", "tool_input": {"file_path": "/x", "old_string": "a",
                                                                      "new_string": "b"}, "prompt_id": "p"}
    for row in clients.ROWS:
        if row.native:
            assert clients.adapter(row).translate(dict(payload)) == payload, row


def test_no_module_outside_yupana_clients_names_a_client():
    """Issue 26's proof, kept: a client is decided and spelled only by its row, adapter and
    installer (scripts/codebase_figures.py counts it for any revision: 18 modules before, 0 after)."""
    import ast
    import importlib.util

    root = Path(__file__).resolve().parents[2]
    spec = importlib.util.spec_from_file_location("codebase_figures", root / "scripts" / "codebase_figures.py")
    figures = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(figures)
    words = figures.client_words()
    assert {"claude", "codex"} <= words
    found = {}
    for path in sorted((root / "yupana").rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if not rel.startswith("yupana/clients/"):
            named = figures.client_names(ast.parse(path.read_text(encoding="utf-8")), words)
            if named:
                found[rel] = sorted(named)
    assert found == {}, "name the client through its yupana/clients row instead"
