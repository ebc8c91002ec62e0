"""The index's detached helpers: the cold builder and the after-edit refresher.

Hooks never wait for a whole crate to be indexed. When an index is not up to date within
the deadline, :func:`spawn_builder` starts one detached ``python -m
yupana.codegraph.background build`` (single-flight through ``build.lock``, at most one start
per ``SPAWN_BACKOFF_S``); after each pre-edit analysis, :func:`watch_edit` starts one
refresher per file that waits for the edit to land and indexes it, so the next edit of the
same file finds it fresh. Both write through the same transactions as the hooks.
"""

from __future__ import annotations

import os
import sys
import time

from yupana.workers import detached
from yupana.codegraph import crate as crates
from yupana.codegraph import index
from yupana.codegraph import store as stores

SPAWN_BACKOFF_S = 10.0
WATCH_S = 8.0  # how long a refresher waits for the edit it was started for to land
_watched: set[str] = set()


def watch_edit(ci: index.CrateIndex, path: str) -> bool:
    """After a pre-edit analysis, start one detached refresher that waits (up to ``WATCH_S``)
    for ``path`` to change — the edit landing — and then brings the crate's index up to date,
    so the next edit of that file finds it indexed instead of re-parsing it under the
    deadline. At most one waiter per file (an flock it holds while waiting); none when
    ``$YUPANA_CODEGRAPH_WATCH`` is ``0``."""
    if os.environ.get("YUPANA_CODEGRAPH_WATCH", "1") == "0" or path in _watched:
        return False
    _watched.add(path)
    lock_path = os.path.join(os.path.dirname(ci.store.path), f"watch-{stores.content_hash(path.encode())[:16]}.lock")
    probe = detached.try_lock(lock_path, "wb")  # free now: nobody is waiting for this file
    if probe is None:
        return False
    probe.close()
    try:
        st = os.stat(path)
        mtime, size = st.st_mtime_ns, st.st_size
    except OSError:
        mtime, size = -1, -1
    return detached.spawn(["watch", "--repo", ci.repo, "--crate", ci.crate.dir, "--file", path, "--lock", lock_path,
                           "--stat", f"{mtime}:{size}"], module="yupana.codegraph.background")


def _watch(repo: str, crate_dir: str, path: str, lock_path: str, stat: str) -> None:
    """The detached refresher: wait for ``path`` to differ from ``stat``, then refresh."""
    lock = detached.try_lock(lock_path, "wb")
    if lock is None:
        return
    try:
        before = tuple(int(x) for x in stat.split(":"))
        until = time.monotonic() + WATCH_S
        while time.monotonic() < until:
            try:
                st = os.stat(path)
                now = (st.st_mtime_ns, st.st_size)
            except OSError:
                now = (-1, -1)
            if now != before:
                break
            time.sleep(0.05)
        else:
            return
        time.sleep(0.01)  # let a multi-file tool call finish its writes
        c = crates.find(path, repo)
        st_ = stores.Store(stores.index_path(repo), busy_ms=2000)
        try:
            index.CrateIndex(repo, c, st_).refresh(time.monotonic() + 30, os.path.relpath(path, c.dir))
        finally:
            st_.close()
    finally:
        lock.close()


def builder_backed_off(ci: index.CrateIndex) -> bool:
    """Whether a build of ``ci``'s crate was started within ``SPAWN_BACKOFF_S`` (none starts now)."""
    try:
        return time.time() - os.stat(_stamp(ci)).st_mtime < SPAWN_BACKOFF_S
    except OSError:
        return False


def _stamp(ci: index.CrateIndex) -> str:
    return os.path.join(os.path.dirname(ci.store.path), "build.stamp")


def spawn_builder(ci: index.CrateIndex) -> bool:
    """Start one detached background build of ``ci``'s crate (False when backed off or busy)."""
    if not detached.stamp_due(_stamp(ci), SPAWN_BACKOFF_S, time.time()):
        return False
    return detached.spawn(["build", "--repo", ci.repo, "--crate", ci.crate.dir], module="yupana.codegraph.background")


def build(repo: str, crate_dir: str, *, batch_s: float = 0.25, progress=None) -> index.CrateIndex | None:
    """Index a whole crate (cold path): single-flight through ``build.lock`` beside the index;
    None when another builder holds it. Commits every ``batch_s`` of parsing so hooks never
    wait long for the write lock."""
    c = crates.find(os.path.join(crate_dir, "Cargo.toml"), repo)
    st = stores.Store(stores.index_path(repo), busy_ms=5000)
    lock = detached.try_lock(os.path.join(os.path.dirname(st.path), "build.lock"), "wb")
    if lock is None:
        st.close()
        return None
    try:
        while True:
            ci = index.CrateIndex(repo, c, st)
            ci.refresh(time.monotonic() + batch_s, at_least_one=True)
            if progress is not None:
                progress(len(ci.files), len(ci.pending))
            if not ci.pending:
                return ci
    finally:
        lock.close()


def main(argv: list[str] | None = None) -> int:
    """``python -m yupana.codegraph.background build --repo R --crate C`` (the detached builder) or
    ``… watch --repo R --crate C --file F --lock L --stat MTIME:SIZE`` (the after-edit refresher)."""
    import argparse

    parser = argparse.ArgumentParser(prog="yupana.codegraph.index", description=main.__doc__)
    parser.add_argument("action", choices=["build", "watch"])
    parser.add_argument("--repo", required=True)
    parser.add_argument("--crate", required=True)
    parser.add_argument("--file")
    parser.add_argument("--lock")
    parser.add_argument("--stat", default="-1:-1")
    args = parser.parse_args(argv)
    if args.action == "watch":
        _watch(os.path.abspath(args.repo), os.path.abspath(args.crate), args.file, args.lock, args.stat)
    else:
        build(os.path.abspath(args.repo), os.path.abspath(args.crate))
    return 0


if __name__ == "__main__":
    sys.exit(main())
