"""The edit model: one hook invocation (:class:`Invocation`) and each file it would change
(:class:`FileEdit`), with the paths every plane matches. Hot path: ``os`` and our own modules.

The readers build these: :mod:`payload` (the hook's stdin), :mod:`patch_input` (Codex
patches); :mod:`rebuild` computes a file's proposed buffer from them. Those modules import
this one and never each other's internals, so the model sits below every reader. Paths,
projects and ``rel``/``real_rel``: see :mod:`payload`.
"""

from __future__ import annotations

import os

from yupana import project_root

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from yupana.edit.apply_patch import Patch
    from yupana.edit.patch_chunks import Chunk

EDIT, MULTI_EDIT, WRITE, NOTEBOOK = "edit", "multi_edit", "write", "notebook"
ADD, DELETE, UPDATE, MOVE = "add", "delete", "update", "move"
PATCH_TOOLS = ("apply_patch", "applypatch")
UNSET = object()  # FileEdit._buffer until rebuild.proposed_buffer has run


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

    def __init__(self, op: str, path: str, real_path: str, rel: str, real_rel: str, outside: bool,
                 project: project_root.Project) -> None:
        self.op = op
        self.path = path  # absolute, normalised; symlinks not resolved
        self.real_path = real_path  # symlinks resolved (scope checks see through links)
        self.rel = rel  # relative to the project root; absolute when outside
        self.real_rel = real_rel  # real_path relative to the real project root; absolute when outside
        self.outside = outside  # path lies outside the project root
        self.project = project  # the project the file is judged under
        self.introduced = ""  # only what the edit adds
        self.move_to: str | None = None  # update with "*** Move to:": the absolute destination
        self.move_from: str | None = None  # op "move": the absolute source of the moved file
        self.replacements: list[tuple[str, str]] = []  # (old, new): Edit/MultiEdit, patch chunks
        self.replace_all: list[bool] = []  # parallel to replacements (Edit/MultiEdit)
        self.new_content: str | None = None  # Write / Add File
        self.chunks: list[Chunk] = []  # patch update: its chunks (exact context)
        self.edit_mode: str | None = None  # NotebookEdit: replace | insert | delete
        self.cell_id: str | None = None  # NotebookEdit
        self.problems: list[str] = []
        self._buffer: object = UNSET
        self._buffer_error: str | None = None  # set at parse time when no buffer can exist
        self._source: FileEdit | None = None  # op "move": the update entry it shares a buffer with

    def __repr__(self) -> str:
        return f"FileEdit({self.op!r}, {self.rel!r}, introduced={len(self.introduced)} chars)"


class Invocation:
    """One hook invocation as read from stdin.

    ``project`` (the first file's project, else the cwd's) is set by the reader
    (:func:`yupana.edit.payload.parse`) before it hands the invocation on."""

    __slots__ = ("session_id", "tool_use_id", "cwd", "tool_name", "event", "command", "argv", "patch_call",
                 "client", "unknown_tool", "edits", "problems", "raw_keys", "patch", "project", "_roots", "_real_roots")
    project: project_root.Project

    def __init__(self) -> None:
        self.session_id: str | None = None
        self.tool_use_id: str | None = None
        self.cwd = ""  # payload cwd (absolute, normalised), else the process cwd
        self.tool_name: str | None = None
        self.event: str | None = None  # hook_event_name
        self.command: str | None = None  # Bash
        self.argv: list[str] | None = None  # a shell call's tool_input.command given as an argv list
        self.patch_call = False  # the tool is a patch tool (kind "patch": apply_patch, its aliases)
        self.client: str | None = None  # the yupana.clients registry name of who sent it, None: nothing told
        self.unknown_tool: str | None = None  # the client's tool name its row does not list: nothing was read
        self.edits: list[FileEdit] = []
        self.problems: list[str] = []  # UNKNOWN reasons
        self.raw_keys: list[str] = []  # top-level key names, for records on parse problems
        self.patch: Patch | None = None  # the reading of an apply_patch call
        self._roots: dict[str, tuple[str, ...]] = {}  # project_root.chain memo (this process only)
        self._real_roots: dict[str, str] = {}  # project root -> its realpath

    def __repr__(self) -> str:
        return f"Invocation({self.tool_name!r}, edits={self.edits!r}, problems={self.problems!r})"


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
    edit = FileEdit(op, path, real, rel, real_rel, outside, project)
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


def git_top(path: str) -> str | None:
    """The nearest directory at or above ``path`` holding ``.git``; see :func:`git_repo.git_top`."""
    from yupana.edit import git_repo

    return git_repo.git_top(path)
