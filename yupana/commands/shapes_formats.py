"""CI formats for ``yupana shapes validate --format junit|sarif|github`` (docs/shapes.md).

* junit — one ``<testcase>`` per shape × focus node that the shape targets (a failure per
  violation, a failure marked ``type="warning"``/``"info"`` for the others), one
  ``<testsuite>`` per shape;
* sarif — SARIF 2.1.0, one result per SHACL result, located in the data file that states the
  focus node, with the line where it is first written;
* github — GitHub Actions workflow commands (``::error file=…,line=…::message``).

rdflib does not report where a triple came from, so the line is found by searching each data
file's text for the focus node: its full IRI in angle brackets, or a prefixed name built from
that file's own ``@prefix``/``PREFIX`` lines, at the start of a statement. A focus node not
written there (a blank node, a node only reached through a list) has no line; the file is then
the first data file.
"""

from __future__ import annotations

from typing import Any

import os
import re

_SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_SARIF_LEVEL = {"violation": "error", "warning": "warning", "info": "note"}
_GITHUB_LEVEL = {"violation": "error", "warning": "warning", "info": "notice"}
_PREFIX_LINE = re.compile(r"^\s*(?:@prefix|PREFIX)\s+([A-Za-z][\w.-]*)?:\s*<([^>]*)>", re.IGNORECASE | re.MULTILINE)
FORMATS = ("text", "json", "junit", "sarif", "github")


class Locator:
    """Where each focus node is written in the data files (file, 1-based line or None)."""

    def __init__(self, files: list[str]) -> None:
        self._texts: list[tuple[str, list[str], dict[str, str]]] = []
        for path in files:
            try:
                with open(path, encoding="utf-8", errors="replace") as fh:
                    text = fh.read()
            except OSError:
                continue
            prefixes = {ns: prefix or "" for prefix, ns in _PREFIX_LINE.findall(text)}
            self._texts.append((os.path.abspath(path), text.splitlines(), prefixes))
        self._default = os.path.abspath(files[0]) if files else ""

    def find(self, focus: str) -> tuple[str, int | None]:
        if focus.startswith("_:") or not focus:
            return self._default, None
        for path, lines, prefixes in self._texts:
            names = [f"<{focus}>"]
            for ns, prefix in prefixes.items():
                local = focus[len(ns):]
                if focus.startswith(ns) and local and re.fullmatch(r"[\w.-]*", local):
                    names.append(f"{prefix}:{local}")
            for number, line in enumerate(lines, 1):
                stripped = line.lstrip()
                if any(stripped.startswith(n) and stripped[len(n):len(n) + 1] in ("", " ", "\t", ";")
                       for n in names):
                    return path, number
        for path, lines, _prefixes in self._texts:  # written only as an object, or mid-line
            for number, line in enumerate(lines, 1):
                if f"<{focus}>" in line:
                    return path, number
        return self._default, None


def shape_targets(shapes_graph: Any, data_graph: Any) -> dict[str, list[str]]:
    """Each node shape (IRI text) → the focus nodes its ``sh:targetClass`` selects in the data."""
    from rdflib import RDF, RDFS
    from rdflib.namespace import SH

    from yupana.projection.gate import _node_text

    out: dict[str, list[str]] = {}
    for shape, cls in shapes_graph.subject_objects(SH.targetClass):
        classes = set(data_graph.transitive_subjects(RDFS.subClassOf, cls)) | {cls}
        focus = {_node_text(s) for c in classes for s in data_graph.subjects(RDF.type, c)}
        name = _name(_node_text(shape))
        out[name] = sorted(set(out.get(name, [])) | focus)
    for shape, node in shapes_graph.subject_objects(SH.targetNode):
        out.setdefault(_name(_node_text(shape)), []).append(_node_text(node))
    return out


def junit(results: Any, targets: dict[str, list[str]], duration_s: float) -> str:
    """JUnit XML: a suite per shape, a case per shape × focus node."""
    from xml.etree import ElementTree as ET

    from yupana.projection.gate import compact

    by_case: dict[tuple[str, str], list[Any]] = {}
    results = list(results)
    for shape, focus_nodes in targets.items():
        for focus in focus_nodes:
            by_case.setdefault((shape, focus), [])
    for r in results:
        by_case.setdefault((_name(r.shape or ""), r.focus), []).append(r)
    root = ET.Element("testsuites", name="yupana shapes validate")
    suites: dict[str, ET.Element] = {}
    for (shape, focus), found in sorted(by_case.items()):
        suite = suites.get(shape)
        if suite is None:
            suite = suites[shape] = ET.SubElement(root, "testsuite", name=shape or "(no shape)")
        case = ET.SubElement(suite, "testcase", classname=shape or "(no shape)",
                             name=compact(focus), time="0")
        for r in found:
            message = f"{r.path or '(node)'} {r.constraint}: {r.message}"
            if r.value is not None:
                message += f" (value: {r.shown_value()})"
            failure = ET.SubElement(case, "failure", message=message, type=r.severity)
            failure.text = message
    total_fail = 0
    for suite in suites.values():
        cases = suite.findall("testcase")
        failed = sum(1 for c in cases if c.find("failure") is not None)
        total_fail += failed
        suite.set("tests", str(len(cases)))
        suite.set("failures", str(failed))
        suite.set("errors", "0")
        suite.set("skipped", "0")
    root.set("tests", str(len(by_case)))
    root.set("failures", str(total_fail))
    root.set("errors", "0")
    root.set("time", f"{duration_s:.3f}")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def sarif(results: Any, locator: Locator, shapes_dir: str, version: str) -> dict[str, Any]:
    """A SARIF 2.1.0 log: one run, one rule per constraint component, one result per SHACL result."""
    from yupana.projection.gate import compact

    rules: dict[str, dict[str, Any]] = {}
    out = []
    for r in results:
        rule_id = r.constraint or "shacl"
        rules.setdefault(rule_id, {"id": rule_id, "name": rule_id,
                                   "shortDescription": {"text": f"{r.check()} constraint"}})
        path, line = locator.find(r.focus)
        region = {"startLine": line} if line else None
        physical: dict[str, Any] = {"artifactLocation": {"uri": _uri(path)}}
        if region:
            physical["region"] = region
        text = f"{compact(r.focus)} {r.path or '(node)'}: {r.message}"
        if r.value is not None:
            text += f" (value: {r.shown_value()})"
        out.append({
            "ruleId": rule_id,
            "level": _SARIF_LEVEL.get(r.severity, "warning"),
            "message": {"text": text},
            "locations": [{"physicalLocation": physical,
                           "logicalLocations": [{"fullyQualifiedName": r.focus, "kind": "object"}]}],
            "properties": {"focus": r.focus, "path": r.path, "shape": r.shape, "severity": r.severity},
        })
    return {
        "$schema": _SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "yupana shapes validate", "version": version,
                                "informationUri": "https://github.com/yupana/yupana",
                                "rules": sorted(rules.values(), key=lambda x: x["id"])}},
            "originalUriBaseIds": {"SHAPES": {"uri": _uri(shapes_dir) + "/"}},
            "results": out,
        }],
    }


def github(results: Any, locator: Locator) -> str:
    """GitHub Actions annotations: ``::error file=F,line=N,title=T::message``, one per result."""
    from yupana.projection.gate import compact

    lines = []
    for r in results:
        path, line = locator.find(r.focus)
        rel = os.path.relpath(path) if path else ""
        props = [f"file={_gh_prop(rel)}"] + ([f"line={line}"] if line else [])
        title = f"{r.check()}: {compact(r.focus)} {r.path or '(node)'}"
        props.append(f"title={_gh_prop(title)}")
        message = r.message + (f" (value: {r.shown_value()})" if r.value is not None else "")
        lines.append(f"::{_GITHUB_LEVEL.get(r.severity, 'warning')} {','.join(props)}::{_gh_data(message)}")
    return "\n".join(lines) + ("\n" if lines else "")


def _name(shape: str) -> str:
    """A shape as the results name it: compact when it is an IRI (``_:x`` and names unchanged)."""
    from yupana.projection.gate import compact

    return compact(shape) if shape.startswith(("http://", "https://", "urn:", "file:")) else shape


def _uri(path: str) -> str:
    from pathlib import Path

    return Path(path).absolute().as_uri() if path else ""


def github_data(text: str) -> str:
    """A workflow command's message, escaped as the Actions runner unescapes it."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def github_property(text: str) -> str:
    """A workflow command's property value (``file=``, ``title=``), escaped as the runner unescapes it."""
    return github_data(text).replace(":", "%3A").replace(",", "%2C")


def file_uri(path: str) -> str:
    """``file://`` URI of ``path`` (absolute), as SARIF locations name it."""
    return _uri(path)


_gh_data, _gh_prop = github_data, github_property
