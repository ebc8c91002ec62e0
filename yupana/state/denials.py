"""The denied-edit corpus: the verdict spool's denials kept for the recurrence advisory.

One JSON object per line (``at``, ``rule``, ``reason``, ``model``, the packed vector ``k``/``w``, and ``path``
only when ``[yupana.metrics] record_paths`` allows it) in ``denials.jsonl`` in the
store's state directory. Safe under concurrent hooks: a writer appends one whole line
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


def load(path: str | None, now: int) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The live entries (newest last) and the corpus watermark ``{entries, newest_at, bytes}``."""
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
        for line in lines[-MAX_ENTRIES:]:
            if not line.strip():
                continue
            try:
                entry = fastjson.loads(line)
            except ValueError:
                continue  # a torn or foreign line: skipped, not fatal
            if isinstance(entry, dict) and isinstance(entry.get("at"), int) and now - entry["at"] <= MAX_AGE_SECS:
                entries.append(entry)
    mark = {"entries": len(entries), "newest_at": entries[-1]["at"] if entries else None, "bytes": size}
    return entries, mark


def append(path: str, entry: dict[str, Any]) -> bool:
    """Append one denial (one line, ``O_APPEND``); compact when the file has grown past the bound."""
    entry = dict(entry)
    entry["reason"] = str(entry.get("reason", ""))[:MAX_REASON]
    line = (fastjson.dumps(entry) + "\n").encode("utf-8")
    try:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        fd = statefile.open_append(path)
        try:
            written = os.write(fd, line)
            size = os.fstat(fd).st_size
        finally:
            os.close(fd)
    except OSError:
        return False
    if size > COMPACT_BYTES:
        compact(path, int(entry.get("at") or 0))
    return written == len(line)


def compact(path: str, now: int) -> None:
    """Rewrite the file with its live entries only (atomic replace)."""
    from yupana.state import atomic  # only when compacting (a hook that reads loads no writer)

    entries, _ = load(path, now)
    data = "".join(fastjson.dumps(e) + "\n" for e in entries)
    atomic.write_quietly(path, data.encode("utf-8"))
