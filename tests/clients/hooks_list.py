"""Print what ``codex app-server`` reports for every hook (``python hooks_list.py PROJECT``), as JSON.

For the client tests that compare ``yupana status``'s trust verdict with Codex's own.
"""

from __future__ import annotations

import json
import shutil
import sys

from yupana.clients.install import codex_hooks as install_codex

if __name__ == "__main__":
    print(json.dumps(install_codex.hooks_list([shutil.which("codex") or "codex"], sys.argv[1])))
