"""Issue 14 §2 (and §4's XDG rule) through the real CLI: every flag a command lists does
something, a global flag a command does nothing with is refused by name, ``hook --help``
lists what a hook takes, unknown settings get a "did you mean", ``explain`` never claims what
it did not read, and a relative ``XDG_STATE_HOME`` is ignored as the XDG spec says."""

from __future__ import annotations

import pytest

from conftest import run_yupana
from yupana.cli import COMMANDS, GLOBAL_HELP, INTERNAL_COMMANDS

USER_COMMANDS = [name for name in COMMANDS if name not in INTERNAL_COMMANDS]


def test_hook_help_lists_tenant_and_config_and_only_them(env):
    done = run_yupana(["hook", "--help"], env)
    assert done.returncode == 0
    usage = done.stdout.decode().split("events:")[0]
    assert "--tenant" in usage and "--config" in usage
    assert "--quiet" not in usage and "--verbose" not in usage and "--json" not in usage


def test_a_hook_still_accepts_the_flags_it_ignores(env):
    """Refusing a flag in a hook would allow the tool call: they are accepted and documented as ignored."""
    payload = b'{"tool_name": "Bash", "tool_input": {"command": "ls"}}'
    done = run_yupana(["--quiet", "hook", "pre-bash", "--verbose", "--json"], env, stdin=payload)
    assert done.returncode == 0 and b"not understood" not in done.stderr


@pytest.mark.parametrize("command", USER_COMMANDS)
def test_each_command_lists_exactly_the_global_flags_it_honours_and_refuses_the_rest(env, command):
    module = __import__(COMMANDS[command][0], fromlist=["GLOBAL_FLAGS"])
    helptext = run_yupana([command, "--help"], env).stdout.decode()
    for flag in GLOBAL_HELP:
        if flag in module.GLOBAL_FLAGS:
            assert flag in helptext, (command, flag)
            continue
        assert f"{flag} " not in helptext and f"[{flag}" not in helptext, (command, flag)
        value = ["x"] if flag in ("--tenant", "--config") else []
        for argv in ([flag, *value, command], [command, flag, *value]):  # before and after the command word
            done = run_yupana(argv, env)
            assert done.returncode == 2, (argv, done.stderr)
            assert f"{flag} does nothing for `yupana {command}`".encode() in done.stderr, done.stderr


def test_quiet_and_verbose_are_taken_only_where_there_is_progress(env):
    takers = {name for name in USER_COMMANDS
              if "--quiet" in __import__(COMMANDS[name][0], fromlist=["GLOBAL_FLAGS"]).GLOBAL_FLAGS}
    assert takers == {"project"}


def test_verbose_shows_every_stage_when_piped_and_the_default_shows_none(env):
    env["YUPANA_QUIPU__ENDPOINT"] = "http://127.0.0.1:9/query"  # discard port: refused at once
    plain = run_yupana(["project"], env)
    verbose = run_yupana(["project", "--verbose"], env)
    quiet = run_yupana(["project", "--quiet", "--verbose"], env)
    assert b"(0." not in plain.stderr  # piped, fast: no progress line
    assert b"yupana: " in verbose.stderr and b"s)\n" in verbose.stderr, verbose.stderr  # "yupana: <stage> (0.0s)"
    assert verbose.stderr.count(b"\n") > plain.stderr.count(b"\n")
    assert quiet.stderr.count(b"\n") == plain.stderr.count(b"\n")  # --quiet wins: results and errors only
    del env["YUPANA_QUIPU__ENDPOINT"]  # the bundled catalogue: --dump projects it first
    dump = run_yupana(["project", "--dump", "--verbose"], env)
    assert dump.returncode == 0 and b"yupana: " in dump.stderr and b"s)\n" in dump.stderr, dump.stderr
    assert run_yupana(["project", "--dump"], env).stderr == b""  # fast and piped: not a line


def test_config_snapshot_refuses_json(env):
    done = run_yupana(["config", "snapshot", "--json"], env)
    assert done.returncode == 2 and b"--json is for `config check`" in done.stderr


def test_config_check_suggests_the_key_or_variable_meant(env, tmp_path):
    config = tmp_path / "c.toml"
    config.write_text('[yupana.quipu]\nendpont = "http://127.0.0.1:9/query"\n')
    env["YUPANA_QUIPU_ENDPOINT"] = "http://127.0.0.1:9/query"  # one "_" short of YUPANA_QUIPU__ENDPOINT
    env["YUPANA_POLICY__MOD"] = "enforce"
    done = run_yupana(["--config", str(config), "config", "check"], env)
    out = (done.stdout + done.stderr).decode()
    assert "unknown key yupana.quipu.endpont (ignored) (did you mean yupana.quipu.endpoint?)" in out, out
    assert "YUPANA_POLICY__MOD: unknown key yupana.policy.mod (ignored) (did you mean YUPANA_POLICY__MODE?)" in out
    assert "YUPANA_QUIPU_ENDPOINT: not a setting (ignored) (did you mean YUPANA_QUIPU__ENDPOINT?)" in out


def test_config_check_shows_each_resolved_setting_with_the_layer_it_came_from(env, tmp_path):
    project = tmp_path / "p"
    (project / ".bobbin").mkdir(parents=True)
    (project / ".bobbin" / "config.toml").write_text('[yupana.policy]\nmode = "advise"\n')
    env.user_config('[yupana.policy]\ndeadline_ms = 80\n')
    env["YUPANA_QUIPU__BATCH_SIZE"] = "50"
    out = run_yupana(["config", "check"], env, cwd=project).stdout.decode()
    assert f'yupana.policy.mode = "advise"  # {project / ".bobbin" / "config.toml"}' in out, out
    assert "yupana.policy.deadline_ms = 80  # " in out and "bobbin/config.toml" in out.split("deadline_ms = 80")[1]
    assert "yupana.quipu.batch_size = 50  # environment variable YUPANA_QUIPU__BATCH_SIZE" in out
    assert 'yupana.base_ref = "main"  # default' in out


def test_explain_does_not_call_the_plane_unconfigured_when_the_config_did_not_resolve(env, tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('[yupana.policy]\nmode = "bogus"\n')
    payload = b'{"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}, "session_id": "s"}'
    out = run_yupana(["--config", str(bad), "explain"], env, stdin=payload).stdout.decode()
    assert "not configured" not in out, out
    assert "whether a governed plane is configured is not known" in out


@pytest.mark.parametrize("hook", ["pre-bash", "pre-edit"])
def test_a_relative_xdg_state_home_is_ignored(env, tmp_path, hook):
    work = tmp_path / "cwd"
    work.mkdir()
    env["XDG_STATE_HOME"] = "relative-state"
    payload = (b'{"tool_name": "Bash", "tool_input": {"command": "ls"}}' if hook == "pre-bash" else
               b'{"tool_name": "Write", "tool_input": {"file_path": "a.txt", "content": "x"}}')
    run_yupana(["hook", hook], env, stdin=payload, cwd=work)
    run_yupana(["status"], env, cwd=work)  # the cold path resolves the same way
    assert not (work / "relative-state").exists()
    assert (env.home / ".local" / "state" / "yupana").exists()
