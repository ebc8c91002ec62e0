"""Replacing a state file so a reader sees the whole old file or the whole new one. Stdlib only.

Every state file yupana rewrites (the projection cache and its hot twin, the config
snapshot, refresh state, throttles, exposure, disk samples) goes through :func:`write`: the
bytes go to a process-unique temporary file beside the target, which is then renamed over
it. On any failure the temporary file is removed and the target is left exactly as it was.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from collections.abc import Iterable


def write(target: str, data: bytes | Iterable[bytes], *, fsync: bool = False, make_dirs: bool = True,
          mode: int = 0o644) -> os.stat_result:
    """Atomically replace ``target`` with ``data`` (bytes, or chunks written as they come: a
    large file is never whole in memory); raise OSError (target untouched) on failure.

    ``fsync`` makes the data durable before the rename (for files whose loss would cost a
    refresh, like the projection cache); small, re-derivable state skips it. Returns the
    written file's stat, taken before the rename, so it names this very file even when
    another writer replaces ``target`` right after (inode and mtime survive a rename).
    ``mode`` is the new file's permission (``0o600`` for a file that may hold what only its
    owner may read), set with ``fchmod`` so the umask cannot widen or narrow it.
    """
    if make_dirs:
        parent = os.path.dirname(target)
        if parent:
            os.makedirs(parent, exist_ok=True)
    tmp = f"{target}.tmp.{os.getpid()}.{os.urandom(4).hex()}"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        try:
            if mode != 0o644:
                os.fchmod(fd, mode)
            for chunk in ([data] if isinstance(data, (bytes, bytearray, memoryview)) else data):
                view = memoryview(chunk)
                while view:
                    view = view[os.write(fd, view):]
            if fsync:
                os.fsync(fd)
            st = os.fstat(fd)
        finally:
            os.close(fd)
        os.replace(tmp, target)
        return st
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write_quietly(target: str, data: bytes, *, mode: int = 0o644) -> str | None:
    """:func:`write` for best-effort state: None, or why it could not be written."""
    try:
        write(target, data, mode=mode)
    except OSError as exc:
        return f"cannot write {target}: {exc.strerror or exc}"
    return None
