"""``yupana test [--catalogue DATA… [--shapes DIR] | --bundle FILE] CASES…``: catalogue unit tests,
for the store's CI. Cold path.

Each case (``*.test.toml``, docs/testing.md) is one client input and the decision the hooks must
reach on it. The catalogue under test — RDF files (no server, no cache: the embedded store), a
signed bundle, or the configured store — is projected into a private sandbox by a real refresh,
so it is gated by the same strict decode, SHACL shapes and compile checks first; then every case
runs through the real hook, rehearsed exactly as ``yupana explain`` rehearses it, and its
decision and fired rules are compared with the case's expectation.

Exit codes: 0 every case passed (and, with ``--require-coverage``, every governed rule fired in
some case); 1 a case failed (or a rule is uncovered under ``--require-coverage``); 2 unusable
input — a case file that does not parse or breaks the format, a catalogue the gate refuses or
that cannot be read, no catalogue at all; 3 internal error.
"""

from __future__ import annotations

from typing import Any

import argparse
import os
import time

from yupana.commands.rule_tests.cases import CaseError
from yupana.commands.rule_tests.sandbox import SourceError

EXIT_OK, EXIT_FAILED, EXIT_INPUT, EXIT_INTERNAL = 0, 1, 2, 3
FORMATS = ("text", "json", "junit", "sarif", "github")

# the global flags (cli.GLOBAL_HELP) this command honours; any other is refused
GLOBAL_FLAGS: tuple[str, ...] = ("--json", "--config")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("cases", nargs="*", metavar="CASES",
                        help="*.test.toml case files, or directories of them (docs/testing.md); after --catalogue's "
                             "files they are told apart by the name (.test.toml) or by holding case files and no RDF")
    parser.add_argument("--catalogue", nargs="+", metavar="DATA", default=None,
                        help="test these RDF files or directories (the embedded store: no server, no cache) "
                             "instead of the configured store")
    parser.add_argument("--bundle", metavar="FILE", default=None,
                        help="test the rules of this signed bundle (verified as a host verifies it)")
    parser.add_argument("--trusted-key", action="append", default=[], metavar="KEY",
                        help="a key the --bundle may be signed with (ed25519:… or a PEM public key file); "
                             "default: [yupana.bundle] trusted_keys")
    parser.add_argument("--shapes", metavar="DIR", default=None,
                        help="SHACL shapes directory for the gate (default: the shapes yupana ships)")
    parser.add_argument("--require-coverage", action="store_true",
                        help="fail (exit 1) when a governed rule fired in no case")
    parser.add_argument("--format", choices=FORMATS, default=None, dest="output_format",
                        help="text (default), json (= --json), junit, sarif (2.1.0) or github (Actions annotations)")
    parser.add_argument("--root", default=None, help="project whose configured store to test (default: the cwd's)")


def run(args: argparse.Namespace) -> int:
    fmt = getattr(args, "output_format", None) or ("json" if getattr(args, "json", False) else "text")
    try:
        return _run(args, fmt)
    except BrokenPipeError:
        raise
    except CaseError as exc:
        return _fail(EXIT_INPUT, "cases", str(exc), fmt)
    except SourceError as exc:
        return _fail(EXIT_INPUT, "catalogue", str(exc), fmt, exc.results)
    except Exception as exc:  # noqa: BLE001 - an operator command names what failed, never a traceback
        return _fail(EXIT_INTERNAL, "internal", f"{type(exc).__name__}: {exc}", fmt)


def _run(args: argparse.Namespace, fmt: str) -> int:
    from yupana.commands.rule_tests import cases as case_files
    from yupana.commands.rule_tests import runner, sandbox

    started = time.monotonic()
    if args.catalogue and args.bundle:
        raise SourceError("give --catalogue or --bundle, not both")
    if args.shapes and not os.path.isdir(args.shapes):
        raise SourceError(f"{args.shapes}: no such shapes directory")
    if args.shapes and args.bundle:
        raise SourceError("--shapes applies to --catalogue and the configured store: a bundle was gated when it was built")
    given = args.catalogue is not None
    args.catalogue, paths = case_files.split(args.catalogue, args.cases)
    if given and not args.catalogue:
        raise SourceError("--catalogue names no RDF file or directory (only case files): give the catalogue first, "
                          "e.g. `yupana test --catalogue data/ cases/`")
    if not paths:
        raise CaseError("no case files: name *.test.toml files or directories of them (docs/testing.md)")
    cases = case_files.load(paths)
    from yupana import project_root

    root = project_root.cold_root(args.root)
    override = getattr(args, "config", None)
    if args.catalogue:
        source = sandbox.catalogue_source(args.catalogue)
    elif args.bundle:
        source = sandbox.bundle_source(args.bundle, args.trusted_key, root, override)
    else:
        source = sandbox.store_source(root, override)
    shapes = os.path.abspath(args.shapes) if args.shapes else None
    box = sandbox.Sandbox(source)
    try:
        with sandbox.active(box):
            box.refresh(shapes)
            rules = runner.governed_rules(box.cache)
            results = [runner.run_case(case, box, rules) for case in cases]  # CaseError: a path leaves the sandbox
    finally:
        box.remove()
    uncovered = runner.coverage(rules, results)
    failed = sum(1 for r in results if not r.passed)
    code = EXIT_FAILED if failed or (args.require_coverage and uncovered) else EXIT_OK
    doc = {"exit_code": code, "passed": code == EXIT_OK, "source": source.label, "digest": box.digest,
           "counts": {"cases": len(results), "passed": len(results) - failed, "failed": failed},
           "cases": [r.as_dict() for r in results],
           "coverage": {"rules": len(rules), "exercised": len(rules) - len(uncovered),
                        "uncovered": [{"iri": r.iri, "name": r.name, "plane": r.plane} for r in uncovered],
                        "required": bool(args.require_coverage)},
           "duration_s": round(time.monotonic() - started, 3)}
    from yupana.commands.rule_tests import output

    output.emit(fmt, doc, results, uncovered)
    return code


def _fail(code: int, kind: str, message: str, fmt: str, results: list[Any] | None = None) -> int:
    from yupana.commands.rule_tests import output

    output.error(fmt, code, kind, message, results or [])
    return code
