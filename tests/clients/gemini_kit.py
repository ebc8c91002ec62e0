"""A sandbox per case for running the real Gemini CLI against a scripted fake Gemini API.

Like :class:`kit.Case` (its own HOME, TMPDIR, XDG_STATE_HOME, git repository with
``.bobbin/config.toml``, a fake ``ssh`` first on PATH, the run inside ``unshare -n`` when
allowed, the client's process group killed by id), for ``@google/gemini-cli``:

* the model is the fake's Gemini API (``GOOGLE_GEMINI_BASE_URL`` on loopback, API-key auth
  with a placeholder key, a pinned model so no routing classifier is called);
* ``~/.gemini/settings.json`` turns usage statistics, telemetry and update checks off;
* the run is ``gemini -p … --approval-mode yolo -o stream-json``; by default with
  ``GEMINI_CLI_TRUST_WORKSPACE=true`` (headless Gemini refuses an untrusted folder), which a
  case can drop (``trust=None``) or replace by ``--skip-trust`` (``trust="flag"``).

The binary comes from ``npm install --prefix .clients @google/gemini-cli@GEMINI_VERSION``
(.ci/run); ``YUPANA_GEMINI_PREFIX`` (else ``YUPANA_CLIENTS_PREFIX``) points elsewhere. Missing,
the tests skip with the reason.
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

GEMINI_VERSION = "0.61.0"
PREFIX = Path(os.environ.get("YUPANA_GEMINI_PREFIX") or kit.PREFIX)
MODEL = "gemini-2.5-pro"
EDIT_MATCHER = "write_file|replace"
SHELL_MATCHER = "run_shell_command"
TIMEOUT_MS = 5000


@functools.cache
def gemini_binary() -> tuple[str | None, str]:
    """(path, "") when the pinned Gemini CLI runs here, else (None, why not)."""
    path = PREFIX / "node_modules" / ".bin" / "gemini"
    if not path.exists():
        return None, (f"gemini is not installed under {PREFIX} (.ci/run installs it: npm install --prefix .clients "
                      f"@google/gemini-cli@{GEMINI_VERSION}; YUPANA_GEMINI_PREFIX points elsewhere)")
    try:
        done = subprocess.run([str(path), "--version"], capture_output=True, text=True, timeout=60,
                              env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/nonexistent"})
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"{path} does not run: {exc}"
    if done.returncode != 0 or done.stdout.strip() != GEMINI_VERSION:
        return None, f"{path} --version said {done.stdout.strip() or done.stderr.strip()!r}, want {GEMINI_VERSION}"
    return str(path), ""


def need_gemini() -> str:
    path, why = gemini_binary()
    if path is None:
        pytest.skip(why)
    return path


def wrapped(event: str, command: str | None = None) -> str:
    """The skew-proof wrapper around ``command`` (default: this yupana's hook ``event``)."""
    inner = command or f"{shlex.quote(kit.YUPANA)} hook {event}"
    return f"out=$({inner} 2>/dev/null) || exit 0; printf '%s' \"$out\""


class GeminiRun(kit.Run):
    """A Gemini run: its stream-json events, stderr, and the Gemini API requests."""

    def _last(self) -> dict:
        return self.conversation[-1] if self.conversation else {}

    def tool_results(self) -> list[str]:
        """What the model was sent back for its function calls in the last request (the
        ``functionResponse`` parts of the last user turn: their ``output`` or ``error``)."""
        contents = self._last().get("contents") or []
        out = []
        for part in (contents[-1].get("parts") or []) if contents else []:
            response = part.get("functionResponse") if isinstance(part, dict) else None
            if isinstance(response, dict):
                body = response.get("response") or {}
                out.append(kit._text(body.get("error") if "error" in body else body.get("output", body)))
        return out

    def model_text(self) -> str:
        return json.dumps(self._last().get("contents") or [])

    def tool_events(self) -> list[dict]:
        return [e for e in self.events if e.get("type") == "tool_result"]


class GeminiCase(kit.Case):
    """One sandbox for the Gemini CLI (see the module docstring)."""

    def __init__(self, base: Path, tenant: str | None = "polecat-3", trust: str | None = "env") -> None:
        self.base = base
        self.client = "gemini"
        self.binary = need_gemini()
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
        self.trust = trust
        self.runs = 0
        self.extra_env: dict[str, str] = {}  # what a case adds to the client's (and its hooks') environment
        self.user_settings = self.home / ".gemini" / "settings.json"
        self.project_settings = self.repo / ".gemini" / "settings.json"
        self.user_settings.parent.mkdir(parents=True)
        self.user_settings.write_text(json.dumps({
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "privacy": {"usageStatisticsEnabled": False},
            "telemetry": {"enabled": False},
            "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
        }, indent=2))

    def env(self) -> dict:
        env = {"PATH": f"{self.bin}:{PREFIX / 'node_modules' / '.bin'}:/usr/local/bin:/usr/bin:/bin",
               "HOME": str(self.home), "TMPDIR": str(self.tmp), "XDG_STATE_HOME": str(self.state),
               "LANG": "C.UTF-8", "TERM": "dumb", "NO_COLOR": "1", "PYTHONDONTWRITEBYTECODE": "1",
               "GEMINI_API_KEY": "fake-loopback-key", "GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:{PORT}"}
        if self.trust == "env":
            env["GEMINI_CLI_TRUST_WORKSPACE"] = "true"
        if self.tenant:
            env["BOBBIN_ROLE"] = self.tenant
        return env | self.extra_env

    def register(self, commands: dict[str, str] | None = None, timeout: int = TIMEOUT_MS,
                 where: str = "user") -> None:
        """A hand-written registration (the skew-proof wrapper; ``commands`` overrides an event's
        command, an empty one leaves the event out) in the user's or the project's settings."""
        commands = {e: wrapped(e) for e in ("pre-edit", "pre-bash", "post-edit")} | (commands or {})
        plan = [("BeforeTool", EDIT_MATCHER, "pre-edit"), ("BeforeTool", SHELL_MATCHER, "pre-bash"),
                ("AfterTool", EDIT_MATCHER, "post-edit")]
        hooks: dict = {}
        for event, matcher, name in plan:
            if commands.get(name):
                hooks.setdefault(event, []).append({"matcher": matcher, "hooks": [
                    {"type": "command", "name": f"yupana-{name}", "command": commands[name], "timeout": timeout}]})
        target = self.user_settings if where == "user" else self.project_settings
        target.parent.mkdir(parents=True, exist_ok=True)
        data = json.loads(target.read_text()) if target.exists() else {}
        data["hooks"] = hooks
        target.write_text(json.dumps(data, indent=2))

    def run(self, turns: list, *, prompt: str = "do the task", mode: str = "yolo",  # type: ignore[override]
            cwd: Path | None = None, timeout: int = kit.RUN_TIMEOUT, args: tuple[str, ...] = ()) -> GeminiRun:
        """One headless run; ``mode`` is Gemini's ``--approval-mode``."""
        self.runs += 1
        n = self.runs
        log = self.base / f"requests-{n}.jsonl"
        result_path = self.base / f"result-{n}.json"
        argv = [self.binary, "-p", prompt, "-m", MODEL, "--approval-mode", mode, "-o", "stream-json", *args]
        if self.trust == "flag":
            argv.append("--skip-trust")
        spec = {"argv": argv, "cwd": str(cwd or self.repo), "env": self.env(), "turns": turns, "log": str(log),
                "result": str(result_path), "timeout": timeout, "netns": kit.netns()}
        spec_path = self.base / f"spec-{n}.json"
        spec_path.write_text(json.dumps(spec))
        argv = [sys.executable, str(kit.HERE / "runner.py"), str(spec_path)]
        if kit.netns():
            argv = ["unshare", "-n", *argv]
        subprocess.run(argv, timeout=timeout + 30, check=True)
        import fake_models

        run = GeminiRun(json.loads(result_path.read_text()), fake_models.read_log(str(log)))
        assert not run.timed_out, run
        return run


def write_file(path: str, content: str) -> list:
    """A Gemini script: ``write_file`` on turn 1 (the run ends on turn 2)."""
    return [[{"tool": "write_file", "input": {"file_path": path, "content": content}}]]


def replace(path: str, old: str, new: str) -> list:
    return [[{"tool": "replace", "input": {"file_path": path, "instruction": "make the change",
                                            "old_string": old, "new_string": new}}]]


def shell(command: str) -> list:
    return [[{"tool": "run_shell_command", "input": {"command": command, "description": "run it"}}]]
