"""Tamper evidence for the guard's non-config controls (issue 22 §2), through the real CLI: a
hook notices that client settings, the git hook, the git config changed since the last hook
of this project, records ``control_changed`` (looser or not, and what), tells the operator on
stderr and never the model; ``status`` shows the last loosening."""

from __future__ import annotations

import json
import subprocess

import pytest
from guard_kit import Repo, hook

CONFIG = '[yupana.policy]\nmode = "enforce"\n'
OURS = {"hooks": {"PreToolUse": [{"matcher": "Edit|Write|MultiEdit|NotebookEdit", "hooks": [
    {"type": "command", "command": "out=$(/opt/yupana hook pre-edit 2>/dev/null) || exit 0", "timeout": 5}]}]}}


@pytest.fixture
def repo(tmp_path, env) -> Repo:
    repo = Repo(tmp_path / "repo", env).config(CONFIG)
    repo.file(".claude/settings.json", json.dumps(OURS))
    return repo


def edit(env, repo: Repo):
    return hook(env, repo.payload(rel="src/lib.rs"))


def changed(env) -> list[dict]:
    return env.records("control_changed")


def test_the_first_hook_takes_the_baseline_and_an_unchanged_tree_records_nothing(env, repo):
    assert edit(env, repo).allowed_silently
    assert edit(env, repo).allowed_silently
    assert changed(env) == []
    assert list((env.state / "yupana" / "projects").glob("*/controls.json"))


def test_our_registration_removed_from_claude_settings_is_a_loosening(env, repo):
    edit(env, repo)
    settings = repo.root / ".claude" / "settings.json"
    settings.write_text(json.dumps({"hooks": {}}))
    result = edit(env, repo)
    assert result.allowed_silently  # the model is told nothing
    assert "a control of the guard got looser" in result.stderr and str(settings) in result.stderr
    [rec] = changed(env)
    assert rec["file"] == str(settings) and rec["looser"] is True and rec["project"] == str(repo.root)
    assert rec["old_digest"] and rec["new_digest"] and rec["old_digest"] != rec["new_digest"]
    assert rec["loosened"] == ["our hook registration removed or altered: PreToolUse Edit|Write|MultiEdit|NotebookEdit"]
    edit(env, repo)
    assert len(changed(env)) == 1  # recorded once: the next hook has the new baseline


def test_an_env_key_added_to_user_settings_is_a_loosening(env, repo):
    edit(env, repo)
    user = env.home / ".claude" / "settings.local.json"
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text(json.dumps({"env": {"YUPANA_POLICY__MODE": "off"}}))
    edit(env, repo)
    [rec] = changed(env)
    assert rec["file"] == str(user) and rec.get("old_digest") is None and rec["looser"] is True
    assert rec["loosened"] == ["env key added: YUPANA_POLICY__MODE"]


def test_a_harmless_settings_change_is_recorded_but_not_looser(env, repo):
    edit(env, repo)
    settings = repo.root / ".claude" / "settings.json"
    settings.write_text(json.dumps({**OURS, "model": "opus"}))
    edit(env, repo)
    [rec] = changed(env)
    assert rec["looser"] is False and rec["loosened"] == []


def test_core_hooks_path_set_in_git_config_is_a_loosening_seen_by_pre_bash(env, repo):
    bash = {"session_id": "s", "cwd": str(repo.root), "hook_event_name": "PreToolUse", "tool_name": "Bash",
            "tool_input": {"command": "ls"}}
    hook(env, bash, event="pre-bash")
    subprocess.run(["git", "-C", str(repo.root), "config", "core.hooksPath", "/dev/null"], check=True)
    hook(env, bash, event="pre-bash")
    [rec] = changed(env)
    assert rec["file"] == str(repo.root / ".git" / "config") and rec["looser"] is True
    assert rec["loosened"] == ["core.hooksPath set to /dev/null"]


def test_our_git_hook_deleted_is_a_loosening(env, repo):
    pre_push = repo.root / ".git" / "hooks" / "pre-push"
    pre_push.write_text("#!/bin/sh\n# yupana-landing-hook: written by `yupana install git`\nexec yupana hook pre-push\n")
    edit(env, repo)
    pre_push.unlink()
    edit(env, repo)
    [rec] = changed(env)
    assert rec.get("new_digest") is None and rec["looser"] is True and rec["loosened"] == ["yupana's git hook was deleted"]


def test_a_settings_file_replaced_by_a_fifo_is_a_loosening_and_no_hang(env, repo):
    import os

    edit(env, repo)
    settings = repo.root / ".claude" / "settings.json"
    settings.unlink()
    os.mkfifo(settings)
    edit(env, repo)
    [rec] = changed(env)
    assert rec["looser"] is True and rec.get("new_digest") is None and "cannot be read" in rec["loosened"][0]


def test_mode_off_watches_nothing(env, repo):
    repo.config('[yupana.policy]\nmode = "off"\n')
    edit(env, repo)
    (repo.root / ".claude" / "settings.json").write_text("{}")
    edit(env, repo)
    assert changed(env) == [] and not (env.state / "yupana" / "projects").exists()


def test_status_shows_the_last_loosening_with_its_time_and_exits_4(env, repo):
    from conftest import run_yupana

    edit(env, repo)
    done = run_yupana(["status", "--offline", "--json"], env, cwd=repo.root)
    assert json.loads(done.stdout)["tamper"]["last_loosening"] is None
    subprocess.run(["git", "-C", str(repo.root), "config", "core.hooksPath", "/dev/null"], check=True)
    edit(env, repo)
    done = run_yupana(["status", "--offline", "--json"], env, cwd=repo.root)
    assert done.returncode == 4, done.stderr.decode()
    tamper = json.loads(done.stdout)["tamper"]
    assert tamper["warn"] is True and tamper["loosenings"] == 1
    last = tamper["last_loosening"]
    assert last["file"] == str(repo.root / ".git" / "config") and last["loosened"] == ["core.hooksPath set to /dev/null"]
    assert isinstance(last["ts"], int) and last["age_secs"] >= 0
    text = run_yupana(["status", "--offline"], env, cwd=repo.root)
    assert text.returncode == 4
    line = next(x for x in text.stdout.decode().splitlines() if x.startswith("tamper"))
    assert "⚠ last loosening" in line and "core.hooksPath set to /dev/null" in line and "Z" in line


def test_codex_hooks_and_trust_removed_are_loosenings(env, repo):
    codex_home = env.home / ".codex"
    codex_home.mkdir(parents=True, exist_ok=True)
    hooks_json = codex_home / "hooks.json"
    hooks_json.write_text(json.dumps({"hooks": {"PreToolUse": [{"matcher": "apply_patch", "hooks": [
        {"type": "command", "command": "yupana hook pre-edit", "timeout": 5}]}]}}))
    config = codex_home / "config.toml"
    key = f"{hooks_json}:pre_tool_use:0:0"
    config.write_text(f'model = "o4"\n[hooks.state."{key}"]\ntrusted_hash = "abc123"\n')
    edit(env, repo)
    hooks_json.write_text(json.dumps({"hooks": {"PreToolUse": [{"matcher": "apply_patch", "hooks": [
        {"type": "command", "command": "yupana hook pre-edit --mode off", "timeout": 5}]}]}}))
    config.write_text('model = "o4"\n[features]\ncodex_hooks = false\n')
    edit(env, repo)
    by_file = {r["file"]: r for r in changed(env)}
    assert by_file[str(hooks_json)]["looser"] is True
    assert by_file[str(hooks_json)]["loosened"] == ["our hook registration removed or altered: PreToolUse apply_patch"]
    assert by_file[str(config)]["loosened"] == [f"hook trust removed or changed: {key}", "hooks feature switched off"]


def test_a_rehearsal_records_nothing_and_keeps_the_baseline(env, repo, yupana):
    edit(env, repo)
    settings = repo.root / ".claude" / "settings.json"
    settings.write_text("{}")
    done = yupana("explain", "--json", stdin=json.dumps(repo.payload(rel="src/lib.rs")), cwd=repo.root)
    assert done.returncode == 0, done.stderr
    rehearsed = [r for r in json.loads(done.stdout)["records"] if r["kind"] == "control_changed"]
    assert [r["file"] for r in rehearsed] == [str(settings)]  # the dry run says what a live hook would record
    assert changed(env) == []  # explain writes no record
    edit(env, repo)
    assert [r["file"] for r in changed(env)] == [str(settings)]  # the live hook still sees the change


def test_our_git_hook_under_core_hooks_path_is_watched_there(env, repo):
    hooks = repo.root / ".githooks"
    hooks.mkdir()
    pre_push = hooks / "pre-push"
    pre_push.write_text("#!/bin/sh\n# yupana-landing-hook: written by `yupana install git`\nexec yupana hook pre-push\n")
    subprocess.run(["git", "-C", str(repo.root), "config", "core.hooksPath", ".githooks"], check=True)
    edit(env, repo)
    edit(env, repo)  # the second hook knows the hooks path from the first
    pre_push.write_text("#!/bin/sh\nexit 0\n")
    edit(env, repo)
    [rec] = changed(env)
    assert rec["file"] == str(pre_push) and rec["looser"] is True and rec["loosened"] == ["yupana's git hook was replaced"]
