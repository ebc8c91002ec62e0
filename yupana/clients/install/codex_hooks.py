"""Codex hook trust: ask Codex's own app-server, write ``[hooks.state."<key>"]``, verify.

Codex skips an untrusted hook — or one changed in any way after it was trusted — silently in
``codex exec``. Trust lives in ``$CODEX_HOME/config.toml`` as ``[hooks.state."<key>"]
trusted_hash = "<currentHash>"``, and ``codex app-server`` (JSON-RPC over stdio:
``initialize``, ``initialized``, ``hooks/list {"cwds": [DIR]}``) reports each hook's key,
``currentHash`` and ``trustStatus``. ``yupana install`` asks the binary that will enforce
it, writes it, and asks again to verify. ``yupana status`` must stay fast, so it computes
the hash the way Codex does (:func:`hook_hash`; tests/clients checks it against the pinned
Codex's app-server) and compares it with the trusted one.

Keys are positional (``<CODEX_HOME>/hooks.json:pre_tool_use:<group>:<handler>``), so when
removing ours moves another hook, its trust entry is carried to its new key
(:func:`moved_keys`).
"""

from __future__ import annotations

from typing import Any

import json
import os
import selectors
import signal
import subprocess
import time

from yupana.commands.install import hooks as install_hooks
from yupana.clients.install import codex_toml as install_toml

APP_SERVER_TIMEOUT_SECS = 20.0
_SNAKE = {"PreToolUse": "pre_tool_use", "PostToolUse": "post_tool_use"}


class AppServerError(Exception):
    """The app-server could not be asked (missing, crashed, silent past the deadline)."""


def hook_hash(file_event: str, matcher: object, handler: dict[str, Any]) -> str | None:
    """``currentHash`` of one hooks.json command handler, computed as Codex 0.171.0 does
    (codex-rs/hooks ``command_hook_hash``): SHA-256 of the compact, key-sorted JSON of the
    normalised identity ``{event_name, matcher, hooks: [{type, command, timeout, async,
    statusMessage}]}`` — timeout defaulting to 600 and at least 1, absent fields omitted.
    None when the handler is not one Codex would hash (no command, a timeout that is not an
    integer)."""
    import hashlib

    command, timeout = handler.get("command"), handler.get("timeout", handler.get("timeoutSec"))
    asynchronous = handler.get("async", False)
    if not isinstance(command, str) or not command.strip() or not isinstance(asynchronous, bool):
        return None
    if timeout is None:
        timeout = 600
    if not isinstance(timeout, int) or isinstance(timeout, bool) or timeout < 0:
        return None
    normalised: dict[str, Any] = {"type": "command", "command": command, "timeout": max(1, timeout), "async": asynchronous}
    if isinstance(handler.get("statusMessage"), str):
        normalised["statusMessage"] = handler["statusMessage"]
    identity: dict[str, Any] = {"event_name": _SNAKE.get(file_event, file_event), "hooks": [normalised]}
    if isinstance(matcher, str):
        identity["matcher"] = matcher
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def codex_home() -> str:
    return os.environ.get("CODEX_HOME") or os.path.join(os.path.expanduser("~"), ".codex")


def hooks_list(codex: list[str], cwd: str, timeout: float = APP_SERVER_TIMEOUT_SECS,
               env: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Every hook ``codex app-server`` reports for ``cwd``; AppServerError past ``timeout``."""
    deadline = time.monotonic() + timeout
    try:
        proc = subprocess.Popen([*codex, "app-server"], cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, start_new_session=True, env=env)
    except OSError as exc:
        raise AppServerError(f"cannot start {codex[0]} app-server: {exc}") from None
    buf = bytearray()  # bytes read past the last reply
    try:
        _send(proc, {"id": 1, "method": "initialize",
                     "params": {"clientInfo": {"name": "yupana", "title": "yupana install", "version": _version()}}})
        _reply(proc, 1, deadline, buf)
        _send(proc, {"method": "initialized"})
        _send(proc, {"id": 2, "method": "hooks/list", "params": {"cwds": [cwd]}})
        result = _reply(proc, 2, deadline, buf)
    finally:
        _stop(proc)
    hooks: list[dict[str, Any]] = []
    for entry in (result or {}).get("data") or []:
        hooks.extend(h for h in entry.get("hooks") or [] if isinstance(h, dict))
    return hooks


def _version() -> str:
    from yupana import __version__

    return __version__


def _send(proc: subprocess.Popen[bytes], message: dict[str, Any]) -> None:
    assert proc.stdin is not None  # started with stdin=PIPE
    try:
        proc.stdin.write((json.dumps(message) + "\n").encode())
        proc.stdin.flush()
    except OSError as exc:
        raise AppServerError(f"app-server closed its input ({exc})") from None


def _reply(proc: subprocess.Popen[bytes], want_id: int, deadline: float, buf: bytearray) -> dict[str, Any]:
    """Read JSON lines until the response to ``want_id``; notifications are skipped."""
    assert proc.stdout is not None  # started with stdout=PIPE
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    fd = proc.stdout.fileno()
    try:
        while True:
            while b"\n" in buf:
                cut = buf.index(b"\n")
                line = bytes(buf[:cut])
                del buf[:cut + 1]
                try:
                    msg = json.loads(line)
                except ValueError:
                    continue
                if isinstance(msg, dict) and msg.get("id") == want_id:
                    if "error" in msg:
                        raise AppServerError(f"app-server answered an error: {msg['error']}")
                    return msg.get("result") or {}
            left = deadline - time.monotonic()
            if left <= 0:
                raise AppServerError("app-server did not answer in time")
            if not sel.select(left):
                continue
            chunk = os.read(fd, 65536)
            if not chunk:
                raise AppServerError(f"app-server exited (status {proc.poll()}) before answering")
            buf += chunk
    finally:
        sel.close()


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """Close its input, give it a moment, then end its whole process group by id."""
    try:
        if proc.stdin is not None:
            proc.stdin.close()
    except OSError:
        pass
    try:
        proc.wait(timeout=2)
    except subprocess.TimeoutExpired:
        pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass
    if proc.stdout:
        proc.stdout.close()


def ours_in(hooks: list[dict[str, Any]], hooks_path: str) -> list[dict[str, Any]]:
    """The hooks the app-server reports from our hooks.json that run a yupana hook."""
    real = os.path.realpath(hooks_path)
    return [h for h in hooks
            if h.get("sourcePath") and os.path.realpath(h["sourcePath"]) == real
            and install_hooks.our_event({"command": h.get("command")})]


def key_prefix_matches(key: str, hooks_path: str) -> tuple[str, int, int] | None:
    """(snake event, group, handler) when ``key`` names a slot of ``hooks_path``, else None."""
    head, sep, rest = key.rpartition(":")
    head2, _, group = head.rpartition(":")
    path, _, event = head2.rpartition(":")
    if not sep or not path or not group.isdigit() or not rest.isdigit():
        return None
    if os.path.realpath(path) != os.path.realpath(hooks_path):
        return None
    return event, int(group), int(rest)


def moved_keys(before: dict[str, Any], after: dict[str, Any], state_keys: list[str], hooks_path: str) -> tuple[dict[str, Any], set[Any]]:
    """Trust-table edits for a hooks.json rewrite: (rename old key -> new key for other hooks that
    moved, keys of slots that held ours and no longer do). A slot that stays ours keeps its
    table (the caller re-trusts it from the app-server)."""
    old_pos = install_hooks.positions(before)
    new_pos = install_hooks.positions(after)
    moves = {}
    for handler_id, (event, gi, hi) in old_pos.items():
        if handler_id in new_pos and new_pos[handler_id] != (event, gi, hi):
            moves[(_SNAKE.get(event, event), gi, hi)] = new_pos[handler_id]
    ours_slots = _our_slots(before) - _our_slots(after)  # slots of ours that are gone or now another's
    rename, drop = {}, set()
    for key in state_keys:
        slot = key_prefix_matches(key, hooks_path)
        if slot is None:
            continue
        prefix = key[: -len(":".join(str(s) for s in slot)) - 1]
        if slot in moves:
            event, gi, hi = moves[slot]
            rename[key] = f"{prefix}:{_SNAKE.get(event, event)}:{gi}:{hi}"
        elif slot in ours_slots:
            drop.add(key)
    return rename, drop


def _our_slots(data: dict[str, Any]) -> set[Any]:
    return {(_SNAKE.get(e, e), gi, hi) for e, groups in (data.get("hooks") or {}).items()
            for gi, g in enumerate(groups) for hi, h in enumerate(g.get("hooks") or [])
            if install_hooks.our_event(h)}


def read_config(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except FileNotFoundError:
        return ""


def state_keys(config_text: str) -> list[str]:
    import tomllib

    try:
        return list(install_toml.state_tables(tomllib.loads(config_text)))
    except tomllib.TOMLDecodeError:
        return []
