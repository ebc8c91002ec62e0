"""``yupana config check|snapshot``: resolve the configuration with the real settings model."""

from __future__ import annotations

import argparse
import json
import os
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=["check", "snapshot"],
                        help="check: print the resolved configuration and warnings; "
                             "snapshot: (used by hooks) resolve and write the hot-path snapshot")
    parser.add_argument("--root", default=None, help="project root (default: the current directory)")


def run(args: argparse.Namespace) -> int:
    from yupana import settings

    root = os.path.abspath(args.root or os.getcwd())
    override = getattr(args, "config", None)
    snap = settings.resolve_and_store(root, override, settings.fingerprint(root, override))
    resolved, error = snap["resolved"], snap["error"]
    if args.action == "snapshot":
        import marshal

        sys.stdout.buffer.write(marshal.dumps(snap))
        return 1 if error else 0
    if error:
        print(f"yupana: configuration error\n{error}", file=sys.stderr)
        return 1
    if getattr(args, "json", False):
        print(json.dumps(resolved, indent=2, sort_keys=True))
        return 0
    for src in resolved["sources"] or [{"layer": "defaults", "path": "(no config file found)"}]:
        print(f"{src['layer']:<9} {src['path']}")
    prov = resolved["provenance"]
    print(f"mode      {prov['effective']} (from {prov['source']})"
          + ("  ⚠ the project file lowered the user's mode" if prov["lowered_by_project"] else ""))
    for warning in resolved["warnings"]:
        print(f"warning   {warning}")
    return 0
