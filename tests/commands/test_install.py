"""``yupana install|uninstall claude|codex`` through the real CLI, on real files.

The Codex trust half needs the real ``codex app-server``; those tests skip without the
pinned client (tests/clients/kit.py says how .ci/run installs it).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from conftest import run_yupana

YUPANA = str(Path(sys.executable).with_name("yupana"))
EDIT = "Edit|Write|MultiEdit|NotebookEdit"


@pytest.fixture
def repo(tmp_path, env):
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    env["PATH"] = "/usr/bin:/bin"  # no codex on PATH unless a test puts it there
    env.pop("CODEX_HOME", None)
    return root


def yupana(env, *args, cwd):
    proc = run_yupana(list(args), env, cwd=cwd)
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


def ours(settings: dict) -> list[tuple[str, str, str, int]]:
    out = []
    for event, groups in settings.get("hooks", {}).items():
        for g in groups:
            for h in g["hooks"]:
                if " hook " in h.get("command", "") and "yupana" in h["command"]:
                    out.append((event, g["matcher"], h["command"], h["timeout"]))
    return out


def wrapper(event: str) -> str:
    return f"out=$({YUPANA} hook {event} 2>/dev/null) || exit 0; printf '%s' \"$out\""


# ── Claude Code ─────────────────────────────────────────────────────────────────────────


def test_install_claude_writes_the_three_wrapped_hooks_with_this_yupanas_absolute_path(env, repo):
    (repo / "src").mkdir()
    rc, out, err = yupana(env, "install", "claude", cwd=repo / "src")  # the project is the git top-level
    assert rc == 0, err
    settings = json.loads((repo / ".claude" / "settings.json").read_text())
    assert ours(settings) == [("PreToolUse", EDIT, wrapper("pre-edit"), 5), ("PreToolUse", "Bash", wrapper("pre-bash"), 5),
                              ("PostToolUse", EDIT, wrapper("post-edit"), 5)]
    assert "added pre-edit" in out and "added pre-bash (Bash)" in out and "mode = \"enforce\"" in out


def test_the_installed_command_runs_yupana_and_denies_for_the_client(env, repo):
    (repo / ".bobbin").mkdir()
    (repo / ".bobbin" / "config.toml").write_text(
        '[yupana.policy]\nmode = "enforce"\n[yupana.policy.scopes.t]\ndeny_paths = ["secrets/**"]\n')
    assert yupana(env, "install", "claude", cwd=repo)[0] == 0
    [(_, _, command, _)] = [h for h in ours(json.loads((repo / ".claude/settings.json").read_text()))
                            if h[1] == EDIT and h[0] == "PreToolUse"]
    payload = {"session_id": "s", "cwd": str(repo), "hook_event_name": "PreToolUse", "tool_name": "Write",
               "tool_input": {"file_path": str(repo / "secrets" / "k"), "content": "x"}}
    done = subprocess.run(["/bin/sh", "-c", command], input=json.dumps(payload).encode(), capture_output=True,
                          env={**env, "BOBBIN_ROLE": "t", "PATH": "/usr/bin:/bin"}, timeout=60)
    assert done.returncode == 0
    assert json.loads(done.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_install_merges_without_touching_other_keys_or_hooks_and_is_idempotent(env, repo):
    theirs = {"model": "opus", "permissions": {"allow": ["Bash(ls:*)"]},
              "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "lint.sh"}]}],
                        "Stop": [{"hooks": [{"type": "command", "command": "notify.sh"}]}]}}
    path = repo / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(json.dumps(theirs))
    assert yupana(env, "install", "claude", "--project", cwd=repo)[0] == 0
    settings = json.loads(path.read_text())
    assert settings["model"] == "opus" and settings["permissions"] == theirs["permissions"]
    assert settings["hooks"]["Stop"] == theirs["hooks"]["Stop"]
    assert settings["hooks"]["PreToolUse"][0] == theirs["hooks"]["PreToolUse"][0]  # theirs keeps its place
    assert len(ours(settings)) == 3
    first = path.read_bytes()
    rc, out, _ = yupana(env, "install", "claude", cwd=repo)
    assert rc == 0 and "already registered" in out and "no change" in out
    assert path.read_bytes() == first


def test_install_upgrades_the_old_docs_snippet_in_place_and_adds_the_missing_bash_entry(env, repo):
    old = {"hooks": {"PreToolUse": [{"matcher": EDIT, "hooks": [
        {"type": "command", "command": "yupana hook pre-edit", "timeout": 30}]}]}}
    path = repo / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(json.dumps(old))
    rc, out, _ = yupana(env, "install", "claude", cwd=repo)
    assert rc == 0 and "updated pre-edit" in out and "added pre-bash" in out
    assert ours(json.loads(path.read_text()))[0] == ("PreToolUse", EDIT, wrapper("pre-edit"), 5)


def test_dry_run_prints_the_diff_and_writes_nothing(env, repo):
    rc, out, _ = yupana(env, "install", "claude", "--dry-run", cwd=repo)
    assert rc == 0 and not (repo / ".claude").exists()
    assert out.startswith("--- /dev/null\n+++ ") and '"matcher": "Bash",' in out
    assert "hook pre-bash" in out and "not written" in out
    path = repo / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text('{"model": "opus"}')
    rc, out, _ = yupana(env, "install", "claude", "--dry-run", cwd=repo)
    assert rc == 0 and path.read_text() == '{"model": "opus"}'
    assert '-{"model": "opus"}' in out and '+  "model": "opus",' in out


@pytest.mark.parametrize("text", ['{"hooks": {"PreToolUse": [', "[1, 2]", '{"hooks": []}'])
def test_bad_existing_settings_are_a_clear_error_that_loses_nothing(env, repo, text):
    path = repo / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(text)
    rc, _out, err = yupana(env, "install", "claude", cwd=repo)
    assert rc == 1 and str(path) in err and "nothing was written" in err
    assert path.read_text() == text and os.listdir(path.parent) == ["settings.json"]


def test_user_scope_writes_the_home_settings(env, repo):
    assert yupana(env, "install", "claude", "--user", cwd=repo)[0] == 0
    assert len(ours(json.loads((env.home / ".claude" / "settings.json").read_text()))) == 3
    assert not (repo / ".claude").exists()


def test_uninstall_removes_only_ours(env, repo):
    theirs = {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "lint.sh"}]}]},
              "model": "opus"}
    path = repo / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(json.dumps(theirs))
    assert yupana(env, "install", "claude", cwd=repo)[0] == 0
    rc, out, _ = yupana(env, "uninstall", "claude", cwd=repo)
    assert rc == 0 and "removed pre-edit" in out
    assert json.loads(path.read_text()) == theirs
    rc, out, _ = yupana(env, "uninstall", "claude", cwd=repo)
    assert rc == 0 and "nothing to remove" in out


def test_a_symlinked_settings_file_is_edited_through_the_link_keeping_its_mode(env, repo, tmp_path):
    real = tmp_path / "dotfiles" / "settings.json"
    real.parent.mkdir()
    real.write_text("{}")
    real.chmod(0o600)
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").symlink_to(real)
    assert yupana(env, "install", "claude", cwd=repo)[0] == 0
    assert (repo / ".claude" / "settings.json").is_symlink()
    assert len(ours(json.loads(real.read_text()))) == 3 and (real.stat().st_mode & 0o777) == 0o600


# ── Codex ───────────────────────────────────────────────────────────────────────────────

# a user's config, with everything that would leave the machine switched off (the app-server reads it)
CONFIG = ('# my settings\nmodel = "gpt-5.5"   # keep this comment\ncheck_for_update_on_startup = false\n\n'
          '[features]\nplugins = false\napps = false\nremote_plugin = false\nin_app_updates = false\n\n'
          '[analytics]\nenabled = false\n')
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "clients"))
import kit  # noqa: E402


def codex_bin() -> str:
    return kit.need("codex")


def isolated_yupana(env, *args, cwd):
    """The CLI inside a private network namespace (it starts codex app-server) when the machine allows it."""
    proc = subprocess.run(kit.isolated([sys.executable, "-m", "yupana", *args]), env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=120)
    return proc.returncode, proc.stdout, proc.stderr


def hooks_list(env, codex: str, cwd) -> list[dict]:
    code = ("import json, sys\nfrom yupana.clients.install import codex_hooks as install_codex\n"
            "print(json.dumps(install_codex.hooks_list([sys.argv[1]], sys.argv[2])))")
    done = subprocess.run(kit.isolated([sys.executable, "-c", code, codex, str(cwd)]), env=env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_install_codex_without_a_codex_binary_registers_but_says_the_hooks_are_not_trusted(env, repo):
    home = env.home / ".codex"
    home.mkdir()
    (home / "config.toml").write_text(CONFIG)
    rc, _out, err = yupana(env, "install", "codex", cwd=repo)
    assert rc == 3
    assert "NOT trusted" in err and "skips an untrusted hook silently" in err and "/hooks" in err
    hooks = json.loads((home / "hooks.json").read_text())
    assert [(e, g["matcher"]) for e, gs in hooks["hooks"].items() for g in gs] == [
        ("PreToolUse", "apply_patch"), ("PreToolUse", "Bash"), ("PostToolUse", "apply_patch")]
    assert (home / "config.toml").read_text() == CONFIG


def test_install_codex_trusts_its_hooks_through_the_app_server_and_keeps_the_rest_of_config_toml(env, repo):
    codex = codex_bin()
    env["CODEX_HOME"] = str(env.base / "codexhome")
    home = Path(env["CODEX_HOME"])
    home.mkdir()
    (home / "config.toml").write_text(CONFIG)
    rc, out, err = isolated_yupana(env, "install", "codex", "--codex-bin", codex, cwd=repo)
    assert rc == 0, err
    assert "codex app-server reports all 3 trusted" in out
    text = (home / "config.toml").read_text()
    assert text.startswith(CONFIG)  # every byte of the user's file is still there, in place
    state = tomllib.loads(text)["hooks"]["state"]
    assert sorted(state) == sorted(f"{home}/hooks.json:{k}" for k in ("pre_tool_use:0:0", "pre_tool_use:1:0",
                                                                         "post_tool_use:0:0"))
    assert all(v["trusted_hash"].startswith("sha256:") for v in state.values())

    rc, out, _ = isolated_yupana(env, "install", "codex", "--codex-bin", codex, cwd=repo)
    assert rc == 0 and "already registered and trusted" in out
    assert (home / "config.toml").read_text() == text

    rc, out, _ = yupana(env, "uninstall", "codex", cwd=repo)
    assert rc == 0
    assert (home / "config.toml").read_text() == CONFIG
    assert json.loads((home / "hooks.json").read_text()) == {}


def test_a_changed_hook_is_re_trusted_and_uninstall_carries_a_moved_hooks_trust(env, repo):
    codex = codex_bin()
    env["CODEX_HOME"] = str(env.base / "codexhome")
    home = Path(env["CODEX_HOME"])
    home.mkdir()
    (home / "config.toml").write_text(CONFIG)
    assert isolated_yupana(env, "install", "codex", "--codex-bin", codex, cwd=repo)[0] == 0
    # the user adds a hook of their own after ours (trusted below)
    hooks = json.loads((home / "hooks.json").read_text())
    hooks["hooks"]["PreToolUse"].append({"matcher": "Bash", "hooks": [{"type": "command", "command": "audit.sh"}]})
    (home / "hooks.json").write_text(json.dumps(hooks))
    # and edits our timeout: install puts it back, and that is the very hook that was trusted
    hooks["hooks"]["PreToolUse"][0]["hooks"][0]["timeout"] = 9
    (home / "hooks.json").write_text(json.dumps(hooks))
    rc, out, err = isolated_yupana(env, "install", "codex", "--codex-bin", codex, cwd=repo)
    assert rc == 0 and "updated pre-edit" in out and "all 3 hooks already trusted" in out, err
    # a trust entry that no longer matches (another yupana was trusted there) is re-asked and rewritten
    config = home / "config.toml"
    config.write_text(config.read_text().replace("trusted_hash = \"sha256:", "trusted_hash = \"sha256:0", 1))
    rc, out, err = isolated_yupana(env, "install", "codex", "--codex-bin", codex, cwd=repo)
    assert rc == 0 and "trusted 1 hook(s)" in out and "reports all 3 trusted" in out, err
    from yupana.clients.install import codex_toml as install_toml

    listed = hooks_list(env, codex, repo)
    audit = next(h for h in listed if h["command"] == "audit.sh")
    assert audit["key"].endswith(":pre_tool_use:2:0") and audit["trustStatus"] == "untrusted"
    config.write_text(install_toml.edit(config.read_text(), {audit["key"]: audit["currentHash"]}))

    rc, out, err = yupana(env, "uninstall", "codex", cwd=repo)
    assert rc == 0 and "carried trust of 1 other hook" in out, err
    [audit] = hooks_list(env, codex, repo)
    assert audit["key"].endswith(":pre_tool_use:0:0") and audit["trustStatus"] == "trusted"
    assert not [k for k in tomllib.loads(config.read_text())["hooks"]["state"] if not k.endswith("pre_tool_use:0:0")]


def test_codex_refuses_project_or_user_flags(env, repo):
    rc, _, err = yupana(env, "install", "codex", "--project", cwd=repo)
    assert rc == 1 and "CODEX_HOME" in err
