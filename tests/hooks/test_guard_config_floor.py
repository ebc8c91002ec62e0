"""Issue 22 §1-2 through the real hooks: the managed floor, nested configs as tightening layers,
config files that are no regular file, and files reached through a symlink."""

from __future__ import annotations

import json
import os

import pytest
from guard_kit import Repo, hook

TENANT = "polecat-3"
POLICY = f"""
[yupana.policy]
mode = "enforce"
[yupana.policy.scopes.{TENANT}]
deny_paths = ["src/config.rs"]
"""


@pytest.fixture
def repo(tmp_path, env):
    repo = Repo(tmp_path / "repo", env).config(POLICY)
    repo.file("src/config.rs", "old\n")
    repo.file("src/lib.rs", "old\n")
    return repo


def edit(env, repo, rel, cwd=None, **extra):
    payload = repo.payload(rel=rel, **extra)
    if cwd is not None:
        payload["cwd"] = str(cwd)
    return hook(env, payload, "--tenant", TENANT, cwd=cwd or repo.root)


def test_a_nested_config_that_switches_its_subtree_off_does_not(env, repo):
    """The route of issue 22: a Write of src/.bobbin/config.toml holding mode = "off", then an
    edit of src/config.rs. The nested file is a layer under the project, not a new root."""
    nested_text = '[yupana.policy]\nmode = "off"\n'
    write = edit(env, repo, "src/.bobbin/config.toml", tool="Write", content=nested_text)
    assert write.denied and "guard's own controls" in write.reason  # the protected set refuses the Write
    repo.file("src/.bobbin/config.toml", nested_text)  # as if it had been written some other way
    denied = edit(env, repo, "src/config.rs")
    assert denied.denied and "the denied path `src/config.rs`" in denied.reason
    lowered = env.records("config_lowered")
    assert [(r["layer"], r["file"], r["key"], r["value"], r["floor"]) for r in lowered] == [
        ("nested", str(repo.root / "src" / ".bobbin" / "config.toml"), "policy.mode", "off", "enforce")]
    assert "below its floor" in denied.stderr
    edit(env, repo, "src/config.rs")
    assert len(env.records("config_lowered")) == 1  # once per session
    assert env.records("guard")[-1]["mode"] == "enforce"


def test_a_nested_config_can_tighten_its_subtree(env, repo):
    repo.file("src/.bobbin/config.toml", f'[yupana.policy.scopes.{TENANT}]\ndeny_paths = ["src/lib.rs"]\n')
    assert edit(env, repo, "src/lib.rs").denied
    assert edit(env, repo, "other.rs").allowed_silently  # outside the nested subtree
    # arrays replace, so the nested list left out the project's entry: that entry stands, and is said
    assert [(r["key"], r["value"], r["floor"]) for r in env.records("config_lowered")] == [
        (f"policy.scopes.{TENANT}.deny_paths", ["src/lib.rs"], ["src/config.rs", "src/lib.rs"])]
    assert edit(env, repo, "src/config.rs").denied


def test_the_managed_floor_holds_against_the_project_and_the_environment(env, repo):
    env.managed_config(f'[yupana.policy]\nmode = "enforce"\n[yupana.policy.scopes.{TENANT}]\n'
                       'deny_paths = ["src/lib.rs"]\n')
    repo.config(f'[yupana.policy]\nmode = "off"\n[yupana.policy.scopes.{TENANT}]\ndeny_paths = []\n')
    env["YUPANA_POLICY__MODE"] = "advise"
    denied = edit(env, repo, "src/lib.rs")
    assert denied.denied and "src/lib.rs" in denied.reason
    seen = {(r["layer"], r["key"]) for r in env.records("config_lowered")}
    assert seen == {("project", "policy.mode"), ("env", "policy.mode"),
                    ("project", f"policy.scopes.{TENANT}.deny_paths")}


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_a_config_that_is_no_regular_file_is_a_loud_fail_open_not_a_hang(env, repo, kind):
    path = repo.root / ".bobbin" / "config.toml"
    path.unlink()
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/zero")
    result = edit(env, repo, "src/config.rs")  # run_yupana's timeout fails a hang
    assert not result.denied and "configuration error" in result.message
    assert str(path) in result.message and ("FIFO" in result.message or "/dev/zero" in result.message)
    fails = [r for r in env.records("fail_open") if r["fail_kind"] == "config"]
    assert len(fails) == 1 and str(path) in fails[0]["reason"]
    assert env.records("state_file") == []  # said once, as what it is: a config error


def test_config_override_that_is_a_fifo_is_refused_too(env, repo, tmp_path):
    fifo = tmp_path / "cfg.toml"
    os.mkfifo(fifo)
    result = hook(env, repo.payload(rel="src/lib.rs"), "--config", str(fifo), cwd=repo.root)
    assert not result.denied and "FIFO" in result.message


def test_a_file_reached_through_a_symlink_from_outside_with_the_cwd_outside(env, repo, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "s").symlink_to(repo.root / "src")
    payload = repo.payload(rel="src/config.rs")
    payload["tool_input"]["file_path"] = str(elsewhere / "s" / "config.rs")
    payload["cwd"] = str(elsewhere)
    denied = hook(env, payload, "--tenant", TENANT, cwd=elsewhere)
    assert denied.denied and "src/config.rs" in denied.reason
    ok = dict(payload, tool_input={**payload["tool_input"], "file_path": str(elsewhere / "s" / "lib.rs")})
    assert hook(env, ok, "--tenant", TENANT, cwd=elsewhere).allowed_silently


def test_a_changed_config_file_is_recorded_with_whether_it_loosened(env, repo):
    assert edit(env, repo, "src/lib.rs").allowed_silently  # the first resolution: nothing to compare
    assert env.records("control_changed") == []
    repo.config(POLICY.replace('"enforce"', '"advise"'))
    edit(env, repo, "src/lib.rs")
    changed = env.records("control_changed")
    assert len(changed) == 1
    entry = changed[0]
    assert entry["file"] == str(repo.root / ".bobbin" / "config.toml") and entry["project"] == str(repo.root)
    assert entry["looser"] is True and entry["loosened"] == ["policy.mode"]
    assert entry["old_digest"] != entry["new_digest"] and len(entry["new_digest"]) == 40
    repo.config(POLICY + '[yupana.policy.scopes.other]\ndeny_paths = ["x"]\n')
    edit(env, repo, "src/lib.rs")
    tighter = env.records("control_changed")[-1]
    assert tighter["looser"] is False and tighter["loosened"] == []
    user = env.user_config('[yupana.policy]\nmode = "enforce"\n')
    edit(env, repo, "src/lib.rs")
    appeared = env.records("control_changed")[-1]
    assert (appeared["file"], appeared.get("old_digest")) == (str(user), None)  # null: omitted, as every absent value
    user.unlink()
    edit(env, repo, "src/lib.rs")
    gone = env.records("control_changed")[-1]
    assert (gone["file"], gone.get("new_digest"), gone["looser"]) == (str(user), None, False)


def _bash(env, cwd, command: str):
    from conftest import run_yupana

    payload = {"session_id": "s", "cwd": str(cwd), "hook_event_name": "PreToolUse", "tool_name": "Bash",
               "tool_input": {"command": command}}
    done = run_yupana(["hook", "pre-bash"], {**env, "BOBBIN_ROLE": TENANT}, stdin=json.dumps(payload), cwd=cwd)
    assert done.returncode == 0, done.stderr
    return done


def test_pre_bash_in_a_subtree_whose_nested_config_says_off_is_still_scoped(env, repo):
    repo.config(f'[yupana.policy]\nmode = "enforce"\naction_scope = "enforce"\n[yupana.policy.scopes.{TENANT}]\n'
                'allow_targets = ["host:build-*"]\n')
    repo.file("src/.bobbin/config.toml", '[yupana.policy]\nmode = "off"\naction_scope = "off"\n')
    denied = _bash(env, repo.root / "src", "ssh prod.example.com uptime").stdout.decode()
    assert '"permissionDecision":"deny"' in denied.replace(" ", "")
    assert {r["key"] for r in env.records("config_lowered")} == {"policy.mode", "policy.action_scope"}


def test_explain_names_the_nested_layers_and_says_the_same_deny(env, repo, yupana):
    repo.file("src/.bobbin/config.toml", '[yupana.policy]\nmode = "off"\n')
    payload = repo.payload(rel="src/config.rs")
    report = json.loads(yupana("explain", "--json", "--tenant", TENANT, stdin=json.dumps(payload),
                               cwd=repo.root).stdout)
    assert report["decision"] == "deny"
    assert report["invocation"]["project"] == {"root": str(repo.root), "found": "file",
                                               "nested": [str(repo.root / "src")]}
    text = yupana("explain", "--tenant", TENANT, stdin=json.dumps(payload), cwd=repo.root).stdout.decode()
    assert f"nested, tightening only: {repo.root / 'src'}" in text


def test_a_loosened_managed_floor_is_recorded_as_a_control_change(env, repo):
    managed = env.managed_config('[yupana.policy]\nmode = "enforce"\n')
    repo.config('[yupana.policy]\nmode = "off"\n')
    edit(env, repo, "src/lib.rs")
    managed.write_text('[yupana.policy]\nmode = "advise"\n')
    edit(env, repo, "src/lib.rs")
    changed = env.records("control_changed")
    assert [(c["file"], c["looser"], c["loosened"]) for c in changed] == [(str(managed), True, ["policy.mode"])]


def test_pre_bash_from_a_cwd_reached_through_a_symlink_is_governed_by_the_real_project(env, repo, tmp_path):
    repo.config(f'[yupana.policy]\nmode = "enforce"\naction_scope = "enforce"\n[yupana.policy.scopes.{TENANT}]\n'
                'allow_targets = ["host:build-*"]\n')
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "s").symlink_to(repo.root / "src")
    denied = _bash(env, elsewhere / "s", "ssh prod.example.com uptime").stdout.decode()
    assert '"permissionDecision":"deny"' in denied.replace(" ", "")


def test_config_check_and_status_in_the_subtree_show_the_nested_file_and_what_it_tried(env, repo, yupana):
    nested = repo.file("src/.bobbin/config.toml", '[yupana.policy]\nmode = "off"\n')
    text = yupana("config", "check", cwd=repo.root / "src").stdout.decode()
    assert f"nested    {nested}" in text and "mode      enforce" in text
    assert f"lowered   ⚠ nested {nested}: policy.mode = \"off\" is below its floor \"enforce\"" in text
    done = yupana("status", "--json", "--offline", cwd=repo.root / "src")
    out = json.loads(done.stdout)
    assert done.returncode == 4 and out["policy"]["mode"] == "enforce" and out["root"] == str(repo.root)
    assert [(e["layer"], e["key"]) for e in out["config"]["lowered"]] == [("nested", "policy.mode")]
    at_root = yupana("status", "--json", "--offline", cwd=repo.root)
    assert at_root.returncode == 0 and json.loads(at_root.stdout)["config"]["lowered"] == []


def test_a_codex_patch_touching_a_nested_subtree_and_the_root_judges_each_under_its_layers(env, repo):
    repo.file("src/.bobbin/config.toml", '[yupana.policy]\nmode = "off"\n')
    repo.file("top.rs", "old\n")
    patch = ("*** Begin Patch\n*** Update File: top.rs\n@@\n-old\n+new\n"
             "*** Update File: src/config.rs\n@@\n-old\n+new\n*** End Patch\n")
    denied = hook(env, repo.patch(patch), "--tenant", TENANT, cwd=repo.root)
    assert denied.denied and "src/config.rs" in denied.reason
    assert [r["layer"] for r in env.records("config_lowered")] == ["nested"]
