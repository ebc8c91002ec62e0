"""``yupana replay`` over traffic a real client made (issue 24's proof): the real Claude Code CLI
(pinned, from npm), driven by a scripted fake model, runs a short session — writes, edits (one
replacing every occurrence) and commands (one after a ``cd``), some the live catalogue denies and some it allows — under a catalogue
projected from RDF files, with ``record_inputs = "full"``. That session's capture is then
replayed against a candidate that adds one rule (hitting an edit that was allowed) and retires
another (that denied an edit), and the flips are asserted through the CLI's ``--json``."""

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


@pytest.fixture
def session(tmp_path):
    """A Claude Code session under the live catalogue, its inputs captured: the case and what it did."""
    case = kit.Case(tmp_path / "host", "claude")
    subprocess.run(["git", "-C", str(case.repo), "remote", "add", "origin", ORIGIN], check=True, timeout=30)
    live = tmp_path / "live"
    shutil.copytree(CATALOGUE, live)
    case.config(config(f"file:{live}")).register()
    done = case.yupana("project")
    assert done.returncode == 0, done.stderr
    lib = case.file("src/lib.rs", "pub fn ok() {}\n")
    util = case.file("src/util.rs", "pub fn a() {}\npub fn b() {}\n")
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
    done, doc = replay(case, "--candidate", str(candidate))
    assert done.returncode == 0, done.stderr
    assert doc["error"] is None and doc["live"]["kind"] == "cache" and doc["candidate"]["kind"] == "files"
    assert doc["inputs"] == doc["judged"] == 8, doc["not_judged"]
    assert doc["counts"] == {"newly_denied": 1, "no_longer_denied": 1, "newly_notified": 0,
                             "no_longer_notified": 0}, json.dumps(doc["examples"])
    assert doc["unchanged"] == 6
    # the live side, replayed, decides every input as the hook did: the replay saw what the hook saw
    assert doc["recorded"] == {"compared": 8, "differed": 0, "examples": []}
    [newly] = doc["examples"]["newly_denied"]
    assert (newly["tool"], newly["paths"], newly["rules"]) == ("Edit", ["src/lib.rs"], [ADDED])
    assert (newly["live"], newly["candidate"], newly["client"]) == ("allow", "deny", "claude-code")
    assert doc["groups"]["newly_denied"]["rule"] == {ADDED: 1}
    [gone] = doc["examples"]["no_longer_denied"]
    assert (gone["tool"], gone["paths"], gone["rules"]) == ("Write", ["src/fabric.rs"], [RETIRED])
    assert doc["groups"]["no_longer_denied"]["rule"] == {RETIRED: 1}
    assert doc["groups"]["newly_denied"]["tenant"] == {"polecat-3": 1}
    assert doc["groups"]["newly_denied"]["repo"] == {"larkspur-freight": 1}
    assert doc["not_judged"] == {"not_captured": 0, "masked": 0, "unreadable": 0}

    done, doc = replay(case, "--candidate", str(candidate), "--fail-on-flip")
    assert done.returncode == 1 and doc["exit_code"] == 1, done.stderr
    done, doc = replay(case, "--candidate", f"{live}", "--fail-on-flip")  # the live files themselves: no flip
    assert done.returncode == 0 and doc["total"] == 0 and doc["unchanged"] == 8, json.dumps(doc["examples"])
