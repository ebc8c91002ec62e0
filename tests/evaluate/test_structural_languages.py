"""The bundled catalogue's Python, TypeScript, TSX and Go structural policies through the real
CLI: each fires on a matching edit and stays quiet on a non-matching one (issue 13 §5)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from conftest import REPO, Env, run_yupana

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "hooks"))
from guard_kit import Repo

CATALOGUE = REPO / "fixtures" / "catalogue"


@pytest.fixture(scope="module")
def projected(tmp_path_factory):
    base = tmp_path_factory.mktemp("langs")
    env = Env(base / "env")
    repo = Repo(base / "repo", env).config(
        f'[yupana.policy]\nmode = "enforce"\n[yupana.quipu]\nenabled = true\nendpoint = "file:{CATALOGUE}"\n')
    done = run_yupana(["project"], env, cwd=repo.root, timeout=300)
    assert done.returncode == 0, done.stderr.decode()[-800:]
    return env, repo


def verdict(env: Env, repo: Repo, rel: str, text: str) -> dict:
    payload = repo.payload(rel=rel, new_string=text)
    done = run_yupana(["explain", "--json"], env, stdin=json.dumps(payload).encode(), cwd=repo.root)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    report = json.loads(done.stdout)
    fired = [f["id"] for s in report["stages"] for f in s.get("findings", ()) if f.get("outcome") == "unsatisfied"]
    return {"decision": report["decision"], "fired": fired, "stdout": report["stdout"]}


CASES = [
    # (policy, path, violating text, clean text, decision when it fires)
    ("no-bare-except", "tools/sync.py", "try:\n    go()\nexcept:\n    pass\n",
     "try:\n    go()\nexcept ValueError:\n    pass\n", "deny"),
    ("no-print-in-library-code", "tools/larkspur/feed.py", "def f():\n    print('x')\n",
     "def f():\n    log.info('x')\n", "notify"),
    ("no-console-debugging", "web/src/app.ts", "export function f() { console.log('x'); }\n",
     "export function f() { logger.info('x'); }\n", "notify"),
    ("no-dangerously-set-inner-html", "web/src/View.tsx",
     "export const V = () => <div dangerouslySetInnerHTML={{__html: h}} />;\n",
     "export const V = () => <div className=\"v\" />;\n", None),
    ("no-panic-in-services", "services/billing/internal/run.go",
     "package run\n\nfunc Run() {\n\tpanic(\"boom\")\n}\n",
     "package run\n\nfunc Run() error {\n\treturn fail(\"boom\")\n}\n", "deny"),
]


@pytest.mark.parametrize("policy,rel,bad,good,decision", CASES, ids=[c[0] for c in CASES])
def test_each_bundled_non_rust_policy_fires_on_a_matching_edit_only(projected, policy, rel, bad, good, decision):
    env, repo = projected
    hit = verdict(env, repo, rel, bad)
    assert policy in hit["fired"], hit
    if decision is not None:
        assert hit["decision"] == decision, hit
    if decision == "deny":
        assert policy in hit["stdout"]
    miss = verdict(env, repo, rel, good)
    assert policy not in miss["fired"], miss
    assert miss["decision"] == "allow", miss


def test_a_policy_of_one_language_never_fires_on_another(projected):
    env, repo = projected
    # Go's panic() in a Python file under the Go policy's scope: the Python grammar, not Go's.
    hit = verdict(env, repo, "services/billing/internal/run.py", "panic('boom')\n")
    assert "no-panic-in-services" not in hit["fired"], hit


INERT = """@prefix rdfs:  <http://www.w3.org/2000/01/rdf-schema#> .
@prefix aegis: <http://aegis.gastown.local/ontology/> .

aegis:sel_cobol_paragraphs a aegis:Selector ;
    aegis:name "cobol-paragraphs" ;
    aegis:evidenceSource "(paragraph) @p" ;
    aegis:language "cobol" ;
    aegis:tier "tree-sitter" .

aegis:pred_no_goto a aegis:Predicate ;
    aegis:name "no-goto" ;
    aegis:evidenceSource "GO TO" ;
    aegis:matchType "must-not-match" ;
    aegis:tier "tree-sitter" .

aegis:policy_no_goto a aegis:Policy ;
    rdfs:label "no-goto-in-cobol" ;
    aegis:targets "CodeModule" ;
    aegis:claim "no COBOL paragraph jumps with GO TO" ;
    aegis:boundary "action" ;
    aegis:selector aegis:sel_cobol_paragraphs ;
    aegis:predicate aegis:pred_no_goto ;
    aegis:effect "deny" ;
    aegis:constraintClass "hard" ;
    aegis:verificationPoint "PAG" .
"""


def test_a_policy_for_a_language_with_no_grammar_is_shown_inert_in_dump_status_and_explain(tmp_path):
    import shutil

    store = tmp_path / "store"
    shutil.copytree(CATALOGUE, store)
    (store / "cobol.ttl").write_text(INERT)
    env = Env(tmp_path / "env")
    repo = Repo(tmp_path / "repo", env).config(
        f'[yupana.policy]\nmode = "enforce"\n[yupana.quipu]\nenabled = true\nendpoint = "file:{store}"\n')
    done = run_yupana(["project"], env, cwd=repo.root, timeout=300)
    assert done.returncode == 0, done.stderr.decode()[-800:]

    table = run_yupana(["project", "--dump"], env, cwd=repo.root).stdout.decode()
    [row] = [line for line in table.splitlines() if line.strip().startswith("no-goto-in-cobol")]
    assert "cobol INERT" in row
    assert "1 INERT: no grammar for their language" in table
    # the languages this build parses are not marked
    assert not [line for line in table.splitlines() if line.strip().startswith("no-bare-except") and "INERT" in line]
    dumped = json.loads(run_yupana(["project", "--dump", "--format", "json"], env, cwd=repo.root).stdout)
    assert [p["name"] for p in dumped["inert_policies"]] == ["no-goto-in-cobol"]

    status = run_yupana(["status"], env, cwd=repo.root).stdout.decode()
    assert "1 structural policy never fire" in status and "no-goto-in-cobol (cobol)" in status

    payload = repo.payload(rel="src/lib.rs", new_string="fn f() {}\n")
    done = run_yupana(["explain"], env, stdin=json.dumps(payload).encode(), cwd=repo.root)
    assert "INERT structural policy no-goto-in-cobol (cobol)" in done.stdout.decode(), done.stdout.decode()

