"""``yupana diff OLD NEW``: a catalogue change, reviewed. Cold path.

Reads two catalogue sources (:mod:`.sources`: RDF files, an endpoint, a signed bundle, a
cache file, ``@store``, ``@cache`` — each projected, decoded and gated as strictly as a
refresh) and prints what changed between them (:mod:`.compare`): rules added, removed and
changed field by field, tiers raised or lowered, exemptions widened or narrowed. As a table
(default), ``--json`` (``yupana.diff/1``, yupana/schemas/diff.schema.json) or
``--format markdown`` for a review comment (docs/diff.md).

Exit codes: 0 — compared (with ``--fail-on-change``: and nothing changed); 1 — something
changed and ``--fail-on-change`` is given; 2 — a source is unusable (unreadable, does not
decode, does not conform to the shapes, a bundle that does not verify), or a usage error;
3 — internal error.
"""

from __future__ import annotations

from typing import Any

import argparse
import sys

EXIT_CHANGED = 1
EXIT_INPUT = 2
EXIT_INTERNAL = 3
FORMATS = ("text", "json", "markdown")

# the global flags (cli.GLOBAL_HELP) this command honours; any other is refused
GLOBAL_FLAGS: tuple[str, ...] = ("--json", "--config")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("old", metavar="OLD", help="the catalogue before, one argument: RDF files (a file, a "
                                                   "directory, a comma list or a quoted glob), an endpoint URL, a "
                                                   "signed bundle, a projection.json, @store or @cache")
    parser.add_argument("new", metavar="NEW", help="the catalogue after (the same kinds of source)")
    parser.add_argument("spread", nargs="*", default=[], help=argparse.SUPPRESS)  # an unquoted glob's other files: named below
    parser.add_argument("--format", choices=FORMATS, default=None, dest="output_format",
                        help="text (default), json (= --json) or markdown (a summary for a review comment)")
    parser.add_argument("--fail-on-change", action="store_true", help="exit 1 when anything changed")
    parser.add_argument("--shapes", metavar="DIR", default=None,
                        help="directory of *.ttl SHACL shapes to gate RDF sources with (default: yupana's own)")
    parser.add_argument("--trust", metavar="KEY", action="append", default=[],
                        help="a public key a bundle source must verify with: ed25519:<base64> or a PEM file "
                             "(repeatable; default: [yupana.bundle] trusted_keys)")
    parser.add_argument("--dialect", choices=("sparql11", "quipu"), default=None,
                        help="how to speak to an endpoint URL source (default: detected; the configured endpoint "
                             "keeps its configured dialect)")
    parser.add_argument("--root", default=None, help="project root whose configuration to use (default: cwd)")


def run(args: argparse.Namespace) -> int:
    fmt = args.output_format or ("json" if getattr(args, "json", False) else "text")
    try:
        return _run(args, fmt)
    except BrokenPipeError:
        raise
    except Exception as exc:  # noqa: BLE001 - exit 3 is the promise for anything unexpected
        return _fail(fmt, EXIT_INTERNAL, "internal", f"{type(exc).__name__}: {exc}", None, {})


def _run(args: argparse.Namespace, fmt: str) -> int:
    import os

    from yupana import project_root
    from yupana.commands.diff import compare, sources

    options = sources.Options(root=project_root.cold_root(args.root), config_override=getattr(args, "config", None),
                              shapes_dir=os.path.abspath(args.shapes) if args.shapes else None, trust=list(args.trust),
                              dialect=args.dialect)
    if args.spread:
        return _fail(fmt, EXIT_INPUT, "usage", f"two sources are compared, OLD and NEW; {2 + len(args.spread)} were given "
                     "— quote a glob ('data/*.ttl') so that the shell does not spread it, or give a directory or a "
                     "comma-separated list", None, {})
    if args.shapes and not os.path.isdir(args.shapes):
        return _fail(fmt, EXIT_INPUT, "shapes", f"--shapes {args.shapes}: no such directory", None, {})
    read: dict[str, Any] = {}
    for side in ("old", "new"):
        spec = getattr(args, side)
        _progress(fmt, f"reading {side}: {spec}")
        try:
            read[side] = sources.read(spec, options)
        except sources.SourceError as exc:
            return _fail(fmt, EXIT_INPUT, exc.kind, exc.message, side,
                         {k: v.describe() for k, v in read.items()})
    old, new = read["old"].describe(), read["new"].describe()
    diff = compare.compare(read["old"].cache, read["new"].cache)
    code = EXIT_CHANGED if diff.changes and args.fail_on_change else 0
    if fmt == "json":
        from yupana.commands.json_output import emit

        emit("diff", {"exit_code": code, "identical": not diff.changes, "old": old, "new": new,
                      "summary": diff.summary(), "changes": [c.as_dict() for c in diff.changes],
                      "not_compared": list(compare.NOT_COMPARED), "error": None})
    elif fmt == "markdown":
        from yupana.commands.diff import render

        sys.stdout.write(render.markdown(diff, old, new) + "\n")
    else:
        from yupana import terminal
        from yupana.commands.diff import render

        sys.stdout.write(terminal.show(render.text(diff, old, new)))
    return code


def _progress(fmt: str, line: str) -> None:
    """A progress line on stderr for a person at a terminal (never in a pipe or a CI log)."""
    try:
        if fmt == "text" and sys.stderr.isatty():
            sys.stderr.write(line + "\n")
    except (OSError, ValueError):
        pass


def _fail(fmt: str, code: int, kind: str, message: str, side: str | None, read: dict[str, Any]) -> int:
    where = f"the {side} source: " if side else ""
    if fmt == "json":
        from yupana.commands.json_output import emit

        emit("diff", {"exit_code": code, "identical": None, "old": read.get("old"), "new": read.get("new"),
                      "summary": None, "changes": [], "not_compared": [],
                      "error": {"kind": kind, "side": side, "message": message}})
    print(f"yupana diff: {where}{message}" + ("" if code == EXIT_INTERNAL else f" [{kind}]"), file=sys.stderr)
    return code
