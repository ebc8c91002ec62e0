"""Qwen Code's registration: ``hooks`` in ``.qwen/settings.json`` of the project (``--project``, the
default: the git top-level of the cwd) or of the user (``--user``: ``$QWEN_HOME/settings.json``,
default ``~/.qwen``). Cold path.

The file shares Claude Code's hooks shape, so :func:`run` is the common settings writer with
Qwen's row (its tool names, ``--client qwen``, ``"timeout": 5000`` — milliseconds in Qwen Code
0.24, which reads values of 1000 or more as milliseconds and smaller ones as seconds).

What ``yupana status`` reads: :func:`found`, :func:`registrations` (the project's file — at the
git top-level, and at the directory status runs in when that differs —, the user's and the
system's ``/etc/qwen-code/settings.json``), and :func:`trust_problems`: the states in which
Qwen Code skips our hooks **silently** (measured in 0.24.4, docs/clients/qwen.md):

* ``disableAllHooks: true`` in the settings that win (system, then the project's when the
  folder is trusted, then the user's): no hook runs at all;
* folder trust on (``security.folderTrust.enabled``) and the project folder not trusted in
  ``trustedFolders.json``: project hooks are not loaded (user and system hooks still are).
"""

from __future__ import annotations

from typing import Any

import argparse
import json
import os
import shutil

from yupana.clients.install import registration

SYSTEM_SETTINGS = "/etc/qwen-code/settings.json"


def run(args: argparse.Namespace, install: bool) -> int:
    """``yupana install qwen`` (``install``) or ``yupana uninstall qwen``."""
    from yupana.commands import install as install_cmd

    return install_cmd.settings_file(args, install, settings_path(bool(getattr(args, "user", False))), "qwen")


def qwen_home() -> str:
    """Qwen Code's own directory: ``$QWEN_HOME``, else ``~/.qwen``."""
    return os.path.abspath(os.path.expanduser(os.environ.get("QWEN_HOME") or os.path.join("~", ".qwen")))


def settings_path(user: bool) -> str:
    """The settings file an install writes: the user's, or the project's ``.qwen/settings.json``."""
    from yupana.commands import install as install_cmd

    if user:
        return os.path.join(qwen_home(), "settings.json")
    return os.path.join(install_cmd.project_root(os.getcwd()), ".qwen", "settings.json")


def system_settings_path() -> str:
    return os.environ.get("QWEN_CODE_SYSTEM_SETTINGS_PATH") or SYSTEM_SETTINGS


def trusted_folders_path() -> str:
    return os.environ.get("QWEN_CODE_TRUSTED_FOLDERS_PATH") or os.path.join(qwen_home(), "trustedFolders.json")


def found(root: str) -> list[str]:
    """Why Qwen Code counts as present: on PATH, its home directory, ``.qwen`` in the project."""
    return registration.found_dirs([("qwen on PATH", shutil.which("qwen")),
                                    ("$QWEN_HOME" if os.environ.get("QWEN_HOME") else "~/.qwen", qwen_home()),
                                    (".qwen in the project", os.path.join(root, ".qwen"))])


def registrations(root: str) -> list[dict[str, Any]]:
    """Each settings file Qwen Code reads, our hooks in it, and whether Qwen runs them here
    (each hook's ``trust``: ``loaded``, ``untrusted-folder`` or ``hooks-disabled``; the file's
    ``skipped``: why not, or None)."""
    from yupana.commands import install as install_cmd

    top = install_cmd.project_root(root)
    places = [("project", os.path.join(top, ".qwen", "settings.json"))]
    if os.path.realpath(top) != os.path.realpath(root):
        places.append(("project", os.path.join(root, ".qwen", "settings.json")))
    places += [("user", os.path.join(qwen_home(), "settings.json")), ("system", system_settings_path())]
    regs = registration.read_places(places)
    trusted = folder_trusted(root)
    disabled = hooks_disabled(root, trusted)
    for reg in regs:
        if disabled:
            reg["skipped"] = f"disableAllHooks is true in {disabled}"
        elif reg["scope"] == "project" and trusted is not True:
            reg["skipped"] = (f"folder trust is on and {root} is {'not trusted' if trusted is False else 'not in'} "
                              f"{trusted_folders_path()}: project hooks are not loaded")
        else:
            reg["skipped"] = None
        for hook in reg["hooks"]:
            hook["trust"] = ("hooks-disabled" if disabled else "untrusted-folder" if reg["skipped"] else "loaded")
    return regs


def _settings(path: str) -> dict[str, Any]:
    """A settings file's object ({} when absent or unreadable: its error is reported with its hooks).
    Qwen Code reads JSON with comments; a file with comments reads as {} here."""
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def folder_trust_enabled() -> bool:
    """``security.folderTrust.enabled`` as Qwen Code resolves it (system over user; default off)."""
    for path in (system_settings_path(), os.path.join(qwen_home(), "settings.json")):
        value = ((_settings(path).get("security") or {}).get("folderTrust") or {}).get("enabled")
        if isinstance(value, bool):
            return value
    return False


def folder_trusted(root: str) -> bool | None:
    """Whether Qwen Code trusts ``root``: True when folder trust is off or a rule trusts it, False
    when a rule distrusts it, None when no rule names it (Qwen then loads no project hooks).

    ``trustedFolders.json`` maps paths to ``TRUST_FOLDER`` (the path), ``TRUST_PARENT`` (its
    parent) or ``DO_NOT_TRUST``; the deepest rule at or above ``root`` wins, distrust on a tie."""
    if not folder_trust_enabled():
        return True
    rules = _settings(trusted_folders_path())
    best: tuple[int, bool] | None = None
    for location in {os.path.abspath(root), os.path.realpath(root)}:
        for path, level in rules.items():
            if level not in ("TRUST_FOLDER", "TRUST_PARENT", "DO_NOT_TRUST") or not isinstance(path, str):
                continue
            base = os.path.normpath(os.path.dirname(path) if level == "TRUST_PARENT" else path)
            if location != base and not location.startswith(base.rstrip("/") + "/"):
                continue
            depth = len([p for p in base.split("/") if p])
            verdict = level != "DO_NOT_TRUST"
            if best is None or depth > best[0] or (depth == best[0] and not verdict):
                best = (depth, verdict)
    return None if best is None else best[1]


def hooks_disabled(root: str, trusted: bool | None) -> str | None:
    """The settings file whose ``disableAllHooks: true`` wins (system, the trusted project's, the
    user's), or None."""
    places = [system_settings_path()]
    if trusted:
        places.append(os.path.join(root, ".qwen", "settings.json"))
    places.append(os.path.join(qwen_home(), "settings.json"))
    for path in places:
        value = _settings(path).get("disableAllHooks")
        if isinstance(value, bool):
            return path if value else None
    return None


def trust_problems(entry: dict[str, Any], hooks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A degraded problem per registration Qwen Code skips silently, with its fix."""
    problems = []
    for reg in entry["registrations"]:
        if not reg.get("skipped") or not reg["hooks"]:
            continue
        events = [h["event"] for h in reg["hooks"]]
        if reg["hooks"][0].get("trust") == "hooks-disabled":
            fix = "remove `disableAllHooks` (or set it to false) in that file"
        else:
            fix = (f"trust the folder (`/trust` in Qwen Code, or \"{os.path.dirname(os.path.dirname(reg['path']))}\": "
                   f"\"TRUST_FOLDER\" in {trusted_folders_path()}), or `yupana install qwen --user` "
                   "(user hooks load in any folder)")
        problems.append({"degraded": True, "hooks": events,
                         "problem": f"{reg['path']}: {reg['skipped']} — Qwen Code skips {', '.join(events)} "
                                    "silently: the guard does not run",
                         "fix": fix})
    return problems


def unseen_fix(entry: dict[str, Any]) -> str:
    """Added to status's fix when registered hooks never ran: only project registrations."""
    if all(r["scope"] != "user" for r in entry["registrations"] if r["hooks"]):
        return ("; Qwen Code reads .qwen/settings.json of the directory it starts in — for agents started in a "
                "subdirectory, `yupana install qwen --user`")
    return ""
