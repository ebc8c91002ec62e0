"""Blast radius of an edit at the tree-sitter tier: touched symbols, then reverse edges.

1. The edit's changed spans on the real file (:mod:`yupana.codegraph.spans`).
2. The *touched* symbols: the innermost symbols of that file overlapping a span (a span in
   a method touches the method, one across two methods touches both, one on an ``impl``
   header touches the impl).
3. Up to ``max_hops`` rounds of reverse edges: every symbol of the crate holding a
   reference that may name a symbol already reached. References are names, matched by
   kind — a method by ``Type::m`` / ``Self::m`` / ``Trait::m`` / any ``.m`` call; an
   associated function or const by its type or trait; a free item by a bare name or a
   module-qualified path (lowercase segment, ``crate``, ``self``, ``super``); a macro by
   ``m!`` (the macro of the referring file itself when it defines one). Name matching over-approximates (two types' ``len`` methods are one name) and
   cannot see references from other crates of a workspace, or through macros whose
   bodies are not items; the result is tagged tree-sitter tier and says so.

Impacted = the touched symbols plus everything reached; files = the files holding them.
A file in no known language, an unreadable file, anchors that cannot be placed, or a
deadline / an index still being built give :class:`Unmeasured` — never a clean zero.
"""

from __future__ import annotations

import os
import time

from yupana.codegraph import background, index, spans, store
from yupana.codegraph.parse import has_graph, language_for_path

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from yupana.edit.payload import FileEdit

TIER = "tree-sitter"
_MODULE_QUALS = ("crate", "self", "super", "::")
# A `.name(…)` call is followed only when at most this many types/traits of the crate define
# a method `name`; past that the receiver could be any of them (and std's), and following
# every one would turn the radius into the crate. Such calls are named in the result's notes.
METHOD_FANOUT = 3


class BlastResult:
    """What an edit impacts. ``symbols`` and ``files`` are counts (what ceilings compare)."""

    __slots__ = ("symbols", "files", "touched", "impacted", "impacted_files", "hops", "complete", "tier", "notes")

    def __init__(self) -> None:
        self.symbols = 0
        self.files = 0
        self.touched: list[str] = []  # "rel: Container::name (kind)"
        self.impacted: list[tuple[str, str, str, int]] = []  # (rel, qualified name, kind, hop)
        self.impacted_files: list[str] = []
        self.hops = 0  # reverse-edge rounds actually walked
        self.complete = True  # False when stopped early because a limit was already exceeded
        self.tier = TIER
        self.notes: list[str] = []

    def __repr__(self) -> str:
        return f"BlastResult(symbols={self.symbols}, files={self.files}, touched={self.touched!r})"


class Unmeasured:
    """The blast radius could not be measured: ``kind`` in no-grammar | no-anchors | unreadable | deadline."""

    __slots__ = ("kind", "reason", "tier")

    def __init__(self, kind: str, reason: str) -> None:
        self.kind = kind
        self.reason = reason
        self.tier = TIER

    def __repr__(self) -> str:
        return f"Unmeasured({self.kind!r}, {self.reason!r})"


def measure(edit: "FileEdit", root: str, max_hops: int, deadline_at: float, *,
            limit_symbols: int | None = None, limit_files: int | None = None,
            workers=None) -> BlastResult | Unmeasured:
    """Blast radius of ``edit`` (a payload ``FileEdit``) within ``deadline_at`` (time.monotonic()).

    ``limit_symbols`` / ``limit_files`` (optional, e.g. the tenant's ceilings) stop the walk
    as soon as either is exceeded: the counts are then lower bounds (``complete`` False).
    """
    if not has_graph(language_for_path(edit.rel or edit.path)):
        return Unmeasured("no-grammar", f"no tree-sitter grammar for {os.path.basename(edit.path)!r} in this build")
    got = _buffers(edit)
    if isinstance(got, Unmeasured):
        return got
    old, new, replacements, replace_all = got
    if old is None:
        return BlastResult()  # a new file: nothing can depend on it yet
    found = spans.changes(replacements, replace_all, old, new)
    if time.monotonic() > deadline_at:
        return Unmeasured("deadline", "the deadline ran out before the index was consulted")
    try:
        ci = index.open_crate(edit.path, root, deadline_at, budget_share=0.8)
    except store.StoreError as exc:
        return Unmeasured("unreadable", str(exc))
    rel = ci.rel_of(edit.path)
    if rel is None:
        return Unmeasured("unreadable", f"{edit.rel} is not inside the crate at {ci.crate.dir}")
    watch = workers.watch_edit if workers is not None else background.watch_edit  # hooks.effects.Workers
    build = workers.index_build if workers is not None else background.spawn_builder
    watch(ci, edit.path)
    started = build(ci) if not ci.complete else False
    if not ci.is_fresh(rel) or not ci.nearly_complete():
        left = len(ci.pending)
        return Unmeasured("deadline", f"the symbol index of crate {ci.crate.name or ci.crate.dir} is not up to date "
                          f"({left} file(s) not indexed within the deadline)"
                          + ("; a background build was started" if started else "; a background build is under way"))
    result = _walk(ci, rel, found, max_hops, deadline_at, limit_symbols, limit_files)
    if isinstance(result, BlastResult) and ci.pending:
        shown = ", ".join(ci.pending[:3]) + (" …" if len(ci.pending) > 3 else "")
        result.notes.append(f"{len(ci.pending)} file(s) changed since indexed were counted as they were ({shown})")
    return result


def _buffers(edit: "FileEdit") -> tuple | Unmeasured:
    """``(old bytes or None for a new file, new bytes, replacements, replace_all)`` or Unmeasured."""
    try:
        with open(edit.path, "rb") as fh:
            old = fh.read()
    except FileNotFoundError:
        old = None
    except OSError as exc:
        return Unmeasured("unreadable", f"{edit.rel}: {exc.strerror or exc}")
    if edit.op == "delete":
        return (old, b"", [], []) if old is not None else Unmeasured("unreadable", f"{edit.rel}: no such file")
    if edit.op == "move" and edit.move_from:
        return None, b"", [], []  # the destination is a new file; the source's edit measures the rest
    from yupana.edit.payload import proposed_buffer

    buffer = proposed_buffer(edit)
    if buffer is None:
        why = edit.problems[-1] if edit.problems else "the edit's anchors cannot be placed on the file"
        return Unmeasured("no-anchors", why)
    new = buffer.encode("utf-8")
    if edit.op == "update" and edit.move_to:
        new = b""  # the file moves away: everything in it is touched at its old path
    return old, new, list(edit.replacements), list(getattr(edit, "replace_all", []) or [])


def touched_symbols(syms: list[tuple], changes: list) -> list[int]:
    """Indices of the innermost symbols overlapping any change's span on the real file."""
    hit: set[int] = set()
    for os_, oe, _, _ in changes:
        for s in syms:
            start, end = s[6], s[7]
            if (start < oe and os_ < end) or (os_ == oe and start <= os_ < end):
                hit.add(s[0])
    parents = {syms[i][5] for i in hit if syms[i][5] >= 0}
    return sorted(i for i in hit if i not in parents)


def matches(qual: str | None, kind: str, container: str | None, trait: str | None) -> bool:
    """Whether a reference qualified by ``qual`` may name a symbol of this kind/container."""
    if kind == "method":
        return qual is not None and (qual == "." or qual == container or qual == trait)
    if kind == "macro":
        return qual == "!" or _module_qual(qual)
    if qual in (".", "!"):
        return False
    if kind == "variant":
        return qual is None or qual == container
    if container is not None and kind in ("fn", "const", "static", "type"):
        return qual is not None and (qual == container or qual == trait)
    return qual is None or _module_qual(qual)


def _member(target: tuple) -> bool:
    """A method, or an associated fn/const/type: reachable only through its type or trait."""
    _, kind, container, _ = target
    return kind == "method" or (container is not None and kind in ("fn", "const", "static", "type"))


def _module_qual(qual: str | None) -> bool:
    return qual is not None and (qual in _MODULE_QUALS or qual[:1].islower() or qual[:1] == "_")


def _walk(ci: index.CrateIndex, rel: str, changes: list, max_hops: int, deadline_at: float,
          limit_symbols: int | None, limit_files: int | None) -> BlastResult | Unmeasured:
    result = BlastResult()
    syms = ci.symbols_of(rel)
    fid = ci.file_id(rel)
    touched = touched_symbols(syms, changes)
    info: dict[tuple[int, int], tuple] = {}
    if fid is not None:  # (a file not indexed has no symbols: nothing touched)
        for i in touched:
            s = syms[i]
            info[(fid, i)] = (s[1], s[2], s[3], s[4])
            result.touched.append(f"{rel}: {_qualified(s[1], s[3])} ({s[2]})")
    hop_of = dict.fromkeys(info, 0)
    frontier = list(info)
    hop = 0
    skipped: set[str] = set()
    while frontier and hop < max_hops:
        if time.monotonic() > deadline_at:
            return Unmeasured("deadline", f"the deadline ran out after {hop} of {max_hops} hops of the blast radius")
        hop += 1
        by_name: dict[str, list[tuple]] = {}
        for key in frontier:
            name, kind, container, trait = info[key]
            if kind == "impl":  # an impl header: whoever names the type
                kind, container, trait = "struct", None, None
            by_name.setdefault(name, []).append((key, kind, container, trait))
        methods = [n for n, targets in by_name.items() if any(t[1] == "method" for t in targets)]
        crowded = {n for n, c in ci.method_owners(methods).items() if c > METHOD_FANOUT} if methods else set()
        for n in sorted(crowded - skipped):
            result.notes.append(f"`.{n}(…)` calls not followed: {METHOD_FANOUT}+ types define a method `{n}`")
        skipped |= crowded
        reached: dict[tuple[int, int], tuple] = {}
        # `m!` means the macro_rules `m` of its own file when that file defines one.
        macros = [n for n, targets in by_name.items() if any(t[1] == "macro" for t in targets)]
        definers: dict[str, set[int]] = {}
        for row in ci.symbols_named(macros) if macros else ():
            if row[3] == "macro":
                definers.setdefault(row[2], set()).add(row[0])
        quals = {q for targets in by_name.values() for t in targets for q in (t[2], t[3]) if q}
        dotted = {n for n, targets in by_name.items() if any(t[1] == "method" for t in targets)} - crowded
        # Names only members of a type/trait are named through that type, trait or a method
        # call: their bare and module-qualified references are not asked for.
        members = {n for n, targets in by_name.items() if all(_member(t) for t in targets)}
        rows = ci.referrers(by_name.keys() - members, quals, dotted)
        if members:
            rows += ci.referrers(members, quals, dotted, members_only=True)
        for name, qual, rfid, sidx, rname, rkind, rcontainer, rtrait in rows:
            key = (rfid, sidx)
            if key in hop_of or key in reached or (qual == "." and name in crowded):
                continue
            for target, kind, container, trait in by_name[name]:
                if kind == "macro" and rfid != target[0] and rfid in definers.get(name, ()):
                    continue
                if key != target and matches(qual, kind, container, trait):
                    reached[key] = (rname, rkind, rcontainer, rtrait)
                    break
        if not reached:
            break
        info.update(reached)
        for key in reached:
            hop_of[key] = hop
        frontier = list(reached)
        result.hops = hop
        if _over(hop_of, limit_symbols, limit_files):
            result.complete = bool(not frontier)
            if frontier:
                result.notes.append(f"stopped after hop {hop}: already past the ceiling")
            break
    rels = ci.rel_paths({k[0] for k in hop_of})
    for key, h in sorted(hop_of.items(), key=lambda kv: (kv[1], kv[0])):
        name, kind, container, _ = info.get(key, ("?", "?", None, None))
        result.impacted.append((rels.get(key[0], "?"), _qualified(name, container), kind, h))
    result.impacted_files = sorted({r for r, _, _, _ in result.impacted})
    result.symbols = len(result.impacted)
    result.files = len(result.impacted_files)
    result.notes += ci.notes
    return result


def _over(hop_of: dict, limit_symbols: int | None, limit_files: int | None) -> bool:
    if limit_symbols is not None and len(hop_of) > limit_symbols:
        return True
    return limit_files is not None and len({k[0] for k in hop_of}) > limit_files


def _qualified(name: str, container: str | None) -> str:
    return f"{container}::{name}" if container else name
