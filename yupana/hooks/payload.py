"""A hook's stdin turned into edits. Hot path: standard library (``os``) and our own modules.

:func:`parse` reads the Claude Code / Codex hook payload (``session_id``, ``cwd``,
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
the payload ``cwd``, else the process cwd); ``rel`` is relative to that cwd, or the absolute
path with ``outside=True`` when it lies outside. ``real_path``/``real_rel`` are the same
with symlinks resolved (``os.path.realpath``, the cwd resolved too). Which to use:

* **path scope and tripwires** — match ``rel`` *and* ``real_rel``: a deny glob that matches
  either denies, an allow list must admit both, so a symlink cannot carry an edit out of
  (or into) a scope;
* **rule gating by language / extension, messages, records** — ``rel`` (what the agent named);
* **reading the file, git top, repository name** — ``path`` (the OS follows the links).
"""

from __future__ import annotations

import os

from yupana import fastjson

EDIT, MULTI_EDIT, WRITE, NOTEBOOK = "edit", "multi_edit", "write", "notebook"
ADD, DELETE, UPDATE, MOVE = "add", "delete", "update", "move"
PATCH_TOOLS = ("apply_patch", "applypatch")
_UNSET = object()
_MAX_KEYS = 64


class FileEdit:
    """One file a tool call would change, and what it would put there.

    A Codex move gives two entries: the ``update`` of the source (``move_to`` set) and a
    ``move`` entry for the destination (``move_from`` set). Both carry the same introduced
    text and rebuild to the same buffer, so scope, tripwire and path-gated rules see the
    destination as well as the source.
    """

    __slots__ = ("path", "real_path", "rel", "real_rel", "outside", "op", "introduced", "move_to",
                 "move_from", "replacements", "replace_all", "new_content", "chunks", "edit_mode",
                 "cell_id", "problems", "_buffer", "_buffer_error", "_source")

    def __init__(self, op: str, path: str, real_path: str, rel: str, real_rel: str, outside: bool) -> None:
        self.op = op
        self.path = path  # absolute, normalised; symlinks not resolved
        self.real_path = real_path  # symlinks resolved (scope checks see through links)
        self.rel = rel  # relative to the session cwd; absolute when outside
        self.real_rel = real_rel  # real_path relative to the real cwd; absolute when outside
        self.outside = outside  # path lies outside the session cwd
        self.introduced = ""  # only what the edit adds
        self.move_to: str | None = None  # update with "*** Move to:": the absolute destination
        self.move_from: str | None = None  # op "move": the absolute source of the moved file
        self.replacements: list[tuple[str, str]] = []  # (old, new): Edit/MultiEdit, patch chunks
        self.replace_all: list[bool] = []  # parallel to replacements (Edit/MultiEdit)
        self.new_content: str | None = None  # Write / Add File
        self.chunks: list = []  # patch update: apply_patch.Chunk objects (exact context)
        self.edit_mode: str | None = None  # NotebookEdit: replace | insert | delete
        self.cell_id: str | None = None  # NotebookEdit
        self.problems: list[str] = []
        self._buffer: object = _UNSET
        self._buffer_error: str | None = None  # set at parse time when no buffer can exist
        self._source: FileEdit | None = None  # op "move": the update entry it shares a buffer with

    def __repr__(self) -> str:
        return f"FileEdit({self.op!r}, {self.rel!r}, introduced={len(self.introduced)} chars)"


class Invocation:
    """One hook invocation as read from stdin."""

    __slots__ = ("session_id", "tool_use_id", "cwd", "tool_name", "event", "command", "codex",
                 "edits", "problems", "raw_keys", "patch", "_real_cwd")

    def __init__(self) -> None:
        self.session_id: str | None = None
        self.tool_use_id: str | None = None
        self.cwd = ""  # payload cwd (absolute, normalised), else the process cwd
        self.tool_name: str | None = None
        self.event: str | None = None  # hook_event_name
        self.command: str | None = None  # Bash
        self.codex = False  # the tool is apply_patch
        self.edits: list[FileEdit] = []
        self.problems: list[str] = []  # UNKNOWN reasons
        self.raw_keys: list[str] = []  # top-level key names, for records on parse problems
        self.patch = None  # apply_patch.Patch: the reading of an apply_patch call
        self._real_cwd: str | None = None

    def __repr__(self) -> str:
        return f"Invocation({self.tool_name!r}, edits={self.edits!r}, problems={self.problems!r})"


def parse(raw: bytes) -> Invocation | None:
    """Read a hook payload. None when it is not a JSON object; otherwise never raises."""
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
        _read(data, inv)
    except Exception as exc:  # a bug here must not turn into a crash or a clean allow
        inv.problems.append(f"payload: reading failed ({type(exc).__name__}: {exc})")
    return inv


def _read(data: dict, inv: Invocation) -> None:
    inv.raw_keys = [k[:64] for k in list(data)[:_MAX_KEYS]]
    inv.session_id = _opt_str(data, "session_id", inv.problems, "payload")
    inv.tool_use_id = _opt_str(data, "tool_use_id", inv.problems, "payload")
    inv.event = _opt_str(data, "hook_event_name", inv.problems, "payload")
    inv.tool_name = _opt_str(data, "tool_name", inv.problems, "payload")
    inv.cwd = _session_cwd(data.get("cwd"), inv.problems)
    tool = inv.tool_name
    tool_input = data.get("tool_input")
    if tool in PATCH_TOOLS:
        inv.codex = True
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
            # Codex accepts Edit/Write as matcher aliases of apply_patch; a patch arriving
            # under such a name is still a patch.
            inv.problems.append(f"payload: {tool} carries an apply_patch patch in tool_input.command")
            inv.codex = True
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


def _opt_str(obj: dict, key: str, problems: list[str], where: str) -> str | None:
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
            return _normpath(value)
        problems.append("payload: cwd is relative; resolved against the process cwd")
        return _normpath(os.path.join(_process_cwd(problems), value))
    if value is not None:
        problems.append(f"payload: cwd is not a usable path ({type(value).__name__}); using the process cwd")
    return _process_cwd(problems)


def _process_cwd(problems: list[str]) -> str:
    try:
        return os.getcwd()
    except OSError as exc:
        problems.append(f"payload: no cwd in the payload and the process cwd is unreadable ({exc.strerror})")
        return os.sep


def _path_field(obj: dict, keys: tuple[str, ...], inv: Invocation, tool: str) -> str | None:
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


def _new_edit(op: str, raw_path: str, inv: Invocation, base: str | None = None) -> FileEdit:
    """A FileEdit for ``raw_path`` (relative paths resolved against ``base`` or the cwd)."""
    joined = os.path.join(base or inv.cwd, raw_path)
    path = _normpath(joined)
    rel, outside = _relative(path, inv.cwd)
    problems: list[str] = []
    try:
        real = os.path.realpath(joined)
        if inv._real_cwd is None:
            inv._real_cwd = os.path.realpath(inv.cwd)
        real_rel, _ = _relative(real, inv._real_cwd)
    except (OSError, ValueError) as exc:  # unencodable names, loops
        real, real_rel = path, rel
        problems.append(f"path: symlinks not resolved ({type(exc).__name__})")
    edit = FileEdit(op, path, real, rel, real_rel, outside)
    if problems:
        edit.problems += problems
        inv.problems += [f"{p} for {rel}" for p in problems]
    return edit


def _normpath(path: str) -> str:
    path = os.path.normpath(path)
    if path.startswith("//"):
        path = "/" + path.lstrip("/")  # POSIX normpath keeps a leading "//"; we do not
    return path


def _relative(path: str, root: str) -> tuple[str, bool]:
    if path == root:
        return ".", False
    prefix = root if root.endswith(os.sep) else root + os.sep
    if path.startswith(prefix):
        return path[len(prefix):], False
    return path, True


# ------------------------------------------------------------------------- tools


def _read_edit(ti: dict, inv: Invocation) -> None:
    raw = _path_field(ti, ("file_path", "path"), inv, "Edit")
    if raw is None:
        return
    edit = _new_edit(EDIT, raw, inv)
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


def _read_multi_edit(ti: dict, inv: Invocation) -> None:
    raw = _path_field(ti, ("file_path", "path"), inv, "MultiEdit")
    if raw is None:
        return
    edit = _new_edit(MULTI_EDIT, raw, inv)
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


def _read_write(ti: dict, inv: Invocation) -> None:
    raw = _path_field(ti, ("file_path", "path"), inv, "Write")
    if raw is None:
        return
    edit = _new_edit(WRITE, raw, inv)
    content = _opt_str(ti, "content", inv.problems, "tool_input")
    if content is None:
        edit._buffer_error = "Write without a usable content"
    edit.new_content = content
    edit.introduced = content or ""
    inv.edits.append(edit)


def _read_notebook(ti: dict, inv: Invocation) -> None:
    raw = _path_field(ti, ("notebook_path", "file_path"), inv, "NotebookEdit")
    if raw is None:
        return
    edit = _new_edit(NOTEBOOK, raw, inv)
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


def _opt_bool(obj: dict, key: str, problems: list[str]) -> bool:
    value = obj.get(key)
    if value is None or isinstance(value, bool):
        return bool(value)
    problems.append(f"tool_input: {key} is not a boolean ({type(value).__name__}); read as false")
    return False


def _read_patch(tool_input: object, inv: Invocation) -> None:
    text = _patch_text(tool_input, inv)
    if text is None:
        return
    from yupana.hooks import apply_patch  # only Codex calls pay for the patch reader

    patch = apply_patch.parse(text)
    inv.patch = patch
    inv.problems += patch.problems
    base = inv.cwd
    if patch.workdir:
        base = _normpath(os.path.join(inv.cwd, patch.workdir))
    for op in patch.ops:
        if not op.path or "\x00" in op.path:
            inv.problems.append(f"apply_patch: line {op.line}: unusable path {op.path!r}")
            continue
        edit = _new_edit(op.op, op.path, inv, base)
        if op.op == ADD:
            edit.new_content = op.content
            edit.introduced = edit.new_content or ""
        elif op.op == UPDATE:
            edit.chunks = op.chunks
            edit.replacements = [("\n".join(c.old_lines), "\n".join(c.new_lines)) for c in op.chunks]
            edit.introduced = "\n".join(op.added)
        inv.edits.append(edit)
        if op.op == UPDATE and op.move_to is not None:
            if "\x00" in op.move_to:
                inv.problems.append(f"apply_patch: line {op.line}: unusable Move to path")
                continue
            dest = _new_edit(MOVE, op.move_to, inv, base)
            edit.move_to = dest.path
            dest.move_from = edit.path
            dest._source = edit
            dest.chunks = edit.chunks
            dest.replacements = edit.replacements
            # The added text lands at the destination: path-gated rules must see it there.
            dest.introduced = edit.introduced
            inv.edits.append(dest)


def _patch_text(tool_input: object, inv: Invocation) -> str | None:
    """The patch text of an apply_patch call: ``tool_input.command`` (tolerating variants)."""
    if isinstance(tool_input, str):
        inv.problems.append("payload: apply_patch tool_input is a bare string; read as the patch")
        return tool_input
    if not isinstance(tool_input, dict):
        inv.problems.append(f"payload: apply_patch without a readable tool_input ({type(tool_input).__name__})")
        return None
    for key in ("command", "input", "patch"):
        value = tool_input.get(key)
        if value is None:
            continue
        if key != "command":
            inv.problems.append(f"payload: apply_patch patch read from tool_input.{key} instead of command")
        if isinstance(value, str):
            return value
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            return _patch_from_argv(value, key, inv)
        inv.problems.append(f"payload: apply_patch tool_input.{key} is not text ({type(value).__name__})")
        return None
    inv.problems.append("payload: apply_patch without tool_input.command; nothing to evaluate")
    return None


def _patch_from_argv(argv: list[str], key: str, inv: Invocation) -> str | None:
    """``["apply_patch", PATCH]`` or ``[shell, "-c"|"-lc", SCRIPT]``, as Codex's shell tool passes them."""
    inv.problems.append(f"payload: apply_patch tool_input.{key} is an argv list; read as a command")
    if len(argv) == 2 and argv[0] in PATCH_TOOLS:
        return argv[1]
    if len(argv) == 3 and argv[1] in ("-c", "-lc") and os.path.basename(argv[0]) in ("bash", "sh", "zsh"):
        return argv[2]
    if len(argv) == 1:
        return argv[0]
    inv.problems.append(f"payload: apply_patch argv form {argv[0][:40]!r} … is not supported")
    return None


# ------------------------------------------------------------------------- buffers


def proposed_buffer(edit: FileEdit) -> str | None:
    """The file as it would read after ``edit``; None when that cannot be known exactly.

    Edit/MultiEdit apply their replacements to the file on disk as the tools do: each
    ``old_string`` must occur exactly once unless ``replace_all`` (an empty ``old_string``
    creates a missing or empty file); a missing or ambiguous anchor gives None. Write and
    Add File give their content, Delete File "". Patch updates (and the destination of a
    move) are rebuilt with exact context only (see :func:`apply_patch.apply_chunks`).
    Whenever the answer is None, the reason is appended to ``edit.problems``. The result
    is cached on the edit.
    """
    if edit._buffer is _UNSET and edit._source is not None:
        edit._buffer = proposed_buffer(edit._source)  # a move destination: the source's rebuild
        if edit._buffer is None:
            edit.problems += [p for p in edit._source.problems if p not in edit.problems]
    if edit._buffer is _UNSET:
        buffer, why = _build(edit)
        if buffer is None:
            why = why or "the file after the edit cannot be reconstructed"
            if why not in edit.problems:
                edit.problems.append(why)
        edit._buffer = buffer
    return edit._buffer  # type: ignore[return-value]


def _build(edit: FileEdit) -> tuple[str | None, str | None]:
    if edit._buffer_error:
        return None, edit._buffer_error
    op = edit.op
    if op in (WRITE, ADD):
        return edit.new_content, None
    if op == DELETE:
        if os.path.isdir(edit.path):
            return None, f"delete of {edit.rel}: it is a directory (apply_patch deletes files only; the patch will fail)"
        if not os.path.isfile(edit.path):
            return None, f"delete of {edit.rel}: no such file (the patch will fail)"
        return "", None
    if op in (UPDATE, MOVE):
        source = edit.move_from or edit.path
        text, why = _read_text(source)
        if text is None:
            return None, f"update of {_shown(edit, source)}: {why} (the patch will fail)"
        from yupana.hooks import apply_patch

        buffer, why = apply_patch.apply_chunks(text, edit.chunks)
        return buffer, (f"update of {_shown(edit, source)}: {why}" if why else None)
    if op in (EDIT, MULTI_EDIT):
        return _apply_replacements(edit)
    return None, f"no reconstruction for {op} edits"


def _shown(edit: FileEdit, source: str) -> str:
    return edit.rel if source == edit.path else source


def _apply_replacements(edit: FileEdit) -> tuple[str | None, str | None]:
    pairs = edit.replacements
    text, why = _read_text(edit.path)
    if text is None:
        if not (pairs and pairs[0][0] == "" and why == "no such file"):
            return None, f"{edit.rel}: {why}"
        text = ""  # an empty old_string creates the file
    applied: list[str] = []
    for n, (old, new) in enumerate(pairs):
        label = f"{edit.rel}: old_string" if len(pairs) == 1 else f"{edit.rel}: edits[{n}].old_string"
        if old == new:
            return None, f"{label} equals new_string (the tool rejects the edit)"
        if old == "":
            if text:
                return None, f"{label} is empty but the file is not (the tool rejects the edit)"
            text = new
            applied.append(new)
            continue
        if any(old in previous for previous in applied):
            return None, f"{label} is part of an earlier edit's new_string (the tool rejects the edit)"
        count = text.count(old)
        if count == 0:
            if "\r\n" in text and "\r" not in old and old.replace("\n", "\r\n") in text:
                return None, f"{label} matches only with CRLF line endings (not reconstructed)"
            return None, f"anchor missing: {label} not found"
        if count > 1 and not edit.replace_all[n]:
            return None, f"anchor ambiguous: {label} occurs {count} times and replace_all is false"
        text = text.replace(old, new) if edit.replace_all[n] else text.replace(old, new, 1)
        applied.append(new)
    return text, None


def _read_text(path: str) -> tuple[str | None, str]:
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except FileNotFoundError:
        return None, "no such file"
    except IsADirectoryError:
        return None, "is a directory"
    except (OSError, ValueError) as exc:
        return None, f"unreadable ({type(exc).__name__})"
    try:
        return data.decode("utf-8"), ""
    except UnicodeDecodeError:
        return None, "not UTF-8 text"


# ------------------------------------------------------------------------- git


def git_top(path: str) -> str | None:
    """The nearest directory at or above ``path`` holding ``.git`` (directory or file)."""
    try:
        d = os.path.abspath(path)
        if not os.path.isdir(d):
            d = os.path.dirname(d)
        while True:
            if os.path.exists(os.path.join(d, ".git")):
                return d
            parent = os.path.dirname(d)
            if parent == d:
                return None
            d = parent
    except (OSError, ValueError):
        return None


def repo_name(top: str) -> str | None:
    """The repository name from ``remote "origin"``'s url in the git config of ``top``.

    Follows a ``.git`` file (``gitdir: …``, worktrees and submodules) and a worktree's
    ``commondir``. Name = the url's last path segment (after ``:`` for scp-style urls with
    no ``/``), trailing ``/`` and ``.git`` stripped. None when there is no origin url.
    """
    try:
        gitdir = _gitdir(top)
        if gitdir is None:
            return None
        common = _read_small(os.path.join(gitdir, "commondir"))
        if common and common.strip():
            gitdir = os.path.join(gitdir, common.strip())
        config = _read_small(os.path.join(gitdir, "config"))
        url = _origin_url(config) if config else None
        return _name_from_url(url) if url else None
    except (OSError, ValueError):
        return None


def _gitdir(top: str) -> str | None:
    dotgit = os.path.join(top, ".git")
    if os.path.isdir(dotgit):
        return dotgit
    text = _read_small(dotgit)
    if text is None:
        return None
    for line in text.split("\n"):
        if line.startswith("gitdir:"):
            target = line[7:].strip()
            return os.path.normpath(os.path.join(top, target)) if target else None
    return None


def _read_small(path: str, limit: int = 1 << 20) -> str | None:
    try:
        with open(path, "rb") as fh:
            return fh.read(limit).decode("utf-8", "replace")
    except (OSError, ValueError):
        return None


def _origin_url(config: str) -> str | None:
    """The first ``url`` of ``[remote "origin"]`` (or legacy ``[remote.origin]``)."""
    in_origin = False
    for raw in config.split("\n"):
        line = raw.strip()
        if line.startswith("["):
            close = line.find("]")
            if close < 0:
                in_origin = False
                continue
            in_origin = _is_origin_header(line[1:close])
            line = line[close + 1:].strip()
        if not in_origin or not line or line[0] in "#;":
            continue
        key, eq, value = line.partition("=")
        if eq and key.strip().lower() == "url":
            url = _config_value(value)
            if url:
                return url
    return None


def _is_origin_header(header: str) -> bool:
    header = header.strip()
    section, _, sub = header.partition(" ")
    if sub:
        sub = sub.strip()
        return section.lower() == "remote" and sub == '"origin"'
    return header.lower() == "remote.origin"


def _config_value(value: str) -> str:
    """A git config value: quotes removed, ``\\"``/``\\\\`` unescaped, comments dropped."""
    out: list[str] = []
    quoted = False
    i, n = 0, len(value)
    while i < n:
        c = value[i]
        if c == "\\" and i + 1 < n:
            nxt = value[i + 1]
            out.append({"n": "\n", "t": "\t", "b": "\b"}.get(nxt, nxt))
            i += 2
            continue
        if c == '"':
            quoted = not quoted
        elif c in "#;" and not quoted:
            break
        else:
            out.append(c)
        i += 1
    return "".join(out).strip()


def _name_from_url(url: str) -> str | None:
    u = url.strip().rstrip("/")
    if "/" in u:
        u = u.rsplit("/", 1)[1]
    elif ":" in u:
        u = u.rsplit(":", 1)[1]
    if u.endswith(".git"):
        u = u[:-4]
    return u or None
