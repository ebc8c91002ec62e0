"""The layers, read from the source (AST imports, lazy ones included): what may import what.

    cli ─► commands/ ─► workers/ ─► endpoint/, projection/     (the cold path)
    cli ─► hooks/ ─► evaluate/, codegraph/ ─► edit/, shell/     (the hot path)
           every layer ─► state/, config/ and the flat base modules (globs, redact, …)

Nothing below imports what is above it, the hot packages never import the cold ones, and
there is no import cycle among modules imported at load time. The hooks' effects object
(yupana/hooks/effects.py) stays in hooks/: below them, nothing takes it or a dry-run flag.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "yupana"

COLD_PACKAGES = ("yupana.commands", "yupana.clients.install", "yupana.endpoint", "yupana.projection", "yupana.workers.refresher",
                 "yupana.workers.refresh_worker", "yupana.workers.bundle_fetch", "yupana.workers.exposure_worker", "yupana.workers.disk_flush",
                 "yupana.config.model", "yupana.config.controls", "yupana.cli")
COLD_LIBRARIES = ("rdflib", "pyshacl", "httpx", "httpcore", "pydantic", "pydantic_settings", "rich", "typer",
                  "SPARQLWrapper", "diskcache", "pyoxigraph", "cryptography")
HOT_PACKAGES = ("yupana.hooks", "yupana.edit", "yupana.evaluate", "yupana.shell", "yupana.regex")
BELOW_HOOKS = ("yupana.state", "yupana.workers", "yupana.edit", "yupana.shell", "yupana.regex", "yupana.evaluate", "yupana.codegraph", "yupana.endpoint", "yupana.projection")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> list[tuple[str, bool]]:
    """(imported module, at load time?) for every import in ``path``; imports inside a
    function are lazy, an ``if TYPE_CHECKING:`` block never runs."""
    out: list[tuple[str, bool]] = []

    def walk(node: ast.AST, lazy: bool) -> None:
        for sub in ast.iter_child_nodes(node):
            if isinstance(sub, ast.If) and "TYPE_CHECKING" in ast.unparse(sub.test):
                continue
            if isinstance(sub, ast.Import):
                out.extend((alias.name, not lazy) for alias in sub.names)
            elif isinstance(sub, ast.ImportFrom) and sub.module and not sub.level:
                out.append((sub.module, not lazy))
                out.extend((f"{sub.module}.{alias.name}", not lazy) for alias in sub.names)
            walk(sub, lazy or isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))

    walk(ast.parse(path.read_text(encoding="utf-8")), False)
    return out


MODULES = {_module_name(p): _imports(p) for p in sorted(PACKAGE.rglob("*.py"))}


def _within(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def _violations(sources: tuple[str, ...], targets: tuple[str, ...]) -> list[str]:
    return sorted({f"{mod} imports {name}" for mod, names in MODULES.items() if _within(mod, sources)
                   for name, _ in names if _within(name, targets)})


def test_the_package_is_read():
    assert "yupana.hooks.pre_edit" in MODULES and "yupana.edit.payload" in MODULES
    assert ("yupana.edit.payload", True) in MODULES["yupana.hooks.pre_edit"]


def test_nothing_below_the_hooks_imports_them_or_a_command():
    """Only the entry points (cli, and commands such as explain that run a hook) sit above."""
    below = tuple(mod for mod in MODULES if not _within(mod, ("yupana.hooks", "yupana.commands", "yupana.cli",
                                                              "yupana.__main__", "yupana.clients.install")))
    assert set(BELOW_HOOKS) <= set(below)
    assert sorted({f"{mod} imports {name}" for mod in below for name, _ in MODULES[mod]
                   if _within(name, ("yupana.hooks", "yupana.commands", "yupana.cli"))}) == []


def test_the_edit_model_and_the_shell_reader_import_no_evaluator_graph_or_store():
    assert _violations(("yupana.edit", "yupana.shell"), ("yupana.evaluate", "yupana.codegraph", "yupana.endpoint",
                                                         "yupana.projection")) == []


@pytest.mark.parametrize("targets", [COLD_PACKAGES, COLD_LIBRARIES], ids=["cold packages", "cold libraries"])
def test_the_hot_packages_never_import_the_cold_path(targets):
    assert _violations(HOT_PACKAGES, targets) == []


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    cycles: list[list[str]] = []
    state: dict[str, int] = {}

    def visit(mod: str, trail: list[str]) -> None:
        state[mod] = 1
        for nxt in sorted(graph[mod]):
            if state.get(nxt) == 1:
                cycles.append(trail[trail.index(nxt):] + [nxt] if nxt in trail else [mod, nxt])
            elif nxt not in state:
                visit(nxt, trail + [nxt])
        state[mod] = 2

    for mod in sorted(graph):
        if mod not in state:
            visit(mod, [mod])
    return cycles


def test_no_import_cycle_at_load_time():
    graph = {mod: {name for name, at_load in names if at_load and name in MODULES and name != mod}
             for mod, names in MODULES.items()}
    assert _cycles(graph) == []


def test_no_import_cycle_even_through_lazy_imports():
    """A lazy import is a dependency too: a module that loads its helper on first use must not be
    imported back by it (the shared model sits below both, as edit/model.py and shell/targets.py do).
    A package's ``__init__`` importing its own modules is not a cycle between layers."""
    graph = {mod: {name for name, _ in names if name in MODULES and name != mod and not mod.startswith(name + ".")}
             for mod, names in MODULES.items()}
    assert _cycles(graph) == []


def test_the_state_files_import_nothing_that_reads_or_runs_rules():
    """state/ sits under every layer: it knows files, never an evaluator, a graph, a store or a worker
    (beyond ``workers.detached``, the spawn primitive the disk queue starts its flush with)."""
    found = _violations(("yupana.state",), ("yupana.evaluate", "yupana.codegraph", "yupana.workers", "yupana.endpoint",
                                            "yupana.projection", "yupana.edit", "yupana.shell"))
    assert [v for v in found if not v.endswith(("yupana.workers", "yupana.workers.detached"))] == []


def _private_uses(path: Path) -> list[str]:
    """``module._name`` where ``module`` is a yupana module imported by that name."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    ours: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("yupana"):
            ours.update(alias.asname or alias.name for alias in node.names
                        if f"{node.module}.{alias.name}" in MODULES)
        elif isinstance(node, ast.Import):
            ours.update(alias.asname for alias in node.names if alias.asname and alias.name in MODULES)
    return [f"{_module_name(path)}:{node.lineno} {node.value.id}.{node.attr}" for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in ours
            and node.attr.startswith("_") and not node.attr.startswith("__")]


def test_no_module_reaches_into_another_modules_private_helpers():
    found = [use for path in sorted(PACKAGE.rglob("*.py")) for use in _private_uses(path)]
    assert found == []


DECIDERS = ("yupana.evaluate", "yupana.codegraph", "yupana.shell", "yupana.edit", "yupana.regex", "yupana.exposure")


def test_the_decisions_below_the_hooks_never_see_the_effects():
    """Issue 10 §2: a decision cannot depend on whether it is rehearsed. Below the hooks no
    function takes the hooks' effects, a trace or a dry-run flag (what must start a worker
    takes only ``workers``, which carries no trace), and nothing names ``effects``."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        mod = _module_name(path)
        if not _within(mod, DECIDERS):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.arg) and node.arg in ("effects", "trace", "dry", "rehearsal"):
                found.append(f"{mod}:{node.lineno} parameter {node.arg}")
            elif isinstance(node, ast.Name) and node.id in ("effects", "DRY_RUN"):
                found.append(f"{mod}:{node.lineno} name {node.id}")
    assert found == []
