"""The contract's "an unparseable buffer degrades to allow, never to a block" (issue 23 §7):
an edit that leaves the file unparseable — even outside the bytes it changed (a stray `}`,
an unterminated `/*`) — is the loud UNKNOWN allow with its `verify_unparseable` record, not
a verify deny; parse errors the file already had before the edit are not the edit's."""

from __future__ import annotations

import pytest
from guard_kit import Repo, hook

LIB = """pub fn base(x: u32) -> u32 {
    x + 1
}

pub fn leaf() -> u32 { 7 }

pub fn tail() -> u32 { base(3) }
"""
OLD = "pub fn leaf() -> u32 { 7 }"


@pytest.fixture
def crate(tmp_path, env):
    repo = Repo(tmp_path / "crate", env)
    repo.file("Cargo.toml", '[package]\nname = "demo"\nversion = "0.1.0"\nedition = "2021"\n')
    repo.file("src/lib.rs", LIB)
    repo.config('[yupana.policy]\nmode = "enforce"\nverify = true\ndeadline_ms = 60000\n')
    return repo


def _unparseable(env) -> list[dict]:
    return [r for r in env.records("fail_open") if r.get("fail_kind") == "verify_unparseable"]


@pytest.mark.parametrize("new", [
    "pub fn leaf() -> u32 { missing_helper(7) } }",  # a stray `}`: the error is where the file goes on
    "pub fn leaf() -> u32 { missing_helper(7) } /*",  # an unterminated comment swallows the rest
    "pub fn leaf() -> u32 { missing_helper(7) }\nfn broken( {",  # the break after what calls it
], ids=["stray-brace", "open-comment", "broken-item-after"])
def test_an_edit_that_breaks_the_file_elsewhere_is_unknown_not_denied(env, crate, new):
    result = hook(env, crate.payload(rel="src/lib.rs", old_string=OLD, new_string=new))
    assert not result.denied, result.reason
    assert "does not parse" in result.message and "UNKNOWN" in result.message
    assert {"id": "verify", "plane": "verify", "outcome": "unknown", "response": "logged"} in \
        env.records("guard")[-1]["constraints"]
    assert _unparseable(env)


def test_a_file_broken_before_the_edit_still_has_its_new_names_verified(env, crate):
    crate.file("src/lib.rs", LIB + "\nfn already_broken( {\n")
    result = hook(env, crate.payload(rel="src/lib.rs", old_string=OLD,
                                     new_string="pub fn leaf() -> u32 { missing_helper(7) }"))
    assert result.denied and "missing_helper" in result.reason
    assert not _unparseable(env)


def test_a_clean_edit_naming_an_undefined_function_is_still_denied(env, crate):
    result = hook(env, crate.payload(rel="src/lib.rs", old_string=OLD,
                                     new_string="pub fn leaf() -> u32 { missing_helper(7) }"))
    assert result.denied and "missing_helper" in result.reason
