"""A sandbox per case for the real GitHub Copilot CLI against the scripted fake Anthropic Messages API.

Copilot CLI speaks Anthropic Messages with ``COPILOT_PROVIDER_TYPE=anthropic`` (BYOK: no
GitHub account), so :mod:`fake_models` serves it unchanged; ``COPILOT_OFFLINE=true`` turns
off GitHub authentication, telemetry, web tools, the GitHub MCP server and auto-update, and
``--no-auto-update --disable-client-telemetry`` say it again. Each :class:`CopilotCase` has its
own HOME (so ``~/.copilot``), TMPDIR, XDG_STATE_HOME, git repository and ``bin/`` with a fake
``ssh``; runs go through ``runner.py`` (inside ``unshare -n`` when allowed) and every
process is stopped by its group id.

The binary comes from ``YUPANA_COPILOT_PREFIX`` (an ``npm install --prefix`` directory), else
the shared ``.clients`` that ``.ci/run`` fills. The package unpacks ~235 MB into
``$XDG_CACHE_HOME/copilot`` on first start: the cases share one cache under the prefix.
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

VERSION = "1.0.102"
PREFIX = Path(os.environ.get("YUPANA_COPILOT_PREFIX") or kit.PREFIX)
MODEL = "claude-sonnet-4.5"
EDIT_MATCHER = "edit|create|str_replace_editor|apply_patch"


@functools.cache
def binary() -> tuple[str | None, str]:
    """(path, "") when the pinned Copilot CLI runs here, else (None, why not)."""
    path = PREFIX / "node_modules" / ".bin" / "copilot"
    if not path.exists():
        return None, (f"copilot is not installed under {PREFIX} (.ci/run installs it: npm install --prefix .clients "
                      f"@github/copilot@{VERSION}; or point YUPANA_COPILOT_PREFIX at an npm prefix that has it)")
    try:
        done = subprocess.run([str(path), "--version"], capture_output=True, text=True, timeout=60,
                              env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(cache_dir()),
                                   "XDG_CACHE_HOME": str(cache_dir()), "COPILOT_OFFLINE": "true",
                                   "COPILOT_AUTO_UPDATE": "false"})
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"{path} does not run: {exc}"
    if done.returncode != 0 or VERSION not in done.stdout:
        return None, f"{path} --version said {done.stdout.strip() or done.stderr.strip()!r}, want {VERSION}"
    return str(path), ""


def cache_dir() -> Path:
    path = PREFIX / ".copilot-cache"
    path.mkdir(parents=True, exist_ok=True)
    return path


def need() -> str:
    path, why = binary()
    if path is None:
        pytest.skip(why)
    return path


def wrapped(event: str) -> str:
    """The registration ``yupana install copilot`` writes (the skew-proof wrapper, ``--client copilot``)."""
    return (f"out=$({shlex.quote(kit.YUPANA)} hook {event} --client copilot 2>/dev/null) || exit 0; "
            "printf '%s' \"$out\"")


class CopilotCase(kit.Case):
    """One sandbox for Copilot CLI (kit.Case's layout; Copilot's environment and command line)."""

    def __init__(self, base: Path, tenant: str | None = "polecat-3") -> None:
        self.binary_path = need()
        self.base = base
        self.client = "copilot"
        self.binary = self.binary_path
        self.home, self.tmp, self.state = base / "home", base / "tmp", base / "state"
        self.codex_home = self.home / ".codex"
        self.bin = base / "bin"
        self.repo = base / "repo"
        for d in (self.home, self.tmp, self.state, self.bin, self.repo):
            d.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "init", "-q", str(self.repo)], check=True, timeout=30)
        (self.repo / ".bobbin").mkdir()
        self.ssh_log = base / "ssh.log"
        ssh = self.bin / "ssh"
        ssh.write_text(f"#!/bin/sh\nprintf '%s\\n' \"$*\" >> {shlex.quote(str(self.ssh_log))}\necho fake-ssh-ran\n")
        ssh.chmod(0o755)
        self.tenant = tenant
        self.runs = 0

    @property
    def copilot_home(self) -> Path:
        return self.home / ".copilot"

    def env(self) -> dict:
        env = {"PATH": f"{self.bin}:{PREFIX / 'node_modules' / '.bin'}:/usr/local/bin:/usr/bin:/bin",
               "HOME": str(self.home), "TMPDIR": str(self.tmp), "XDG_STATE_HOME": str(self.state),
               "XDG_CACHE_HOME": str(cache_dir()), "LANG": "C.UTF-8", "TERM": "dumb", "NO_COLOR": "1",
               "PYTHONDONTWRITEBYTECODE": "1",
               "COPILOT_OFFLINE": "true", "COPILOT_AUTO_UPDATE": "false",
               "COPILOT_PROVIDER_BASE_URL": "http://127.0.0.1:{PORT}", "COPILOT_PROVIDER_TYPE": "anthropic",
               "COPILOT_PROVIDER_API_KEY": "sk-fake-loopback", "COPILOT_MODEL": MODEL}
        if self.tenant:
            env["BOBBIN_ROLE"] = self.tenant
        return env

    # ── registration ───────────────────────────────────────────────────────────────
    def register(self, commands: dict[str, str] | None = None, timeout: int = 5, *, where: str = "user") -> Path:
        """A hand registration in Copilot's own format, ``commands`` overriding an event's command
        (a falsy one leaves that hook out). ``where``: ``user`` (``~/.copilot/settings.json``) or
        ``project`` (``.github/hooks/yupana.json``, which ``-p`` skips in an untrusted folder)."""
        commands = {e: wrapped(e) for e in ("pre-edit", "pre-bash", "post-edit")} | (commands or {})
        plan = [("preToolUse", EDIT_MATCHER, "pre-edit"), ("preToolUse", "bash", "pre-bash"),
                ("postToolUse", EDIT_MATCHER, "post-edit")]
        hooks: dict = {}
        for event, matcher, name in plan:
            if commands.get(name):
                hooks.setdefault(event, []).append(
                    {"matcher": matcher, "hooks": [{"type": "command", "command": commands[name], "timeout": timeout}]})
        target = (self.copilot_home / "settings.json" if where == "user"
                  else self.repo / ".github" / "hooks" / "yupana.json")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps({"version": 1, "hooks": hooks} if where != "user" else {"hooks": hooks},
                                     indent=2))
        return target

    # ── running the client ─────────────────────────────────────────────────────────
    def run(self, turns: list, *, prompt: str = "do the task", mode: str = "", cwd: Path | None = None,
            timeout: int = kit.RUN_TIMEOUT, codex_args: tuple[str, ...] = (), args: tuple[str, ...] = (),
            env: dict[str, str] | None = None) -> kit.Run:
        """One ``copilot -p`` run (every tool allowed: the client's own permission flow stays out
        of the way, so what stops a tool is the hook); ``args`` are extra flags (``--trust-folder``),
        ``env`` extra variables."""
        self.runs += 1
        n = self.runs
        log = self.base / f"requests-{n}.jsonl"
        result_path = self.base / f"result-{n}.json"
        argv = [self.binary, "-p", prompt, "--allow-all", "--no-auto-update", "--disable-client-telemetry",
                "--no-ask-user", "--output-format", "json", *args]
        spec = {"argv": argv, "cwd": str(cwd or self.repo), "env": self.env() | (env or {}), "turns": turns, "log": str(log),
                "result": str(result_path), "timeout": timeout, "netns": kit.netns()}
        spec_path = self.base / f"spec-{n}.json"
        spec_path.write_text(json.dumps(spec))
        runner = [sys.executable, str(kit.HERE / "runner.py"), str(spec_path)]
        if kit.netns():
            runner = ["unshare", "-n", *runner]
        subprocess.run(runner, timeout=timeout + 30, check=True)
        import fake_models

        run = kit.Run(json.loads(result_path.read_text()), fake_models.read_log(str(log)))
        assert not run.timed_out, run
        return run


def edit(path: str, old: str, new: str) -> list:
    """A script: Copilot's ``edit`` tool on turn 1, end on turn 2."""
    return [[{"tool": "edit", "input": {"path": path, "old_str": old, "new_str": new}}]]


def create(path: str, text: str) -> list:
    """A script: Copilot's ``create`` tool (a new file) on turn 1."""
    return [[{"tool": "create", "input": {"path": path, "file_text": text}}]]


def bash(command: str) -> list:
    return [[{"tool": "bash", "input": {"command": command, "description": "run it"}}]]
