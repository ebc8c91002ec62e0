"""Issue 14 §1 through the real CLI: output fits the terminal it is printed on (a real pty of a
given width), is full width and plain when piped, is coloured only on a terminal (``NO_COLOR``
honoured), shows progress only when work is slow, and every command ends like a Unix filter
when its reader goes away."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import REPO, run_yupana

SGR = re.compile(r"\x1b\[[0-9;]*m")
CATALOGUE = REPO / "fixtures" / "catalogue"
PAYLOAD = {"session_id": "s", "hook_event_name": "PreToolUse", "tool_name": "Write",
           "tool_input": {"file_path": "src/a.rs", "content": "// see FRT-1234 and do not merge\nfn a() {}\n"}}


def run_in_pty(argv: list[str], env: dict, columns: int, stderr_too: bool = False, stdin: bytes | None = None,
               cwd: str | Path | None = None) -> str:
    """Run the CLI with stdout on a pseudo-terminal ``columns`` wide; its output as text."""
    import fcntl
    import pty
    import struct
    import termios
    import tempfile

    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    env = dict(env)
    env.pop("COLUMNS", None)
    with tempfile.TemporaryFile() as feed:
        feed.write(stdin or b"")
        feed.seek(0)
        proc = subprocess.Popen([sys.executable, "-m", "yupana", *argv], env=env, cwd=cwd,
                                stdin=feed if stdin is not None else subprocess.DEVNULL,
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


def visible(text: str) -> list[str]:
    return [SGR.sub("", ln) for ln in text.splitlines() if ln.strip()]


def widest(lines: list[str]) -> int:
    return max(len(ln) for ln in lines)


@pytest.fixture
def governed(env, tmp_path):
    """A project whose governed plane is the fixture catalogue, projected once."""
    root = tmp_path / "proj"
    (root / ".bobbin").mkdir(parents=True)
    (root / ".bobbin" / "config.toml").write_text(
        f'[yupana.quipu]\nenabled = true\nendpoint = "file:{CATALOGUE}"\n[yupana.policy]\nmode = "enforce"\n')
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    assert run_yupana(["project"], env, cwd=root).returncode == 0
    return root


@pytest.mark.parametrize("columns", [80, 100, 132])
def test_the_dump_fits_the_terminal_keeps_every_name_whole_and_is_full_width_when_piped(env, governed, columns):
    on_tty = visible(run_in_pty(["project", "--dump", "--no-refresh"], env, columns=columns, cwd=governed))
    assert any("STRUCTURAL POLICIES" in ln for ln in on_tty), on_tty[:5]
    assert widest(on_tty) <= columns, max(on_tty, key=len)
    cache = json.loads(run_yupana(["project", "--dump", "--json", "--no-refresh"], env, cwd=governed).stdout)
    names = [p["rule"]["name"] for p in cache["policies"]] + [r["name"] for r in cache["text_rules"]]
    text = "\n".join(on_tty)
    for name in names:  # the first column is never cut: a rule is always findable by its name
        assert re.search(rf"(^|\s){re.escape(name)}(\s|$)", text, re.M), name
    piped = run_yupana(["project", "--dump", "--no-refresh"], env, cwd=governed).stdout.decode()
    assert widest(piped.splitlines()) > 132 and "\x1b[" not in piped  # piped: full width, no colour
    narrow = run_yupana(["project", "--dump", "--no-refresh"], {**env, "COLUMNS": str(columns)}, cwd=governed)
    assert widest(narrow.stdout.decode().splitlines()) <= columns  # COLUMNS honoured, piped or not


@pytest.mark.parametrize("argv, stdin", [
    (["status"], None),
    (["explain"], json.dumps(PAYLOAD).encode()),
    (["ci-select", "--paths", "src/a.rs", "docs/x.md"], None),
    (["shapes", "validate", str(CATALOGUE)], None),
    (["config", "check"], None),
], ids=["status", "explain", "ci-select", "shapes", "config"])
def test_every_report_fits_an_80_column_terminal_and_is_full_width_when_piped(env, governed, argv, stdin):
    on_tty = visible(run_in_pty(argv, env, columns=80, stdin=stdin, cwd=governed))
    assert len(on_tty) > 2, on_tty
    assert widest(on_tty) <= 80, max(on_tty, key=len)
    piped = run_yupana(argv, env, stdin=stdin, cwd=governed).stdout.decode()
    assert widest(piped.splitlines()) > 80 and "\x1b[" not in piped


def test_colour_only_on_a_terminal_and_never_under_no_color(env, governed):
    coloured = run_in_pty(["status"], env, columns=120, cwd=governed)
    assert "\x1b[32mfresh\x1b[0m" in coloured or "\x1b[31m" in coloured, coloured[:600]
    dump = run_in_pty(["project", "--dump", "--no-refresh"], env, columns=120, cwd=governed)
    assert "\x1b[1mSTRUCTURAL POLICIES (10)\x1b[0m" in dump  # headings bold
    assert "\x1b[" not in run_in_pty(["status"], {**env, "NO_COLOR": "1"}, columns=120, cwd=governed)
    assert "\x1b[" not in run_in_pty(["project", "--dump", "--no-refresh"], {**env, "TERM": "dumb"}, columns=120,
                                     cwd=governed)
    forced = run_yupana(["status"], {**env, "FORCE_COLOR": "1"}, cwd=governed).stdout.decode()
    assert "\x1b[" in forced  # for `| less -R`
    both = run_yupana(["status"], {**env, "FORCE_COLOR": "1", "NO_COLOR": "1"}, cwd=governed).stdout.decode()
    assert "\x1b[" not in both  # NO_COLOR wins


def test_stale_and_unknown_states_are_red_on_a_terminal(env, governed):
    stale = {**env, "YUPANA_QUIPU__REFRESH_INTERVAL_SECS": "0"}  # a cache a second old is overdue: STALE
    time.sleep(1.1)
    text = run_in_pty(["project", "--dump", "--no-refresh"], stale, columns=120, cwd=governed)
    assert "\x1b[31mSTALE\x1b[0m" in text, text[:400]
    assert "\x1b[31mUNKNOWN\x1b[0m" in text  # the work-item planes: not read


def test_a_fast_dump_prints_no_progress_on_a_terminal_or_a_pipe(env, governed):
    piped = run_yupana(["project", "--dump"], env, cwd=governed)
    assert piped.returncode == 0 and piped.stderr == b""
    on_tty = run_in_pty(["project", "--dump"], env, columns=120, stderr_too=True, cwd=governed)
    assert "yupana: " not in on_tty and "\r\x1b[K" not in on_tty


def test_a_slow_refresh_on_a_terminal_is_one_live_status_line(env):
    from servers.faulty import FaultyServer

    server = FaultyServer("never-answer").start()
    try:
        env["YUPANA_QUIPU__ENDPOINT"] = server.url
        env["YUPANA_QUIPU__DIALECT"] = "sparql11"
        env["YUPANA_QUIPU__REFRESH_DEADLINE_SECS"] = "2.5"
        env["YUPANA_QUIPU__REQUEST_TIMEOUT_SECS"] = "10"
        text = run_in_pty(["project"], env, columns=120, stderr_too=True)
    finally:
        server.stop()
    assert "\r\x1b[Kyupana: " in text and "projecting from" in text, text[:600]  # redrawn in place
    assert "refresh FAILED (" in text
    assert text.count("\nyupana: projecting from") == 0  # not a new line per stage


CLOSED_PIPE_COMMANDS = [
    ["status"], ["status", "--json"], ["project", "--dump", "--no-refresh"], ["project", "--dump", "--json"],
    ["project", "--dump", "--format", "turtle"], ["config", "check"], ["config", "check", "--json"], ["metrics"],
    ["ci-select", "--paths", "src/a.rs"], ["explain"], ["explain", "--json"], ["--help"],
    ["shapes", "validate", str(CATALOGUE)], ["shapes", "validate", str(CATALOGUE), "--json"],
    ["shapes", "validate", str(CATALOGUE), "--format", "sarif"], ["shapes", "validate", str(CATALOGUE), "--format", "junit"],
    ["shapes", "validate", str(CATALOGUE), "--format", "github"], ["report"], ["report", "--json"],
]


@pytest.mark.parametrize("buffered", [True, False], ids=["buffered", "unbuffered"])
@pytest.mark.parametrize("argv", CLOSED_PIPE_COMMANDS, ids=" ".join)
def test_a_closed_pipe_ends_every_command_quietly_with_the_filter_status(env, governed, argv, buffered):
    env = dict(env)
    if buffered:  # an operator's shell: stdout block-buffered into the pipe, the write fails at the flush
        env.pop("PYTHONUNBUFFERED", None)
    else:
        env["PYTHONUNBUFFERED"] = "1"
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader (`| head`) is gone before the command writes
    stdin = subprocess.PIPE if argv[0] == "explain" else subprocess.DEVNULL
    try:
        proc = subprocess.Popen([sys.executable, "-m", "yupana", *argv], env=env, stdout=write_end, stdin=stdin,
                                stderr=subprocess.PIPE, cwd=governed)
        _, err = proc.communicate(json.dumps(PAYLOAD).encode() if stdin == subprocess.PIPE else None, timeout=60)
    finally:
        os.close(write_end)
    assert b"Traceback" not in err and b"BrokenPipe" not in err and b"internal error" not in err, err
    assert proc.returncode == 141, (proc.returncode, err)
