"""Codex's adapter: Claude Code's hook shape, with ``apply_patch`` for every file edit. Hot path.

Codex reads the same answer as Claude Code (``permissionDecision: "deny"``; it shows
``<reason>. Command: <patch>`` to the model). ``codex exec`` shows a ``systemMessage`` to
nobody, so its row sends every notice to the model too (``shows_user=False``).
docs/clients/codex.md.
"""

from __future__ import annotations

from yupana.clients.claude_code import shape

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from typing import Any

__all__ = ["shape", "translate"]


def translate(data: dict[str, Any]) -> dict[str, Any]:
    """The payload in the canonical shape: Codex's own (``apply_patch`` is canonical), unchanged."""
    return data
