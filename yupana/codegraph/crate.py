"""Which crate a file belongs to, what the crate may name from outside, and its files.

Hot-path code: no tomllib (it is a cold-path import here), so ``Cargo.toml`` is read by a
small line scanner that understands exactly what it needs — the package and lib names and
the keys of every ``*dependencies`` table (plain, dev, build, ``target.'cfg(…)'.``,
``[dependencies.name]`` headers, dotted ``name.workspace = true`` keys).
"""

from __future__ import annotations

import os

SKIP_DIRS = {"target", "node_modules"}
MAX_FILES = 20000  # a "crate" bigger than this is not indexed whole (the result says so)


class Crate:
    """A crate directory and the names it may reach without defining them."""

    __slots__ = ("dir", "rel", "name", "deps", "manifest_sig", "has_manifest", "roots", "edition")

    def __init__(self, directory: str, rel: str, name: str | None, deps: set[str], sig: str | None,
                 has_manifest: bool, roots: set[str] | None = None) -> None:
        self.dir = directory  # absolute
        self.rel = rel  # relative to the repository root ("" for the root itself)
        self.name = name  # the library name as code spells it (dashes as underscores)
        self.deps = deps  # dependency names as code spells them
        self.manifest_sig = sig  # Cargo.toml (mtime_ns, size) as text, to notice edits
        self.has_manifest = has_manifest
        self.roots = roots or set()  # crate-relative files Cargo.toml names as target roots (`path = …`)
        self.edition = "2015"  # Cargo's default when the manifest names none


def repo_root(path: str, fallback: str) -> str:
    """The nearest directory above ``path`` holding ``.git``, else ``fallback``."""
    d = os.path.dirname(os.path.abspath(path))
    while True:
        if os.path.exists(os.path.join(d, ".git")):
            return d
        parent = os.path.dirname(d)
        if parent == d:
            return os.path.abspath(fallback)
        d = parent


def find(path: str, repo: str) -> Crate:
    """The crate of ``path``: the nearest ``Cargo.toml`` with a ``[package]`` at or below ``repo``
    (a loose tree with no manifest is treated as one crate rooted at ``repo``)."""
    repo = os.path.abspath(repo)
    d = os.path.dirname(os.path.abspath(path))
    while True:
        manifest = os.path.join(d, "Cargo.toml")
        try:
            st = os.stat(manifest)
        except OSError:
            st = None
        if st is not None:
            text = _read(manifest)
            if text is not None and "[package]" in text:
                name, deps, roots = parse_manifest(text)
                found = Crate(d, _rel(d, repo), name, deps, f"{st.st_mtime_ns}:{st.st_size}", True, roots)
                found.edition = manifest_edition(text)
                return found
        if d == repo or os.path.dirname(d) == d or not (d + os.sep).startswith(repo + os.sep):
            break
        d = os.path.dirname(d)
    base = repo if (os.path.abspath(path) + os.sep).startswith(repo + os.sep) else os.path.dirname(os.path.abspath(path))
    return Crate(base, _rel(base, repo), None, set(), None, False)


def manifest_sig(crate_dir: str) -> str | None:
    """Cargo.toml's (mtime_ns, size) as text, None when there is none."""
    try:
        st = os.stat(os.path.join(crate_dir, "Cargo.toml"))
    except OSError:
        return None
    return f"{st.st_mtime_ns}:{st.st_size}"


def _rel(d: str, repo: str) -> str:
    if d == repo:
        return ""
    if d.startswith(repo + os.sep):
        return d[len(repo) + 1:]
    return d


def _read(path: str) -> str | None:
    try:
        with open(path, "rb") as fh:
            return fh.read(1 << 20).decode("utf-8", "replace")
    except OSError:
        return None


def parse_manifest(text: str) -> tuple[str | None, set[str], set[str]]:
    """``(library name, dependency names, target root files)`` from Cargo.toml text
    (names with ``-`` as ``_``; roots are the ``path`` keys of lib/bin/test/example/bench)."""
    section = ""
    package = lib = None
    deps: set[str] = set()
    roots: set[str] = set()
    depth = 0  # inside a multi-line array or inline table value
    for raw in text.split("\n"):
        line = _strip_comment(raw).strip()
        if not line:
            continue
        if depth > 0:
            depth = max(depth + _balance(line), 0)
            continue
        if line.startswith("[") and not line.startswith("[["):
            section = line.strip("[] \t")
            if _is_dep_table(section.rsplit(".", 1)[0]) and not _is_dep_table(section):
                deps.add(_unquote(section.rsplit(".", 1)[1]).replace("-", "_"))
            continue
        if line.startswith("[["):
            section = line.strip("[] \t")
            continue
        key, eq, value = line.partition("=")
        if not eq:
            continue
        key = key.strip()
        value = value.strip()
        depth = max(_balance(value), 0)
        if _is_dep_table(section):
            deps.add(_unquote(key.split(".", 1)[0].strip()).replace("-", "_"))
        elif section == "package" and key == "name":
            package = _unquote(value)
        elif section == "lib" and key == "name":
            lib = _unquote(value)
        elif section in ("lib", "bin", "test", "example", "bench") and key == "path":
            roots.add(_unquote(value).lstrip("./"))
    name = lib or package
    return (name.replace("-", "_") if name else None), deps, roots


def manifest_edition(text: str) -> str:
    """The ``[package] edition`` (``"2015"`` when absent, as Cargo assumes)."""
    section = ""
    for raw in text.split("\n"):
        line = _strip_comment(raw).strip()
        if line.startswith("["):
            section = line.strip("[] \t")
        elif section == "package" and line.startswith("edition"):
            key, eq, value = line.partition("=")
            if eq and key.strip() == "edition":
                return _unquote(value) or "2015"
    return "2015"


def _is_dep_table(section: str) -> bool:
    last = section.rsplit(".", 1)[-1]
    return last in ("dependencies", "dev-dependencies", "build-dependencies", "dev_dependencies", "build_dependencies")


def _strip_comment(line: str) -> str:
    if "#" not in line:
        return line
    quote = None
    for i, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch == "#":
            return line[:i]
    return line


def _balance(value: str) -> int:
    depth = 0
    quote = None
    for ch in value:
        if quote:
            if ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
    return depth


def _unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value


def walk(crate_dir: str, start: list[str] | None = None,
         known_dirs: dict[str, int] | None = None) -> tuple[dict[str, tuple[int, int]], dict[str, int], bool]:
    """The crate's ``.rs`` files: ``({rel: (mtime_ns, size)}, {rel dir: mtime_ns}, complete)``.

    Skips ``target/``, hidden directories and nested crates (a subdirectory with its own
    ``Cargo.toml``). ``start`` limits the walk to these directories (rescanning the ones
    whose mtime changed); subdirectories listed in ``known_dirs`` are then not descended
    into, because they are checked on their own.
    """
    files: dict[str, tuple[int, int]] = {}
    dirs: dict[str, int] = {}
    stack = list(start) if start is not None else [""]
    while stack:
        rel_dir = stack.pop()
        full = os.path.join(crate_dir, rel_dir) if rel_dir else crate_dir
        try:
            dirs[rel_dir] = os.stat(full).st_mtime_ns
            entries = list(os.scandir(full))
        except OSError:
            continue
        for entry in entries:
            name = entry.name
            rel = f"{rel_dir}/{name}" if rel_dir else name
            try:
                if entry.is_dir(follow_symlinks=False):
                    if name.startswith(".") or name in SKIP_DIRS or (known_dirs is not None and rel in known_dirs):
                        continue
                    if os.path.exists(os.path.join(entry.path, "Cargo.toml")):
                        continue
                    stack.append(rel)
                elif name.endswith(".rs") and entry.is_file():
                    st = entry.stat()
                    files[rel] = (st.st_mtime_ns, st.st_size)
                    if len(files) >= MAX_FILES:
                        return files, dirs, False
            except OSError:
                continue
    return files, dirs, True
