"""Qwen Code's adapter: Claude Code's hook shape under Qwen's own tool names. Hot path: no imports.

Measured in the real binary (0.24.4, docs/clients/qwen.md):

* Its payload is Claude Code's (``session_id``, ``transcript_path``, ``cwd``,
  ``hook_event_name`` ``PreToolUse``/``PostToolUse``, ``prompt_id``, ``tool_use_id``, …) plus
  ``tool_call_id``; its tools are ``write_file {file_path, content}``, ``edit {file_path,
  old_string, new_string, replace_all}``, ``notebook_edit {notebook_path, new_source, …}``,
  ``run_shell_command {command, directory, …}`` and ``monitor {command, directory, …}`` (a
  long-running shell command). :func:`translate` renames them to the canonical tools; a shell
  command given a ``directory`` is read as ``cd <directory> && <command>``, so relative paths
  resolve where it runs.
* It reads Claude Code's deny (``hookSpecificOutput.permissionDecision: "deny"``) and hands
  the reason to the model as the tool's error, verbatim. A ``PreToolUse`` answer's
  ``additionalContext`` reaches nobody (allow or deny); a ``PostToolUse`` one is appended to
  the tool result the model reads. ``systemMessage`` goes to its debug log (nothing headless).
  So the row sends every notice to the model (``shows_user=False``) on ``PostToolUse`` only,
  and :func:`shape` folds a ``PreToolUse`` deny's notices into the reason, the one text of a
  ``PreToolUse`` answer the model reads.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from typing import Any

# Qwen Code's tool name -> the canonical one (yupana.clients.CANONICAL); its row lists the same names
CANONICAL_TOOL = {"write_file": "Write", "edit": "Edit", "notebook_edit": "NotebookEdit",
                  "run_shell_command": "Bash", "monitor": "Bash"}


def translate(data: dict[str, Any]) -> dict[str, Any]:
    """The payload in the canonical shape: Qwen's tool renamed, a shell ``directory`` made a ``cd``."""
    tool = data.get("tool_name")
    canonical = CANONICAL_TOOL.get(tool) if isinstance(tool, str) else None
    if canonical is None:
        return data  # a tool the row does not list: passed through (the runtime's UNKNOWN)
    out = dict(data)
    out["tool_name"] = canonical
    tool_input = data.get("tool_input")
    if canonical == "Bash" and isinstance(tool_input, dict):
        directory, command = tool_input.get("directory"), tool_input.get("command")
        if isinstance(directory, str) and directory and isinstance(command, str):
            out["tool_input"] = dict(tool_input, command=f"cd {_quote(directory)} && {command}")
    return out


def _quote(word: str) -> str:
    """``word`` as one POSIX shell word (shlex.quote, without importing it)."""
    return "'" + word.replace("'", "'\\''") + "'"


def shape(deny: str | None, model: list[str], user: list[str], event: str) -> dict[str, Any]:
    """The stdout object. A ``PreToolUse`` deny carries every notice in its reason (Qwen shows the
    reason to the model and drops the rest of a PreToolUse answer); ``PostToolUse`` notices go in
    ``additionalContext``; ``systemMessage`` is written too, for Qwen's own log and UI."""
    out: dict[str, Any] = {}
    if deny is not None and event == "PreToolUse":
        notices = [n for n in model + user if n]
        reason = "\n\n".join([deny, *notices]) if notices else deny
        out["hookSpecificOutput"] = {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                     "permissionDecisionReason": reason}
    elif model:
        out["hookSpecificOutput"] = {"hookEventName": event, "additionalContext": "\n\n".join(model)}
    if user:
        out["systemMessage"] = "\n".join(user)
    return out
