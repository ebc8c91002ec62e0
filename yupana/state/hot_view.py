"""What a hook reads of the projection cache: the hot twin, one byte range at a time. Stdlib only.

The container. ``projection.hot`` is one file (replaced by rename, like every state file)::

    b"YUPANAHT"  u32 header length  u32 header CRC-32 (little-endian)  header (marshal)
    section bytes …  checksum arrays …

The header is a small dict: the format, the byte order of the integer arrays inside, what the
file was derived from (``key``, ``json_sha1``), the cache's bookkeeping (``meta``: version,
endpoint, written_at, counts, …), ``sections``: name → (offset from the end of the
header, length), and ``checks``: name → (offset, blocks) of that section's checksum array —
one native ``uint32`` CRC-32 per :data:`BLOCK` bytes of the section, seeded with the header's
``json_sha1`` and the section's name (:func:`seed`). Every byte a reader takes from a section
is in a block whose checksum it compared first (:meth:`HotFile.span`), so a flipped bit, a
truncated copy or a section spliced in from another catalogue's twin is :class:`Corrupt`,
never a different rule set; a damaged header is Corrupt at open. :func:`open_file` opens it once (:func:`yupana.state.statefile.open_regular`)
and :class:`HotFile` ``pread``\\ s only the byte ranges asked for, so a hook that needs the
memory policies never reads the 50,000 text rules stored beside them; what it never touches
costs nothing, at exit included (``pread`` rather than ``mmap``: that module alone costs a
hook ~0.25 ms).

The view. :class:`HotCache` answers ``get(key)`` like the cache's dict (docs/cache-format.md):
the bookkeeping fields from the header, a plane from its own section — unmarshalled the first
time it is asked for, never before. Text rules are :class:`TextRules`: each rule is stored on
its own, and :meth:`TextRules.candidates` returns the rules whose prefilters admit a text by
asking the literal index (:mod:`yupana.regex.rule_index`) which ones can, so a hook with
50,000 rules in the catalogue reads the handful that share a trigram with the edit. The
layout is written by :mod:`yupana.state.hot_derive`.
"""


from __future__ import annotations

import marshal
import os
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from typing import Any

MAGIC = b"YUPANAHT"
PREFIX = len(MAGIC) + 8  # the magic, the header's length and its CRC-32
HEAD_READ = 1 << 16  # the first read takes the header whole in the common case
#: Bumped whenever the layout changes (a twin of another format is derived again).
HOT_FORMAT = 6
#: Bytes of a section under one checksum: a hook reading one rule reads (and checks) ~4 KiB.
BLOCK = 4096


class Corrupt(ValueError):
    """Not a hot twin this code can read (another format, truncated, damaged)."""


class HotFile:
    """A parsed container: the header, and byte ranges on demand — from an open descriptor
    (``fd``, with the file's ``size``) or from the bytes themselves (``data``). Every range
    handed out was checked against its blocks' checksums (:class:`Corrupt` otherwise)."""

    __slots__ = ("fd", "data", "header", "base", "_table", "_checks", "_crcs", "_ok", "_crc32")

    def __init__(self, *, fd: int | None = None, size: int = 0, data: bytes | None = None) -> None:
        self.fd = fd  # owned: closed by close(), on a failure here, or when the file is freed
        self.data = data
        if data is not None:
            size = len(data)
        try:
            self._parse(size)
        except BaseException:
            self.close()
            raise

    def _parse(self, size: int) -> None:
        first = self.read(0, min(size, HEAD_READ))
        if len(first) < PREFIX or first[:len(MAGIC)] != MAGIC:
            raise Corrupt("not a hot twin (no YUPANAHT prefix)")
        length = int.from_bytes(first[len(MAGIC):len(MAGIC) + 4], "little")
        raw = first[PREFIX:PREFIX + length] if PREFIX + length <= len(first) else self.read(PREFIX, length)
        from binascii import crc32  # a C function in a small module (zlib's is the same, dearer to import)

        self._crc32 = crc32
        if crc32(raw) != int.from_bytes(first[len(MAGIC) + 4:PREFIX], "little"):
            raise Corrupt("the header fails its checksum (damaged, or not written by this yupana)")
        try:
            header = marshal.loads(raw)
        except (EOFError, ValueError, TypeError) as exc:
            raise Corrupt(f"unreadable header ({exc})") from None
        if not isinstance(header, dict) or not isinstance(header.get("sections"), dict) \
                or not isinstance(header.get("checks"), dict):
            raise Corrupt("header without a section table")
        if header.get("byteorder") != sys.byteorder:
            raise Corrupt(f"written on a {header.get('byteorder')}-endian machine")
        self.header = header
        self.base = PREFIX + length
        self._table: dict[str, tuple[int, int]] = header["sections"]
        self._checks: dict[str, tuple[int, int]] = header["checks"]
        self._crcs: dict[str, Any] = {}
        self._ok: set[tuple[str, int]] = set()
        end = max((off + n for off, n in (*self._table.values(), *self._checks.values())), default=0)
        if self.base + end > size:
            raise Corrupt("truncated: a section ends past the end of the file")

    def close(self) -> None:
        if self.fd is not None:
            fd, self.fd = self.fd, None
            self.data = b""
            os.close(fd)

    def __del__(self) -> None:
        try:
            self.close()
        except OSError:
            pass

    def read(self, offset: int, n: int) -> bytes:
        if self.data is not None:
            return self.data[offset:offset + n]
        assert self.fd is not None
        got = os.pread(self.fd, n, offset)
        if len(got) != n:
            raise Corrupt(f"short read at {offset} ({len(got)} of {n} bytes)")
        return got

    def has(self, name: str) -> bool:
        return name in self._table

    def span(self, name: str, start: int, end: int, checked: bool = True) -> bytes:
        """Bytes ``start:end`` of section ``name``, every block they lie in checked first (not
        when ``checked`` is False: the caller checks what it uses, :meth:`check_at`); KeyError
        when the file has none by that name, :class:`Corrupt` when a block fails."""
        off, n = self._table[name]
        end = min(end, n)
        if start >= end:
            return b""
        if not checked:
            return self.read(self.base + off + start, end - start)
        first, last = start // BLOCK, (end - 1) // BLOCK
        if all((name, b) in self._ok for b in range(first, last + 1)):
            return self.read(self.base + off + start, end - start)
        at = first * BLOCK
        data = self.read(self.base + off + at, min((last + 1) * BLOCK, n) - at)
        self._check(name, first, data)
        return data[start - at:end - at]

    def _check(self, name: str, first: int, data: bytes) -> None:
        """Compare ``data`` (whole blocks of ``name`` from block ``first``) with their checksums."""
        found = self._crcs.get(name)
        if found is None:
            if name not in self._checks:
                raise Corrupt(f"section {name!r} has no checksums")
            off, count = self._checks[name]
            if count != -(-self._table[name][1] // BLOCK):
                raise Corrupt(f"section {name!r} has {count} checksums for {self._table[name][1]} bytes")
            found = self._crcs[name] = (memoryview(self.read(self.base + off, 4 * count)).cast("I"),
                                        seed(self.header, name))
        crcs, start = found
        crc32, ok = self._crc32, self._ok
        view = memoryview(data)
        for i in range(0, len(data), BLOCK):
            block = first + i // BLOCK
            if crc32(view[i:i + BLOCK], start) != crcs[block]:
                raise Corrupt(f"section {name!r} fails its checksum at block {block} (the twin is damaged, or "
                              "was spliced from another catalogue's)")
            ok.add((name, block))

    def check_at(self, name: str, offset: int, whole: bytes) -> None:
        """Check the block of section ``name`` holding byte ``offset``, in ``whole`` (the section
        as read unchecked): the index table is read whole (1 MB at 50,000 rules) and a lookup
        checks only the blocks its probes land in."""
        block = offset // BLOCK
        if (name, block) not in self._ok:
            self._check(name, block, whole[block * BLOCK:(block + 1) * BLOCK])

    def raw(self, name: str) -> bytes:
        """The whole of section ``name``."""
        return self.span(name, 0, self._table[name][1])

    def load(self, name: str) -> Any:
        """Section ``name`` unmarshalled; :class:`Corrupt` when it does not unmarshal."""
        try:
            return marshal.loads(self.raw(name))
        except (EOFError, ValueError, TypeError) as exc:
            if isinstance(exc, Corrupt):
                raise
            raise Corrupt(f"section {name!r} does not unmarshal ({exc})") from None

    def verify(self) -> None:
        """Check every section whole (``yupana status``, a refresh copying sections)."""
        for name in self._table:
            self.raw(name)


def seed(header: dict[str, Any], name: str) -> int:
    """The CRC-32 a section's block checksums start from: the JSON the twin was derived from
    (``json_sha1``) and the section's name, so a section is good only in its own place in its
    own catalogue's twin."""
    from binascii import crc32

    return crc32(f"{header.get('json_sha1')}\0{name}".encode("utf-8", "surrogatepass"))


def open_file(path: str, limit: int) -> HotFile:
    """The hot twin at ``path`` (its descriptor stays open for the process: a hook is short);
    raises OSError (absent, refused) or :class:`Corrupt`."""
    from yupana.state import statefile

    fd = statefile.open_regular(path, limit)
    try:
        size = os.fstat(fd).st_size
    except OSError:
        os.close(fd)
        raise
    return HotFile(fd=fd, size=size)


_MISSING = object()
PLANE = "plane:"  # section name prefix of every plane but the text rules
RULES, RULE_OFFSETS = "text_rules:records", "text_rules:offsets"
INDEX = "text_rules:index:"


class TextRules:
    """The text rules of a hot twin: counted from the header, read one record at a time."""

    __slots__ = ("file", "count", "index", "_rules")

    def __init__(self, file: HotFile) -> None:
        from yupana.regex.rule_index import Index  # a hook that reads no text rule loads no index

        info = file.header["text_rules"]
        self.file = file
        self.count: int = info["count"]
        self.index = Index(info["index"], lambda name, start, end, checked=True: file.span(INDEX + name, start, end,
                                                                                        checked),
                           lambda name, offset, whole: file.check_at(INDEX + name, offset, whole), BLOCK)
        self._rules: dict[int, dict[str, Any]] = {}

    def __len__(self) -> int:
        return self.count

    def __bool__(self) -> bool:
        return self.count > 0

    def __getitem__(self, i: int) -> dict[str, Any]:
        if not 0 <= i < self.count:
            raise IndexError(i)
        return self.rule(i)

    def __iter__(self) -> Any:
        return (self.rule(i) for i in range(self.count))

    def rule(self, i: int) -> dict[str, Any]:
        """Rule ``i`` (the cache's order), with its derived ``_prefilter`` and ``_run``."""
        found = self._rules.get(i)
        if found is None:
            found = self._rules[i] = self._load(i)
        return found

    def each(self) -> Any:
        """Every rule in order, none kept (deriving a twin reads 50,000 of them once)."""
        return (self._rules.get(i) or self._load(i) for i in range(self.count))

    def _load(self, i: int) -> dict[str, Any]:
        bounds = memoryview(self.file.span(RULE_OFFSETS, 4 * i, 4 * i + 8)).cast("I")
        if len(bounds) != 2:
            raise Corrupt(f"text rule {i} has no offsets")
        record = self.file.span(RULES, bounds[0], bounds[1])  # Corrupt as it is, when it fails its checksum
        try:
            found: dict[str, Any] = marshal.loads(record)
        except (EOFError, ValueError, TypeError, IndexError) as exc:
            raise Corrupt(f"text rule {i} does not unmarshal ({exc})") from None
        return found

    def all(self) -> list[dict[str, Any]]:
        """Every rule, in order (``explain``, tests; a hook uses :meth:`candidates`)."""
        return [self.rule(i) for i in range(self.count)]

    def candidates(self, text: str, deadline_at: float | None = None) -> tuple[list[dict[str, Any]], int]:
        """(the rules whose prefilters admit ``text``, in order; how many were not looked at
        because ``deadline_at`` passed) — :func:`yupana.evaluate.text_rules.candidates`."""
        from yupana.regex.prefilter import Admission

        admission = Admission(text, deadline_at)
        ids = self.index.candidates(text, admission.folded, deadline_at)
        if ids is None:
            return [], self.count
        return admission.select((self.rule(i) for i in sorted(ids)), len(ids))


class HotCache:
    """The cache a hook is served: ``get``/``[]`` as on the JSON's dict, sections on demand."""

    __slots__ = ("file", "meta", "_text_rules", "_planes")

    def __init__(self, file: HotFile) -> None:
        self.file = file
        self.meta: dict[str, Any] = file.header["meta"]
        self._text_rules: TextRules | None = None
        self._planes: dict[str, Any] = {}

    @property
    def text_rules(self) -> TextRules:
        if self._text_rules is None:
            self._text_rules = TextRules(self.file)
        return self._text_rules

    def get(self, key: str, default: Any = None) -> Any:
        if key in self.meta:
            return self.meta[key]
        if key == "text_rules":
            return self.text_rules
        if key in self._planes:
            return self._planes[key]
        name = PLANE + key
        if not self.file.has(name):
            return default
        value = self._planes[key] = self.file.load(name)
        return value

    def __getitem__(self, key: str) -> Any:
        value = self.get(key, _MISSING)
        if value is _MISSING:
            raise KeyError(key)
        return value

    def __contains__(self, key: str) -> bool:
        return self.get(key, _MISSING) is not _MISSING

    def policy_languages(self) -> tuple[str, ...]:
        """The languages some pre-edit structural policy is for (no section read)."""
        return tuple(self.file.header.get("policy_languages") or ())
