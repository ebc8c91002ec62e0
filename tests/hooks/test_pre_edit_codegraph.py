"""Blast-radius ceilings and the verify arm through the real hook, on a real Rust crate."""

from __future__ import annotations

import pytest
from guard_kit import Repo, hook

LIB = """pub fn base(x: u32) -> u32 {
    x + 1
}

pub fn a() -> u32 { base(1) }
pub fn b() -> u32 { base(2) + a() }
pub fn c() -> u32 { b() + a() }
pub fn leaf() -> u32 { 7 }
"""


@pytest.fixture
def crate(tmp_path, env):
    repo = Repo(tmp_path / "crate", env)
    repo.file("Cargo.toml", '[package]\nname = "demo"\nversion = "0.1.0"\nedition = "2021"\n')
    repo.file("src/lib.rs", LIB)
    return repo


def _config(mode: str = "enforce", verify: bool = False, symbols: int | None = 2) -> str:
    text = f'[yupana.policy]\nmode = "{mode}"\nverify = {str(verify).lower()}\ndeadline_ms = 60000\n'
    text += '[yupana.policy.scopes.polecat-3]\nallow_paths = ["src/**"]\n'
    if symbols is not None:
        text += f"max_impacted_symbols = {symbols}\n"
    return text


def test_edit_past_the_blast_ceiling_is_denied_with_the_numbers(env, crate):
    crate.config(_config())
    result = hook(env, crate.payload(rel="src/lib.rs", old_string="    x + 1", new_string="    x + 2"),
                  "--tenant", "polecat-3")
    assert result.denied
    assert "exceeds the blast-radius ceiling for tenant `polecat-3`" in result.reason
    assert "ceiling is 2/—" in result.reason and "tree-sitter tier" in result.reason
    blast = [c for c in env.records("guard")[-1]["constraints"] if c["id"] == "blast:polecat-3"]
    assert blast == [{"id": "blast:polecat-3", "plane": "scope", "outcome": "unsatisfied", "response": "blocked",
                      "tier": "tree-sitter"}]


def test_edit_within_the_ceiling_is_silent(env, crate):
    crate.config(_config(symbols=5))
    result = hook(env, crate.payload(rel="src/lib.rs", old_string="pub fn leaf() -> u32 { 7 }",
                                     new_string="pub fn leaf() -> u32 { 8 }"), "--tenant", "polecat-3")
    assert result.allowed_silently
    blast = [c for c in env.records("guard")[-1]["constraints"] if c["id"] == "blast:polecat-3"]
    assert blast[0]["outcome"] == "satisfied"


def test_advise_reports_the_blast_without_blocking(env, crate):
    crate.config(_config("advise"))
    result = hook(env, crate.payload(rel="src/lib.rs", old_string="    x + 1", new_string="    x + 2"),
                  "--tenant", "polecat-3")
    assert not result.denied and "blast-radius ceiling" in result.message


def test_verify_arm_denies_a_hallucinated_reference(env, crate):
    crate.config(_config(verify=True, symbols=None))
    result = hook(env, crate.payload(rel="src/lib.rs", old_string="pub fn leaf() -> u32 { 7 }",
                                     new_string="pub fn leaf() -> u32 { missing_helper(7) }"))
    assert result.denied and "buffer verification" in result.reason and "missing_helper" in result.reason
    assert env.records("guard")[-1]["rule"] == "verify"
    fine = hook(env, crate.payload(rel="src/lib.rs", old_string="pub fn leaf() -> u32 { 7 }",
                                   new_string="pub fn leaf() -> u32 { base(7) }"))
    assert fine.allowed_silently


def test_verify_without_an_anchor_has_no_opinion(env, crate):
    crate.config(_config(verify=True, symbols=None))
    result = hook(env, crate.payload(rel="src/lib.rs", old_string="fn not_there() {}",
                                     new_string="fn x() { missing_helper() }"))
    assert not result.denied
    assert {"id": "verify", "plane": "verify", "outcome": "unknown", "response": "logged"} in \
        env.records("guard")[-1]["constraints"]


@pytest.mark.parametrize("mode", ["enforce", "advise"])
def test_an_unparseable_edit_is_unknown_never_a_block(env, crate, mode):
    crate.config(_config(mode, verify=True, symbols=None))
    broken = "pub fn leaf( -> u32 {{{{ missing_helper("
    result = hook(env, crate.payload(rel="src/lib.rs", old_string="pub fn leaf() -> u32 { 7 }", new_string=broken))
    assert not result.denied
    assert "does not parse" in result.message and "UNKNOWN" in result.message
    assert {"id": "verify", "plane": "verify", "outcome": "unknown", "response": "logged"} in \
        env.records("guard")[-1]["constraints"]
    assert [r for r in env.records("fail_open") if r.get("fail_kind") == "verify_unparseable"]
    again = hook(env, crate.payload(rel="src/lib.rs", old_string="pub fn leaf() -> u32 { 7 }", new_string=broken))
    assert not again.denied and "does not parse" not in (again.message or "")  # the notice once per session
    assert len([r for r in env.records("fail_open") if r.get("fail_kind") == "verify_unparseable"]) == 2
