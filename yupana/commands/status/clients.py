"""Hook health per coding client, for ``yupana status`` (``clients`` in ``--json``). Cold path.

"Not invoked" is a state, not silence: for every client found on this machine it reports
whether yupana's hooks are registered (and where), the wrapper and timeout in use, for
Codex whether each hook's trust matches the hook as registered, and when yupana last saw
a record from that client for this project.

* **Claude Code** — found when ``claude`` is on PATH or ``~/.claude`` / ``<project>/.claude``
  exists; registrations are read from ``<project>/.claude/settings.json``,
  ``<project>/.claude/settings.local.json`` and ``~/.claude/settings.json``.
* **Codex** — found when ``codex`` is on PATH or ``$CODEX_HOME`` (default ``~/.codex``)
  exists; registrations from ``$CODEX_HOME/hooks.json``, trust from
  ``[hooks.state."<key>"]`` in ``$CODEX_HOME/config.toml``. Codex runs a hook only when its
  ``trusted_hash`` equals the hook's current hash, computed here the way Codex computes it
  (:func:`yupana.commands.install.codex.hook_hash`) — no app-server is started, so status
  stays fast; ``yupana install codex`` verifies with the app-server itself.
* **Last seen** — the newest invocation record of each hook — ``guard`` (pre-edit),
  ``pre_bash_invoked``, ``post_edit_invoked`` (the hook registry's ``record``) — whose
  ``client`` and ``project`` fields name that client and this project (docs/records.md).
  Records written before those fields existed are counted apart.

Degraded (``yupana status`` exits 3): a registered Codex hook that is untrusted, modified
since it was trusted, or disabled; and a client with our hooks registered but no record of
it for this project in the spool read. Each problem carries its fix.
"""

from __future__ import annotations

from typing import Any

import os
import shutil

from yupana.commands.install import codex as install_codex
from yupana.commands.install import hooks as install_hooks
from yupana.commands.status.health import KIND_HOOK

CLIENTS = ("claude-code", "codex")
INSTALL_NAME = {"claude-code": "claude", "codex": "codex"}


def section(root: str, records: list[dict[str, Any]], now: int, *, deadline_ms: int, spool_complete: bool) -> dict[str, Any]:
    """``clients`` in ``status --json``: ``{"state", "claude-code": {…}, "codex": {…}, "unattributed"}``."""
    from yupana import project_root

    key = project_root.project_key(root)
    seen, unattributed = last_seen(records, key)
    out: dict[str, Any] = {"project_key": key, "unattributed_records": unattributed}
    for client in CLIENTS:
        found = _found(client, root)
        entry: dict[str, Any] = {"found": bool(found), "found_by": found}
        registrations = _claude_registrations(root) if client == "claude-code" else [_codex_registration()]
        entry["registrations"] = [r for r in registrations if r["hooks"] or r["error"]]
        hooks = [h for r in registrations for h in r["hooks"]]
        entry["registered"] = sorted({h["event"] for h in hooks}, key=install_hooks.EVENTS.index)
        entry["last_seen"] = _seen_summary(seen.get(client, {}), now)
        entry["problems"] = _problems(client, entry, hooks, deadline_ms, spool_complete)
        for hook in hooks:
            hook.pop("handler", None)  # the file's own object: read for the hash, not reported
        if client == "codex":
            entry["trust_hash_source"] = ("computed as Codex 0.171.0 computes it (no app-server is asked); "
                                          "`yupana install codex` verifies with `codex app-server`")
        entry["state"] = _state(entry)
        out[client] = entry
    out["state"] = "degraded" if any(out[c]["state"] == "degraded" for c in CLIENTS) else "ok"
    return out


def last_seen(records: list[dict[str, Any]], key: str) -> tuple[dict[str, Any], int]:
    """client -> hook -> newest ts of its invocation records for project ``key``; and how many
    invocation records name no client or project (written by an older yupana)."""
    seen: dict[str, Any] = {}
    unattributed = 0
    for rec in records:
        hook = KIND_HOOK.get(str(rec.get("kind")))
        if hook is None:
            continue
        client, project, ts = rec.get("client"), rec.get("project"), rec.get("ts")
        if client is None or project is None:
            unattributed += 1
            continue
        if project != key or client not in CLIENTS or not isinstance(ts, int):
            continue
        hooks = seen.setdefault(client, {})
        hooks[hook] = max(ts, hooks.get(hook, ts))
    return seen, unattributed


def _seen_summary(hooks: dict[str, Any], now: int) -> dict[str, Any]:
    last = max(hooks.values()) if hooks else None
    return {"at": last, "age_secs": max(0, now - last) if last is not None else None,
            "by_hook": {h: hooks.get(h) for h in KIND_HOOK.values()}}


def _found(client: str, root: str) -> list[str]:
    home = os.path.expanduser("~")
    if client == "claude-code":
        candidates = [("claude on PATH", shutil.which("claude")),
                      ("~/.claude", os.path.join(home, ".claude") if os.path.isdir(os.path.join(home, ".claude")) else None),
                      (".claude in the project", os.path.join(root, ".claude")
                       if os.path.isdir(os.path.join(root, ".claude")) else None)]
    else:
        codex_home = install_codex.codex_home()
        candidates = [("codex on PATH", shutil.which("codex")),
                      ("$CODEX_HOME" if os.environ.get("CODEX_HOME") else "~/.codex",
                       codex_home if os.path.isdir(codex_home) else None)]
    return [label for label, hit in candidates if hit]


# ── registrations ───────────────────────────────────────────────────────────────────


def _claude_registrations(root: str) -> list[dict[str, Any]]:
    from yupana.commands import install

    top = install.project_root(root)
    places = [("project", os.path.join(top, ".claude", "settings.json")),
              ("project-local", os.path.join(top, ".claude", "settings.local.json")),
              ("user", os.path.join(os.path.expanduser("~"), ".claude", "settings.json"))]
    if os.path.realpath(top) != os.path.realpath(root):
        places.insert(1, ("project", os.path.join(root, ".claude", "settings.json")))
    out, done = [], set()
    for scope, path in places:
        if os.path.realpath(path) in done:
            continue
        done.add(os.path.realpath(path))
        out.append(_read_registration(scope, path))
    return out


def _codex_registration() -> dict[str, Any]:
    home = install_codex.codex_home()
    reg = _read_registration("codex-home", os.path.join(home, "hooks.json"))
    if reg["hooks"]:
        _codex_trust(reg, os.path.join(home, "config.toml"))
    return reg


def _read_registration(scope: str, path: str) -> dict[str, Any]:
    """Our hooks in one settings/hooks file: ``{scope, path, error, hooks: [...]}``."""
    reg: dict[str, Any] = {"scope": scope, "path": path, "error": None, "hooks": []}
    try:
        text, data = install_hooks.read(path)
    except install_hooks.HooksFileError as exc:
        reg["error"] = str(exc)
        return reg
    if text is not None:
        reg["hooks"] = install_hooks.inspect(data)
    return reg


def _codex_trust(reg: dict[str, Any], config_path: str) -> None:
    """Each hook's ``trust``: trusted | untrusted | modified | disabled | unknown (and the hashes)."""
    import tomllib

    from yupana.commands.install import toml as install_toml

    try:
        tables = install_toml.state_tables(tomllib.loads(install_codex.read_config(config_path)))
        reg["config_error"] = None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        tables, reg["config_error"] = {}, f"cannot read {config_path}: {exc}"
    states = {}
    for key, table in tables.items():
        slot = install_codex.key_prefix_matches(key, reg["path"])
        if slot is not None and isinstance(table, dict):
            states[slot] = (key, table)
    for hook in reg["hooks"]:
        snake = {"PreToolUse": "pre_tool_use", "PostToolUse": "post_tool_use"}.get(hook["file_event"], hook["file_event"])
        current = install_codex.hook_hash(hook["file_event"], hook["matcher"], hook["handler"])
        key, table = states.get((snake, *hook["slot"]), (f"{reg['path']}:{snake}:{hook['slot'][0]}:{hook['slot'][1]}", {}))
        trusted = table.get("trusted_hash")
        if table.get("enabled") is False:
            trust = "disabled"
        elif current is None:
            trust = "unknown"
        elif trusted is None:
            trust = "untrusted"
        else:
            trust = "trusted" if trusted == current else "modified"
        hook.update(key=key, current_hash=current, trusted_hash=trusted, trust=trust)


# ── verdict ─────────────────────────────────────────────────────────────────────────


def _problems(client: str, entry: dict[str, Any], hooks: list[dict[str, Any]], deadline_ms: int, spool_complete: bool) -> list[dict[str, Any]]:
    """What is wrong, each with its fix; ``degraded`` marks the ones that make status exit 3."""
    install = f"yupana install {INSTALL_NAME[client]}"
    problems: list[dict[str, Any]] = []
    for reg in entry["registrations"]:
        if reg["error"]:
            problems.append({"degraded": False, "problem": reg["error"],
                             "fix": f"fix or move the file aside, then `{install}`"})
    if not hooks:
        return problems
    untrusted: dict[str, list[str]] = {}
    for hook in hooks:
        if hook.get("trust") in ("untrusted", "modified", "disabled", "unknown"):
            untrusted.setdefault(hook["trust"], []).append(hook["event"])
    for trust, events in untrusted.items():
        what = {"untrusted": "not trusted", "modified": "changed since it was trusted",
                "disabled": "disabled in config.toml", "unknown": "not hashable as Codex would"}[trust]
        problems.append({"degraded": True, "hooks": events,
                         "problem": f"Codex hook{'s' if len(events) > 1 else ''} {', '.join(events)} "
                                    f"{'are' if len(events) > 1 else 'is'} {what}: `codex exec` skips "
                                    f"{'them' if len(events) > 1 else 'it'} silently — the guard does not run",
                         "fix": f"`{install}` (asks `codex app-server` for the hash and trusts it), or /hooks "
                                "in the Codex TUI"})
    for hook in hooks:
        timeout = hook.get("timeout")
        if isinstance(timeout, (int, float)) and not isinstance(timeout, bool) and timeout * 1000 <= deadline_ms:
            problems.append({"degraded": False, "hook": hook["event"],
                             "problem": f"{hook['event']} timeout {timeout}s is not above deadline_ms {deadline_ms}: "
                                        "the client cancels the hook first, and a cancelled hook is an allow",
                             "fix": f"`{install}` (timeout {install_hooks.TIMEOUT_SECS}s)"})
        if not hook["wrapped"]:
            problems.append({"degraded": False, "hook": hook["event"],
                             "problem": f"{hook['event']} is registered without the skew-proof wrapper",
                             "fix": f"`{install}` (docs/integration.md)"})
    missing = [e for e in install_hooks.EVENTS if e not in entry["registered"]]
    if missing:
        problems.append({"degraded": False, "problem": f"not registered: {', '.join(missing)}",
                         "fix": f"`{install}`"})
    if entry["last_seen"]["at"] is None:
        where = "in the spool" if spool_complete else "in the part of the spool read"
        fix = (f"run an edit in {client} in this project; if this stays, the client is not running the hook "
               "(check the registration above, and that the client runs in this project)")
        if client == "claude-code" and all(r["scope"] != "user" for r in entry["registrations"] if r["hooks"]):
            fix += ("; Claude Code reads a project's .claude/settings.json only when started in that directory — "
                    "for agents started in a subdirectory, `yupana install claude --user`")
        problems.append({"degraded": True, "problem": f"registered, but no record of a {client} hook for this "
                                                       f"project {where}: never invoked", "fix": fix})
    return problems


def _state(entry: dict[str, Any]) -> str:
    if any(p["degraded"] for p in entry["problems"]):
        return "degraded"
    if entry["registered"]:
        return "ok"
    return "not-registered" if entry["found"] else "not-found"
