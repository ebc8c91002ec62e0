"""Trust every hook in $CODEX_HOME/hooks.json, as a user would with Codex's /hooks.

``python trust_hooks.py PROJECT`` asks ``codex app-server`` (on PATH) for each hook's key and
hash, writes ``[hooks.state."<key>"] trusted_hash`` with yupana's checked TOML edit, and
exits non-zero unless the app-server then reports every hook trusted. For the client tests
that register hand-written hooks; ``yupana install codex`` does the same for its own.
"""

from __future__ import annotations

import os
import shutil
import sys

from yupana.clients.install import codex_hooks as install_codex
from yupana.clients.install import codex_toml as install_toml


def main(project: str) -> int:
    codex = [shutil.which("codex") or "codex"]
    config = os.path.join(install_codex.codex_home(), "config.toml")
    hooks = install_codex.hooks_list(codex, project)
    text = install_codex.read_config(config)
    text = install_toml.edit(text, {h["key"]: h["currentHash"] for h in hooks})
    with open(config, "w", encoding="utf-8") as fh:
        fh.write(text)
    untrusted = [h["key"] for h in install_codex.hooks_list(codex, project) if h.get("trustStatus") != "trusted"]
    if untrusted or not hooks:
        print(f"untrusted: {untrusted}, hooks: {len(hooks)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
