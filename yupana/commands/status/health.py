"""Hook health from the metrics spool, for ``yupana status``. Cold path.

A guard that stopped running looks, from the outside, exactly like a guard that found
nothing wrong. The spool tells them apart: every hook invocation writes one record of its
hook's kind — ``guard`` (pre-edit), ``pre_bash_invoked``, ``post_edit_invoked``: the hook
registry's ``record`` (:data:`yupana.hooks.registry.INVOCATION_RECORDS`, docs/records.md) —
so for each hook this module reports how many invocations the window holds, when the last
one ran, and — over its last N invocations — the p50/p95 of ``duration_ms`` and how many
of them failed open or served a stale cache.

Attributing ``fail_open`` and ``served_from_cache`` records to an invocation: both carry
``hook`` and ``session``. pre-edit and post-edit write them *before* their invocation record
(which is always their last), so they are held per hook and session until that session's
next invocation record; a pre-bash hook writes ``pre_bash_invoked`` *first*, so they mark
that session's latest pre-bash invocation. An invocation counts once however many
degradations it had, so the rates are "share of invocations", never above 100 %. Records
that name no hook (older versions), and pre-bash ones with no invocation before them are
counted as ``unattributed``.
"""

from __future__ import annotations

from typing import Any

import os

from yupana.hooks.registry import INVOCATION_RECORDS

# hook name -> the record kind written once per invocation
HOOK_RECORDS = INVOCATION_RECORDS
KIND_HOOK = {kind: hook for hook, kind in HOOK_RECORDS.items()}
# the hooks whose invocation record is written first (the others' is their last)
RECORDED_FIRST = {"pre-bash"}
# hooks whose invocation record carries duration_ms (pre_bash_invoked is written at the start)
TIMED = {"pre-edit", "post-edit"}
DEGRADATIONS = ("fail_open", "served_from_cache")
TAIL_BYTES = 4 * 1024 * 1024


def read_spool(path: str | None, max_bytes: int = TAIL_BYTES) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The spool's last records (via :func:`yupana.state.spool.read_tail`) and what was read.

    The info dict: ``path``, ``exists``, ``bytes`` (file size), ``read_all`` (False when only
    the final ``max_bytes`` were read), ``rotated`` (a ``.old`` file holds older records),
    ``records`` and ``oldest_ts``.
    """
    from yupana.state import spool

    info: dict[str, Any] = {"path": path, "exists": False, "bytes": 0, "read_all": True, "rotated": False, "records": 0,
            "oldest_ts": None}
    if not path:
        return [], info
    try:
        info["bytes"] = os.stat(path).st_size
        info["exists"] = True
    except OSError:
        pass
    info["rotated"] = os.path.exists(path + ".old")
    info["read_all"] = info["bytes"] <= max_bytes
    records = spool.read_tail(path, max_bytes=max_bytes) if info["exists"] else []
    info["records"] = len(records)
    stamps = [r["ts"] for r in records if isinstance(r.get("ts"), int)]
    info["oldest_ts"] = min(stamps) if stamps else None
    return records, info


def summarise(records: list[dict[str, Any]], now: int, *, window_secs: int, last_n: int, window_complete: bool) -> dict[str, Any]:
    """Per-hook health (``hooks`` in ``status --json``); see the module docstring.

    ``window_complete`` says whether ``records`` reach back to the start of the window
    (when not, ``invocations_in_window`` is a lower bound).
    """
    invocations: dict[str, list[dict[str, Any]]] = {hook: [] for hook in HOOK_RECORDS}
    pending: dict[tuple[object, object], dict[str, Any]] = {}  # (hook, session) -> degradations awaiting its record
    opened: dict[tuple[object, object], dict[str, Any]] = {}  # (pre-bash, session) -> its latest invocation
    unattributed = dict.fromkeys(DEGRADATIONS, 0)
    for rec in records:
        kind = rec.get("kind")
        session = rec.get("session")
        session = session if session is None or isinstance(session, str) else repr(session)  # a key, whatever was written
        hook = KIND_HOOK.get(kind) if isinstance(kind, str) else None
        if hook is not None:
            inv = _invocation(rec, invocation_result(rec))
            invocations[hook].append(inv)
            if hook in RECORDED_FIRST:
                opened[(hook, session)] = inv
            else:
                inv.update(pending.pop((hook, session), {}))
        elif kind in DEGRADATIONS:
            hook = rec.get("hook") if isinstance(rec.get("hook"), str) else None
            if hook in HOOK_RECORDS and hook not in RECORDED_FIRST:
                target = pending.setdefault((hook, session), {"fail_kinds": []})
            elif (hook, session) in opened:
                target = opened[(hook, session)]
            else:
                unattributed[kind] += 1
                continue
            target[kind] = True
            if kind == "fail_open":
                target["fail_kinds"].append(str(rec.get("fail_kind") or "?"))
    out: dict[str, Any] = {"window_secs": window_secs, "last_n": last_n, "window_complete": window_complete,
                 "unattributed": unattributed}
    for hook, invs in invocations.items():
        out[hook] = _hook_health(hook, invs, now, window_secs, last_n, window_complete)
    return out


def invocation_result(rec: dict[str, Any]) -> str:
    """What an invocation record says the invocation came to: its ``result`` (``guard``:
    allow/notify/deny; ``post_edit_invoked``: notice/silent), else pre-bash's
    ``parsed``/``unparsed``. Status's hook health and ``yupana metrics`` count by it."""
    result = rec.get("result")
    if isinstance(result, str) and result:
        return result
    return "parsed" if rec.get("parsed", True) else "unparsed"


def _invocation(rec: dict[str, Any], result: object) -> dict[str, Any]:
    duration = rec.get("duration_ms")
    return {"ts": rec.get("ts") if isinstance(rec.get("ts"), int) else None,
            "duration_ms": duration if isinstance(duration, (int, float)) and not isinstance(duration, bool) else None,
            "result": result if isinstance(result, str) else "?", "fail_open": False, "served_from_cache": False,
            "fail_kinds": []}


def _hook_health(hook: str, invs: list[dict[str, Any]], now: int, window_secs: int, last_n: int, complete: bool) -> dict[str, Any]:
    recent = invs[-last_n:] if last_n > 0 else []
    since = now - window_secs
    stamps = [i["ts"] for i in invs if i["ts"] is not None]
    last = max(stamps) if stamps else None
    durations = sorted(i["duration_ms"] for i in recent if i["duration_ms"] is not None)
    results: dict[str, int] = {}
    fail_kinds: dict[str, int] = {}
    for inv in recent:
        results[inv["result"]] = results.get(inv["result"], 0) + 1
        for kind in set(inv["fail_kinds"]):
            fail_kinds[kind] = fail_kinds.get(kind, 0) + 1
    n = len(recent)
    fail_open = sum(1 for i in recent if i["fail_open"])
    stale = sum(1 for i in recent if i["served_from_cache"])
    return {
        "record_kind": HOOK_RECORDS[hook],
        "invocations_in_window": sum(1 for t in stamps if t >= since),
        "window_complete": complete,
        "sampled": n,
        "duration_recorded": hook in TIMED,
        "duration_ms": {"p50": percentile(durations, 50), "p95": percentile(durations, 95)} if durations else None,
        "fail_open": fail_open,
        "fail_open_rate": round(fail_open / n, 4) if n else None,
        "fail_open_kinds": fail_kinds,
        "served_from_cache": stale,
        "served_from_cache_rate": round(stale / n, 4) if n else None,
        "results": results,
        "last_invocation_at": last,
        "last_invocation_age_secs": max(0, now - last) if last is not None else None,
    }


def percentile(sorted_values: list[float], p: float) -> float | None:
    """Nearest-rank percentile of an ascending list (None when empty)."""
    if not sorted_values:
        return None
    rank = -(-len(sorted_values) * p // 100)  # ceil(n * p / 100)
    return sorted_values[max(0, int(rank) - 1)]
