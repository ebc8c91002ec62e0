"""One refresh of the projection cache, start to finish, under the single-flight lock. Cold path.

:func:`refresh_now` resolves the configuration, takes the lock, and runs the projection
steps of :mod:`yupana.workers.refresh_run` — project (text rules incrementally, with the
memo of the last success), validate with the SHACL gate, and only then replace the cache
(written_at = now) and the memo — all under one :class:`~yupana.endpoint.base.Deadline`
(``refresh_deadline_secs``): a refresh whose gate or write would start after it fails with
kind ``deadline``. Whatever happens it records the attempt in ``refresh-state.json``
(:mod:`yupana.state.refresh_state`): on any failure the prior cache is untouched, the error is
named, and the shared back-off grows (``refresh_backoff_secs``, doubling, capped at an hour).

With no endpoint configured, ``yupana project`` projects the bundled example catalogue
into a cache of its own (:func:`cache_path_for`).

Single flight: an exclusive ``flock`` on ``refresh.lock`` beside the cache. The detached
worker inherits it already taken from the hook that spawned it (``lock_fd``); ``yupana
project`` waits a bounded time for a running refresh (``lock_wait_secs``) and otherwise
reports that one is running. The lock file is never removed (a lock on a replaced inode
would not exclude anything); it holds the pid and start time of the holder, for messages.
"""

from __future__ import annotations

from typing import Any

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from yupana.projection import empty as empty_defaults
from yupana.projection.bundle import BundleError
from yupana.workers import refresh_run
from yupana.workers.refresh_run import Refused as _Refused
from yupana.state import cache, dataset, paths, refresh_state, spool, stores

# Outcome statuses.
REFRESHED = "refreshed"
FAILED = "failed"
BUSY = "busy"  # another refresh holds the lock
SKIPPED = "skipped"  # only_if_due, and nothing was due (or the back-off is active)
NOT_MODIFIED = "not-modified"  # a bundle host: the server answered 304, the installed bundle is current


@dataclass
class RefreshOutcome:
    """What :func:`refresh_now` did. ``ok`` is True only for ``refreshed``.

    ``error_kind`` is a stable label: an endpoint error kind (connect, timeout, deadline,
    http, protocol, truncated, query, auth, unsupported), ``projection`` (strict decode),
    ``shapes`` (SHACL gate refused), ``gate`` (the gate could not run), ``write``,
    ``config``, ``busy`` or ``internal``. ``prior_age_secs`` is the age of the cache that
    keeps serving after a failure (None when there is none for this endpoint).
    """

    status: str
    endpoint: str = ""
    cache_path: str | None = None
    error: str | None = None
    error_kind: str | None = None
    written_at: int | None = None
    digest: str | None = None
    dialect: str | None = None
    planes: dict[str, Any] = field(default_factory=dict)
    counts: dict[str, Any] = field(default_factory=dict)
    duration_s: float = 0.0
    gate: object | None = None  # the GateReport, when the gate ran
    notices: list[str] = field(default_factory=list)
    prior_age_secs: int | None = None
    prior_miss: str | None = None
    consecutive_failures: int = 0
    backoff_until: int | None = None
    warnings: list[str] = field(default_factory=list)

    bundle: dict[str, Any] | None = None  # a bundle host: refresh-state's record of the bundle installed (docs/bundles.md)
    #: Seconds per phase: server, transfer, decode, compile, gate, write (None: not measured).
    phases: dict[str, float | None] = field(default_factory=dict)
    #: What the incremental refresh kept: ``{"rules_kept", "rules_read", "full_reason"}``.
    incremental: dict[str, Any] | None = None
    #: How far the text rules got (``text_chunks.Progress.as_json``): found, read, decoded, gated, kept in the memo.
    progress: dict[str, Any] | None = None

    @property
    def ok(self) -> bool:
        return self.status in (REFRESHED, NOT_MODIFIED)

    def reason(self) -> str:
        """One line: the named failure and what keeps serving."""
        if self.ok:
            return self.status
        if self.status == SKIPPED:
            return self.error or "nothing to do"
        prior = (f"prior cache kept (age {self.prior_age_secs}s)" if self.prior_age_secs is not None
                 else f"no prior cache to keep ({self.prior_miss or 'absent'})")
        return f"{self.error_kind}: {self.error}; {prior}"


def refresh_now(
    root: str,
    override: str | None = None,
    *,
    progress: Callable[[str], None] | None = None,
    allow_bundled: bool = False,
    lock_wait_secs: float = 0.0,
    lock_fd: int | None = None,
    only_if_due: bool = False,
    env: dict[str, Any] | None = None,
    shapes_dir: str | None = None,
    accept_empty: bool = False,
) -> RefreshOutcome:
    """Refresh the projection cache for the configuration of ``root`` (see the module doc).

    ``allow_bundled``: with no endpoint configured, project the bundled example catalogue
    (``yupana project`` only). ``lock_wait_secs``: how long to wait for a running refresh
    (0: don't). ``lock_fd``: an already-locked descriptor of ``refresh.lock`` handed over
    by the spawning hook. ``only_if_due``: re-check under the lock and skip when the cache
    is no longer due or the back-off is active (the detached worker). ``env`` is passed to
    the projection (``SHANTY_ROOT``/``SHANTY_AGENT``). ``shapes_dir`` replaces the bundled
    shapes/ for the SHACL gate (a deployment with stricter shapes). ``accept_empty``: store
    a projection that governs nothing over a cache that governed something (``yupana project
    --accept-empty`` only; :mod:`yupana.projection.empty`).
    """
    started = time.monotonic()
    say = progress or (lambda message: None)
    from yupana import config

    try:
        cfg = config.resolve(root, override)["config"]
    except config.ConfigError as exc:
        return _closing(lock_fd, RefreshOutcome(FAILED, error=str(exc), error_kind="config"))
    quipu = dict(cfg["quipu"])
    configured = (quipu.get("endpoint") or "").strip()
    if not configured and not allow_bundled:
        return _closing(lock_fd, RefreshOutcome(FAILED, error_kind="config", error=(
            "no endpoint configured: set [yupana.quipu] endpoint (http(s)://… or file:<path>)")))
    key = cache.endpoint_key(configured, root)
    ident = dataset.identity(quipu, root)
    if configured.startswith("file:"):
        quipu["endpoint"] = key  # relative locations resolve against the project root
    path = cache_path_for(configured, ident)
    if not path:
        return _closing(lock_fd, RefreshOutcome(FAILED, endpoint=key, error_kind="config", error=(
            "no cache path could be resolved: set YUPANA_PROJECTION_CACHE_PATH, XDG_STATE_HOME or HOME")))
    try:
        fd = _take_lock(path, lock_wait_secs, lock_fd, say)
    except OSError as exc:  # a read-only or full state directory: named, never a traceback
        outcome = RefreshOutcome(FAILED, endpoint=key, cache_path=path, error_kind="write", error=(
            f"cannot take the refresh lock {refresh_state.lock_path(path)}: {exc.strerror or exc}; the state "
            "directory must be writable (set XDG_STATE_HOME or YUPANA_PROJECTION_CACHE_PATH to move it)"))
        _prior(outcome, path, key, ident)
        return outcome
    if fd is None:
        outcome = RefreshOutcome(BUSY, endpoint=key, cache_path=path, error_kind="busy",
                                 error=f"a refresh is already running ({holder(path)}); try again when it finishes")
        _prior(outcome, path, key, ident)
        return outcome
    try:
        return _locked(quipu, key, path, started, say, only_if_due, env, shapes_dir, accept_empty,
                       bundle=(dict(cfg.get("bundle") or {}), root), ident=ident)
    finally:
        os.close(fd)


def cache_path_for(configured: str, ident: str) -> str | None:
    """Where the cache for the configured endpoint (dataset identity ``ident``,
    :func:`yupana.state.dataset.identity`) lives.

    Each store has its own directory (:mod:`yupana.state.stores`), the bundled example catalogue
    (no endpoint configured) included, so trying ``yupana project`` in a project without
    configuration never replaces another project's real cache. Under an explicit
    ``$YUPANA_PROJECTION_CACHE_PATH`` the bundled catalogue gets ``example/projection.json``
    beside it, for the same reason.
    """
    explicit = paths.explicit_projection_cache()
    if explicit and not configured.strip():
        return os.path.join(os.path.dirname(explicit) or ".", "example", "projection.json")
    return stores.cache_path(ident)


def cache_path_of(root: str, override: str | None = None) -> str | None:
    """The cache path the configuration of ``root`` refreshes into (None: not resolvable)."""
    from yupana import config

    try:
        quipu = config.resolve(root, override)["config"]["quipu"]
    except config.ConfigError:
        return None
    return cache_path_for((quipu.get("endpoint") or "").strip(), dataset.identity(quipu, root))


def _locked(quipu: dict[str, Any], key: str, path: str, started: float, say: Callable[[str], None], only_if_due: bool,
            env: dict[str, Any] | None, shapes_dir: str | None, accept_empty: bool = False,
            bundle: tuple[dict[str, Any], str] = ({}, "."), *, ident: str) -> RefreshOutcome:
    now = int(time.time())
    from yupana.state import adopt

    adopted = adopt.adopt(quipu, key, ident, path)  # an older yupana's endpoint-keyed cache, when proven
    if adopted:
        say(adopted)
    state = refresh_state.read(path, key)
    outcome = RefreshOutcome(FAILED, endpoint=key, cache_path=path)
    if only_if_due:
        why_not = _not_due(path, ident, quipu, state, now, bundle_host=bool(str(bundle[0].get("url") or "").strip()))
        if why_not:
            outcome.status, outcome.error = SKIPPED, why_not
            return outcome
    run = refresh_run.Run(deadline=refresh_run.deadline_for(quipu), last_write_secs=state.get("write_secs"))
    bundle_cfg, root = bundle
    bundle_url = str(bundle_cfg.get("url") or "").strip()
    try:
        if bundle_url:
            from yupana.workers import bundle_fetch

            body = bundle_fetch.body(bundle_url, bundle_cfg, root, quipu, key, path, state, now, say, outcome)
            if body is None:  # 304: the installed bundle is current (and still within its TTL)
                outcome.duration_s = time.monotonic() - started
                _record(outcome, state, now, int(quipu.get("refresh_backoff_secs") or 60))
                return outcome
        else:
            refresh_run.project_and_gate(run, quipu, key, path, say, env, shapes_dir)
            body = dict(run.projection.cache)
        _install(run, body, key, path, say, outcome, accept_empty=accept_empty, from_bundle=bool(bundle_url),
                 ident=ident, max_shrink=_max_shrink(quipu))
    except _Refused as exc:
        outcome.error_kind, outcome.error = exc.kind, exc.message
        run.gate = exc.report or run.gate
    except BundleError as exc:
        outcome.error_kind, outcome.error = f"bundle-{exc.kind}", exc.message
    except Exception as exc:  # noqa: BLE001 - every failure is named and recorded, never raised
        outcome.error_kind, outcome.error = _classify(exc)
    proj = run.projection
    outcome.gate, outcome.phases, outcome.incremental = run.gate, run.phases, run.incremental
    if run.progress is not None:
        if outcome.error_kind != "deadline":  # not cut: it finished, or failed for another reason
            run.progress.cut_at = ""
        outcome.progress = run.progress.as_json()
    outcome.warnings[:0] = run.warnings
    if proj is not None:
        outcome.planes = dict(proj.planes)
    outcome.duration_s = time.monotonic() - started
    _record(outcome, state, now, int(quipu.get("refresh_backoff_secs") or 60))
    if not outcome.ok:
        _prior(outcome, path, key, ident)
    elif proj is not None:
        overclaims = list(getattr(proj, "hosting_overclaims", None) or [])
        if overclaims:
            spool.record("hosting_overclaim", {"actual_layer": "orchestration", "count": len(overclaims),
                                               "notices": overclaims})
    return outcome


def _install(run: refresh_run.Run, body: dict[str, Any], key: str, path: str, say: Callable[[str], None],
             outcome: RefreshOutcome, *, accept_empty: bool, from_bundle: bool, ident: str,
             max_shrink: float = empty_defaults.DEFAULT_MAX_SHRINK) -> None:
    """Write ``body`` (a projection or a verified bundle) as the cache of ``key`` at ``path``
    and fill ``outcome`` with what was written; _Refused (empty, write) or DeadlineError."""
    from yupana.projection import empty

    refused, warning = empty.check(body, path, key, accept_empty=accept_empty, max_shrink=max_shrink)
    if refused:
        kind, _, text = refused.partition(": ") if refused.startswith("shrink: ") else ("empty", "", refused)
        raise _Refused(kind, text)
    if warning:
        outcome.warnings.append(warning)
    source = body.get("endpoint")
    body["endpoint"] = key
    body["dataset"] = ident  # what selected this data (yupana/state/dataset.py): a hook of another dataset refuses it
    if source and cache.normalize_endpoint(str(source)) != key:
        body["source"] = source
    if not from_bundle:
        body["written_at"] = int(time.time())  # a bundle keeps the time its store confirmed it
        short = refresh_run.write_short(run, body)
        if run.deadline.expired() or short:
            from yupana.endpoint.base import DeadlineError

            refresh_run.save_memo(run, path)  # all of it validated: the next refresh keeps it
            when = short or "passed before writing the cache"
            raise DeadlineError(f"the refresh deadline of {run.deadline.budget:g}s {when} "
                                "(the projection and the SHACL gate took it all; what they found is kept for the "
                                "next refresh): raise [yupana.quipu] refresh_deadline_secs for a catalogue this size")
    say(f"writing {path}")
    stores.name_store(os.path.dirname(path), ident)
    error, hot_error = refresh_run.save(run, body, path)
    if error:
        raise _Refused("write", error)
    if hot_error:
        outcome.warnings.append(hot_error + " (hooks will parse the JSON until the next refresh)")
    refresh_run.save_memo(run, path)
    outcome.status = REFRESHED
    if outcome.bundle is not None:
        outcome.bundle["installed_at"] = int(time.time())
    outcome.written_at = body["written_at"]
    outcome.digest = body.get("digest")
    outcome.dialect = body.get("dialect")
    outcome.counts = dict(body.get("counts") or {})
    outcome.notices = list(body.get("notices") or [])


def _max_shrink(quipu: dict[str, Any]) -> float:
    found = quipu.get("max_shrink")
    if isinstance(found, (int, float)) and not isinstance(found, bool):
        return float(found)
    return empty_defaults.DEFAULT_MAX_SHRINK


def _classify(exc: Exception) -> tuple[str, str]:
    from yupana.endpoint.base import EndpointError
    from yupana.projection.errors import ProjectionError

    if isinstance(exc, EndpointError):
        return exc.kind, exc.message
    if isinstance(exc, ProjectionError):
        return "projection", str(exc)
    return "internal", f"{type(exc).__name__}: {exc}"


def _record(outcome: RefreshOutcome, prior: dict[str, Any], now: int, base: int) -> None:
    """Write refresh-state.json for this attempt (prior = the state for this endpoint)."""
    state = {
        "endpoint": outcome.endpoint,
        "last_attempt_at": now,
        "last_success_at": prior.get("last_success_at"),
        "last_failure_at": prior.get("last_failure_at"),
        "last_error": prior.get("last_error"),
        "last_error_kind": prior.get("last_error_kind"),
        "consecutive_failures": 0,
        "backoff_until": None,
        "duration_secs": round(outcome.duration_s, 3),
        # What deriving the hot twin and writing took last time: the time a refresh keeps for them.
        "write_secs": _write_secs(outcome) if outcome.ok else prior.get("write_secs"),
    }
    if prior.get("bundle") or outcome.bundle:  # a bundle host: the bundle installed (kept across failures)
        state["bundle"] = outcome.bundle if outcome.ok and outcome.bundle else prior.get("bundle")
    if outcome.ok:
        state["last_success_at"] = outcome.written_at
        state["digest"] = outcome.digest
    else:
        failures = int(prior.get("consecutive_failures") or 0) + 1
        state.update(last_failure_at=int(time.time()), last_error=outcome.error.split("\n", 1)[0] if outcome.error else None,
                     last_error_kind=outcome.error_kind, consecutive_failures=failures,
                     backoff_until=int(time.time()) + refresh_state.backoff_secs(base, failures))
        if _went_on(outcome):  # the store answered and the memo holds more: the next attempt goes on at once
            state["backoff_until"] = None
        outcome.consecutive_failures = failures
        outcome.backoff_until = int(state["backoff_until"] or 0)
    error = refresh_state.write(outcome.cache_path or "", state)
    if error:
        outcome.warnings.append(error)


def _went_on(outcome: RefreshOutcome) -> bool:
    """Whether a failed attempt was a deadline cut that left rules of its own in the memo: no
    back-off follows (docs/refresh.md, "A catalogue too large for one deadline")."""
    progress = outcome.progress or {}
    return (outcome.error_kind == "deadline" and bool(progress.get("gated"))
            and bool(progress.get("kept_in_memo")))


def _write_secs(outcome: RefreshOutcome) -> float | None:
    phases = outcome.phases or {}
    if phases.get("compile") is None and phases.get("write") is None:
        return None
    return round(float(phases.get("compile") or 0.0) + float(phases.get("write") or 0.0), 3)


def _not_due(path: str, ident: str, quipu: dict[str, Any], state: dict[str, Any], now: int, *,
             bundle_host: bool = False) -> str | None:
    """Why the detached worker should not refresh now (None: it should). A bundle host's next
    check is due an interval after its last one (docs/bundles.md), not after the confirmation."""
    if refresh_state.in_backoff(state, now):
        return f"back-off active until {state['backoff_until']} (after {state.get('consecutive_failures')} failures)"
    found, miss = cache.read_json(path)
    if miss or found is None or cache.dataset_miss(found.get("dataset"), ident, path, quipu.get("dialect"),
                                                   found.get("dialect")):
        return None
    interval = int(quipu.get("refresh_interval_secs") or 0)
    checked = refresh_state.bundle_checked_secs(state, now) if bundle_host else None
    if checked is not None and checked <= interval:
        return f"the bundle server was asked {checked}s ago (refresh_interval_secs = {interval})"
    age = now - found["written_at"]
    if 0 <= age <= interval:
        return f"the cache was refreshed {age}s ago (refresh_interval_secs = {interval})"
    return None


def _prior(outcome: RefreshOutcome, path: str, key: str, ident: str) -> None:
    found, miss = cache.read_json(path)
    if miss:
        outcome.prior_miss = miss.label
        return
    if found is None or cache.normalize_endpoint(str(found.get("endpoint"))) != key:
        outcome.prior_miss = "endpoint"
        return
    if found.get("dataset") != ident:
        outcome.prior_miss = "dataset"
        return
    outcome.prior_age_secs = max(0, int(time.time()) - int(found["written_at"]))


# ── the lock ────────────────────────────────────────────────────────────────────────


def _take_lock(path: str, wait_secs: float, handed: int | None, say: Callable[[str], None]) -> int | None:
    """A descriptor holding the exclusive lock on refresh.lock, or None when it is taken."""
    from yupana.workers import detached

    lock = refresh_state.lock_path(path)
    if handed is not None:
        fd = handed
    else:
        os.makedirs(os.path.dirname(lock) or ".", exist_ok=True)
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    if not detached.wait_lock(fd, wait_secs, lambda: say(f"waiting for a running refresh ({holder(path)})")):
        os.close(fd)
        return None
    os.set_inheritable(fd, False)
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()} {int(time.time())}\n".encode(), 0)
    except OSError:
        pass
    return fd


def holder(path: str) -> str:
    """Who holds refresh.lock, in words (from the pid and time its holder wrote)."""
    try:
        from yupana.state import statefile

        pid, since = statefile.read(refresh_state.lock_path(path), 64).split()[:2]
        return f"pid {int(pid)}, started {max(0, int(time.time()) - int(since))}s ago"
    except (OSError, ValueError):
        return "holder unknown"


def _closing(fd: int | None, outcome: RefreshOutcome) -> RefreshOutcome:
    if fd is not None:
        try:
            os.close(fd)
        except OSError:
            pass
    return outcome
