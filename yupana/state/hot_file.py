"""The hot twin's container: named sections a hook reads one at a time. Standard library only.

``projection.hot`` is one file (replaced by rename, like every state file) laid out as::

    b"YUPANAHT"  u32 header length (little-endian)  header (marshal)  section bytes …

The header is a small dict: the format, the byte order of the integer arrays inside, what the
file was derived from (``key``, ``json_sha1``), the cache's bookkeeping (``meta``: version,
endpoint, written_at, counts, …) and ``sections``: name → (offset from the end of the
header, length). A reader maps the file (:func:`yupana.state.statefile.map_file`) and slices
only the sections it asks for, so a hook that needs the memory policies never reads the
50,000 text rules stored beside them; what it never touches costs nothing, at exit included.
"""

from __future__ import annotations

import marshal
import sys

MAGIC = b"YUPANAHT"
PREFIX = len(MAGIC) + 4
#: Bumped whenever the layout changes (a twin of another format is derived again).
HOT_FORMAT = 4

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from typing import Any


class Corrupt(ValueError):
    """Not a hot twin this code can read (another format, truncated, damaged)."""


def build(header: dict[str, Any], sections: dict[str, bytes]) -> bytes:
    """The file's bytes: ``header`` plus the section table, then every section."""
    table = {}
    at = 0
    for name, data in sections.items():
        table[name] = (at, len(data))
        at += len(data)
    head = marshal.dumps(dict(header, byteorder=sys.byteorder, sections=table))
    return b"".join([MAGIC, len(head).to_bytes(4, "little"), head, *sections.values()])


class HotFile:
    """A parsed container over ``buf`` (an mmap or bytes): the header, and sections on demand."""

    __slots__ = ("buf", "header", "base", "_table")

    def __init__(self, buf: Any) -> None:
        if len(buf) < PREFIX or buf[:len(MAGIC)] != MAGIC:
            raise Corrupt("not a hot twin (no YUPANAHT prefix)")
        size = int.from_bytes(buf[len(MAGIC):PREFIX], "little")
        try:
            header = marshal.loads(buf[PREFIX:PREFIX + size])
        except (EOFError, ValueError, TypeError) as exc:
            raise Corrupt(f"unreadable header ({exc})") from None
        if not isinstance(header, dict) or not isinstance(header.get("sections"), dict):
            raise Corrupt("header without a section table")
        if header.get("byteorder") != sys.byteorder:
            raise Corrupt(f"written on a {header.get('byteorder')}-endian machine")
        self.buf = buf
        self.header = header
        self.base = PREFIX + size
        self._table: dict[str, tuple[int, int]] = header["sections"]
        end = max((off + n for off, n in self._table.values()), default=0)
        if self.base + end > len(buf):
            raise Corrupt("truncated: a section ends past the end of the file")

    def has(self, name: str) -> bool:
        return name in self._table

    def raw(self, name: str) -> bytes:
        """The bytes of section ``name``; KeyError when the file has none by that name."""
        off, n = self._table[name]
        start = self.base + off
        return self.buf[start:start + n]

    def view(self, name: str) -> memoryview:
        """Section ``name`` as a memoryview of the file itself (no copy: cast it, slice it)."""
        off, n = self._table[name]
        start = self.base + off
        return memoryview(self.buf)[start:start + n]

    def load(self, name: str) -> Any:
        """Section ``name`` unmarshalled; :class:`Corrupt` when it does not unmarshal."""
        try:
            return marshal.loads(self.raw(name))
        except (EOFError, ValueError, TypeError) as exc:
            raise Corrupt(f"section {name!r} does not unmarshal ({exc})") from None
