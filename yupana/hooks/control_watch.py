"""Tamper evidence for the guard's controls outside the config files (issue 22 §2). Hot path.

Where protection cannot reach (an editor outside any hook, a command pre-bash cannot read),
each hook notices afterwards: the files that arm the guard — the client settings that
register yupana's hooks, the git hook yupana installs, the git config, yupana's own
installation — are fingerprinted by ``stat`` (inode, size, mtime, ctime) on every hook of a
project, and hashed (SHA-256) only when the fingerprint moved. A digest that differs from the
one the last hook of this project saw is a ``control_changed`` record (docs/records.md):
the file, both digests (null: absent), whether the change made the guard looser and what
got looser. The first hook of a project only takes the baseline. The operator learns of a
loosening from stderr, the spool and ``yupana status``; the model is told nothing.

What is looser, per kind of file (:data:`JUDGES`):

* client settings / Codex ``hooks.json``: one of our hook registrations removed or altered,
  an ``env`` key added or changed, ``disableAllHooks`` turned on; the file gone;
* Codex ``config.toml``: a ``[hooks.state."…"]`` trust removed or changed, hooks switched off;
* the git hook: ours (it carries the install marker) removed or changed;
* the git config: ``core.hooksPath`` set or changed;
* the installation: a file of it removed (an upgrade that changes one is recorded, not looser).

Nothing here parses TOML or JSON with the heavy modules: settings through :mod:`yupana.fastjson`,
the rest line by line.
"""

from __future__ import annotations

import os
import sys

from yupana import fastjson
from yupana.state import controls_seen, statefile

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    Summary = dict[str, Any]

READ_LIMIT = 4 << 20
GIT_HOOK_MARKER = "# yupana-landing-hook"  # commands/install/git.py MARKER (a cold module: not imported here)
OUR_EVENTS = ("pre-edit", "pre-bash", "post-edit")
_INSTALLED = ("cli.py", "__main__.py", "hooks/runtime.py", "hooks/protocol.py", "hooks/pre_edit.py",
              "hooks/pre_bash.py", "hooks/post_edit.py", "hooks/control_watch.py")
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# ── which files ────────────────────────────────────────────────────────────────────
def control_files(root: str) -> list[tuple[str, str]]:
    """``(absolute path, kind)`` of every non-config control of the project at ``root``: each
    client's hook settings as its registry row names them (``Client.controls``, in the project
    and in the client's user directory, moved by its variable), the git hook and config, and
    yupana's installation."""
    from yupana import clients

    out: list[tuple[str, str]] = []
    for row in clients.ROWS:
        user = os.environ.get(row.home_env) if row.home_env else None
        for dirname, below in row.controls:
            bases = [os.path.join(root, dirname), user or _home(dirname)]
            for base in bases:
                if base:
                    out += [(path, "toml-config" if path.endswith(".toml") else "settings")
                            for path in _expand(base, below)]
    gitdir = _git_dir(root)
    if gitdir:
        out += [(os.path.join(gitdir, "hooks", "pre-push"), "git-hook"), (os.path.join(gitdir, "config"), "git-config")]
    out += [(os.path.join(_PACKAGE, rel), "installation") for rel in _INSTALLED]
    command = sys.argv[0] if os.path.basename(sys.argv[0]) == "yupana" else ""
    if command:
        out.append((os.path.abspath(command), "installation"))
    unique: dict[str, str] = {}
    for path, kind in out:  # a project at $HOME names the user's files twice
        unique.setdefault(path, kind)
    return list(unique.items())


def _expand(base: str, below: str) -> list[str]:
    """The files ``below`` names under ``base``; a last segment with ``*`` is matched against the
    directory's entries (no fnmatch: it would import ``re`` on every hook)."""
    head, _, name = below.rpartition("/")
    folder = os.path.join(base, head) if head else base
    if "*" not in name:
        return [os.path.join(folder, name)]
    prefix, _, suffix = name.partition("*")
    try:
        entries = sorted(os.listdir(folder))
    except OSError:
        return []
    return [os.path.join(folder, e) for e in entries
            if e.startswith(prefix) and e.endswith(suffix) and len(e) >= len(prefix) + len(suffix)]


def _home(name: str) -> str | None:
    home = os.environ.get("HOME")
    return os.path.join(home, name) if home else None


def _git_dir(root: str) -> str | None:
    """The (common) git directory of the repository holding ``root``, read without git."""
    d = os.path.abspath(root)
    while True:
        dotgit = os.path.join(d, ".git")
        if os.path.isdir(dotgit):
            return dotgit
        if os.path.isfile(dotgit):
            text = _text(dotgit) or ""
            line = next((x for x in text.split("\n") if x.startswith("gitdir:")), "")
            gitdir = os.path.normpath(os.path.join(d, line[7:].strip())) if line[7:].strip() else None
            common = _text(os.path.join(gitdir, "commondir")) if gitdir else None
            return os.path.normpath(os.path.join(gitdir, common.strip())) if gitdir and common else gitdir
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


def _text(path: str) -> str | None:
    try:
        return statefile.read(path, READ_LIMIT).decode("utf-8", "replace")
    except statefile.Refused as exc:
        _forget_refusal(exc)
        return None
    except OSError:
        return None


def _forget_refusal(exc: statefile.Refused) -> None:
    """A control file is not a state file: its refusal is this module's to report."""
    try:
        statefile.refused.remove((exc.path, exc.reason))
    except ValueError:
        pass


# ── what a file says ───────────────────────────────────────────────────────────────
def stat_key(path: str) -> list[int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def _sha256(data: bytes) -> str:
    try:
        from _sha256 import sha256  # builtin: cheaper than hashlib's OpenSSL load
    except ImportError:  # pragma: no cover
        from hashlib import sha256
    return str(sha256(data).hexdigest())


def _is_ours(command: object) -> bool:
    return isinstance(command, str) and "yupana" in command and any(f"hook {e}" in command for e in OUR_EVENTS)


def settings_summary(text: str) -> Summary:
    """Claude Code settings or a hooks.json: our registrations, the ``env`` keys (value digests),
    ``disableAllHooks``."""
    try:
        data = fastjson.loads(text)
    except ValueError:
        return {"unparseable": True}
    if not isinstance(data, dict):
        return {"unparseable": True}
    ours: list[str] = []
    hooks = data.get("hooks")
    for event, groups in (hooks.items() if isinstance(hooks, dict) else ()):
        for group in groups if isinstance(groups, list) else ():
            if not isinstance(group, dict):
                continue
            for handler in group.get("hooks") or () if isinstance(group.get("hooks"), list) else ():
                if isinstance(handler, dict) and _is_ours(handler.get("command")):
                    ours.append(f"{event} {group.get('matcher')!s}: {handler.get('command')} "
                                f"(timeout {handler.get('timeout')!s})")
    env = data.get("env")
    env_keys = {str(k): _sha256(str(v).encode("utf-8", "surrogateescape"))[:16]
                for k, v in env.items()} if isinstance(env, dict) else {}
    return {"ours": sorted(ours), "env": env_keys, "disable_all": data.get("disableAllHooks") is True}


def settings_loosened(old: Summary, new: Summary | None) -> list[str]:
    if new is None:
        return ["the file was deleted"] if old.get("ours") else []
    if new.get("unparseable"):
        return ["the file no longer parses as a JSON object (the client reads no hooks from it)"] \
            if old.get("ours") else []
    out = [f"our hook registration removed or altered: {r.split(':', 1)[0]}"
           for r in old.get("ours") or () if r not in (new.get("ours") or ())]
    old_env = old.get("env") or {}
    for key, value in sorted((new.get("env") or {}).items()):
        if key not in old_env:
            out.append(f"env key added: {key}")
        elif old_env[key] != value:
            out.append(f"env key changed: {key}")
    if new.get("disable_all") and not old.get("disable_all"):
        out.append("disableAllHooks turned on")
    return out


def toml_config_summary(text: str) -> Summary:
    """Codex config.toml, line by line: the hooks' trust (``[hooks.state."<key>"]``
    ``trusted_hash``) and whether a hooks feature flag is false."""
    trust: dict[str, str] = {}
    table, off = "", False
    for raw in text.split("\n"):
        line = raw.strip()
        if line.startswith("["):
            table = line.strip("[] ")
            continue
        key, eq, value = line.partition("=")
        key, value = key.strip().strip('"'), value.split("#", 1)[0].strip()
        if not eq:
            continue
        if table.startswith("hooks.state.") and key == "trusted_hash":
            trust[table[len("hooks.state."):].strip('"')] = value.strip("\"'")
        name = key.rpartition(".")[2]  # a features switch of the client's hooks (`<client>_hooks`, `hooks`)
        if value == "false" and (name == "hooks" or name.endswith("_hooks")) \
                and (table == "features" or key.startswith("features.")):
            off = True
    return {"trust": trust, "hooks_off": off}


def toml_config_loosened(old: Summary, new: Summary | None) -> list[str]:
    new = new or {"trust": {}, "hooks_off": False}
    new_trust = new.get("trust") or {}
    out = [f"hook trust removed or changed: {k}" for k, v in sorted((old.get("trust") or {}).items())
           if new_trust.get(k) != v]
    if new.get("hooks_off") and not old.get("hooks_off"):
        out.append("hooks feature switched off")
    return out


def git_hook_summary(text: str) -> Summary:
    return {"ours": GIT_HOOK_MARKER in text}


def git_hook_loosened(old: Summary, new: Summary | None) -> list[str]:
    if not old.get("ours"):
        return []
    if new is None:
        return ["yupana's git hook was deleted"]
    return ["yupana's git hook was changed" if new.get("ours") else "yupana's git hook was replaced"]


def git_config_summary(text: str) -> Summary:
    """``core.hooksPath`` (the last one wins, as git reads it; None when unset)."""
    section, hooks_path = "", None
    for raw in text.split("\n"):
        line = raw.strip()
        if line.startswith("["):
            close = line.find("]")
            section = line[1:close].strip().lower() if close > 0 else ""
            line = line[close + 1:].strip() if close > 0 else ""
        if not line or line[0] in "#;":
            continue
        key, eq, value = line.partition("=")
        if section == "core" and key.strip().lower() == "hookspath":
            hooks_path = value.strip().strip('"') if eq else "true"
    return {"hooks_path": hooks_path}


def git_config_loosened(old: Summary, new: Summary | None) -> list[str]:
    was, now = old.get("hooks_path"), (new or {}).get("hooks_path")
    return [f"core.hooksPath set to {now}"] if now is not None and now != was else []


def installation_loosened(old: Summary, new: Summary | None) -> list[str]:
    return ["a file of yupana's installation was deleted"] if new is None else []


#: kind → (summary of the text, what got looser from the old summary to the new (None: gone)).
JUDGES: dict[str, tuple[Callable[[str], Summary], Callable[[Summary, Summary | None], list[str]]]] = {
    "settings": (settings_summary, settings_loosened),
    "toml-config": (toml_config_summary, toml_config_loosened),
    "git-hook": (git_hook_summary, git_hook_loosened),
    "git-config": (git_config_summary, git_config_loosened),
    "installation": (lambda text: {}, installation_loosened),
}


# ── the check every hook makes ─────────────────────────────────────────────────────
def look(path: str, kind: str, fp: list[int] | None) -> dict[str, Any]:
    """The entry for ``path`` now: its fingerprint, digest and summary (digest None: absent)."""
    if fp is None:
        return {"stat": None, "digest": None, "summary": None}
    try:
        data = statefile.read(path, READ_LIMIT)
    except statefile.Refused as exc:
        _forget_refusal(exc)
        return {"stat": fp, "digest": None, "summary": None, "refused": exc.reason}
    except OSError as exc:
        return {"stat": fp, "digest": None, "summary": None, "refused": exc.strerror or str(exc)}
    summarize = JUDGES[kind][0]
    return {"stat": fp, "digest": _sha256(data), "summary": summarize(data.decode("utf-8", "replace"))}


def changes(root: str, seen: dict[str, dict[str, Any]]) -> tuple[list[dict[str, Any]], bool]:
    """Compare the control files of ``root`` with ``seen`` (updated in place): the
    ``control_changed`` records' fields, and whether ``seen`` changed."""
    found: list[dict[str, Any]] = []
    dirty = False
    files = control_files(root)
    files += [hook for hook in _hooks_path_hook(files, seen) if hook not in files]
    for path, kind in files:
        fp = stat_key(path)
        before = seen.get(path)
        if before is not None and before.get("stat") == fp:
            continue
        now = look(path, kind, fp)
        seen[path] = {k: v for k, v in now.items() if k != "refused"}
        dirty = True
        if before is None or before.get("digest") == now["digest"]:
            continue  # the baseline, or only the inode/times moved
        summary = before.get("summary")
        old_summary: dict[str, Any] = summary if isinstance(summary, dict) else {}
        if now.get("refused"):
            loosened = [f"the file cannot be read ({now['refused']})"]
        else:
            loosened = JUDGES[kind][1](old_summary, now["summary"])
        found.append({"file": path, "control": kind, "old_digest": before.get("digest"), "new_digest": now["digest"],
                      "looser": bool(loosened), "loosened": loosened, "project": root})
    return found, dirty


def _hooks_path_hook(files: list[tuple[str, str]], seen: dict[str, dict[str, Any]]) -> list[tuple[str, str]]:
    """Where ``core.hooksPath`` (as the last hook saw the git config) puts the pre-push hook:
    ``yupana install git`` installs there when it is set, so it is watched there too."""
    config = next((p for p, k in files if k == "git-config"), None)
    summary = (seen.get(config) or {}).get("summary") if config else None
    hooks_path = summary.get("hooks_path") if isinstance(summary, dict) else None
    if not isinstance(hooks_path, str) or not hooks_path or hooks_path == "/dev/null" or config is None:
        return []
    gitdir = os.path.dirname(config)
    top = os.path.dirname(gitdir) if os.path.basename(gitdir) == ".git" else gitdir
    base = os.path.expanduser(hooks_path) if hooks_path.startswith("~") else hooks_path
    return [(os.path.normpath(os.path.join(top, base, "pre-push")), "git-hook")]


def watch(root: str, project_key: str) -> tuple[list[dict[str, Any]], str | None, dict[str, dict[str, Any]] | None]:
    """``(changes, state file, entries to write or None when nothing moved)`` for ``root``."""
    target = controls_seen.path(project_key)
    seen = controls_seen.read(target)
    found, dirty = changes(root, seen)
    return found, target, seen if dirty and target else None
