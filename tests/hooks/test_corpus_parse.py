"""The payload reader over the whole corpus: it never raises, and says what it could not read."""

from __future__ import annotations

import os
import sys

import pytest

from yupana.edit.payload import Invocation, git_top, parse, proposed_buffer, repo_name

CORPUS = os.path.join(os.path.dirname(__file__), "corpus")
sys.path.insert(0, CORPUS)
import make_corpus  # noqa: E402

PAYLOADS = os.path.join(CORPUS, "payloads")
NAMES = sorted(os.listdir(PAYLOADS)) if os.path.isdir(PAYLOADS) else []


def _exercise(raw: bytes) -> Invocation | None:
    """Everything a hook would do with a payload on the read side."""
    inv = parse(raw)
    if inv is None:
        return None
    assert isinstance(inv, Invocation)
    assert all(isinstance(p, str) and p for p in inv.problems)
    assert isinstance(inv.cwd, str) and os.path.isabs(inv.cwd)
    for edit in inv.edits:
        assert os.path.isabs(edit.path) and os.path.isabs(edit.real_path)
        assert edit.outside == os.path.isabs(edit.rel)
        assert isinstance(edit.introduced, str)
        buffer = proposed_buffer(edit)
        assert buffer is None or isinstance(buffer, str)
        if buffer is None:
            assert edit.problems  # never None without saying why
        top = git_top(edit.path)
        if top is not None:
            repo_name(top)
    return inv


def test_corpus_is_large_enough_and_reproducible():
    assert len(NAMES) >= 200
    assert make_corpus.main(["--check"]) == 0, "run tests/hooks/corpus/make_corpus.py and commit payloads/"


@pytest.mark.parametrize("name", NAMES)
def test_parse_never_raises(name: str):
    with open(os.path.join(PAYLOADS, name), "rb") as fh:
        raw = fh.read()
    inv = _exercise(raw)
    if name.endswith(".json"):
        assert inv is not None  # every JSON object payload is read, however malformed inside


def test_every_tool_family_is_in_the_corpus():
    tools = set()
    for name in NAMES:
        with open(os.path.join(PAYLOADS, name), "rb") as fh:
            inv = parse(fh.read())
        if inv is not None:
            tools.add(inv.tool_name)
            tools |= {e.op for e in inv.edits}
    assert {"Edit", "Write", "MultiEdit", "NotebookEdit", "Bash", "apply_patch", "Read"} <= tools
    assert {"edit", "write", "multi_edit", "notebook", "add", "delete", "update", "move"} <= tools


def test_ten_megabyte_payloads(tmp_path):
    for path in make_corpus.write_big(str(tmp_path)):
        assert os.path.getsize(path) > make_corpus.BIG_CONTENT_BYTES
        with open(path, "rb") as fh:
            inv = _exercise(fh.read())
        assert inv is not None and inv.problems == []
        (edit,) = inv.edits
        assert len(edit.introduced) >= make_corpus.BIG_CONTENT_BYTES


def test_payloads_through_real_symlinks(tmp_path):
    tree = make_corpus.make_tree(str(tmp_path))
    results = {name: _exercise(raw) for name, raw in make_corpus.tree_payloads(tree).items()}
    (through,) = results["edit-through-dir-link"].edits
    assert through.rel == "src/linked/secret.txt" and not through.outside
    assert through.real_path == os.path.join(tree["outside"], "secret.txt")
    assert os.path.isabs(through.real_rel)  # outside the real repo
    assert proposed_buffer(through) == "token = 2\n"
    (aliased,) = results["write-symlinked-cwd"].edits
    assert aliased.rel == aliased.real_rel == "src/a.py"
    assert repo_name(git_top(aliased.path)) == "corpus"
    patch = results["patch-through-links"]
    assert [e.op for e in patch.edits] == ["update", "move", "add", "delete"]
    assert proposed_buffer(patch.edits[1]) == "token = 9\n"
