"""``yupana shapes validate --format junit|sarif|github`` through the real CLI, each read back by
a consumer's parser: junitparser for JUnit, the SARIF 2.1.0 schema (as pydantic-sarif's model of
it) for SARIF, GitHub's workflow-command grammar and escaping for the annotations; on quipu's
real catalogues too."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from conftest import QUIPU_FIXTURES, REPO
from tests.commands.test_shapes import BAD, COMPILE_BAD, COMPILE_FINDINGS, GOOD, write


def sarif_model():
    """The SARIF 2.1.0 object model generated from OASIS's sarif-schema-2.1.0.json (pydantic-sarif:
    every object closed, every enumeration checked): validating against it is validating against
    the schema."""
    return pytest.importorskip("pydantic_sarif.model").StaticAnalysisResultsFormatSarifVersion210JsonSchema


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
    data = write(tmp_path, "bad.ttl", BAD)
    run = yupana("shapes", "validate", "--format", "sarif", data)
    assert run.returncode == 1
    log = json.loads(run.stdout)
    sarif_model().model_validate(log)
    broken = json.loads(run.stdout)
    broken["runs"][0]["results"][0]["level"] = "fatal"  # the model is not vacuous
    with pytest.raises(ValueError):
        sarif_model().model_validate(broken)
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


def test_what_the_refresh_cannot_compile_is_in_every_ci_format(yupana, tmp_path):
    """The compile steps' findings travel the same report as SHACL's: a JUnit failure, a SARIF
    result at the line that writes the subject, a GitHub annotation — no format special-cases them."""
    junitparser = pytest.importorskip("junitparser")
    data = write(tmp_path, "compile.ttl", COMPILE_BAD)
    lines = COMPILE_BAD.splitlines()
    wanted = {focus: (path, constraint, reason) for focus, path, constraint, reason in COMPILE_FINDINGS}

    junit = yupana("shapes", "validate", "--format", "junit", data)
    assert junit.returncode == 1
    xml = junitparser.JUnitXml.fromstring(junit.stdout.decode())
    failed = {case.name: case.result[0] for suite in xml for case in suite if not case.is_passed}
    assert set(failed) == set(wanted)
    for focus, failure in failed.items():
        path, constraint, reason = wanted[focus]
        assert failure.type == "violation" and failure.message.startswith(f"{path} {constraint}: ") and reason in failure.message

    sarif = yupana("shapes", "validate", "--format", "sarif", data)
    assert sarif.returncode == 1
    log = json.loads(sarif.stdout)
    sarif_model().model_validate(log)
    results = log["runs"][0]["results"]
    assert sorted(r["ruleId"] for r in results) == sorted(c for _, _, c, _ in COMPILE_FINDINGS)
    assert {rule["id"] for rule in log["runs"][0]["tool"]["driver"]["rules"]} == {"yupana:CompilesAsRE2",
                                                                                 "yupana:CompilesAsGlob"}
    for result in results:
        focus = "aegis:" + result["properties"]["focus"].rsplit("/", 1)[1]
        loc = result["locations"][0]["physicalLocation"]
        assert lines[loc["region"]["startLine"] - 1].startswith(f"{focus} ")  # the line that writes the subject
        assert result["level"] == "error" and wanted[focus][2] in result["message"]["text"]

    github = yupana("shapes", "validate", "--format", "github", data, cwd=tmp_path)
    assert github.returncode == 1
    seen = set()
    for line in github.stdout.decode().splitlines():
        m = GITHUB_COMMAND.match(line)
        assert m and m.group(1) == "error", line
        props = {k: unescape(v) for k, v in (p.split("=", 1) for p in m.group(2).split(","))}
        focus = next(f for f in wanted if f" {f} " in props["title"] + " ")
        path, constraint, reason = wanted[focus]
        assert props["title"] == f"{constraint}: {focus} {path}" and props["file"] == "compile.ttl"
        assert lines[int(props["line"]) - 1].startswith(f"{focus} ") and reason in unescape(m.group(3))
        seen.add(focus)
    assert seen == set(wanted)


def unescape(text: str) -> str:
    """The runner's decoding of a workflow command's data and property values (%25, %0D, %0A, %3A, %2C)."""
    for code, char in (("%0D", "\r"), ("%0A", "\n"), ("%3A", ":"), ("%2C", ","), ("%25", "%")):
        text = text.replace(code, char)
    return text


def test_github_annotations_escape_what_the_runner_would_split_on(yupana, tmp_path):
    """Titles hold ``aegis:`` names and messages may hold ``,``, ``%`` and newlines: escaped, they
    survive the runner's parse whole."""
    data = write(tmp_path, "odd, name%.ttl", BAD)
    run = yupana("shapes", "validate", "--format", "github", data, cwd=tmp_path)
    doc = json.loads(yupana("shapes", "validate", "--json", data).stdout)
    wanted = sorted(r["message"] for r in doc["results"])
    got = []
    for line in run.stdout.decode().splitlines():
        m = GITHUB_COMMAND.match(line)
        assert m, line
        props = {k: unescape(v) for k, v in (p.split("=", 1) for p in m.group(2).split(","))}
        assert props["file"] == "odd, name%.ttl" and props["title"].startswith("SHACL ") and "aegis:" in props["title"]
        got.append(unescape(m.group(3)).split(" (value: ")[0])
    assert sorted(got) == wanted


def test_github_annotation_for_broken_turtle_names_its_line(yupana, tmp_path):
    run = yupana("shapes", "validate", "--format", "github", write(tmp_path, "x.ttl", "@prefix : <urn:x#> .\n:a :b\n"))
    assert run.returncode == 2
    assert GITHUB_COMMAND.match(run.stdout.decode().splitlines()[0])
    assert "file=" in run.stdout.decode()


@pytest.mark.skipif(not (QUIPU_FIXTURES / "shapes").is_dir(), reason="quipu fixtures absent")
def test_quipu_catalogues_in_every_ci_format(yupana):
    junitparser = pytest.importorskip("junitparser")
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
    sarif_model().model_validate(log)
    assert len(log["runs"][0]["results"]) == expected


def test_the_pre_commit_manifest_is_valid_and_its_entry_validates_the_files_it_is_given(yupana, tmp_path):
    pytest.importorskip("pre_commit")
    import yaml  # pre-commit's own dependency

    manifest = REPO / ".pre-commit-hooks.yaml"
    check = subprocess.run([sys.executable, "-m", "pre_commit", "validate-manifest", str(manifest)],
                           capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    hook = next(h for h in yaml.safe_load(manifest.read_text()) if h["id"] == "yupana-shapes")
    assert re.search(hook["files"], "catalogue/policies.ttl") and not re.search(hook["files"], "README.md")
    program, *words = hook["entry"].split()
    assert program == "yupana"
    bad, good = write(tmp_path, "bad.ttl", BAD), write(tmp_path, "good.ttl", GOOD)
    assert yupana(*words, good).returncode == 0  # what pre-commit runs: the entry, then the changed files
    failed = yupana(*words, good, bad)
    assert failed.returncode == 1 and b"aegis:wire_auth" in failed.stdout
    assert yupana(*words, str(tmp_path)).returncode == 1  # docs/shapes.md: pass_filenames false, args [DIR]
