"""Claude Code's adapter: its payload *is* yupana's canonical shape. Hot path: no imports.

Deny: ``hookSpecificOutput.permissionDecision: "deny"`` with the reason (shown to the model
after ``hook error:``); model notices: ``hookSpecificOutput.additionalContext``; user notices:
``systemMessage``. docs/clients/claude-code.md.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from typing import Any


def translate(data: dict[str, Any]) -> dict[str, Any]:
    """The payload in the canonical shape: Claude Code's own, unchanged."""
    return data


def shape(deny: str | None, model: list[str], user: list[str], event: str) -> dict[str, Any]:
    """The stdout object: a deny (``deny`` the reason) answers PreToolUse only; ``{}`` is a silent allow."""
    out: dict[str, Any] = {}
    if deny is not None and event == "PreToolUse":
        out["hookSpecificOutput"] = {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                     "permissionDecisionReason": deny}
        if model:
            out["hookSpecificOutput"]["additionalContext"] = "\n\n".join(model)
    elif model:
        out["hookSpecificOutput"] = {"hookEventName": event, "additionalContext": "\n\n".join(model)}
    if user:
        out["systemMessage"] = "\n".join(user)
    return out
