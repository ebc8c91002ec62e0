"""Gemini CLI's adapter: its ``BeforeTool`` / ``AfterTool`` payloads in, its answer out. Hot path: ``os`` only.

Gemini CLI 0.61 sends ``hook_event_name`` ``BeforeTool`` / ``AfterTool`` and its own tool
names and fields (docs/clients/gemini.md):

==================  ==============================================  =====================================
Gemini tool         ``tool_input``                                  read as
==================  ==============================================  =====================================
write_file          file_path, content                              Write
replace             file_path, old_string, new_string,              Edit (``replace_all`` from
                    allow_multiple, instruction                     ``allow_multiple``); an empty
                                                                    ``old_string`` creates the file: Write
run_shell_command   command, description, dir_path, is_background   Bash (run in ``dir_path``, resolved
                                                                    against the payload's ``cwd``)
==================  ==============================================  =====================================

Any other tool is passed through under its own name: the hook makes it a loud UNKNOWN.

Answer. **Gemini never reads ``permissionDecision``** (a Claude-shaped deny is an allow): a
deny is ``{"decision": "deny", "reason": …}`` on stdout, exit 0, and the model is sent
``Tool execution blocked: <reason>``. ``systemMessage`` is shown to the user (stderr in
headless runs), never to the model. Only ``AfterTool`` carries model context
(``hookSpecificOutput.additionalContext``, appended to the tool result as
``<hook_context>…</hook_context>``); ``BeforeTool`` has no model channel besides the deny
reason. Never written: ``continue: false`` (it stops the whole agent) and
``hookSpecificOutput.tool_input`` (it rewrites the call).
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from typing import Any

EVENTS = {"BeforeTool": "PreToolUse", "AfterTool": "PostToolUse"}  # Gemini's event -> the canonical one
_OWN_EVENT = {v: k for k, v in EVENTS.items()}


def translate(data: dict[str, Any]) -> dict[str, Any]:
    """The payload in the canonical (Claude Code) shape; a tool it does not know keeps its name."""
    out = dict(data)
    event = data.get("hook_event_name")
    if isinstance(event, str) and event in EVENTS:
        out["hook_event_name"] = EVENTS[event]
    tool = data.get("tool_name")
    ti = data.get("tool_input")
    if not isinstance(ti, dict):
        return out
    if tool == "write_file":
        out["tool_name"] = "Write"
        out["tool_input"] = _keep(ti, ("file_path", "content"))
    elif tool == "replace":
        old = ti.get("old_string")
        if old == "" and "new_string" in ti:  # Gemini creates the file from new_string
            out["tool_name"] = "Write"
            out["tool_input"] = {"file_path": ti.get("file_path"), "content": ti.get("new_string")}
        else:
            out["tool_name"] = "Edit"
            out["tool_input"] = _keep(ti, ("file_path", "old_string", "new_string"))
            if "allow_multiple" in ti:
                out["tool_input"]["replace_all"] = ti["allow_multiple"]
    elif tool == "run_shell_command":
        out["tool_name"] = "Bash"
        out["tool_input"] = _keep(ti, ("command", "description"))
        where = ti.get("dir_path")
        cwd = data.get("cwd")
        if isinstance(where, str) and where and "\x00" not in where and isinstance(cwd, str) and cwd:
            out["cwd"] = os.path.normpath(os.path.join(cwd, where))
    return out


def _keep(ti: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    return {k: ti[k] for k in keys if k in ti}


def shape(deny: str | None, model: list[str], user: list[str], event: str) -> dict[str, Any]:
    """The stdout object (``{}`` is a silent allow). A deny answers ``BeforeTool`` only; model
    notices ride ``AfterTool``'s ``additionalContext``, a ``BeforeTool`` deny's reason (what the
    model is sent), or else — ``BeforeTool`` has no model channel — the user's ``systemMessage``,
    never dropped. User notices are ``systemMessage``."""
    out: dict[str, Any] = {}
    user = list(user)
    if deny is not None and event == "PreToolUse":
        out["decision"] = "deny"
        out["reason"] = "\n\n".join([deny, *model])
    elif model and event == "PostToolUse":
        out["hookSpecificOutput"] = {"hookEventName": _OWN_EVENT[event], "additionalContext": "\n\n".join(model)}
    else:
        user += [m for m in model if m not in user]
    if user:
        out["systemMessage"] = "\n".join(user)
    return out
