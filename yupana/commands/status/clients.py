"""Hook health per coding client, for ``yupana status`` (``clients`` in ``--json``). Cold path.

"Not invoked" is a state, not silence: for every client of the registry
(:mod:`yupana.clients`) found on this machine it reports whether yupana's hooks are
registered (and where), the wrapper and timeout in use, what the client's own gate says
(Codex: whether each hook's trust matches the hook as registered), and when yupana last saw
a record from that client for this project.

* **Found** and **registrations** — each row's installer says
  (``found(root)``, ``registrations(root)``; docs/clients/<name>.md): Claude Code's project
  and user ``.claude/settings*.json``, Codex's ``$CODEX_HOME/hooks.json`` with the trust in
  its ``config.toml``, and so on for every row.
* **Last seen** — the newest invocation record of each hook — ``guard`` (pre-edit),
  ``pre_bash_invoked``, ``post_edit_invoked`` (the hook registry's ``record``) — whose
  ``client`` and ``project`` fields name that client and this project (docs/records.md).
  Records written before those fields existed are counted apart.

Degraded (``yupana status`` exits 3): what a row's installer reports as a silent skip
(``trust_problems``: a Codex hook untrusted, modified since it was trusted, or disabled);
and a client with our hooks registered but no record of it for this project in the spool
read. Each problem carries its fix.
"""

from __future__ import annotations

from typing import Any

from yupana import clients
from yupana.commands.install import hooks as install_hooks
from yupana.commands.status.health import KIND_HOOK, invocation_result


def section(root: str, records: list[dict[str, Any]], now: int, *, deadline_ms: int, spool_complete: bool) -> dict[str, Any]:
    """``clients`` in ``status --json``: ``{"state", "names", <name>: {…} per registry row, "unattributed_records"}``."""
    from yupana import project_root

    key = project_root.project_key(root)
    seen, unattributed = last_seen(records, key)
    out: dict[str, Any] = {"project_key": key, "unattributed_records": unattributed, "names": list(clients.names())}
    for row in clients.ROWS:
        installer = clients.installer(row)
        found = installer.found(root)
        entry: dict[str, Any] = {"label": row.label, "install": f"yupana install {row.install}", "found": bool(found),
                                 "found_by": found}
        registrations = installer.registrations(root)
        entry["registrations"] = [r for r in registrations if r["hooks"] or r["error"]]
        hooks = [h for r in registrations for h in r["hooks"]]
        entry["registered"] = sorted({h["event"] for h in hooks}, key=install_hooks.EVENTS.index)
        entry["last_seen"] = _seen_summary(seen.get(row.name, {}), now)
        entry["problems"] = _problems(row, installer, entry, hooks, deadline_ms, spool_complete)
        for hook in hooks:
            hook.pop("handler", None)  # the file's own object: read for the hash, not reported
        entry.update(getattr(installer, "STATUS_FIELDS", {}))  # what the installer adds (Codex: how trust was read)
        entry["state"] = _state(entry)
        out[row.name] = entry
    out["state"] = "degraded" if any(out[name]["state"] == "degraded" for name in clients.names()) else "ok"
    return out


def last_seen(records: list[dict[str, Any]], key: str) -> tuple[dict[str, Any], int]:
    """client -> hook -> newest ts of its invocation records for project ``key`` (and, under
    ``"record"``, the newest of those records itself); and how many invocation records name no
    client or project (written by an older yupana)."""
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
        if project != key or clients.get(client) is None or not isinstance(ts, int):
            continue
        hooks = seen.setdefault(client, {})
        hooks[hook] = max(ts, hooks.get(hook, ts))
        newest = hooks.get("record")
        if newest is None or ts >= newest["ts"]:
            hooks["record"] = {"kind": rec.get("kind"), "hook": hook, "ts": ts, "tool": rec.get("tool"),
                               "result": invocation_result(rec), "session": rec.get("session")}
    return seen, unattributed


def _seen_summary(hooks: dict[str, Any], now: int) -> dict[str, Any]:
    last = max((t for h, t in hooks.items() if h != "record"), default=None)
    return {"at": last, "age_secs": max(0, now - last) if last is not None else None,
            "by_hook": {h: hooks.get(h) for h in KIND_HOOK.values()}, "record": hooks.get("record")}


# ── verdict ─────────────────────────────────────────────────────────────────────────


def _problems(row: clients.Client, installer: Any, entry: dict[str, Any], hooks: list[dict[str, Any]],
              deadline_ms: int, spool_complete: bool) -> list[dict[str, Any]]:
    """What is wrong, each with its fix; ``degraded`` marks the ones that make status exit 3."""
    install = f"yupana install {row.install}"
    problems: list[dict[str, Any]] = []
    for reg in entry["registrations"]:
        if reg["error"]:
            problems.append({"degraded": False, "problem": reg["error"],
                             "fix": f"fix or move the file aside, then `{install}`"})
    if not hooks:
        return problems
    gate = getattr(installer, "trust_problems", None)
    if gate is not None:
        problems += gate(entry, hooks)  # the client's own gate: what makes it skip our hooks silently
    for hook in hooks:
        timeout = hook.get("timeout")
        if isinstance(timeout, (int, float)) and not isinstance(timeout, bool) and timeout * row.timeout_ms <= deadline_ms:
            unit = "s" if row.timeout_ms == 1000 else " ms" if row.timeout_ms == 1 else f" x {row.timeout_ms} ms"
            problems.append({"degraded": False, "hook": hook["event"],
                             "problem": f"{hook['event']} timeout {timeout}{unit} is not above deadline_ms {deadline_ms}: "
                                        "the client cancels the hook first, and a cancelled hook is an allow",
                             "fix": f"`{install}` (timeout {row.timeout}{unit})"})
        if not hook["wrapped"]:
            closed = (f": {row.label} blocks the tool when a hook fails, so a missing or crashing yupana blocks "
                      "the agent") if row.fails_closed else ""
            problems.append({"degraded": row.fails_closed, "hook": hook["event"],
                             "problem": f"{hook['event']} is registered without the skew-proof wrapper{closed}",
                             "fix": f"`{install}` (docs/integration.md)"})
    missing = [e for e in install_hooks.EVENTS if e not in entry["registered"]]
    if missing:
        problems.append({"degraded": False, "problem": f"not registered: {', '.join(missing)}",
                         "fix": f"`{install}`"})
    if entry["last_seen"]["at"] is None:
        where = "in the spool" if spool_complete else "in the part of the spool read"
        fix = (f"run an edit in {row.label} in this project; if this stays, the client is not running the hook "
               "(check the registration above, and that the client runs in this project)")
        unseen = getattr(installer, "unseen_fix", None)
        if unseen is not None:
            fix += unseen(entry)
        problems.append({"degraded": True, "problem": f"registered, but no record of a {row.name} hook for this "
                                                       f"project {where}: never invoked", "fix": fix})
    return problems


def _state(entry: dict[str, Any]) -> str:
    if any(p["degraded"] for p in entry["problems"]):
        return "degraded"
    if entry["registered"]:
        return "ok"
    return "not-registered" if entry["found"] else "not-found"
