"""An edited projection.memo entry is discarded, never kept as the store's catalogue (issue 23 §5):
every kept rule and the gate's last results carry a digest, and one that fails it is read
(validated) again — through the real `yupana project`."""

from __future__ import annotations

import json
import marshal
from pathlib import Path

import pytest
from catalogue_kit import configure, write_catalogue


@pytest.fixture
def root(tmp_path) -> Path:
    root = tmp_path / "project"
    write_catalogue(root / "cat", 3)
    configure(root, "file:cat")
    return root


def _tamper(memo_path: Path, edit) -> None:
    doc = marshal.loads(memo_path.read_bytes())
    edit(doc)
    memo_path.write_bytes(marshal.dumps(doc))


def _patterns(env) -> list[str]:
    return [r["pattern"] for r in json.loads(env.cache_path.read_text())["text_rules"]]


def test_an_edited_rule_entry_fails_its_digest_and_the_rule_is_read_again(yupana, env, root):
    assert yupana("project", cwd=root).returncode == 0
    truth = _patterns(env)
    memo_path = env.cache_path.with_suffix(".memo")

    def loosen(doc: dict) -> None:  # the first rule's cached pattern made harmless, its digest left as it was
        iri = sorted(doc["rules"])[0]
        blob, digest = doc["rules"][iri]
        entry = list(marshal.loads(blob))
        entry[3] = dict(entry[3], pattern="never-matches-anything")
        doc["rules"][iri] = (marshal.dumps(tuple(entry)), digest)

    _tamper(memo_path, loosen)
    done = yupana("project", "--json", cwd=root)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["incremental"] == {"rules_kept": 2, "rules_read": 1, "full_reason": None, "memo_discarded": 1}
    assert _patterns(env) == truth and "never-matches-anything" not in env.cache_path.read_text()
    again = yupana("project", cwd=root).stdout.decode()  # the memo written then is whole again
    assert "text rules: 3 unchanged and kept, 0 read\n" in again and _patterns(env) == truth


def test_an_edited_gate_result_fails_its_digest_and_the_gate_runs_again(yupana, env, root):
    assert yupana("project", cwd=root).returncode == 0
    memo_path = env.cache_path.with_suffix(".memo")

    def forge(doc: dict) -> None:
        blob, digest = doc["gate"]
        count, triples, _results = marshal.loads(blob)
        doc["gate"] = (marshal.dumps((count, triples, (("forged",),))), digest)

    _tamper(memo_path, forge)
    report = json.loads(yupana("project", "--json", cwd=root).stdout)
    assert report["incremental"]["memo_discarded"] == 1 and report["gate"]["conforms"] is True
    assert "forged" not in json.dumps(report)
