"""``status``'s rule-set section: the cache, the refresher's record and the live probe. Cold path."""

from __future__ import annotations

from typing import Any

import os
import time

from yupana import planes

PROBE_QUERY = "SELECT ?s WHERE { ?s ?p ?o } LIMIT 1"
RULE_PLANES = tuple(p.status for p in planes.PLANES if p.rule_set)  # a count here: the rule set is loaded

__all__ = ["PROBE_QUERY", "RULE_PLANES", "plane_counts", "probe", "rule_set_section"]


def rule_set_section(cfg: dict[str, Any], root: str, now: int, live: str) -> dict[str, Any]:
    """``rule_set`` in ``status --json``: state, counts, digest, cache, refresher, live probe.

    Reads the cache and ``refresh-state.json`` without writing either (no hot twin is
    rewritten, no ``served_from_cache`` record, no refresh started).
    """
    from yupana.state import cache, dataset, refresh_state

    quipu, policy = cfg["quipu"], cfg["policy"]
    ttl, interval = int(quipu["projection_cache_ttl_secs"]), int(quipu["refresh_interval_secs"])
    out: dict[str, Any] = {"local": len(policy.get("rules") or ()), "graph_enabled": bool(quipu["enabled"]), "projected": 0,
                 "structural": 0, "text": 0, "error": None, "state": "off", "digest": None, "attempts": 0,
                 "cache_age_secs": None, "verification": "unsigned", "counts": None, "endpoint": None,
                 "dataset": None, "cache_path": None, "written_at": None, "ttl_secs": ttl, "refresh_interval_secs": interval,
                 "freshness": None, "miss": None, "refresh": None, "live": {"checked": False, "why": None},
                 "off_reason": None}
    off, key, path, body, miss = cache.served_json(quipu, root, now)
    if off is not None or key is None:
        out["off_reason"] = off
        return out
    out.update(endpoint=key, dataset=dataset.identity(quipu, root), cache_path=path)
    if miss is not None:
        out["miss"] = {"label": miss.label, "reason": miss.reason}
        found, _ = cache.read_json(path) if path and miss.label in ("expired", "future-dated") else (None, None)
        if found is not None:
            out["written_at"] = found["written_at"]
            out["cache_age_secs"] = now - found["written_at"]
    state = refresh_state.read(path, key)
    out["refresh"] = _refresh_info(state, path, now)
    if path and os.path.exists(path):
        from yupana.state import twin_check

        out["twin"] = twin_check.compare(path)
    failed_error = None
    if body is not None:
        written = body["written_at"]
        out.update(written_at=written, cache_age_secs=now - written)
        if refresh_state.failed_since(state, written):
            failed_error = f"{state.get('last_error_kind') or 'error'}: {state.get('last_error') or 'unknown error'}"
        out["freshness"] = "stale" if (now - written > interval or failed_error) else "fresh"
        out["counts"] = plane_counts(body)
        out["staged"] = staged_rules(body)
        out["structural"], out["text"] = out["counts"]["structural"], out["counts"]["text"]
        out["projected"] = out["structural"] + out["text"]
        from yupana.projection.dump import inert_policies

        out["inert_policies"] = inert_policies(body)
        from yupana.projection.digest import rule_set_digest

        out["digest"] = rule_set_digest(body)
    if live == "always" or (live == "auto" and out["freshness"] != "fresh"):
        out["live"] = probe(quipu, key)
        out["live"]["why"] = "--live" if live == "always" else ("the cache is stale" if body is not None
                                                                 else "no servable cache")
        out["attempts"] = 1
    else:
        out["live"]["why"] = "--offline" if live == "never" else "the cache is fresh; --live asks anyway"
    probe_failed = out["live"]["checked"] and not out["live"]["ok"]
    if probe_failed:
        out["error"] = f"{out['live']['error_kind']}: {out['live']['error']}"
    elif failed_error:
        out["error"] = failed_error
    elif miss is not None:
        out["error"] = f"{miss.label}: {miss.reason}"
    if body is None:
        out["state"] = "degraded"
    elif out["freshness"] == "stale" or probe_failed:
        out["state"] = "stale"
    else:
        out["state"] = "loaded" if any(out["counts"][p] for p in RULE_PLANES) else "empty"
    return out


def staged_rules(body: dict[str, Any]) -> dict[str, str]:
    """``{constraint id: stage}`` of each governed rule below enforce (``aegis:rolloutStage``
    shadow or advise), named as the guard record's constraints name it: a text rule's name, a
    structural policy's label, ``tripwire:<label>``, a grounded predicate's name."""
    out: dict[str, str] = {}
    for plane, name_of in (("text_rules", lambda e: e.get("name")), ("policies", lambda e: (e.get("rule") or {}).get("name")),
                           ("tripwires", lambda e: f"tripwire:{e.get('name')}"), ("grounded_rules", lambda e: e.get("name"))):
        for entry in body.get(plane) or ():
            if isinstance(entry, dict) and entry.get("stage") in ("shadow", "advise"):
                out[str(name_of(entry))] = entry["stage"]
    return out


def plane_counts(body: dict[str, Any]) -> dict[str, Any]:
    """Entries per plane of a cache, under each registry row's ``status`` label (an object plane
    that is not an object — ``ci_jobs``, ``work_item_scopes`` — is None: UNKNOWN)."""
    counts: dict[str, Any] = {}
    for p in planes.PLANES:
        if p.status is None:
            continue
        value = body.get(p.key)
        if p.shape == "list":
            counts[p.status] = len(value or ())
        else:
            counts[p.status] = planes.count(p.key, value) if isinstance(value, dict) else None
    counts["unprojected"] = len(body.get("unprojected") or ())
    return counts


def _refresh_info(state: dict[str, Any], path: str | None, now: int) -> dict[str, Any] | None:
    """The refresher's record for this endpoint (None when it never ran for it)."""
    running, lock_problem = _refresh_running(path)
    if not state:
        if not running and not lock_problem:
            return None
        return {"never_attempted": True, "running": running, **({"lock_problem": lock_problem} if lock_problem else {})}
    until = state.get("backoff_until")
    last = state.get("last_attempt_at")
    return {
        "never_attempted": False,
        "last_attempt_at": last,
        "last_attempt_age_secs": now - last if isinstance(last, int) else None,
        "last_success_at": state.get("last_success_at"),
        "last_failure_at": state.get("last_failure_at"),
        "last_error": state.get("last_error"),
        "last_error_kind": state.get("last_error_kind"),
        "consecutive_failures": int(state.get("consecutive_failures") or 0),
        "backoff_until": until,
        "backoff_remaining_secs": max(0, until - now) if isinstance(until, int) and until > now else 0,
        "duration_secs": state.get("duration_secs"),
        "running": running,
        **({"lock_problem": lock_problem} if lock_problem else {}),
    }


def _refresh_running(path: str | None) -> tuple[str | None, str | None]:
    """``(holder, problem)``: who holds ``refresh.lock`` when a refresh is running now (None
    when none is), and what is wrong with the lock file when it is no regular file.

    A shared, non-blocking flock on a read-only descriptor: it never creates the file and
    is released at once, so it cannot stop a refresh (a hook spawning one in that very
    instant skips it, and the next hook starts it). The file is opened as every state file
    is (:func:`yupana.state.statefile.open_regular`: ``O_NONBLOCK``, then a regular-file
    check), so a FIFO there cannot hang ``status`` or ``metrics`` (issue 23 §7).
    """
    import fcntl

    from yupana.state import refresh_state, statefile

    from yupana.workers import refresher

    if not path:
        return None, None
    lock = refresh_state.lock_path(path)
    try:
        fd = statefile.open_regular(lock, statefile.SMALL_LIMIT)
    except statefile.Refused as exc:
        return None, f"{lock} {exc.reason}; remove it (the next refresh creates it again)"
    except OSError:
        return None, None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return refresher.holder(path), None
    finally:
        os.close(fd)
    return None, None


def probe(quipu: dict[str, Any], key: str) -> dict[str, Any]:
    """One bounded query to the live store: ``{checked, ok, error_kind, error, duration_ms, budget_secs}``.

    Runs in a daemon thread joined for the budget (``request_timeout_secs``) plus a
    second, so nothing — not a DNS lookup — holds the terminal past it.
    """
    import threading

    budget = float(quipu.get("request_timeout_secs") or 2.0)
    result: dict[str, Any] = {"checked": True, "ok": False, "error_kind": "deadline",
                    "error": f"no answer from {key} within {budget:g}s (status waits at most "
                             "[yupana.quipu] request_timeout_secs)", "duration_ms": None, "budget_secs": budget}
    started = time.monotonic()

    def ask() -> None:
        from yupana.endpoint import open_endpoint
        from yupana.endpoint.base import Deadline, DeadlineError, EndpointError

        settings = dict(quipu)
        if key.startswith("file:"):
            settings["endpoint"] = key  # relative locations resolve against the project root
        deadline = Deadline(budget)
        try:
            endpoint = open_endpoint(settings, deadline=deadline)
            try:
                endpoint.select(PROBE_QUERY, deadline)
            finally:
                endpoint.close()
            result.update(ok=True, error_kind=None, error=None)
        except EndpointError as exc:
            message = exc.message
            if isinstance(exc, DeadlineError):  # the transport's text speaks of the refresh deadline; this is ours
                message = (f"no answer from {key} within {budget:g}s (status waits at most "
                           "[yupana.quipu] request_timeout_secs)")
            result.update(error_kind=exc.kind, error=message)
        except Exception as exc:  # noqa: BLE001 - reported, never raised
            result.update(error_kind="internal", error=f"{type(exc).__name__}: {exc}")
        result["duration_ms"] = round((time.monotonic() - started) * 1000, 1)

    worker = threading.Thread(target=ask, name="yupana-status-probe", daemon=True)
    worker.start()
    worker.join(budget + 1.0)
    return dict(result)
