"""A sandbox per case for running the real Claude Code and Codex CLIs against a scripted fake model.

Each :class:`Case` has its own HOME, TMPDIR, XDG_STATE_HOME, CODEX_HOME, a git repository
(with ``.bobbin/config.toml``) and a ``bin/`` first on PATH (a fake ``ssh`` that records its
argv). :meth:`Case.run` starts ``runner.py`` — inside ``unshare -n`` with only loopback up
when the machine allows it — which serves the script on a free loopback port, runs the
client with a bounded wait, kills its process group by id, and reports back. Every client
is also configured off the network (Claude Code's traffic switches; Codex's plugins, apps,
analytics and update checks off), so a plain run stays on loopback too.

The clients come from ``npm install --prefix .clients`` (.ci/run); ``YUPANA_CLIENTS_PREFIX``
points elsewhere. Missing, they skip with the reason.
"""

from __future__ import annotations

import functools
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
PREFIX = Path(os.environ.get("YUPANA_CLIENTS_PREFIX") or REPO / ".clients")
CLAUDE_VERSION = "2.1.332"
CODEX_VERSION = "0.171.0"
YUPANA = str(Path(sys.executable).with_name("yupana"))
RUN_TIMEOUT = 60
EDIT_MATCHER = "Edit|Write|MultiEdit|NotebookEdit"


@functools.cache
def client_binary(name: str) -> tuple[str | None, str]:
    """(path, "") when the pinned client runs here, else (None, why not)."""
    path = PREFIX / "node_modules" / ".bin" / name
    if not path.exists():
        return None, (f"{name} is not installed under {PREFIX} (.ci/run installs the pinned clients with npm: "
                      f"npm install --prefix .clients @anthropic-ai/claude-code@{CLAUDE_VERSION} "
                      f"@openai/codex@{CODEX_VERSION})")
    want = CLAUDE_VERSION if name == "claude" else CODEX_VERSION
    try:
        done = subprocess.run([str(path), "--version"], capture_output=True, text=True, timeout=30,
                              env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/nonexistent",
                                   "DISABLE_AUTOUPDATER": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"})
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"{path} does not run: {exc}"
    if done.returncode != 0 or want not in done.stdout:
        return None, f"{path} --version said {done.stdout.strip() or done.stderr.strip()!r}, want {want}"
    return str(path), ""


def need(name: str) -> str:
    path, why = client_binary(name)
    if path is None:
        pytest.skip(why)
    return path


@functools.cache
def netns() -> bool:
    """Whether ``unshare -n`` (a private network namespace) works here; probed once.
    ``YUPANA_CLIENTS_NETNS=0`` forces the plain runs (the clients' loopback-only config still holds)."""
    if os.environ.get("YUPANA_CLIENTS_NETNS") == "0":
        return False
    try:
        return subprocess.run(["unshare", "-n", "ip", "link", "set", "lo", "up"], capture_output=True,
                              timeout=10).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def isolated(argv: list[str]) -> list[str]:
    """``argv`` inside a private network namespace with only loopback up, when allowed."""
    if not netns():
        return argv
    return ["unshare", "-n", "sh", "-c", 'ip link set lo up && exec "$@"', "sh", *argv]


def wrapped(event: str) -> str:
    """The documented skew-proof registration of a yupana hook (docs/integration.md)."""
    return f"out=$({shlex.quote(YUPANA)} hook {event} 2>/dev/null) || exit 0; printf '%s' \"$out\""


class Run:
    """What one client run did: exit status, stdout events, stderr, and every model request."""

    def __init__(self, result: dict, requests: list[dict]) -> None:
        self.rc = result.get("rc")
        self.timed_out = result.get("timed_out")
        self.seconds = result.get("seconds")
        self.stdout = result.get("stdout", "")
        self.stderr = result.get("stderr", "")
        self.requests = requests
        self.events = []
        for line in self.stdout.splitlines():
            try:
                self.events.append(json.loads(line))
            except ValueError:
                pass

    def __repr__(self) -> str:
        return (f"Run(rc={self.rc}, timed_out={self.timed_out}, stdout={self.stdout[-1500:]!r}, "
                f"stderr={self.stderr[-1500:]!r})")

    @property
    def conversation(self) -> list[dict]:
        """The requests that carried the conversation (those offering tools)."""
        return [r["body"] for r in self.requests if isinstance(r.get("body"), dict) and r["body"].get("tools")]

    def tool_results(self) -> list[str]:
        """What the model was sent back for its tool calls, as text (Anthropic tool_result /
        Responses function_call_output and custom_tool_call_output)."""
        last = self.conversation[-1] if self.conversation else {}
        out = []
        for msg in last.get("messages") or []:
            for block in msg.get("content") if isinstance(msg.get("content"), list) else []:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    out.append(_text(block.get("content")))
        for item in last.get("input") or []:
            if isinstance(item, dict) and item.get("type") in ("function_call_output", "custom_tool_call_output"):
                out.append(_text(item.get("output")))
        return out

    def model_messages(self, role: str) -> list[str]:
        """Texts of the messages with ``role`` in the last conversation request (system/developer notes)."""
        last = self.conversation[-1] if self.conversation else {}
        out = []
        for msg in (last.get("messages") or []) + (last.get("input") or []):
            if isinstance(msg, dict) and msg.get("role") == role:
                out.append(_text(msg.get("content")))
        return out

    def model_text(self) -> str:
        """Everything the model was sent in the last conversation request, as one string."""
        last = self.conversation[-1] if self.conversation else {}
        return json.dumps(last.get("messages") or last.get("input") or [])

    def system_events(self) -> list[dict]:
        return [e for e in self.events if e.get("type") == "system" and e.get("subtype") != "init"]


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(_text(c.get("text") if isinstance(c, dict) else c) for c in content)
    return "" if content is None else str(content)


class Case:
    """One sandbox: its own home, temp and state directories, CODEX_HOME and git repository."""

    def __init__(self, base: Path, client: str, tenant: str | None = "polecat-3") -> None:
        self.base = base
        self.client = client
        self.binary = need(client)
        self.home, self.tmp, self.state = base / "home", base / "tmp", base / "state"
        self.codex_home = self.home / ".codex"
        self.bin = base / "bin"
        self.repo = base / "repo"
        for d in (self.home, self.tmp, self.state, self.codex_home, self.bin, self.repo):
            d.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "init", "-q", str(self.repo)], check=True, timeout=30)
        (self.repo / ".bobbin").mkdir()
        self.ssh_log = base / "ssh.log"
        ssh = self.bin / "ssh"
        ssh.write_text(f"#!/bin/sh\nprintf '%s\\n' \"$*\" >> {shlex.quote(str(self.ssh_log))}\necho fake-ssh-ran\n")
        ssh.chmod(0o755)
        self.tenant = tenant
        self.runs = 0
        if client == "codex":
            (self.codex_home / "config.toml").write_text(self.codex_config())

    # ── the environment ────────────────────────────────────────────────────────────
    def env(self) -> dict:
        env = {"PATH": f"{self.bin}:{PREFIX / 'node_modules' / '.bin'}:/usr/local/bin:/usr/bin:/bin",
               "HOME": str(self.home), "TMPDIR": str(self.tmp), "XDG_STATE_HOME": str(self.state),
               "CODEX_HOME": str(self.codex_home), "LANG": "C.UTF-8", "TERM": "dumb", "NO_COLOR": "1",
               "PYTHONDONTWRITEBYTECODE": "1"}
        if self.tenant:
            env["BOBBIN_ROLE"] = self.tenant
        if self.client == "claude":
            env.update({"ANTHROPIC_BASE_URL": "http://127.0.0.1:{PORT}", "ANTHROPIC_API_KEY": "sk-fake-loopback",
                        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1",
                        "DISABLE_AUTOUPDATER": "1", "DISABLE_ERROR_REPORTING": "1", "IS_SANDBOX": "1"})
        else:
            env["FAKE_API_KEY"] = "sk-fake-loopback"
        return env

    def codex_config(self) -> str:
        return ("model = \"gpt-5.5\"\nmodel_provider = \"fake\"\napproval_policy = \"never\"\n"
                "sandbox_mode = \"danger-full-access\"\nallow_login_shell = false\n"
                "check_for_update_on_startup = false\n\n"
                "[model_providers.fake]\nname = \"fake\"\nbase_url = \"http://127.0.0.1:9/v1\"\n"
                "env_key = \"FAKE_API_KEY\"\nwire_api = \"responses\"\n\n"
                "[features]\nplugins = false\napps = false\nremote_plugin = false\nin_app_updates = false\n\n"
                "[analytics]\nenabled = false\n")

    # ── the project ────────────────────────────────────────────────────────────────
    def config(self, text: str) -> "Case":
        (self.repo / ".bobbin" / "config.toml").write_text(text)
        return self

    def file(self, rel: str, text: str) -> Path:
        path = self.repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path

    def records(self, kind: str | None = None) -> list[dict]:
        spool = self.state / "yupana" / "metrics.jsonl"
        if not spool.exists():
            return []
        recs = [json.loads(line) for line in spool.read_text().splitlines() if line.strip()]
        return [r for r in recs if kind is None or r.get("kind") == kind]

    def ssh_calls(self) -> list[str]:
        return self.ssh_log.read_text().splitlines() if self.ssh_log.exists() else []

    # ── registration ───────────────────────────────────────────────────────────────
    def register(self, commands: dict[str, str] | None = None, timeout: int = 5) -> None:
        """Hand-written registration (docs/integration.md), ``commands`` overriding an event's command."""
        commands = {e: wrapped(e) for e in ("pre-edit", "pre-bash", "post-edit")} | (commands or {})
        edit = EDIT_MATCHER if self.client == "claude" else "apply_patch"
        plan = [("PreToolUse", edit, "pre-edit"), ("PreToolUse", "Bash", "pre-bash"),
                ("PostToolUse", edit, "post-edit")]
        hooks: dict = {}
        for event, matcher, name in plan:
            if commands.get(name):
                hooks.setdefault(event, []).append(
                    {"matcher": matcher, "hooks": [{"type": "command", "command": commands[name], "timeout": timeout}]})
        target = self.repo / ".claude" / "settings.json" if self.client == "claude" else self.codex_home / "hooks.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps({"hooks": hooks}, indent=2))
        if self.client == "codex":
            self.trust_codex_hooks()

    def trust_codex_hooks(self) -> None:
        """Trust every hook in hooks.json as a user would with /hooks (through the app-server)."""
        done = subprocess.run(isolated([sys.executable, str(HERE / "trust_hooks.py"), str(self.repo)]),
                              env=self.env() | {"PATH": f"{PREFIX / 'node_modules' / '.bin'}:/usr/bin:/bin"},
                              capture_output=True, text=True, timeout=90)
        assert done.returncode == 0, done.stderr + done.stdout

    def yupana(self, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
        """The real CLI, as a user would run it in the repository (in the private network when allowed)."""
        return subprocess.run(isolated([YUPANA, *args]), cwd=str(cwd or self.repo), env=self.env(),
                              capture_output=True, text=True, timeout=120)

    # ── running the client ─────────────────────────────────────────────────────────
    def run(self, turns: list, *, prompt: str = "do the task", mode: str = "acceptEdits", cwd: Path | None = None,
            timeout: int = RUN_TIMEOUT, codex_args: tuple[str, ...] = ()) -> Run:
        """One client run; ``mode`` is Claude Code's permission mode, ``codex_args`` Codex's
        sandbox / approval flags (its defaults here: never ask, full access)."""
        self.runs += 1
        n = self.runs
        log = self.base / f"requests-{n}.jsonl"
        result_path = self.base / f"result-{n}.json"
        if self.client == "claude":
            argv = [self.binary, "-p", prompt, "--output-format", "stream-json", "--verbose",
                    "--permission-mode", mode]
        else:  # the port is known only inside the runner: an override, so config.toml is never rewritten
            argv = [self.binary, "exec", *codex_args, "--json", "--skip-git-repo-check",
                    "-c", 'model_providers.fake.base_url="http://127.0.0.1:{PORT}/v1"', prompt]
        spec = {"argv": argv, "cwd": str(cwd or self.repo), "env": self.env(), "turns": turns, "log": str(log),
                "result": str(result_path), "timeout": timeout, "netns": netns()}
        spec_path = self.base / f"spec-{n}.json"
        spec_path.write_text(json.dumps(spec))
        argv = [sys.executable, str(HERE / "runner.py"), str(spec_path)]
        if netns():
            argv = ["unshare", "-n", *argv]
        subprocess.run(argv, timeout=timeout + 30, check=True)
        import fake_models

        run = Run(json.loads(result_path.read_text()), fake_models.read_log(str(log)))
        assert not run.timed_out, run
        return run


def write(path: str, content: str) -> list:
    """A Claude Code script: Write ``content`` to ``path`` on turn 1, end on turn 2."""
    return [[{"tool": "Write", "input": {"file_path": path, "content": content}}]]


def bash(command: str) -> list:
    return [[{"tool": "Bash", "input": {"command": command, "description": "run it"}}]]


def patch(text: str) -> list:
    """A Codex script: apply_patch (a freeform custom tool call) on turn 1."""
    return [[{"custom": "apply_patch", "input": text}]]


def shell(command: str) -> list:
    """A Codex script: the shell tool (``exec_command``, hooks see ``Bash``) on turn 1."""
    return [[{"function": "exec_command", "arguments": {"cmd": command}}]]
