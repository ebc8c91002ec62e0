"""``yupana test --format junit|sarif|github`` through the real CLI, read back by a consumer's
parser as ``shapes validate``'s are: junitparser, the SARIF 2.1.0 schema, the workflow-command
grammar with the runner's escaping."""

from __future__ import annotations

import json

import pytest

from tests.commands.test_rule_tests import CATALOGUE, write
from tests.commands.test_shapes_formats import GITHUB_COMMAND, sarif_model, unescape

# two passing cases and one failing one, in two files; the failing one is the second [[case]] of its file
GOOD = '''
[[case]]
name = "plain"
tool = "Write"
path = "src/a.py"
text = "x = 1"
expect = "allow"

[[case]]
name = "auth, boundary: 100%"
tool = "Write"
path = "crates/gateway/src/auth/login.rs"
text = "fn login() {}"
expect = "deny"
rules = ["auth-boundary"]
'''
WRONG = '''
[[case]]
name = "also plain"
tool = "Bash"
command = "ls"
expect = "allow"

[[case]]
name = "chat, wrongly expected"
tool = "Write"
path = "src/a.py"
text = "# ask #ops-deploys"
expect = "deny"
'''


@pytest.fixture
def suite(tmp_path):
    return [write(tmp_path / "cases" / "good.test.toml", GOOD), write(tmp_path / "cases" / "wrong.test.toml", WRONG)]


def test_junit_has_a_suite_per_file_and_a_failure_per_failed_case(yupana, suite, tmp_path):
    junitparser = pytest.importorskip("junitparser")
    done = yupana("test", "--catalogue", CATALOGUE, *suite, "--format", "junit")
    assert done.returncode == 1
    xml = junitparser.JUnitXml.fromstring(done.stdout.decode())
    cases = {(suite_.name.rsplit("/", 1)[-1], case.name): [r.type for r in case.result] for suite_ in xml for case in suite_}
    assert cases == {("good.test.toml", "plain"): [], ("good.test.toml", "auth, boundary: 100%"): [],
                     ("wrong.test.toml", "also plain"): [], ("wrong.test.toml", "chat, wrongly expected"): ["case-failed"]}
    required = yupana("test", "--catalogue", CATALOGUE, *suite, "--format", "junit", "--require-coverage")
    xml = junitparser.JUnitXml.fromstring(required.stdout.decode())
    coverage = next(s for s in xml if s.name == "coverage")
    outcomes = {case.name: bool(case.result) for case in coverage}
    assert outcomes["aegis:wire_auth_boundary"] is False and outcomes["aegis:rule_liveness_canary"] is True
    assert len(outcomes) == 38  # every governed rule of the bundled catalogue: exercised or not


def test_sarif_locates_each_failed_case_at_its_line_and_names_uncovered_rules(yupana, suite):
    done = yupana("test", "--catalogue", CATALOGUE, *suite, "--format", "sarif")
    assert done.returncode == 1
    log = json.loads(done.stdout)
    sarif_model().model_validate(log)
    results = log["runs"][0]["results"]
    failed = [r for r in results if r["ruleId"] == "yupana-test/case-failed"]
    assert len(failed) == 1 and "chat, wrongly expected" in failed[0]["message"]["text"]
    where = failed[0]["locations"][0]["physicalLocation"]
    assert where["artifactLocation"]["uri"].endswith("wrong.test.toml")
    lines = WRONG.splitlines()
    assert lines[where["region"]["startLine"] - 1] == "[[case]]" and where["region"]["startLine"] > 3
    uncovered = [r for r in results if r["ruleId"] == "yupana-test/rule-uncovered"]
    assert uncovered and {r["level"] for r in uncovered} == {"note"}
    assert "http://aegis.gastown.local/ontology/rule_liveness_canary" in {r["properties"]["iri"] for r in uncovered}


def test_github_annotations_escape_names_and_survive_the_runners_parse(yupana, suite, tmp_path):
    done = yupana("test", "--catalogue", CATALOGUE, *suite, "--format", "github", cwd=tmp_path)
    assert done.returncode == 1
    lines = done.stdout.decode().splitlines()
    errors = [m for m in map(GITHUB_COMMAND.match, lines) if m and m.group(1) == "error"]
    assert len(errors) == 1
    props = dict(p.split("=", 1) for p in errors[0].group(2).split(","))
    assert props["file"] == "cases/wrong.test.toml" and WRONG.splitlines()[int(props["line"]) - 1] == "[[case]]"
    assert unescape(props["title"]) == "yupana test: chat, wrongly expected"
    assert "expected deny, the hook decided notify" in unescape(errors[0].group(3))
    notices = [m for m in map(GITHUB_COMMAND.match, lines) if m and m.group(1) == "notice"]
    assert notices and all(m for m in map(GITHUB_COMMAND.match, lines))
    passing = yupana("test", "--catalogue", CATALOGUE, suite[0], "--format", "github", "--require-coverage", cwd=tmp_path)
    assert passing.returncode == 1 and "::error title=" in passing.stdout.decode()  # uncovered rules are errors then


def test_unusable_input_is_one_github_error(yupana, tmp_path):
    bad = write(tmp_path / "bad.test.toml", '[[case]]\nname = "x"\n')
    done = yupana("test", "--catalogue", CATALOGUE, bad, "--format", "github")
    assert done.returncode == 2
    m = GITHUB_COMMAND.match(done.stdout.decode().splitlines()[0])
    assert m and m.group(1) == "error" and "`expect` is missing" in unescape(m.group(3))
