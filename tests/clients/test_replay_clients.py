"""``yupana replay`` over traffic a real client made (issue 24's proof). The real Claude Code and
Codex CLIs (pinned, from npm), driven by a scripted fake model, each run a short session — writes,
edits and patches, commands (one after a ``cd``), some the live catalogue denies and some it
allows — under a catalogue projected from RDF files, with ``record_inputs = "full"``. The
session's capture is then replayed against a candidate that adds one rule (hitting an edit that
was allowed) and retires another (that denied an edit), and the flips are asserted through the
CLI's ``--json``: exactly those two, each naming its rule; the rest unchanged; the live side
reproducing every recorded decision; ``--fail-on-flip`` exiting 1."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import kit
import pytest

pytestmark = pytest.mark.clients

CATALOGUE = Path(__file__).resolve().parents[2] / "fixtures" / "catalogue"
ORIGIN = "https://forge.example/larkspur/larkspur-freight.git"  # public in the catalogue: block-tier rules block
ADDED = "rule_no_staging_urls"
RETIRED = "rule_no_private_addresses"
STAGING_RULE = '''
aegis:rule_no_staging_urls a aegis:InternalIdentifierPattern ;
    rdfs:label "no staging URLs" ;
    aegis:regex "https://staging\\\\.larkspur\\\\.example" ;
    aegis:enforcementTier "block" ;
    aegis:identifierClass "hostname" ;
    rdfs:comment "Staging moves; link the service registry." .
'''


def config(endpoint: str) -> str:
    return (f'[yupana.policy]\nmode = "enforce"\n[yupana.metrics]\nrecord_inputs = "full"\n'
            f'[yupana.quipu]\nenabled = true\nendpoint = "{endpoint}"\n')


def candidate_of(live: Path, into: Path) -> Path:
    """The change under review: ``RETIRED`` removed from the text rules, ``ADDED`` (block) added."""
    shutil.copytree(live, into)
    rules = into / "text-rules.ttl"
    text = rules.read_text()
    start, end = text.index(f"aegis:{RETIRED} a"), text.index("aegis:rule_no_tracker_ids a")
    rules.write_text(text[:start] + text[end:] + STAGING_RULE)
    return into


def replay(case: kit.Case, *args: str) -> tuple[subprocess.CompletedProcess, dict]:
    done = case.yupana("replay", *args, "--json")
    doc = json.loads(done.stdout)
    jsonschema = pytest.importorskip("jsonschema")
    from yupana.commands.json_output import schema_path

    jsonschema.Draft202012Validator(json.loads(Path(schema_path("replay")).read_text())).validate(doc)
    return done, doc


def assert_flips(case: kit.Case, candidate: Path, *, inputs: int, newly: tuple[str, list[str]],
                 gone: tuple[str, list[str]], client: str) -> None:
    """Replayed against ``candidate``: exactly the ``newly`` call (tool, paths) is newly denied by
    ``ADDED``, exactly the ``gone`` one no longer denied by ``RETIRED``; the rest unchanged, and the
    live side reproduces every recorded decision."""
    done, doc = replay(case, "--candidate", str(candidate))
    assert done.returncode == 0, done.stderr
    assert doc["error"] is None and doc["live"]["kind"] == "cache" and doc["candidate"]["kind"] == "files"
    assert doc["inputs"] == doc["judged"] == inputs, doc["not_judged"]
    assert doc["counts"] == {"newly_denied": 1, "no_longer_denied": 1, "newly_notified": 0,
                             "no_longer_notified": 0}, json.dumps(doc["examples"])
    assert doc["unchanged"] == inputs - 2
    # the live side, replayed, decides every input as the hook did: the replay saw what the hook saw
    assert doc["recorded"] == {"compared": inputs, "differed": 0, "examples": []}
    [ex] = doc["examples"]["newly_denied"]
    assert (ex["tool"], ex["paths"], ex["rules"]) == (*newly, [ADDED])
    assert (ex["live"], ex["candidate"], ex["client"]) == ("allow", "deny", client)
    [ex] = doc["examples"]["no_longer_denied"]
    assert (ex["tool"], ex["paths"], ex["rules"]) == (*gone, [RETIRED])
    assert (ex["live"], ex["candidate"]) == ("deny", "allow")
    for kind, rule in (("newly_denied", ADDED), ("no_longer_denied", RETIRED)):
        groups = doc["groups"][kind]
        assert (groups["rule"], groups["client"]) == ({rule: 1}, {client: 1})
        assert (groups["tenant"], groups["repo"]) == ({"polecat-3": 1}, {"larkspur-freight": 1})
    assert doc["not_judged"] == {"not_captured": 0, "masked": 0, "unreadable": 0}


def assert_fail_on_flip(case: kit.Case, candidate: Path, live: Path, *, inputs: int) -> None:
    done, doc = replay(case, "--candidate", str(candidate), "--fail-on-flip")
    assert done.returncode == 1 and doc["exit_code"] == 1, done.stderr
    done, doc = replay(case, "--candidate", str(live), "--fail-on-flip")  # the live files themselves: no flip
    assert done.returncode == 0 and doc["total"] == 0 and doc["unchanged"] == inputs, json.dumps(doc["examples"])


def host(tmp_path: Path, client: str) -> tuple[kit.Case, Path]:
    """A repository of the public larkspur-freight, governed by the live catalogue (RDF files,
    projected by a real ``yupana project``), capturing its inputs in full; two files to edit."""
    case = kit.Case(tmp_path / "host", client)
    subprocess.run(["git", "-C", str(case.repo), "remote", "add", "origin", ORIGIN], check=True, timeout=30)
    live = tmp_path / "live"
    shutil.copytree(CATALOGUE, live)
    case.config(config(f"file:{live}")).register()
    done = case.yupana("project")
    assert done.returncode == 0, done.stderr
    case.file("src/lib.rs", "pub fn ok() {}\n")
    case.file("src/util.rs", "pub fn a() {}\npub fn b() {}\n")
    return case, live


@pytest.fixture
def session(tmp_path):
    """A Claude Code session under the live catalogue, its inputs captured: the case and what it did."""
    case, live = host(tmp_path, "claude")
    lib, util = case.repo / "src" / "lib.rs", case.repo / "src" / "util.rs"
    r = case.repo
    turns = [
        [{"tool": "Write", "input": {"file_path": str(r / "src" / "net.rs"),
                                     "content": 'pub const DB: &str = "db1.corp.larkspur.example";\n'}}],
        [{"tool": "Write", "input": {"file_path": str(r / "src" / "fabric.rs"),
                                     "content": 'pub const GATEWAY: &str = "10.41.0.1";\n'}}],
        [{"tool": "Read", "input": {"file_path": str(lib)}}],
        [{"tool": "Edit", "input": {"file_path": str(lib), "old_string": "pub fn ok() {}",
                                    "new_string": 'pub const DOCS: &str = "https://staging.larkspur.example/docs";'}}],
        [{"tool": "Read", "input": {"file_path": str(util)}}],
        [{"tool": "Edit", "input": {"file_path": str(util), "old_string": "{}", "new_string": "{ todo!() }",
                                    "replace_all": True}}],
        [{"tool": "Write", "input": {"file_path": str(r / "secrets" / "prod.env"), "content": "REGION=eu\n"}}],
        [{"tool": "Bash", "input": {"command": "ls src", "description": "list the sources"}}],
        [{"tool": "Bash", "input": {"command": "cd src", "description": "go to the sources"}}],
        # the client keeps the cd: from src, `..` is the project, and with it the guard's configuration
        [{"tool": "Bash", "input": {"command": "rm -rf ..", "description": "clean up"}}],
    ]
    run = case.run(turns, mode="bypassPermissions")
    return case, run, live


def test_a_recorded_claude_code_session_replayed_against_a_candidate_flips_exactly_the_changed_rules(session, tmp_path):
    case, run, live = session
    r = case.repo
    # the live session: denied, denied, allowed, allowed, denied, allowed — as the client saw it
    assert not (r / "src" / "net.rs").exists() and not (r / "src" / "fabric.rs").exists()
    assert "staging.larkspur.example" in (r / "src" / "lib.rs").read_text()
    assert not (r / "secrets" / "prod.env").exists() and (r / ".bobbin" / "config.toml").exists()
    guard = [(g["tool"], g["result"]) for g in case.records("guard")]
    assert guard == [("Write", "deny"), ("Write", "deny"), ("Edit", "allow"), ("Edit", "allow"),
                     ("Write", "deny")], run
    captured = [json.loads(line) for line in (case.state / "yupana" / "inputs.jsonl").read_text().splitlines()]
    assert [(c["tool"], c["decision"]) for c in captured] == [
        ("Write", "deny"), ("Write", "deny"), ("Edit", "allow"), ("Edit", "allow"), ("Write", "deny"),
        ("Bash", "allow"), ("Bash", "allow"), ("Bash", "deny")], captured
    assert captured[-1]["cwd"] == "src" and "cwd" not in captured[-2]  # where each command ran

    candidate = candidate_of(live, tmp_path / "candidate")
    assert_flips(case, candidate, inputs=8, newly=("Edit", ["src/lib.rs"]), gone=("Write", ["src/fabric.rs"]),
                 client="claude-code")
    assert_fail_on_flip(case, candidate, live, inputs=8)


def patch(*ops: str) -> list:
    return [{"custom": "apply_patch", "input": "*** Begin Patch\n" + "".join(ops) + "*** End Patch\n"}]


def test_a_recorded_codex_session_of_patches_replayed_against_a_candidate_flips_exactly_the_changed_rules(tmp_path):
    """Codex started in ``src``: its patches name files relative to that directory, one patch
    spans two files, and a command runs there; the capture keeps paths relative to the project."""
    case, live = host(tmp_path, "codex")
    src = case.repo / "src"
    turns = [
        patch('*** Add File: net.rs\n+pub const DB: &str = "db1.corp.larkspur.example";\n'),
        patch('*** Add File: fabric.rs\n+pub const GATEWAY: &str = "10.41.0.1";\n'),
        patch('*** Update File: lib.rs\n@@\n-pub fn ok() {}\n'
              '+pub const DOCS: &str = "https://staging.larkspur.example/docs";\n'),
        patch("*** Add File: a.rs\n+pub fn c() {}\n", "*** Update File: util.rs\n@@\n-pub fn a() {}\n+pub fn a() -> u8 { 1 }\n"),
        patch("*** Add File: keys/server.pem\n+not a key\n"),
        [{"function": "exec_command", "arguments": {"cmd": "ls"}}],
    ]
    run = case.run(turns, cwd=src)
    assert not (src / "net.rs").exists() and not (src / "fabric.rs").exists() and not (src / "keys").exists()
    assert "staging.larkspur.example" in (src / "lib.rs").read_text() and (src / "a.rs").exists(), run
    captured = [json.loads(line) for line in (case.state / "yupana" / "inputs.jsonl").read_text().splitlines()]
    assert [(c["tool"], c["decision"], [e["path"] for e in c.get("edits", [])]) for c in captured] == [
        ("apply_patch", "deny", ["src/net.rs"]), ("apply_patch", "deny", ["src/fabric.rs"]),
        ("apply_patch", "allow", ["src/lib.rs"]), ("apply_patch", "allow", ["src/a.rs", "src/util.rs"]),
        ("apply_patch", "deny", ["src/keys/server.pem"]), ("Bash", "allow", [])], captured
    assert captured[-1]["cwd"] == "src" and captured[-1]["client"] == "codex"

    candidate = candidate_of(live, tmp_path / "candidate")
    assert_flips(case, candidate, inputs=6, newly=("apply_patch", ["src/lib.rs"]),
                 gone=("apply_patch", ["src/fabric.rs"]), client="codex")
    assert_fail_on_flip(case, candidate, live, inputs=6)
