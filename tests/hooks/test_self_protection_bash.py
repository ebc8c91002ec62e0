"""Issue 22 §2 through the real pre-bash hook: writes to the guard's own controls, hooksPath changes
and --no-verify where yupana's git hook is installed are refused under enforce, advised under
advise, recorded as `self_protection`; reads of the same files pass silently."""

from __future__ import annotations

import json

import pytest
from guard_kit import Repo
from prebash import hook, output

ENFORCE = '[yupana.policy]\nmode = "enforce"\n'
DISARMING = ("mode", "self_protection", "config.toml", ".bobbin", "--no-verify", "hooksPath", "enforce", "[yupana")


@pytest.fixture
def repo(tmp_path, env):
    return Repo(tmp_path / "repo", env).config(ENFORCE)


def _reason(proc) -> str:
    return output(proc).get("hookSpecificOutput", {}).get("permissionDecisionReason", "")


def _refused(proc) -> str:
    out = output(proc)
    assert out.get("hookSpecificOutput", {}).get("permissionDecision") == "deny", proc
    reason = _reason(proc)
    assert "ask the operator" in reason
    for word in DISARMING:
        assert word not in reason, (word, reason)
    return reason


@pytest.mark.parametrize("command, kind, route", [
    ("sed -i s/enforce/off/ .bobbin/config.toml", "config", "sed -i"),
    ("echo 'mode = \"off\"' > .bobbin/config.toml", "config", "redirect"),
    ("mkdir -p src/.bobbin && printf '[yupana.policy]\\nmode = \"off\"\\n' > src/.bobbin/config.toml", "config", "mkdir"),
    ("rm .bobbin/config.toml", "config", "rm"),
    ("git config core.hooksPath /dev/null", "hooks_path", "git"),
    ("git -c core.hooksPath=/dev/null push origin main", "hooks_path", "git"),
    ("tee .claude/settings.json < /tmp/mine.json", "client", "tee"),
    ("cp /tmp/h.json ~/.codex/hooks.json", "client", "cp"),
    ("ln -sf /dev/null .git/hooks/pre-push", "git_hooks", "ln"),
    ("perl -pi -e 's/a/b/' .git/config", "git_config", "perl -i"),
])
def test_each_route_is_refused_and_recorded(env, repo, command, kind, route):
    proc = hook(env, command, cwd=repo.root)
    _refused(proc)
    recs = env.records("self_protection")
    assert recs[0] == {**recs[0], "protected": kind, "route": route, "result": "deny", "session": "sess-1"}
    assert command not in json.dumps(env.records())  # the raw command never reaches the spool


@pytest.mark.parametrize("command", [
    "cat .bobbin/config.toml", "grep mode .bobbin/config.toml", "git diff -- .bobbin/config.toml",
    "sed -n p .bobbin/config.toml", "wc -c < .git/config", "git config core.hooksPath", "git push --no-verify",
    "cp .bobbin/config.toml /tmp/copy.toml", "echo done > build.log",
])
def test_reads_and_ordinary_writes_pass_silently(env, repo, command):
    proc = hook(env, command, cwd=repo.root)
    assert proc.stdout == b"", proc.stdout
    assert env.records("self_protection") == []


def test_no_verify_is_refused_once_yupanas_git_hook_is_installed(env, repo, yupana):
    assert yupana("install", "git", cwd=repo.root).returncode == 0
    _refused(hook(env, "git push --no-verify origin main", cwd=repo.root))
    _refused(hook(env, "git commit -n -m wip", cwd=repo.root))
    assert hook(env, "git push origin main 2>&1", cwd=repo.root).stdout == b""


def test_advise_advises_and_off_is_silent(env, repo):
    repo.config(ENFORCE + 'self_protection = "advise"\n')
    proc = hook(env, "sed -i s/enforce/off/ .bobbin/config.toml", cwd=repo.root)
    assert "permissionDecision" not in proc.stdout.decode() and "enforce would deny" in proc.stdout.decode()
    assert env.records("self_protection")[-1]["result"] == "advise"
    repo.config('[yupana.policy]\nmode = "off"\n')
    assert hook(env, "sed -i s/enforce/off/ .bobbin/config.toml", cwd=repo.root).stdout == b""


def test_a_codex_argv_command_is_read_too(env, repo):
    _refused(hook(env, ["bash", "-lc", "sed -i s/enforce/off/ .bobbin/config.toml"], cwd=repo.root))
    _refused(hook(env, ["rm", "-f", ".bobbin/config.toml"], cwd=repo.root))


def test_a_write_through_a_symlink_to_a_control_is_refused(env, repo):
    (repo.root / "cfg").symlink_to(repo.root / ".bobbin" / "config.toml")
    (repo.root / "hooks").symlink_to(repo.root / ".git" / "hooks")
    _refused(hook(env, "sed -i s/enforce/off/ cfg", cwd=repo.root))
    _refused(hook(env, "cp /tmp/x hooks/pre-push", cwd=repo.root))
    assert hook(env, "cat cfg", cwd=repo.root).stdout == b""


def test_a_config_file_named_on_the_hook_command_line_is_a_control(env, repo, tmp_path):
    from conftest import run_yupana

    other = tmp_path / "ops.toml"
    other.write_text(ENFORCE)
    payload = {"session_id": "s", "cwd": str(repo.root), "hook_event_name": "PreToolUse", "tool_name": "Bash",
               "tool_input": {"command": f"echo 'mode = \"off\"' > {other}"}}
    proc = run_yupana(["--config", str(other), "hook", "pre-bash"], env, stdin=json.dumps(payload), cwd=repo.root)
    _refused(proc)
