"""The governed plane as a hook sees it: the servable cache, its freshness, and refreshes.

Hot path, standard library only. :func:`load` never waits on the network:

* it serves the projection cache of the configured store (its own directory,
  :mod:`yupana.state.stores`) through :func:`yupana.state.cache.load_servable` (the hot twin
  when it matches) for the configured endpoint, within ``projection_cache_ttl_secs``;
* freshness: **fresh** when the cache was confirmed within ``refresh_interval_secs`` and
  no refresh has failed since; otherwise **stale**, always with the cache's age;
* a bundle host (docs/bundles.md) schedules from its last check instead: once its server has
  been asked (a 304, or the 200 that installed the bundle), the next check is due
  ``refresh_interval_secs`` after it — at most one request per host per interval, however old
  the bundle's own confirmation is. A 304 re-confirms nothing: freshness and TTL still run
  from the confirmation time, and a stale bundle stays STALE, saying when it was checked;
* when a refresh is due (overdue, or nothing servable) it starts at most one detached
  ``yupana refresh-worker``: it takes ``refresh.lock`` (non-blocking) itself, spawns the
  worker with that locked descriptor inherited — so the single-flight lock passes to the
  child with no gap — and stdin/stdout/stderr on /dev/null in a new session. A running
  refresh (lock taken) or an active back-off (``refresh-state.json``) means no spawn: a
  store that is down is asked once per back-off interval, not once per edit;
* serving stale writes one stderr line and one ``served_from_cache`` record
  ``{age_secs, ttl_secs, reason}``. No servable cache is the caller's ``fail_open``.
"""

from __future__ import annotations

import os

from yupana.state import cache as cache_mod
from yupana import redact
from yupana.state import dataset, refresh_state, spool, stores

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from typing import Any

    from yupana.hooks.seams import Effects
    from yupana.state.hot_view import HotCache

FRESH, STALE = "fresh", "stale"


class Governed:
    """What the governed plane can serve to this invocation (see the module docstring)."""

    __slots__ = ("cache", "freshness", "age_secs", "miss", "endpoint", "ttl_secs", "refresh_started",
                 "last_error", "interval_secs", "overdue", "backoff_until", "path", "checked_secs", "due")

    def __init__(self, endpoint: str, ttl_secs: int, interval_secs: int, path: str | None) -> None:
        self.cache: HotCache | None = None
        self.freshness: str | None = None
        self.age_secs: int | None = None
        self.miss: cache_mod.Miss | None = None
        self.endpoint = endpoint
        self.ttl_secs = ttl_secs
        self.interval_secs = interval_secs
        self.path = path
        self.refresh_started = False
        self.last_error: str | None = None
        self.overdue = False
        self.backoff_until: int | None = None
        self.checked_secs: int | None = None  # a bundle host: seconds since its server was last asked
        self.due = False  # a refresh is due (nothing servable, or overdue and not checked this interval)

    def stale_reason(self) -> str:
        """Why a served cache is stale, in words (the ``served_from_cache`` reason)."""
        if self.last_error:
            return f"last refresh failed: {self.last_error}"
        if self.checked_secs is not None and self.checked_secs <= self.interval_secs and not self.refresh_started:
            return (f"the bundle server had nothing newer {self.checked_secs}s ago; next check in "
                    f"{self.interval_secs - self.checked_secs}s (refresh_interval_secs = {self.interval_secs})")
        reason = f"refresh overdue (refresh_interval_secs = {self.interval_secs})"
        if self.refresh_started:
            reason += "; a refresh was started"
        return reason

    def note(self) -> str:
        """The verdict suffix: ``(policy fresh, cache age 12s)`` or the STALE / UNAVAILABLE form."""
        if self.cache is None:
            label = self.miss.label if self.miss else "absent"
            return f"(policy UNAVAILABLE: no servable cache ({label}))"
        if self.freshness == FRESH:
            return f"(policy fresh, cache age {self.age_secs}s)"
        return f"(policy STALE: cache age {self.age_secs}s; {self.stale_reason()})"


def load(cfg: dict[str, Any], now: int, *, root: str | None = None, override: str | None = None,
         spawn: bool = True, record: dict[str, Any] | None = None, effects: Effects | None = None) -> Governed:
    """The governed plane for ``cfg`` (the resolved config) at unix time ``now``.

    ``root`` and ``override`` (the project root and ``--config`` file the configuration
    was resolved from) are handed to a detached refresh so it resolves the same
    configuration; ``root`` defaults to the current directory. ``spawn=False`` never
    starts a refresh (``yupana status``, ``explain``). ``record`` adds fields to the
    ``served_from_cache`` record (the caller's ``hook`` and ``session``, so ``yupana status``
    can attribute stale serving to a hook). ``effects`` (:mod:`yupana.hooks.effects`; None:
    live) writes that record and starts the refresh — a rehearsal starts none but answers
    ``refresh_started`` as a real hook would.
    """
    quipu = cfg.get("quipu") or {}
    root = root or os.getcwd()
    key = cache_mod.endpoint_key(quipu.get("endpoint") or "", root)
    ttl = _int(quipu.get("projection_cache_ttl_secs"), 3600)
    interval = _int(quipu.get("refresh_interval_secs"), 300)
    ident = dataset.identity(quipu, root)
    path = stores.cache_path(ident)
    gov = Governed(key, ttl, interval, path)
    data, gov.miss = cache_mod.load_servable(path, key, ttl, now, dataset=ident, dialect=quipu.get("dialect"))
    if gov.miss is not None and gov.miss.label == cache_mod.REBUILDING and spawn and path:
        start = effects.workers.refresh if effects is not None else start_refresh
        gov.refresh_started = start(path, root, override, twin_only=True)  # the twin, from the JSON at hand
    state = refresh_state.read(path, key)
    until = state.get("backoff_until")
    gov.backoff_until = until if isinstance(until, int) else None
    if data is not None:
        written = data["written_at"]
        gov.cache = data
        gov.age_secs = now - written
        gov.overdue = gov.age_secs > interval
        if refresh_state.failed_since(state, written):
            err = state.get("last_error")
            gov.last_error = err if isinstance(err, str) and err else "unknown error"
        gov.freshness = STALE if (gov.overdue or gov.last_error) else FRESH
    if str((cfg.get("bundle") or {}).get("url") or "").strip():
        gov.checked_secs = refresh_state.bundle_checked_secs(state, now)
    checked_recently = gov.checked_secs is not None and gov.checked_secs <= interval
    gov.due = due = gov.cache is None or (gov.overdue and not checked_recently)
    if due and spawn and path and not gov.refresh_started and not refresh_state.in_backoff(state, now):
        start = effects.workers.refresh if effects is not None else start_refresh
        gov.refresh_started = start(path, root, override)
    if gov.freshness == STALE:
        _served_stale(gov, record, effects)
    return gov


def _served_stale(gov: Governed, record: dict[str, Any] | None, effects: Effects | None) -> None:
    reason = gov.stale_reason()
    try:
        os.write(2, redact.redact_text(f"yupana: serving the projection cache STALE (age {gov.age_secs}s, ttl "
                                       f"{gov.ttl_secs}s): {reason}\n").encode("utf-8", "replace"))
    except OSError:
        pass
    fields = {"age_secs": gov.age_secs, "ttl_secs": gov.ttl_secs, "reason": reason}
    if record:
        fields.update(record)
    (effects.record if effects is not None else spool.record)("served_from_cache", fields)


def start_refresh(cache_path: str, root: str, override: str | None = None, *, twin_only: bool = False) -> bool:
    """Start one detached ``yupana refresh-worker`` unless a refresh already runs (``twin_only``:
    one that only derives the hot twin from the JSON at hand, no store asked).

    Returns True when a worker was spawned. Never raises and never waits.
    """
    from yupana.workers import detached  # only when a refresh is due

    args = ["refresh-worker", "--root", root]
    if override:
        args += ["--config", override]
    if twin_only:
        args += ["--twin-only"]
    return detached.spawn_locked(refresh_state.lock_path(cache_path), args)


def refresh_lock_free(cache_path: str) -> bool:
    """Whether :func:`start_refresh` would spawn a worker now: nobody holds the single-flight
    lock (looked at without creating it; a rehearsal's answer)."""
    from yupana.workers import detached

    return detached.lock_free(refresh_state.lock_path(cache_path))


def _int(value: object, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default
