"""``yupana install|uninstall qwen`` through the real CLI, on real files; and what ``status`` reads of
Qwen Code's registration (the states in which it skips our hooks silently).

tests/clients/test_qwen.py proves under the real Qwen Code binary that the registration this
writes denies, and that a failing yupana never blocks it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import SHARED, run_yupana

YUPANA = str(Path(sys.executable).with_name("yupana"))
EDIT = "write_file|edit|notebook_edit"
SHELL = "run_shell_command|monitor"


@pytest.fixture
def repo(tmp_path, env):
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    env["PATH"] = "/usr/bin:/bin"
    for var in ("QWEN_HOME", "QWEN_CODE_SYSTEM_SETTINGS_PATH", "QWEN_CODE_TRUSTED_FOLDERS_PATH"):
        env.pop(var, None)
    env["QWEN_CODE_SYSTEM_SETTINGS_PATH"] = str(tmp_path / "etc" / "settings.json")  # never the machine's /etc
    return root


def yupana(env, *args, cwd):
    proc = run_yupana(list(args), env, cwd=cwd)
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


def wrapper(event: str) -> str:
    return f"out=$({YUPANA} hook {event} --client qwen 2>/dev/null) || exit 0; printf '%s' \"$out\""


def ours(settings: dict) -> list[tuple[str, str, str, int]]:
    return [(event, g["matcher"], h["command"], h["timeout"]) for event, groups in settings.get("hooks", {}).items()
            for g in groups for h in g["hooks"] if "yupana" in h.get("command", "")]


def test_install_qwen_writes_the_three_wrapped_hooks_under_qwens_tool_names_in_milliseconds(env, repo):
    (repo / "src").mkdir()
    rc, out, err = yupana(env, "install", "qwen", cwd=repo / "src")  # the project is the git top-level
    assert rc == 0, err
    settings = json.loads((repo / ".qwen" / "settings.json").read_text())
    assert ours(settings) == [("PreToolUse", EDIT, wrapper("pre-edit"), 5000),
                              ("PreToolUse", SHELL, wrapper("pre-bash"), 5000),
                              ("PostToolUse", EDIT, wrapper("post-edit"), 5000)]
    assert f"wrote {repo / '.qwen' / 'settings.json'}" in out and "added pre-bash (run_shell_command|monitor)" in out


def recorded(name: str, root: Path) -> bytes:
    path = SHARED / "clients-more" / f"qwen-adapter-{name}.json"
    if not path.exists():
        pytest.skip(f"{path} is not here")
    return path.read_text().replace("<proj-slug>", "p").replace("<proj>", str(root)).replace("<home>", "/h").encode()


def test_the_installed_command_denies_qwens_payload_and_a_missing_yupana_is_an_allow(env, repo):
    (repo / ".bobbin").mkdir()
    (repo / ".bobbin" / "config.toml").write_text(
        '[yupana.policy]\nmode = "enforce"\n[yupana.policy.scopes.t]\ndeny_paths = ["src/auth/**"]\n')
    assert yupana(env, "install", "qwen", cwd=repo)[0] == 0
    [command] = [c for e, m, c, _t in ours(json.loads((repo / ".qwen/settings.json").read_text()))
                 if (e, m) == ("PreToolUse", EDIT)]
    run_env = {**env, "BOBBIN_ROLE": "t", "PATH": "/usr/bin:/bin"}
    done = subprocess.run(["/bin/sh", "-c", command], input=recorded("write_file", repo), capture_output=True,
                          env=run_env, timeout=60)
    assert done.returncode == 0
    out = json.loads(done.stdout)["hookSpecificOutput"]
    assert out["permissionDecision"] == "deny" and "src/auth/login.rs" in out["permissionDecisionReason"]
    for broken in (command.replace(YUPANA, "/nonexistent/yupana"), command.replace(" hook ", " hook --bogus ")):
        done = subprocess.run(["/bin/sh", "-c", broken], input=recorded("write_file", repo), capture_output=True,
                              env=run_env, timeout=60)
        assert (done.returncode, done.stdout) == (0, b"")  # every yupana failure is an allow


def test_install_merges_keeps_every_other_key_and_hook_and_is_idempotent(env, repo):
    theirs = {"model": {"name": "qwen3-coder"}, "hooks": {"PreToolUse": [
        {"matcher": "write_file", "hooks": [{"type": "command", "command": "./lint.sh", "timeout": 3000}]}]}}
    (repo / ".qwen").mkdir()
    (repo / ".qwen" / "settings.json").write_text(json.dumps(theirs, indent=2))
    assert yupana(env, "install", "qwen", cwd=repo)[0] == 0
    settings = json.loads((repo / ".qwen" / "settings.json").read_text())
    assert settings["model"] == theirs["model"]
    assert settings["hooks"]["PreToolUse"][0] == theirs["hooks"]["PreToolUse"][0] and len(ours(settings)) == 3
    before = (repo / ".qwen" / "settings.json").read_text()
    rc, out, _ = yupana(env, "install", "qwen", cwd=repo)
    assert rc == 0 and "already registered" in out and (repo / ".qwen" / "settings.json").read_text() == before


def test_dry_run_prints_the_diff_and_writes_nothing(env, repo):
    rc, out, _ = yupana(env, "install", "qwen", "--dry-run", cwd=repo)
    assert rc == 0 and "+++ " in out and "--client qwen" in out and "dry run" in out
    assert not (repo / ".qwen").exists()


def test_bad_settings_are_a_clear_error_that_loses_nothing(env, repo):
    (repo / ".qwen").mkdir()
    (repo / ".qwen" / "settings.json").write_text('{"hooks": [}')
    rc, _out, err = yupana(env, "install", "qwen", cwd=repo)
    assert rc == 1 and "is not valid JSON" in err and "nothing was written" in err
    assert (repo / ".qwen" / "settings.json").read_text() == '{"hooks": [}'


def test_user_scope_writes_qwen_home_settings(env, repo, tmp_path):
    assert yupana(env, "install", "qwen", "--user", cwd=repo)[0] == 0
    assert len(ours(json.loads((env.home / ".qwen" / "settings.json").read_text()))) == 3
    env["QWEN_HOME"] = str(tmp_path / "qhome")
    assert yupana(env, "install", "qwen", "--user", cwd=repo)[0] == 0
    assert len(ours(json.loads((tmp_path / "qhome" / "settings.json").read_text()))) == 3
    assert not (repo / ".qwen").exists()


def test_uninstall_removes_only_ours(env, repo):
    (repo / ".qwen").mkdir()
    (repo / ".qwen" / "settings.json").write_text(json.dumps({"hooks": {"PreToolUse": [
        {"matcher": "edit", "hooks": [{"type": "command", "command": "./lint.sh"}]}]}}))
    assert yupana(env, "install", "qwen", cwd=repo)[0] == 0
    rc, out, _ = yupana(env, "uninstall", "qwen", cwd=repo)
    assert rc == 0 and "removed pre-edit" in out
    assert json.loads((repo / ".qwen" / "settings.json").read_text()) == {"hooks": {"PreToolUse": [
        {"matcher": "edit", "hooks": [{"type": "command", "command": "./lint.sh"}]}]}}


# ── yupana status: the states in which Qwen Code skips our hooks silently ─────────────


@pytest.fixture
def qwen_env(env, repo):
    assert yupana(env, "install", "qwen", cwd=repo)[0] == 0
    return env


def _problems(env, root: Path) -> tuple[list[dict], list[dict]]:
    """``yupana status``'s Qwen Code entry: its registrations, and the problems other than "never invoked"."""
    rc, out, err = yupana(env, "status", "--json", "--offline", cwd=root)
    qwen = json.loads(out)["clients"]["qwen"]
    assert rc == 3 and qwen["state"] == "degraded", err  # registered and never seen, at the least
    return qwen["registrations"], [p for p in qwen["problems"] if "never invoked" not in p["problem"]]


def user_settings(env, data: dict) -> None:
    (env.home / ".qwen").mkdir(exist_ok=True)
    (env.home / ".qwen" / "settings.json").write_text(json.dumps(data))


def test_a_project_registration_with_folder_trust_off_is_loaded(qwen_env, repo):
    regs, problems = _problems(qwen_env, repo)
    assert [r["scope"] for r in regs] == ["project"] and regs[0]["skipped"] is None and problems == []
    assert {h["trust"] for h in regs[0]["hooks"]} == {"loaded"}


@pytest.mark.parametrize("rules,skipped", [
    ({}, True),                                            # trust on, folder named nowhere
    ({"{repo}": "DO_NOT_TRUST"}, True),
    ({"{repo}": "TRUST_FOLDER"}, False),
    ({"{repo}/x": "TRUST_PARENT"}, False),                 # the parent of a trusted path
    ({"{parent}": "TRUST_FOLDER", "{repo}": "DO_NOT_TRUST"}, True),   # the deepest rule wins
    ({"{parent}": "DO_NOT_TRUST", "{repo}": "TRUST_FOLDER"}, False),
])
def test_folder_trust_on_and_the_folder_untrusted_skips_the_project_hooks_degraded(qwen_env, repo, rules, skipped):
    user_settings(qwen_env, {"security": {"folderTrust": {"enabled": True}}})
    (qwen_env.home / ".qwen" / "trustedFolders.json").write_text(json.dumps(
        {k.format(repo=repo, parent=repo.parent): v for k, v in rules.items()}))
    regs, problems = _problems(qwen_env, repo)
    assert bool(regs[0]["skipped"]) is skipped
    if skipped:
        [problem] = problems
        assert problem["degraded"] and "skips pre-edit, pre-bash, post-edit silently" in problem["problem"]
        assert "TRUST_FOLDER" in problem["fix"] and "yupana install qwen --user" in problem["fix"]
    else:
        assert problems == []


def test_user_hooks_load_in_an_untrusted_folder(qwen_env, repo):
    assert yupana(qwen_env, "uninstall", "qwen", cwd=repo)[0] == 0
    user_settings(qwen_env, {"security": {"folderTrust": {"enabled": True}}})
    assert yupana(qwen_env, "install", "qwen", "--user", cwd=repo)[0] == 0
    regs, problems = _problems(qwen_env, repo)
    assert [r["scope"] for r in regs] == ["user"] and problems == []


@pytest.mark.parametrize("where", ["user", "project", "system"])
def test_disable_all_hooks_is_degraded_with_its_file(qwen_env, repo, where):
    path = {"user": qwen_env.home / ".qwen" / "settings.json", "project": repo / ".qwen" / "settings.json",
            "system": Path(qwen_env["QWEN_CODE_SYSTEM_SETTINGS_PATH"])}[where]
    path.parent.mkdir(parents=True, exist_ok=True)
    data = json.loads(path.read_text()) if path.exists() else {}
    path.write_text(json.dumps(dict(data, disableAllHooks=True)))
    _regs, problems = _problems(qwen_env, repo)
    [problem] = problems
    assert f"disableAllHooks is true in {path}" in problem["problem"] and "disableAllHooks" in problem["fix"]
