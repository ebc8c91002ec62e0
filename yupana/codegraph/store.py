"""The on-disk symbol index: one SQLite database per repository root, in WAL mode.

Why SQLite (measured on this machine, see benchmarks/README.md): the hot path needs a few
indexed lookups (a file's symbols, the references to a handful of names), not the whole
graph. ``_sqlite3`` (the C module, without ``sqlite3.dbapi2`` and its datetime import) loads
in ~1 ms and answers each lookup in well under a millisecond on a 100k-line crate, where
loading a marshal snapshot of the same graph costs tens of milliseconds and ``diskcache``
~17 ms to import. WAL gives readers that never block and one writer at a time; every writer
uses ``BEGIN IMMEDIATE`` with a short busy timeout, so a hook that cannot get the write lock
in time carries on with what it parsed in memory.

Location: ``$YUPANA_CODEGRAPH_DIR/<hash of the repo root>/index.sqlite``, else
``<state dir>/codegraph/<hash>/index.sqlite``. Every row is derived from a file's bytes
and keyed by (crate, path) plus the content hash it was derived from, so a lost update only
costs a re-parse, never a wrong answer.
"""

from __future__ import annotations

import marshal
import os

from yupana.state import paths

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from types import ModuleType
    from yupana.codegraph.extract import FileFacts

SCHEMA_VERSION = 1


def _version() -> str:
    """Schema and extractor version together: stored facts are only valid for both."""
    from yupana.codegraph import extract

    return f"{SCHEMA_VERSION}.{extract.VERSION}"

SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta(k TEXT PRIMARY KEY, v TEXT) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS crates(id INTEGER PRIMARY KEY, dir TEXT UNIQUE NOT NULL, name TEXT,"
    " deps BLOB, manifest TEXT, dirs BLOB, complete INTEGER NOT NULL DEFAULT 0)",
    "CREATE TABLE IF NOT EXISTS files(id INTEGER PRIMARY KEY, crate INTEGER NOT NULL, rel TEXT NOT NULL,"
    " mtime_ns INTEGER, size INTEGER, hash TEXT, info BLOB, UNIQUE(crate, rel))",
    "CREATE TABLE IF NOT EXISTS syms(file INTEGER NOT NULL, idx INTEGER NOT NULL, name TEXT NOT NULL,"
    " kind TEXT NOT NULL, container TEXT, trait TEXT, parent INTEGER, start INTEGER, end INTEGER,"
    " line INTEGER, end_line INTEGER, arity INTEGER, PRIMARY KEY(file, idx)) WITHOUT ROWID",
    "CREATE INDEX IF NOT EXISTS syms_name ON syms(name)",
    "CREATE TABLE IF NOT EXISTS refs(name TEXT NOT NULL, qual TEXT, file INTEGER NOT NULL, sym INTEGER NOT NULL)",
    "CREATE INDEX IF NOT EXISTS refs_name ON refs(name)",
    "CREATE INDEX IF NOT EXISTS refs_file ON refs(file)",
    "CREATE TABLE IF NOT EXISTS names(name TEXT NOT NULL, kind TEXT NOT NULL, file INTEGER NOT NULL)",
    "CREATE INDEX IF NOT EXISTS names_name ON names(name)",
    "CREATE INDEX IF NOT EXISTS names_file ON names(file)",
)


class StoreError(Exception):
    """The index cannot be opened or written (locked past the budget, corrupt, no state dir)."""


def _sqlite() -> "ModuleType":
    try:
        import _sqlite3  # the C module alone: no datetime, no dbapi2 adapters

        if hasattr(_sqlite3, "connect"):
            return _sqlite3
    except ImportError:
        pass
    import sqlite3

    return sqlite3


def repo_key(root: str) -> str:
    """A short stable key for a repository root (its real path, hashed)."""
    try:
        from _blake2 import blake2b
    except ImportError:  # pragma: no cover - CPython always builds _blake2
        from hashlib import blake2b
    real = os.path.realpath(root)
    return blake2b(real.encode("utf-8", "surrogateescape"), digest_size=8).hexdigest()


def index_path(root: str) -> str:
    """Where the index of ``root`` lives (see the module docstring)."""
    base = os.environ.get("YUPANA_CODEGRAPH_DIR")
    if not base:
        state = paths.state_dir()
        if not state:
            raise StoreError("no state directory (set XDG_STATE_HOME, HOME or YUPANA_CODEGRAPH_DIR)")
        base = os.path.join(state, "codegraph")
    return os.path.join(base, repo_key(root), "index.sqlite")


def content_hash(data: bytes) -> str:
    """The content key of a file's bytes."""
    try:
        from _blake2 import blake2b
    except ImportError:  # pragma: no cover
        from hashlib import blake2b
    return blake2b(data, digest_size=16).hexdigest()


class Store:
    """An open index database. Reads anytime; writes through :meth:`write` transactions."""

    def __init__(self, path: str, busy_ms: int = 50) -> None:
        self.path = path
        mod = _sqlite()
        self.errors = (mod.OperationalError, mod.DatabaseError)
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            self.db = mod.connect(path, timeout=busy_ms / 1000.0, isolation_level=None, check_same_thread=False)
            self.db.execute(f"PRAGMA busy_timeout={int(busy_ms)}")
            self._ensure_schema()
            # Per connection: commits append to the WAL without an fsync each (durable at
            # checkpoints). A crash may lose the last commits: they are derived data.
            self.db.execute("PRAGMA synchronous=NORMAL")
        except (OSError, *self.errors) as exc:
            raise StoreError(f"codegraph index {path} cannot be opened ({exc})") from None

    def _ensure_schema(self) -> None:
        row = None
        try:
            row = self.db.execute("SELECT v FROM meta WHERE k='schema'").fetchone()
        except self.errors:
            pass
        version = _version()
        if row is not None and row[0] == version:
            return
        if self.db.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
            self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("BEGIN IMMEDIATE")
        try:
            if row is not None:  # another schema version: start over, it is all derived data
                for table in ("meta", "crates", "files", "syms", "refs", "names"):
                    self.db.execute(f"DROP TABLE IF EXISTS {table}")
            for stmt in SCHEMA:
                self.db.execute(stmt)
            self.db.execute("INSERT OR REPLACE INTO meta(k, v) VALUES('schema', ?)", (version,))
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise

    def set_busy(self, ms: int) -> None:
        """How long a write may wait for another writer."""
        self.db.execute(f"PRAGMA busy_timeout={max(1, int(ms))}")

    def close(self) -> None:
        """Close the connection (errors ignored)."""
        try:
            self.db.close()
        except self.errors:
            pass

    # ── crates and files ────────────────────────────────────────────────────────────

    def crate(self, rel_dir: str) -> tuple | None:
        """``(id, name, deps, manifest signature, dirs, complete)`` for a crate directory."""
        row = self.db.execute("SELECT id, name, deps, manifest, dirs, complete FROM crates WHERE dir=?",
                              (rel_dir,)).fetchone()
        if row is None:
            return None
        deps = marshal.loads(row[2]) if row[2] else {}
        dirs = marshal.loads(row[4]) if row[4] else {}
        return row[0], row[1], deps, row[3], dirs, bool(row[5])

    def files(self, crate_id: int) -> dict[str, tuple[int, int, int, str]]:
        """``{rel: (file id, mtime_ns, size, hash)}`` for every indexed file of a crate."""
        cur = self.db.execute("SELECT rel, id, mtime_ns, size, hash FROM files WHERE crate=?", (crate_id,))
        return {r[0]: (r[1], r[2], r[3], r[4]) for r in cur}

    def file_info(self, file_id: int) -> dict:
        """The per-file record (bound names, uses, mods, flags) the verifier reads."""
        row = self.db.execute("SELECT info FROM files WHERE id=?", (file_id,)).fetchone()
        return marshal.loads(row[0]) if row and row[0] else {}

    def file_rels(self, ids: "Iterable[int]") -> dict[int, str]:
        """``{file id: path}``."""
        ids = list(ids)
        out: dict[int, str] = {}
        for chunk in _chunks(ids):
            q = f"SELECT id, rel FROM files WHERE id IN ({','.join('?' * len(chunk))})"
            out.update(self.db.execute(q, chunk).fetchall())
        return out

    # ── symbols and references ──────────────────────────────────────────────────────

    def symbols_of(self, file_id: int) -> list[tuple]:
        """A file's symbols in index order: ``(idx, name, kind, container, trait, parent, start, end, line, end_line, arity)``."""
        return self.db.execute("SELECT idx, name, kind, container, trait, parent, start, end, line, end_line, arity"
                               " FROM syms WHERE file=? ORDER BY idx", (file_id,)).fetchall()

    def symbols_named(self, names: "Iterable[str]", crate_id: int) -> list[tuple]:
        """``(file, idx, name, kind, container, trait, arity, rel, line)`` of a crate's symbols with these names."""
        out: list[tuple] = []
        for chunk in _chunks(list(names)):
            q = ("SELECT s.file, s.idx, s.name, s.kind, s.container, s.trait, s.arity, f.rel, s.line FROM syms s INDEXED BY syms_name"
                 f" JOIN files f ON f.id=s.file WHERE f.crate=? AND s.name IN ({','.join('?' * len(chunk))})")
            out += self.db.execute(q, [crate_id, *chunk]).fetchall()
        return out

    def symbol_rows(self, keys: "Iterable[tuple[int, int]]") -> dict[tuple[int, int], tuple]:
        """``{(file, idx): (name, kind, container, trait)}`` for (file, idx) keys."""
        out: dict[tuple[int, int], tuple] = {}
        by_file: dict[int, list[int]] = {}
        for f, i in keys:
            by_file.setdefault(f, []).append(i)
        for f, idxs in by_file.items():
            for chunk in _chunks(idxs):
                q = f"SELECT idx, name, kind, container, trait FROM syms WHERE file=? AND idx IN ({','.join('?' * len(chunk))})"
                for row in self.db.execute(q, [f, *chunk]):
                    out[(f, row[0])] = row[1:]
        return out

    def refs_to(self, names: "Iterable[str]", crate_id: int) -> list[tuple]:
        """``(name, qual, file, sym)`` of references by name within a crate."""
        out: list[tuple] = []
        for chunk in _chunks(list(names)):
            q = ("SELECT r.name, r.qual, r.file, r.sym FROM refs r INDEXED BY refs_name JOIN files f ON f.id=r.file"
                 f" WHERE f.crate=? AND r.name IN ({','.join('?' * len(chunk))})")
            out += self.db.execute(q, [crate_id, *chunk]).fetchall()
        return out

    def referrers(self, names: "Iterable[str]", crate_id: int, quals: "set[str] | None" = None,
                  dotted: "set[str] | None" = None, members_only: bool = False) -> list[tuple]:
        """``(name, qual, file, sym, referrer name, kind, container, trait)`` of references to
        these names in a crate, with the referring symbol (one query per 500 names).

        A prefilter in SQL (callers still match exactly): ``quals`` — qualifiers worth
        returning besides none, ``!`` and module-like ones (lowercase, crate/self/super/::);
        ``dotted`` — the names whose ``.name`` method calls are wanted; ``members_only`` —
        only references qualified by one of ``quals`` or such method calls.
        """
        out: list[tuple] = []
        extra, args = "", []
        if quals is not None:
            qs = sorted(quals)
            ds = sorted(dotted or ())
            loose = ("" if members_only else "r.qual IS NULL OR r.qual IN ('!', 'crate', 'self', 'super', '::')"
                     " OR substr(r.qual, 1, 1) BETWEEN 'a' AND 'z' OR substr(r.qual, 1, 1) = '_' OR ")
            extra = (f" AND ({loose}r.qual IN ({','.join('?' * len(qs)) or 'NULL'})"
                     f" OR (r.qual = '.' AND r.name IN ({','.join('?' * len(ds)) or 'NULL'})))")
            args = [*qs, *ds]
        for chunk in _chunks(list(names)):
            q = ("SELECT r.name, r.qual, r.file, r.sym, s.name, s.kind, s.container, s.trait FROM refs r INDEXED BY refs_name"
                 " JOIN files f ON f.id=r.file JOIN syms s ON s.file=r.file AND s.idx=r.sym"
                 f" WHERE f.crate=? AND r.name IN ({','.join('?' * len(chunk))}){extra}")
            out += self.db.execute(q, [crate_id, *chunk, *args]).fetchall()
        return out

    def method_owners(self, names: "Iterable[str]", crate_id: int) -> dict[str, int]:
        """``{method name: how many distinct types or traits define a method of that name}``."""
        out: dict[str, int] = {}
        for chunk in _chunks(list(names)):
            q = ("SELECT s.name, COUNT(DISTINCT s.container) FROM syms s INDEXED BY syms_name JOIN files f ON f.id=s.file"
                 f" WHERE f.crate=? AND s.kind='method' AND s.name IN ({','.join('?' * len(chunk))}) GROUP BY s.name")
            out.update(self.db.execute(q, [crate_id, *chunk]).fetchall())
        return out

    def names_known(self, names: "Iterable[str]", crate_id: int) -> dict[str, set[str]]:
        """``{name: {kinds}}`` for names a crate defines (symbol kinds), imports (``use`` from
        itself, ``usex`` from elsewhere) or a macro may define (``maybe``)."""
        out: dict[str, set[str]] = {}
        names = list(names)
        for chunk in _chunks(names):
            marks = ",".join("?" * len(chunk))
            q = (f"SELECT s.name, s.kind FROM syms s INDEXED BY syms_name JOIN files f ON f.id=s.file"
                 f" WHERE f.crate=? AND s.name IN ({marks}) UNION SELECT n.name, n.kind FROM names n INDEXED BY names_name"
                 f" JOIN files f ON f.id=n.file WHERE f.crate=? AND n.name IN ({marks})")
            for name, kind in self.db.execute(q, [crate_id, *chunk, crate_id, *chunk]):
                out.setdefault(name, set()).add(kind)
        return out

    def crate_flags(self, crate_id: int) -> int:
        """OR of every file's flags in the crate (include!, #[macro_use] extern crate…)."""
        flags = 0
        for (info,) in self.db.execute("SELECT info FROM files WHERE crate=?", (crate_id,)):
            if info:
                flags |= marshal.loads(info).get("flags", 0)
        return flags

    # ── writes ──────────────────────────────────────────────────────────────────────

    def begin(self) -> None:
        """Start a write transaction (raises StoreError when the lock is not free in time)."""
        try:
            self.db.execute("BEGIN IMMEDIATE")
        except self.errors as exc:
            raise StoreError(f"codegraph index is busy ({exc})") from None

    def commit(self) -> None:
        """Commit the write transaction (StoreError when it fails; rolled back then)."""
        try:
            self.db.execute("COMMIT")
        except self.errors as exc:
            self.rollback()
            raise StoreError(f"codegraph index write failed ({exc})") from None

    def rollback(self) -> None:
        """Abandon the write transaction, if any."""
        try:
            self.db.execute("ROLLBACK")
        except self.errors:
            pass

    def upsert_crate(self, rel_dir: str, name: str | None, deps: dict, manifest: str | None,
                     dirs: dict, complete: bool) -> int:
        """Inside a transaction: record a crate; returns its id."""
        self.db.execute(
            "INSERT INTO crates(dir, name, deps, manifest, dirs, complete) VALUES(?,?,?,?,?,?)"
            " ON CONFLICT(dir) DO UPDATE SET name=excluded.name, deps=excluded.deps,"
            " manifest=excluded.manifest, dirs=excluded.dirs, complete=excluded.complete",
            (rel_dir, name, marshal.dumps(deps), manifest, marshal.dumps(dirs), int(complete)))
        return self.db.execute("SELECT id FROM crates WHERE dir=?", (rel_dir,)).fetchone()[0]

    def put_file(self, crate_id: int, rel: str, mtime_ns: int, size: int, digest: str, facts: "FileFacts") -> int:
        """Inside a transaction: replace everything known about one file; returns its id."""
        db = self.db
        row = db.execute("SELECT id FROM files WHERE crate=? AND rel=?", (crate_id, rel)).fetchone()
        info = marshal.dumps(facts.info())
        if row is None:
            cur = db.execute("INSERT INTO files(crate, rel, mtime_ns, size, hash, info) VALUES(?,?,?,?,?,?)",
                             (crate_id, rel, mtime_ns, size, digest, info))
            fid = cur.lastrowid
        else:
            fid = row[0]
            db.execute("UPDATE files SET mtime_ns=?, size=?, hash=?, info=? WHERE id=?",
                       (mtime_ns, size, digest, info, fid))
            for table in ("syms", "refs", "names"):
                db.execute(f"DELETE FROM {table} WHERE file=?", (fid,))
        db.executemany("INSERT INTO syms(file, idx, name, kind, container, trait, parent, start, end, line, end_line, arity)"
                       " VALUES(?,?,?,?,?,?,?,?,?,?,?,?)", [(fid, i, *s) for i, s in enumerate(facts.syms)])
        db.executemany("INSERT INTO refs(name, qual, file, sym) VALUES(?,?,?,?)",
                       [(n, q, fid, s) for n, q, s in facts.refs if s >= 0])
        names = [(n, "maybe", fid) for n in facts.maybe]
        names += [(bound, use_kind(path), fid) for path, bound, _ in facts.uses if bound != "*"]
        names += [(flag, "flag", fid) for flag in file_flags(facts)]
        db.executemany("INSERT INTO names(name, kind, file) VALUES(?,?,?)", names)
        return fid

    def touch_file(self, file_id: int, mtime_ns: int, size: int) -> None:
        """Inside a transaction: same content, new stat (a touch or a checkout)."""
        self.db.execute("UPDATE files SET mtime_ns=?, size=? WHERE id=?", (mtime_ns, size, file_id))

    def drop_file(self, file_id: int) -> None:
        """Inside a transaction: forget a file that no longer exists."""
        for table in ("syms", "refs", "names"):
            self.db.execute(f"DELETE FROM {table} WHERE file=?", (file_id,))
        self.db.execute("DELETE FROM files WHERE id=?", (file_id,))


def use_kind(path: str) -> str:
    """``use`` for an import from this crate (crate::, self::, super::), ``usex`` otherwise
    (another crate's item, or a path the index cannot tell apart from one)."""
    return "use" if path.split("::", 1)[0] in ("crate", "self", "super") else "usex"


def file_flags(facts: "FileFacts") -> list[str]:
    """Crate-wide markers a file contributes (looked up like names: ``#include`` …)."""
    from yupana.codegraph import extract

    out = []
    if facts.flags & extract.FLAG_INCLUDE:
        out.append("#include")
    if facts.flags & extract.FLAG_MACRO_USE:
        out.append("#macro_use")
    for path, bound, _ in facts.uses:
        if bound == "*" and path.split("::", 1)[0] not in ("crate", "self", "super"):
            out.append("#glob")
            break
    return out


def _chunks(items: list, size: int = 500) -> "Iterator[list]":
    for i in range(0, len(items), size):
        yield items[i:i + size]
