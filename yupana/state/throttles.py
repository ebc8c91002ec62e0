"""Expiring back-offs recorded when a throttle tripwire is crossed. Standard library only.

``throttles.jsonl`` ($YUPANA_THROTTLE_PATH, else beside the other state files) holds one
record per crossing: ``{"constraint_id", "scope", "until", "n"}`` where ``scope`` is the
repository root the crossing happened in, ``until`` the unix second the back-off ends and
``n`` the number of crossings of that wire in the current back-off window (the ``overage``
of a governed ``exp(min(overage / D, C))`` formula). Records without a scope are ignored;
for one (constraint, scope) the latest ``until`` wins.

Later edits in the same repository surface every active back-off as an advisory (the
pre-edit hook folds them in with no mode gate). The file is appended with O_APPEND and
compacted (expired records dropped, atomically) once it passes :data:`COMPACT_BYTES`.
Every operation is fail-silent: a full disk must never change a guard outcome.
"""

from __future__ import annotations

import os

from yupana import fastjson

from yupana.state import paths, statefile

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from typing import Any

COMPACT_BYTES = 256 * 1024
MAX_BACKOFF_SECS = 6 * 3600


def throttle_path() -> str | None:
    """Where throttles live: $YUPANA_THROTTLE_PATH, else the state directory."""
    return paths.state_file("throttles.jsonl")


def load(now: int, path: str | None = None) -> dict[tuple[str, str], dict[str, Any]]:
    """Active back-offs keyed by (constraint_id, scope): ``{"until", "n"}``, latest wins."""
    target = path or throttle_path()
    if not target:
        return {}
    try:
        data = statefile.read(target, statefile.LOG_LIMIT)
    except OSError:  # absent, unreadable, or refused (a FIFO, a device: noted by statefile)
        return {}
    latest: dict[tuple[str, str], dict[str, Any]] = {}
    for raw in data.splitlines():
        try:
            rec = fastjson.loads(raw)
        except (ValueError, UnicodeDecodeError):
            continue
        if not isinstance(rec, dict):
            continue
        cid, scope, until = rec.get("constraint_id"), rec.get("scope"), rec.get("until")
        if not isinstance(cid, str) or not isinstance(scope, str) or not scope or not isinstance(until, int):
            continue
        key = (cid, scope)
        prior = latest.get(key)
        if prior is None or until >= prior["until"]:
            n = rec.get("n")
            latest[key] = {"until": until, "n": n if isinstance(n, int) and n > 0 else 1}
    return {k: v for k, v in latest.items() if v["until"] > now}


def active_for(scope: str, now: int, table: dict[tuple[str, str], dict[str, Any]] | None = None) -> list[tuple[str, int]]:
    """(constraint_id, until) of every back-off active in ``scope``, soonest-ending first."""
    table = load(now) if table is None else table
    found = [(cid, entry["until"]) for (cid, sc), entry in table.items() if sc == scope]
    found.sort(key=lambda item: (item[1], item[0]))
    return found


def backoff_secs(backoff: dict[str, Any] | None, crossings: int) -> int | None:
    """Seconds of back-off for the ``crossings``-th crossing in the window, or None.

    ``backoff`` is ``{"kind": "fixed", "secs": N}`` or ``{"kind": "exp", "d": D, "c": C}``
    (the compiled ``aegis:backoffFormula``); the result is capped at six hours.
    """
    if not isinstance(backoff, dict):
        return None
    import math  # only when a throttle wire was crossed

    kind = backoff.get("kind")
    try:
        if kind == "fixed":
            secs = float(backoff["secs"])
        elif kind == "exp":
            d, c = float(backoff["d"]), float(backoff["c"])
            if d <= 0:
                return None
            secs = math.exp(min(crossings / d, c))
        else:
            return None
    except (KeyError, TypeError, ValueError, OverflowError):
        return None
    if secs != secs or secs <= 0:
        return None
    return int(min(math.ceil(secs), MAX_BACKOFF_SECS))


def record(constraint_id: str, scope: str, until: int, n: int = 1, path: str | None = None, now: int = 0) -> bool:
    """Append one back-off; return False (never raise) when it could not be written."""
    target = path or throttle_path()
    if not target or not scope:
        return False
    line = (fastjson.dumps({"constraint_id": constraint_id, "scope": scope, "until": until, "n": n}) + "\n").encode("utf-8", "backslashreplace")
    try:
        try:
            if os.stat(target).st_size > COMPACT_BYTES:
                _compact(target, now)
        except FileNotFoundError:
            os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
        fd = statefile.open_append(target)
        try:
            return os.write(fd, line) == len(line)
        finally:
            os.close(fd)
    except OSError:
        return False


def _compact(target: str, now: int) -> None:
    """Rewrite the file with only the active back-offs (atomically; best effort)."""
    keep = load(now, target)
    body = "".join(
        fastjson.dumps({"constraint_id": cid, "scope": scope, "until": e["until"], "n": e["n"]}) + "\n"
        for (cid, scope), e in keep.items()
    ).encode("utf-8", "backslashreplace")
    from yupana.state import atomic

    atomic.write_quietly(target, body)
