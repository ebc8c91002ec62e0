"""The shape of the package, for a refactor's before/after (issue 10's proof).

    .venv/bin/python scripts/codebase_figures.py [REV]          the figures of one revision
    .venv/bin/python scripts/codebase_figures.py BEFORE AFTER   a before/after table (Markdown)

REV is a git revision; without one, the working tree. The figures read ``yupana/`` only:

* modules and lines per package, modules over 400 lines;
* the ten largest functions (lines, ``def`` to its last line) and how many pass 50 lines;
* import cycles among yupana modules, at load time and counting lazy imports (inside
  functions); ``if TYPE_CHECKING:`` blocks never run and are left out, and a package's
  ``__init__`` importing its own modules is not counted as a cycle;
* duplicate blocks: the ``duplicates`` command (6+ shared lines, identical or same shape) over
  the tree at that revision, when it is on PATH;
* plane enumerations: the modules that spell at least half of the plane keys of the cache
  (the plane registry's keys, ``yupana/planes.py`` of the working tree) as string literals:
  the modules that list the planes by hand, which a new plane has to be added to;
* client names (issue 26): the modules outside ``yupana/clients/`` whose code — identifiers
  and string literals, docstrings and comments left out — names a client of the registry
  (each row's ``install`` word and ``binary``, ``yupana/clients`` of the working tree; goal: 0).

A revision is read from ``git archive`` into a temporary directory; nothing in the repository
is written.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def checkout(rev: str, into: str) -> Path:
    """``yupana/`` at ``rev``, extracted under ``into``."""
    os.makedirs(into)
    archive = subprocess.run(["git", "-C", str(REPO), "archive", rev, "yupana"], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", into], input=archive.stdout, check=True)
    return Path(into) / "yupana"


def sources(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root.parent)): p.read_text(encoding="utf-8") for p in sorted(root.rglob("*.py"))}


def module(path: str) -> str:
    parts = path[:-3].split("/")
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(tree: ast.AST, lazy: bool = False) -> set[str]:
    """The modules ``tree`` imports at load time (with ``lazy``: inside functions too)."""
    out: set[str] = set()

    def walk(node: ast.AST) -> None:
        for sub in ast.iter_child_nodes(node):
            if not lazy and isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                continue
            if isinstance(sub, ast.If) and "TYPE_CHECKING" in ast.unparse(sub.test):
                continue
            if isinstance(sub, ast.Import):
                out.update(a.name for a in sub.names)
            elif isinstance(sub, ast.ImportFrom) and sub.module and not sub.level:
                out.add(sub.module)
                out.update(f"{sub.module}.{a.name}" for a in sub.names)
            walk(sub)

    walk(tree)
    return out


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    sys.setrecursionlimit(10_000)
    for v in graph:
        if v not in index:
            visit(v)
    return found


def plane_keys() -> set[str]:
    sys.path.insert(0, str(REPO))
    from yupana import planes

    return set(planes.BY_KEY)


def client_words() -> set[str]:
    """What names a client in code: each registry row's install word and command (lower case)."""
    from yupana import clients

    return {word.lower() for row in clients.ROWS for word in (row.install, row.binary)}


def _docstrings(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def client_names(tree: ast.AST, words: set[str]) -> set[str]:
    """The client words ``tree``'s code spells: identifiers, attributes, imports, string literals."""
    docs = _docstrings(tree)
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            text = node.value
        elif isinstance(node, ast.Name):
            text = node.id
        elif isinstance(node, ast.Attribute):
            text = node.attr
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            text = node.name
        elif isinstance(node, ast.alias):
            text = f"{node.name} {node.asname or ''}"
        else:
            continue
        found |= {w for w in words if w in text.lower()}
    return found


def duplicates(root: Path) -> dict[str, int] | None:
    """Pairs of duplicate blocks the ``duplicates`` command reports for ``root`` (None: not installed)."""
    if shutil.which("duplicates") is None:
        return None
    done = subprocess.run(["duplicates", "--repo", str(root), "--most", "1", "--seconds", "120"],
                          capture_output=True, text=True, check=False)
    head = done.stdout.splitlines()[0] if done.stdout else ""
    if head.startswith("no duplicates"):
        return {"pairs": 0, "shape": 0, "boilerplate": 0}
    pairs = re.match(r"(\d+) pairs?", head)
    shape = re.search(r"\((\d+) by shape alone", head)
    boiler = re.search(r"(\d+) of those marked boilerplate", head)
    if pairs is None:
        return None
    return {"pairs": int(pairs.group(1)), "shape": int(shape.group(1)) if shape else 0,
            "boilerplate": int(boiler.group(1)) if boiler else 0}


class Figures:
    """What :func:`figures` measured of one tree."""

    def __init__(self) -> None:
        self.modules = 0
        self.lines = 0
        self.packages: dict[str, tuple[int, int]] = {}  # package -> (modules, lines)
        self.largest: list[tuple[int, str]] = []  # (lines, "path:line name"), largest first
        self.over_50 = 0
        self.big: list[tuple[int, str]] = []  # modules over 400 lines
        self.cycles: list[list[str]] = []
        self.lazy_cycles: list[list[str]] = []
        self.duplicates: dict[str, int] | None = None
        self.enumerations: list[tuple[int, str]] = []  # (plane keys spelled, path)
        self.client_modules: list[tuple[str, list[str]]] = []  # (path outside yupana/clients/, client words)


def figures(root: Path, keys: set[str], words: set[str] = frozenset()) -> Figures:
    files = sources(root)
    out = Figures()
    per_package: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    functions: list[tuple[int, str]] = []
    graph: dict[str, set[str]] = {}
    lazy_graph: dict[str, set[str]] = {}
    names = {module(p) for p in files}
    for path, text in files.items():
        lines = text.count("\n")
        package = "/".join(path.split("/")[:-1])
        per_package[package][0] += 1
        per_package[package][1] += lines
        if lines > 400:
            out.big.append((lines, path))
        tree = ast.parse(text)
        spelled = set()
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno is not None:
                functions.append((node.end_lineno - node.lineno + 1, f"{path}:{node.lineno} {node.name}"))
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in keys:
                spelled.add(node.value)
        if 2 * len(spelled) >= len(keys):
            out.enumerations.append((len(spelled), path))
        named = client_names(tree, set(words)) if not path.startswith("yupana/clients/") else set()
        if named:
            out.client_modules.append((path, sorted(named)))
        graph[module(path)] = {n for n in imports(tree) if n in names and n != module(path)}
        lazy_graph[module(path)] = {n for n in imports(tree, lazy=True) if n in names and n != module(path)}

    def layered(g: dict[str, set[str]]) -> dict[str, set[str]]:  # a package importing its own modules
        return {m: {n for n in deps if not m.startswith(n + ".")} for m, deps in g.items()}

    functions.sort(reverse=True)
    out.modules, out.lines = len(files), sum(v[1] for v in per_package.values())
    out.packages = {k: (v[0], v[1]) for k, v in sorted(per_package.items())}
    out.largest, out.over_50 = functions[:10], sum(1 for n, _ in functions if n > 50)
    out.big.sort(reverse=True)
    out.cycles, out.lazy_cycles = cycles(layered(graph)), cycles(layered(lazy_graph))
    out.duplicates = duplicates(root)
    out.enumerations.sort(reverse=True)
    return out


def _dup(d: dict[str, int] | None) -> str:
    if d is None:
        return "`duplicates` not on PATH"
    return f"{d['pairs']} pairs ({d['shape']} by shape alone, {d['boilerplate']} boilerplate)"


def report(rev: str | None, f: Figures) -> None:
    print(f"revision {rev or 'working tree'}: {f.modules} modules, {f.lines} lines")
    for package, (count, lines) in f.packages.items():
        print(f"  {package + '/':<28} {count:>3} modules {lines:>6} lines")
    print(f"largest functions ({f.over_50} over 50 lines):")
    for length, name in f.largest:
        print(f"  {length:>4} lines  {name}")
    print(f"modules over 400 lines: {len(f.big)}" + "".join(f"\n  {n} {p}" for n, p in f.big))
    for label, found in (("at load time", f.cycles), ("counting lazy imports", f.lazy_cycles)):
        print(f"import cycles {label}: {len(found)}" + "".join(f"\n  {' <-> '.join(c)}" for c in found))
    print(f"duplicate blocks: {_dup(f.duplicates)}")
    print(f"modules spelling half the plane keys or more: {len(f.enumerations)}"
          + "".join(f"\n  {n:>2} keys  {p}" for n, p in f.enumerations))
    print(f"modules naming a client outside yupana/clients/: {len(f.client_modules)}"
          + "".join(f"\n  {p} ({', '.join(w)})" for p, w in f.client_modules))


def table(before: str, after: str, a: Figures, b: Figures) -> None:
    def row(label: str, x: object, y: object) -> None:
        print(f"| {label} | {x} | {y} |")

    def package(p: tuple[int, int] | None) -> str:
        return f"{p[0]} / {p[1]}" if p else "—"

    def enumerations(f: Figures) -> str:
        return f"{len(f.enumerations)}: " + ", ".join(p.split("/", 1)[1] for _, p in f.enumerations)

    print(f"| figure | before ({before}) | after ({after}) |\n|---|---|---|")
    row("modules / lines", f"{a.modules} / {a.lines}", f"{b.modules} / {b.lines}")
    for p in sorted(set(a.packages) | set(b.packages)):
        row(f"`{p}/` modules / lines", package(a.packages.get(p)), package(b.packages.get(p)))
    for i in range(3):
        (na, fa), (nb, fb) = a.largest[i], b.largest[i]
        row(f"largest function #{i + 1}", f"{na} `{fa}`", f"{nb} `{fb}`")
    row("functions over 50 lines", a.over_50, b.over_50)
    row("modules over 400 lines", len(a.big), len(b.big))
    row("import cycles at load time", len(a.cycles), len(b.cycles))
    row("import cycles counting lazy imports", len(a.lazy_cycles), len(b.lazy_cycles))
    row("duplicate-block pairs (6+ lines)", _dup(a.duplicates), _dup(b.duplicates))
    row("modules listing the planes by hand (half the keys or more)", enumerations(a), enumerations(b))
    row("modules naming a client outside `yupana/clients/`", len(a.client_modules), len(b.client_modules))


def main(argv: list[str]) -> int:
    if any(arg.startswith("-") for arg in argv) or len(argv) > 2:
        print(__doc__.split("\n\n")[1] if __doc__ else "usage: codebase_figures.py [BEFORE] [AFTER]")
        return 0 if argv in (["-h"], ["--help"]) else 2
    keys, words = plane_keys(), client_words()
    with tempfile.TemporaryDirectory(prefix="yupana-figures-") as tmp:
        found: list[tuple[str | None, Figures]] = []
        for i, rev in enumerate(argv or [None]):
            root = checkout(rev, os.path.join(tmp, str(i))) if rev else REPO / "yupana"
            found.append((rev, figures(root, keys, words)))
    if len(found) == 2:
        (ra, a), (rb, b) = found
        table(ra or "working tree", rb or "working tree", a, b)
    else:
        for rev, f in found:
            report(rev, f)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
