"""Buffer verification (FR-23) at the tree-sitter tier: what an edit introduces that resolves to nothing.

The proposed buffer is rebuilt (a missing or ambiguous anchor: no opinion), parsed, and
only what the edit introduces is examined:

* ``identifier-does-not-exist`` — a name in reference position that is bound nowhere in
  the file (patterns, parameters, closures, generics, items, ``use`` imports, ``extern
  crate``), is not defined, imported or macro-produced anywhere in the crate's index, is
  not a primitive, a prelude name, ``std``/``core``/``alloc`` or a ``Cargo.toml``
  dependency; and a ``crate::``/``self::``/``super::`` path segment the crate does not have;
* ``wrong-arity`` — a call to a function the index knows exactly once (a free function in
  this file or imported from this crate, or ``Type::f`` / ``Self::f`` with one
  definition), with a different number of arguments (a method through ``Type::m`` counts
  its receiver);
* ``unresolved-import`` — a ``use`` whose head is nothing this crate can name or whose
  ``crate::…`` segments do not exist, and a ``mod x;`` with neither ``x.rs`` nor
  ``x/mod.rs`` (nor its ``#[path]``).

When the answer could come from somewhere the index cannot see — a glob import from
another crate, ``include!``, ``#[macro_use] extern crate``, an index still being built, the
arguments of a non-std macro — the name goes to ``unchecked``, never to ``violations``.
A name that already occurs in the file before the edit is not this edit's business.

A buffer the edit left unparseable (a tree-sitter ``ERROR`` or ``MISSING`` node overlapping
what the edit changed, or more parse errors than the old buffer had over the same region:
:mod:`yupana.codegraph.parse_errors`) has no verdict at all: tree-sitter's recovery
makes names out of broken syntax, so what it would find there is not evidence. The
result says ``unparseable`` (the first broken line) and carries no violation; the hook
treats it as UNKNOWN (allow, loudly) in every mode.
"""

from __future__ import annotations

import os
import time

from yupana.codegraph import parse, scan, spans, window
from yupana.codegraph.check_context import TIER as TIER, Env as Env, VerifyResult as VerifyResult  # this API
from yupana.codegraph.checks import ARITY, IDENT, IMPORT, Checker  # noqa: F401 - re-exported kinds

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from collections.abc import Sequence

    from tree_sitter import Tree
    from yupana.edit.payload import FileEdit

MAX_UNCHECKED = 50


def verify_edit(edit: "FileEdit", root: str, deadline_at: float, *, created: tuple | list = (),
                workers=None) -> VerifyResult | None:
    """Verify the buffer ``edit`` would produce; None = no opinion (not Rust, no buffer, the
    deadline, or a crate index not yet up to date with nothing found). ``workers``
    (:class:`yupana.hooks.effects.Workers`; None: started here) starts the after-edit
    watcher and a background index build.

    ``created``: absolute paths the same tool call creates (a patch adding ``x.rs`` next to
    the ``mod x;`` it declares).
    """
    if parse.language_for_path(edit.rel or edit.path) != "rust" or edit.op in ("delete", "notebook"):
        return None
    from yupana.edit.payload import proposed_buffer

    buffer = proposed_buffer(edit)
    if buffer is None:
        return None
    new = buffer.encode("utf-8")
    old = _read(edit.move_from or edit.path)
    changes = spans.changes(list(edit.replacements), list(getattr(edit, "replace_all", []) or []), old or b"", new)
    ranges = [(ns, ne) for _, _, ns, ne in changes if ne > ns]
    deletions = [ns for _, _, ns, ne in changes if ne == ns]
    if not ranges and not deletions:
        return VerifyResult()
    parse.check_deadline()
    env = _env(edit.path, root, deadline_at, workers)
    env.created = frozenset(os.path.abspath(p) for p in created)
    prior = ci_tree(env, old)  # the index's tree of the old file, before _incremental edits a copy
    tree = _windowed(env, old, new, changes) or _incremental(env, old, new, changes) or parse.parse(new)
    if time.monotonic() > deadline_at:
        return None
    broken = _introduced_break(env, old, tree, changes, prior)
    if broken is not None:
        return unparseable(broken)
    result = verify_source(new, ranges, env, old, tree=tree, deadline_at=deadline_at, deletions=deletions)
    if result.unparseable is not None:
        return result  # no verdict either way: the hook says UNKNOWN
    if env.ci is None or not env.ci.complete:
        result.complete = False
        result.notes.append("the crate's symbol index is not up to date: names from other files were not checked")
    # What was found is certain; an incomplete search that found nothing is no opinion (UNKNOWN).
    return result if result.violations or result.complete else None


def unparseable(line: int) -> VerifyResult:
    """The verdict on a buffer the edit left unparseable (first broken ``line``): none."""
    result = VerifyResult()
    result.unparseable = line
    result.complete = False
    result.notes.append(f"line {line}: the edited buffer does not parse; nothing in it was verified")
    return result


def ci_tree(env: Env, old: bytes | None) -> "Tree | None":
    """The tree the index parsed the old file into in this process, when it has one of ``old``."""
    got = env.ci.sources.get(env.rel) if env.ci is not None and env.rel else None
    return got[1] if got is not None and old is not None and got[0] == old else None


def _introduced_break(env: Env, old: bytes | None, tree: "Tree", changes: list, prior: "Tree | None") -> int | None:
    """The line of the first parse error the edit introduced anywhere in what was parsed
    (:mod:`yupana.codegraph.parse_errors`): the old buffer over the same windows, or whole."""
    from yupana.codegraph import parse_errors

    def old_tree() -> "Tree | None":
        if old is None:
            return None
        if env.windows is not None:
            return window.parse_windows(old, [(s, e) for s, e, _ in env.windows])
        return prior if prior is not None else parse.parse(old)

    return parse_errors.introduced_line(tree, old_tree, lambda pos: window.to_new(pos, changes))


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError:
        return None


def _env(path: str, root: str, deadline_at: float, workers=None) -> Env:
    from yupana.codegraph import crate as crates
    from yupana.codegraph import background, index, store

    try:
        ci = index.open_crate(path, root, deadline_at, budget_share=0.5)
    except store.StoreError:
        repo = crates.repo_root(path, root)
        return Env(path, crates.find(path, repo))
    rel = ci.rel_of(path)
    if rel is not None:
        workers.watch_edit(ci, path) if workers is not None else background.watch_edit(ci, path)
    if rel is not None and ci.is_fresh(rel):
        info = ci.info(rel)
    else:
        info = {}
    if not ci.complete:
        workers.index_build(ci) if workers is not None else background.spawn_builder(ci)
    return Env(path, ci.crate, ci, rel, info)


def _windowed(env: Env, old: bytes | None, new: bytes, changes: list) -> "Tree | None":
    """Parse only the items the edit touches, when the index knows the file's symbols."""
    ci = env.ci
    if ci is None or env.rel is None or old is None or len(new) < window.WINDOW_ABOVE or not ci.is_fresh(env.rel):
        return None
    syms = ci.symbols_of(env.rel)
    spans_old = window.windows(syms, changes, len(old))
    if not spans_old or sum(e - s for s, e, _ in spans_old) > window.MAX_SHARE * len(old):
        return None
    env.windows = spans_old
    env.file_syms = syms
    spans_new = [(window.to_new(s, changes), window.to_new(e, changes, end=True), t) for s, e, t in spans_old]
    env.self_types = [w for w in spans_new if w[2]]
    return window.parse_windows(new, [(s, e) for s, e, _ in spans_new])


def _incremental(env: Env, old: bytes | None, new: bytes, changes: list) -> "Tree | None":
    """Re-use the tree of the old file when the index parsed it in this process."""
    ci = env.ci
    got = ci.sources.get(env.rel) if ci is not None and env.rel else None
    if got is None or old is None or got[0] != old:
        return None
    tree = got[1].copy() if hasattr(got[1], "copy") else got[1]
    for os_, oe, ns, ne in reversed(changes):
        start = _point(old, os_)
        inserted = new[ns:ne]
        nl = inserted.rfind(b"\n")
        end_row = start[0] + inserted.count(b"\n")
        end_col = len(inserted) - nl - 1 if nl >= 0 else start[1] + len(inserted)
        tree.edit(start_byte=os_, old_end_byte=oe, new_end_byte=os_ + len(inserted),
                  start_point=start, old_end_point=_point(old, oe), new_end_point=(end_row, end_col))
    return parse.parse(new, tree)


def _point(data: bytes, offset: int) -> tuple[int, int]:
    row = data.count(b"\n", 0, offset)
    return row, offset - (data.rfind(b"\n", 0, offset) + 1)


def verify_source(new: bytes, ranges: list[tuple[int, int]], env: Env, old: bytes | None = None, *,
                  tree: "Tree | None" = None, deadline_at: float | None = None,
                  deletions: Sequence[int] = ()) -> VerifyResult:
    """Verify ``new`` where ``ranges`` (byte spans) are what the edit introduces; ``old`` is
    the file before the edit (None: nothing pre-exists, everything is the edit's);
    ``deletions`` are offsets where text was only removed (calls there get their arity checked)."""
    if tree is None:
        tree = parse.parse(new)
    broken = parse_error_line(tree, ranges, deletions)
    if broken is not None:
        return unparseable(broken)
    facts, found = scan.scan(tree, ranges, deletions)
    for sym in facts.syms:  # items of a window cut out of an impl belong to that impl
        if sym[4] < 0 and sym[2] is None:  # PARENT, CONTAINER
            for s, e, self_type in env.self_types:
                if s <= sym[5] < e:
                    sym[2] = self_type
    ctx = Checker(env, facts, old)
    result = VerifyResult()
    parse.check_deadline()  # each phase below is a Python loop: a bound deadline stops between them
    ctx.check_refs(found.refs, result)
    parse.check_deadline()
    ctx.check_uses(found.uses, result)
    ctx.check_mods(found.mods, result)
    parse.check_deadline()
    if deadline_at is None or time.monotonic() < deadline_at:
        ctx.check_calls(found.calls, result)
    else:
        result.complete = False
        result.notes.append("arity not checked: deadline")
    for name, line in found.opaque:
        ctx.unchecked(result, name, line, "macro arguments are not read at the tree-sitter tier")
    result.violations.sort(key=lambda v: (v["line"], v["kind"], v["symbol"]))
    if len(result.unchecked) > MAX_UNCHECKED:
        extra = len(result.unchecked) - MAX_UNCHECKED
        result.unchecked = result.unchecked[:MAX_UNCHECKED] + [{"symbol": "…", "line": 0, "reason": f"{extra} more"}]
    return result



def parse_error_line(tree: "Tree", ranges: list[tuple[int, int]], deletions: Sequence[int] = ()) -> int | None:
    """The 1-based line of the first ERROR/MISSING node overlapping a changed span (``ranges``
    introduced, ``deletions`` removal points), or None when the changed region parses."""
    spans_ = list(ranges) + [(d, d) for d in deletions]
    if not spans_ or not tree.root_node.has_error:
        return None

    def touches(node) -> bool:
        return any(node.start_byte <= e and node.end_byte >= s for s, e in spans_)

    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if not touches(node):
            continue
        if node.is_error or node.is_missing:
            return node.start_point[0] + 1
        if node.has_error:
            stack.extend(reversed(node.children))
    return None
