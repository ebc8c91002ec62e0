"""The one JSON convention of every ``--json`` output (docs/json.md).

Every document a command prints with ``--json`` goes through :func:`emit`, which adds two
top-level keys:

* ``schema`` — ``"yupana.<command>/<n>"``: which document this is and its major version ``n``
  (the JSON Schema is ``yupana/schemas/<command>.schema.json``);
* ``yupana_version`` — the version of yupana that wrote it.

Older keys stay (``schema_version`` in status, explain, ci-select and config): documented as
deprecated in docs/json.md, removed only with a major bump.
"""

from __future__ import annotations

from typing import Any

import json
import os
import sys

SCHEMAS_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "schemas")


def schema_id(command: str, version: int = 1) -> str:
    return f"yupana.{command}/{version}"


def stamp(command: str, doc: dict[str, Any], version: int = 1) -> dict[str, Any]:
    """``doc`` with ``schema`` and ``yupana_version`` first (an existing ``schema`` is kept)."""
    from yupana import __version__

    return {"schema": doc.get("schema") or schema_id(command, version), "yupana_version": __version__,
            **{k: v for k, v in doc.items() if k != "schema"}}


def emit(command: str, doc: dict[str, Any], version: int = 1, *, sort_keys: bool = True, indent: int | None = 2) -> None:
    """Print ``doc`` as the ``--json`` output of ``command``, stamped (see module doc)."""
    sys.stdout.write(json.dumps(stamp(command, doc, version), indent=indent, sort_keys=sort_keys,
                                ensure_ascii=False) + "\n")


def schema_path(command: str) -> str:
    return os.path.join(SCHEMAS_DIR, f"{command}.schema.json")
