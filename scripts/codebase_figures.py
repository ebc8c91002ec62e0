"""The shape of the package, for a refactor's before/after (issue 10's proof).

    .venv/bin/python scripts/codebase_figures.py [REV]

Reads ``yupana/`` at git revision REV (default: the working tree) and prints: modules and
lines per package, the ten largest functions, modules over 400 lines, and the import cycles
among modules imported at load time (imports inside functions and ``if TYPE_CHECKING:``
blocks are lazy). Duplicate blocks come from the ``duplicates`` command, run separately.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def sources(rev: str | None) -> dict[str, str]:
    if rev is None:
        return {str(p.relative_to(REPO)): p.read_text(encoding="utf-8") for p in sorted((REPO / "yupana").rglob("*.py"))}
    names = subprocess.run(["git", "-C", str(REPO), "ls-tree", "-r", "--name-only", rev, "yupana"],
                           capture_output=True, text=True, check=True).stdout.split()
    return {n: subprocess.run(["git", "-C", str(REPO), "show", f"{rev}:{n}"], capture_output=True, text=True,
                              check=True).stdout for n in names if n.endswith(".py")}


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


def main() -> int:
    rev = sys.argv[1] if len(sys.argv) > 1 else None
    files = sources(rev)
    per_package: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    functions: list[tuple[int, str]] = []
    big: list[tuple[int, str]] = []
    graph: dict[str, set[str]] = {}
    lazy_graph: dict[str, set[str]] = {}
    names = {module(p) for p in files}
    for path, text in files.items():
        lines = text.count("\n")
        package = "/".join(path.split("/")[:-1])
        per_package[package][0] += 1
        per_package[package][1] += lines
        if lines > 400:
            big.append((lines, path))
        tree = ast.parse(text)
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                functions.append((node.end_lineno - node.lineno + 1, f"{path}:{node.lineno} {node.name}"))
        graph[module(path)] = {n for n in imports(tree) if n in names and n != module(path)}
        lazy_graph[module(path)] = {n for n in imports(tree, lazy=True) if n in names and n != module(path)}
    print(f"revision {rev or 'working tree'}: {len(files)} modules, {sum(v[1] for v in per_package.values())} lines")
    for package, (count, lines) in sorted(per_package.items()):
        print(f"  {package + '/':<28} {count:>3} modules {lines:>6} lines")
    print("largest functions:")
    for length, name in sorted(functions, reverse=True)[:10]:
        print(f"  {length:>4} lines  {name}")
    print(f"modules over 400 lines: {len(big)}" + "".join(f"\n  {n} {p}" for n, p in sorted(big, reverse=True)))
    found = cycles(graph)
    print(f"import cycles at load time: {len(found)}" + "".join(f"\n  {' <-> '.join(c)}" for c in found))
    # A package's __init__ importing its own modules is not a cycle between layers: drop parent edges.
    layered = {m: {n for n in deps if not m.startswith(n + ".")} for m, deps in lazy_graph.items()}
    found = cycles(layered)
    print(f"import cycles counting lazy imports: {len(found)}" + "".join(f"\n  {' <-> '.join(c)}" for c in found))
    return 0


if __name__ == "__main__":
    sys.exit(main())
