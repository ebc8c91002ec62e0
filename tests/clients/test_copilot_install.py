"""``yupana install|uninstall copilot`` and Copilot's part of ``yupana status``, through the real CLI.

(The same registrations under the real Copilot binary: tests/clients/test_copilot.py.)
"""

from __future__ import annotations

import json
import subprocess

import pytest


@pytest.fixture
def repo(tmp_path, env):
    for key in ("COPILOT_HOME", "COPILOT_ALLOW_ALL"):
        env.pop(key, None)
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def settings(env) -> dict:
    return json.loads((env.home / ".copilot" / "settings.json").read_text())


def commands(data: dict) -> dict[str, list[str]]:
    return {event: [h["command"] for g in groups for h in g["hooks"]] for event, groups in data["hooks"].items()}


def status(yupana, repo) -> tuple[int, dict]:
    done = yupana("status", "--json", "--offline", cwd=repo)
    return done.returncode, json.loads(done.stdout)["clients"]["copilot"]


def run(yupana, *args, cwd) -> subprocess.CompletedProcess:
    done = yupana(*args, cwd=cwd)
    return subprocess.CompletedProcess(done.args, done.returncode, done.stdout.decode(), done.stderr.decode())


def test_install_registers_for_the_user_through_the_wrapper_and_keeps_the_rest(yupana, env, repo):
    path = env.home / ".copilot" / "settings.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"theme": "dark", "hooks": {"preToolUse": [
        {"matcher": "bash", "hooks": [{"type": "command", "command": "/opt/audit.sh", "timeout": 9}]}]}}))
    done = run(yupana, "install", "copilot", cwd=repo)
    assert done.returncode == 0, done.stderr
    data = settings(env)
    assert data["theme"] == "dark"
    cmds = commands(data)
    assert "/opt/audit.sh" in cmds["preToolUse"]
    ours = [c for c in cmds["preToolUse"] + cmds["postToolUse"] if "yupana" in c]
    assert len(ours) == 3
    for command in ours:
        assert command.startswith("out=$(") and "--client copilot 2>/dev/null) || exit 0" in command
    groups = {g["matcher"]: g for g in data["hooks"]["preToolUse"]}
    assert groups["edit|create|str_replace_editor|apply_patch"]["hooks"][0]["timeout"] == 5  # seconds, for Copilot

    again = run(yupana, "install", "copilot", cwd=repo)
    assert again.returncode == 0 and "no change" in again.stdout
    done = run(yupana, "uninstall", "copilot", cwd=repo)
    assert done.returncode == 0, done.stderr
    assert settings(env)["theme"] == "dark" and commands(settings(env)) == {"preToolUse": ["/opt/audit.sh"]}


def test_a_settings_file_that_is_not_json_is_refused_and_left_as_it_was(yupana, env, repo):
    path = env.home / ".copilot" / "settings.json"
    path.parent.mkdir()
    path.write_text("{ not json")
    done = run(yupana, "install", "copilot", cwd=repo)
    assert done.returncode == 1 and str(path) in done.stderr
    assert path.read_text() == "{ not json"


def test_a_project_registration_in_an_untrusted_folder_exits_3_and_status_is_degraded(yupana, env, repo):
    done = run(yupana, "install", "copilot", "--project", cwd=repo)
    assert done.returncode == 3, done.stderr
    assert "skips them silently" in done.stderr and "yupana install copilot --user" in done.stderr
    hooks_file = repo / ".github" / "hooks" / "yupana.json"
    assert len([c for cs in commands(json.loads(hooks_file.read_text())).values() for c in cs]) == 3

    code, copilot = status(yupana, repo)
    assert code == 3 and copilot["state"] == "degraded"
    assert not (env.home / ".copilot" / "settings.json").exists()  # --project wrote only the repository's file
    [trust] = [p for p in copilot["problems"] if "not trusted" in p["problem"]]
    assert trust["degraded"] and "yupana install copilot --user" in trust["fix"]
    [reg] = copilot["registrations"]
    assert (reg["scope"], reg["path"], reg["trusted"]) == ("project", str(hooks_file), False)

    done = run(yupana, "uninstall", "copilot", "--project", cwd=repo)
    assert done.returncode == 0 and not hooks_file.exists()  # our own file, emptied, is removed


def test_a_folder_copilot_trusts_runs_repository_hooks(yupana, env, repo):
    """Copilot keeps accepted trust in $COPILOT_HOME/config.json, a JSON file it starts with // comments;
    a trusted folder covers the folders below it."""
    config = env.home / ".copilot" / "config.json"
    config.parent.mkdir()
    config.write_text("// User settings belong in settings.json.\n// This file is managed automatically.\n"
                      + json.dumps({"trustedFolders": [str(repo.parent)]}, indent=2))
    done = run(yupana, "install", "copilot", "--project", cwd=repo)
    assert done.returncode == 0, done.stderr
    assert "copilot trusts" in done.stdout
    _code, copilot = status(yupana, repo)
    assert not [p for p in copilot["problems"] if "not trusted" in p["problem"]]
    assert copilot["registrations"][0]["trusted"] is True


def test_disable_all_hooks_is_degraded(yupana, env, repo):
    assert run(yupana, "install", "copilot", cwd=repo).returncode == 0
    data = settings(env)
    data["disableAllHooks"] = True
    (env.home / ".copilot" / "settings.json").write_text(json.dumps(data))
    code, copilot = status(yupana, repo)
    assert code == 3
    assert any("disableAllHooks" in p["problem"] and p["degraded"] for p in copilot["problems"])


def test_a_bare_hand_registration_is_degraded_because_copilot_fails_closed(yupana, env, repo):
    hooks = env.home / ".copilot" / "hooks"
    hooks.mkdir(parents=True)
    (hooks / "guard.json").write_text(json.dumps({"version": 1, "hooks": {"preToolUse": [
        {"type": "command", "bash": "yupana hook pre-edit", "timeoutSec": 30}]}}))
    code, copilot = status(yupana, repo)
    assert code == 3, copilot
    assert any("without the skew-proof wrapper" in p["problem"] and p["degraded"] for p in copilot["problems"])


def test_a_registration_copied_from_claude_codes_docs_is_degraded(yupana, env, repo):
    """Under PreToolUse Copilot sends Claude's tool names with its own fields: without --client copilot
    it reads as Claude Code's, and what an edit introduces is missed."""
    hooks = env.home / ".copilot" / "hooks"
    hooks.mkdir(parents=True)
    wrapped = "out=$(yupana hook pre-edit 2>/dev/null) || exit 0; printf '%s' \"$out\""
    (hooks / "yupana.json").write_text(json.dumps({"version": 1, "hooks": {"PreToolUse": [
        {"matcher": "Edit|Write", "hooks": [{"type": "command", "command": wrapped, "timeout": 5}]}]}}))
    code, copilot = status(yupana, repo)
    assert code == 3
    [problem] = [p for p in copilot["problems"] if "--client copilot" in p["problem"]]
    assert problem["degraded"] and "yupana install copilot" in problem["fix"]


def test_registered_for_the_user_and_the_project_says_each_call_is_checked_twice(yupana, env, repo):
    assert run(yupana, "install", "copilot", cwd=repo).returncode == 0
    assert run(yupana, "install", "copilot", "--project", cwd=repo).returncode == 3
    _code, copilot = status(yupana, repo)
    [twice] = [p for p in copilot["problems"] if "2 places" in p["problem"]]
    assert not twice["degraded"] and "uninstall copilot" in twice["fix"]
    assert not [p for p in copilot["problems"] if "not trusted" in p["problem"]]  # the user's hooks run anyway
