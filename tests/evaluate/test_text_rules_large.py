"""A 100 KB write against ~220 real secret rules (issue 25 §2): decisions do not change.

The catalogue is gitleaks' default rules converted into aegis text rules
(benchmarks/gitleaks_catalogue.py), projected by the real ``yupana project``. The text is real
code with seven secrets planted (benchmarks/large_write.py). Held: every planted secret is
found, by the rule made for it, through the hot twin's index exactly as by running every rule
on the whole text; the index's one-pass literal set finds what searching each literal finds;
the real hook names every planted secret and cuts nothing."""

from __future__ import annotations

import json
import os
import sys
import time

import pytest

from yupana.evaluate import text_rules
from yupana.state import cache

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "benchmarks"))
import gitleaks_catalogue  # noqa: E402
import large_write  # noqa: E402

sys.path.pop(0)


@pytest.fixture
def project(env, yupana, tmp_path):
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    (root / ".bobbin").mkdir()
    (root / ".bobbin" / "config.toml").write_text(
        '[yupana.policy]\nmode = "enforce"\n\n[yupana.quipu]\nenabled = true\n'
        f'endpoint = "file:{large_write.CATALOGUE}"\n')
    done = yupana("project", cwd=root)
    assert done.returncode == 0, done.stderr.decode()
    return root


def _rules(env):
    served, miss = cache.read(str(env.cache_path))
    assert served is not None, miss
    return served.get("text_rules")


def _exposure():
    return "public", None, "acme/widgets"


def test_the_catalogue_is_what_the_converter_writes():
    text, skipped, written = gitleaks_catalogue.render()
    with open(gitleaks_catalogue.OUT, encoding="utf-8") as fh:
        assert fh.read() == text
    assert written >= 210 and len(skipped) < 10  # ~220 real rules, the few aegis cannot say listed


def test_every_planted_secret_is_found_through_the_index_as_by_every_rule(env, project):
    rules = _rules(env)
    assert len(rules) >= 210
    text = large_write.planted_text()
    assert len(text) >= 99_000
    far = time.monotonic() + 3600  # the hook's windowed path, never cut
    got = text_rules.evaluate(rules, text, "src/app.py", _exposure, deadline_at=far)
    bare = [{k: v for k, v in r.items() if not k.startswith("_")} for r in rules.all()]  # no prefilter, no index
    want = text_rules.evaluate(bare, text, "src/app.py", _exposure)
    assert [(f.id, f.message) for f in got] == [(f.id, f.message) for f in want]
    fired = {(f.id, f.extra.get("match")) for f in got if f.outcome != "unknown"}
    for rule, line in large_write.PLANTED:
        assert any(rid == "gitleaks_" + rule.replace("-", "_") and match and match in line + "'''"
                   for rid, match in fired), (rule, sorted(fired))
    assert not [f for f in got if f.outcome == "unknown"]


def test_the_literal_set_finds_what_searching_each_literal_finds(env, project):
    index = _rules(env).index
    text = large_write.planted_text()
    hays = {"c": text, "f": text.casefold()}
    hays.update({ns: text for ns in index.meta["namespaces"] if ns not in hays})
    assert index.literal_set(hays, None) == index.scan(hays, None)
    assert index.literal_set(hays, None)  # the planted keywords are there: not vacuous


def test_the_real_hook_names_every_planted_secret_in_a_100_kb_write(env, yupana, project):
    text = large_write.planted_text()
    payload = {"session_id": "s", "transcript_path": "/tmp/t.jsonl", "cwd": str(project), "permission_mode": "default",
               "hook_event_name": "PreToolUse", "tool_name": "Write", "tool_use_id": "toolu_1",
               "tool_input": {"file_path": str(project / "src" / "app.py"), "content": text}}
    done = yupana("hook", "pre-edit", stdin=json.dumps(payload), cwd=project)
    assert done.returncode == 0
    said = done.stdout.decode() + done.stderr.decode()
    for rule, _ in large_write.PLANTED:
        assert f"text rule `{rule}`" in said, rule
    assert "not evaluated before the deadline" not in said
