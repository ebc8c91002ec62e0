"""Which project governs a path: the nearest directory holding ``.bobbin/config.toml``. Hot path: ``os`` only.

Found the way git, ruff and pytest find theirs — walk up, stop at the first hit:

1. **from the file** (hooks with a file): start at the edited file's directory and go up
   to the filesystem root; the *outermost* directory holding ``.bobbin/config.toml`` is the
   project root (``found = FILE``), and each one below it is a *nested* layer
   (``Project.nested``) that can only tighten the project's configuration — one ``Write``
   of ``src/.bobbin/config.toml`` cannot make a new root that switches ``src/`` off. A file
   that does not exist yet (a Write, an Add File) starts at its nearest existing ancestor —
   a directory that does not exist holds no config, so the walk simply passes it;
2. **from the file's real path** when the named path's walk finds nothing and a symlink
   is on the way (``found = REAL``): ``<elsewhere>/s -> <repo>/src`` is governed by
   ``<repo>``, whatever the session cwd;
3. **from the session cwd** when neither finds anything (``found = CWD``): an agent
   inside a governed project cannot shed its configuration by editing another path by
   absolute name. The file then lies *outside* that project root;
4. **nothing found** (``found = NONE``): the user configuration alone governs, and relative
   paths are taken from the file's git top-level, else the session cwd.

Without a file (pre-bash, cold commands) the walk starts at the cwd, and nothing found
means the cwd itself is the base. Any non-directory named ``.bobbin/config.toml`` counts —
a FIFO there is a project whose configuration fails loudly, never one the walk passes.
Cost: one ``lstat`` per ancestor directory, memoised within the process only (``memo``),
never across processes.
"""

from __future__ import annotations

import os
import stat

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from collections.abc import Callable

FILE, REAL, CWD, NONE = "file", "real", "cwd", "none"  # how a project root was found
_CONFIG = os.path.join(".bobbin", "config.toml")


class Project:
    """Where a path's configuration and relative paths come from.

    ``root`` is the base of every repo-relative path (and the root settings are loaded for);
    ``found`` says how it was chosen: FILE, REAL (through the file's real path), CWD, or NONE
    (no project config: ``root`` is a git top-level or the cwd, and only the user
    configuration applies). ``nested`` are the directories below ``root``, outermost first,
    whose own ``.bobbin/config.toml`` lies on the way to the path: layers that can only
    tighten the project's configuration (:mod:`yupana.config.resolver`).
    """

    __slots__ = ("root", "found", "nested")

    def __init__(self, root: str, found: str, nested: tuple[str, ...] = ()) -> None:
        self.root = root
        self.found = found
        self.nested = nested

    def __repr__(self) -> str:
        return f"Project({self.root!r}, found={self.found!r}, nested={self.nested!r})"


def _is_config(d: str) -> bool:
    """Whether ``d`` holds a ``.bobbin/config.toml`` that is not a directory. A FIFO, a device or a
    dangling symlink counts: its project exists and fails loudly when read, never silently passed."""
    try:
        return not stat.S_ISDIR(os.lstat(os.path.join(d, _CONFIG)).st_mode)
    except OSError:
        return False


def chain(start: str, memo: dict[str, tuple[str, ...]] | None = None) -> tuple[str, ...]:
    """Every directory at or above ``start`` (absolute) holding ``.bobbin/config.toml``, nearest first."""
    d = start
    walked: list[str] = []
    found: tuple[str, ...] = ()
    while True:
        if memo is not None and d in memo:
            found = memo[d]
            break
        walked.append(d)
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
    out = list(found)
    for w in reversed(walked):  # from the top down, each directory's chain is its parent's plus itself
        if _is_config(w):
            out = [w] + out
        if memo is not None:
            memo[w] = tuple(out)
    return tuple(out)


def nearest(start: str, memo: dict[str, tuple[str, ...]] | None = None) -> str | None:
    """The project root governing ``start`` (absolute): the *outermost* directory at or above it
    holding ``.bobbin/config.toml`` (those below it are nested layers, :func:`chain`); None."""
    found = chain(start, memo)
    return found[-1] if found else None


def _project(found: tuple[str, ...], how: str) -> Project:
    return Project(found[-1], how, tuple(reversed(found[:-1])))


def for_file(path: str, cwd: str, memo: dict[str, tuple[str, ...]] | None = None,
             git_top: Callable[[str], str | None] | None = None) -> Project:
    """The project an edit of ``path`` (absolute, normalised) is judged under; see the module doc.

    ``git_top(path)`` (optional) gives the base when no project is found at all.
    """
    found = chain(os.path.dirname(path), memo)
    if found:
        return _project(found, FILE)
    try:
        real = os.path.realpath(path)
    except (OSError, ValueError):  # a loop, an unencodable name: the named path stands
        real = path
    if real != path:
        found = chain(os.path.dirname(real), memo)
        if found:
            return _project(found, REAL)
    found = chain(cwd, memo)
    if found:
        return _project(found, CWD)
    top = git_top(path) if git_top is not None else None
    return Project(top or cwd, NONE)


def for_dir(cwd: str, memo: dict[str, tuple[str, ...]] | None = None) -> Project:
    """The project a command run in ``cwd`` (absolute) is judged under: the walk from ``cwd``, else
    from its real path (a cwd reached through a symlink), else ``cwd``."""
    found = chain(cwd, memo)
    if found:
        return _project(found, CWD)
    try:
        real = os.path.realpath(cwd)
    except (OSError, ValueError):
        real = cwd
    found = chain(real, memo) if real != cwd else ()
    return _project(found, REAL) if found else Project(cwd, NONE)


def cold_project(explicit: str | None = None) -> Project:
    """:func:`cold_root` with the nested config layers of the cwd (none under ``--root``): what
    ``config check`` and ``status`` resolve, so that run in a subtree they show what its hooks see."""
    if explicit:
        return Project(os.path.abspath(explicit), FILE)
    return for_dir(os.getcwd())


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
    from yupana.digests import sha1_hex

    return sha1_hex(os.path.abspath(root))[:16]
