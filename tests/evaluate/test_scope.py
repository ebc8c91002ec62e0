"""Declared path scope: deny beats allow, empty allow = any, symlinks cannot carry an edit out."""

from __future__ import annotations

import pytest

from yupana import globs
from yupana.evaluate import SATISFIED, UNSATISFIED
from yupana.evaluate import scope

SCOPE = {"allow_paths": ["src/**", "tests/**"], "deny_paths": ["src/config.rs"]}


@pytest.mark.parametrize("rel,outcome", [
    ("src/graph/blast.rs", SATISFIED),
    ("tests/a.py", SATISFIED),
    ("src/config.rs", UNSATISFIED),      # deny beats allow
    ("docs/readme.md", UNSATISFIED),     # outside allow
    ("/elsewhere/src/a.rs", UNSATISFIED),  # outside the session root
])
def test_path_scope(rel: str, outcome: str):
    found = scope.check_paths("polecat-3", SCOPE, rel)
    assert found.outcome == outcome and found.id == "scope-declared:polecat-3"
    if outcome == UNSATISFIED:
        assert found.blocking and "polecat-3" in found.message and rel in found.message


def test_messages_say_what_was_exceeded():
    assert "the denied path `src/config.rs`" in scope.check_paths("t", SCOPE, "src/config.rs").message
    assert "`src/**`, `tests/**`" in scope.check_paths("t", SCOPE, "docs/x").message


def test_empty_allow_means_any_path():
    assert scope.check_paths("t", {"deny_paths": ["secrets/**"]}, "anything/at/all.rs").outcome == SATISFIED
    assert scope.check_paths("t", {}, "x").outcome == SATISFIED


def test_symlink_resolution_both_paths_must_be_in_scope():
    # src/link.rs -> secrets/key.rs: the resolved path is denied, so the edit is
    assert scope.check_paths("t", {"deny_paths": ["secrets/**"]}, "src/link.rs", "secrets/key.rs").outcome == UNSATISFIED
    assert scope.check_paths("t", {"allow_paths": ["src/**"]}, "src/link.rs", "other/key.rs").outcome == UNSATISFIED
    assert scope.check_paths("t", {"allow_paths": ["src/**"]}, "src/link.rs", "src/real.rs").outcome == SATISFIED


def test_malformed_glob_raises():
    with pytest.raises(globs.GlobError):
        scope.check_paths("t", {"allow_paths": ["src/***"]}, "src/a.rs")


def test_ceiling_armed_only_when_set():
    assert not scope.has_ceiling({"max_impacted_symbols": None, "max_impacted_files": None})
    assert scope.has_ceiling({"max_impacted_files": 0})
