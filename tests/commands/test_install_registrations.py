"""``yupana install`` never weakens or takes over a registration (issue 23 §4), through the real CLI.

Carried flags (--tenant/--config), what is ours (only our wrapper or a bare ``yupana … hook X``),
settings written back exactly (numbers, lone surrogates), Codex's config.toml with ``'''``
strings, and the settings file locked while it is merged.
"""

from __future__ import annotations

import json
import subprocess
import sys
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
    env["PATH"] = "/usr/bin:/bin"
    env.pop("CODEX_HOME", None)
    return root


def yupana(env, *args, cwd):
    proc = run_yupana(list(args), env, cwd=cwd)
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


def settings_path(repo: Path) -> Path:
    return repo / ".claude" / "settings.json"


def write_settings(repo: Path, data: dict | str) -> Path:
    path = settings_path(repo)
    path.parent.mkdir(exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def commands(repo: Path) -> list[tuple[str, str]]:
    data = json.loads(settings_path(repo).read_text())
    return [(event, h["command"]) for event, groups in data.get("hooks", {}).items() for g in groups for h in g["hooks"]]


def handler(command: str) -> dict:
    return {"type": "command", "command": command}


def deny_decision(env, repo: Path, command: str, path: str) -> str | None:
    """Run a registered command as Claude Code would, with no $BOBBIN_ROLE: the decision, if any."""
    payload = {"session_id": "s", "cwd": str(repo), "hook_event_name": "PreToolUse", "tool_name": "Write",
               "tool_input": {"file_path": str(repo / path), "content": "x"}}
    run_env = {k: v for k, v in env.items() if k != "BOBBIN_ROLE"}
    done = subprocess.run(["/bin/sh", "-c", command], input=json.dumps(payload).encode(), capture_output=True,
                          env=run_env, cwd=repo, timeout=60)
    assert done.returncode == 0
    return json.loads(done.stdout)["hookSpecificOutput"]["permissionDecision"] if done.stdout.strip() else None


TENANT_POLICY = '[yupana.policy]\nmode = "enforce"\n[yupana.policy.scopes.polecat-3]\ndeny_paths = ["secrets/**"]\n'


# ── flags carried ───────────────────────────────────────────────────────────────────────


def test_an_upgrade_keeps_the_registrations_tenant_and_its_deny_paths_still_deny(env, repo):
    (repo / ".bobbin").mkdir()
    (repo / ".bobbin" / "config.toml").write_text(TENANT_POLICY)
    write_settings(repo, {"hooks": {"PreToolUse": [
        {"matcher": EDIT, "hooks": [handler("yupana hook pre-edit --tenant polecat-3")]}]}})
    rc, out, err = yupana(env, "install", "claude", cwd=repo)
    assert rc == 0, err
    assert "updated pre-edit" in out and "added pre-bash" in out
    registered = commands(repo)
    assert len(registered) == 3 and all("--tenant polecat-3" in c for _e, c in registered)  # the new ones too
    [pre_edit] = [c for e, c in registered if "hook pre-edit" in c]
    assert pre_edit.startswith(f"out=$({YUPANA} hook pre-edit --tenant polecat-3 2>/dev/null)")
    assert deny_decision(env, repo, pre_edit, "secrets/k") == "deny"
    rc, out, _ = yupana(env, "install", "claude", cwd=repo)  # and a second run keeps it, changing nothing
    assert rc == 0 and "no change" in out


def test_install_takes_tenant_and_config_into_the_commands(env, repo, tmp_path):
    cfg = tmp_path / "fleet.toml"
    cfg.write_text(TENANT_POLICY)
    rc, out, err = yupana(env, "install", "claude", "--tenant", "polecat-3", "--config", str(cfg), cwd=repo)
    assert rc == 0, err
    registered = commands(repo)
    assert all(f"--tenant polecat-3 --config {cfg} 2>/dev/null" in c for _e, c in registered)
    [pre_edit] = [c for e, c in registered if "hook pre-edit" in c]
    assert deny_decision(env, repo, pre_edit, "secrets/k") == "deny"
    assert deny_decision(env, repo, pre_edit, "src/k") is None
    # a changed tenant on the command line replaces the carried one
    rc, out, _ = yupana(env, "install", "claude", "--tenant", "polecat-4", cwd=repo)
    assert rc == 0 and "updated pre-edit" in out
    assert all(f"--tenant polecat-4 --config {cfg}" in c for _e, c in commands(repo))


def test_a_missing_config_is_a_clear_error_that_writes_nothing(env, repo, tmp_path):
    rc, _out, err = yupana(env, "install", "claude", "--config", str(tmp_path / "nope.toml"), cwd=repo)
    assert rc == 1 and "no such file" in err and "nothing was written" in err
    assert not settings_path(repo).exists()


def test_registrations_that_disagree_on_the_tenant_are_not_merged_into_one_silently(env, repo):
    before = {"hooks": {"PreToolUse": [
        {"matcher": EDIT, "hooks": [handler("yupana hook pre-edit --tenant a")]},
        {"matcher": EDIT, "hooks": [handler("yupana hook pre-edit --tenant b")]}]}}
    path = write_settings(repo, before)
    rc, _out, err = yupana(env, "install", "claude", cwd=repo)
    assert rc == 1 and "--tenant a" in err and "--tenant b" in err and "nothing was written" in err
    assert json.loads(path.read_text()) == before
    rc, _out, err = yupana(env, "install", "claude", "--tenant", "a", cwd=repo)
    assert rc == 0, err
    assert [c.count("--tenant a") for _e, c in commands(repo)] == [1, 1, 1]


# ── ours is only ours ───────────────────────────────────────────────────────────────────


def test_a_users_command_around_yupana_is_neither_replaced_nor_removed_and_is_named(env, repo):
    theirs = "/opt/secscan/check.sh && yupana hook pre-edit"
    mention = "echo 'remember: yupana hook post-edit runs after edits' >> /tmp/log"
    write_settings(repo, {"hooks": {"PreToolUse": [{"matcher": EDIT, "hooks": [handler(theirs)]}],
                                    "PostToolUse": [{"matcher": EDIT, "hooks": [handler(mention)]}]}})
    rc, out, err = yupana(env, "install", "claude", cwd=repo)
    assert rc == 0, err
    assert theirs in err and "not replaced" in err and "added pre-edit" in out
    registered = commands(repo)
    assert ("PreToolUse", theirs) in registered and ("PostToolUse", mention) in registered
    assert len([c for _e, c in registered if c.startswith("out=$(")]) == 3
    rc, out, err = yupana(env, "uninstall", "claude", cwd=repo)
    assert rc == 0 and "not removed" in err and mention in err
    assert commands(repo) == [("PreToolUse", theirs), ("PostToolUse", mention)]


@pytest.mark.parametrize("command", [
    "yupana hook pre-edit",
    "/usr/local/bin/yupana --tenant t hook pre-edit --config=/etc/y.toml",
    "'/opt/my tools/yupana' hook pre-edit --json",
    "python3 -m yupana hook pre-edit",
    "out=$(yupana hook pre-edit 2>/dev/null) || exit 0",
])
def test_our_registrations_by_hand_are_upgraded_in_place(env, repo, command):
    write_settings(repo, {"hooks": {"PreToolUse": [{"matcher": EDIT, "hooks": [handler(command)]}]}})
    rc, out, err = yupana(env, "install", "claude", cwd=repo)
    assert rc == 0 and "updated pre-edit" in out and "not replaced" not in err, err
    assert command not in [c for _e, c in commands(repo)] and len(commands(repo)) == 3


@pytest.mark.parametrize("command", [
    "yupana hook pre-edit; curl evil.example",
    "yupana hook pre-edit | tee /tmp/x",
    "yupana hook pre-edit --tenant $(whoami)",
    "notyupana hook pre-edit",
    "sh -c 'yupana hook pre-edit'",
])
def test_anything_more_than_a_plain_yupana_command_is_the_users(env, repo, command):
    write_settings(repo, {"hooks": {"PreToolUse": [{"matcher": EDIT, "hooks": [handler(command)]}]}})
    rc, _out, err = yupana(env, "uninstall", "claude", cwd=repo)
    assert rc == 0 and "not removed" in err
    assert commands(repo) == [("PreToolUse", command)]


# ── the file written back exactly ───────────────────────────────────────────────────────


def test_numbers_are_written_back_as_they_were_read(env, repo):
    path = write_settings(repo, '{"huge": 1e400, "money": 1.50, "tiny": -2.5E-3, "big": 123456789012345678901234567890}')
    rc, _out, err = yupana(env, "install", "claude", cwd=repo)
    assert rc == 0, err
    text = path.read_text()
    assert '"huge": 1e400,' in text and '"money": 1.50,' in text and '"tiny": -2.5E-3,' in text
    assert '"big": 123456789012345678901234567890,' in text and "Infinity" not in text

    def strict(name):
        raise ValueError(f"not JSON: {name}")

    json.loads(text, parse_constant=strict)  # still JSON a client can read
    rc, _out, err = yupana(env, "uninstall", "claude", cwd=repo)
    assert rc == 0, err
    assert json.loads(path.read_text(), parse_float=str) == {"huge": "1e400", "money": "1.50", "tiny": "-2.5E-3",
                                                             "big": 123456789012345678901234567890}


def test_a_lone_surrogate_is_kept_as_its_escape_not_a_traceback(env, repo):
    path = write_settings(repo, '{"note": "a\\ud800b", "pair": "\\ud83d\\ude00"}')
    rc, _out, err = yupana(env, "install", "claude", cwd=repo)
    assert rc == 0 and "Traceback" not in err, err
    text = path.read_text()
    assert '"note": "a\\ud800b"' in text
    assert json.loads(text)["note"] == "a\ud800b" and json.loads(text)["pair"] == "\U0001F600"


# ── Codex config.toml ───────────────────────────────────────────────────────────────────


@pytest.mark.parametrize("tricky", [
    "note = \"it's a ''' in a string\"\n",
    "note = 'three \"\"\" quotes'\n# a comment with ''' in it\n",
    "multi = '''\nline [hooks.state.\"x\"]\n'''\n",
    "[[servers]]\nname = \"a\"\n",
])
def test_codex_uninstall_edits_a_config_toml_whose_strings_hold_triple_quotes(env, repo, tricky):
    home = env.home / ".codex"
    home.mkdir()
    hooks = home / "hooks.json"
    assert yupana(env, "install", "codex", cwd=repo)[0] == 3  # registered; no codex binary to trust them
    keys = [f"{hooks}:{k}" for k in ("pre_tool_use:0:0", "pre_tool_use:1:0", "post_tool_use:0:0")]
    trust = "".join(f'[hooks.state."{k}"]\ntrusted_hash = "sha256:00"\n\n' for k in keys)
    config = home / "config.toml"
    config.write_text('model = "gpt-5.5"\n' + tricky + "\n" + trust + "[features]\napps = false\n")
    rc, out, err = yupana(env, "uninstall", "codex", cwd=repo)
    assert rc == 0, err
    assert "removed 3 trust entries of ours" in out
    assert config.read_text() == 'model = "gpt-5.5"\n' + tricky + "\n" + "[features]\napps = false\n"


# ── the lock ────────────────────────────────────────────────────────────────────────────


def test_install_waits_for_the_lock_and_merges_into_what_the_file_holds_then(env, repo, tmp_path):
    import fcntl
    import os
    import time

    path = write_settings(repo, {"model": "sonnet"})
    fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
    fcntl.flock(fd, fcntl.LOCK_EX)  # another merge is under way
    err_path = tmp_path / "install.err"
    with err_path.open("wb") as err:
        proc = subprocess.Popen([sys.executable, "-m", "yupana", "install", "claude"], env=env, cwd=repo,
                                stdout=subprocess.PIPE, stderr=err)
    try:
        deadline = time.monotonic() + 60
        while "waiting for the lock" not in err_path.read_text() and proc.poll() is None:
            assert time.monotonic() < deadline, "install neither waited nor finished"
            time.sleep(0.05)
        assert proc.poll() is None, f"install did not wait for the lock: {err_path.read_text()}"
        path.write_text(json.dumps({"model": "opus", "permissions": {"allow": ["Bash(ls:*)"]}}))  # the other's edit
    finally:
        os.close(fd)
    proc.communicate(timeout=60)
    assert proc.returncode == 0, err_path.read_text()
    settings = json.loads(path.read_text())
    assert settings["model"] == "opus" and settings["permissions"] == {"allow": ["Bash(ls:*)"]}
    assert len(commands(repo)) == 3


def test_codex_upgrade_keeps_the_tenant_too(env, repo):
    home = env.home / ".codex"
    home.mkdir()
    (home / "hooks.json").write_text(json.dumps({"hooks": {"PreToolUse": [
        {"matcher": "apply_patch", "hooks": [handler("yupana --tenant polecat-3 hook pre-edit")]}]}}))
    rc, out, err = yupana(env, "install", "codex", cwd=repo)
    assert rc == 3 and "updated pre-edit" in out, err  # registered; no codex binary to trust them
    data = json.loads((home / "hooks.json").read_text())
    registered = [h["command"] for gs in data["hooks"].values() for g in gs for h in g["hooks"]]
    assert len(registered) == 3 and all("hook pre-edit --tenant polecat-3" in c or "--tenant polecat-3 2>" in c
                                         for c in registered)


def test_tenant_and_config_are_refused_for_the_git_hook_with_the_reason(env, repo):
    rc, _out, err = yupana(env, "install", "git", "--tenant", "t", cwd=repo)
    assert rc == 1 and "the git pre-push hook takes neither" in err
    assert not (repo / ".git" / "hooks" / "pre-push").exists()


def test_real_codex_trusts_the_tenant_registration_and_a_rerun_keeps_it(env, repo):
    from commands.test_install import CONFIG, codex_bin, isolated_yupana

    codex = codex_bin()
    env["CODEX_HOME"] = str(env.base / "codexhome")
    home = Path(env["CODEX_HOME"])
    home.mkdir()
    (home / "config.toml").write_text(CONFIG)
    rc, out, err = isolated_yupana(env, "install", "codex", "--tenant", "polecat-3", "--codex-bin", codex, cwd=repo)
    assert rc == 0 and "codex app-server reports all 3 trusted" in out, err
    before = (home / "hooks.json").read_text()
    assert before.count("--tenant polecat-3") == 3
    rc, out, err = isolated_yupana(env, "install", "codex", "--codex-bin", codex, cwd=repo)  # no --tenant: kept
    assert rc == 0 and "already registered and trusted" in out, err
    assert (home / "hooks.json").read_text() == before
