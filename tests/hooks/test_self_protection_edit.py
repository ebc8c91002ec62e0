"""Issue 22 §2 through the real pre-edit hook: the guard's own controls are refused to an agent's
edit, Write or patch, whatever the tenant's scope says, from any cwd, through any symlink, with
the store down; the deny says what was refused and what to do instead, never how to disarm."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from guard_kit import Repo, hook

ENFORCE = '[yupana.policy]\nmode = "enforce"\n'
SCOPE = '[yupana.policy.scopes.polecat-3]\nallow_paths = ["**"]\ndeny_paths = ["src/config.rs"]\n'
DISARMING = ("mode", "self_protection", "config.toml", ".bobbin", "--no-verify", "hooksPath", "enforce", "[yupana")


@pytest.fixture
def repo(tmp_path, env):
    return Repo(tmp_path / "repo", env).config(ENFORCE + SCOPE)


def _write(repo, path, text: str = '[yupana.policy]\nmode = "off"\n', tool: str = "Write", cwd=None) -> dict:
    payload = repo.payload(tool, rel=None)
    payload["tool_input"] = {"file_path": str(path), "content": text}
    if tool == "Edit":
        payload["tool_input"] = {"file_path": str(path), "old_string": "enforce", "new_string": "off"}
    if cwd is not None:
        payload["cwd"] = str(cwd)
    return payload


def _refused(result, kind: str = "config") -> None:
    assert result.denied, result
    assert "ask the operator" in result.reason
    for word in DISARMING:
        assert word not in result.reason, (word, result.reason)


def test_editing_the_project_config_to_switch_the_guard_off_is_refused(env, repo):
    before = (repo.root / ".bobbin" / "config.toml").read_text()
    result = hook(env, _write(repo, repo.root / ".bobbin" / "config.toml", tool="Edit"), "--tenant", "polecat-3")
    _refused(result)
    assert "change the guard's configuration" in result.reason
    rec = env.records("guard")[-1]
    assert rec["result"] == "deny" and rec["rule"] == "self-protection:config" and rec["self_protection"] == ["config"]
    assert {"id": "self-protection:config", "plane": "self_protection", "outcome": "unsatisfied",
            "response": "blocked"} in rec["constraints"]
    assert (repo.root / ".bobbin" / "config.toml").read_text() == before


def test_creating_a_nested_project_config_is_refused_and_the_subtree_stays_guarded(env, repo):
    _refused(hook(env, _write(repo, repo.root / "src" / ".bobbin" / "config.toml"), "--tenant", "polecat-3"))
    denied = hook(env, repo.payload("Edit", rel="src/config.rs"), "--tenant", "polecat-3")
    assert denied.denied and "src/config.rs" in denied.reason  # the tenant's scope still decides that file
    assert hook(env, repo.payload("Edit", rel="src/lib.rs"), "--tenant", "polecat-3").allowed_silently


@pytest.mark.parametrize("where, kind", [
    (lambda repo, env: repo.root / ".claude" / "settings.json", "client"),
    (lambda repo, env: repo.root / ".claude" / "settings.local.json", "client"),
    (lambda repo, env: env.home / ".claude" / "settings.json", "client"),
    (lambda repo, env: env.home / ".codex" / "hooks.json", "client"),
    (lambda repo, env: env.home / ".codex" / "config.toml", "client"),
    (lambda repo, env: repo.root / ".git" / "hooks" / "pre-push", "git_hooks"),
    (lambda repo, env: repo.root / ".git" / "config", "git_config"),
    (lambda repo, env: env.home / ".config" / "bobbin" / "config.toml", "config"),
    (lambda repo, env: env.state / "yupana" / "throttles.jsonl", "state"),
    (lambda repo, env: Path(__import__("yupana").__file__).parent / "cli.py", "install"),
], ids=["claude-project", "claude-local", "claude-user", "codex-hooks", "codex-config", "git-hook", "git-config",
        "user-config", "state", "installation"])
def test_every_control_is_refused_whatever_the_tenant_scope_allows(env, repo, where, kind):
    target = where(repo, env)
    result = hook(env, _write(repo, target, text="{}"), "--tenant", "polecat-3")
    _refused(result)
    assert env.records("guard")[-1]["self_protection"] == [kind]


@pytest.mark.parametrize("rel", ["src/bobbin.rs", "docs/.bobbinrc", ".github/workflows/ci.yml", ".gitignore",
                                 "git/config", "claude/settings.json", ".claude/commands/x.md", "hooks/pre-push"])
def test_ordinary_files_that_look_alike_are_not_controls(env, repo, rel):
    assert hook(env, _write(repo, repo.root / rel, text="x"), "--tenant", "polecat-3").allowed_silently


@pytest.mark.parametrize("tool", ["Edit", "MultiEdit", "NotebookEdit"])
def test_every_edit_tool_is_refused(env, repo, tool):
    payload = repo.payload(tool, rel=".bobbin/config.toml")
    if tool == "MultiEdit":
        payload["tool_input"]["edits"] = [{"old_string": "enforce", "new_string": "off"}]
    if tool == "NotebookEdit":
        payload["tool_input"].update(new_source="x", cell_id="a")
    _refused(hook(env, payload))


def test_a_codex_patch_of_a_control_is_refused(env, repo):
    patch = ("*** Begin Patch\n*** Update File: .bobbin/config.toml\n@@\n-mode = \"enforce\"\n+mode = \"off\"\n"
             "*** End Patch")
    _refused(hook(env, repo.patch(patch)))
    patch = "*** Begin Patch\n*** Add File: src/.bobbin/config.toml\n+[yupana.policy]\n+mode = \"off\"\n*** End Patch"
    _refused(hook(env, repo.patch(patch)))


def test_a_symlink_to_a_control_is_the_control(env, repo, tmp_path):
    (repo.root / "docs").mkdir()
    os.symlink(repo.root / ".bobbin" / "config.toml", repo.root / "docs" / "settings.toml")
    _refused(hook(env, _write(repo, repo.root / "docs" / "settings.toml", tool="Edit")))
    os.symlink(repo.root / ".git" / "hooks", repo.root / "tools")  # a new file through a linked parent
    _refused(hook(env, _write(repo, repo.root / "tools" / "pre-push", text="#!/bin/sh\n")))
    assert not (repo.root / ".git" / "hooks" / "pre-push").exists()


def test_any_cwd_a_control_elsewhere_is_refused_under_the_user_configuration(env, repo, tmp_path):
    env.user_config(ENFORCE)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    _refused(hook(env, _write(repo, env.home / ".codex" / "hooks.json", text="{}", cwd=elsewhere)))
    other = Repo(tmp_path / "other", env)  # an ungoverned repository: the user's mode applies
    _refused(hook(env, _write(repo, other.root / ".git" / "hooks" / "pre-commit", text="", cwd=elsewhere)))


def test_the_store_down_and_no_cache_still_refuses(env, repo):
    repo.config(ENFORCE + '[yupana.quipu]\nenabled = true\nendpoint = "http://127.0.0.1:9"\n')
    result = hook(env, _write(repo, repo.root / ".bobbin" / "config.toml", tool="Edit"))
    _refused(result)


def test_advise_narrows_to_an_advisory_and_off_to_nothing(env, repo):
    repo.config(ENFORCE + 'self_protection = "advise"\n')
    result = hook(env, _write(repo, repo.root / ".git" / "config", text=""))
    assert not result.denied and "enforce would deny" in result.message
    rec = env.records("guard")[-1]
    assert rec["self_protection"] == ["git_config"] and rec["result"] != "deny"
    assert {"id": "self-protection:git_config", "plane": "self_protection", "outcome": "unsatisfied",
            "response": "warned"} in rec["constraints"]
    repo.config(ENFORCE + 'self_protection = "off"\n')
    assert hook(env, _write(repo, repo.root / ".git" / "config", text="")).allowed_silently


def test_mode_is_the_ceiling(env, repo):
    repo.config('[yupana.policy]\nmode = "advise"\n')
    result = hook(env, _write(repo, repo.root / ".claude" / "settings.json", text="{}"))
    assert not result.denied and "enforce would deny" in result.message
    repo.config('[yupana.policy]\nmode = "off"\nself_protection = "enforce"\n')
    assert hook(env, _write(repo, repo.root / ".claude" / "settings.json", text="{}")).allowed_silently


def test_explain_names_self_protection_as_the_decider(env, repo):
    import json

    from conftest import run_yupana

    payload = _write(repo, repo.root / ".git" / "config", text="")
    done = run_yupana(["explain", "--json"], env, stdin=json.dumps(payload), cwd=repo.root)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    found = [f for s in report["stages"] for f in s.get("findings") or () if f["plane"] == "self_protection"]
    assert [(f["id"], f["provenance"]["kind"], f["provenance"]["layer"]) for f in found] == [
        ("self-protection:git_config", "guard", "default")]
    assert env.records() == []  # a dry run writes nothing


def test_a_hard_link_to_a_control_is_the_control(env, repo):
    os.link(repo.root / ".bobbin" / "config.toml", repo.root / "notes.toml")
    _refused(hook(env, _write(repo, repo.root / "notes.toml", tool="Edit")))
    (repo.root / "other.toml").write_text("x")
    os.link(repo.root / "other.toml", repo.root / "other-2.toml")  # two names, neither a control
    assert hook(env, _write(repo, repo.root / "other-2.toml", text="y")).allowed_silently


def test_a_codex_move_into_or_out_of_a_control_is_refused(env, repo):
    repo.file("notes.toml", "mode = \"off\"\n")
    into = ("*** Begin Patch\n*** Update File: notes.toml\n*** Move to: .bobbin/config.toml\n@@\n-mode = \"off\"\n"
            "+mode = \"off\"\n*** End Patch")
    _refused(hook(env, repo.patch(into)))
    away = ("*** Begin Patch\n*** Update File: .bobbin/config.toml\n*** Move to: old.toml\n@@\n-mode = \"enforce\"\n"
            "+mode = \"enforce\"\n*** End Patch")
    _refused(hook(env, repo.patch(away)))
    delete = "*** Begin Patch\n*** Delete File: .bobbin/config.toml\n*** End Patch"
    _refused(hook(env, repo.patch(delete)))
