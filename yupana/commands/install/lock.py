"""The lock ``yupana install`` / ``uninstall`` holds while it merges into a client's files.

The lock is ``flock`` on the directory that holds the file (its real path: a symlinked
settings file is locked where it lives; the nearest existing directory when it does not
exist yet) — a directory is never replaced by the atomic rename that writes the file, so
two installs never merge from the same old text. The file is read *under* the lock, and read
again just before it is replaced (:func:`unchanged`): an editor that does not take the lock
and saved in between is detected, and the merge is made again from what it saved.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sys
import time
from collections.abc import Iterator

WAIT_SECS = 30.0


class Busy(Exception):
    """The lock could not be taken: another process held it for longer than we wait, or the
    directory cannot be opened. Nothing was written."""


def directory(path: str) -> str:
    """The directory whose lock guards ``path``."""
    folder = os.path.dirname(os.path.realpath(path))
    while not os.path.isdir(folder) and os.path.dirname(folder) != folder:
        folder = os.path.dirname(folder)
    return folder


@contextlib.contextmanager
def held(path: str, wait: float = WAIT_SECS) -> Iterator[None]:
    """Hold the exclusive lock guarding ``path``; Busy after ``wait`` seconds of another's."""
    folder = directory(path)
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except OSError as exc:
        raise Busy(f"cannot lock {folder} to merge into {path}: {exc.strerror or exc}; nothing was written") from None
    try:
        deadline = time.monotonic() + wait
        said = False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise Busy(f"another process has held the lock on {folder} for {wait:.0f}s (a concurrent "
                               "yupana install?); nothing was written — run it again") from None
                if not said:
                    print(f"yupana: waiting for the lock on {folder} (another install or uninstall is merging)",
                          file=sys.stderr, flush=True)
                    said = True
                time.sleep(0.05)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def unchanged(path: str, text: str | None) -> bool:
    """Whether ``path`` still holds ``text`` (None: still absent)."""
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as fh:
            return fh.read() == text
    except FileNotFoundError:
        return text is None
    except OSError:
        return False
