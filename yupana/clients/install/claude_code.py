"""Claude Code's registration: ``.claude/settings.json`` of the project (``--project``, the
default: the git top-level of the cwd) or of the user (``--user``). Cold path.

:func:`run` is ``yupana install|uninstall claude``; :func:`found` and :func:`registrations`
are what ``yupana status`` reads (:mod:`yupana.clients`, the installer contract).
"""

from __future__ import annotations

from typing import Any

import argparse
import os
import shutil

from yupana.clients.install import registration


def run(args: argparse.Namespace, install: bool) -> int:
    """``yupana install claude`` (``install``) or ``yupana uninstall claude``."""
    from yupana.commands import install as install_cmd

    return install_cmd.settings_file(args, install, settings_path(bool(getattr(args, "user", False))), "claude")


def settings_path(user: bool) -> str:
    """The settings file an install writes: ``~/.claude/settings.json`` or the project's."""
    from yupana.commands import install as install_cmd

    if user:
        return os.path.join(os.path.expanduser("~"), ".claude", "settings.json")
    return os.path.join(install_cmd.project_root(os.getcwd()), ".claude", "settings.json")


def found(root: str) -> list[str]:
    """Why Claude Code counts as present: on PATH, ``~/.claude``, ``.claude`` in the project."""
    home = os.path.expanduser("~")
    return registration.found_dirs([("claude on PATH", shutil.which("claude")),
                                    ("~/.claude", os.path.join(home, ".claude")),
                                    (".claude in the project", os.path.join(root, ".claude"))])


def registrations(root: str) -> list[dict[str, Any]]:
    """The project's settings.json (at the git top-level, and at ``root`` when that differs),
    its settings.local.json, and the user's settings.json."""
    from yupana.commands import install as install_cmd

    top = install_cmd.project_root(root)
    places = [("project", os.path.join(top, ".claude", "settings.json")),
              ("project-local", os.path.join(top, ".claude", "settings.local.json")),
              ("user", os.path.join(os.path.expanduser("~"), ".claude", "settings.json"))]
    if os.path.realpath(top) != os.path.realpath(root):
        places.insert(1, ("project", os.path.join(root, ".claude", "settings.json")))
    return registration.read_places(places)


def unseen_fix(entry: dict[str, Any]) -> str:
    """Added to status's fix when registered hooks never ran: only project registrations."""
    if all(r["scope"] != "user" for r in entry["registrations"] if r["hooks"]):
        return ("; Claude Code reads a project's .claude/settings.json only when started in that directory — "
                "for agents started in a subdirectory, `yupana install claude --user`")
    return ""
