"""``yupana shapes validate DATA… [--shapes DIR] [--json | --format F] [--allow-warnings]``: the store's CI.

Validates RDF files (merged into one graph, so a policy may link a selector defined in
another file) against yupana's SHACL shapes — and, in the same report, runs the decoders'
own compile steps (RE2, the glob dialect) over the values the shapes mark ``yupana:compiles``
(projection/gate_compiles.py), so a regex or glob every host's refresh would refuse fails
here first — and reports every result's focus node, property path, constraint and message.

Exit codes (pySHACL's own CLI uses 1 for both "does not conform" and "could not read the
input"; this command keeps them apart):

* 0 — conforms (with ``--allow-warnings``: no violations; warnings and infos are printed);
* 1 — violations (or, without ``--allow-warnings``, warnings or infos);
* 2 — unreadable or unparseable input: a missing file, broken Turtle (named with its line),
  a directory holding no RDF file,
  or a ``--shapes`` directory that is missing or does not parse;
* 3 — internal error: yupana's own shapes are broken or the validator failed.

The ``--json`` document is described in docs/shapes.md (schema ``yupana.shapes.validate/1``,
docs/json.md); ``--format junit|sarif|github`` are the CI reports (commands/shapes_formats.py).
"""

from __future__ import annotations

from typing import Any

import argparse
import os
import sys

from yupana.commands.shapes_formats import FORMATS

SCHEMA = "yupana.shapes.validate/1"

# Extension → rdflib parser name; anything else is read as Turtle.
_FORMATS = {".ttl": "turtle", ".nt": "nt", ".n3": "n3", ".rdf": "xml", ".owl": "xml", ".xml": "xml",
            ".jsonld": "json-ld"}


# the global flags (cli.GLOBAL_HELP) this command honours; any other is refused (no configuration is read: the shapes and the data are the arguments)
GLOBAL_FLAGS: tuple[str, ...] = ("--json",)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=["validate"], help="validate: check RDF files against the shapes")
    parser.add_argument("files", nargs="+", metavar="DATA",
                        help="RDF files (Turtle, N-Triples, …) or directories of them, merged into one graph")
    parser.add_argument("--shapes", metavar="DIR", default=None,
                        help="directory of *.ttl shapes (default: the shapes yupana ships)")
    parser.add_argument("--allow-warnings", action="store_true",
                        help="warnings and infos are reported but do not fail (exit 0)")
    parser.add_argument("--format", choices=FORMATS, default=None, dest="output_format",
                        help="text (default), json (= --json), junit, sarif (2.1.0) or github "
                             "(GitHub Actions annotations); see docs/shapes.md")


def run(args: argparse.Namespace) -> int:
    fmt = getattr(args, "output_format", None) or ("json" if getattr(args, "json", False) else "text")
    try:
        return _run(args, fmt)
    except BrokenPipeError:  # the reader went away (`… | head`): cli ends quietly with 141, not "internal error"
        raise
    except Exception as exc:  # noqa: BLE001 - exit 3 is the promise for anything unexpected
        return _fail(3, "internal", [{"file": None, "line": None, "message": f"{type(exc).__name__}: {exc}"}], fmt)


def _run(args: argparse.Namespace, fmt: str) -> int:
    import rdflib

    from yupana.projection import gate

    shapes_dir = os.path.abspath(args.shapes) if args.shapes else gate.default_shapes_dir()
    try:
        shapes_graph = gate.load_shapes(shapes_dir)
    except gate.GateError as exc:
        if args.shapes:  # the user's input
            return _fail(2, "shapes", [{"file": shapes_dir, "line": None, "message": str(exc)}], fmt)
        raise

    graph = rdflib.Graph()
    files = _expand(args.files)
    if not files:
        return _fail(2, "input", [{"file": ", ".join(args.files), "line": None,
                                   "message": "no RDF files (.ttl, .nt, .n3, .rdf, .owl, .xml, .jsonld) there"}], fmt)
    errors = [err for path in files if (err := _parse_into(graph, path)) is not None]
    if errors:
        return _fail(2, "input", errors, fmt)

    try:
        report = gate.validate_graph(graph, shapes_dir)
    except gate.GateError as exc:
        return _fail(3, "internal", [{"file": None, "line": None, "message": str(exc)}], fmt)

    violations = report.count("violation")
    others = len(report.results) - violations
    code = 1 if violations or (others and not args.allow_warnings) else 0
    if fmt in ("junit", "sarif", "github"):
        _print_ci(fmt, report, files, graph, shapes_graph)
    elif fmt == "json":
        _print_json({
            "schema": SCHEMA,
            "exit_code": code,
            "conforms": violations == 0 and (others == 0 or args.allow_warnings),
            "files": [os.path.abspath(f) for f in files],
            "shapes_dir": shapes_dir,
            "triples": report.triples,
            "counts": {s: report.count(s) for s in gate.SEVERITIES},
            "results": [r.as_dict() for r in report.results],
            "errors": [],
        })
    else:
        from yupana import terminal

        sys.stdout.write(terminal.show(_table(report.results) + _summary(report, code, len(files)).split("\n")))
    return code


def _expand(paths: list[str]) -> list[str]:
    """Each path as given; a directory becomes its RDF files (recursively, sorted)."""
    out: list[str] = []
    for path in paths:
        if not os.path.isdir(path):
            out.append(path)
            continue
        for dirpath, dirnames, names in os.walk(path):
            dirnames.sort()
            out += [os.path.join(dirpath, n) for n in sorted(names) if os.path.splitext(n)[1].lower() in _FORMATS]
    return out


def _parse_into(graph: Any, path: str) -> dict[str, Any] | None:
    """Parse ``path`` into ``graph``; on failure an error dict naming the file and line."""
    if not os.path.exists(path):
        return {"file": path, "line": None, "message": "no such file"}
    fmt = _FORMATS.get(os.path.splitext(path)[1].lower(), "turtle")
    try:
        with open(path, "rb") as fh:
            graph.parse(fh, format=fmt, publicID=f"file://{os.path.abspath(path)}")
    except OSError as exc:
        return {"file": path, "line": None, "message": exc.strerror or str(exc)}
    except Exception as exc:  # noqa: BLE001 - every parser failure is "unparseable input"
        line = getattr(exc, "lines", None)
        text = str(exc).strip()
        why = getattr(exc, "_why", None) or (text.splitlines()[0] if text else type(exc).__name__)
        return {"file": path, "line": line + 1 if isinstance(line, int) else None, "message": f"not valid {fmt}: {why}"}
    return None


def _print_ci(fmt: str, report: Any, files: list[str], graph: Any, shapes_graph: Any) -> None:
    from yupana import __version__
    from yupana.commands import shapes_formats as out

    if fmt == "junit":
        sys.stdout.write(out.junit(report.results, out.shape_targets(shapes_graph, graph), report.duration_s))
    elif fmt == "sarif":
        import json

        print(json.dumps(out.sarif(report.results, out.Locator(files), report.shapes_dir, __version__), indent=2))
    else:
        sys.stdout.write(out.github(report.results, out.Locator(files)))


def _fail(code: int, kind: str, errors: list[dict[str, Any]], fmt: str) -> int:
    if fmt == "github":
        from yupana.commands.shapes_formats import _gh_data, _gh_prop

        for err in errors:
            props = ",".join([f"file={_gh_prop(err['file'])}"] * bool(err["file"]) + [f"line={err['line']}"] * bool(err["line"]))
            print(f"::error {props}::{_gh_data(err['message'])}".replace("::error ::", "::error::"))
    if fmt == "json":
        _print_json({"schema": SCHEMA, "exit_code": code, "conforms": None, "error_kind": kind,
                     "errors": errors, "results": [], "counts": None})
    for err in errors:
        where = err["file"] or "yupana"
        if err["line"]:
            where += f":{err['line']}"
        label = "internal error" if code == 3 else "cannot validate"
        print(f"yupana shapes: {label}: {where}: {err['message']}", file=sys.stderr)
    return code


def _print_json(doc: dict[str, Any]) -> None:
    from yupana.commands.json_output import emit

    emit("shapes.validate", doc, sort_keys=False)


def _table(results: Any) -> list[str]:
    """One row per result: severity, focus, path, constraint, then the message (never cut: on a
    narrow terminal it wraps under itself, or each result becomes a record)."""
    from yupana import terminal
    from yupana.projection.gate import compact

    if not results:
        return ["no results"]
    rows = []
    for r in results:
        message = r.message + (f" (value: {r.shown_value()})" if r.value is not None else "")
        rows.append([r.severity, _cut(compact(r.focus), 44), _cut(r.path or "(node)", 40), r.constraint, message])
    lines = terminal.table(["SEVERITY", "FOCUS", "PATH", "CONSTRAINT", "MESSAGE"], rows, terminal.width(),
                           wrap_last=True)
    return [line[terminal.INDENT:] for line in lines]  # flush left, as before


def _summary(report: Any, code: int, files: int) -> str:
    from yupana.projection.gate import SEVERITIES

    counts = ", ".join(f"{report.count(s)} {s}{'s' if report.count(s) != 1 else ''}" for s in SEVERITIES)
    verdict = "conforms" if code == 0 else "DOES NOT CONFORM"
    return (f"\n{verdict}: {counts} ({report.triples} triples from {files} file{'s' if files != 1 else ''}, "
            f"shapes {report.shapes_dir}, {report.duration_s:.2f}s)")


def _cut(text: str, width: int) -> str:
    text = text.replace("\n", "\\n")
    return text if len(text) <= width else text[: width - 1] + "…"
