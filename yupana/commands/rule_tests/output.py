"""What ``yupana test`` prints: text (default), ``--json`` (schema ``yupana.test/1``) and the CI
reports ``--format junit|sarif|github``, made as ``yupana shapes validate`` makes them
(:mod:`yupana.commands.shapes_formats`'s escaping and locations). Cold path.

* junit — one ``<testsuite>`` per case file, one ``<testcase>`` per case (a ``<failure>`` per
  failed one); with ``--require-coverage`` a ``coverage`` suite, one case per governed rule;
* sarif — SARIF 2.1.0: one result per failed case (rule ``yupana-test/case-failed``), at the line
  of its ``[[case]]`` in its file, and one per rule no case made fire
  (``yupana-test/rule-uncovered``: level error under ``--require-coverage``, else note);
* github — one workflow command per failed case (``::error file=…,line=…``) and per uncovered rule
  (``::error`` under ``--require-coverage``, else ``::notice``).
"""

from __future__ import annotations

from typing import Any

import json
import sys

from yupana.commands.rule_tests.runner import Result, Rule, compact

SCHEMA = "yupana.test/1"
UNCOVERED_SHOWN = 20  # uncovered rules listed in the text form (all of them under --require-coverage)


def emit(fmt: str, doc: dict[str, Any], results: list[Result], uncovered: list[Rule]) -> None:
    if fmt == "json":
        from yupana.commands.json_output import emit as emit_json

        emit_json("test", {"schema": SCHEMA, **doc}, sort_keys=False)
    elif fmt == "junit":
        sys.stdout.write(junit(doc, results, uncovered))
    elif fmt == "sarif":
        print(json.dumps(sarif(doc, results, uncovered), indent=2))
    elif fmt == "github":
        sys.stdout.write(github(doc, results, uncovered))
    else:
        sys.stdout.write(text(doc, results, uncovered))


def error(fmt: str, code: int, kind: str, message: str, gate_results: list[Any]) -> None:
    """Unusable input (2) or an internal error (3): stderr always, and the format's own form."""
    from yupana.commands import shapes_formats

    details = [f"{r.severity} {compact(r.focus)} {r.path or '(node)'} {r.constraint}: {r.message}"
               + (f" (value: {r.shown_value()})" if r.value is not None else "") for r in gate_results]
    if fmt == "json":
        from yupana.commands.json_output import emit as emit_json

        emit_json("test", {"schema": SCHEMA, "exit_code": code, "passed": False, "error_kind": kind,
                           "error": message, "gate": [r.as_dict() for r in gate_results], "cases": []},
                  sort_keys=False)
    elif fmt == "github":
        for line in [message, *details]:
            print(f"::error title={shapes_formats.github_property('yupana test')}::{shapes_formats.github_data(line)}")
    label = "internal error" if code == 3 else "cannot test"
    print(f"yupana test: {label}: {message}", file=sys.stderr)
    for line in details:
        print(f"  {line}", file=sys.stderr)


def text(doc: dict[str, Any], results: list[Result], uncovered: list[Rule]) -> str:
    lines = []
    for r in results:
        lines.append(f"{'PASS' if r.passed else 'FAIL'}  {r.case.file}: {r.case.name}  ({r.hook}, mode {r.case.mode}, "
                     f"{r.decision})")
        for why in r.failures:
            lines.append(f"      {why}")
        if not r.passed and r.fired:
            lines.append("      fired: " + ", ".join(f"{f.get('rule') or f.get('id')} ({f.get('response') or f.get('outcome')})"
                                                     for f in r.fired))
    cov = doc["coverage"]
    lines.append("")
    lines.append(f"coverage: {cov['exercised']} of {cov['rules']} governed rules fired in some case")
    shown = uncovered if doc["coverage"]["required"] else uncovered[:UNCOVERED_SHOWN]
    for rule in shown:
        lines.append(f"  not exercised: {compact(rule.iri)} ({rule.plane}, {rule.name})")
    if len(shown) < len(uncovered):
        lines.append(f"  … and {len(uncovered) - len(shown)} more (--json or --require-coverage lists them all)")
    counts = doc["counts"]
    verdict = "PASSED" if doc["passed"] else "FAILED"
    why = " (--require-coverage: rules not exercised)" if not counts["failed"] and not doc["passed"] else ""
    lines.append(f"{verdict}{why}: {counts['passed']} passed, {counts['failed']} failed of {counts['cases']} cases "
                 f"({doc['source']}, rule set {doc['digest']}, {doc['duration_s']:.2f}s)")
    return "\n".join(lines) + "\n"


def _case_line(result: Result) -> int | None:
    """The line of the case's ``[[case]]`` header in its file (1-based), when it can be found."""
    try:
        with open(result.case.file, encoding="utf-8", errors="replace") as fh:
            seen = 0
            for number, line in enumerate(fh, 1):
                if line.strip().startswith("[[case]]"):
                    seen += 1
                    if seen == result.case.index:
                        return number
    except OSError:
        return None
    return None


def _message(result: Result) -> str:
    return f"{result.case.name}: " + "; ".join(result.failures)


def junit(doc: dict[str, Any], results: list[Result], uncovered: list[Rule]) -> str:
    from xml.etree import ElementTree as ET

    root = ET.Element("testsuites", name="yupana test")
    suites: dict[str, ET.Element] = {}
    for r in results:
        suite = suites.get(r.case.file)
        if suite is None:
            suite = suites[r.case.file] = ET.SubElement(root, "testsuite", name=r.case.file)
        case = ET.SubElement(suite, "testcase", classname=r.case.file, name=r.case.name, time="0")
        if not r.passed:
            failure = ET.SubElement(case, "failure", message=_message(r), type="case-failed")
            failure.text = "\n".join(r.failures)
    if doc["coverage"]["required"]:
        suite = suites["coverage"] = ET.SubElement(root, "testsuite", name="coverage")
        missing = {rule.iri for rule in uncovered}
        for iri, name in sorted(_all_rules(doc, uncovered)):
            case = ET.SubElement(suite, "testcase", classname="coverage", name=compact(iri), time="0")
            if iri in missing:
                failure = ET.SubElement(case, "failure", message=f"no case made {name} fire", type="rule-uncovered")
                failure.text = failure.get("message")
    total = failures = 0
    for suite in suites.values():
        cases = suite.findall("testcase")
        failed = sum(1 for c in cases if c.find("failure") is not None)
        total, failures = total + len(cases), failures + failed
        for key, value in (("tests", len(cases)), ("failures", failed), ("errors", 0), ("skipped", 0)):
            suite.set(key, str(value))
    root.set("tests", str(total))
    root.set("failures", str(failures))
    root.set("errors", "0")
    root.set("time", f"{doc['duration_s']:.3f}")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _all_rules(doc: dict[str, Any], uncovered: list[Rule]) -> list[tuple[str, str]]:
    fired = {(str(f["iri"]), str(f.get("rule") or f.get("id"))) for c in doc["cases"] for f in c["fired"] if f.get("iri")}
    return sorted(fired | {(r.iri, r.name) for r in uncovered})


def sarif(doc: dict[str, Any], results: list[Result], uncovered: list[Rule]) -> dict[str, Any]:
    from yupana import __version__
    from yupana.commands.shapes_formats import file_uri

    out: list[dict[str, Any]] = []
    for r in results:
        if r.passed:
            continue
        physical: dict[str, Any] = {"artifactLocation": {"uri": file_uri(r.case.file)}}
        line = _case_line(r)
        if line:
            physical["region"] = {"startLine": line}
        out.append({"ruleId": "yupana-test/case-failed", "level": "error", "message": {"text": _message(r)},
                    "locations": [{"physicalLocation": physical}],
                    "properties": {"case": r.case.name, "expect": r.case.expect, "decision": r.decision}})
    required = doc["coverage"]["required"]
    for rule in uncovered:
        out.append({"ruleId": "yupana-test/rule-uncovered", "level": "error" if required else "note",
                    "message": {"text": f"no case made the governed rule {compact(rule.iri)} ({rule.plane}) fire"},
                    "locations": [{"logicalLocations": [{"fullyQualifiedName": rule.iri, "kind": "object"}]}],
                    "properties": {"iri": rule.iri, "plane": rule.plane, "name": rule.name}})
    rules = [{"id": "yupana-test/case-failed", "name": "case-failed",
              "shortDescription": {"text": "a catalogue test case's decision or rules differ from its expectation"}},
             {"id": "yupana-test/rule-uncovered", "name": "rule-uncovered",
              "shortDescription": {"text": "a governed rule no test case made fire"}}]
    return {"$schema": "https://json.schemastore.org/sarif-2.1.0.json", "version": "2.1.0",
            "runs": [{"tool": {"driver": {"name": "yupana test", "version": __version__,
                                          "informationUri": "https://github.com/yupana/yupana", "rules": rules}},
                      "results": out}]}


def github(doc: dict[str, Any], results: list[Result], uncovered: list[Rule]) -> str:
    import os

    from yupana.commands.shapes_formats import github_data, github_property

    lines = []
    for r in results:
        if r.passed:
            continue
        props = [f"file={github_property(os.path.relpath(r.case.file))}"]
        line = _case_line(r)
        if line:
            props.append(f"line={line}")
        props.append(f"title={github_property('yupana test: ' + r.case.name)}")
        lines.append(f"::error {','.join(props)}::{github_data('; '.join(r.failures))}")
    level = "error" if doc["coverage"]["required"] else "notice"
    for rule in uncovered:
        title = github_property(f"yupana test: {compact(rule.iri)} not exercised")
        lines.append(f"::{level} title={title}::"
                     f"{github_data(f'no case made the governed rule {rule.iri} ({rule.plane}) fire')}")
    return "\n".join(lines) + ("\n" if lines else "")
