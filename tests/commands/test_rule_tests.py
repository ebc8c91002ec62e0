"""``yupana test`` through the real CLI: case files judged by the real hooks against a candidate
catalogue (the bundled one, quipu's, a broken one), every exit code, the coverage readout."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import QUIPU_FIXTURES, REPO

CATALOGUE = str(REPO / "fixtures" / "catalogue")

# The bundled catalogue (fixtures/catalogue): what its rules do to ordinary edits and commands.
CASES = '''
[[case]]
name = "an AWS key in the public repository is refused"
tool = "Edit"
path = "src/settings.py"
old = "KEY = None"
new = "KEY = 'AKIAABCDEFGHIJKLMNOP'"
repo = "larkspur-freight"
expect = "deny"
rules = ["aegis:rule_no_aws_access_keys"]

[[case]]
name = "the same key in the internal repository is a notice"
tool = "Write"
path = "src/settings.py"
text = "KEY = 'AKIAABCDEFGHIJKLMNOP'"
repo = "larkspur-infra"
expect = "notify"
rules = ["rule_no_aws_access_keys"]

[[case]]
name = "a tracker id of no work item is refused as fabricated"
tool = "MultiEdit"
path = "src/app.py"
text = "# see FRT-1234"
expect = "deny"
rules = ["http://aegis.gastown.local/ontology/rule_no_tracker_ids", "no-work-item-ids-in-code"]
not_rules = ["rule_no_aws_access_keys"]

[[case]]
name = "a chat channel warns, in its runbooks it is allowed"
tool = "Write"
path = "docs/ops/runbooks/deploy.md"
text = "ask in #ops-deploys"
expect = "allow"
not_rules = ["rule_no_ops_channels"]

[[case]]
name = "the auth boundary is a tripwire"
tool = "apply_patch"
path = "crates/gateway/src/auth/login.rs"
text = "fn login() {}"
expect = "deny"
rules = ["auth-boundary"]

[[case]]
name = "advise turns the refusal into a notice"
tool = "Write"
path = "crates/gateway/src/auth/login.rs"
text = "fn login() {}"
mode = "advise"
expect = "notify"
rules = ["aegis:wire_auth_boundary"]

[[case]]
name = "an ordinary command"
tool = "Bash"
command = "ls -la"
expect = "allow"

[[case]]
name = "a raw Claude Code payload, from a subdirectory"
cwd = "src/deep"
expect = "notify"
rules = ["rule_no_ops_channels"]
[case.payload]
hook_event_name = "PreToolUse"
tool_name = "Write"
tool_input = { file_path = "notes.py", content = "# ask in #ops-deploys" }
'''


def write(path: Path, text: str) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return str(path)


def as_json(done) -> dict:
    assert done.stdout, done.stderr.decode()
    return json.loads(done.stdout)


def test_the_bundled_catalogue_does_what_its_cases_say(yupana, tmp_path):
    cases = write(tmp_path / "cases" / "bundled.test.toml", CASES)
    done = yupana("test", "--catalogue", CATALOGUE, cases, "--json")
    doc = as_json(done)
    failures = {c["name"]: c["failures"] for c in doc["cases"] if not c["passed"]}
    assert failures == {} and done.returncode == 0
    assert doc["schema"] == "yupana.test/1" and doc["counts"] == {"cases": 8, "passed": 8, "failed": 0}
    by_name = {c["name"]: c for c in doc["cases"]}
    assert by_name["an ordinary command"]["hook"] == "pre-bash"
    key = by_name["an AWS key in the public repository is refused"]
    assert [f["iri"] for f in key["fired"]] == ["http://aegis.gastown.local/ontology/rule_no_aws_access_keys"]
    assert doc["digest"].startswith("sha256:")


def test_a_case_that_does_not_hold_fails_with_what_the_hook_did(yupana, tmp_path):
    cases = write(tmp_path / "wrong.test.toml", '''
[[case]]
name = "a chat channel is refused"
tool = "Write"
path = "src/app.py"
text = "# ask in #ops-deploys"
expect = "deny"
rules = ["rule_no_ops_channels", "rule_no_such_rule"]
not_rules = ["no internal chat channels"]

[[case]]
name = "fine"
tool = "Write"
path = "src/app.py"
text = "x = 1"
expect = "allow"
''')
    done = yupana("test", "--catalogue", CATALOGUE, cases)
    out = done.stdout.decode()
    assert done.returncode == 1, out + done.stderr.decode()
    assert "FAIL" in out and "a chat channel is refused" in out
    assert "expected deny, the hook decided notify (rule_no_ops_channels)" in out
    assert "rule 'rule_no_such_rule' did not fire — and the catalogue has no governed rule by that name" in out
    assert "listed in not_rules" not in out  # a label is not a name
    assert "PASS" in out and "1 passed, 1 failed of 2 cases" in out


def test_a_rule_named_by_its_catalogue_name_or_label_free_name(yupana, tmp_path):
    cases = write(tmp_path / "names.test.toml", '''
[[case]]
name = "structural and grounded rules are named by their names"
tool = "Write"
path = "crates/gateway/src/auth/login.rs"
text = "fn login() {}"
expect = "deny"
rules = ["auth-boundary", "aegis:wire_auth_boundary", "wire_auth_boundary"]
''')
    done = yupana("test", "--catalogue", CATALOGUE, cases, "--json")
    assert done.returncode == 0, as_json(done)["cases"]


@pytest.mark.parametrize("text, words", [
    ('[[case]]\nname = "x"\ntool = "Edit"\npath = "a"\ntext = "b"\n', "`expect` is missing"),
    ('[[case]]\nname = "x"\ntool = "Edit"\npath = "a"\ntext = "b"\nexpect = "block"\n',
     "`expect` is 'block'; it must be one of allow, notify, deny"),
    ('[[case]]\nname = "x"\ntool = "Delete"\npath = "a"\nexpect = "allow"\n', "`tool` is 'Delete'"),
    ('[[case]]\nname = "x"\ntool = "Edit"\npath = "a"\ntext = "b"\nexpect = "allow"\nexpected = "deny"\n',
     "unknown key 'expected'"),
    ('[[case]]\nname = "x"\ntool = "Bash"\nexpect = "allow"\n', "a Bash case needs `command`"),
    ('[[case]]\nname = "x"\ntool = "Write"\npath = "a"\nold = "b"\nnew = "c"\nexpect = "allow"\n',
     "give its content as `text`"),
    ('[[case]]\nname = "x"\nexpect = "allow"\n', "give either `tool`"),
    ('[[case]]\nname = "x"\ntool = "Edit"\npath = "a"\ntext = "b"\nexpect = "allow"\nrules = [1]\n',
     "`rules` must be a list"),
    ('[[case]]\nname = "x"\ntool = "Edit"\npath = "a"\ntext = "b"\nexpect = "allow"\n'
     '[[case]]\nname = "x"\ntool = "Edit"\npath = "a"\ntext = "b"\nexpect = "allow"\n', "named twice"),
    ('[[case]]\nname = "x"\ntool = "Edit"\n path = ', "not valid TOML"),
    ('title = "cases"\n', "unknown top-level key 'title'"),
    ('', "no [[case]] tables"),
])
def test_a_case_file_that_breaks_the_format_is_unusable_input(yupana, tmp_path, text, words):
    cases = write(tmp_path / "bad.test.toml", text)
    done = yupana("test", "--catalogue", CATALOGUE, cases)
    err = done.stderr.decode()
    assert done.returncode == 2 and words in err, err
    assert "bad.test.toml" in err and not done.stdout


def test_no_cases_or_no_catalogue_is_unusable_input(yupana, env, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    assert yupana("test", "--catalogue", CATALOGUE, str(empty)).returncode == 2
    missing = yupana("test", "--catalogue", str(tmp_path / "nope.ttl"), write(tmp_path / "a.test.toml", CASES))
    assert missing.returncode == 2 and b"nope.ttl: no such catalogue file" in missing.stderr
    only_cases = yupana("test", "--catalogue", write(tmp_path / "a.test.toml", CASES))
    assert only_cases.returncode == 2 and b"--catalogue names no RDF file" in only_cases.stderr
    unconfigured = yupana("test", write(tmp_path / "a.test.toml", CASES), cwd=tmp_path)
    assert unconfigured.returncode == 2 and b"no catalogue to test" in unconfigured.stderr


@pytest.mark.parametrize("bad, words", [("COMPILE_BAD", ["pred_open", "aegis:evidenceSource", "RE2 refuses"]),
                                        ("BAD", ["wire_auth", "aegis:effect"])])
def test_a_catalogue_a_refresh_refuses_is_unusable_input_naming_subject_and_property(yupana, tmp_path, bad, words):
    from tests.commands import test_shapes

    data = write(tmp_path / "data" / "bad.ttl", getattr(test_shapes, bad))
    cases = write(tmp_path / "cases" / "a.test.toml", CASES)
    done = yupana("test", "--catalogue", data, cases, "--json")
    doc = as_json(done)
    assert done.returncode == 2 and doc["error_kind"] == "catalogue" and doc["cases"] == []
    err = done.stderr.decode()
    assert "the catalogue was refused" in err and all(w in err for w in words), err


def test_coverage_names_the_rules_no_case_made_fire_and_can_be_required(yupana, tmp_path):
    data = write(tmp_path / "one.ttl", '''
@prefix rdfs:  <http://www.w3.org/2000/01/rdf-schema#> .
@prefix aegis: <http://aegis.gastown.local/ontology/> .
aegis:InternalIdentifierPattern rdfs:subClassOf aegis:TextRule .
aegis:rule_tickets a aegis:InternalIdentifierPattern ; rdfs:label "tickets" ;
    aegis:regex "\\\\bT-[0-9]+\\\\b" ; aegis:enforcementTier "warn" .
aegis:rule_canary a aegis:InternalIdentifierPattern ; rdfs:label "canary" ;
    aegis:regex "CANARY-[0-9]+" ; aegis:enforcementTier "warn" .
''')
    cases = write(tmp_path / "c.test.toml", '''
[[case]]
name = "ticket"
tool = "Write"
path = "a.py"
text = "# T-1"
expect = "notify"
rules = ["rule_tickets"]
''')
    done = yupana("test", "--catalogue", data, cases, "--json")
    doc = as_json(done)
    assert done.returncode == 0 and doc["coverage"]["rules"] == 2 and doc["coverage"]["exercised"] == 1
    assert [u["name"] for u in doc["coverage"]["uncovered"]] == ["rule_canary"]
    required = yupana("test", "--catalogue", data, cases, "--require-coverage")
    out = required.stdout.decode()
    assert required.returncode == 1 and "not exercised: aegis:rule_canary" in out and "--require-coverage" in out
    more = write(tmp_path / "d.test.toml", '[[case]]\nname = "canary"\ntool = "Edit"\npath = "b.py"\n'
                                           'text = "CANARY-7"\nexpect = "notify"\n')
    assert yupana("test", "--catalogue", data, cases, more, "--require-coverage").returncode == 0


@pytest.mark.skipif(not (QUIPU_FIXTURES / "shapes" / "policies").is_dir(), reason="quipu fixtures absent")
def test_quipus_shipped_tree_sitter_policies_judge_the_proposed_buffer(yupana, tmp_path):
    """quipu's own catalogue: a structural rule sees the file as the edit would leave it (``old``
    is the file's content before the edit), through Claude Code's Edit and Codex's apply_patch."""
    cases = write(tmp_path / "quipu.test.toml", '''
[[case]]
name = "a ticket in a Rust comment"
tool = "Edit"
path = "src/lib.rs"
old = "fn f() {}"
new = "// fixes FRT-42\\nfn f() {}"
expect = "deny"
rules = ["aegis:policy_no_ticket_in_comment"]

[[case]]
name = "the same through apply_patch"
tool = "apply_patch"
path = "src/lib.rs"
before = "fn e() {}\\nfn f() {}"
old = "fn f() {}"
new = "// fixes FRT-42\\nfn f() {}"
expect = "deny"
rules = ["no-ticket-in-comment"]

[[case]]
name = "a plain Rust edit"
tool = "apply_patch"
path = "src/lib.rs"
old = "fn f() {}"
new = "fn g() {}"
expect = "allow"
not_rules = ["aegis:policy_no_ticket_in_comment"]
''')
    done = yupana("test", "--catalogue", str(QUIPU_FIXTURES / "shapes" / "policies"), cases, "--json")
    doc = as_json(done)
    assert done.returncode == 0, [c["failures"] for c in doc["cases"]]
    assert doc["coverage"]["exercised"] == 1 and doc["coverage"]["rules"] == 3
    assert "http://aegis.gastown.local/ontology/policy_todo_needs_ticket" in {u["iri"] for u in doc["coverage"]["uncovered"]}


def test_the_json_documents_follow_the_shipped_schema(yupana, tmp_path):
    pytest.importorskip("jsonschema")
    from tests.commands.test_json_schemas import assert_refused, check

    cases = write(tmp_path / "cases" / "a.test.toml", CASES)
    doc = check("test", yupana("test", "--catalogue", CATALOGUE, cases, "--json"))
    assert doc["passed"] is True and doc["coverage"]["uncovered"]
    assert_refused("test", {**doc, "cases": [{**doc["cases"][0], "decision": "block"}]})
    error = check("test", yupana("test", "--catalogue", CATALOGUE, write(tmp_path / "b.test.toml", "x = 1"), "--json"))
    assert error["error_kind"] == "cases" and error["exit_code"] == 2


def test_the_pre_commit_manifest_runs_the_suite_with_its_args(yupana, tmp_path):
    pytest.importorskip("pre_commit")
    import re
    import subprocess
    import sys

    import yaml  # pre-commit's own dependency

    manifest = REPO / ".pre-commit-hooks.yaml"
    check = subprocess.run([sys.executable, "-m", "pre_commit", "validate-manifest", str(manifest)],
                           capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    hook = next(h for h in yaml.safe_load(manifest.read_text()) if h["id"] == "yupana-test")
    assert hook["pass_filenames"] is False
    assert re.search(hook["files"], "catalogue/rules.ttl") and re.search(hook["files"], "tests/policy/a.test.toml")
    assert not re.search(hook["files"], "README.md")
    program, *words = hook["entry"].split()
    assert program == "yupana"
    cases = tmp_path / "tests" / "policy"
    write(cases / "a.test.toml", CASES)
    assert yupana(*words, "--catalogue", CATALOGUE, str(cases)).returncode == 0  # docs/testing.md: the args
    write(cases / "b.test.toml", '[[case]]\nname = "x"\ntool = "Write"\npath = "a.py"\ntext = "# ask #ops-x"\n'
                                 'expect = "allow"\n')
    assert yupana(*words, "--catalogue", CATALOGUE, str(cases)).returncode == 1
    assert yupana(*words).returncode == 2  # no args: no cases, said so


@pytest.mark.parametrize("keys, words", [
    ('path = "../../outside.py"\nold = "a"\nnew = "b"\n', "leaves the repository"),
    ('path = "a.py"\ntext = "b"\ncwd = "../up"\n', "`cwd` must be a directory inside the repository"),
    ('path = "a.py"\ntext = "b"\ncwd = "/etc"\n', "`cwd` must be a directory inside the repository"),
])
def test_a_case_cannot_write_outside_its_sandbox(yupana, tmp_path, keys, words):
    cases = write(tmp_path / "deep" / "er" / "x.test.toml",
                  f'[[case]]\nname = "escape"\ntool = "Edit"\nexpect = "allow"\n{keys}')
    done = yupana("test", "--catalogue", CATALOGUE, cases, cwd=tmp_path)
    assert done.returncode == 2 and words in done.stderr.decode(), done.stderr
    assert not list(tmp_path.rglob("outside.py")) and not (tmp_path / "up").exists()


def test_a_toml_date_in_a_raw_payload_is_unusable_input(yupana, tmp_path):
    cases = write(tmp_path / "d.test.toml", '[[case]]\nname = "d"\nexpect = "allow"\n[case.payload]\n'
                                            'tool_name = "Write"\nwhen = 2026-01-01\n')
    done = yupana("test", "--catalogue", CATALOGUE, cases)
    assert done.returncode == 2 and b"JSON cannot carry" in done.stderr


def test_a_stricter_shapes_directory_gates_the_catalogue(yupana, tmp_path):
    import shutil

    shapes = tmp_path / "shapes"
    shutil.copytree(REPO / "shapes", shapes)
    (shapes / "zz-strict.ttl").write_text('''
@prefix sh: <http://www.w3.org/ns/shacl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix aegis: <http://aegis.gastown.local/ontology/> .
aegis:StrictTextRuleShape a sh:NodeShape ; sh:targetClass aegis:TextRule ;
    sh:property [ sh:path rdfs:seeAlso ; sh:minCount 1 ; sh:message "every text rule links its runbook (rdfs:seeAlso)" ] .
''')
    cases = write(tmp_path / "cases" / "a.test.toml", CASES)
    assert yupana("test", "--catalogue", CATALOGUE, cases).returncode == 0
    done = yupana("test", "--catalogue", CATALOGUE, "--shapes", str(shapes), cases, "--json")
    doc = as_json(done)
    assert done.returncode == 2 and doc["error_kind"] == "catalogue"
    violations = [g for g in doc["gate"] if g["severity"] == "violation"]
    assert {g["message"] for g in violations} == {"every text rule links its runbook (rdfs:seeAlso)"}
    assert "http://aegis.gastown.local/ontology/rule_no_aws_access_keys" in {g["focus"] for g in violations}
    missing = yupana("test", "--catalogue", CATALOGUE, "--shapes", str(tmp_path / "none"), cases)
    assert missing.returncode == 2 and b"no such shapes directory" in missing.stderr


def test_a_case_gets_the_decision_the_live_hook_gives(yupana, env, tmp_path):
    """No second evaluator: the decision a case reports is the one `yupana hook pre-edit` itself
    prints for the same call under the same catalogue and mode."""
    root = tmp_path / "live"
    write(root / ".bobbin" / "config.toml", f'[yupana.quipu]\nenabled = true\nendpoint = "file:{CATALOGUE}"\n'
                                            '[yupana.policy]\nmode = "enforce"\n')
    assert yupana("project", cwd=root).returncode == 0
    calls = {"crates/gateway/src/auth/login.rs": "fn login() {}", "src/app.py": "# ask in #ops-deploys",
             "src/ok.py": "x = 1"}
    cases = "".join(f'[[case]]\nname = "{p}"\ntool = "Write"\npath = "{p}"\ntext = "{t}"\nexpect = "allow"\n\n'
                    for p, t in calls.items())
    judged = {c["name"]: c["decision"] for c in as_json(yupana("test", "--catalogue", CATALOGUE,
                                                              write(tmp_path / "l.test.toml", cases), "--json"))["cases"]}
    for path, text in calls.items():
        payload = {"session_id": f"live-{path}", "cwd": str(root), "hook_event_name": "PreToolUse",
                   "tool_name": "Write", "tool_input": {"file_path": str(root / path), "content": text}}
        out = yupana("hook", "pre-edit", stdin=json.dumps(payload), cwd=root).stdout
        said = json.loads(out) if out.strip() else {}
        live = ("deny" if (said.get("hookSpecificOutput") or {}).get("permissionDecision") == "deny"
                else "notify" if said else "allow")
        assert judged[path] == live, (path, said)
    assert set(judged.values()) == {"deny", "notify", "allow"}
