"""Gemini CLI's registration: ``hooks`` in ``.gemini/settings.json`` of the project (``--project``,
the default: the git top-level of the cwd) or of the user (``--user``: ``~/.gemini``, or
``$GEMINI_CLI_HOME/.gemini``), and the folder trust without which Gemini runs none of them.
Cold path.

:func:`run` is ``yupana install|uninstall gemini``; :func:`found`, :func:`registrations`,
:func:`trust_problems` and :func:`unseen_fix` are what ``yupana status`` reads
(:mod:`yupana.clients`, the installer contract).

The hooks are ``BeforeTool`` (``write_file|replace`` → pre-edit, ``run_shell_command`` →
pre-bash) and ``AfterTool`` (``write_file|replace`` → post-edit), each through the skew-proof
wrapper with ``--client gemini`` and ``"timeout": 5000`` — **milliseconds** in Gemini
(``gemini hooks migrate --from-claude`` copies Claude's ``5``: 5 ms, every answer cut).
Gemini fails CLOSED on a hook that exits other than 0 or 1 with text (``yupana: not found``,
exit 127, blocks every edit): the wrapper turns every failure into an empty exit 0.

**Folder trust** (Gemini CLI 0.61, ``trustedFolders.ts``, ``hookRegistry.ts``): folder trust is
on unless ``security.folderTrust.enabled`` is false; a folder is trusted by
``GEMINI_CLI_TRUST_WORKSPACE=true`` (``--skip-trust`` sets it, but only after the project's
settings were dropped), or by the longest matching rule in ``~/.gemini/trustedFolders.json``
(``TRUST_FOLDER``, ``TRUST_PARENT``, ``DO_NOT_TRUST``). In an untrusted folder Gemini skips
every hook, the user's too, with only a debug-log line; a project's ``.gemini/settings.json``
is not even read there. :func:`folder_trust` reads the same inputs.
"""

from __future__ import annotations

from typing import Any

import argparse
import json
import os
import re
import shutil
import sys

from yupana.clients.install import registration

TRUST_LEVELS = ("TRUST_FOLDER", "TRUST_PARENT", "DO_NOT_TRUST")
MIN_TIMEOUT_MS = 1000  # below this Gemini cuts a cold yupana before it answers (status: degraded)


def gemini_dir() -> str:
    """The user's Gemini directory: ``$GEMINI_CLI_HOME/.gemini``, else ``~/.gemini``."""
    return os.path.join(os.environ.get("GEMINI_CLI_HOME") or os.path.expanduser("~"), ".gemini")


def settings_path(user: bool) -> str:
    """The settings file an install writes: the user's or the project's ``.gemini/settings.json``."""
    from yupana.commands import install as install_cmd

    if user:
        return os.path.join(gemini_dir(), "settings.json")
    return os.path.join(install_cmd.project_root(os.getcwd()), ".gemini", "settings.json")


def system_settings_path() -> str:
    return os.environ.get("GEMINI_CLI_SYSTEM_SETTINGS_PATH") or "/etc/gemini-cli/settings.json"


def trusted_folders_path() -> str:
    return os.environ.get("GEMINI_CLI_TRUSTED_FOLDERS_PATH") or os.path.join(gemini_dir(), "trustedFolders.json")


def run(args: argparse.Namespace, install: bool) -> int:
    """``yupana install gemini`` (``install``) or ``yupana uninstall gemini``; an install into a
    folder Gemini does not trust says what will skip the hooks, and how to trust it."""
    from yupana.commands import install as install_cmd

    user = bool(getattr(args, "user", False))
    status = int(install_cmd.settings_file(args, install, settings_path(user), "gemini"))
    if install and status == 0:
        root = install_cmd.project_root(os.getcwd())
        for problem in _folder_problems(folder_trust(root), root, project=not user):
            print(f"yupana: note: {problem['problem']}; fix: {problem['fix']}", file=sys.stderr)
    return status


def found(root: str) -> list[str]:
    """Why Gemini CLI counts as present: on PATH, ``~/.gemini``, ``.gemini`` in the project."""
    return registration.found_dirs([("gemini on PATH", shutil.which("gemini")),
                                    ("~/.gemini", gemini_dir()),
                                    (".gemini in the project", os.path.join(root, ".gemini"))])


def registrations(root: str) -> list[dict[str, Any]]:
    """The project's settings (at the git top-level, and at ``root`` when that differs), the
    user's and the system's; each carries the folder's trust for :func:`trust_problems`."""
    from yupana.commands import install as install_cmd

    top = install_cmd.project_root(root)
    places = [("project", os.path.join(top, ".gemini", "settings.json")),
              ("user", os.path.join(gemini_dir(), "settings.json")),
              ("system", system_settings_path())]
    if os.path.realpath(top) != os.path.realpath(root):
        places.insert(1, ("project", os.path.join(root, ".gemini", "settings.json")))
    regs = registration.read_places(places)
    trust = folder_trust(top)
    for reg in regs:
        reg["folder_trust"] = trust
        reg["root"] = top
        reg["hooks_disabled"] = _disabled(reg["path"], reg["hooks"])
    return regs


def trust_problems(entry: dict[str, Any], hooks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A degraded problem per state in which Gemini skips our registered hooks silently: an
    untrusted folder, a timeout too short to answer in (milliseconds), hooks switched off."""
    regs = [r for r in entry.get("registrations") or [] if r.get("hooks")]
    if not regs:
        return []
    entry["folder_trust"] = regs[0]["folder_trust"]
    problems = _folder_problems(regs[0]["folder_trust"], regs[0]["root"],
                                project=any(r["scope"] == "project" for r in regs),
                                user=any(r["scope"] != "project" for r in regs))
    short = [h["event"] for h in hooks if isinstance(h.get("timeout"), (int, float))
             and not isinstance(h.get("timeout"), bool) and h["timeout"] < MIN_TIMEOUT_MS]
    if short:
        problems.append({"degraded": True, "hooks": short,
                         "problem": f"{', '.join(short)}: Gemini CLI reads `timeout` in milliseconds, and under "
                                    f"{MIN_TIMEOUT_MS} ms it cuts yupana before it answers (Claude Code's 5 copied "
                                    "by hand or by `gemini hooks migrate --from-claude` is 5 ms) — a cut hook is an "
                                    "allow, so every deny is discarded",
                         "fix": "`yupana install gemini` (timeout 5000)"})
    for reg in regs:
        for why in reg.get("hooks_disabled") or ():
            problems.append({"degraded": True, "problem": f"{reg['path']}: {why}: Gemini CLI runs none of "
                                                         "yupana's hooks — the guard does not run",
                             "fix": f"remove that setting from {reg['path']}"})
    return problems


def unseen_fix(entry: dict[str, Any]) -> str:
    """Added to status's fix when registered hooks never ran: only project registrations."""
    if all(r["scope"] == "project" for r in entry["registrations"] if r["hooks"]):
        return ("; Gemini CLI reads a project's .gemini/settings.json only when started in that directory — "
                "for agents started in a subdirectory, `yupana install gemini --user`")
    return ""


# ── folder trust ──────────────────────────────────────────────────────────────────────


def folder_trust(root: str) -> dict[str, Any]:
    """Whether Gemini CLI trusts ``root``: ``{"trusted": True | False | None, "source", "detail"}``
    (None: no rule says; headless Gemini then refuses to start unless told to trust it)."""
    env = os.environ
    if env.get("GEMINI_RESTRICTED_MODE") == "true" or env.get("GEMINI_CLI_TRUST_WORKSPACE") == "false":
        return {"trusted": False, "source": "env", "detail": "GEMINI_RESTRICTED_MODE=true or "
                                                             "GEMINI_CLI_TRUST_WORKSPACE=false in this environment"}
    if env.get("GEMINI_CLI_TRUST_WORKSPACE") == "true":
        return {"trusted": True, "source": "env", "detail": "GEMINI_CLI_TRUST_WORKSPACE=true in this environment"}
    for path in (system_settings_path(), os.path.join(gemini_dir(), "settings.json")):
        security = _json(path).get("security")
        folder = security.get("folderTrust") if isinstance(security, dict) else None
        enabled = folder.get("enabled") if isinstance(folder, dict) else None
        if enabled is False:
            return {"trusted": True, "source": "setting", "detail": f"security.folderTrust.enabled is false in {path}"}
        if enabled is True:
            break
    path = trusted_folders_path()
    try:
        with open(path, encoding="utf-8") as fh:
            rules = json.loads(_strip_comments(fh.read()))
    except FileNotFoundError:
        return {"trusted": None, "source": None, "detail": f"no rule for {root} (no {path})"}
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        return {"trusted": None, "source": "file", "detail": f"{path} is unreadable ({exc}): Gemini CLI refuses to "
                                                           "start until it is fixed"}
    level, rule = _longest_match(rules if isinstance(rules, dict) else {}, root)
    if level is None:
        return {"trusted": None, "source": None, "detail": f"no rule in {path} covers {root}"}
    return {"trusted": level != "DO_NOT_TRUST", "source": "file", "detail": f"{path}: {rule!r} is {level}"}


def _longest_match(rules: dict[str, Any], root: str) -> tuple[str | None, str | None]:
    """The trust level of the longest rule path whose folder contains ``root`` (real paths)."""
    where = os.path.realpath(root)
    best: tuple[str | None, str | None] = (None, None)
    longest = -1
    for rule, level in rules.items():
        if level not in TRUST_LEVELS:
            continue
        folder = os.path.realpath(os.path.dirname(rule) if level == "TRUST_PARENT" else rule)
        inside = where == folder or where.startswith(folder.rstrip(os.sep) + os.sep)
        if inside and len(rule) > longest:
            longest, best = len(rule), (level, rule)
    return best


def _folder_problems(trust: dict[str, Any], root: str, *, project: bool, user: bool = True) -> list[dict[str, Any]]:
    trust_it = (f"trust the folder: run `gemini` in {root} and choose to trust it, or add "
                f"\"{root}\": \"TRUST_FOLDER\" to {trusted_folders_path()}")
    if trust["trusted"] is False:
        return [{"degraded": True, "problem": f"Gemini CLI does not trust {root} ({trust['detail']}): there it skips "
                                              "every hook, the user's too, with only a debug-log line — the guard "
                                              "does not run",
                 "fix": trust_it}]
    if trust["trusted"] is None and project:
        return [{"degraded": True, "problem": f"Gemini CLI does not trust {root} yet ({trust['detail']}): a headless "
                                              "`gemini -p … --skip-trust` reads no project .gemini/settings.json "
                                              "there, so the project's yupana hooks are skipped silently",
                 "fix": f"{trust_it}; or run headless with GEMINI_CLI_TRUST_WORKSPACE=true instead of --skip-trust; "
                        "or register for the user: `yupana install gemini --user`"}]
    return []


def _disabled(path: str, hooks: list[dict[str, Any]]) -> list[str]:
    """Why the settings at ``path`` switch our hooks off: ``hooksConfig.enabled`` false, or one
    of ours (named by its command: we give it no ``name``) in ``hooksConfig.disabled``."""
    config = _json(path).get("hooksConfig")
    if not isinstance(config, dict):
        return []
    out = []
    if config.get("enabled") is False:
        out.append("hooksConfig.enabled is false")
    disabled = config.get("disabled")
    if isinstance(disabled, list):
        ours = {h["command"] for h in hooks}
        if any(name in ours for name in disabled):
            out.append("hooksConfig.disabled lists a yupana hook")
    return out


def _json(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.loads(_strip_comments(fh.read()))
    except (OSError, UnicodeDecodeError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


_COMMENT = re.compile(r'"(?:\\.|[^"\\])*"|//[^\n]*|/\*.*?\*/', re.S)


def _strip_comments(text: str) -> str:
    """JSON with ``//`` and ``/* */`` comments (as Gemini reads its settings) as plain JSON."""
    return _COMMENT.sub(lambda m: m.group(0) if m.group(0).startswith('"') else "", text)
