"""The persistent, incremental symbol index of a crate, made fresh within a deadline.

:func:`open_crate` finds the crate of a file, opens the repository's index (see
:mod:`yupana.codegraph.store`) and brings it up to date: directories whose mtime changed are
listed again, every known file is ``stat``-ed, files whose (mtime, size) changed are read and
hashed, and only files whose content hash changed are parsed again — the edited file first,
then the rest, for as long as the deadline allows. What was parsed is written in one short
``BEGIN IMMEDIATE`` transaction; when another process holds the write lock past the budget
the parsed facts stay in memory (an *overlay*) and answers use them all the same.

When the crate cannot be brought up to date in time (first use of a repository, a branch
switch) the index says so (:attr:`CrateIndex.complete` is False, :attr:`pending` counts the
files it could not look at); :mod:`yupana.codegraph.background` then builds it detached, so
the next edit finds a warm index. Facts are all tagged tree-sitter tier; nothing here
resolves a name to a definition.
"""

from __future__ import annotations

import os
import time

from yupana.codegraph import crate as crates
from yupana.codegraph import store as stores

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from collections.abc import Iterable

    from tree_sitter import Tree

    from yupana.codegraph.extract import FileFacts

TIER = "tree-sitter"
DEFAULT_RATE = 1.2e6  # bytes/s parsed + extracted, until this process has measured its own
# File system timestamps are coarse (a few ms): a file or directory changed within this long
# of being looked at may change again with the same mtime, so it is recorded as "look again".
RACY_NS = 100_000_000
_open: dict[tuple[str, str], "CrateIndex"] = {}


class CrateIndex:
    """One crate of a repository's index, as fresh as the deadline allowed."""

    def __init__(self, repo: str, crate: crates.Crate, store: stores.Store) -> None:
        self.repo = repo
        self.crate = crate
        self.store = store
        self.crate_id = 0
        self.files: dict[str, tuple[int, int, int, str]] = {}  # rel -> (id, mtime_ns, size, hash)
        self.overlay: dict[str, tuple[int, FileFacts]] = {}  # rel -> (id, FileFacts) not written to disk
        self.sources: dict[str, tuple[bytes, Tree]] = {}  # rel -> (bytes, tree) parsed in this process
        self.pending: list[str] = []  # stale or new files not parsed (deadline)
        self.complete = False
        self.walked_all = False
        self.notes: list[str] = []

    # ── reading ─────────────────────────────────────────────────────────────────────

    def nearly_complete(self) -> bool:
        """Up to date except for a few files whose older facts are still indexed (the crate
        walk was whole, no file is missing, at most max(3, 2%) of the files are behind)."""
        if self.complete:
            return True
        if not self.walked_all or any(rel not in self.files for rel in self.pending):
            return False
        return len(self.pending) <= max(3, len(self.files) // 50)

    def rel_of(self, path: str) -> str | None:
        """``path`` relative to the crate directory (None when outside it)."""
        d = self.crate.dir
        path = os.path.abspath(path)
        return path[len(d) + 1:] if path.startswith(d + os.sep) else None

    def file_id(self, rel: str) -> int | None:
        """The store's id of a file (negative: only in memory), None when not indexed."""
        if rel in self.overlay:
            return self.overlay[rel][0]
        row = self.files.get(rel)
        return row[0] if row else None

    def is_fresh(self, rel: str) -> bool:
        """Whether the file is indexed at its current content."""
        return (rel in self.files or rel in self.overlay) and rel not in self.pending

    def symbols_of(self, rel: str) -> list[tuple]:
        """``(idx, name, kind, container, trait, parent, start, end, line, end_line, arity)`` of a file."""
        if rel in self.overlay:
            return [(i, *s) for i, s in enumerate(self.overlay[rel][1].syms)]
        fid = self.file_id(rel)
        return self.store.symbols_of(fid) if fid is not None else []

    def info(self, rel: str) -> dict:
        """The file's per-file record (bound names, uses, mods, flags, externs)."""
        if rel in self.overlay:
            return self.overlay[rel][1].info()
        fid = self.file_id(rel)
        return self.store.file_info(fid) if fid is not None else {}

    def _overlay_ids(self) -> set[int]:
        return {fid for fid, _ in self.overlay.values()}

    def refs_to(self, names: "Iterable[str]") -> list[tuple]:
        """``(name, qual, file id, symbol idx)`` of every reference to these names in the crate."""
        names = set(names)
        shadow = self._overlay_ids()
        rows = [r for r in self.store.refs_to(names, self.crate_id) if r[2] not in shadow]
        for fid, facts in self.overlay.values():
            rows += [(n, q, fid, s) for n, q, s in facts.refs if n in names and s >= 0]
        return rows

    def referrers(self, names: "Iterable[str]", quals: "set[str] | None" = None, dotted: "set[str] | None" = None,
                  *, members_only: bool = False) -> list[tuple]:
        """``(name, qual, file id, idx, referrer name, kind, container, trait)`` for references
        to these names in the crate (``quals``/``dotted``/``members_only``: see Store.referrers)."""
        names = set(names)
        if not names:
            return []
        shadow = self._overlay_ids()
        rows = [r for r in self.store.referrers(names, self.crate_id, quals, dotted, members_only)
                if r[2] not in shadow]
        for fid, facts in self.overlay.values():
            for n, q, i in facts.refs:
                if n in names and i >= 0:
                    s = facts.syms[i]
                    rows.append((n, q, fid, i, s[0], s[1], s[2], s[3]))
        return rows

    def method_owners(self, names: "Iterable[str]") -> dict[str, int]:
        """``{name: number of types/traits defining a method of that name}`` in the crate."""
        names = set(names)
        counts = self.store.method_owners(names, self.crate_id)
        for _, facts in self.overlay.values():  # (approximate while a file is only in memory)
            for s in facts.syms:
                if s[1] == "method" and s[0] in names:
                    counts[s[0]] = counts.get(s[0], 0) + 1
        return counts

    def symbol_rows(self, keys: "Iterable[tuple[int, int]]") -> dict[tuple[int, int], tuple]:
        """``{(file id, idx): (name, kind, container, trait)}``."""
        keys = set(keys)
        shadow = self._overlay_ids()
        out = self.store.symbol_rows(k for k in keys if k[0] not in shadow)
        for fid, facts in self.overlay.values():
            for k in keys:
                if k[0] == fid and 0 <= k[1] < len(facts.syms):
                    s = facts.syms[k[1]]
                    out[k] = (s[0], s[1], s[2], s[3])
        return out

    def symbols_named(self, names: "Iterable[str]") -> list[tuple]:
        """``(file id, idx, name, kind, container, trait, arity, rel, line)`` across the crate."""
        names = set(names)
        shadow = self._overlay_ids()
        rows = [r for r in self.store.symbols_named(names, self.crate_id) if r[0] not in shadow]
        for rel, (fid, facts) in self.overlay.items():
            rows += [(fid, i, s[0], s[1], s[2], s[3], s[9], rel, s[7]) for i, s in enumerate(facts.syms) if s[0] in names]
        return rows

    def names_known(self, names: "Iterable[str]") -> dict[str, set[str]]:
        """``{name: kinds}`` the crate defines, imports or may define through a macro."""
        names = set(names)
        known = self.store.names_known(names, self.crate_id) if names else {}
        for _, facts in self.overlay.values():
            for s in facts.syms:
                if s[0] in names:
                    known.setdefault(s[0], set()).add(s[1])
            for n in facts.maybe & names:
                known.setdefault(n, set()).add("maybe")
            for path, bound, _ in facts.uses:
                if bound in names:
                    known.setdefault(bound, set()).add(stores.use_kind(path))
            for flag in stores.file_flags(facts):
                if flag in names:
                    known.setdefault(flag, set()).add("flag")
        return known

    def rel_paths(self, ids: "Iterable[int]") -> dict[int, str]:
        """``{file id: crate-relative path}``."""
        out = {fid: rel for rel, (fid, _) in self.overlay.items()}
        out.update(self.store.file_rels(i for i in ids if i not in out))
        return out

    # ── freshening ──────────────────────────────────────────────────────────────────

    def refresh(self, deadline_at: float, first: str | None = None, *, budget_share: float = 1.0,
                at_least_one: bool = False) -> None:
        """Bring the crate up to date, parsing changed files until ``deadline_at`` (monotonic).

        ``budget_share`` limits parsing to that share of the time left (the rest is the
        caller's, for the analysis itself). ``first`` is parsed before any other file.
        ``at_least_one`` parses one stale file whatever its predicted cost (the builder).
        """
        c = self.crate
        row = self.store.crate(c.rel)
        known_dirs = row[4] if row else {}
        manifest_changed = row is None or row[3] != c.manifest_sig
        self.files = self.store.files(row[0]) if row else {}
        self.crate_id = row[0] if row else 0
        disk, dirs, walked_all = self._scan(known_dirs)
        stale: list[tuple[str, int, int]] = []
        touched: list[tuple[int, int, int]] = []
        gone = [self.files[rel][0] for rel in self.files if rel not in disk]
        for rel, (mtime, size) in disk.items():
            known = self.files.get(rel)
            if known is None or known[1] != mtime or known[2] != size:
                stale.append((rel, mtime, size))
        stale.sort(key=lambda s: (s[0] != first, s[2]))
        now = time.monotonic()
        limit = now + max(0.0, deadline_at - now) * budget_share
        parsed: list[tuple[str, int, int, str, object]] = []
        rate = _rate.get("bps", DEFAULT_RATE)
        for n, (rel, mtime, size) in enumerate(stale):
            # The edited file is what the caller needs most: it may use the whole deadline.
            until = deadline_at - 0.005 if rel == first else limit
            if time.monotonic() > until and not (at_least_one and n == 0):
                self.pending = [s[0] for s in stale[n:]]
                break
            got = _read_stat(os.path.join(c.dir, rel))
            if got is None:
                continue
            data, mtime, size = got
            digest = stores.content_hash(data)
            known = self.files.get(rel)
            if known is not None and known[3] == digest:  # touched, not changed: no parse
                touched.append((known[0], mtime, size))
                continue
            if time.monotonic() + size / rate > until and not (at_least_one and n == 0):
                self.pending = [s[0] for s in stale[n:]]  # (read again next time: reading is cheap)
                break
            facts, tree, secs = _facts(data)
            _learn_rate(len(data), secs)
            parsed.append((rel, mtime, size, digest, facts))
            if rel == first:
                self.sources[rel] = (data, tree)
        # Every file on disk is now indexed at its current content, unless some were left.
        self.walked_all = walked_all
        self.complete = walked_all and not self.pending
        if not self.complete:
            dirs = {}  # an unfinished index is walked whole next time, so no file is missed
        racy = time.time_ns() - RACY_NS
        dirs = {d: (m if m < racy else -1) for d, m in dirs.items()}
        touched = [(fid, mtime if mtime < racy else -1, size) for fid, mtime, size in touched]
        if not walked_all:
            self.notes.append(f"crate has more than {crates.MAX_FILES} .rs files; the index covers the first of them")
        if manifest_changed or parsed or touched or gone or dirs != known_dirs:
            self._write(parsed, touched, gone, dirs, deadline_at)

    def _scan(self, known_dirs: dict[str, int]) -> tuple[dict[str, tuple[int, int]], dict[str, int], bool]:
        """``({rel: (mtime_ns, size)} on disk now, {dir: mtime_ns}, walked everything)``."""
        cdir = self.crate.dir
        if not known_dirs:
            return crates.walk(cdir)
        changed = []
        for d, mtime in known_dirs.items():
            try:
                if os.stat(os.path.join(cdir, d) if d else cdir).st_mtime_ns != mtime:
                    changed.append(d)
            except OSError:
                changed.append(d)
        listing, new_dirs, ok = crates.walk(cdir, changed, known_dirs) if changed else ({}, {}, True)
        changed_set = set(changed)
        dirs = {d: m for d, m in known_dirs.items() if d not in changed_set}
        dirs.update(new_dirs)
        disk = dict(listing)
        for rel, (_, _mtime, _size, _) in self.files.items():
            d = rel.rpartition("/")[0]
            if d in changed_set or d not in dirs:
                continue  # listed again above (or its directory is gone)
            try:
                st = os.stat(os.path.join(cdir, rel))
            except OSError:
                continue
            disk[rel] = (st.st_mtime_ns, st.st_size)
        return disk, dirs, ok

    def _write(self, parsed: list, touched: list, gone: list, dirs: dict, deadline_at: float) -> None:
        """One short transaction; on a busy or failing index keep the facts in memory."""
        c = self.crate
        st = self.store
        st.set_busy(max(5, min(200, int((deadline_at - time.monotonic()) * 1000 / 3))))
        try:
            st.begin()
        except stores.StoreError as exc:
            self._keep_in_memory(parsed, str(exc))
            return
        try:
            complete = self.complete
            self.crate_id = st.upsert_crate(c.rel, c.name, {"deps": sorted(c.deps)}, c.manifest_sig, dirs, complete)
            for fid in gone:
                st.drop_file(fid)
            for fid, mtime, size in touched:
                st.touch_file(fid, mtime, size)
            racy = time.time_ns() - RACY_NS
            late = []
            for rel, mtime, size, digest, facts in parsed:
                try:
                    now = os.stat(os.path.join(c.dir, rel))
                except OSError:
                    continue
                if (now.st_mtime_ns, now.st_size) != (mtime, size):
                    late.append((rel, mtime, size, digest, facts))  # changed since we read it: never
                    continue  # write facts older than the file (another process may have newer ones)
                recorded = mtime if mtime < racy else -1
                fid = st.put_file(self.crate_id, rel, recorded, size, digest, facts)
                self.files[rel] = (fid, recorded, size, digest)
            st.commit()
            if late:
                self._keep_in_memory(late, "files changed while being indexed")
        except (stores.StoreError, *st.errors) as exc:
            st.rollback()
            self._keep_in_memory(parsed, str(exc))
        for fid in gone:
            for rel, row in list(self.files.items()):
                if row[0] == fid:
                    del self.files[rel]

    def _keep_in_memory(self, parsed: list, why: str) -> None:
        """Answer from these facts; rows another process wrote for the same files are shadowed."""
        self.notes.append(f"index not updated on disk ({why}); answering from memory")
        try:
            on_disk = self.store.files(self.crate_id) if self.crate_id else {}
        except self.store.errors:
            on_disk = {}
        fake = -1
        for rel, _, _, _, facts in parsed:
            row = on_disk.get(rel) or self.files.get(rel)
            fid = row[0] if row else fake
            fake -= 1
            self.overlay[rel] = (fid, facts)


_rate: dict[str, float] = {}


def _learn_rate(size: int, secs: float) -> None:
    if size > 4096 and secs > 0:
        seen = size / secs
        old = _rate.get("bps")
        _rate["bps"] = seen if old is None else (old + seen) / 2


def _facts(data: bytes) -> tuple:
    """(facts, tree, seconds spent parsing and walking — loading tree-sitter excluded)."""
    from yupana.codegraph import parse, scan

    parse.parser()
    t0 = time.monotonic()
    tree = parse.parse(data)
    facts = scan.file_facts(data, tree)
    return facts, tree, time.monotonic() - t0


def _read_stat(path: str) -> tuple[bytes, int, int] | None:
    """The file's bytes and the (mtime_ns, size) of what was read (fstat after reading)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        chunks = []
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
        st = os.fstat(fd)
        return b"".join(chunks), st.st_mtime_ns, st.st_size
    except OSError:
        return None
    finally:
        os.close(fd)


def open_crate(path: str, root: str, deadline_at: float, *, budget_share: float = 1.0) -> CrateIndex:
    """The fresh-as-possible index of the crate holding ``path`` (raises StoreError).

    Reused within one process, so the verify arm and the blast radius of the same edit pay
    for freshening once.
    """
    repo = crates.repo_root(path, root)
    c = crates.find(path, repo)
    key = (repo, c.dir)
    ci = _open.get(key)
    if ci is not None:
        return ci
    left_ms = (deadline_at - time.monotonic()) * 1000
    if left_ms <= 0:
        from yupana.codegraph import parse

        raise parse.Cancelled("the deadline ran out before the crate's index was opened")
    # A writer (the background builder) may hold the index: wait for it no longer than the deadline.
    st = stores.Store(stores.index_path(repo), busy_ms=max(1, min(50, int(left_ms))))
    ci = CrateIndex(repo, c, st)
    rel = ci.rel_of(path)
    ci.refresh(deadline_at, rel, budget_share=budget_share)
    _open[key] = ci
    return ci


def forget() -> None:
    """Drop the per-process cache of opened indexes (tests, long-lived callers)."""
    for ci in _open.values():
        ci.store.close()
    _open.clear()


