"""Every payload of the corpus through the real hooks, fully armed: exit 0, and stdout empty or
exactly one JSON object — never a crash path, never partial output, never "allow"."""

from __future__ import annotations

import json
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from conftest import run_yupana
from guard_kit import text_rule, write_cache

CORPUS = Path(__file__).parent / "corpus"
sys.path.insert(0, str(CORPUS))
import make_corpus  # noqa: E402

ENDPOINT = "http://127.0.0.1:9"
ARMED = f"""
[yupana.policy]
mode = "enforce"
work_item_scope = "enforce"
[yupana.policy.scopes.polecat-3]
allow_paths = ["src/**", "tests/**", "*.md"]
deny_paths = ["src/config.rs"]
[[yupana.policy.tripwires]]
name = "hot"
paths = ["src/**"]
effect = "throttle"
backoff_secs = 60
[[yupana.policy.tripwires]]
name = "auth"
paths = ["src/auth/**"]
effect = "deny"
[yupana.quipu]
enabled = true
endpoint = "{ENDPOINT}"
dialect = "quipu"
"""


def _check(name: str, done) -> None:
    assert done.returncode == 0, (name, done.returncode, done.stderr[-500:])
    out = done.stdout.decode()
    if out:
        doc = json.loads(out)  # exactly one JSON document (json.loads refuses trailing data)
        assert isinstance(doc, dict), name
        specific = doc.get("hookSpecificOutput") or {}
        assert specific.get("permissionDecision") in (None, "deny"), name
    err = done.stderr.decode("utf-8", "replace")
    assert "Traceback" not in err and "internal error" not in err and " failed (" not in err, (name, err[-800:])


@pytest.fixture
def armed(env, tmp_path):
    env.user_config(ARMED)
    env["BOBBIN_ROLE"] = "polecat-3"
    write_cache(env, ENDPOINT, text_rules=[text_rule("no_hosts", r"\b[a-z0-9-]+\.corp\.example\b"),
                                           text_rule("todo", r"\bTODO\b", tier="warn")],
                grounded_rules=[{"iri": "urn:g", "name": "g", "label": None, "match_type": "must-not-ground",
                                 "tier": "warn", "rationale": None}],
                grounding={"ids": ["yup-1"], "prefixes": ["yup"]}, work_item_scopes={"yup-1": ["src/a.py"]},
                tripwires=[{"iri": "urn:w", "name": "gov-wire", "paths": ["**/secret*"], "effect": "deny",
                            "class": "hard", "verification_point": "PAG", "backoff": None, "message": None}])
    return env


def _payloads(tmp_path) -> dict[str, bytes]:
    cases = {name: (CORPUS / "payloads" / name).read_bytes() for name in sorted(os.listdir(CORPUS / "payloads"))}
    for path in make_corpus.write_big(str(tmp_path / "big")):
        cases[os.path.basename(path)] = Path(path).read_bytes()
    cases.update(make_corpus.tree_payloads(make_corpus.make_tree(str(tmp_path / "tree"))))
    return cases


@pytest.mark.slow
def test_every_corpus_payload_through_pre_edit_and_post_edit(armed, tmp_path):
    cases = _payloads(tmp_path)
    assert len(cases) >= 200
    jobs = [(name, event, data) for name, data in cases.items() for event in ("pre-edit", "post-edit")]

    def run(job):
        name, event, data = job
        return name, event, run_yupana(["hook", event], armed, stdin=data, timeout=120)

    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(run, jobs))
    for name, event, done in results:
        _check(f"{event}:{name}", done)
    guards = armed.records("guard")
    assert len(guards) == len(cases)  # one guard record per pre-edit invocation, whatever came in
    assert {g["result"] for g in guards} <= {"allow", "notify", "deny"}
    assert any(g["result"] == "deny" for g in guards) and any(g["parsed"] is False for g in guards)
