"""``yupana install <client>|git`` (and, through :func:`apply`, ``yupana uninstall``).

``<client>`` is the ``install`` word of a row of the client registry (:mod:`yupana.clients`:
``claude``, ``codex``, …); its installer (``Client.installer``) writes its registration —
Claude Code's ``.claude/settings.json`` of the project (``--project``, the default: the git
top-level of the current directory) or of the user (``--user``); Codex's
``$CODEX_HOME/hooks.json`` and the hooks' trust; each client's page in docs/clients/. Those
whose settings share Claude Code's hooks JSON go through :func:`settings_file`. git: the
repository's ``pre-push`` hook for landing certification (:mod:`yupana.commands.install.git`).

The merge keeps every other key and hook; a second run changes nothing and says so;
``--dry-run`` prints the unified diff and writes nothing; a file that cannot be read as a
hooks file is an error that writes nothing. Exit status: 0 done (or nothing to do),
1 error (nothing written for that file), 3 hooks registered but not trusted by their client
(:data:`UNTRUSTED_EXIT`).
"""

from __future__ import annotations

from typing import Any

import argparse
import difflib
import os
import subprocess
import sys

from yupana import clients
from yupana.commands.install import hooks as hooks_file
from yupana.commands.install import lock as install_lock

CLIENTS = (*sorted(row.install for row in clients.ROWS), "git")  # every registry row's install word, and git
UNTRUSTED_EXIT = 3


# the global flags (cli.GLOBAL_HELP) this command honours; any other is refused (the client's settings are the
# target: no yupana configuration is read). --tenant / --config go into the registered hook commands.
GLOBAL_FLAGS: tuple[str, ...] = ("--tenant", "--config")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("client", choices=CLIENTS, help="the coding client whose hook file to edit")
    where = parser.add_mutually_exclusive_group()
    scoped = ", ".join(row.install for row in clients.ROWS if row.scoped)
    where.add_argument("--project", action="store_true",
                       help=f"{scoped}: the project's settings (default; the git top-level of the cwd)")
    where.add_argument("--user", action="store_true", help=f"{scoped}: the user's settings")
    parser.add_argument("--dry-run", action="store_true", help="print the unified diff; write nothing")
    for row in clients.ROWS:  # a client's own flags (its installer's add_arguments, when it has one)
        extra = getattr(clients.installer(row), "add_arguments", None)
        if extra is not None:
            extra(parser)
    parser.add_argument("--force", action="store_true",
                        help="git: replace a pre-push hook that is not yupana's (kept as pre-push.yupana-backup)")


def run(args: argparse.Namespace) -> int:
    return apply(args, install=True)


def apply(args: argparse.Namespace, install: bool) -> int:
    if (getattr(args, "tenant", None) or getattr(args, "config", None)) and args.client == "git":
        print("yupana: --tenant/--config go into the coding clients' hook commands; the git pre-push hook takes "
              "neither", file=sys.stderr)
        return 1
    row = clients.get(args.client)
    if (args.project or args.user) and (row is None or not row.scoped):
        scoped = ", ".join(r.install for r in clients.ROWS if r.scoped)
        where = (getattr(clients.installer(row), "WHERE", "one place") if row is not None
                 else "the repository's hooks directory")
        print(f"yupana: --project/--user apply to {scoped} ({args.client} registers in {where})", file=sys.stderr)
        return 1
    if row is None:  # git
        from yupana.commands.install import git as install_git

        return install_git.run(install, force=bool(getattr(args, "force", False)), dry_run=args.dry_run)
    return int(clients.installer(row).run(args, install))


def project_root(cwd: str) -> str:
    """The git top-level of ``cwd``, else ``cwd``."""
    try:
        done = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=cwd, capture_output=True,
                              text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return cwd
    top = done.stdout.strip()
    return top if done.returncode == 0 and top else cwd


def explicit_flags(args: argparse.Namespace) -> hooks_file.Flags:
    """``--tenant`` / ``--config`` as given to install (the config made absolute; it must exist)."""
    flags = []
    tenant = getattr(args, "tenant", None)
    if tenant is not None:
        if not tenant.strip():
            raise hooks_file.HooksFileError("--tenant needs a tenant id; nothing was written")
        flags.append(("--tenant", tenant))
    config = getattr(args, "config", None)
    if config is not None:
        config = os.path.abspath(os.path.expanduser(config))
        if not os.path.isfile(config):
            raise hooks_file.HooksFileError(f"--config {config}: no such file (a hook given a missing --config "
                                            "decides nothing); nothing was written")
        flags.append(("--config", config))
    return tuple(flags)


def wanted(client: str, args: argparse.Namespace, data: dict[str, Any], path: str) -> list[Any]:
    """Our hooks for ``client``, each keeping the --tenant/--config its registration has (or is given)."""
    return hooks_file.desired(client, flags=hooks_file.carried_flags(data, explicit_flags(args), path))


def report_foreign(data: dict[str, Any], path: str, install: bool) -> None:
    """Name every user's command that runs a yupana hook: neither install nor uninstall touches it."""
    for file_event, command in hooks_file.foreign(data):
        what = "not replaced" if install else "not removed"
        print(f"yupana: {path}: {file_event} hook {command!r} runs yupana but is not a registration yupana install "
              f"makes: {what}; edit it by hand if it should change", file=sys.stderr)


def settings_file(args: argparse.Namespace, install: bool, path: str, client: str) -> int:
    """Merge ``client``'s hooks into (or remove ours from) the JSON settings file ``path``, under
    its lock: the writer of every client whose settings share Claude Code's hooks shape."""
    if args.dry_run:
        return _merge(args, install, path, client)
    try:
        with install_lock.held(path):
            return _merge(args, install, path, client)
    except install_lock.Busy as exc:
        print(f"yupana: {exc}", file=sys.stderr)
        return 1


def _merge(args: argparse.Namespace, install: bool, path: str, client: str, attempt: int = 1) -> int:
    """Read, merge and write the settings (under the lock, unless a dry run)."""
    try:
        text, data = hooks_file.read(path)
        new = hooks_file.merge(data, wanted(client, args, data, path)) if install else hooks_file.remove(data)
    except hooks_file.HooksFileError as exc:
        print(f"yupana: {exc}", file=sys.stderr)
        return 1
    if attempt == 1:
        report_foreign(data, path, install)
    if new == data and (text is not None or not install):
        print(nothing_to_do(path, install))
        return 0
    try:
        new_text = hooks_file.render(new)
    except hooks_file.HooksFileError as exc:
        print(f"yupana: {path}: {exc}", file=sys.stderr)
        return 1
    if args.dry_run:
        sys.stdout.write(diff(path, text, new_text))
        print(f"(dry run: {path} not written)")
        return 0
    if not install_lock.unchanged(path, text):  # saved meanwhile by something that does not take the lock
        if attempt < 3:
            print(f"yupana: {path} changed while it was merged; merging again into what it holds now", file=sys.stderr)
            return _merge(args, install, path, client, attempt + 1)
        print(f"yupana: {path} keeps changing while it is merged; nothing was written — run it again",
              file=sys.stderr)
        return 1
    error = write(path, new_text)
    if error:
        print(f"yupana: {error}", file=sys.stderr)
        return 1
    print(summary(path, data, new, install))
    if install:
        print(MODE_HINT)
    return 0


MODE_HINT = ("note: yupana only blocks under [yupana.policy] mode = \"enforce\" (the default is \"off\"); "
             "see docs/integration.md")


def nothing_to_do(path: str, install: bool) -> str:
    if install:
        return f"yupana hooks already registered in {path}; no change"
    return f"no yupana hooks in {path}; nothing to remove"


def summary(path: str, before: dict[str, Any], after: dict[str, Any], install: bool) -> str:
    """One line: which of our hooks the write added, updated or removed."""
    def ours(data: dict[str, Any]) -> dict[tuple[Any, Any], Any]:  # what a user would call a change: not a slot shifted by another's removal
        return {(h["event"], h["file_event"]): {k: v for k, v in h.items() if k not in ("slot", "handler")}
                for h in hooks_file.inspect(data, strict=True)}

    old, new = ours(before), ours(after)
    parts = []
    for key in sorted(set(old) | set(new), key=lambda k: hooks_file.EVENTS.index(k[0])):
        if key not in old:
            parts.append(f"added {key[0]} ({new[key]['matcher']})")
        elif key not in new:
            parts.append(f"removed {key[0]}")
        elif old[key] != new[key]:
            parts.append(f"updated {key[0]} ({new[key]['matcher']})")
    verb = "wrote" if install else "edited"
    return f"{verb} {path}: " + (", ".join(parts) or ("reordered" if install else "removed duplicates"))


def diff(path: str, old: str | None, new: str) -> str:
    lines = difflib.unified_diff((old or "").splitlines(keepends=True), new.splitlines(keepends=True),
                                 fromfile=path if old is not None else "/dev/null", tofile=path)
    out = "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)
    return out


def write(path: str, text: str) -> str | None:
    """Replace the file atomically (its symlink target, keeping its mode); None or the error."""
    from yupana.state import atomic

    target = os.path.realpath(path)
    try:
        mode = os.stat(target).st_mode & 0o7777
    except FileNotFoundError:
        mode = None
    try:
        atomic.write(target, text.encode("utf-8"))
        if mode is not None:
            os.chmod(target, mode)
    except OSError as exc:
        return f"cannot write {path}: {exc.strerror or exc}; it is unchanged"
    return None
