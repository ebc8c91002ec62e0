"""Work a hook starts but never waits for: detached workers and single-flight markers.

Hooks must not wait on the network, so refreshes, exposure lookups, disk-sample writes and
index builds run in ``python -m yupana …`` workers started here: in a session of their own
(``setsid``: the harness neither waits for nor kills them) with stdin, stdout and stderr on
/dev/null (a worker must never hold the hook's stdout pipe open, or the harness would wait
for it). Stdlib only; ``os.posix_spawn`` instead of :mod:`subprocess` (15 ms to import).

A *marker* is a file created with O_EXCL that says "a worker for this is already running";
one older than its staleness bound is taken to belong to a dead worker and is taken over.

This module is the one skeleton every background activity (refresh, exposure lookup, disk
flush, the code-graph builder and its after-edit refresher) is built from:

* starting, hook side — :func:`spawn_claimed` (claim a marker, spawn, release it when the
  spawn fails) or :func:`spawn_locked` (take an flock and hand it to the worker), each with
  a look-only twin for a rehearsal that answers whether it would start (:func:`claimable`, :func:`lock_free`);
* back-off — :func:`retry_due` (a state file's ``retry_after``) and :func:`stamp_due`
  (a stamp file's age);
* single flight, worker side — :func:`try_lock` (an exclusive flock, or None when another
  worker holds it), :func:`wait_lock` (the same, waiting a bounded time), :func:`release`
  of the marker the hook created;
* the log — :func:`append_log` (one line, rotated past a size).
"""

from __future__ import annotations

import os
import stat
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import IO


def spawn(args: list[str], *, module: str = "yupana") -> bool:
    """Start ``python -m <module> <args…>`` detached; False when it could not be started.

    File descriptors the caller marked inheritable (``os.set_inheritable``) are passed on:
    that is how the refresher receives the single-flight lock already held.
    """
    argv = [sys.executable, "-m", module, *args]
    devnull = os.devnull
    actions = [
        (os.POSIX_SPAWN_OPEN, 0, devnull, os.O_RDONLY, 0),
        (os.POSIX_SPAWN_OPEN, 1, devnull, os.O_WRONLY, 0),
        (os.POSIX_SPAWN_OPEN, 2, devnull, os.O_WRONLY, 0),
    ]
    try:
        os.posix_spawn(sys.executable, argv, dict(os.environ), file_actions=actions, setsid=True)
    except (OSError, AttributeError, TypeError, ValueError):
        return False
    return True


def claim(marker: str, now: float, stale_secs: float) -> bool:
    """Create ``marker`` (O_EXCL); True when this caller now owns the work it stands for."""
    for _ in range(2):
        try:
            parent = os.path.dirname(marker)
            if parent:
                os.makedirs(parent, exist_ok=True)
            fd = os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            os.close(fd)
            return True
        except FileExistsError:
            try:
                st = os.lstat(marker)
                if stat.S_ISREG(st.st_mode) and now - st.st_mtime <= stale_secs:
                    return False
                os.unlink(marker)  # left by a dead worker (or not a marker at all): take it over
            except OSError:
                return False
        except OSError:
            return False
    return False


def claimable(marker: str, now: float, stale_secs: float) -> bool:
    """Whether :func:`claim` would succeed now, looked at without creating anything."""
    try:
        st = os.lstat(marker)
        return not stat.S_ISREG(st.st_mode) or now - st.st_mtime > stale_secs
    except FileNotFoundError:
        return True
    except OSError:
        return False


def release(marker: str) -> None:
    try:
        os.unlink(marker)
    except OSError:
        pass


def spawn_claimed(marker: str, args: list[str], now: float, stale_secs: float, *, module: str = "yupana") -> bool:
    """Claim ``marker`` and start ``python -m <module> <args…>`` (the worker releases the
    marker when done); the marker is released again when the spawn fails. A rehearsal asks
    :func:`claimable` instead."""
    if not claim(marker, now, stale_secs):
        return False
    if spawn(args, module=module):
        return True
    release(marker)
    return False


def spawn_locked(lock: str, args: list[str]) -> bool:
    """Take the exclusive flock on ``lock`` and start ``python -m yupana <args…> --lock-fd N``
    holding it (the worker's inherited descriptor keeps it; ours is closed). False when
    another holder has it or nothing could be started; never raises. A rehearsal asks
    :func:`lock_free` instead."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not a POSIX system
        return False
    try:
        os.makedirs(os.path.dirname(lock) or ".", exist_ok=True)
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except OSError:
        return False
    try:
        if fd < 3:  # never let the lock collide with the child's stdio
            high = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
            os.close(fd)
            fd = high
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False  # a worker is running: it holds the lock
        os.set_inheritable(fd, True)
        return spawn([*args, "--lock-fd", str(fd)])
    except OSError:
        return False
    finally:
        os.close(fd)  # the child's inherited copy keeps the lock; ours goes


def lock_free(lock: str) -> bool:
    """Whether nobody holds the flock on ``lock`` (looked at without creating it; ``O_NONBLOCK``:
    a FIFO there is answered as a live hook's ``O_RDWR`` open would, never waited on)."""
    import fcntl

    try:
        fd = os.open(lock, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True  # closing the descriptor releases it at once
    except OSError:
        return False
    finally:
        os.close(fd)


def try_lock(path: str, mode: str = "a") -> IO[str] | IO[bytes] | None:
    """``path`` opened (``mode``) and exclusively flocked, or None when another process holds
    it (or it cannot be opened). Closing the file releases the lock."""
    import fcntl

    try:
        fh = open(path, mode)
    except OSError:
        return None
    try:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        fh.close()
        return None
    return fh


def wait_lock(fd: int, wait_secs: float, on_wait: Callable[[], None] | None = None) -> bool:
    """Take the exclusive flock on ``fd``, waiting up to ``wait_secs`` (``on_wait()`` once,
    when it has to wait); False when it stayed taken."""
    import fcntl
    import time

    give_up = time.monotonic() + max(0.0, wait_secs)
    told = False
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except OSError:
            if time.monotonic() >= give_up:
                return False
            if not told and on_wait is not None:
                on_wait()
            told = True
            time.sleep(0.1)


def retry_due(state_path: str | None, now: float) -> bool:
    """False while the back-off a failed worker wrote (``{"retry_after": <epoch>}``) runs."""
    if not state_path:
        return True
    from yupana import fastjson
    from yupana.state import statefile

    try:
        retry_after = fastjson.loads(statefile.read(state_path)).get("retry_after", 0)  # type: ignore[attr-defined]
    except (OSError, ValueError, AttributeError, UnicodeDecodeError):
        return True
    return not (isinstance(retry_after, int) and now < retry_after)


def stamp_due(stamp: str, backoff_secs: float, now: float) -> bool:
    """Whether ``stamp`` is older than ``backoff_secs`` (or absent); when it is, the stamp is
    renewed so the next start waits again. False when it cannot be written."""
    try:
        if now - os.stat(stamp).st_mtime < backoff_secs:
            return False
    except OSError:
        pass
    try:
        with open(stamp, "wb"):
            pass
    except OSError:
        return False
    return True


def append_log(target: str, line: str, max_bytes: int) -> None:
    """Append ``line`` to ``target`` (rotated to ``target.old`` past ``max_bytes``); never raises."""
    try:
        try:
            if os.stat(target).st_size > max_bytes:
                os.replace(target, target + ".old")
        except FileNotFoundError:
            os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
        fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line.encode("utf-8", "replace"))
        finally:
            os.close(fd)
    except OSError:
        pass
