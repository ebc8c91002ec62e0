"""Keep the hot path's bytecode compiled. Cold path.

Hooks are short-lived processes: compiling our modules from source on every call would
double their cost. Interpreters started with ``PYTHONDONTWRITEBYTECODE=1`` (common in agent
harnesses and CI images) read ``__pycache__`` but never write it, so an editable install
could stay uncompiled forever. Every cold command (and the detached refresher, which hooks
start regularly) therefore compiles the package once its sources change; ``py_compile``
writes regardless of that variable. Best effort: a read-only install is left as it is.
"""

from __future__ import annotations

import os


def ensure_compiled(package: str | None = None) -> int:
    """Compile any module of ``package`` (default: yupana) whose bytecode is missing or
    older than its source; return how many were compiled."""
    import importlib.util

    package = package or os.path.dirname(os.path.abspath(__file__))
    stale: list[str] = []
    for dirpath, dirnames, filenames in os.walk(package):
        dirnames[:] = [d for d in dirnames if d not in ("__pycache__", "_data")]
        for name in filenames:
            if not name.endswith(".py"):
                continue
            source = os.path.join(dirpath, name)
            compiled = importlib.util.cache_from_source(source)
            try:
                if os.stat(compiled).st_mtime_ns >= os.stat(source).st_mtime_ns:
                    continue
            except OSError:
                pass
            stale.append(source)
    if not stale:
        return 0
    import py_compile

    done = 0
    for source in stale:
        try:
            py_compile.compile(source, doraise=True)
            done += 1
        except (OSError, py_compile.PyCompileError):
            continue
    return done
