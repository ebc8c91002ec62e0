"""What every installer shares: reading one client settings/hooks file for ``yupana status``.

Cold path. The merge itself is :mod:`yupana.commands.install.hooks` (the JSON shape Claude
Code, Codex, Gemini CLI and Qwen Code share) and :func:`yupana.commands.install.settings_file`
(read, merge, diff or write under the lock).
"""

from __future__ import annotations

from typing import Any

import os

from yupana.commands.install import hooks as install_hooks


def read_registration(scope: str, path: str) -> dict[str, Any]:
    """Our hooks in one settings/hooks file: ``{scope, path, error, hooks: [...]}``."""
    reg: dict[str, Any] = {"scope": scope, "path": path, "error": None, "hooks": []}
    try:
        text, data = install_hooks.read(path)
    except install_hooks.HooksFileError as exc:
        reg["error"] = str(exc)
        return reg
    if text is not None:
        reg["hooks"] = install_hooks.inspect(data)
    return reg


def read_places(places: list[tuple[str, str]]) -> list[dict[str, Any]]:
    """:func:`read_registration` of each (scope, path), a file reached twice (a symlink) read once."""
    out, done = [], set()
    for scope, path in places:
        real = os.path.realpath(path)
        if real in done:
            continue
        done.add(real)
        out.append(read_registration(scope, path))
    return out


def found_dirs(candidates: list[tuple[str, str | None]]) -> list[str]:
    """The labels of the candidates that exist: (label, a command path or a directory, or None)."""
    return [label for label, hit in candidates if hit and (os.path.isdir(hit) or os.path.isfile(hit))]
