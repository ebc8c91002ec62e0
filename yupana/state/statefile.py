"""Reading a state file so that it can neither hang nor fool a hook. Standard library only.

Every hook-side read of durable state (the projection cache and its hot twin,
``refresh-state.json``, the settings snapshot, ``throttles.jsonl``, ``exposure.json``, the
disk and exposure markers, the metrics spool) goes through :func:`read`:

* the file is opened with ``O_NONBLOCK`` (a FIFO cannot block the open or the read) and
  ``O_NOFOLLOW``; a symlink is followed only when it resolves to a regular file (a link to
  ``/dev/zero`` or ``/dev/urandom`` is refused before it is opened);
* ``fstat`` on the open descriptor must say ``S_ISREG`` — a FIFO, a socket or a device is
  refused, whatever the path looked like when it was resolved;
* the size is bounded (the caller's ``limit``): a file larger than it is refused, and at most
  ``limit + 1`` bytes are ever read, so a file that grows under the reader is refused too.

A refusal raises :class:`Refused` (an ``OSError``: callers that already treat an
unreadable file as absent keep doing so) and is noted in :data:`refused`, so the hook
turns it into a loud record (``state_file`` fail-open) instead of a silent default.
"""

from __future__ import annotations

import errno
import os
import stat

#: Bounds, by what the file is. The projection cache of a 50k-subject catalogue is ~40 MB.
CACHE_LIMIT = 256 << 20
SNAPSHOT_LIMIT = 16 << 20
SMALL_LIMIT = 1 << 20
LOG_LIMIT = 16 << 20

_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)

# O_NOFOLLOW on a symlink: ELOOP (Linux, macOS), EMLINK (FreeBSD), EFTYPE (some BSDs)
_SYMLINK_ERRNOS = {errno.ELOOP, errno.EMLINK, getattr(errno, "EFTYPE", errno.ELOOP)}

#: ``(path, reason)`` of every state file refused in this process, in order (a hook reports them).
refused: list[tuple[str, str]] = []


class Refused(OSError):
    """A state file that is not a regular file of a sane size (``reason`` says which)."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(reason)
        self.path = path
        self.reason = reason
        self.strerror = reason

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a directory"
    return "not a regular file"


def _refuse(path: str, reason: str) -> Refused:
    refused.append((path, reason))
    return Refused(path, reason)


def _open(path: str) -> int:
    try:
        return os.open(path, _FLAGS)
    except OSError as exc:
        if exc.errno not in _SYMLINK_ERRNOS:
            raise
    real = os.path.realpath(path)
    st = os.stat(real)
    if not stat.S_ISREG(st.st_mode):
        raise _refuse(path, f"is a symlink to {real}, {_kind(st.st_mode)}, not a regular file")
    return os.open(real, _FLAGS)


def read(path: str, limit: int = SMALL_LIMIT, *, tail: int | None = None) -> bytes:
    """The bytes of the regular file ``path`` (at most ``limit``); raises OSError or :class:`Refused`.

    With ``tail``, a file longer than ``limit`` is not refused: the last ``tail`` bytes are
    returned instead (an append-only spool read from its end).
    """
    fd = _open(path)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _refuse(path, f"is {_kind(st.st_mode)}, not a regular file")
        start = 0
        if st.st_size > limit:
            if tail is None:
                raise _refuse(path, f"is {st.st_size} bytes, over the {limit}-byte bound for this state file")
            start = max(0, st.st_size - tail)
            limit = tail
        chunks = []
        want = limit + 1
        offset = start
        while want > 0:
            chunk = os.pread(fd, min(want, 1 << 24), offset)
            if not chunk:
                break
            chunks.append(chunk)
            offset += len(chunk)
            want -= len(chunk)
        data = chunks[0] if len(chunks) == 1 else b"".join(chunks)
        if len(data) > limit and tail is None:
            raise _refuse(path, f"grew past the {limit}-byte bound for this state file while it was read")
        return data[:limit] if tail is not None else data
    finally:
        os.close(fd)


def open_regular(path: str, limit: int = CACHE_LIMIT) -> int:
    """A read-only descriptor on the regular file ``path`` of at most ``limit`` bytes, after
    the checks :func:`read` makes; raises OSError or :class:`Refused`. The caller reads what
    it needs with ``os.pread`` (the hot twin: a few sections of a large file) and closes it.
    The descriptor keeps the very file it was opened on, whatever is renamed over ``path``.
    """
    fd = _open(path)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _refuse(path, f"is {_kind(st.st_mode)}, not a regular file")
        if st.st_size > limit:
            raise _refuse(path, f"is {st.st_size} bytes, over the {limit}-byte bound for this state file")
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_or_none(path: str | None, limit: int = SMALL_LIMIT) -> bytes | None:
    """:func:`read`, with None for a missing, unreadable or refused file (the refusal is still noted)."""
    if not path:
        return None
    try:
        return read(path, limit)
    except OSError:
        return None


def drain() -> list[tuple[str, str]]:
    """The refusals noted so far, once (the hook reports each of them once)."""
    out = list(dict.fromkeys(refused))  # a spool refused on every append is one refusal
    del refused[:]
    return out


def open_append(path: str, mode: int = 0o644) -> int:
    """A descriptor for appending to the regular file ``path`` (created when missing).

    ``O_NONBLOCK``: a FIFO with no reader fails at once instead of blocking the open; the
    descriptor must then ``fstat`` as a regular file — a FIFO, a device (``/dev/null`` would
    swallow every record) or a socket is refused, noted in :data:`refused`, and raises.
    """
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0), mode)
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # a FIFO nobody reads (or a device with nothing behind it)
            raise _refuse(path, "is a FIFO or a device, not a regular file (nothing was appended)") from None
        raise
    try:
        st = os.fstat(fd)
    except OSError:
        os.close(fd)
        raise
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise _refuse(path, f"is {_kind(st.st_mode)}, not a regular file (nothing was appended)")
    return fd


def not_regular(path: str) -> str | None:
    """Why the existing ``path`` is no regular file (``lstat``: a symlink says so), or None."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if stat.S_ISREG(st.st_mode):
        return None
    if stat.S_ISLNK(st.st_mode):
        return "is a symlink, not a regular file"
    return f"is {_kind(st.st_mode)}, not a regular file"
