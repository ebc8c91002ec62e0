"""``refresh-state.json``: what the last refresh attempt did, and the shared back-off.

Written by the refresher (cold) after every attempt, read by hooks (hot) to decide
freshness and whether a detached refresh may start. Standard library only. The file lives
beside the projection cache, in the store's own directory (:mod:`yupana.state.stores`), with ``refresh.lock`` (single-flight) and ``refresh.log``
(the detached worker's log)::

    {"version": 1, "endpoint": "http://quipu:3030",
     "last_attempt_at": 1760000000, "last_success_at": 1759990000,
     "last_failure_at": 1760000000, "last_error": "timeout: …", "last_error_kind": "timeout",
     "consecutive_failures": 2, "backoff_until": 1760000120, "duration_secs": 2.01, "write_secs": 0.64}

``endpoint`` is the cache key (see :func:`yupana.state.cache.endpoint_key`) the state is about; a
state written for another endpoint is ignored (switching stores never inherits a back-off).
Back-off after ``n`` consecutive failures: ``refresh_backoff_secs * 2**(n-1)``, capped at
:data:`BACKOFF_CAP_SECS`; a success clears it.
"""

from __future__ import annotations

import os

from yupana import fastjson

from yupana.state import statefile

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from typing import Any

STATE_VERSION = 1
BACKOFF_CAP_SECS = 3600
STATE_NAME = "refresh-state.json"
LOCK_NAME = "refresh.lock"
LOG_NAME = "refresh.log"


def beside(cache_path: str, name: str) -> str:
    return os.path.join(os.path.dirname(cache_path) or ".", name)


def state_path(cache_path: str) -> str:
    return beside(cache_path, STATE_NAME)


def lock_path(cache_path: str) -> str:
    return beside(cache_path, LOCK_NAME)


def log_path(cache_path: str) -> str:
    return beside(cache_path, LOG_NAME)


def read(cache_path: str | None, endpoint: str | None = None) -> dict[str, Any]:
    """The state beside ``cache_path`` ({} when absent, unreadable, or for another endpoint)."""
    if not cache_path:
        return {}
    try:
        state = fastjson.loads(statefile.read(state_path(cache_path), statefile.SMALL_LIMIT))
    except (OSError, ValueError, UnicodeDecodeError):  # a refused FIFO or device is noted by statefile
        return {}
    if not isinstance(state, dict) or state.get("version") != STATE_VERSION:
        return {}
    if endpoint is not None and state.get("endpoint") != endpoint:
        return {}
    return state


def backoff_secs(base: int, consecutive_failures: int) -> int:
    """How long to wait after ``consecutive_failures`` failures in a row (0 after none)."""
    if consecutive_failures <= 0:
        return 0
    base = max(1, int(base))
    return min(BACKOFF_CAP_SECS, base * (1 << min(consecutive_failures - 1, 30)))


def in_backoff(state: dict[str, Any], now: int) -> bool:
    until = state.get("backoff_until")
    return isinstance(until, int) and now < until


def failed_since(state: dict[str, Any], written_at: int) -> bool:
    """True when the latest attempt failed, at or after the cache was written."""
    last = state.get("last_failure_at")
    return bool(state.get("consecutive_failures")) and isinstance(last, int) and last >= written_at


def bundle_checked_secs(state: dict[str, Any], now: int) -> int | None:
    """Seconds since a bundle host last asked its bundle server (a 304 or a 200 that installed
    it: ``bundle.checked_at``), or None when it has not (or the time is in the future)."""
    bundle = state.get("bundle")
    checked = bundle.get("checked_at") if isinstance(bundle, dict) else None
    if not isinstance(checked, int) or isinstance(checked, bool) or checked > now:
        return None
    return now - checked


def write(cache_path: str, state: dict[str, Any]) -> str | None:
    """Replace the state file atomically; return None or why it could not be written."""
    from yupana import redact

    state = redact.redact_fields(dict(state))  # type: ignore[assignment]  # an error quoting a URL keeps no credentials
    state["version"] = STATE_VERSION
    target = state_path(cache_path)
    from yupana.state import atomic

    return atomic.write_quietly(target, fastjson.dumps(state).encode("utf-8"))
