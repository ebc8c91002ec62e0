"""``yupana status``'s tamper section: the last loosening of the guard's controls. Cold path.

Hooks record ``control_changed`` when a control file changed since the last hook of a
project (:mod:`yupana.hooks.control_watch`; the configuration layer for config files);
``looser`` says the change made the guard looser. This section reads the spool's tail for
this project's records and shows the last loosening with its time: a ⚠ and exit 4 while it
falls inside the status window (``--window``, 24 h by default), plain after that.
"""

from __future__ import annotations

from typing import Any


def section(records: list[dict[str, Any]], root: str, now: int, window_secs: int) -> dict[str, Any]:
    """``tamper`` in ``status --json``: ``changes`` (this project's control_changed records in the
    spool's tail), ``loosenings``, ``last_loosening`` (or None) and ``warn``."""
    from yupana import project_root

    keys = {root, project_root.project_key(root)}
    mine = [r for r in records if r.get("kind") == "control_changed" and r.get("project") in keys]
    looser = [r for r in mine if r.get("looser") is True]
    last: dict[str, Any] | None = None
    if looser:
        rec = looser[-1]
        ts = rec.get("ts") if isinstance(rec.get("ts"), int) else None
        loosened = rec.get("loosened")
        last = {"ts": ts, "age_secs": (now - ts) if ts is not None else None, "file": str(rec.get("file") or "?"),
                "control": rec.get("control"), "agent": rec.get("agent"), "tenant": rec.get("tenant"),
                "loosened": [str(x) for x in loosened] if isinstance(loosened, list) else []}
    age = last["age_secs"] if last is not None else None
    warn = last is not None and (age is None or age <= window_secs)
    return {"changes": len(mine), "loosenings": len(looser), "last_loosening": last, "warn": warn,
            "window_secs": window_secs}


def render(tamper: dict[str, Any], add: Any, warn_mark: str) -> None:
    """The ``tamper`` lines of the text report."""
    last = tamper["last_loosening"]
    if last is None:
        add("tamper", f"no control of the guard got looser ({tamper['changes']} control change(s) recorded "
                      "for this project in the spool)")
        return
    import time

    when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(last["ts"])) if last["ts"] is not None else "time unknown"
    ago = f"{last['age_secs']}s ago, " if last["age_secs"] is not None else ""
    who = f" by agent {last['agent']}" if last.get("agent") else ""
    what = "; ".join(last["loosened"]) or "looser"
    mark = f"{warn_mark} " if tamper["warn"] else ""
    add("tamper", f"{mark}last loosening {ago}{when}{who}: {last['file']}: {what}"
                  + (" (exit 4)" if tamper["warn"] else ""))
