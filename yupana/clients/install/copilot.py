"""GitHub Copilot CLI's registration. Cold path.

``yupana install copilot`` writes the hooks, through the skew-proof wrapper (Copilot fails
CLOSED: a hook that errors denies the tool), with ``"timeout": 5`` (seconds: Copilot reads
``timeout`` as ``timeoutSec``), to

* ``--user`` (the default): ``$COPILOT_HOME/settings.json`` (default ``~/.copilot``), the
  ``hooks`` key merged as ``install claude`` merges Claude Code's settings. User hooks run in
  every folder, trusted or not, and in ``copilot -p``;
* ``--project``: ``<git top-level>/.github/hooks/yupana.json``, a repository hook file. Copilot
  loads repository hooks only in a folder the user trusted (``trustedFolders`` in
  ``$COPILOT_HOME/config.json``, or ``--trust-folder`` for one ``-p`` session); otherwise it
  skips them **silently**. Install says so (exit 3), and so does ``yupana status``.

:func:`found`, :func:`registrations` and :func:`trust_problems` are what ``yupana status`` reads.
docs/clients/copilot.md.
"""

from __future__ import annotations

from typing import Any

import argparse
import glob
import json
import os
import shutil
import sys

from yupana.clients.install import registration

UNTRUSTED_EXIT = 3  # registered, but Copilot will not run it here (as `install codex` without trust)
HOOK_FILE = "yupana.json"  # ours, in the repository's .github/hooks/


def copilot_home() -> str:
    """``$COPILOT_HOME``, else ``~/.copilot``."""
    return os.environ.get("COPILOT_HOME") or os.path.join(os.path.expanduser("~"), ".copilot")


def run(args: argparse.Namespace, install: bool) -> int:
    """``yupana install copilot`` (``install``) or ``yupana uninstall copilot``."""
    from yupana.commands import install as install_cmd

    project = bool(getattr(args, "project", False))
    path = project_path(install_cmd.project_root(os.getcwd())) if project else user_path()
    code = install_cmd.settings_file(args, install, path, "copilot")
    if not install and project and not code and not args.dry_run:
        _drop_if_empty(path)
    if code or not install or not project or args.dry_run:
        return code
    top = install_cmd.project_root(os.getcwd())
    trusted, why = folder_trusted(top)
    if trusted:
        print(f"copilot trusts {top} ({why}): it runs these repository hooks")
        return code
    print(f"yupana: Copilot CLI loads repository hooks only in a trusted folder, and {top} is not one ({why}): "
          "`copilot -p` skips them silently. Trust the folder (start `copilot` in it and accept), or register for "
          "the user instead: `yupana uninstall copilot --project && yupana install copilot --user`", file=sys.stderr)
    return UNTRUSTED_EXIT


def _drop_if_empty(path: str) -> None:
    """Our own repository hook file, left holding nothing by uninstall, is removed."""
    try:
        with open(path, encoding="utf-8") as fh:
            empty = json.load(fh) in ({}, {"hooks": {}})
        if empty:
            os.remove(path)
            print(f"removed {path}: it held only yupana's hooks")
    except (OSError, ValueError):
        pass


def user_path() -> str:
    return os.path.join(copilot_home(), "settings.json")


def project_path(top: str) -> str:
    return os.path.join(top, ".github", "hooks", HOOK_FILE)


def found(root: str) -> list[str]:
    """Why Copilot CLI counts as present: on PATH, or its home directory exists."""
    return registration.found_dirs([("copilot on PATH", shutil.which("copilot")),
                                    ("$COPILOT_HOME" if os.environ.get("COPILOT_HOME") else "~/.copilot",
                                     copilot_home())])


def registrations(root: str) -> list[dict[str, Any]]:
    """Every file Copilot reads hooks from: the user's settings.json and hooks/*.json, and the
    repository's .github/hooks/*.json and .github/copilot/settings(.local).json — the
    repository ones with the folder's trust (``trusted``, ``trust_source``)."""
    from yupana.commands import install as install_cmd

    top = install_cmd.project_root(root)
    home = copilot_home()
    places = [("user", user_path())]
    places += [("user", p) for p in sorted(glob.glob(os.path.join(home, "hooks", "*.json")))]
    repo = [("project", p) for p in sorted(glob.glob(os.path.join(top, ".github", "hooks", "*.json")))]
    repo += [("project", os.path.join(top, ".github", "copilot", name))
             for name in ("settings.json", "settings.local.json")]
    out, done = [], set()
    for scope, path in places + repo:
        if os.path.realpath(path) not in done:
            done.add(os.path.realpath(path))
            out.append(read_registration(scope, path))
    trusted, why = folder_trusted(top)
    disabled = all_hooks_disabled([user_path(), *(p for _, p in repo if p.endswith(".json") and "/copilot/" in p)])
    for reg in out:
        if reg["scope"] == "project":
            reg["trusted"], reg["trust_source"] = trusted, why
        if disabled:
            reg["disabled_by"] = disabled
    return out


def trust_problems(entry: dict[str, Any], hooks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Degraded: repository hooks in a folder Copilot does not trust (``-p`` skips them silently),
    and ``disableAllHooks``, which turns every hook off."""
    problems = []
    regs = [r for r in entry.get("registrations", []) if r.get("hooks")]
    untrusted = [r for r in regs if r["scope"] == "project" and r.get("trusted") is False]
    if untrusted and not any(r["scope"] == "user" for r in regs):
        events = sorted({h["event"] for r in untrusted for h in r["hooks"]})
        problems.append({"degraded": True, "hooks": events,
                         "problem": f"Copilot CLI hooks in {untrusted[0]['path']} are not trusted "
                                    f"({untrusted[0].get('trust_source')}): Copilot loads repository hooks only in "
                                    "a trusted folder, and `copilot -p` skips them silently — the guard does not run",
                         "fix": "`yupana install copilot --user` (user hooks need no folder trust), or trust the "
                                "folder: start `copilot` in it and accept, or pass `--trust-folder` to each `-p` run"})
    places = sorted({r["path"] for r in regs})
    if len(places) > 1:
        problems.append({"degraded": False, "hooks": sorted({h["event"] for r in regs for h in r["hooks"]}),
                         "problem": f"yupana hooks are registered in {len(places)} places Copilot reads "
                                    f"({', '.join(places)}): Copilot runs each, so a tool call is checked (and "
                                    "recorded) once per place",
                         "fix": "keep one: `yupana uninstall copilot --project` or `yupana uninstall copilot --user`"})
    claude_shaped = sorted({h["event"] for r in regs for h in r["hooks"]
                            if h["file_event"] in ("PreToolUse", "PostToolUse") and "--client copilot" not in h["command"]})
    if claude_shaped:
        problems.append({"degraded": True, "hooks": claude_shaped,
                         "problem": f"{', '.join(claude_shaped)} registered under Claude's PreToolUse/PostToolUse "
                                    "without --client copilot: Copilot then sends Claude's tool names with its own "
                                    "field names, read as Claude Code's — the text an edit introduces is not seen",
                         "fix": "`yupana install copilot` (its own preToolUse events, --client copilot), and remove "
                                "the hand registration"})
    disabled = next((r["disabled_by"] for r in regs if r.get("disabled_by")), None)
    if disabled:
        problems.append({"degraded": True, "hooks": sorted({h["event"] for r in regs for h in r["hooks"]}),
                         "problem": f"disableAllHooks is true in {disabled}: Copilot CLI runs no hook at all",
                         "fix": f"remove disableAllHooks from {disabled}"})
    return problems


# ── Copilot's own files ──────────────────────────────────────────────────────────────


def read_registration(scope: str, path: str) -> dict[str, Any]:
    """Our hooks in one Copilot hooks or settings file (``{scope, path, error, hooks}``, as
    :func:`registration.read_registration`), its own flat form read too: an entry that is itself a
    handler (``{"type": "command", "bash": …, "timeoutSec": …}``), ``bash`` for ``command``,
    ``timeoutSec`` for ``timeout``."""
    from yupana.commands.install import hooks as install_hooks

    reg: dict[str, Any] = {"scope": scope, "path": path, "error": None, "hooks": []}
    try:
        text, data = install_hooks.read(path)
    except install_hooks.HooksFileError as exc:
        reg["error"] = str(exc)
        return reg
    if text is not None:
        reg["hooks"] = install_hooks.inspect(nested(data))
    return reg


def nested(data: dict[str, Any]) -> dict[str, Any]:
    """``data``'s hooks in Claude's nested shape, each flat entry a group of its own (same index)."""
    out: dict[str, Any] = {}
    for event, groups in (data.get("hooks") or {}).items():
        if not isinstance(groups, list):
            continue
        out[event] = []
        for group in groups:
            if isinstance(group, dict) and "hooks" not in group:
                group = {"matcher": group.get("matcher"), "hooks": [group]}
            if isinstance(group, dict) and isinstance(group.get("hooks"), list):
                group = dict(group, hooks=[_handler(h) for h in group["hooks"]])
            out[event].append(group)
    return {"hooks": out}


def _handler(handler: Any) -> Any:
    if not isinstance(handler, dict):
        return handler
    out = dict(handler)
    if not isinstance(out.get("command"), str) and isinstance(out.get("bash"), str):
        out["command"] = out["bash"]
    if "timeout" not in out and "timeoutSec" in out:
        out["timeout"] = out["timeoutSec"]
    return out



def read_jsonc(path: str) -> Any:
    """A Copilot config file: JSON whose whole-line ``//`` comments Copilot writes itself
    (config.json starts with two). Raises OSError / ValueError."""
    with open(path, encoding="utf-8") as fh:
        lines = [line for line in fh.read().splitlines() if not line.lstrip().startswith("//")]
    return json.loads("\n".join(lines))


def folder_trusted(top: str) -> tuple[bool | None, str]:
    """Whether Copilot trusts ``top``: it or a folder above it is in ``trustedFolders`` of
    ``$COPILOT_HOME/config.json`` (where Copilot 1.0.102 keeps the trust a user accepts), or
    ``COPILOT_ALLOW_ALL=true``. (None, why) when that file cannot be read."""
    if os.environ.get("COPILOT_ALLOW_ALL") == "true":
        return True, "COPILOT_ALLOW_ALL=true"
    path = os.path.join(copilot_home(), "config.json")
    try:
        data = read_jsonc(path)
    except FileNotFoundError:
        return False, f"no {path}"
    except (OSError, ValueError) as exc:
        return None, f"cannot read {path}: {exc}"
    folders = data.get("trustedFolders") if isinstance(data, dict) else None
    if not isinstance(folders, list):
        return False, f"no trustedFolders in {path}"
    real = os.path.realpath(top)
    for folder in folders:
        if isinstance(folder, str) and folder:
            base = os.path.realpath(os.path.expanduser(folder))
            if real == base or real.startswith(base.rstrip(os.sep) + os.sep):
                return True, f"trustedFolders in {path}: {folder}"
    return False, f"not in trustedFolders of {path}"


def all_hooks_disabled(paths: list[str]) -> str | None:
    """The first of ``paths`` (Copilot settings files) that sets ``disableAllHooks: true``."""
    for path in paths:
        try:
            data = read_jsonc(path)
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and data.get("disableAllHooks") is True:
            return path
    return None
