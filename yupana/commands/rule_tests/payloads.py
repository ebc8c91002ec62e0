"""A case's client input as the payload its client sends the hook (docs/hook-input.md). Cold path.

The shorthand is written as Claude Code writes ``Edit``, ``Write``, ``MultiEdit`` and ``Bash``
calls, and as Codex writes ``apply_patch`` (``text``: a new file of those lines; ``old``/``new``:
an update of the file whose content is ``before``, else ``old``). With ``hook = "post-edit"`` the
shorthand is the ``PostToolUse`` call of the same tool. A raw ``payload`` is sent as
written, with ``cwd`` (when it has none) and ``session_id`` (when it has none) filled in.
"""

from __future__ import annotations

from typing import Any

import os

from yupana.commands.rule_tests.cases import Case


def file_before(case: Case) -> str | None:
    """The content the edited file has before the edit (None: it does not exist)."""
    if case.before is not None:
        return case.before
    if case.tool in ("Edit", "MultiEdit", "apply_patch") and case.old is not None:
        return case.old
    return None


def build(case: Case, cwd: str, session: str) -> dict[str, Any]:
    """The payload for ``case``, run in the directory ``cwd`` (absolute) in session ``session``."""
    if case.payload is not None:
        payload = dict(case.payload)
        payload.setdefault("cwd", cwd)
        payload.setdefault("session_id", session)
        return payload
    event = "PostToolUse" if case.hook == "post-edit" else "PreToolUse"
    base: dict[str, Any] = {"session_id": session, "cwd": cwd, "hook_event_name": event, "tool_name": case.tool}
    if case.tool == "Bash":
        return dict(base, tool_input={"command": case.command})
    path = os.path.join(cwd, case.path or "")
    if case.tool == "Write":
        return dict(base, tool_input={"file_path": path, "content": case.text})
    old, new = (case.old, case.new) if case.text is None else ("", case.text)
    if case.tool == "Edit":
        return dict(base, tool_input={"file_path": path, "old_string": old, "new_string": new})
    if case.tool == "MultiEdit":
        return dict(base, tool_input={"file_path": path, "edits": [{"old_string": old, "new_string": new}]})
    return dict(base, turn_id=f"{session}-turn", tool_input={"command": _patch(path, case)})


def _patch(path: str, case: Case) -> str:
    if case.text is not None:
        body = [f"*** Add File: {path}"] + ["+" + line for line in case.text.split("\n")]
    else:
        body = [f"*** Update File: {path}", "@@"]
        body += ["-" + line for line in (case.old or "").split("\n")]
        body += ["+" + line for line in (case.new or "").split("\n")]
    return "\n".join(["*** Begin Patch", *body, "*** End Patch"]) + "\n"
