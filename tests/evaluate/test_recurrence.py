"""The feature-hashing embedding and the bounded denial corpus (issue 13 §1)."""

from __future__ import annotations

import os
import threading

from yupana.evaluate import recurrence
from yupana.state import denials


def test_embedding_is_deterministic_and_pinned_to_its_model_id():
    v = recurrence.embed("fn rotate_key(store: &mut KeyStore) { store.go() }")
    assert v == recurrence.embed("fn rotate_key(store: &mut KeyStore) { store.go() }")
    assert abs(recurrence.cosine(v, v) - 1.0) < 1e-3
    # golden: a change to the features that leaves MODEL_ID alone fails here — bump FEATURES with it
    assert recurrence.MODEL_ID == "yupana-fhash-v1-5d58b856"
    assert sorted(v.items())[:3] == [(130, 0.1005), (132, 0.1005), (231, -0.40202)]


def test_the_model_id_changes_whenever_a_feature_parameter_does(monkeypatch):
    base = recurrence.FEATURES
    assert base[:7] == (recurrence.VERSION, recurrence.DIMS, recurrence.NGRAM, recurrence.TOKEN_WEIGHT,
                        recurrence.NGRAM_WEIGHT, recurrence.MIN_TOKEN, recurrence.MIN_TOKENS)
    text = "fn rotate_key(store: &mut KeyStore) { store.go() }"
    before = recurrence.embed(text)
    for i, (name, value) in enumerate((("VERSION", 2), ("DIMS", 1 << 10), ("NGRAM", 4), ("TOKEN_WEIGHT", 2.0),
                                       ("NGRAM_WEIGHT", 0.25), ("MIN_TOKEN", 3), ("MIN_TOKENS", 50))):
        changed = base[:i] + (value,) + base[i + 1:]
        assert recurrence.model_id(changed) != recurrence.MODEL_ID, name
        if name != "VERSION":
            with monkeypatch.context() as m:
                m.setattr(recurrence, name, value)
                assert recurrence.embed(text) != before, name  # the parameter shapes the vector


def test_an_edit_too_small_to_compare_is_never_embedded():
    assert recurrence.embed("new") == {} and recurrence.nearest({}, []) is None


def test_vectors_under_another_model_are_never_compared():
    v = recurrence.embed("fn rotate_key(store: &mut KeyStore) { store.go() }")
    assert recurrence.nearest(v, [{"model": "other", **recurrence.packed(v), "at": 1}]) is None
    assert recurrence.nearest(v, [{"model": recurrence.MODEL_ID, **recurrence.packed(v), "at": 1}]).score > 0.99


def test_the_corpus_is_bounded_by_age_and_size_and_survives_concurrent_appends(tmp_path):
    path = str(tmp_path / "denials.jsonl")
    vec = recurrence.packed(recurrence.embed("pub fn x(a: u32) -> u32 { helper(a) } " * 20))
    denials.append(path, {"at": 1, "rule": "old", "reason": "r", "model": recurrence.MODEL_ID, **vec})

    def writer(n: int) -> None:
        for i in range(200):
            denials.append(path, {"at": 10**9 + i, "rule": f"w{n}", "reason": "r" * 900, "model": recurrence.MODEL_ID,
                                  **vec})

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    entries, mark = denials.load(path, 10**9 + 200)
    assert 0 < len(entries) <= denials.MAX_ENTRIES and all(e["rule"] != "old" for e in entries)  # age bound
    assert all(len(e["reason"]) <= denials.MAX_REASON for e in entries)
    assert os.path.getsize(path) <= denials.COMPACT_BYTES + 64 * 1024  # compacted, never unbounded
    assert mark["entries"] == len(entries)


def test_a_busy_project_never_pushes_another_projects_denials_out_of_its_window(tmp_path):
    """Issue 23 §3: the corpus is scoped by project, and so is its bound."""
    path = str(tmp_path / "denials.jsonl")
    vec = recurrence.packed(recurrence.embed("fn rotate_key(store: &mut KeyStore) { store.go() }"))
    denials.append(path, {"at": 10**9, "project": "a" * 16, "sid": None, "rule": "mine", "reason": "r",
                          "model": recurrence.MODEL_ID, **vec})
    for i in range(denials.MAX_ENTRIES + 10):
        denials.append(path, {"at": 10**9 + i, "project": "b" * 16, "sid": None, "rule": f"b{i}", "reason": "r",
                              "model": recurrence.MODEL_ID, **vec})
    mine, _ = denials.load(path, 10**9 + 400, "a" * 16)
    theirs, _ = denials.load(path, 10**9 + 400, "b" * 16)
    assert [e["rule"] for e in mine] == ["mine"] and len(theirs) == denials.MAX_ENTRIES
    assert all(e["project"] == "b" * 16 for e in theirs)
