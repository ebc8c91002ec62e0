"""``yupana report [--since 7d] [--by rule|tenant|repo|client] [--spool PATH…] [--json]``: the
advise readout. Cold path (docs/report.md).

What the hooks' records say about a window of traffic, from this host's spool or from many
hosts' spools at once (files or directories, rotated ``.old`` slots included,
:mod:`yupana.commands.report.read`): what advise would have denied (``would_deny``), what was
denied, what only warned, what failed open and why (by ``fail_kind``), and the served-from-cache
and fail-open rates — in total, per group, and per rule-set digest
(:mod:`yupana.commands.report.tally`). It reads records only: nothing is evaluated again,
written or asked of a store.

Exit codes: 0 the report (malformed lines are skipped, counted and named, stderr says so);
2 unusable input — a ``--since`` it cannot read, a ``--spool`` path that does not exist, or no
spool location at all. This host's spool not written yet is an empty report (exit 0).
"""

from __future__ import annotations

from typing import Any

import argparse
import os
import sys
import time

from yupana.commands.report import read, tally

EXIT_OK, EXIT_USAGE = 0, 2
DEFAULT_SINCE = "7d"
UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}

# the global flags (cli.GLOBAL_HELP) this command honours; any other is refused
GLOBAL_FLAGS: tuple[str, ...] = ("--json",)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--since", default=DEFAULT_SINCE, metavar="AGE",
                        help="only records this recent: a number and s, m, h, d or w (default 7d); `all` for every "
                             "record the spools hold")
    parser.add_argument("--by", choices=tally.GROUPINGS, default="rule",
                        help="group by the rule found, the tenant ($BOBBIN_ROLE), the repository (else the project "
                             "key) or the client (default: rule)")
    parser.add_argument("--spool", nargs="+", action="extend", default=None, metavar="PATH",
                        help="spool files or directories of them (several hosts' spools, as a log shipper collects "
                             "them; each file's rotated .old is read too); default: this host's spool")


def parse_since(text: str) -> int | None:
    """Seconds for ``7d`` / ``12h`` / ``30m`` / ``90s`` / ``2w`` (None for ``all``); ValueError otherwise."""
    text = text.strip().lower()
    if text == "all":
        return None
    number, unit = (text[:-1], text[-1]) if text[-1:] in UNITS else (text, "s")
    if not number.isdigit():
        raise ValueError(f"--since {text!r}: expected a number and s, m, h, d or w (7d, 12h), or `all`")
    return int(number) * UNITS[unit]


def run(args: argparse.Namespace) -> int:
    as_json = bool(getattr(args, "json", False))
    now = int(time.time())
    try:
        window = parse_since(args.since)
        given = args.spool if args.spool else read.local_spool()
        if not given:
            raise read.ReportError("no spool: give --spool PATH, or set YUPANA_METRICS_PATH, XDG_STATE_HOME or HOME")
        if not args.spool and not any(os.path.exists(p) or os.path.exists(p + ".old") for p in given):
            print(f"yupana report: no records yet: {given[0]} does not exist (no hook has written to it)",
                  file=sys.stderr)
            given = []  # this host's spool, not yet written: an empty report, not an error
        sources = read.sources(given)
        since = now - window if window is not None else None
        counted = tally.Tally(args.by)
        for source in sources:
            counted.read(read.records(source, since))
    except (ValueError, read.ReportError) as exc:
        return _usage(str(exc), as_json)
    doc = document(counted, sources, args.by, since, window, now)
    for source in sources:
        if source.malformed:
            lines = ", ".join(str(n) for n in source.malformed_lines)
            more = ", …" if source.malformed > len(source.malformed_lines) else ""
            print(f"yupana report: {source.path}: skipped {source.malformed} malformed line(s) (line {lines}{more})",
                  file=sys.stderr)
    if as_json:
        from yupana.commands.json_output import emit

        emit("report", doc)
    else:
        from yupana.commands.report.render import render

        sys.stdout.write(render(doc))
    return EXIT_OK


def document(counted: tally.Tally, sources: list[read.Source], by: str, since: int | None, window: int | None,
             now: int) -> dict[str, Any]:
    """The report as data (``--json``; the text view renders the same document)."""
    return {"by": by, "since": since, "window_secs": window, "generated_at": now,
            "sources": [s.as_json() for s in sources], "hosts": len({s.host for s in sources}),
            "malformed": sum(s.malformed for s in sources),
            "totals": counted.total.as_json(), "groups": counted.rows(), "shadow": counted.shadow_rows(),
            "unattributed": dict(sorted(counted.unattributed.items()))}


def _usage(message: str, as_json: bool) -> int:
    if as_json:
        from yupana.commands.json_output import emit

        emit("report", {"error": {"kind": "usage", "message": message}, "exit_code": EXIT_USAGE})
    print(f"yupana report: {message}", file=sys.stderr)
    return EXIT_USAGE
