"""What ``yupana install`` registers, how ours are recognised, and the merge into a hooks file.

Both clients read the same shape — ``{"hooks": {"PreToolUse": [{"matcher": …, "hooks":
[{"type": "command", "command": …, "timeout": 5}]}], "PostToolUse": […]}}`` — in
``.claude/settings.json`` / ``~/.claude/settings.json`` (Claude Code) and
``$CODEX_HOME/hooks.json`` (Codex). Every command goes through the skew-proof wrapper
(docs/integration.md) with the absolute path of the yupana that is installing.

A handler is *ours* only when its command is exactly our wrapper or a bare ``yupana … hook
<event> [our flags]`` (:mod:`yupana.commands.install.ours`) — hand-written registrations from
the docs included, so an install upgrades them (keeping their ``--tenant`` / ``--config``,
:func:`carried_flags`) and an uninstall removes them. A user's command that merely runs or
names a yupana hook is not ours: :func:`foreign` lists them for the caller to report, and
nothing changes them. Nothing else in the file is touched: other keys, other hooks, and the
position of every other handler (Codex keys its trust by position, :func:`positions` lets
the caller carry trust over when one moves).

:func:`inspect` is the read side (for ``yupana status``): which of ours a file registers,
with what command and timeout.
"""

from __future__ import annotations

from typing import Any

import copy
import os
import shlex
import sys

from yupana import clients
import yupana.commands.install.jsontext as jsontext  # not "from the package": its __init__ imports this module
import yupana.commands.install.ours as ours

TIMEOUT_SECS = 5
EDIT_MATCHER = "Edit|Write|MultiEdit|NotebookEdit"
EVENTS = ("pre-edit", "pre-bash", "post-edit")



def plan(client: str) -> tuple[tuple[str, str, str], ...]:
    """(event in the settings file, matcher, our event) for every hook ``client`` (a registry
    name or install word, :mod:`yupana.clients`) registers."""
    row = clients.get(client)
    if row is None:
        raise KeyError(client)
    return row.plan


class HooksFileError(Exception):
    """The existing file cannot be merged into (unreadable, not JSON, wrong shape). Nothing was written."""


def yupana_command() -> str:
    """The shell words that run this very yupana: its bin/yupana script, else ``python -m yupana``."""
    candidates = [sys.argv[0] if os.path.basename(sys.argv[0]) == "yupana" else "",
                  os.path.join(os.path.dirname(sys.executable), "yupana")]
    for path in candidates:
        if path and os.path.isfile(path) and os.access(path, os.X_OK):
            return shlex.quote(os.path.abspath(path))
    return f"{shlex.quote(os.path.abspath(sys.executable))} -m yupana"


Flags = tuple[tuple[str, str], ...]  # (--tenant|--config, value), as ours.Registration.flags


def wrapper(event: str, command: str | None = None, flags: Flags = (), client: str | None = None) -> str:
    """The skew-proof wrapper: any failure of yupana is an allow, and a crash prints nothing.
    ``client``: the registry name the hook is told (``--client``), for rows that ask for it."""
    return (f"out=$({command or yupana_command()} {ours.render(event, flags, client)} 2>/dev/null) || exit 0; "
            "printf '%s' \"$out\"")


def our_event(handler: object) -> str | None:
    """``pre-edit`` / ``pre-bash`` / ``post-edit`` when the handler is our registration, else None."""
    found = ours.parse(handler.get("command")) if isinstance(handler, dict) else None
    return found.event if found else None


def runs_event(handler: object) -> str | None:
    """The yupana hook event a handler runs or names, ours or a user's command around it."""
    return ours.mentions(handler.get("command")) if isinstance(handler, dict) else None


def desired(client: str, command: str | None = None,
            flags: dict[str, Flags] | None = None) -> list[tuple[str, str, dict[str, Any]]]:
    """(file event, matcher, handler) for every hook ``client`` should have (``flags``: per event)."""
    row = clients.get(client)
    if row is None:
        raise KeyError(client)
    hint = row.name if row.hint else None
    return [(file_event, matcher, {"type": "command", "timeout": row.timeout,
                                   "command": wrapper(event, command, (flags or {}).get(event, ()), hint)})
            for file_event, matcher, event in row.plan]


class FlagConflict(HooksFileError):
    """Our registrations disagree on --tenant/--config and the command line does not settle it."""


def carried_flags(data: dict[str, Any], explicit: Flags, path: str) -> dict[str, Flags]:
    """The ``--tenant`` / ``--config`` each of our events keeps: the command line's (``explicit``),
    else what the existing registration of that event carries, else — for an event not yet
    registered — what all existing ones share. FlagConflict when registrations disagree."""
    found: dict[str, set[Flags]] = {}
    for handler in _handlers(data):
        reg = ours.parse(handler.get("command"))
        if reg:
            found.setdefault(reg.event, set()).add(_override(reg.flags, explicit))
    shared = set().union(*found.values()) if found else {_override((), explicit)}
    out = {}
    for event in EVENTS:
        options = found.get(event) or shared
        if len(options) > 1:
            seen = "; ".join(" ".join(f"{k} {v}" for k, v in o) or "no flags" for o in sorted(options))
            raise FlagConflict(f"{path}: yupana's {'registrations' if event not in found else event + ' registrations'} "
                               f"carry different --tenant/--config ({seen}); pass --tenant and/or --config to say "
                               "which the registration keeps — nothing was written")
        out[event] = next(iter(options))
    return out


def _override(flags: Flags, explicit: Flags) -> Flags:
    values = dict(flags)
    values.update(explicit)
    return tuple((name, values[name]) for name in ours.CARRIED if name in values)


def foreign(data: dict[str, Any]) -> list[tuple[str, str]]:
    """(file event, command) of every handler that runs or names a yupana hook but is not ours."""
    return [(file_event, h["command"]) for file_event, h in _each(data)
            if runs_event(h) and not our_event(h)]


def _handlers(data: dict[str, Any]) -> list[dict[str, Any]]:
    return [h for _e, h in _each(data)]


def _each(data: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return []
    return [(file_event, h) for file_event, groups in hooks.items() if isinstance(groups, list)
            for g in groups if isinstance(g, dict) and isinstance(g.get("hooks"), list)
            for h in g["hooks"] if isinstance(h, dict)]


def read(path: str) -> tuple[str | None, dict[str, Any]]:
    """The file's text (None when absent) and its JSON object; HooksFileError when unusable."""
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except FileNotFoundError:
        return None, {}
    except (OSError, UnicodeDecodeError) as exc:
        raise HooksFileError(f"cannot read {path}: {exc}") from None
    if not text.strip():
        return text, {}
    try:
        data = jsontext.loads(text)
    except RecursionError:
        raise HooksFileError(f"{path} nests deeper than this tool reads; nothing was written") from None
    except ValueError as exc:
        raise HooksFileError(f"{path} is not valid JSON ({exc}); fix it or move it aside — nothing was written") from None
    if not isinstance(data, dict):
        raise HooksFileError(f"{path} holds a JSON {type(data).__name__}, not an object; nothing was written")
    hooks = data.get("hooks", {})
    if not isinstance(hooks, dict):
        raise HooksFileError(f"{path}: \"hooks\" is not an object; nothing was written")
    for name, groups in hooks.items():
        if not isinstance(groups, list) or not all(isinstance(g, dict) for g in groups):
            raise HooksFileError(f"{path}: hooks.{name} is not a list of matcher groups; nothing was written")
        for g in groups:
            if not isinstance(g.get("hooks", []), list):
                raise HooksFileError(f"{path}: a hooks.{name} group's \"hooks\" is not a list; nothing was written")
    return text, data


def render(data: dict[str, Any]) -> str:
    """The file's text: every number as it was read (``1e400`` stays ``1e400``), lone surrogates escaped."""
    try:
        return jsontext.dumps(data) + "\n"
    except RecursionError:
        raise HooksFileError("the settings nest deeper than this tool writes; nothing was written") from None


def positions(data: dict[str, Any]) -> dict[int, tuple[str, int, int]]:
    """id(handler) -> (file event, group index, handler index), for carrying trust across a move."""
    out = {}
    for file_event, groups in (data.get("hooks") or {}).items():
        for gi, group in enumerate(groups):
            for hi, handler in enumerate(group.get("hooks") or []):
                out[id(handler)] = (file_event, gi, hi)
    return out


def merge(data: dict[str, Any], wanted: list[tuple[str, str, dict[str, Any]]]) -> dict[str, Any]:
    """A copy of ``data`` with exactly ``wanted`` as our hooks; others keep their place.

    One of ours already registered is updated in its slot (its group keeps its position);
    a missing one is appended as a group of its own; a duplicate of ours is dropped.
    Handler objects that are not ours are the very objects of ``data`` (see :func:`positions`).
    """
    new = dict(data)
    hooks = {k: [dict(g, hooks=list(g.get("hooks") or [])) if isinstance(g.get("hooks"), list) else dict(g)
                 for g in v] for k, v in (data.get("hooks") or {}).items()}
    for file_event, matcher, handler in wanted:
        event = our_event(handler)
        placed = False
        for group in hooks.setdefault(file_event, []):
            kept = []
            for existing in group.get("hooks") or []:
                if our_event(existing) != event:
                    kept.append(existing)
                elif not placed and (group.get("matcher") == matcher or len(group["hooks"]) == 1):
                    kept.append(copy.deepcopy(handler))
                    group["matcher"] = matcher
                    placed = True
                # else: a duplicate of ours, or ours in a shared group under another matcher: dropped
            if "hooks" in group:
                group["hooks"] = kept
        if not placed:
            hooks[file_event].append({"matcher": matcher, "hooks": [copy.deepcopy(handler)]})
    new["hooks"] = _drop_emptied(hooks, data)
    return new


def remove(data: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``data`` without any of our handlers (groups left empty by that are dropped)."""
    new = dict(data)
    if "hooks" not in data:
        return new
    hooks = {k: [dict(g, hooks=[h for h in g.get("hooks") or [] if our_event(h) is None]) for g in v]
             for k, v in data["hooks"].items()}
    new["hooks"] = _drop_emptied(hooks, data)
    if not new["hooks"] and not data["hooks"] == {}:
        del new["hooks"]
    return new


def _drop_emptied(hooks: dict[str, Any], before: dict[str, Any]) -> dict[str, Any]:
    """Drop the groups (and then events) that our edit left empty; ones already empty stay."""
    old = before.get("hooks") or {}
    out = {}
    for name, groups in hooks.items():
        was = old.get(name) or []
        kept = [g for i, g in enumerate(groups)
                if g.get("hooks") or (i < len(was) and not (was[i].get("hooks") or []))]
        if kept or name in old and not old[name]:
            out[name] = kept
    return out


def inspect(data: dict[str, Any], strict: bool = False) -> list[dict[str, Any]]:
    """The handlers that run a yupana hook (``strict``: only our registrations) in a parsed hooks
    file: event, file event, matcher, command, timeout, wrapped, and where (``slot``: [group,
    handler] — Codex keys trust by it) and the ``handler`` itself."""
    found = []
    for file_event, groups in (data.get("hooks") or {}).items():
        if not isinstance(groups, list):
            continue
        for gi, group in enumerate(groups):
            if not isinstance(group, dict):
                continue
            for hi, handler in enumerate(group.get("hooks") or []):
                event = our_event(handler) if strict else runs_event(handler)
                if event:
                    command = handler["command"]
                    found.append({"event": event, "file_event": file_event, "matcher": group.get("matcher"),
                                  "command": command, "timeout": handler.get("timeout"),
                                  "wrapped": "|| exit 0" in command, "slot": [gi, hi], "handler": handler})
    return found
