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
    from yupana import config, settings

    root = os.path.abspath(args.root or os.getcwd())
    override = getattr(args, "config", None)
    fp = settings.fingerprint(root, override)
    resolved, error = None, None
    try:
        resolved = config.resolve(root, override)
    except config.ConfigError as exc:
        error = str(exc)
    except Exception as exc:  # noqa: BLE001 - the snapshot must record, not crash
        error = f"config resolution failed: {type(exc).__name__}: {exc}"
    data = settings.write_snapshot(root, override, fp, resolved, error)
    if args.action == "snapshot":
        sys.stdout.buffer.write(data)
        return 1 if error else 0
    if error:
        print(f"yupana: configuration error\n{error}", file=sys.stderr)
        return 1
    resolved = settings.redacted(resolved)  # what is printed holds no credentials
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
