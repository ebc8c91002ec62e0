"""Structural policies with quipu's real catalogue (shapes/policies/treesitter.ttl) on real Rust comments.

The catalogue is projected through the real projection (embedded store), exactly as a refresh
would write it into the cache; the introduced texts are real comments from syn 1.0.107.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.codegraph.conftest import DATA, file_edit
from tests.conftest import QUIPU_FIXTURES
from yupana.state import cache
from yupana.evaluate import SATISFIED, UNKNOWN, UNSATISFIED, structural

POLICIES_TTL = QUIPU_FIXTURES / "shapes" / "policies" / "treesitter.ttl"
LIT = (DATA / "syn" / "lit.rs").read_text()
DATA_RS = (DATA / "syn" / "data.rs").read_text()
# Real comments: a doc comment naming "UTF-8" (the ticket pattern matches it) and a TODO without a ticket.
UTF8_DOC = next(line for line in LIT.splitlines() if "/// A UTF-8 string literal" in line)
TODO = next(line for line in DATA_RS.splitlines() if "// TODO" in line)


@pytest.fixture(scope="module")
def quipu_policies(tmp_path_factory) -> list[dict]:
    if not POLICIES_TTL.exists():
        pytest.skip(f"{POLICIES_TTL} absent")
    from yupana import config
    from yupana.endpoint import open_endpoint
    from yupana.endpoint.base import Deadline
    from yupana.projection.refresh import project

    quipu = dict(config.resolve(str(tmp_path_factory.mktemp("cfg")), None)["config"]["quipu"])
    quipu["endpoint"] = f"file:{POLICIES_TTL}"
    projected = project(open_endpoint(quipu), quipu, Deadline(30.0)).cache
    return cache.derive_hot(projected)["policies"]


def _edit(tmp_path, rel: str, text: str):
    (tmp_path / ".git").mkdir(exist_ok=True)
    return file_edit(tmp_path, rel, content=text)


def _by_id(findings) -> dict:
    return {f.id: f for f in findings}


def test_catalogue_as_projected(quipu_policies):
    names = {p["rule"]["name"]: p for p in quipu_policies}
    assert set(names) == {"no-ticket-in-comment", "todo-needs-ticket"}
    assert names["no-ticket-in-comment"]["rule"]["query"] == "(line_comment) @c"
    assert names["todo-needs-ticket"]["rule"]["verification_point"] == "PAA"


def test_hard_rule_denies_a_ticket_like_token_in_a_real_doc_comment(quipu_policies, tmp_path):
    found = _by_id(structural.evaluate(quipu_policies, _edit(tmp_path, "src/lit.rs", UTF8_DOC + "\n"), "enforce"))
    ticket = found["no-ticket-in-comment"]
    assert ticket.outcome == UNSATISFIED and ticket.blocking and ticket.class_ == "hard"
    assert "UTF-8" in ticket.message and "must-not-match" in ticket.message and "src/lit.rs" in ticket.message
    assert ticket.source.endswith("policy_no_ticket_in_comment") and ticket.extra["tier"] == "tree-sitter"
    assert "todo-needs-ticket" not in found  # PAA: never evaluated at the pre-edit gate


def test_comment_without_ticket_satisfies_it(quipu_policies, tmp_path):
    found = _by_id(structural.evaluate(quipu_policies, _edit(tmp_path, "src/data.rs", TODO + "\n"), "enforce"))
    assert found["no-ticket-in-comment"].outcome == SATISFIED


def test_only_introduced_text_and_only_comments_are_captured(quipu_policies, tmp_path):
    code = 'let s = "ABC-123"; // plain comment\n'  # the token is in a string, not a comment
    found = _by_id(structural.evaluate(quipu_policies, _edit(tmp_path, "src/x.rs", code), "enforce"))
    assert found["no-ticket-in-comment"].outcome == SATISFIED


def test_todo_gate_and_ticket_pattern_as_a_local_pag_rule(quipu_policies, tmp_path):
    todo_rule = dict(next(p for p in quipu_policies if p["rule"]["name"] == "todo-needs-ticket")["rule"])
    todo_rule.update(verification_point=None, **{"class": None})
    local = [{"rule": todo_rule, "effect": "deny", "iri": None}]  # how the hook wraps a local rule
    untracked = structural.evaluate(local, _edit(tmp_path, "src/data.rs", TODO + "\n" + UTF8_DOC + "\n"), "enforce")
    (finding,) = untracked
    assert finding.outcome == UNSATISFIED and finding.blocking  # no class: effect deny blocks
    assert finding.extra["captures"] == 1  # the gate kept only the TODO comment
    assert "TODO" in finding.message and "must-match" in finding.message
    tracked = TODO.replace("TODO:", "TODO(SYN-1069):")
    (ok,) = structural.evaluate(local, _edit(tmp_path, "src/data.rs", tracked + "\n"), "enforce")
    assert ok.outcome == SATISFIED


def test_language_gate(quipu_policies, tmp_path):
    assert structural.evaluate(quipu_policies, _edit(tmp_path, "docs/notes.py", "# ABC-123\n"), "enforce") == []
    python_rule = dict(quipu_policies[0], rule=dict(quipu_policies[0]["rule"], language="python"))
    python_rule.pop("_applies_to", None)
    assert structural.evaluate([python_rule], _edit(tmp_path, "src/x.rs", "// ABC-123\n"), "enforce") == []


def test_applies_to_globs(quipu_policies, tmp_path):
    base = quipu_policies[0]
    scoped = dict(base, rule=dict(base["rule"], applies_to=["src/**"]))
    scoped = cache.derive_hot({"policies": [scoped]})["policies"][0]
    assert scoped["_applies_to"]
    assert structural.evaluate([scoped], _edit(tmp_path, "src/a/b.rs", "// ABC-1\n"), "enforce")[0].outcome == UNSATISFIED
    assert structural.evaluate([scoped], _edit(tmp_path, "tests/b.rs", "// ABC-1\n"), "enforce") == []
    local = {"rule": dict(base["rule"], applies_to=["tests/*"]), "effect": "deny", "iri": None}
    assert structural.evaluate([local], _edit(tmp_path, "tests/deep/b.rs", "// ABC-1\n"), "enforce")[0].outcome == UNSATISFIED


def test_must_exist(tmp_path):
    rule = {"name": "lib-has-pub-fn", "language": "rust", "query": "(function_item) @f", "match_type": "must-exist",
            "pattern": r"^pub ", "applies_to": [], "class": "soft"}
    policy = {"rule": rule, "effect": "warn", "iri": "urn:x"}
    (missing,) = structural.evaluate([policy], _edit(tmp_path, "src/lib.rs", "fn private() {}\n"), "enforce")
    assert missing.outcome == UNSATISFIED and not missing.blocking  # soft never blocks
    (present,) = structural.evaluate([policy], _edit(tmp_path, "src/lib.rs", "pub fn open() {}\n"), "enforce")
    assert present.outcome == SATISFIED


def test_rules_that_do_not_compile_fail_open_by_name_and_others_still_run(quipu_policies, tmp_path):
    base = quipu_policies[0]
    bad_query = {"rule": dict(base["rule"], name="bad-query", query="(line_comment @c"), "effect": "deny", "iri": None}
    bad_node = {"rule": dict(base["rule"], name="bad-node", query="(no_such_node) @c"), "effect": "deny", "iri": None}
    bad_regex = {"rule": dict(base["rule"], name="bad-regex", pattern="(?=lookahead)"), "effect": "deny", "iri": None}
    bad_glob = dict(base, rule=dict(base["rule"], name="bad-glob"), _applies_to=None)
    found = _by_id(structural.evaluate([bad_query, bad_node, bad_regex, bad_glob, base],
                                       _edit(tmp_path, "src/x.rs", "// ABC-12\n"), "enforce"))
    for name in ("bad-query", "bad-node", "bad-regex", "bad-glob"):
        assert found[name].outcome == UNKNOWN and name in found[name].extra["error"], found[name].extra
    assert "does not compile" in found["bad-query"].extra["error"]
    assert found["no-ticket-in-comment"].outcome == UNSATISFIED


def test_mode_off_and_nothing_introduced(quipu_policies, tmp_path):
    assert structural.evaluate(quipu_policies, _edit(tmp_path, "src/x.rs", "// ABC-1\n"), "off") == []
    assert [f.outcome for f in structural.evaluate(quipu_policies, _edit(tmp_path, "src/x.rs", ""), "enforce")] == []


def test_tree_sitter_is_loaded_only_for_a_language_a_rule_targets(tmp_path):
    """A .rs edit with only a python rule, and a .py edit with a rust rule, load no grammar."""
    (tmp_path / ".git").mkdir()
    script = (
        "import json, sys\n"
        "from yupana.edit import payload\n"
        "from yupana.evaluate import structural\n"
        "rule = {'name': 'r', 'language': sys.argv[1], 'query': '(line_comment) @c', 'match_type': 'must-not-match',"
        " 'pattern': 'x', 'applies_to': []}\n"
        "inv = payload.parse(json.dumps({'cwd': sys.argv[3], 'tool_name': 'Write', 'tool_input':"
        " {'file_path': sys.argv[2], 'content': '// x'}}).encode())\n"
        "structural.evaluate([{'rule': rule, 'effect': 'deny'}], inv.edits[0], 'enforce')\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('tree_sitter'))))\n")
    for lang, path in (("python", "src/a.rs"), ("rust", "src/a.py")):
        out = subprocess.run([sys.executable, "-c", script, lang, str(tmp_path / path), str(tmp_path)],
                             capture_output=True, text=True, check=True)
        assert json.loads(out.stdout) == []
    out = subprocess.run([sys.executable, "-c", script, "rust", str(tmp_path / "src/a.rs"), str(tmp_path)],
                         capture_output=True, text=True, check=True)
    assert "tree_sitter_rust._binding" in json.loads(out.stdout)
