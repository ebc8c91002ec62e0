"""``yupana replay --candidate SOURCE [--live SOURCE] [--since 7d] [--spool PATH…] [--json]
[--fail-on-flip]``: what a catalogue change would change on recorded traffic. Cold path (docs/replay.md).

Reads the inputs the hooks captured (``[yupana.metrics] record_inputs``, ``inputs.jsonl``:
:mod:`yupana.state.inputs`) from this host or from many hosts' logs at once (files or
directories, as :mod:`yupana.commands.report.read` reads spools), re-runs each through the real
hook under the live catalogue (default ``@cache``: this host's cache) and under the candidate
(any source ``yupana diff`` reads: RDF files, an endpoint, a bundle, a cache file, ``@store``),
both read and checked by :func:`yupana.commands.diff.sources.read` and rehearsed as ``explain``
rehearses (:mod:`.judge`), and prints the flips (:mod:`.flips`) and what it could not judge.

Exit codes: 0 — replayed (with ``--fail-on-flip``: nothing flipped); 1 — something flipped and
``--fail-on-flip`` is given; 2 — unusable input (a source that does not read or check, a
``--spool`` path that does not exist, a bad ``--since``); 3 — internal error.
"""

from __future__ import annotations

from typing import Any

import argparse
import os
import sys
import time

EXIT_FLIPPED, EXIT_INPUT, EXIT_INTERNAL = 1, 2, 3
INVOCATIONS = ("guard",)  # the per-call records a capture answers to (pre-edit's; see not_captured)

# the global flags (cli.GLOBAL_HELP) this command honours; any other is refused
GLOBAL_FLAGS: tuple[str, ...] = ("--json", "--config")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--candidate", required=True, metavar="SOURCE",
                        help="the catalogue to try: RDF files (a file, a directory, a comma list or a quoted glob), an "
                             "endpoint URL, a signed bundle, a projection.json, @store or @cache")
    parser.add_argument("--live", default="@cache", metavar="SOURCE",
                        help="what it is compared with (the same kinds of source; default @cache: this host's cache)")
    parser.add_argument("--since", default="7d", metavar="AGE",
                        help="only inputs this recent: a number and s, m, h, d or w (default 7d), or `all`")
    parser.add_argument("--spool", nargs="+", action="extend", default=None, metavar="PATH",
                        help="capture files (inputs.jsonl) or directories of hosts' logs (their spools count what "
                             "was not captured); default: this host's capture and spool")
    parser.add_argument("--fail-on-flip", action="store_true", help="exit 1 when any decision flips")
    parser.add_argument("--shapes", metavar="DIR", default=None,
                        help="directory of *.ttl SHACL shapes to gate RDF sources with (default: yupana's own)")
    parser.add_argument("--trust", metavar="KEY", action="append", default=[],
                        help="a public key a bundle source must verify with (repeatable; default: [yupana.bundle] "
                             "trusted_keys)")
    parser.add_argument("--root", default=None, help="project root whose configuration to use (default: cwd)")


def run(args: argparse.Namespace) -> int:
    as_json = bool(getattr(args, "json", False))
    try:
        return _run(args, as_json)
    except BrokenPipeError:
        raise
    except Exception as exc:  # noqa: BLE001 - exit 3 is the promise for anything unexpected
        return _fail(as_json, EXIT_INTERNAL, "internal", f"{type(exc).__name__}: {exc}")


def _run(args: argparse.Namespace, as_json: bool) -> int:
    from yupana import project_root
    from yupana.commands.diff import sources
    from yupana.commands.replay import judge
    from yupana.commands.replay.flips import Flips
    from yupana.commands.report import parse_since, read

    now = int(time.time())
    try:
        window = parse_since(args.since)
        files = _one_host_per_directory(read.sources(args.spool if args.spool else _local()))
    except (ValueError, read.ReportError) as exc:
        return _fail(as_json, EXIT_INPUT, "usage", str(exc))
    if args.shapes and not os.path.isdir(args.shapes):
        return _fail(as_json, EXIT_INPUT, "shapes", f"--shapes {args.shapes}: no such directory")
    since = now - window if window is not None else None
    inputs, invoked = _read(files, since)
    options = sources.Options(root=project_root.cold_root(args.root), config_override=getattr(args, "config", None),
                              shapes_dir=os.path.abspath(args.shapes) if args.shapes else None, trust=list(args.trust))
    read_sides: dict[str, Any] = {}
    for name, spec in (("live", args.live), ("candidate", args.candidate)):
        try:
            read_sides[name] = sources.read(spec, options)
        except sources.SourceError as exc:
            return _fail(as_json, EXIT_INPUT, exc.kind, f"the {name} source: {exc.message}")
    flips = Flips()
    captured: dict[str, int] = {}
    for rec, host in inputs:
        if rec.get("hook") == "pre-edit":
            captured[host] = captured.get(host, 0) + 1
    flips.not_judged["not_captured"] = sum(max(0, n - captured.get(host, 0)) for host, n in invoked.items())
    sides: list[judge.Side] = []
    try:
        for name in ("live", "candidate"):
            sides.append(judge.Side(name, read_sides[name].cache))  # each removed below, even if the next fails
        for number, (rec, host) in enumerate(inputs, 1):
            if not judge.judgeable(rec):
                flips.not_judged["unreadable"] += 1
                continue
            live, candidate = (side.judge(rec, number) for side in sides)
            flips.add(rec, host, live, candidate)
            flips.compare_recorded(rec, host, live, sides[0].digest)
    finally:
        for judged in sides:
            judged.remove()
    doc = {"since": since, "window_secs": window, "generated_at": now, "mode": judge.MODE,
           "live": read_sides["live"].describe(), "candidate": read_sides["candidate"].describe(),
           "sources": [{"path": s.path, "host": s.host, "malformed": s.malformed} for s in files],
           "inputs": len(inputs), **flips.as_json(), "error": None}
    code = EXIT_FLIPPED if flips.total and args.fail_on_flip else 0
    doc["exit_code"] = code
    if as_json:
        from yupana.commands.json_output import emit

        emit("replay", doc)
    else:
        from yupana.commands.replay.render import render

        sys.stdout.write(render(doc))
    return code


def _local() -> list[str]:
    """This host's capture and spool (those that exist; the capture's path even when it does not)."""
    from yupana.state import inputs, paths

    capture = inputs.capture_path()
    spool = paths.metrics_spool()
    found = [p for p in (capture, spool) if p and (os.path.exists(p) or os.path.exists(p + ".old"))]
    if not found:
        from yupana.commands.report.read import ReportError

        raise ReportError(f"no captured inputs on this host ({capture or 'no state directory'}): set [yupana.metrics] "
                          "record_inputs = \"masked\" (or \"full\") and let the hooks run, or give --spool PATH")
    return found


def _one_host_per_directory(files: list[Any]) -> list[Any]:
    """A log named as a file stands for the host of its directory: a host keeps its capture
    beside its spool (``inputs.jsonl`` and ``metrics.jsonl``), so both — this host's default,
    or the two files given to ``--spool`` — are one host, and its calls judged without a
    captured input are counted against its own capture (``not_captured``)."""
    for source in files:
        if source.host == (source.path[:-4] if source.path.endswith(".old") else source.path):
            source.host = os.path.dirname(source.host) or "."
    return files


def _read(files: list[Any], since: int | None) -> tuple[list[tuple[dict[str, Any], str]], dict[str, int]]:
    """The captured inputs ``(record, host)`` and, per host, how many file edits its spool
    recorded as judged by pre-edit (advise or enforce; a file without an extension is not
    counted: its ``guard`` record cannot be told from a call with no file), in the window."""
    from yupana.commands.report import read
    from yupana.state.inputs import KIND

    inputs: list[tuple[dict[str, Any], str]] = []
    invoked: dict[str, int] = {}
    for source in files:
        for rec in read.records(source, since):
            if rec["kind"] == KIND:
                inputs.append((rec, source.host))
            elif (rec["kind"] in INVOCATIONS and rec.get("mode") in ("advise", "enforce") and rec.get("parsed")
                  and (rec.get("ext") or rec.get("edits"))):
                invoked[source.host] = invoked.get(source.host, 0) + 1
    return inputs, invoked


def _fail(as_json: bool, code: int, kind: str, message: str) -> int:
    if as_json:
        from yupana.commands.json_output import emit

        emit("replay", {"exit_code": code, "error": {"kind": kind, "message": message}})
    print(f"yupana replay: {message}" + ("" if code == EXIT_INTERNAL else f" [{kind}]"), file=sys.stderr)
    return code
