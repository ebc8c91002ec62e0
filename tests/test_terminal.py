"""Issue 14 §1/§2/§4 through the real CLI: a closed pipe ends a command as it ends a Unix filter,
``hook --help`` lists the flags a hook takes, ``--verbose``/``--quiet`` govern the progress lines,
and a relative ``XDG_STATE_HOME`` is ignored as the XDG spec says."""

from __future__ import annotations

import os
import subprocess
import sys

from conftest import run_yupana


def test_a_closed_pipe_ends_the_command_quietly_with_the_filter_status(env):
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader (`| head`) is gone before the command writes
    try:
        done = subprocess.run([sys.executable, "-m", "yupana", "status", "--json"], env=env, stdout=write_end,
                              stderr=subprocess.PIPE, timeout=60)
    finally:
        os.close(write_end)
    assert b"Traceback" not in done.stderr and b"BrokenPipe" not in done.stderr, done.stderr
    assert done.returncode == 141


def test_hook_help_lists_tenant_and_config(env):
    done = run_yupana(["hook", "--help"], env)
    assert done.returncode == 0
    assert b"--tenant" in done.stdout and b"--config" in done.stdout


def test_verbose_shows_every_stage_when_piped_and_the_default_shows_none(env):
    env["YUPANA_QUIPU__ENDPOINT"] = "http://127.0.0.1:9/query"  # discard port: refused at once
    plain = run_yupana(["project"], env)
    verbose = run_yupana(["project", "--verbose"], env)
    quiet = run_yupana(["project", "--quiet", "--verbose"], env)
    assert b"(0." not in plain.stderr  # piped, fast: no progress line
    assert b"yupana: " in verbose.stderr and b"s)\n" in verbose.stderr, verbose.stderr  # "yupana: <stage> (0.0s)"
    assert verbose.stderr.count(b"\n") > plain.stderr.count(b"\n")
    assert quiet.stderr.count(b"\n") == plain.stderr.count(b"\n")


def test_a_relative_xdg_state_home_is_ignored(env, tmp_path):
    work = tmp_path / "cwd"
    work.mkdir()
    env["XDG_STATE_HOME"] = "relative-state"
    run_yupana(["hook", "pre-bash"], env, stdin=b'{"tool_name": "Bash", "tool_input": {"command": "ls"}}', cwd=work)
    assert not (work / "relative-state").exists()
    assert (env.home / ".local" / "state" / "yupana").exists()


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


def test_explain_does_not_call_the_plane_unconfigured_when_the_config_did_not_resolve(env, tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('[yupana.policy]\nmode = "bogus"\n')
    payload = b'{"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}, "session_id": "s"}'
    out = run_yupana(["--config", str(bad), "explain"], env, stdin=payload).stdout.decode()
    assert "not configured" not in out, out
    assert "whether a governed plane is configured is not known" in out


def _run_in_pty(argv: list[str], env: dict, columns: int, stderr_too: bool = False) -> str:
    """Run the CLI with stdout on a pseudo-terminal ``columns`` wide; its output as text."""
    import fcntl
    import pty
    import struct
    import termios

    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    env = dict(env)
    env.pop("COLUMNS", None)
    proc = subprocess.Popen([sys.executable, "-m", "yupana", *argv], env=env, stdin=subprocess.DEVNULL,
                            stdout=follower, stderr=follower if stderr_too else subprocess.DEVNULL)
    os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(leader, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=60)
    os.close(leader)
    return b"".join(chunks).decode("utf-8", "replace").replace("\r\n", "\n")


def test_the_dump_fits_the_terminal_and_is_full_width_when_piped(env):
    env.pop("COLUMNS", None)
    on_tty = _run_in_pty(["project", "--dump"], env, columns=100)
    lines = [ln for ln in on_tty.splitlines() if ln.strip()]
    assert any("STRUCTURAL POLICIES" in ln for ln in lines), on_tty[:500]
    assert max(len(ln) for ln in lines) <= 100, max(lines, key=len)
    piped = run_yupana(["project", "--dump"], env).stdout.decode()
    assert max(len(ln) for ln in piped.splitlines()) > 100  # piped: nothing cut
    env["COLUMNS"] = "80"
    narrow = run_yupana(["project", "--dump"], env).stdout.decode()
    assert max(len(ln) for ln in narrow.splitlines()) <= 80  # COLUMNS honoured


def test_status_wraps_to_the_terminal_under_its_value_column(env):
    env.pop("COLUMNS", None)
    text = _run_in_pty(["status"], env, columns=80)
    lines = [ln for ln in text.splitlines() if ln.strip()]
    assert any(ln.startswith("rule set    : ") for ln in lines), text[:400]
    assert max(len(ln) for ln in lines) <= 80, max(lines, key=len)
    piped = run_yupana(["status"], env).stdout.decode()
    assert max(len(ln) for ln in piped.splitlines()) > 80


def test_a_slow_refresh_on_a_terminal_is_one_live_status_line(env, tmp_path):
    from servers.faulty import FaultyServer

    server = FaultyServer("never-answer").start()
    try:
        env["YUPANA_QUIPU__ENDPOINT"] = server.url
        env["YUPANA_QUIPU__DIALECT"] = "sparql11"
        env["YUPANA_QUIPU__REFRESH_DEADLINE_SECS"] = "2.5"
        env["YUPANA_QUIPU__REQUEST_TIMEOUT_SECS"] = "10"
        text = _run_in_pty(["project"], env, columns=120, stderr_too=True)
    finally:
        server.stop()
    assert "\r\x1b[Kyupana: " in text and "projecting from" in text, text[:600]  # redrawn in place
    assert "refresh FAILED (" in text
    assert text.count("\nyupana: projecting from") == 0  # not a new line per stage
