"""GitHub Copilot CLI's adapter: its camelCase payload in, its flat answer out. Hot path: our fastjson only.

What Copilot CLI 1.0.102 sends and reads (proven in the real binary: tests/clients/test_copilot.py;
docs/clients/copilot.md):

* Registered under its own ``preToolUse`` / ``postToolUse`` events, the payload is
  ``{sessionId, timestamp, cwd, toolName, toolArgs}`` (``postToolUse`` adds ``toolResult``).
  ``toolArgs`` is an object (the docs say a JSON string: both are read). Its tools name
  their fields its own way: ``edit {path, old_str, new_str}``, ``create {path, file_text}``,
  ``str_replace_editor {command, path, old_str, new_str, file_text, insert_line}``,
  ``apply_patch`` (a patch), ``bash {command, description}``.
* Registered under Claude's ``PreToolUse`` (a hand registration copied from Claude Code's
  docs), it sends snake_case keys and Claude's tool names (``Edit``, ``Write``, ``Bash``) but
  still its own field names: :func:`translate` reads both.
* Deny: the flat ``{"permissionDecision": "deny", "permissionDecisionReason": …}`` under
  ``preToolUse`` (a nested ``hookSpecificOutput`` is ignored there, and the edit lands);
  under ``PreToolUse`` the nested one wins. :func:`shape` writes both, with the same reason:
  the model is sent ``Denied by preToolUse hook: <reason>``.
* Model notices: a flat ``additionalContext`` (preToolUse: a user message "Additional
  context from preToolUse hook:"; postToolUse: appended to the tool result). A
  ``systemMessage`` is shown to nobody, so the row sends every notice to the model.
* It fails CLOSED: a hook that errors (yupana missing: exit 127) denies the tool. Only the
  skew-proof wrapper makes every yupana failure an allow (the installer writes it).
"""

from __future__ import annotations

from yupana import fastjson

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from typing import Any

# Copilot's field name -> the canonical (Claude Code) one, per canonical tool
_EDIT_FIELDS = {"path": "file_path", "old_str": "old_string", "new_str": "new_string"}
_WRITE_FIELDS = {"path": "file_path", "file_text": "content"}
# its tool -> (canonical tool, field map); str_replace_editor and apply_patch are read by hand
_TOOLS = {"edit": ("Edit", _EDIT_FIELDS), "create": ("Write", _WRITE_FIELDS), "bash": ("Bash", {}),
          "Edit": ("Edit", _EDIT_FIELDS), "Write": ("Write", _WRITE_FIELDS), "Bash": ("Bash", {})}
_EDITOR = {"str_replace": ("Edit", _EDIT_FIELDS), "create": ("Write", _WRITE_FIELDS),
           "insert": ("Edit", {"path": "file_path", "new_str": "new_string"})}


# Claude's tool names, as a PreToolUse registration sends them -> Copilot's own
_OWN = {"Edit": "edit", "Write": "create", "Bash": "bash"}


def tool_name(data: dict[str, Any]) -> object:
    """Copilot's own name for the tool (``toolName``; under a ``PreToolUse`` registration it sends
    Claude's names, mapped back): what its row lists, and what records carry."""
    if "toolName" in data:
        return data["toolName"]
    tool = data.get("tool_name")
    return _OWN.get(tool, tool) if isinstance(tool, str) else tool


def translate(data: dict[str, Any]) -> dict[str, Any]:
    """The payload in the canonical shape (Claude Code's keys, tool names and fields).

    A tool this adapter does not know keeps its own name and arguments: the runtime makes it
    a loud UNKNOWN. Arguments that are not an object stay as they are (the edit model notes
    them as unreadable)."""
    tool = _first(data, "toolName", "tool_name")
    args = _first(data, "toolArgs", "tool_input")
    if isinstance(args, str) and args.lstrip().startswith("{"):  # the JSON-string form its docs describe
        try:
            args = fastjson.loads(args)
        except (ValueError, RecursionError):
            pass  # left as a string: a patch's text, or unreadable (noted by the edit model)
    event = data.get("hook_event_name")
    if not isinstance(event, str):
        event = "PostToolUse" if "toolResult" in data or "tool_response" in data else "PreToolUse"
    out: dict[str, Any] = {"session_id": _first(data, "sessionId", "session_id"), "cwd": data.get("cwd"),
                           "hook_event_name": event}
    name, tool_input = _tool(tool, args)
    out["tool_name"] = name
    if tool_input is not None:
        out["tool_input"] = tool_input
    return out


def _first(data: dict[str, Any], *keys: str) -> Any:
    for key in keys:
        if key in data:
            return data[key]
    return None


def _tool(tool: object, args: object) -> tuple[object, object]:
    """(canonical tool name, canonical tool_input) for one Copilot tool call."""
    if tool == "apply_patch":
        if isinstance(args, str):
            return "apply_patch", {"command": args}
        if isinstance(args, dict) and "command" not in args:
            for key in ("input", "patch"):
                if isinstance(args.get(key), str):
                    return "apply_patch", {"command": args[key]}
        return "apply_patch", args
    if tool == "str_replace_editor" and isinstance(args, dict):
        command = args.get("command")
        mapped = _EDITOR.get(command) if isinstance(command, str) else None
        if mapped is None:
            return tool, args  # view, undo_edit, or something new: not read, so UNKNOWN
        return mapped[0], _fields(args, mapped[1])
    mapped = _TOOLS.get(tool) if isinstance(tool, str) else None
    if mapped is None or not isinstance(args, dict):
        return (mapped[0] if mapped else tool), args
    return mapped[0], _fields(args, mapped[1])


def _fields(args: dict[str, Any], names: dict[str, str]) -> dict[str, Any]:
    """``args`` with Copilot's field names renamed; a canonical name already there wins."""
    out = {k: v for k, v in args.items() if k not in names}
    for theirs, ours in names.items():
        if theirs in args and ours not in out:
            out[ours] = args[theirs]
    return out


def shape(deny: str | None, model: list[str], user: list[str], event: str) -> dict[str, Any]:
    """The stdout object. A deny (``deny``: the reason) answers PreToolUse only, flat (what
    ``preToolUse`` reads) and nested (what a ``PreToolUse`` registration reads); model
    notices are ``additionalContext``; ``{}`` is a silent allow."""
    out: dict[str, Any] = {}
    if deny is not None and event == "PreToolUse":
        out["permissionDecision"] = "deny"
        out["permissionDecisionReason"] = deny
        out["hookSpecificOutput"] = {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                     "permissionDecisionReason": deny}
    if model:
        out["additionalContext"] = "\n\n".join(model)
    if user:
        out["systemMessage"] = "\n".join(user)
    return out
