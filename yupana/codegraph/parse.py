"""tree-sitter, loaded cheaply: the grammar map, one parser, and compiled queries.

Hooks import this module only when a check is armed for a file a grammar can parse (a
``.rs`` edit with blast ceilings or ``verify`` on, or a structural rule for its language).

Why the loader bypasses the packages: ``import tree_sitter`` imports :mod:`typing` (~10 ms
here) and ``import tree_sitter_rust`` imports :mod:`importlib.resources` (~11 ms, it pulls
pathlib, tempfile and re) — together about twice the cost of a bare interpreter. The
compiled bindings themselves (``tree_sitter._binding`` and ``tree_sitter_rust._binding``)
load in ~2-4 ms, plus ~5 ms for what the binding's own init imports (``re`` for query
predicates, ``enum`` for its LogType). :func:`_binding` finds each extension through the
normal path finder and loads it without running its package ``__init__``; any failure falls
back to the ordinary import, so correctness never depends on the shortcut.

**The deadline.** A hook binds its ``deadline_at`` (:func:`bind_deadline`, a
``time.monotonic()`` instant); from then on every parse in this process runs through the
parser's read callback with a progress callback that cancels it once the instant has
passed, raising :class:`Cancelled` — a 10 MB buffer stops within a millisecond of the
deadline instead of taking a second and a half. (py-tree-sitter ignores the progress
callback for a plain bytestring, hence the read callback; the query cursor's own progress
callback crashes the 0.26 binding, so queries are bounded by byte windows instead, see
:func:`captures`.)
"""

from __future__ import annotations

import sys
import time

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from tree_sitter import Language, Node, Parser, Query, Tree
    from types import ModuleType

# Extension -> language, as the Rust original's ``language_for_extension`` (interop §1.1).
LANGUAGE_BY_EXT = {
    "rs": "rust",
    "ts": "typescript", "mts": "typescript", "cts": "typescript",
    "js": "typescript", "mjs": "typescript", "cjs": "typescript",
    "tsx": "tsx", "jsx": "tsx",
    "py": "python", "pyi": "python",
    "go": "go",
    "java": "java",
    "c": "cpp", "h": "cpp", "cc": "cpp", "cpp": "cpp", "cxx": "cpp", "hpp": "cpp", "hh": "cpp", "hxx": "cpp",
}

# The grammars this build can parse for structural policies: language -> (compiled binding,
# its language function). A rule for any other language never matches and is shown as inert
# (``yupana project --dump``, ``status``, ``explain``). Each binding is loaded only when a rule
# for its language is armed for the edited file.
GRAMMAR_BINDINGS = {
    "rust": ("tree_sitter_rust._binding", "language"),
    "python": ("tree_sitter_python._binding", "language"),
    "typescript": ("tree_sitter_typescript._binding", "language_typescript"),
    "tsx": ("tree_sitter_typescript._binding", "language_tsx"),
    "javascript": ("tree_sitter_javascript._binding", "language"),
    "go": ("tree_sitter_go._binding", "language"),
}
GRAMMARS = tuple(GRAMMAR_BINDINGS)
# The code graph (blast radius, buffer verification) stays Rust-only.
GRAPH_LANGUAGE = "rust"
# Extensions a ``javascript`` rule also applies to (the map above calls them typescript, as
# the original does; a rule naming javascript is parsed with the JavaScript grammar).
JAVASCRIPT_EXTS = ("js", "mjs", "cjs", "jsx")

_state: dict = {}
READ_CHUNK = 1 << 16  # bytes handed to tree-sitter per read callback under a deadline (at most)
TEXT_CHUNK = 1 << 9  # the first read at a fresh offset (a node's text after the parse)
QUERY_WINDOW = 1 << 16  # bytes of the tree a bounded query visits between deadline checks


class Cancelled(TimeoutError):
    """A parse or query stopped at the bound deadline: its answer is UNKNOWN, not clean."""


def bind_deadline(deadline_at: float | None) -> None:
    """Bound every later parse and query in this process by ``deadline_at`` (None: unbounded)."""
    _state["deadline_at"] = deadline_at


def check_deadline() -> None:
    """Raise :class:`Cancelled` once the bound deadline has passed (a no-op when none is bound)."""
    at = _state.get("deadline_at")
    if at is not None and time.monotonic() > at:
        raise Cancelled("the deadline ran out while tree-sitter was working")


def language_for_path(path: str) -> str | None:
    """The language of ``path`` by its extension (None: no known language)."""
    base = path.rsplit("/", 1)[-1]
    dot = base.rfind(".")
    if dot <= 0:
        return None
    return LANGUAGE_BY_EXT.get(base[dot + 1:].lower())


def has_grammar(language: str | None) -> bool:
    """Whether this build can parse ``language`` (for a structural policy)."""
    return language in GRAMMAR_BINDINGS


def rule_applies_to_language(rule_language: str | None, path: str) -> bool:
    """Whether a structural rule of ``rule_language`` is language-gated onto ``path``."""
    found = language_for_path(path)
    if rule_language == found:
        return True
    if rule_language == "javascript":
        base = path.rsplit("/", 1)[-1]
        return base.rpartition(".")[2].lower() in JAVASCRIPT_EXTS and "." in base.lstrip(".")
    return False


def has_graph(language: str | None) -> bool:
    """Whether the code graph (blast radius, verify) covers ``language``: Rust only."""
    return language == GRAPH_LANGUAGE


def _binding(name: str) -> "ModuleType":
    """Load the compiled extension ``name`` (``pkg._binding``) without its package __init__."""
    mod = sys.modules.get(name)
    if mod is not None:
        return mod
    try:
        import _frozen_importlib as boot
        import _frozen_importlib_external as ext

        pkg = name.rpartition(".")[0]
        pkg_spec = ext.PathFinder.find_spec(pkg)
        spec = ext.PathFinder.find_spec(name, pkg_spec.submodule_search_locations) if pkg_spec else None
        if spec is None or spec.loader is None:
            raise ImportError(name)
        mod = boot.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
        return mod
    except Exception:  # noqa: BLE001 - the ordinary import is always correct, only slower
        sys.modules.pop(name, None)
        import importlib

        return importlib.import_module(name)


def api() -> "ModuleType":
    """The tree-sitter binding module (Language, Parser, Query, QueryCursor, Point…)."""
    ts = _state.get("ts")
    if ts is None:
        ts = _state["ts"] = _binding("tree_sitter._binding")
    return ts


def language(name: str = "rust") -> "Language":
    """The tree-sitter Language for ``name``; ValueError when this build has no grammar for it."""
    found = GRAMMAR_BINDINGS.get(name)
    if found is None:
        raise ValueError(f"no tree-sitter grammar for {name!r} in this build (only {', '.join(GRAMMARS)})")
    langs = _state.setdefault("langs", {})
    lang = langs.get(name)
    if lang is None:
        ts = api()
        module, func = found
        lang = langs[name] = ts.Language(getattr(_binding(module), func)())
    return lang


def parser(name: str = "rust") -> "Parser":
    """A shared Parser for ``name`` (callers must not change its included ranges permanently)."""
    parsers = _state.setdefault("parsers", {})
    p = parsers.get(name)
    if p is None:
        p = parsers[name] = api().Parser(language(name))
    return p


def parse(source: bytes, old_tree: "Tree | None" = None, lang: str = "rust") -> "Tree":
    """Parse ``source`` (bytes) as ``lang``; ``old_tree`` (already ``edit``-ed) makes it incremental."""
    return run(parser(lang), source, old_tree)


def run(p: "Parser", source: bytes, old_tree: "Tree | None" = None) -> "Tree":
    """``p.parse(source)``, cancelled at the bound deadline (raises :class:`Cancelled`)."""
    at = _state.get("deadline_at")
    if at is None:
        return p.parse(source, old_tree) if old_tree is not None else p.parse(source)
    check_deadline()
    view = memoryview(source)
    last = [-1, TEXT_CHUNK]  # where the previous read ended, and how much it returned

    def read(offset: int, _point) -> bytes:
        # The tree keeps this callback as its source: after the parse, every ``node.text``
        # reads through it from the node's start until it has the node's end. A sequential
        # read (the parse, a long node) doubles up to READ_CHUNK; a fresh offset (the next
        # node's text) starts small, so a short node costs ~2 µs instead of a 64 KB copy (~45 µs).
        size = min(last[1] * 2, READ_CHUNK) if offset == last[0] else TEXT_CHUNK
        last[0], last[1] = offset + size, size
        return bytes(view[offset:offset + size])

    def progress(_offset: int, _has_error: bool) -> bool:
        return time.monotonic() > at

    try:
        if old_tree is None:
            return p.parse(read, progress_callback=progress)
        return p.parse(read, old_tree, progress_callback=progress)
    except ValueError:  # "Parsing failed": the progress callback cancelled it
        p.reset()
        if time.monotonic() > at:
            raise Cancelled("the deadline ran out while tree-sitter was parsing") from None
        raise


class QueryError(ValueError):
    """A ``.scm`` query that does not compile; the message says where and why."""


def query(source: str, lang: str = "rust") -> "Query":
    """Compile (once per process) a tree-sitter query over the grammar of ``lang``."""
    cache = _state.setdefault("queries", {})
    q = cache.get((lang, source))
    if q is None:
        ts = api()
        try:
            q = ts.Query(language(lang), source)
        except Exception as exc:  # noqa: BLE001 - QueryError, or a NameError/SyntaxError for bad node names
            raise QueryError(str(exc).strip() or type(exc).__name__) from None
        cache[(lang, source)] = q
    return q


def captures(q: "Query", node: "Node", start_byte: int | None = None, end_byte: int | None = None) -> dict:
    """``{capture name: [nodes]}`` of query ``q`` under ``node`` (optionally a byte range)."""
    if _state.get("deadline_at") is None or node.end_byte - node.start_byte <= QUERY_WINDOW:
        cursor = api().QueryCursor(q)
        if start_byte is not None:
            cursor.set_byte_range(start_byte, end_byte)
        check_deadline()
        return cursor.captures(node)
    # Bounded: one byte window at a time, the deadline checked between windows. A node
    # crossing a window boundary is captured by each window it touches: de-duplicated by id.
    lo = node.start_byte if start_byte is None else max(start_byte, node.start_byte)
    hi = node.end_byte if end_byte is None else min(end_byte, node.end_byte)
    out: dict = {}
    seen: set = set()
    for at in range(lo, max(hi, lo + 1), QUERY_WINDOW):
        check_deadline()
        cursor = api().QueryCursor(q)
        cursor.set_byte_range(at, min(at + QUERY_WINDOW, hi))
        for name, nodes in cursor.captures(node).items():
            for n in nodes:
                if (name, n.id) not in seen:
                    seen.add((name, n.id))
                    out.setdefault(name, []).append(n)
    return out


def matches(q: "Query", node: "Node", start_byte: int | None = None, end_byte: int | None = None) -> list:
    """``[(pattern index, {capture name: [nodes]})]`` of query ``q`` under ``node``."""
    cursor = api().QueryCursor(q)
    if start_byte is not None:
        cursor.set_byte_range(start_byte, end_byte)
    check_deadline()
    return cursor.matches(node)
