"""Credentials in an endpoint URL never leak (issue 9 §6), through the real CLI and real servers.

Every way a user can put a secret into the endpoint — ``user:password@`` or a lone token as
userinfo, a ``?access_token=`` / ``?token=`` / ``#key=`` parameter, in the project config,
the user config or ``YUPANA_QUIPU__ENDPOINT``, on a ``file:`` location — against a store
that answers, one that refuses the connection, one that fails with 500, one that redirects
to a Location carrying the secret and one whose error body echoes the request. Then every
command a user runs (hooks, ``project``, ``project --dump`` in each format, ``status``,
``status --json``, ``status --live``, ``explain``, ``config check``, a refresh worker) and a
walk of the whole state directory, HOME and TMPDIR (the config files that hold the secret
on purpose aside), every stdout and stderr and every live worker's argv: no secret anywhere.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from catalogue_kit import write_catalogue
from conftest import run_yupana

SECRET = "LEAKME"  # every secret below contains it; nothing yupana prints or stores may


class EchoServer:
    """A store that misbehaves with the secret in its answer: ``redirect`` (a Location that
    repeats the request's userinfo-free URL plus the secret token) or ``echo`` (a 500 whose
    body quotes the request path and query, and a made-up full URL with the credentials)."""

    def __init__(self, behaviour: str) -> None:
        self.behaviour = behaviour
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                self.rfile.read(length)
                if server.behaviour == "redirect":
                    body = b""
                    self.send_response(307)
                    self.send_header("Location", f"http://mallory:{SECRET}-loc@127.0.0.1:9/x?token={SECRET}-loc2")
                else:
                    body = (f"no dataset at {self.path} (asked as http://alice:{SECRET}-echo@"
                            f"{self.headers.get('host')}{self.path})").encode()
                    self.send_response(500)
                    self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    @property
    def hostport(self) -> str:
        return f"127.0.0.1:{self.httpd.server_address[1]}"

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def echo_server():
    started: list[EchoServer] = []

    def start(behaviour: str) -> EchoServer:
        started.append(EchoServer(behaviour))
        return started[-1]

    yield start
    for server in started:
        server.stop()


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# Each case: where the endpoint is configured, and (endpoint, extra [yupana.quipu] lines) made
# from the catalogue directory and the servers (started only for the case that needs them).
def _hostport(url: str) -> str:
    return url.split("://", 1)[1].split("/", 1)[0]


CASES = {
    "project-userinfo-quipu": ("project", lambda cat, s: (
        f"http://alice:{SECRET}-pw1@{_hostport(s.quipu(cat / 'catalogue.ttl').url)}", 'dialect = "quipu"')),
    "user-query-token-working": ("user", lambda cat, s: (
        f"{s.guarded(cat / 'catalogue.ttl').url}?access_token={SECRET}-tok2", 'dialect = "sparql11"')),
    "env-userinfo-500": ("env", lambda cat, s: (
        f"http://bob:{SECRET}-pw3@{_hostport(s.faulty('http-500'))}/sparql", 'dialect = "sparql11"')),
    "env-token-refused-detect": ("env", lambda cat, s: (
        f"http://127.0.0.1:{_closed_port()}/sparql?token={SECRET}-tok4&x=1", "")),
    "project-lone-token-userinfo": ("project", lambda cat, s: (
        f"http://{SECRET}-tok5@{_hostport(s.guarded(cat / 'catalogue.ttl').url)}/sparql", 'dialect = "sparql11"')),
    "user-redirect-fragment-key": ("user", lambda cat, s: (
        f"http://{s.echo('redirect').hostport}/sparql?api_key={SECRET}-tok6#key={SECRET}-tok7", 'dialect = "sparql11"')),
    "project-echoing-error-body": ("project", lambda cat, s: (
        f"http://{s.echo('echo').hostport}/sparql?secret={SECRET}-tok8", 'dialect = "sparql11"')),
    "project-file-userinfo": ("project", lambda cat, s: (f"file://carol:{SECRET}-pw9@{cat}", "")),
    "user-file-query-key": ("user", lambda cat, s: (f"file:{cat}?key={SECRET}-tok10", "")),
    # issue 23 §3: a password holding an unencoded / or #, an OAuth ?code=
    "project-password-with-slash": ("project", lambda cat, s: (
        f"http://dave:{SECRET}/pw11@{_hostport(s.guarded(cat / 'catalogue.ttl').url)}/sparql", 'dialect = "sparql11"')),
    "env-password-with-hash": ("env", lambda cat, s: (
        f"http://erin:{SECRET}#pw12@{_hostport(s.guarded(cat / 'catalogue.ttl').url)}/sparql", 'dialect = "sparql11"')),
    "user-code-parameter": ("user", lambda cat, s: (
        f"{s.guarded(cat / 'catalogue.ttl').url}?code={SECRET}-tok13", 'dialect = "sparql11"')),
}


class _Servers:
    def __init__(self, quipu, guarded, faulty, echo) -> None:
        self.quipu, self.guarded, self.faulty, self.echo = quipu, guarded, faulty, echo


def _payloads(repo: Path) -> dict:
    edit = {"session_id": "sess-leak", "cwd": str(repo), "hook_event_name": "PreToolUse", "tool_name": "Edit",
            "tool_input": {"file_path": str(repo / "src" / "lib.rs"), "old_string": "a", "new_string": "ACME0-12"}}
    bash = {"session_id": "sess-leak", "cwd": str(repo), "hook_event_name": "PreToolUse", "tool_name": "Bash",
            "tool_input": {"command": "df -h && touch out.txt"}}
    post = dict(edit, hook_event_name="PostToolUse")
    return {"pre-edit": edit, "pre-bash": bash, "post-edit": post}


def _live_worker_argv(env) -> list[bytes]:
    """The argv of every live process running with this test's state directory."""
    marker = f"XDG_STATE_HOME={env.state}".encode()
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as fh:
                if marker not in fh.read().split(b"\0"):
                    continue
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                found.append(fh.read())
        except OSError:
            continue
    return found


def _wait_for_workers(env, seen: list[bytes], timeout: float = 30.0) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        argv = _live_worker_argv(env)
        seen += argv
        if not argv:
            return
        time.sleep(0.05)


def _walk(base: Path, skip: set[Path]) -> list[str]:
    hits = []
    for dirpath, dirnames, filenames in os.walk(base):
        for name in dirnames + filenames:
            if SECRET in name:
                hits.append(f"name: {Path(dirpath) / name}")
        for name in filenames:
            path = Path(dirpath) / name
            if path in skip or path.is_symlink() or not path.is_file():
                continue
            data = path.read_bytes()
            if SECRET.encode() in data:
                at = data.index(SECRET.encode())
                hits.append(f"{path}: …{data[max(0, at - 80):at + 40]!r}")
    return hits


@pytest.mark.parametrize("case", list(CASES))
def test_no_output_and_no_state_file_holds_the_secret(case, env, tmp_path, quipu_server, guarded_server,
                                                      faulty_server, echo_server):
    where, build = CASES[case]
    cat = write_catalogue(tmp_path / "cat", n=2)
    endpoint, extra = build(cat, _Servers(quipu_server, guarded_server, faulty_server, echo_server))
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "lib.rs").write_text("fn a() {}\n")
    (repo / ".bobbin").mkdir()
    quipu = ("[yupana.quipu]\nenabled = true\nrefresh_interval_secs = 0\nconnect_timeout_secs = 1\n"
             f"request_timeout_secs = 2\nrefresh_deadline_secs = 5\n{extra}\n")
    policy = '[yupana.policy]\nmode = "enforce"\naction_scope = "advise"\n'
    line = f'endpoint = "{endpoint}"\n'
    configs = {repo / ".bobbin" / "config.toml"}
    if where == "project":
        (repo / ".bobbin" / "config.toml").write_text(policy + quipu + line)
    elif where == "user":
        configs.add(env.user_config(policy + quipu + line))
        (repo / ".bobbin" / "config.toml").write_text("")
    else:
        configs.add(env.user_config(policy + quipu))
        (repo / ".bobbin" / "config.toml").write_text("")
        env["YUPANA_QUIPU__ENDPOINT"] = endpoint

    outputs: list[tuple[str, bytes]] = []
    workers: list[bytes] = []

    def run(*argv: str, stdin: bytes | None = None) -> None:
        done = run_yupana(list(argv), env, stdin=stdin, cwd=repo)
        outputs.append((" ".join(argv) + " [stdout]", done.stdout))
        outputs.append((" ".join(argv) + " [stderr]", done.stderr))
        workers.extend(_live_worker_argv(env))

    payloads = _payloads(repo)
    for event in ("pre-edit", "pre-bash", "post-edit"):  # before any cache: misses, detached refreshes
        run("hook", event, stdin=json.dumps(payloads[event]).encode())
    _wait_for_workers(env, workers)
    run("project")
    run("config", "check")
    run("config", "check", "--json")
    for fmt in ("table", "json", "turtle"):
        run("project", "--dump", "--format", fmt)
    run("status")
    run("status", "--json")
    run("status", "--live")
    run("status", "--live", "--json")
    for event in ("pre-edit", "pre-bash", "post-edit"):
        run("hook", event, stdin=json.dumps(payloads[event]).encode())
        run("explain", stdin=json.dumps(payloads[event]).encode())
        run("explain", "--json", stdin=json.dumps(payloads[event]).encode())
    run("refresh-worker", "--root", str(repo), "--force")
    _wait_for_workers(env, workers)

    leaks = [f"{what}: …{data[max(0, data.index(SECRET.encode()) - 80):][:160]!r}"
             for what, data in outputs if SECRET.encode() in data]
    leaks += [f"worker argv: {argv!r}" for argv in workers if SECRET.encode() in argv]
    leaks += _walk(env.base, configs)
    assert not leaks, f"{len(leaks)} leak(s):\n" + "\n".join(leaks)
    assert any(b"***" in data for _, data in outputs), "the endpoint is shown, redacted"
    if os.environ.get("YUPANA_TEST_SHOW"):
        for what, data in outputs:
            print(f"── {what}\n{data.decode(errors='replace')[:1500]}")
