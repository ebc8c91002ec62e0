"""Declared capability scope through the real hook, per mode; tenant resolution; malformed globs."""

from __future__ import annotations

import os

import pytest
from guard_kit import Repo, hook

SCOPE = """
[yupana.policy.scopes.polecat-3]
allow_paths = ["src/**", "tests/**"]
deny_paths = ["src/config.rs"]
"""


@pytest.fixture
def repo(tmp_path, env):
    return Repo(tmp_path / "repo", env)


def _mode(mode: str) -> str:
    return f'[yupana.policy]\nmode = "{mode}"\n' + SCOPE


@pytest.mark.parametrize("rel,denied", [("src/config.rs", True), ("docs/guide.md", True), ("src/ok.rs", False),
                                        ("tests/x_test.rs", False)])
def test_enforce(env, repo, rel, denied):
    repo.config(_mode("enforce"))
    result = hook(env, repo.payload(rel=rel), "--tenant", "polecat-3")
    assert result.denied is denied
    assert result.allowed_silently is (not denied)
    guard = env.records("guard")[-1]
    assert guard["result"] == ("deny" if denied else "allow")
    if denied:
        assert guard["rule"] == "scope-declared:polecat-3"
        assert guard["constraints"][0]["response"] == "blocked"


def test_advise_reports_what_enforce_would_deny_and_never_blocks(env, repo):
    repo.config(_mode("advise"))
    result = hook(env, repo.payload(rel="src/config.rs"), "--tenant", "polecat-3")
    assert set(result.out) == {"systemMessage"}
    assert "enforce would deny" in result.message and "src/config.rs" in result.message
    guard = env.records("guard")[-1]
    assert guard["result"] == "notify" and guard["constraints"][0]["response"] == "warned"


def test_off_is_inert(env, repo):
    repo.config(_mode("off"))
    assert hook(env, repo.payload(rel="src/config.rs"), "--tenant", "polecat-3").allowed_silently


def test_tenant_from_bobbin_role_and_flag_wins(env, repo):
    repo.config(_mode("enforce") + '[yupana.policy.scopes.wide]\nallow_paths = ["**"]\n')
    env["BOBBIN_ROLE"] = "polecat-3"
    assert hook(env, repo.payload(rel="docs/a.md")).denied
    assert hook(env, repo.payload(rel="docs/a.md"), "--tenant", "wide").allowed_silently


def test_tenant_without_scope_is_unconstrained(env, repo):
    repo.config(_mode("enforce"))
    assert hook(env, repo.payload(rel="docs/a.md"), "--tenant", "nobody").allowed_silently
    assert hook(env, repo.payload(rel="docs/a.md")).allowed_silently


def test_pure_deletion_and_write_are_checked_by_path(env, repo):
    repo.config(_mode("enforce"))
    deletion = repo.payload(rel="src/config.rs", old_string="let a = 1;", new_string="")
    assert hook(env, deletion, "--tenant", "polecat-3").denied
    write = repo.payload("Write", rel="src/config.rs", content="x")
    assert hook(env, write, "--tenant", "polecat-3").denied
    multi = repo.payload("MultiEdit", rel="docs/x.md", edits=[{"old_string": "a", "new_string": "b"}])
    assert hook(env, multi, "--tenant", "polecat-3").denied
    notebook = repo.payload("NotebookEdit", rel="notebooks/a.ipynb", new_source="print(1)")
    assert hook(env, notebook, "--tenant", "polecat-3").denied


def test_relative_and_outside_paths(env, repo, tmp_path):
    repo.config(_mode("enforce"))
    relative = repo.payload(rel=None, file_path="src/config.rs")
    assert hook(env, relative, "--tenant", "polecat-3").denied
    outside = repo.payload(rel=None, file_path=str(tmp_path / "elsewhere" / "src" / "a.rs"))
    result = hook(env, outside, "--tenant", "polecat-3")
    assert result.denied and "outside the capability scope" in result.reason


def test_symlink_cannot_carry_an_edit_out_of_scope(env, repo):
    repo.config(_mode("enforce"))
    repo.file("src/config.rs", "secret = 1\n")
    os.symlink(repo.root / "src" / "config.rs", repo.root / "src" / "alias.rs")
    result = hook(env, repo.payload(rel="src/alias.rs"), "--tenant", "polecat-3")
    assert result.denied


def test_malformed_glob_fails_open_loudly_once_per_session(env, repo):
    repo.config('[yupana.policy]\nmode = "enforce"\n[yupana.policy.scopes.polecat-3]\nallow_paths = ["src/***"]\n')
    first = hook(env, repo.payload(rel="docs/a.md"), "--tenant", "polecat-3")
    assert not first.denied and "malformed glob" in first.message and "NOT enforced" in first.message
    second = hook(env, repo.payload(rel="docs/a.md"), "--tenant", "polecat-3")
    assert second.allowed_silently and "malformed glob" in second.stderr
    assert [r["fail_kind"] for r in env.records("fail_open")] == ["globs", "globs"]
    assert env.records("guard")[-1]["constraints"][0]["outcome"] == "unknown"


def test_blast_ceiling_unmeasurable_file_is_unknown_not_clean(env, repo):
    repo.config(_mode("enforce") + "max_impacted_symbols = 5\nmax_impacted_files = 2\n")
    result = hook(env, repo.payload(rel="src/notes.txt"), "--tenant", "polecat-3")
    assert not result.denied
    assert "UNMEASURED" in result.message
    blast = [c for c in env.records("guard")[-1]["constraints"] if c["id"] == "blast:polecat-3"]
    assert blast and blast[0]["outcome"] == "unknown"
    again = hook(env, repo.payload(rel="src/notes.txt"), "--tenant", "polecat-3")
    assert again.allowed_silently  # once per session per kind and file
