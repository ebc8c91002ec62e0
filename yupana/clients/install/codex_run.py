"""The Codex half of ``yupana install`` / ``uninstall``: hooks.json, then trust in config.toml.

1. Merge our hooks into ``$CODEX_HOME/hooks.json`` (or remove them), carrying the trust
   entries of any other hook whose position moved, and dropping ours that are gone.
2. Install only: ask ``codex app-server`` for our hooks' keys and hashes, write
   ``[hooks.state."<key>"] trusted_hash`` for every one not yet trusted, and ask again:
   every one of ours must report ``trustStatus: trusted``.
Without a codex binary the hooks are registered, not trusted, and the exit status says so.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys

from yupana.commands import install
from yupana.clients.install import codex_hooks as install_codex
from yupana.commands.install import lock as install_lock
from yupana.clients.install import codex_toml as install_toml
from yupana.commands.install import hooks as hooks_file


def run(args: argparse.Namespace, installing: bool) -> int:
    home = install_codex.codex_home()
    hooks_path = os.path.join(home, "hooks.json")
    if args.dry_run:
        return _run(args, installing, hooks_path)
    try:
        with install_lock.held(hooks_path):  # $CODEX_HOME: hooks.json and config.toml alike
            return _run(args, installing, hooks_path)
    except install_lock.Busy as exc:
        print(f"yupana: {exc}", file=sys.stderr)
        return 1


def _run(args: argparse.Namespace, installing: bool, hooks_path: str) -> int:
    config_path = os.path.join(os.path.dirname(hooks_path), "config.toml")
    try:
        text, data = hooks_file.read(hooks_path)
        wanted = install.wanted("codex", args, data, hooks_path) if installing else []
    except hooks_file.HooksFileError as exc:
        print(f"yupana: {exc}", file=sys.stderr)
        return 1
    install.report_foreign(data, hooks_path, installing)
    new = hooks_file.merge(data, wanted) if installing else hooks_file.remove(data)
    config_text = install_codex.read_config(config_path)
    rename, drop = install_codex.moved_keys(data, new, install_codex.state_keys(config_text), hooks_path)
    try:
        new_config = install_toml.edit(config_text, {}, remove=drop, rename=rename) if rename or drop else config_text
    except install_toml.TomlEditError as exc:
        print(f"yupana: {config_path}: {exc}", file=sys.stderr)
        return 1
    hooks_changed = new != data or (text is None and installing)
    try:
        new_text = hooks_file.render(new) if hooks_changed else text
    except hooks_file.HooksFileError as exc:
        print(f"yupana: {hooks_path}: {exc}", file=sys.stderr)
        return 1

    if args.dry_run:
        if hooks_changed:
            sys.stdout.write(install.diff(hooks_path, text, new_text or ""))
        if new_config != config_text:
            sys.stdout.write(install.diff(config_path, config_text or None, new_config))
        if installing:
            print(f"(dry run: nothing written; an install then asks `codex app-server` for the hashes of its "
                  f"{len(wanted)} hooks and trusts them in {config_path})")
        elif not hooks_changed:
            print(install.nothing_to_do(hooks_path, installing))
        else:
            print("(dry run: nothing written)")
        return 0

    if not (install_lock.unchanged(hooks_path, text) and install_codex.read_config(config_path) == config_text):
        print(f"yupana: {hooks_path} or {config_path} changed while they were merged; nothing was written — run it "
              "again", file=sys.stderr)
        return 1
    if hooks_changed:
        error = install.write(hooks_path, new_text or "")
        if error:
            print(f"yupana: {error}", file=sys.stderr)
            return 1
        print(install.summary(hooks_path, data, new, installing))
    if new_config != config_text:
        error = install.write(config_path, new_config)
        if error:
            print(f"yupana: {error} (hooks.json was written: trust entries of moved hooks may be stale)",
                  file=sys.stderr)
            return 1
        moved = f"carried trust of {len(rename)} other hook(s) to their new position; " if rename else ""
        print(f"edited {config_path}: {moved}removed {len(drop)} trust entr{'y' if len(drop) == 1 else 'ies'} of ours")
    if not installing:
        if not hooks_changed:
            print(install.nothing_to_do(hooks_path, installing))
        return 0
    status = _trust(args, hooks_path, config_path, len(wanted), changed=hooks_changed)
    if status == 0 and hooks_changed:
        print(install.MODE_HINT)
    return status


def _trust(args: argparse.Namespace, hooks_path: str, config_path: str, count: int, changed: bool) -> int:
    codex = codex_command(args.codex_bin)
    if codex is None:
        print(f"yupana: WARNING: the hooks in {hooks_path} are registered but NOT trusted: no codex binary "
              "(on PATH or --codex-bin) to ask for their hashes. `codex exec` skips an untrusted hook silently — "
              "the guard does not run. Run `yupana install codex` again where codex is installed, or trust them "
              "in the Codex TUI with /hooks.", file=sys.stderr)
        return install.UNTRUSTED_EXIT
    cwd = os.getcwd()
    try:
        ours = install_codex.ours_in(install_codex.hooks_list(codex, cwd), hooks_path)
        if len(ours) != count:
            return _untrusted(f"codex app-server reports {len(ours)} of our {count} hooks in {hooks_path}")
        to_trust = {h["key"]: h["currentHash"] for h in ours if h.get("trustStatus") != "trusted"}
        if not to_trust:
            if not changed:
                print(f"yupana hooks already registered and trusted in {hooks_path}; no change")
            else:
                print(f"trust: all {count} hooks already trusted (verified with codex app-server)")
            return 0
        config_text = install_codex.read_config(config_path)
        try:
            new_config = install_toml.edit(config_text, to_trust)
        except install_toml.TomlEditError as exc:
            return _untrusted(f"{config_path}: {exc}")
        error = install.write(config_path, new_config)
        if error:
            return _untrusted(error)
        after = install_codex.ours_in(install_codex.hooks_list(codex, cwd), hooks_path)
    except install_codex.AppServerError as exc:
        return _untrusted(str(exc))
    bad = [h["key"] for h in after if h.get("trustStatus") != "trusted"]
    if bad or len(after) != count:
        return _untrusted(f"after writing {config_path}, codex app-server still reports untrusted: {', '.join(bad)}")
    print(f"trusted {len(to_trust)} hook(s) in {config_path}; codex app-server reports all {count} trusted")
    return 0


def _untrusted(why: str) -> int:
    print(f"yupana: WARNING: the Codex hooks are registered but NOT trusted ({why}). `codex exec` skips an "
          "untrusted hook silently. Trust them in the Codex TUI with /hooks, or fix the cause and run "
          "`yupana install codex` again.", file=sys.stderr)
    return install.UNTRUSTED_EXIT


def codex_command(explicit: str | None) -> list[str] | None:
    """``--codex-bin``, else ``codex`` on PATH, as an argv prefix; None when there is none."""
    found = explicit or shutil.which("codex")
    return [found] if found else None
