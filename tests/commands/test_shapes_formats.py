"""``yupana shapes validate --format junit|sarif|github`` through the real CLI, each read back by
a consumer's parser: junitparser for JUnit, a SARIF 2.1.0 structural schema (jsonschema) for
SARIF, GitHub's workflow-command grammar for the annotations; on quipu's real catalogues too."""

from __future__ import annotations

import json
import re

import pytest

from conftest import QUIPU_FIXTURES
from tests.commands.test_shapes import BAD, GOOD, write

# The SARIF 2.1.0 schema cannot be downloaded here and sarif-om 1.0.4 (PyPI) ships only classes, no
# schema file (checked): this is
# the subset of it every consumer (GitHub code scanning) requires, written from the spec.
SARIF_MINIMAL = {
    "type": "object",
    "required": ["version", "runs"],
    "properties": {
        "version": {"const": "2.1.0"},
        "runs": {"type": "array", "items": {
            "type": "object", "required": ["tool", "results"],
            "properties": {
                "tool": {"type": "object", "required": ["driver"], "properties": {
                    "driver": {"type": "object", "required": ["name"], "properties": {
                        "rules": {"type": "array", "items": {"type": "object", "required": ["id"]}}}}}},
                "results": {"type": "array", "items": {
                    "type": "object", "required": ["message"],
                    "properties": {
                        "level": {"enum": ["none", "note", "warning", "error"]},
                        "message": {"type": "object", "required": ["text"]},
                        "locations": {"type": "array", "items": {"type": "object", "properties": {
                            "physicalLocation": {"type": "object", "required": ["artifactLocation"], "properties": {
                                "artifactLocation": {"type": "object", "required": ["uri"]},
                                "region": {"type": "object", "properties": {
                                    "startLine": {"type": "integer", "minimum": 1}}}}}}}}}}}}}}},
}
GITHUB_COMMAND = re.compile(r"^::(error|warning|notice)(?: ((?:[a-z]+=[^,:]*)(?:,[a-z]+=[^,:]*)*))?::(.*)$")


def test_junit_has_a_case_per_shape_and_focus_node_and_a_failure_per_violation(yupana, tmp_path):
    junitparser = pytest.importorskip("junitparser")
    run = yupana("shapes", "validate", "--format", "junit", write(tmp_path, "bad.ttl", BAD))
    assert run.returncode == 1
    path = tmp_path / "report.xml"
    path.write_bytes(run.stdout)
    xml = junitparser.JUnitXml.fromfile(str(path))
    cases = {(case.classname, case.name): case for suite in xml for case in suite}
    assert ("aegis:GovernedPolicyShape", "aegis:wire_auth") in cases  # a passing case
    assert cases[("aegis:GovernedPolicyShape", "aegis:wire_auth")].is_passed
    failed = [key for key, case in cases.items() if not case.is_passed]
    assert sorted(f for _, f in failed) == ["aegis:wire_auth", "aegis:wire_hot"]


def test_sarif_locates_each_result_in_the_data_file_at_the_focus_nodes_line(yupana, tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    data = write(tmp_path, "bad.ttl", BAD)
    run = yupana("shapes", "validate", "--format", "sarif", data)
    assert run.returncode == 1
    log = json.loads(run.stdout)
    jsonschema.validate(log, SARIF_MINIMAL)
    lines = BAD.splitlines()
    for result in log["runs"][0]["results"]:
        loc = result["locations"][0]["physicalLocation"]
        assert loc["artifactLocation"]["uri"] == (tmp_path / "bad.ttl").as_uri()
        focus = result["properties"]["focus"].rsplit("/", 1)[1]
        assert lines[loc["region"]["startLine"] - 1].startswith(f"aegis:{focus} ")
        assert result["level"] == "error"


def test_github_annotations_name_file_and_line(yupana, tmp_path):
    data = write(tmp_path, "bad.ttl", BAD)
    run = yupana("shapes", "validate", "--format", "github", data, cwd=tmp_path)
    assert run.returncode == 1
    out = run.stdout.decode().splitlines()
    assert len(out) == 2
    for line in out:
        m = GITHUB_COMMAND.match(line)
        assert m, line
        props = dict(p.split("=", 1) for p in m.group(2).split(","))
        assert props["file"].endswith("bad.ttl") and int(props["line"]) >= 4
    assert yupana("shapes", "validate", "--format", "github", write(tmp_path, "g.ttl", GOOD)).stdout == b""


def test_github_annotation_for_broken_turtle_names_its_line(yupana, tmp_path):
    run = yupana("shapes", "validate", "--format", "github", write(tmp_path, "x.ttl", "@prefix : <urn:x#> .\n:a :b\n"))
    assert run.returncode == 2
    assert GITHUB_COMMAND.match(run.stdout.decode().splitlines()[0])
    assert "file=" in run.stdout.decode()


@pytest.mark.skipif(not (QUIPU_FIXTURES / "shapes").is_dir(), reason="quipu fixtures absent")
def test_quipu_catalogues_in_every_ci_format(yupana):
    junitparser = pytest.importorskip("junitparser")
    jsonschema = pytest.importorskip("jsonschema")
    files = [str(QUIPU_FIXTURES / "shapes" / "policies"), str(QUIPU_FIXTURES / "demo.ttl")]
    text = yupana("shapes", "validate", *files, "--json")
    junit = yupana("shapes", "validate", *files, "--format", "junit")
    sarif = yupana("shapes", "validate", *files, "--format", "sarif")
    assert text.returncode == junit.returncode == sarif.returncode
    expected = len(json.loads(text.stdout)["results"])
    xml = junitparser.JUnitXml.fromstring(junit.stdout.decode())
    failures = sum(len(case.result) for suite in xml for case in suite)
    assert failures == expected
    log = json.loads(sarif.stdout)
    jsonschema.validate(log, SARIF_MINIMAL)
    assert len(log["runs"][0]["results"]) == expected
