"""Which project governs a path: the nearest directory holding ``.bobbin/config.toml``. Hot path: ``os`` only.

Found the way git, ruff and pytest find theirs — walk up, stop at the first hit:

1. **from the file** (hooks with a file): start at the edited file's directory and go up
   to the filesystem root; the first directory holding ``.bobbin/config.toml`` is the
   project root (``found = FILE``). A file that does not exist yet (a Write, an Add File)
   starts at its nearest existing ancestor — a directory that does not exist holds no
   config, so the walk simply passes it;
2. **from the session cwd** when the file's walk finds nothing (``found = CWD``): an agent
   inside a governed project cannot shed its configuration by editing another path by
   absolute name. The file then lies *outside* that project root;
3. **nothing found** (``found = NONE``): the user configuration alone governs, and relative
   paths are taken from the file's git top-level, else the session cwd.

Without a file (pre-bash, cold commands) the walk starts at the cwd, and nothing found
means the cwd itself is the base. A nested ``.bobbin/config.toml`` governs its subtree
(the nearest wins): guard ``**/.bobbin/**`` with ``deny_paths`` or a deny tripwire where an
agent must not write one. Cost: one ``stat`` per ancestor directory, memoised within the
process only (``memo``), never across processes.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from collections.abc import Callable

FILE, CWD, NONE = "file", "cwd", "none"  # how a project root was found
_CONFIG = os.path.join(".bobbin", "config.toml")


class Project:
    """Where a path's configuration and relative paths come from.

    ``root`` is the base of every repo-relative path (and the root settings are loaded for);
    ``found`` says how it was chosen: FILE, CWD, or NONE (no project config: ``root`` is a
    git top-level or the cwd, and only the user configuration applies).
    """

    __slots__ = ("root", "found")

    def __init__(self, root: str, found: str) -> None:
        self.root = root
        self.found = found

    def __repr__(self) -> str:
        return f"Project({self.root!r}, found={self.found!r})"


def nearest(start: str, memo: dict[str, str | None] | None = None) -> str | None:
    """The nearest directory at or above ``start`` (absolute) holding ``.bobbin/config.toml``."""
    d = start
    walked: list[str] = []
    found: str | None = None
    while True:
        if memo is not None and d in memo:
            found = memo[d]
            break
        walked.append(d)
        if os.path.isfile(os.path.join(d, _CONFIG)):
            found = d
            break
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
    if memo is not None:
        for w in walked:
            memo[w] = found
    return found


def for_file(path: str, cwd: str, memo: dict[str, str | None] | None = None,
             git_top: Callable[[str], str | None] | None = None) -> Project:
    """The project an edit of ``path`` (absolute, normalised) is judged under; see the module doc.

    ``git_top(path)`` (optional) gives the base when no project is found at all.
    """
    root = nearest(os.path.dirname(path), memo)
    if root is not None:
        return Project(root, FILE)
    root = nearest(cwd, memo)
    if root is not None:
        return Project(root, CWD)
    top = git_top(path) if git_top is not None else None
    return Project(top or cwd, NONE)


def for_dir(cwd: str, memo: dict[str, str | None] | None = None) -> Project:
    """The project a command run in ``cwd`` (absolute) is judged under: the walk from ``cwd``, else ``cwd``."""
    root = nearest(cwd, memo)
    return Project(root, CWD) if root is not None else Project(cwd, NONE)


def cold_root(explicit: str | None = None) -> str:
    """The root a cold command resolves its configuration for: ``--root`` as given, else the
    project the process cwd is in (the same walk the hooks make), else the cwd."""
    if explicit:
        return os.path.abspath(explicit)
    return for_dir(os.getcwd()).root


def project_key(root: str) -> str:
    """The project's identity in spool records (``project``): 16 hex digits of the SHA-1 of
    its absolute root, so ``yupana status`` can tell this project's records from others'
    without the spool holding the path."""
    from yupana.settings import digest

    return digest(os.path.abspath(root))[:16]
