"""``yupana install|uninstall git``: git's pre-push hook for landing certification. Cold path.

The hook file is ``pre-push`` in the repository's hooks directory as git finds it
(``git rev-parse --git-path hooks``: ``core.hooksPath`` when set, else ``.git/hooks``), for the
repository the current directory is in. It is ours when it carries :data:`MARKER`.

* install: writes the script (mode 0755) when there is none, rewrites ours when it differs,
  says "already installed" otherwise. An existing hook that is **not** ours is never replaced
  silently: without ``--force`` nothing is written and the command says how to chain yupana
  into it (exit 1); with ``--force`` it is kept as ``pre-push.yupana-backup`` and the command
  says so.
* uninstall: removes the hook only when it is ours (a foreign one is left and named, exit 1),
  and puts a ``pre-push.yupana-backup`` back in its place.
* ``--dry-run`` says what would be done and writes nothing.

The script runs ``<this yupana> hook pre-push "$@"`` — the absolute path of the yupana that
installed it, as ``yupana install claude`` registers its hooks (stdin, git's ref lines, passes
through) — and turns
every exit status but 1 into 0: yupana absent (127), too old to know the hook, or failing lets
the push proceed with a stderr line; 1 is yupana refusing the push (docs/landing.md).
"""

from __future__ import annotations

import os
import subprocess
import sys

MARKER = "# yupana-landing-hook"
BACKUP_SUFFIX = ".yupana-backup"
SCRIPT = """#!/bin/sh
{marker}: written by `yupana install git`; `yupana uninstall git` removes it.
# Certifies this push against the repository's landing policy and writes a signed landing-*
# record (docs/landing.md). It refuses the push (exit 1) only when yupana does: a refused
# certification under [yupana.policy] landing = "enforce". When yupana is absent, too old to
# know this hook, or fails, the push proceeds and this says so.
{command} hook pre-push "$@"
status=$?
if [ "$status" -eq 1 ]; then
  exit 1
fi
if [ "$status" -ne 0 ]; then
  echo "yupana: the pre-push hook could not run (exit $status): this push is NOT certified" >&2
fi
exit 0
"""


def script(command: str | None = None) -> str:
    """The hook file, running ``command`` (default: this very yupana, by absolute path, as
    ``yupana install claude`` registers it)."""
    from yupana.commands.install.hooks import yupana_command

    return SCRIPT.format(marker=MARKER, command=command or yupana_command())
CHAIN_HINT = ("to keep it and add yupana, make it run `yupana hook pre-push \"$@\"` with the same stdin (git's ref "
              "lines) and exit 1 when that exits 1; or pass --force to replace it (kept as pre-push{suffix})")


class GitHookError(Exception):
    """Where the hook goes cannot be found; the message says why."""


def hook_path(cwd: str) -> str:
    """The ``pre-push`` file git runs for the repository ``cwd`` is in."""
    try:
        top = subprocess.run(["git", "-C", cwd, "rev-parse", "--show-toplevel"], capture_output=True, text=True,
                             timeout=10, stdin=subprocess.DEVNULL)
        hooks = subprocess.run(["git", "-C", cwd, "rev-parse", "--git-path", "hooks"], capture_output=True, text=True,
                               timeout=10, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise GitHookError(f"cannot run git in {cwd}: {exc}") from None
    if top.returncode != 0 or hooks.returncode != 0 or not hooks.stdout.strip():
        raise GitHookError(f"{cwd} is not inside a git work tree (run `yupana install git` in the repository whose "
                           "pushes to certify)")
    folder = hooks.stdout.strip()
    return os.path.normpath(os.path.join(cwd, folder, "pre-push"))


def inspect(cwd: str) -> dict[str, object]:
    """``{path, exists, ours}`` of the pre-push hook for ``cwd``'s repository (``yupana status``);
    ``{path: None, error}`` outside a repository."""
    try:
        path = hook_path(cwd)
    except GitHookError as exc:
        return {"path": None, "exists": False, "ours": False, "error": str(exc)}
    text = _read(path)
    return {"path": path, "exists": text is not None, "ours": bool(text and MARKER in text), "error": None}


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except (FileNotFoundError, NotADirectoryError):  # core.hooksPath = /dev/null: no hook there
        return None


def run(install: bool, *, force: bool, dry_run: bool, cwd: str | None = None) -> int:
    """Install or uninstall; the exit status (0 done or nothing to do, 1 refused or failed)."""
    try:
        path = hook_path(cwd or os.getcwd())
        text = _read(path)
    except (GitHookError, OSError) as exc:
        print(f"yupana: {exc}", file=sys.stderr)
        return 1
    backup = path + BACKUP_SUFFIX
    ours = text is not None and MARKER in text
    if not install:
        return _uninstall(path, text, ours, backup, dry_run)
    wanted = script()
    if ours and text == wanted:
        print(f"yupana pre-push hook already installed at {path}; no change")
        return 0
    if text is not None and not ours and not force:
        print(f"yupana: {path} already exists and is not yupana's: not replaced. "
              + CHAIN_HINT.format(suffix=BACKUP_SUFFIX), file=sys.stderr)
        return 1
    if dry_run:
        verb = "update" if ours else ("replace (keeping the old one as " + backup + ")" if text is not None else "write")
        print(f"(dry run) would {verb} {path}:\n{wanted}", end="")
        return 0
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if text is not None and not ours:
            os.replace(path, backup)
        from yupana.state import atomic

        atomic.write(path, wanted.encode("utf-8"))
        os.chmod(path, 0o755)
    except OSError as exc:
        print(f"yupana: cannot write {path}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    kept = f" (the previous hook is kept as {backup})" if text is not None and not ours else ""
    print(f"{'updated' if ours else 'wrote'} {path}: git pre-push runs `yupana hook pre-push`{kept}")
    print('note: a push is certified only under [yupana.policy] landing = "advise" or "enforce" (mode is its ceiling; '
          "both default to off), and blocked only under enforce; see docs/landing.md")
    return 0


def _uninstall(path: str, text: str | None, ours: bool, backup: str, dry_run: bool) -> int:
    if text is None:
        print(f"no pre-push hook at {path}; nothing to remove")
        return 0
    if not ours:
        print(f"yupana: {path} is not yupana's hook: left as it is", file=sys.stderr)
        return 1
    restore = os.path.exists(backup)
    if dry_run:
        print(f"(dry run) would remove {path}" + (f" and put {backup} back" if restore else ""))
        return 0
    try:
        os.unlink(path)
        if restore:
            os.replace(backup, path)
    except OSError as exc:
        print(f"yupana: cannot remove {path}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    print(f"removed {path}" + (f"; put the previous hook back from {backup}" if restore else ""))
    return 0
