"""A hook's stdin turned into edits. Hot path: standard library (``os``) and our own modules.

:func:`parse` reads a hook payload in the canonical shape — the sending client's adapter
(:mod:`yupana.clients`) translates its own into it first — (``session_id``, ``cwd``,
``hook_event_name``, ``tool_name``, ``tool_input``, ``tool_use_id``) and yields one
:class:`FileEdit` per file the tool call would touch:

============  ===========================================================  ==========
tool          ``tool_input`` fields read                                    op
============  ===========================================================  ==========
Edit          file_path, old_string, new_string, replace_all                 edit
MultiEdit     file_path, edits[] of {old_string, new_string, replace_all}    multi_edit
Write         file_path, content                                            write
NotebookEdit  notebook_path, new_source, cell_id, cell_type, edit_mode       notebook
apply_patch   command (the patch; a heredoc or ``apply_patch <<EOF`` form)   add / delete /
                                                                            update / move
Bash          command (carried for pre-bash; no edits)                       —
============  ===========================================================  ==========

Every field is optional and unknown fields are ignored. A field of the wrong type is
treated as absent and noted — never a crash. ``parse`` returns None only when the input is
not a JSON object at all (empty, binary, malformed): the hook's silent allow. Problems live
in two places:

* ``Invocation.problems`` — everything that kept the *reading* from being complete:
  mistyped or missing fields, tolerated variants (``tool_input.input``, a bare string…),
  unsupported or invalid patch syntax, symlinks that could not be resolved. The hook turns
  a non-empty list into an UNKNOWN metric and a fail-open advisory.
* ``FileEdit.problems`` — why *this file's* buffer cannot be known: filled by
  :func:`proposed_buffer` ("anchor missing/ambiguous/fuzzy", "no such file", …). For a
  Codex patch these are UNKNOWN too (Codex may still apply a fuzzy match); for Edit and
  MultiEdit the tool itself rejects a missing or ambiguous anchor.

Introduced text is only what the edit adds: ``new_string`` (MultiEdit: every
``new_string``, joined with ``\\n``), ``content``, the new cell source, the ``+`` lines of
a patch — never unchanged context.

Paths. ``path`` is absolute and lexically normalised (relative paths are resolved against
the payload ``cwd``, else the process cwd). ``project`` is the project the file is judged
under (:mod:`yupana.project_root`: the outermost ``.bobbin/config.toml`` above the file — those
below it are nested, tightening-only layers — else above its real path, else above the cwd,
else none — then the file's git top-level or the cwd is the base); ``rel``
is relative to ``project.root`` — the one repo-relative path every plane matches — or the
absolute path with ``outside=True`` when the file lies outside that root.
``real_path``/``real_rel`` are the same with symlinks resolved (``os.path.realpath``, the
root resolved too). ``Invocation.project`` is the first file's project (no file: the
cwd's). Which to use:

* **path scope and tripwires** — match ``rel`` *and* ``real_rel``: a deny glob that matches
  either denies, an allow list must admit both, so a symlink cannot carry an edit out of
  (or into) a scope;
* **rule gating by language / extension, messages, records** — ``rel`` (what the agent named);
* **reading the file, git top, repository name** — ``path`` (the OS follows the links).

The model itself (:class:`FileEdit`, :class:`Invocation`, :func:`new_edit`) is :mod:`model`,
re-exported here. Loaded on first use, behind same-named functions: :mod:`rebuild`
(:func:`proposed_buffer`) and :mod:`git_repo` (:func:`git_top`, :func:`repo_name`);
:mod:`patch_input` (Codex only).
"""

from __future__ import annotations

import os

from yupana import clients, fastjson, project_root
# The model is part of this module's API: callers import FileEdit, Invocation and the ops from here.
from yupana.edit.model import (ADD, DELETE, EDIT, MOVE, MULTI_EDIT, NOTEBOOK, PATCH_TOOLS,
                               UNSET, UPDATE, WRITE, FileEdit, Invocation, git_top, new_edit, normpath)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from typing import Any

__all__ = ["ADD", "DELETE", "EDIT_TOOLS", "EDIT", "MOVE", "MULTI_EDIT", "NOTEBOOK", "PATCH_TOOLS", "UNSET", "UPDATE",
           "WRITE", "FileEdit", "Invocation", "client_of", "git_top", "new_edit", "normpath", "parse",
           "proposed_buffer", "repo_name"]

_MAX_KEYS = 64


def parse(raw: bytes, client: str | None = None) -> Invocation | None:
    """Read a hook payload. None when it is not a JSON object; otherwise never raises.

    ``client`` is the registration's ``--client`` (a :mod:`yupana.clients` registry name); without
    it, the payload itself tells (:func:`yupana.clients.identify`). The client's adapter
    translates its payload into the canonical shape read here; ``inv.client`` is its name."""
    try:
        text = bytes(raw).decode("utf-8") if isinstance(raw, (bytes, bytearray, memoryview)) else raw
        if not isinstance(text, str):
            return None
        if text.startswith("\ufeff"):
            text = text[1:]
        data = fastjson.loads(text)
    except (ValueError, TypeError, RecursionError, MemoryError):
        return None
    if not isinstance(data, dict):
        return None
    inv = Invocation()
    try:
        canonical, tool = _canonical(data, client, inv)
        _read(canonical, inv)
        if isinstance(tool, str) and inv.tool_name != tool:
            inv.tool_name = tool  # records name the client's own tool; the reading used its canonical kind
    except Exception as exc:  # noqa: BLE001 - a bug here must not turn into a crash or a clean allow
        inv.problems.append(f"payload: reading failed ({type(exc).__name__}: {exc})")
    inv.project = inv.edits[0].project if inv.edits else project_root.for_dir(inv.cwd, inv._roots)
    return inv


EDIT_TOOLS = tuple(clients.CANONICAL[kind] for kind in (clients.EDIT, clients.WRITE, clients.MULTI_EDIT, clients.NOTEBOOK))


_CANONICAL_TOOLS = frozenset(clients.CANONICAL.values()) | frozenset(PATCH_TOOLS)


def _canonical(data: dict[str, Any], hint: str | None, inv: Invocation) -> tuple[dict[str, Any], object]:
    """``data`` in the canonical shape, by the adapter of the client that sent it (inv.client), and
    the client's own name for the tool (the adapter's optional ``tool_name(data)`` where its payload
    does not say ``tool_name``).

    A tool that is not read — one the client's row does not list, or a tool name that is still
    not canonical after translation (a client nothing identified) — is ``inv.unknown_tool``:
    nothing is read from it (the session and cwd still are), and the hook says so."""
    row = clients.identify(data, hint)
    tool: object = data.get("tool_name")
    if row is not None:
        inv.client = row.name
        if not row.native:  # a payload in the client's own shape (a native one is read as it is)
            adapter = clients.adapter(row)
            own = getattr(adapter, "tool_name", None)
            if own is not None:
                tool = own(data)
            data = adapter.translate(data)
        if isinstance(tool, str) and tool not in row.tools:
            inv.unknown_tool = tool
            return data, tool
    canonical = data.get("tool_name")
    if isinstance(canonical, str) and canonical not in _CANONICAL_TOOLS:
        inv.unknown_tool = tool if isinstance(tool, str) else canonical
    return data, tool


def _argv(tool_input: object) -> list[str] | None:
    """A shell call's ``tool_input.command`` given as an argv list (Codex), or None."""
    command = tool_input.get("command") if isinstance(tool_input, dict) else None
    if isinstance(command, list) and command and all(isinstance(w, str) for w in command):
        return command
    return None


def client_of(data: dict[str, Any], tool: str | None = None) -> str | None:
    """The registry name of the client that sent this payload (:func:`yupana.clients.identify`)."""
    row = clients.identify(data)
    return row.name if row is not None else None


def _read(data: dict[str, Any], inv: Invocation) -> None:
    inv.raw_keys = [k[:64] for k in list(data)[:_MAX_KEYS]]
    inv.session_id = _opt_str(data, "session_id", inv.problems, "payload")
    inv.tool_use_id = _opt_str(data, "tool_use_id", inv.problems, "payload")
    inv.event = _opt_str(data, "hook_event_name", inv.problems, "payload")
    inv.tool_name = _opt_str(data, "tool_name", inv.problems, "payload")
    inv.cwd = _session_cwd(data.get("cwd"), inv.problems)
    if inv.unknown_tool is not None:
        return  # a known client's tool yupana does not read: the hook says so (HookRuntime.unknown_tool)
    tool = inv.tool_name
    tool_input = data.get("tool_input")
    inv.argv = _argv(tool_input)
    if tool in PATCH_TOOLS:
        inv.patch_call = True
        _read_patch(tool_input, inv)
        return
    if tool_input is None:
        return
    if not isinstance(tool_input, dict):
        inv.problems.append(f"payload: tool_input is not an object ({type(tool_input).__name__})")
        return
    if tool in ("Edit", "Write", "MultiEdit") and "file_path" not in tool_input:
        command = tool_input.get("command")
        if isinstance(command, str) and "*** Begin Patch" in command:
            # a client may accept Edit/Write as matcher aliases of apply_patch (its row maps them to
            # the patch kind); a patch arriving under such a name is still a patch.
            inv.problems.append(f"payload: {tool} carries an apply_patch patch in tool_input.command")
            inv.patch_call = True
            _read_patch(tool_input, inv)
            return
    if tool == "Bash":
        inv.command = _opt_str(tool_input, "command", inv.problems, "tool_input")
    elif tool == "Edit":
        _read_edit(tool_input, inv)
    elif tool == "MultiEdit":
        _read_multi_edit(tool_input, inv)
    elif tool == "Write":
        _read_write(tool_input, inv)
    elif tool == "NotebookEdit":
        _read_notebook(tool_input, inv)


# ------------------------------------------------------------------------- fields


def _opt_str(obj: dict[str, Any], key: str, problems: list[str], where: str) -> str | None:
    value = obj.get(key)
    if value is None or isinstance(value, str):
        return value
    problems.append(f"{where}: {key} is not a string ({type(value).__name__}); ignored")
    return None


def _session_cwd(value: object, problems: list[str]) -> str:
    if isinstance(value, str) and "\x00" in value:
        problems.append("payload: cwd contains a NUL byte; using the process cwd")
        return _process_cwd(problems)
    if isinstance(value, str) and value:
        if os.path.isabs(value):
            return normpath(value)
        problems.append("payload: cwd is relative; resolved against the process cwd")
        return normpath(os.path.join(_process_cwd(problems), value))
    if value is not None:
        problems.append(f"payload: cwd is not a usable path ({type(value).__name__}); using the process cwd")
    return _process_cwd(problems)


def _process_cwd(problems: list[str]) -> str:
    try:
        return os.getcwd()
    except OSError as exc:
        problems.append(f"payload: no cwd in the payload and the process cwd is unreadable ({exc.strerror})")
        return os.sep


def _path_field(obj: dict[str, Any], keys: tuple[str, ...], inv: Invocation, tool: str) -> str | None:
    """The first usable path among ``keys`` (later keys are tolerated variants, noted)."""
    for n, key in enumerate(keys):
        value = obj.get(key)
        if value is None:
            continue
        if not isinstance(value, str) or not value:
            inv.problems.append(f"tool_input: {key} is not a usable path ({type(value).__name__}); ignored")
            continue
        if "\x00" in value:
            inv.problems.append(f"tool_input: {key} contains a NUL byte; ignored")
            continue
        if n:
            inv.problems.append(f"tool_input: {tool} path read from {key!r} instead of {keys[0]!r}")
        return value
    inv.problems.append(f"tool_input: {tool} without {keys[0]}; no file to evaluate")
    return None


# ------------------------------------------------------------------------- tools


def _read_edit(ti: dict[str, Any], inv: Invocation) -> None:
    raw = _path_field(ti, ("file_path", "path"), inv, "Edit")
    if raw is None:
        return
    edit = new_edit(EDIT, raw, inv)
    old = _opt_str(ti, "old_string", inv.problems, "tool_input")
    new = _opt_str(ti, "new_string", inv.problems, "tool_input")
    replace_all = _opt_bool(ti, "replace_all", inv.problems)
    edit.introduced = new or ""
    if old is None or new is None:
        edit._buffer_error = "Edit without a usable old_string and new_string"
    else:
        edit.replacements.append((old, new))
        edit.replace_all.append(replace_all)
    inv.edits.append(edit)


def _read_multi_edit(ti: dict[str, Any], inv: Invocation) -> None:
    raw = _path_field(ti, ("file_path", "path"), inv, "MultiEdit")
    if raw is None:
        return
    edit = new_edit(MULTI_EDIT, raw, inv)
    items = ti.get("edits")
    introduced: list[str] = []
    if not isinstance(items, list):
        inv.problems.append(f"tool_input: edits is not a list ({type(items).__name__})")
        edit._buffer_error = "MultiEdit without a usable edits list"
        items = []
    for n, item in enumerate(items):
        if not isinstance(item, dict):
            inv.problems.append(f"tool_input: edits[{n}] is not an object ({type(item).__name__}); ignored")
            edit._buffer_error = f"MultiEdit edits[{n}] is unreadable"
            continue
        old = _opt_str(item, "old_string", inv.problems, f"tool_input.edits[{n}]")
        new = _opt_str(item, "new_string", inv.problems, f"tool_input.edits[{n}]")
        replace_all = _opt_bool(item, "replace_all", inv.problems)
        if new is not None:
            introduced.append(new)
        if old is None or new is None:
            edit._buffer_error = f"MultiEdit edits[{n}] lacks a usable old_string or new_string"
            continue
        edit.replacements.append((old, new))
        edit.replace_all.append(replace_all)
    if not items and edit._buffer_error is None:
        edit._buffer_error = "MultiEdit with no edits"
    edit.introduced = "\n".join(introduced)
    inv.edits.append(edit)


def _read_write(ti: dict[str, Any], inv: Invocation) -> None:
    raw = _path_field(ti, ("file_path", "path"), inv, "Write")
    if raw is None:
        return
    edit = new_edit(WRITE, raw, inv)
    content = _opt_str(ti, "content", inv.problems, "tool_input")
    if content is None:
        edit._buffer_error = "Write without a usable content"
    edit.new_content = content
    edit.introduced = content or ""
    inv.edits.append(edit)


def _read_notebook(ti: dict[str, Any], inv: Invocation) -> None:
    raw = _path_field(ti, ("notebook_path", "file_path"), inv, "NotebookEdit")
    if raw is None:
        return
    edit = new_edit(NOTEBOOK, raw, inv)
    mode = _opt_str(ti, "edit_mode", inv.problems, "tool_input") or "replace"
    if mode not in ("replace", "insert", "delete"):
        inv.problems.append(f"tool_input: unknown NotebookEdit edit_mode {mode[:40]!r}; read as replace")
        mode = "replace"
    edit.edit_mode = mode
    cell = ti.get("cell_id")
    if isinstance(cell, (str, int)) and not isinstance(cell, bool):
        edit.cell_id = str(cell)
    elif cell is not None:
        inv.problems.append(f"tool_input: cell_id is not a string ({type(cell).__name__}); ignored")
    source = _opt_str(ti, "new_source", inv.problems, "tool_input")
    if source is None and isinstance(ti.get("source"), str):
        source = ti["source"]
        inv.problems.append("tool_input: NotebookEdit cell source read from 'source' instead of 'new_source'")
    edit.introduced = "" if mode == "delete" else (source or "")
    edit._buffer_error = "NotebookEdit: the .ipynb file after a cell edit is not reconstructed"
    inv.edits.append(edit)


def _opt_bool(obj: dict[str, Any], key: str, problems: list[str]) -> bool:
    value = obj.get(key)
    if value is None or isinstance(value, bool):
        return bool(value)
    problems.append(f"tool_input: {key} is not a boolean ({type(value).__name__}); read as false")
    return False


def _read_patch(tool_input: object, inv: Invocation) -> None:
    from yupana.edit import patch_input  # only Codex calls pay for the patch reader

    patch_input.read(tool_input, inv)


# ------------------------------------------------------------------------- loaded on first use


def proposed_buffer(edit: FileEdit) -> str | None:
    """The file after ``edit``, or None (why: ``edit.problems``); see :func:`rebuild.proposed_buffer`."""
    from yupana.edit import rebuild

    return rebuild.proposed_buffer(edit)


def repo_name(top: str) -> str | None:
    """The origin remote's repository name for the git tree ``top``; see :func:`git_repo.repo_name`."""
    from yupana.edit import git_repo

    return git_repo.repo_name(top)
