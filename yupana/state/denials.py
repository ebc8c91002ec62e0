"""The denied-edit corpus: the verdict spool's denials kept for the recurrence advisory.

One JSON object per line (``v``, ``at``, ``project``, ``sid``, ``rule``, ``reason``, ``model``, the packed
vector ``k``/``w``, and ``path`` only when ``[yupana.metrics] record_paths`` allows it) in
``denials.jsonl`` in the store's state directory. What a line may hold (issue 23 §3): no
matched text (the hook masks it in ``reason``), the project's key (:func:`load` returns
only the asking project's entries), a digest of the session (``sid``: only that session is
quoted its own reason), and the file is the owner's alone (``0600``; a file left readable
by others is made private and loses every entry written before these rules, which may
hold a secret in clear). A line of the wrong shape (``reason`` null or a number) is
skipped, never an error. Safe under concurrent hooks: a writer appends one whole line
with ``O_APPEND`` (one ``write``, atomic for lines this small); a reader reads at most the
last :data:`MAX_BYTES` (:func:`statefile.read` with ``tail``) and skips a torn first
line. Bounded: entries older than :data:`MAX_AGE_SECS` are ignored, at most
:data:`MAX_ENTRIES` are read, and when the file passes :data:`COMPACT_BYTES` the writer
rewrites the live tail by atomic replace (a concurrent append during compaction can be
lost — the corpus is advisory; a lost entry is a missed advisory, never a denial).
"""

from __future__ import annotations

import os

from yupana import fastjson
from yupana.state import statefile, stores

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from typing import Any

NAME = stores.DENIALS_FILE
MAX_ENTRIES = 300
MAX_AGE_SECS = 30 * 86400
MAX_BYTES = 1024 * 1024  # read bound
COMPACT_BYTES = 2 * MAX_BYTES
MAX_REASON = 500
VERSION = 2  # lines without it were written before issue 23 §3 (matched text in clear): never read
MODE = 0o600


def _entry(raw: object, now: int, project: str | None) -> dict[str, Any] | None:
    """``raw`` as a live entry of ``project`` (None: any project), or None when it is not one."""
    if not isinstance(raw, dict) or raw.get("v") != VERSION:
        return None
    at = raw.get("at")
    if type(at) is not int or now - at > MAX_AGE_SECS:
        return None
    if project is not None and raw.get("project") != project:
        return None
    if not all(isinstance(raw.get(key), str) for key in ("rule", "reason", "model", "k", "w")):
        return None  # a hand-edited or foreign line: skipped, never an error in the hook
    if "path" in raw and not isinstance(raw["path"], str):
        return None
    return raw


def load(path: str | None, now: int, project: str | None = None) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The live, well-formed entries of ``project`` (None: every project's; newest last) and
    the corpus watermark ``{entries, newest_at, bytes}``."""
    entries: list[dict[str, Any]] = []
    size = 0
    if path:
        try:
            data = statefile.read(path, MAX_BYTES, tail=MAX_BYTES)
            size = os.stat(path).st_size
        except OSError:
            data = b""
        lines = data.split(b"\n")
        if size > MAX_BYTES and lines:
            lines = lines[1:]  # the first line of a tail read may be cut
        if project is not None:  # the newest MAX_ENTRIES of this project, not of the whole store
            tag = fastjson.dumps({"project": project})[1:-1].encode("utf-8")  # how the writer spells it
            lines = [line for line in lines if tag in line]
        for line in lines[-MAX_ENTRIES:]:
            if not line.strip():
                continue
            try:
                entry = _entry(fastjson.loads(line), now, project)
            except ValueError:
                continue  # a torn or foreign line: skipped, not fatal
            if entry is not None:
                entries.append(entry)
    mark = {"entries": len(entries), "newest_at": entries[-1]["at"] if entries else None, "bytes": size}
    return entries, mark


def append(path: str, entry: dict[str, Any]) -> bool:
    """Append one denial (one line, ``O_APPEND``, the file ``0600``); compact when the file has
    grown past the bound, or was readable by others (written before issue 23 §3)."""
    entry = {**entry, "v": VERSION}
    entry["reason"] = str(entry.get("reason", ""))[:MAX_REASON]
    line = (fastjson.dumps(entry) + "\n").encode("utf-8")
    try:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        fd = statefile.open_append(path, MODE)
        try:
            st = os.fstat(fd)
            legacy = bool(st.st_mode & 0o077)
            if legacy:
                os.fchmod(fd, MODE)
            written = os.write(fd, line)
            size = os.fstat(fd).st_size
        finally:
            os.close(fd)
    except OSError:
        return False
    if size > COMPACT_BYTES or legacy:
        compact(path, int(entry.get("at") or 0))
    return written == len(line)


def compact(path: str, now: int) -> None:
    """Rewrite the file with its live, well-formed entries only (atomic replace, ``0600``)."""
    from yupana.state import atomic  # only when compacting (a hook that reads loads no writer)

    entries, _ = load(path, now)
    data = "".join(fastjson.dumps(e) + "\n" for e in entries)
    atomic.write_quietly(path, data.encode("utf-8"), mode=MODE)
