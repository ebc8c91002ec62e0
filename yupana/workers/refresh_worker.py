"""``yupana refresh-worker`` (internal): the detached, single-flight refresher hooks start.

A hook that finds the cache due (:mod:`yupana.hooks.governed`) takes ``refresh.lock``
itself and spawns this worker with the locked descriptor inherited (``--lock-fd``), stdio
on /dev/null, in its own session. The worker re-checks under the lock whether a refresh
is still due (another worker may have just finished, or a back-off may have started),
runs :func:`yupana.workers.refresher.refresh_now`, and exits. It never prints: everything goes to
``refresh.log`` beside the cache (rotated to ``refresh.log.old`` past 1 MiB). Run by hand
without ``--lock-fd`` it takes the lock itself and exits at once when it is held.
"""

from __future__ import annotations

import argparse
import os
import time

LOG_MAX_BYTES = 1 << 20
_log_cache: str | None = None  # the cache this worker refreshes: refresh.log goes beside it


# the global flags (cli.GLOBAL_HELP) this command honours; any other is refused
GLOBAL_FLAGS: tuple[str, ...] = ("--config",)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--root", default=None, help="project root whose configuration to resolve (default: cwd)")
    parser.add_argument("--lock-fd", type=int, default=None,
                        help="an inherited descriptor of refresh.lock, already locked by the spawning hook")
    parser.add_argument("--force", action="store_true", help="refresh even when not due or backing off")
    parser.add_argument("--twin-only", action="store_true",
                        help="only derive the hot twin from the projection.json at hand (no store is asked): what a "
                             "hook starts when the twin is missing and the catalogue too large to derive inline")


def run(args: argparse.Namespace) -> int:
    from yupana import project_root

    root = project_root.cold_root(args.root)  # --root, else the project the cwd is in
    global _log_cache
    try:
        from yupana.workers import refresher

        _log_cache = refresher.cache_path_of(root, getattr(args, "config", None))
        if args.twin_only:
            return rebuild_twin(_log_cache, args.lock_fd)

        outcome = refresher.refresh_now(
            root, getattr(args, "config", None), lock_fd=args.lock_fd, only_if_due=not args.force,
            progress=lambda message: log(message),
        )
    except BaseException as exc:  # noqa: BLE001 - a detached worker has nobody to raise to
        log(f"refresh crashed: {type(exc).__name__}: {exc}")
        return 1
    if outcome.ok:
        counts = ", ".join(f"{k} {v}" for k, v in sorted(outcome.counts.items()) if v is not None)
        log(f"refreshed {outcome.endpoint} in {outcome.duration_s:.2f}s: {outcome.digest}; {counts}")
    elif outcome.status == refresher.SKIPPED:
        log(f"skipped: {outcome.error}")
    elif outcome.status == refresher.BUSY:
        log(f"not started: {outcome.error}")
    else:
        until = f"; next attempt after {outcome.backoff_until}" if outcome.backoff_until else ""
        log(f"refresh FAILED ({outcome.consecutive_failures} in a row{until}): {outcome.reason()}")
    for warning in outcome.warnings:
        log(f"warning: {warning}")
    return 0 if outcome.ok or outcome.status in (refresher.SKIPPED, refresher.BUSY) else 1


def rebuild_twin(cache_path: str | None, lock_fd: int | None) -> int:
    """Derive the hot twin of ``cache_path`` from its projection.json under the refresh lock (a
    running refresh writes a new twin anyway: then nothing is done)."""
    from yupana.state import cache, refresh_state
    from yupana.workers import detached

    if not cache_path:
        log("twin not rebuilt: no cache path could be resolved")
        return 1
    held = None
    if lock_fd is None:
        held = detached.try_lock(refresh_state.lock_path(cache_path))
        if held is None:
            log("twin not rebuilt: a refresh holds the lock (it writes the twin itself)")
            return 0
    try:
        started = time.monotonic()
        found, miss = cache.read(cache_path, derive_any=True)
        if found is None:
            log(f"twin not rebuilt: {miss.reason if miss else 'no cache'}")
            return 1
        log(f"hot twin derived from {cache_path} in {time.monotonic() - started:.2f}s")
        return 0
    finally:
        if lock_fd is not None:
            os.close(lock_fd)
        if held is not None:
            held.close()


def log(message: str) -> None:
    """Append one line to refresh.log beside the cache (the state directory when the
    configuration names none); never raises."""
    from yupana.state import paths, refresh_state

    cache = _log_cache or paths.legacy_projection_cache()
    if not cache:
        return
    target = refresh_state.log_path(cache)
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    from yupana.redact import redact_text

    from yupana.workers import detached

    detached.append_log(target, f"{stamp} pid {os.getpid()}: {redact_text(message)}\n", LOG_MAX_BYTES)
