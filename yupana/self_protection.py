"""The guard's own controls, which the agents it governs may not change (issue 22 §2). Hot path: ``os`` only.

The **protected set** is built in; nothing has to be configured for it:

* every ``.bobbin/`` directory anywhere (the project's and any nested one, creating one
  included), the user configuration directory (``$HOME/.config/bobbin/``), the managed
  configuration (``$YUPANA_MANAGED_CONFIG``, else ``/etc/bobbin/``) and a ``--config`` file
  named on the hook's command line — :data:`CONFIG`;
* yupana's state directory (and any ``YUPANA_*_PATH`` state file) — :data:`STATE`;
* the client settings that register hooks, as each row of the client registry names them
  (``Client.controls``, :mod:`yupana.clients`): ``.claude/settings*.json`` (project and user),
  ``$CODEX_HOME/hooks.json`` and ``config.toml`` (default ``~/.codex``), a project's
  ``.codex/hooks.json`` / ``.codex/config.toml``, and so on — :data:`CLIENT`;
* ``.git/hooks/`` and yupana's own ``pre-push`` wherever ``core.hooksPath`` puts it —
  :data:`GIT_HOOKS`; ``.git/config`` — :data:`GIT_CONFIG`;
* yupana's installation: the package directory and the ``yupana`` script — :data:`INSTALL`.

A path is judged as named and as its real path (symlinks resolved, the parent's too for a
file that does not exist yet: :func:`os.path.realpath` resolves every component that exists),
so a link to a control is a control. The level is the lower of ``[yupana.policy] mode`` and
``self_protection`` (:func:`level`): the mode is its ceiling, and only an explicit key narrows it.

:data:`WHAT` holds the words the model reads for each kind: what was refused, never a path,
a key or a way around.
"""

from __future__ import annotations

import os
import sys

from yupana import clients

CONFIG, STATE, CLIENT, GIT_HOOKS, GIT_CONFIG, INSTALL = "config", "state", "client", "git_hooks", "git_config", "install"
NO_VERIFY, HOOKS_PATH = "no_verify", "hooks_path"  # git routes around the repository's hooks (pre-bash)

WHAT = {
    CONFIG: "change the guard's configuration",
    STATE: "change the guard's state",
    CLIENT: "change a coding client's hook settings",
    GIT_HOOKS: "change the repository's git hooks",
    GIT_CONFIG: "change the repository's git configuration",
    INSTALL: "change the guard's installation",
    NO_VERIFY: "skip the repository's git hooks",
    HOOKS_PATH: "redirect the repository's git hooks",
}

_LADDER = {"off": 0, "advise": 1, "enforce": 2}
MANAGED_DEFAULT = "/etc/bobbin/config.toml"
_STATE_VARS = ("YUPANA_PROJECTION_CACHE_PATH", "YUPANA_METRICS_PATH", "YUPANA_VERDICT_PATH", "YUPANA_THROTTLE_PATH",
               "YUPANA_LANDING_PATH")


def level(mode: str, setting: str | None) -> str:
    """The protected set's effective level: the lower of ``mode`` and ``self_protection``
    (unset: ``enforce``, so the mode alone decides)."""
    setting = setting or "enforce"
    return setting if _LADDER.get(setting, 0) <= _LADDER.get(mode, 0) else mode


def deny_text(kind: str, subject: str = "this edit") -> str:
    """What the model reads when ``kind`` is refused: what, and what to do instead."""
    return (f"yupana: refused: {subject} would {WHAT.get(kind, kind)}; the guard's own controls are not an "
            "agent's to change. Leave them as they are and carry on with the task; if the change is really needed, "
            "ask the operator to make it")


def advise_text(kind: str, subject: str = "this edit") -> str:
    """The advisory under ``advise``: what enforce would refuse."""
    return (f"yupana (self-protection, advise: enforce would deny): {subject} would {WHAT.get(kind, kind)}; the "
            "guard's own controls are the operator's to change")


_FIXED: dict[str | None, list[tuple[str, str]]] = {}  # per --config override, for this process


def fixed(override: str | None = None) -> list[tuple[str, str]]:
    """``(path, kind)`` of the controls that sit at known places: each as named and as its real
    path (computed once per process)."""
    if override not in _FIXED:
        _FIXED[override] = _places(override)
    return _FIXED[override]


def _places(override: str | None) -> list[tuple[str, str]]:
    env = os.environ
    home = env.get("HOME") or ""
    places: list[tuple[str, str]] = []
    if home:
        places.append((os.path.join(home, ".config", "bobbin"), CONFIG))
    managed = env.get("YUPANA_MANAGED_CONFIG")
    places.append((managed, CONFIG) if managed else (os.path.dirname(MANAGED_DEFAULT), CONFIG))
    if override:
        places.append((os.path.abspath(override), CONFIG))
    base = env.get("XDG_STATE_HOME")
    state = os.path.join(base, "yupana") if base and os.path.isabs(base) else (
        os.path.join(home, ".local", "state", "yupana") if home else "")
    if state:
        places.append((state, STATE))
    places += [(env[v], STATE) for v in _STATE_VARS if env.get(v)]
    for row in clients.ROWS:  # a client's home moved by its variable (CODEX_HOME): its control files there
        moved = env.get(row.home_env) if row.home_env else None
        if not moved:
            continue
        for dirname, below in _CONTROLS_BY_ROW.get(row.name, ()):
            if dirname == row.home and "*" not in below[0]:  # a wildcard file: its directory below the home
                places.append((os.path.join(moved, *[b for b in below if "*" not in b]), CLIENT))
    places.append((os.path.dirname(os.path.abspath(__file__)), INSTALL))  # the package directory
    for script in (sys.argv[0] if os.path.basename(sys.argv[0]) == "yupana" else "",
                   os.path.join(os.path.dirname(sys.executable), "yupana")):
        if script:
            places.append((os.path.abspath(script), INSTALL))
    out: list[tuple[str, str]] = []
    for path, kind in places:
        path = os.path.normpath(path)
        out.append((path, kind))
        try:
            real = os.path.realpath(path)
        except (OSError, ValueError):
            continue
        if real != path:
            out.append((real, kind))
    return out


def classify(path: str, places: list[tuple[str, str]]) -> str | None:
    """The kind of control ``path`` (absolute, normalised) is or lies in, else None."""
    parts = path.split("/")
    if ".bobbin" in parts:
        return CONFIG
    if ".git" in parts:
        rest = parts[len(parts) - parts[::-1].index(".git"):]
        if rest[:1] == ["hooks"]:
            return GIT_HOOKS
        if rest == ["config"]:
            return GIT_CONFIG
    for dirname, below in _CONTROLS:
        n = len(below)
        if len(parts) > n and parts[-n - 1] == dirname and all(map(_segment, parts[-n:], below)):
            return CLIENT
    for place, kind in places:
        if path == place or path.startswith(place + "/"):
            return kind
    if parts[-1] == "pre-push" and LANDING_MARKER in _read(path):  # yupana's git hook, wherever core.hooksPath puts it
        return GIT_HOOKS
    return None


def of_path(path: str, real: str | None = None, override: str | None = None) -> str | None:
    """The kind of control a write of ``path`` would change, judged as named and as its real
    path (computed here when not given); None when it is no control."""
    places = fixed(override)
    found = classify(path, places)
    if found is None:
        if real is None:
            try:
                real = os.path.realpath(path)
            except (OSError, ValueError):
                real = path
        if real != path:
            found = classify(real, places)
    return found


def hard_link_of(path: str, root: str, override: str | None = None) -> str | None:
    """The kind of control an existing file with more than one name is a hard link of (a
    second name an edit could write a control through), else None. One ``stat`` unless it
    has several names; then the known control files of ``root`` and the fixed places are compared."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    if st.st_nlink < 2:
        return None
    candidates = [(os.path.join(root, *rel), kind) for rel, kind in (
        ((".bobbin", "config.toml"), CONFIG), ((".git", "config"), GIT_CONFIG))]
    candidates += [(os.path.join(root, dirname, *below), CLIENT) for dirname, below in _CONTROLS
                   if not any("*" in b for b in below)]
    for place, kind in candidates + fixed(override):
        try:
            other = os.stat(place)
        except (OSError, ValueError):
            continue
        if (other.st_dev, other.st_ino) == (st.st_dev, st.st_ino):
            return kind
    return None


# (directory name, the path below it split in segments) for every control file of every client row
_CONTROLS_BY_ROW = {row.name: [(dirname, tuple(below.split("/"))) for dirname, below in row.controls]
                    for row in clients.ROWS}
_CONTROLS = [control for controls in _CONTROLS_BY_ROW.values() for control in controls]
_HOLDERS = {".git": GIT_HOOKS, **{dirname: CLIENT for dirname, _b in _CONTROLS}}


def _segment(name: str, pattern: str) -> bool:
    """``name`` matches ``pattern`` (literal, or one ``*`` standing for any run of characters)."""
    if "*" not in pattern:
        return name == pattern
    head, _star, tail = pattern.partition("*")
    return len(name) >= len(head) + len(tail) and name.startswith(head) and name.endswith(tail)


def holds_by_name(path: str) -> str | None:
    """The kind of control a directory holds by its name alone (``.git``, and each client's
    directory: ``.claude``, ``.codex``, …)."""
    return _HOLDERS.get(os.path.basename(path))


def holds(path: str, override: str | None = None) -> str | None:
    """The kind of control a directory ``path`` holds (removing or moving it would take the
    control with it): a ``.git`` or a client's directory (``.claude``, ``.codex``, …), one with a ``.bobbin``
    directory in it, or an ancestor of a control at a known place. None otherwise."""
    for candidate in _both(path):
        kind = holds_by_name(candidate)
        if kind:
            return kind
        if os.path.isdir(os.path.join(candidate, ".bobbin")):
            return CONFIG
        prefix = candidate.rstrip("/") + "/"
        for place, kind in fixed(override):
            if place.startswith(prefix):
                return kind
    return None


def _both(path: str) -> list[str]:
    try:
        real = os.path.realpath(path)
    except (OSError, ValueError):
        return [path]
    return [path] if real == path else [path, real]


LANDING_MARKER = "# yupana-landing-hook"  # yupana.commands.install.git.MARKER (a cold module: not imported here)
_READ_BOUND = 256 * 1024


def git_hook_installed(start: str) -> bool:
    """Whether the repository ``start`` (absolute) lies in has yupana's pre-push hook
    installed (``core.hooksPath`` when set, else the git directory's ``hooks/``): a few stats
    and two bounded reads, no git process."""
    d = start
    while True:
        dotgit = os.path.join(d, ".git")
        if os.path.isdir(dotgit):
            gitdir = dotgit
            break
        if os.path.isfile(dotgit):  # a worktree or submodule: "gitdir: <path>"
            text = _read(dotgit).strip()
            if not text.startswith("gitdir:"):
                return False
            gitdir = os.path.join(d, text[7:].strip())
            break
        parent = os.path.dirname(d)
        if parent == d:
            return False
        d = parent
    common = gitdir
    pointer = _read(os.path.join(gitdir, "commondir")).strip()
    if pointer:
        common = os.path.join(gitdir, pointer)
    hooks = _hooks_path(_read(os.path.join(common, "config")))
    folder = os.path.join(d, os.path.expanduser(hooks)) if hooks else os.path.join(common, "hooks")
    return LANDING_MARKER in _read(os.path.join(folder, "pre-push"))


def _hooks_path(config: str) -> str | None:
    """``core.hooksPath`` of a git config file's text (the last one set), or None."""
    section = ""
    found: str | None = None
    for raw in config.splitlines():
        line = raw.strip()
        if line.startswith("["):
            section = line[1:line.find("]")].strip().lower() if "]" in line else ""
            continue
        key, eq, value = line.partition("=")
        if section == "core" and eq and key.strip().lower() == "hookspath":
            value = value.strip()
            found = value[1:-1] if len(value) > 1 and value[0] == value[-1] == '"' else value
    return found


def _read(path: str) -> str:
    """A small file's text ("" when it is missing, unreadable or not a regular file), bounded."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return ""
    try:
        import stat

        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return ""
        return os.read(fd, _READ_BOUND).decode("utf-8", "replace")
    except OSError:
        return ""
    finally:
        os.close(fd)
