"""Local tripwires through the real hook: effects, ambient mode ceiling, throttles, broken wires."""

from __future__ import annotations

import json

import pytest
from guard_kit import Repo, hook

WIRES = """
[[yupana.policy.tripwires]]
name = "auth-boundary"
paths = ["src/auth/**"]
effect = "deny"
message = "auth changes need the security workflow"

[[yupana.policy.tripwires]]
name = "hot-file"
paths = ["src/core.rs", "src/auth/session.rs"]
effect = "throttle"
backoff_secs = 300

[[yupana.policy.tripwires]]
name = "docs-watch"
paths = ["docs/**"]
effect = "warn"
"""


@pytest.fixture
def repo(tmp_path, env):
    return Repo(tmp_path / "repo", env)


def _mode(mode: str, extra: str = WIRES) -> str:
    return f'[yupana.policy]\nmode = "{mode}"\n' + extra


def test_deny_wire_blocks_under_enforce_with_its_message(env, repo):
    repo.config(_mode("enforce"))
    result = hook(env, repo.payload(rel="src/auth/login.rs"))
    assert result.denied
    assert "tripwire `auth-boundary`" in result.reason and "security workflow" in result.reason
    [trip] = env.records("tripwire")
    assert trip == {**trip, "name": "auth-boundary", "effect": "deny", "source": "local", "result": "deny"}
    constraint = env.records("guard")[-1]["constraints"][0]
    assert constraint == {"id": "tripwire:auth-boundary", "plane": "tripwire", "outcome": "unsatisfied",
                          "response": "blocked", "verification_point": "PAG", "tier": "tree-sitter",
                          "freshness": "fresh"}
    assert env.records("guard")[-1]["policy_freshness"] == "fresh"


def test_deny_wire_advises_under_advise_and_is_inert_when_off(env, repo):
    repo.config(_mode("advise"))
    result = hook(env, repo.payload(rel="src/auth/login.rs"))
    assert not result.denied and "enforce would deny" in result.message
    repo.config(_mode("off"))
    assert hook(env, repo.payload(rel="src/auth/login.rs")).allowed_silently
    assert len(env.records("tripwire")) == 1


def test_a_pure_deletion_crosses_a_path_wire(env, repo):
    repo.config(_mode("enforce"))
    assert hook(env, repo.payload(rel="src/auth/x.rs", old_string="fn a() {}", new_string="")).denied


def test_warn_wire_notifies_and_never_blocks(env, repo):
    repo.config(_mode("enforce"))
    result = hook(env, repo.payload(rel="docs/guide.md"))
    assert not result.denied and "tripwire `docs-watch`" in result.message


def test_throttle_records_a_backoff_that_the_next_edits_surface(env, repo):
    repo.config(_mode("enforce"))
    first = hook(env, repo.payload(rel="src/core.rs"))
    assert not first.denied and "tripwire `hot-file`" in first.message and "back-off active" not in first.message
    [throttle] = env.records("throttle")
    assert throttle["constraint_id"] == "tripwire:hot-file" and throttle["backoff_secs"] == 300
    assert throttle["scope"] == str(repo.root)
    lines = [json.loads(line) for line in (env.state / "yupana" / "throttles.jsonl").read_text().splitlines()]
    assert lines[0]["scope"] == str(repo.root) and lines[0]["until"] - throttle["ts"] in (299, 300, 301)
    later = hook(env, repo.payload(rel="src/unrelated.rs"))
    assert "back-off active" in later.message and "tripwire:hot-file" in later.message
    assert env.records("guard")[-1]["throttled"] == 1


def test_throttle_is_recorded_even_when_a_sibling_wire_denies(env, repo):
    repo.config(_mode("enforce"))
    result = hook(env, repo.payload(rel="src/auth/session.rs"))
    assert result.denied
    assert "auth-boundary" in result.reason and "hot-file" in result.reason  # one decision, both wires
    assert [r["constraint_id"] for r in env.records("throttle")] == ["tripwire:hot-file"]
    ids = [c["id"] for c in env.records("guard")[-1]["constraints"]]
    assert ids == ["tripwire:auth-boundary", "tripwire:hot-file"]
    assert env.records("guard")[-1]["rule"] == "tripwire:auth-boundary+tripwire:hot-file"
    # the back-off advisory is never folded onto a deny
    again = hook(env, repo.payload(rel="src/auth/session.rs"))
    assert again.denied and "back-off active" not in json.dumps(again.out)


def test_throttle_advisory_has_no_mode_gate(env, repo):
    repo.config(_mode("enforce"))
    hook(env, repo.payload(rel="src/core.rs"))
    repo.config(_mode("off"))
    assert "back-off active" in hook(env, repo.payload(rel="src/other.rs")).message


def test_misconfigured_wires_fail_open_loudly_each_named_once_per_session(env, repo):
    broken = WIRES + """
[[yupana.policy.tripwires]]
name = "bad-glob"
paths = ["src/***"]
effect = "deny"

[[yupana.policy.tripwires]]
name = "ghost-rule"
paths = ["src/**"]
rule = "no-such-rule"
effect = "deny"

[[yupana.policy.tripwires]]
name = "lazy-throttle"
paths = ["src/**"]
effect = "throttle"

[[yupana.policy.tripwires]]
name = "nowhere"
effect = "warn"
"""
    repo.config(_mode("enforce", broken))
    first = hook(env, repo.payload(rel="src/plain.rs"))
    assert not first.denied
    for name in ("bad-glob", "ghost-rule", "lazy-throttle", "nowhere"):
        assert f"`{name}`" in first.message and f"`{name}`" in first.stderr
    assert "NOT enforced" in first.message
    assert {r["fail_kind"] for r in env.records("fail_open")} == {"tripwires"}
    assert sorted(r["entry"].split("`")[1] for r in env.records("fail_open")) == [
        "bad-glob", "ghost-rule", "lazy-throttle", "nowhere"]
    second = hook(env, repo.payload(rel="src/plain.rs"))
    assert second.allowed_silently  # named once per session
    # the well-formed wires are still enforced
    assert hook(env, repo.payload(rel="src/auth/a.rs")).denied


def test_rule_conditioned_wire_without_evidence_does_not_trip(env, repo):
    wires = """
[[yupana.policy.rules]]
name = "no-ticket-in-comment"
language = "rust"
query = "(line_comment) @c"
match_type = "must-not-match"
pattern = "[A-Z]+-[0-9]+"

[[yupana.policy.tripwires]]
name = "no-tickets-in-auth"
paths = ["src/auth/**"]
rule = "no-ticket-in-comment"
effect = "deny"
"""
    repo.config(_mode("enforce", wires))
    result = hook(env, repo.payload(rel="src/auth/a.rs", old_string="fn a() {}", new_string=""))
    assert not result.denied
    constraint = [c for c in env.records("guard")[-1]["constraints"] if c["id"] == "tripwire:no-tickets-in-auth"]
    assert constraint and constraint[0]["outcome"] == "unknown"
