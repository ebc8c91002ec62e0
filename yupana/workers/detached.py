"""Work a hook starts but never waits for: detached workers and single-flight markers.

Hooks must not wait on the network, so refreshes, exposure lookups, disk-sample writes and
index builds run in ``python -m yupana …`` workers started here: in a session of their own
(``setsid``: the harness neither waits for nor kills them) with stdin, stdout and stderr on
/dev/null (a worker must never hold the hook's stdout pipe open, or the harness would wait
for it). Stdlib only; ``os.posix_spawn`` instead of :mod:`subprocess` (15 ms to import).

A *marker* is a file created with O_EXCL that says "a worker for this is already running";
one older than its staleness bound is taken to belong to a dead worker and is taken over.
"""

from __future__ import annotations

import os
import stat
import sys


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
