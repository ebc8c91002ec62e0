"""controls.json: the control files' fingerprints as the last hook of a project saw them.

One file per project, ``<state>/projects/<project key>/controls.json``
(:func:`path`), read with the hardened reader (a FIFO, a device or an oversized file is
no file) and replaced atomically, so two hooks never see half of it. Its shape::

    {"version": 1, "files": {"<abs path>": {"stat": [ino, size, mtime_ns, ctime_ns] | null,
                                            "digest": "<sha256 hex>" | null,
                                            "summary": {...what loosening is judged on...}}}}

``stat`` null: the file was absent. Hot path, standard library only.
"""

from __future__ import annotations

import os

from yupana import fastjson
from yupana.state import paths, statefile

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from typing import Any

VERSION = 1


def path(project_key: str) -> str | None:
    """Where ``project_key``'s last-seen control fingerprints live (None without a state dir)."""
    base = paths.state_dir()
    return os.path.join(base, "projects", project_key, "controls.json") if base else None


def read(target: str | None) -> dict[str, dict[str, Any]]:
    """The last-seen entries by file ({} when none, unreadable or of another version)."""
    if not target:
        return {}
    try:
        data = fastjson.loads(statefile.read(target, statefile.SMALL_LIMIT))
    except (OSError, ValueError, UnicodeDecodeError):  # a refused FIFO or device is noted by statefile
        return {}
    if not isinstance(data, dict) or data.get("version") != VERSION or not isinstance(data.get("files"), dict):
        return {}
    return {k: v for k, v in data["files"].items() if isinstance(v, dict)}


def write(target: str, files: dict[str, dict[str, Any]]) -> str | None:
    """Replace the file with ``files``; None, or why it could not be written."""
    from yupana.state import atomic  # only when something moved: a steady hook reads, never writes

    data = fastjson.dumps({"version": VERSION, "files": files}).encode("utf-8", "surrogateescape")
    return atomic.write_quietly(target, data)
