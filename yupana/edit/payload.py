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
the payload ``cwd``, else the process cwd). ``project`` is the project the file is judged
under (:mod:`yupana.project_root`: the nearest ``.bobbin/config.toml`` above the file, else
above the cwd, else none — then the file's git top-level or the cwd is the base); ``rel``
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

Loaded on first use, behind same-named functions here: :mod:`rebuild` (:func:`proposed_buffer`)
and :mod:`git_repo` (:func:`git_top`, :func:`repo_name`); :mod:`patch_input` (Codex only).
"""

from __future__ import annotations

import os

from yupana import fastjson, project_root

EDIT, MULTI_EDIT, WRITE, NOTEBOOK = "edit", "multi_edit", "write", "notebook"
ADD, DELETE, UPDATE, MOVE = "add", "delete", "update", "move"
PATCH_TOOLS = ("apply_patch", "applypatch")
UNSET = object()  # FileEdit._buffer until rebuild.proposed_buffer has run
_MAX_KEYS = 64


class FileEdit:
    """One file a tool call would change, and what it would put there.

    A Codex move gives two entries: the ``update`` of the source (``move_to`` set) and a
    ``move`` entry for the destination (``move_from`` set). Both carry the same introduced
    text and rebuild to the same buffer, so scope, tripwire and path-gated rules see the
    destination as well as the source.

    The underscored fields are private to the readers and :mod:`rebuild` (which caches ``_buffer``).
    """

    __slots__ = ("path", "real_path", "rel", "real_rel", "outside", "project", "op", "introduced", "move_to",
                 "move_from", "replacements", "replace_all", "new_content", "chunks", "edit_mode",
                 "cell_id", "problems", "_buffer", "_buffer_error", "_source")

    def __init__(self, op: str, path: str, real_path: str, rel: str, real_rel: str, outside: bool) -> None:
        self.op = op
        self.path = path  # absolute, normalised; symlinks not resolved
        self.real_path = real_path  # symlinks resolved (scope checks see through links)
        self.rel = rel  # relative to the project root; absolute when outside
        self.real_rel = real_rel  # real_path relative to the real project root; absolute when outside
        self.outside = outside  # path lies outside the project root
        self.project: project_root.Project | None = None  # the project the file is judged under
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
        self._buffer: object = UNSET
        self._buffer_error: str | None = None  # set at parse time when no buffer can exist
        self._source: FileEdit | None = None  # op "move": the update entry it shares a buffer with

    def __repr__(self) -> str:
        return f"FileEdit({self.op!r}, {self.rel!r}, introduced={len(self.introduced)} chars)"


class Invocation:
    """One hook invocation as read from stdin."""

    __slots__ = ("session_id", "tool_use_id", "cwd", "tool_name", "event", "command", "codex",
                 "client", "edits", "problems", "raw_keys", "patch", "project", "_roots", "_real_roots")

    def __init__(self) -> None:
        self.session_id: str | None = None
        self.tool_use_id: str | None = None
        self.cwd = ""  # payload cwd (absolute, normalised), else the process cwd
        self.tool_name: str | None = None
        self.event: str | None = None  # hook_event_name
        self.command: str | None = None  # Bash
        self.codex = False  # the tool is apply_patch
        self.client: str | None = None  # "codex" | "claude-code" | None: who sent it (:func:`client_of`)
        self.edits: list[FileEdit] = []
        self.problems: list[str] = []  # UNKNOWN reasons
        self.raw_keys: list[str] = []  # top-level key names, for records on parse problems
        self.patch = None  # apply_patch.Patch: the reading of an apply_patch call
        self.project: project_root.Project | None = None  # the first file's project, else the cwd's
        self._roots: dict = {}  # project_root.nearest memo (this process only)
        self._real_roots: dict[str, str] = {}  # project root -> its realpath

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
    inv.project = inv.edits[0].project if inv.edits else project_root.for_dir(inv.cwd, inv._roots)
    return inv


CLAUDE_TOOLS = ("Edit", "Write", "MultiEdit", "NotebookEdit")


def client_of(data: dict, tool: str | None) -> str | None:
    """The client that sent this payload, from what each one carries (docs/hook-input.md):
    Codex sends ``turn_id`` (and ``apply_patch``); Claude Code sends ``prompt_id``, keeps its
    transcript under ``.claude/``, and names its own edit tools. None when nothing tells."""
    if "turn_id" in data or tool in PATCH_TOOLS:
        return "codex"
    transcript = data.get("transcript_path")
    if "prompt_id" in data or (isinstance(transcript, str) and "/.claude/" in transcript):
        return "claude-code"
    if isinstance(transcript, str) and "/.codex/" in transcript:
        return "codex"
    tool_input = data.get("tool_input")
    if tool in CLAUDE_TOOLS and not (isinstance(tool_input, dict) and "*** Begin Patch" in str(tool_input.get("command"))):
        return "claude-code"
    return None


def _read(data: dict, inv: Invocation) -> None:
    inv.raw_keys = [k[:64] for k in list(data)[:_MAX_KEYS]]
    inv.session_id = _opt_str(data, "session_id", inv.problems, "payload")
    inv.tool_use_id = _opt_str(data, "tool_use_id", inv.problems, "payload")
    inv.event = _opt_str(data, "hook_event_name", inv.problems, "payload")
    inv.tool_name = _opt_str(data, "tool_name", inv.problems, "payload")
    inv.cwd = _session_cwd(data.get("cwd"), inv.problems)
    inv.client = client_of(data, inv.tool_name)
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


def new_edit(op: str, raw_path: str, inv: Invocation, base: str | None = None) -> FileEdit:
    """A FileEdit for ``raw_path`` (relative paths resolved against ``base`` or the cwd). Also for patch_input."""
    joined = os.path.join(base or inv.cwd, raw_path)
    path = normpath(joined)
    project = project_root.for_file(path, inv.cwd, inv._roots, git_top)
    rel, outside = _relative(path, project.root)
    problems: list[str] = []
    try:
        real = os.path.realpath(joined)
        real_root = inv._real_roots.get(project.root)
        if real_root is None:
            real_root = inv._real_roots[project.root] = os.path.realpath(project.root)
        real_rel, _ = _relative(real, real_root)
    except (OSError, ValueError) as exc:  # unencodable names, loops
        real, real_rel = path, rel
        problems.append(f"path: symlinks not resolved ({type(exc).__name__})")
    edit = FileEdit(op, path, real, rel, real_rel, outside)
    edit.project = project
    if problems:
        edit.problems += problems
        inv.problems += [f"{p} for {rel}" for p in problems]
    return edit


def normpath(path: str) -> str:
    """``path`` lexically normalised (``os.path.normpath``), a leading ``//`` read as ``/``."""
    path = os.path.normpath(path)
    if path.startswith("//"):
        path = "/" + path.lstrip("/")  # POSIX normpath keeps a leading "//"; we do not
    return path


def _relative(path: str, root: str) -> tuple[str, bool]:
    """``(path relative to root, False)``, ``"."`` for root itself; ``(path, True)`` outside it."""
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


def _read_multi_edit(ti: dict, inv: Invocation) -> None:
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


def _read_write(ti: dict, inv: Invocation) -> None:
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


def _read_notebook(ti: dict, inv: Invocation) -> None:
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


def _opt_bool(obj: dict, key: str, problems: list[str]) -> bool:
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


def git_top(path: str) -> str | None:
    """The nearest directory at or above ``path`` holding ``.git``; see :func:`git_repo.git_top`."""
    from yupana.edit import git_repo

    return git_repo.git_top(path)


def repo_name(top: str) -> str | None:
    """The origin remote's repository name for the git tree ``top``; see :func:`git_repo.repo_name`."""
    from yupana.edit import git_repo

    return git_repo.repo_name(top)
