"""``yupana config check|snapshot``: the resolved configuration, and every local control compiled.

``check`` resolves the configuration (the same resolver the hooks run), prints every key
with its value and where it came from, the unknown keys, and then compiles every local
control the hooks would compile (:mod:`yupana.config.controls`): each broken one is named
with its file, key and fix. Exit 0 when the configuration resolves and every control
compiles; 1 on a configuration error or any broken control. ``--json``: docs/configuration.md.

``snapshot`` (kept for tools that called it; hooks resolve in process now) resolves, writes
the hot-path snapshot and prints it (marshal).
"""

from __future__ import annotations

from typing import Any

import argparse
import json
import sys

SCHEMA_VERSION = 1
EXIT_OK, EXIT_BROKEN = 0, 1


# the global flags (cli.GLOBAL_HELP) this command honours; any other is refused
GLOBAL_FLAGS: tuple[str, ...] = ("--json", "--config")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=["check", "snapshot"],
                        help="check: print the resolved configuration, compile every local control, exit 1 on "
                             "any error; snapshot: resolve and write the hot-path snapshot (marshal on stdout)")
    parser.add_argument("--root", default=None, help="project root (default: the current directory)")


def run(args: argparse.Namespace) -> int:
    from yupana import project_root, settings

    if args.action == "snapshot" and getattr(args, "json", False):
        print("yupana config: --json is for `config check`; `config snapshot` prints marshal", file=sys.stderr)
        return 2
    project = project_root.cold_project(args.root)  # --root, else the project the cwd is in (and its nested layers)
    root, nested = project.root, project.nested
    override = getattr(args, "config", None)
    snap = settings.resolve_and_store(root, override, settings.fingerprint(root, override, nested), nested)
    if args.action == "snapshot":
        import marshal

        sys.stdout.buffer.write(marshal.dumps(snap))
        return 1 if snap["error"] else 0
    as_json = bool(getattr(args, "json", False))
    report = gather(root, override, snap["error"], nested)
    if as_json:
        from yupana.commands.json_output import emit

        emit("config.check", report)
    else:
        render(report)
    return EXIT_OK if report["ok"] else EXIT_BROKEN


def gather(root: str, override: str | None, error: str | None, nested: tuple[str, ...] = ()) -> dict[str, Any]:
    """The ``config check --json`` object (docs/configuration.md)."""
    from yupana import settings
    from yupana.config import controls as config_controls, resolver as config_resolve

    report: dict[str, Any] = {"schema_version": SCHEMA_VERSION, "root": root, "ok": False, "error": error, "config": None,
                    "origins": None, "sources": [], "provenance": None, "warnings": [], "notes": [], "findings": [],
                    "lowered": [], "managed": None}
    if error is None:
        try:
            checked = config_controls.check(root, override, nested)
        except settings.ConfigError as exc:  # the files changed since the snapshot was written
            report["error"] = str(exc)
            return report
        resolved, read = settings.redacted(checked["resolved"]), checked["layers"]  # printed: no credentials
        assert resolved is not None  # a resolved configuration stays one when redacted
        report.update(config=resolved["config"], sources=resolved["sources"], provenance=resolved["provenance"],
                      warnings=resolved["warnings"], notes=checked["notes"], findings=checked["findings"],
                      lowered=resolved.get("lowered") or [], managed=resolved.get("managed"),
                      origins={key: config_resolve.origin(loc, read) for key, loc, _ in flatten(resolved["config"])})
        report["ok"] = not checked["findings"]
    return report


def flatten(value: object, loc: tuple[Any, ...] = ()) -> list[tuple[str, tuple[Any, ...], object]]:
    """(dotted key, loc, value) for every leaf; arrays of strings stay whole, arrays of tables open."""
    if isinstance(value, dict) and (value or not loc):
        out = []
        for key, sub in value.items():
            out += flatten(sub, loc + (key,))
        return out
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        out = []
        for i, sub in enumerate(value):
            out += flatten(sub, loc + (i,))
        return out
    return [("yupana." + ".".join(str(p) for p in loc), loc, value)]


def render(report: dict[str, Any]) -> None:
    """The text form: the files, the mode, every resolved key and its layer, then the findings
    (wrapped to the terminal, coloured on one: :mod:`yupana.terminal`)."""
    from yupana import terminal

    if report["error"]:
        print(f"yupana: configuration error\n{report['error']}", file=sys.stderr)
        return
    lines = [f"{src['layer']:<9} {src['path']}"
             for src in report["sources"] or [{"layer": "defaults", "path": "(no config file found)"}]]
    prov = report["provenance"]
    lines.append(f"mode      {prov['effective']} (from {prov['source']})"
                 + ("  ⚠ the project file lowered the user's mode" if prov["lowered_by_project"] else ""))
    managed = report.get("managed") or {}
    lines.append(f"floor     {managed.get('path')}" + ("" if managed.get("present") else " (absent: no managed floor)"))
    for low in report["lowered"]:
        lines.append(f"lowered   ⚠ {low['layer']} {low['file']}: {low['key']} = "
                     f"{json.dumps(low['value'], ensure_ascii=False)} is below its floor "
                     f"{json.dumps(low['floor'], ensure_ascii=False)}: ignored, the floor stands")
    lines += ["", "resolved configuration (key = value  # where it came from)"]
    for key, _, value in flatten(report["config"]):
        lines.append(f"  {key} = {json.dumps(value, ensure_ascii=False)}  # {report['origins'][key]}")
    lines.append("")
    lines += [f"warning   {warning}" for warning in report["warnings"]]
    lines += [f"note      {note}" for note in report["notes"]]
    for found in report["findings"]:
        shown = "" if found["value"] is None else f" = {json.dumps(found['value'], ensure_ascii=False)}"
        lines.append(f"error     {found['file']}: {found['key']}{shown}: {found['problem']}")
        lines.append(f"          fix: {found['fix']}")
    count = len(report["findings"])
    if not count:
        lines.append("ok        every local control compiles")
    sys.stdout.write(terminal.show(lines))
    if count:
        print(f"\n{count} broken control{'s' if count != 1 else ''}: the hooks cannot run "
              f"{'them' if count != 1 else 'it'} as written", file=sys.stderr)
