"""Codex's registration: ``$CODEX_HOME/hooks.json`` (default ``~/.codex``) and each hook's
trust in ``$CODEX_HOME/config.toml``. Cold path.

:func:`run` is ``yupana install|uninstall codex`` (:mod:`yupana.clients.install.codex_run`);
:func:`found`, :func:`registrations` and :func:`trust_problems` are what ``yupana status``
reads. Codex runs a hook only when its ``trusted_hash`` equals the hook's current hash,
computed here the way Codex computes it (:func:`yupana.clients.install.codex_hooks.hook_hash`) —
no app-server is started, so status stays fast; ``yupana install codex`` verifies with the
app-server itself.
"""

from __future__ import annotations

from typing import Any

import argparse
import os
import shutil

from yupana.clients.install import registration
from yupana.clients.install import codex_hooks as install_codex

WHERE = "$CODEX_HOME/hooks.json"  # for `yupana install codex --project`: where it registers instead
STATUS_FIELDS = {"trust_hash_source": ("computed as Codex 0.171.0 computes it (no app-server is asked); "
                     "`yupana install codex` verifies with `codex app-server`")}


def run(args: argparse.Namespace, install: bool) -> int:
    """``yupana install codex`` (``install``) or ``yupana uninstall codex``."""
    from yupana.clients.install import codex_run

    return codex_run.run(args, install)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``--codex-bin``: the codex asked for hook hashes."""
    parser.add_argument("--codex-bin", default=None,
                        help="codex: the codex command asked for hook hashes (default: codex on PATH)")


def found(root: str) -> list[str]:
    """Why Codex counts as present: on PATH, or its home directory exists."""
    home = install_codex.codex_home()
    return registration.found_dirs([("codex on PATH", shutil.which("codex")),
                                    ("$CODEX_HOME" if os.environ.get("CODEX_HOME") else "~/.codex", home)])


def registrations(root: str) -> list[dict[str, Any]]:
    """``$CODEX_HOME/hooks.json``, each of our hooks with its ``trust`` (:func:`_trust`)."""
    home = install_codex.codex_home()
    reg = registration.read_registration("codex-home", os.path.join(home, "hooks.json"))
    if reg["hooks"]:
        _trust(reg, os.path.join(home, "config.toml"))
    return [reg]


def _trust(reg: dict[str, Any], config_path: str) -> None:
    """Each hook's ``trust``: trusted | untrusted | modified | disabled | unknown (and the hashes)."""
    import tomllib

    from yupana.clients.install import codex_toml as install_toml

    try:
        tables = install_toml.state_tables(tomllib.loads(install_codex.read_config(config_path)))
        reg["config_error"] = None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        tables, reg["config_error"] = {}, f"cannot read {config_path}: {exc}"
    states = {}
    for key, table in tables.items():
        slot = install_codex.key_prefix_matches(key, reg["path"])
        if slot is not None and isinstance(table, dict):
            states[slot] = (key, table)
    for hook in reg["hooks"]:
        snake = {"PreToolUse": "pre_tool_use", "PostToolUse": "post_tool_use"}.get(hook["file_event"], hook["file_event"])
        current = install_codex.hook_hash(hook["file_event"], hook["matcher"], hook["handler"])
        key, table = states.get((snake, *hook["slot"]), (f"{reg['path']}:{snake}:{hook['slot'][0]}:{hook['slot'][1]}", {}))
        trusted = table.get("trusted_hash")
        if table.get("enabled") is False:
            trust = "disabled"
        elif current is None:
            trust = "unknown"
        elif trusted is None:
            trust = "untrusted"
        else:
            trust = "trusted" if trusted == current else "modified"
        hook.update(key=key, current_hash=current, trusted_hash=trusted, trust=trust)


def trust_problems(entry: dict[str, Any], hooks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A degraded problem per trust state that makes ``codex exec`` skip our hooks silently."""
    untrusted: dict[str, list[str]] = {}
    for hook in hooks:
        if hook.get("trust") in ("untrusted", "modified", "disabled", "unknown"):
            untrusted.setdefault(hook["trust"], []).append(hook["event"])
    problems = []
    for trust, events in untrusted.items():
        what = {"untrusted": "not trusted", "modified": "changed since it was trusted",
                "disabled": "disabled in config.toml", "unknown": "not hashable as Codex would"}[trust]
        plural = len(events) > 1
        problems.append({"degraded": True, "hooks": events,
                         "problem": f"Codex hook{'s' if plural else ''} {', '.join(events)} "
                                    f"{'are' if plural else 'is'} {what}: `codex exec` skips "
                                    f"{'them' if plural else 'it'} silently — the guard does not run",
                         "fix": "`yupana install codex` (asks `codex app-server` for the hash and trusts it), or "
                                "/hooks in the Codex TUI"})
    return problems
