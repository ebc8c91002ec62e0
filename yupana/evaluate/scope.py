"""Declared capability scope: path globs, then blast-radius ceilings (contract §What the guard checks).

``[yupana.policy.scopes.<tenant>]``:

* ``deny_paths`` beats ``allow_paths``; an empty ``allow_paths`` permits any path;
  globs are matched (``yupana.globs`` dialect) against the path relative to the project
  root (:mod:`yupana.project_root`); a file outside the project root (its path is then
  absolute) is outside every ``allow_paths`` scope, even ``**``;
* a malformed glob raises :class:`yupana.globs.GlobError` — the hook fails open loudly
  (kind ``globs``) rather than guessing;
* blast radius runs only when a ceiling is set and only within what is left of the
  deadline (the walk stops as soon as a ceiling is passed: the counts are then lower
  bounds, and the message says "at least"); an edit that cannot be measured is UNKNOWN
  (never "clean"), and the hook shows a once-per-session notice per sizing kind and file.

Constraint ids: ``scope-declared:<tenant>`` and ``blast:<tenant>``.
"""

from __future__ import annotations

from yupana import globs
from yupana.evaluate import SATISFIED, UNKNOWN, Finding

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from typing import Any
    from yupana.edit.model import FileEdit
    from yupana.hooks.effects import Workers

NARROW = "Narrow the change, or request a wider capability scope."


def has_ceiling(scope: dict[str, Any]) -> bool:
    """Whether blast radius is armed for this scope."""
    return scope.get("max_impacted_symbols") is not None or scope.get("max_impacted_files") is not None


def check_paths(tenant: str, scope: dict[str, Any], rel: str, real_rel: str | None = None) -> Finding:
    """The path half of the scope for one file; raises GlobError on a malformed glob.

    ``real_rel`` is the same path with symlinks resolved: a deny glob matching either path
    denies, and ``allow_paths`` must admit both, so a link cannot carry an edit out of scope.
    """
    deny = [(p, globs.compile_glob(p)) for p in scope.get("deny_paths") or ()]
    allow = [(p, globs.compile_glob(p)) for p in scope.get("allow_paths") or ()]
    cid = f"scope-declared:{tenant}"
    names = (rel,) if real_rel is None or real_rel == rel else (rel, real_rel)
    for pattern, tokens in deny:
        if any(globs.matches(tokens, name) for name in names):
            return Finding(cid, "scope",
                           f"edit to {rel} is outside the capability scope for tenant `{tenant}` "
                           f"(it matches the denied path `{pattern}`). Leave this file alone, or request a "
                           "wider capability scope.", blocking=True, rel=rel)
    if allow and any(name.startswith("/") for name in names):
        return Finding(cid, "scope",
                       f"edit to {rel} is outside the capability scope for tenant `{tenant}` "
                       f"({'it' if rel.startswith('/') else 'its real path ' + repr(real_rel)} lies outside the "
                       "project root, and the allowed paths all lie inside it). Keep the change inside the "
                       "project, or request a wider capability scope.", blocking=True, rel=rel)
    if allow and not all(any(globs.matches(tokens, name) for _, tokens in allow) for name in names):
        shown = ", ".join(f"`{p}`" for p, _ in allow)
        return Finding(cid, "scope",
                       f"edit to {rel} is outside the capability scope for tenant `{tenant}` "
                       f"(the allowed paths are {shown}). Keep the change inside those paths, or request a "
                       "wider capability scope.", blocking=True, rel=rel)
    return Finding(cid, "scope", "", outcome=SATISFIED, rel=rel)


def check_blast(tenant: str, scope: dict[str, Any], edit: FileEdit, root: str, max_hops: int, deadline_at: float,
                workers: Workers | None = None) -> Finding:
    """Blast radius of ``edit`` against the scope's ceilings (tree-sitter tier). ``workers``
    starts the index's background work (:func:`yupana.codegraph.blast.measure`)."""
    from yupana.codegraph import blast  # only when a ceiling is armed for this edit

    rel = edit.rel
    cid = f"blast:{tenant}"
    max_sym = scope.get("max_impacted_symbols")
    max_files = scope.get("max_impacted_files")
    try:
        result = blast.measure(edit, root, max_hops, deadline_at, limit_symbols=max_sym, limit_files=max_files,
                               workers=workers)
    except TimeoutError:  # a parse cancelled at the deadline (yupana.codegraph.parse.Cancelled)
        result = blast.Unmeasured("deadline", "the deadline ran out while tree-sitter was parsing")
    if isinstance(result, blast.Unmeasured):
        return Finding(cid, "scope",
                       f"blast radius of the edit to {rel} was UNMEASURED ({result.kind}: {result.reason}); "
                       "the ceiling was not checked for this file",
                       outcome=UNKNOWN, rel=rel, extra={"unmeasured": result.kind, "tier": "tree-sitter"})
    symbols, files = int(result.symbols), int(result.files)
    over = (max_sym is not None and symbols > max_sym) or (max_files is not None and files > max_files)
    extra = {"symbols": symbols, "files": files, "tier": getattr(result, "tier", "tree-sitter")}
    if not over:
        return Finding(cid, "scope", "", outcome=SATISFIED, rel=rel, extra=extra)
    ceiling = f"{'—' if max_sym is None else max_sym}/{'—' if max_files is None else max_files}"
    bound = "" if getattr(result, "complete", True) else "at least "  # the walk stops once a ceiling is passed
    return Finding(cid, "scope",
                   f"edit to {rel} exceeds the blast-radius ceiling for tenant `{tenant}` (impacts {bound}"
                   f"{symbols} symbols across {files} files; ceiling is {ceiling}, tree-sitter tier). {NARROW}",
                   blocking=True, rel=rel, extra=extra)
