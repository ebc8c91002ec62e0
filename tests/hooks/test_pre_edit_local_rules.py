"""Local [[yupana.policy.rules]] through the real hook: decide and short-circuit, compile errors fail
open (`rules`), soft rules never shadow a deny, rule-conditioned tripwires with real evidence."""

from __future__ import annotations

import pytest
from guard_kit import Repo, hook

RULE = """
[[yupana.policy.rules]]
name = "no-ticket-in-comment"
language = "rust"
query = "(line_comment) @c"
match_type = "must-not-match"
pattern = "[A-Z]+-[0-9]+"
message = "Ticket ids belong in the tracker."
{extra}
"""
SCOPE = '[yupana.policy.scopes.polecat-3]\ndeny_paths = ["src/secret.rs"]\n'
WIRE = ('[[yupana.policy.tripwires]]\nname = "no-tickets-in-auth"\npaths = ["src/auth/**"]\n'
        'rule = "no-ticket-in-comment"\neffect = "deny"\n')


@pytest.fixture
def repo(tmp_path, env):
    return Repo(tmp_path / "repo", env)


def _config(mode: str, extra: str = "", rule_extra: str = "") -> str:
    return f'[yupana.policy]\nmode = "{mode}"\n' + RULE.format(extra=rule_extra) + extra


def _edit(repo, rel: str, text: str):
    return repo.payload(rel=rel, old_string="fn a() {}", new_string=text)


def test_violation_denies_under_enforce(env, repo):
    repo.config(_config("enforce"))
    result = hook(env, _edit(repo, "src/lib.rs", "// fixes ABC-12\nfn a() {}"))
    assert result.denied and "no-ticket-in-comment" in result.reason and "ABC-12" in result.reason
    assert "Ticket ids belong in the tracker" in result.reason and "tree-sitter tier" in result.reason
    assert env.records("guard")[-1]["rule"] == "no-ticket-in-comment"
    assert hook(env, _edit(repo, "src/lib.rs", "// plain comment\nfn a() {}")).allowed_silently
    assert hook(env, _edit(repo, "docs/a.md", "ABC-12 in prose")).allowed_silently  # other language


def test_advise_notifies_and_short_circuits(env, repo):
    repo.config(_config("advise", SCOPE))
    result = hook(env, _edit(repo, "src/secret.rs", "// ABC-12\nfn a() {}"), "--tenant", "polecat-3")
    assert not result.denied and "local rules" in result.message and "enforce would deny" in result.message
    # the path scope runs first (issue 9 §2) and is recorded; the local rule still short-circuits the rest
    assert [c["id"] for c in env.records("guard")[-1]["constraints"]] == ["scope-declared:polecat-3",
                                                                          "no-ticket-in-comment"]


def test_soft_rule_does_not_shadow_a_scope_deny(env, repo):
    repo.config(_config("enforce", SCOPE, rule_extra='class = "soft"'))
    result = hook(env, _edit(repo, "src/secret.rs", "// ABC-12\nfn a() {}"), "--tenant", "polecat-3")
    assert result.denied and "the denied path" in result.reason
    assert "no-ticket-in-comment" in result.out.get("systemMessage", "")


def test_rule_that_does_not_compile_fails_open_loudly(env, repo):
    repo.config(_config("enforce").replace("(line_comment) @c", "(no_such_node @c"))
    first = hook(env, _edit(repo, "src/lib.rs", "// ABC-12\nfn a() {}"))
    assert not first.denied and "no-ticket-in-comment" in first.message and "NOT enforced" in first.message
    assert hook(env, _edit(repo, "src/lib.rs", "// ABC-12\nfn a() {}")).allowed_silently
    assert [r["fail_kind"] for r in env.records("fail_open")] == ["rules", "rules"]


def test_rule_conditioned_wire_trips_only_when_the_rule_fires_inside(env, repo):
    repo.config(_config("advise", WIRE, rule_extra='class = "soft"'))
    inside = hook(env, _edit(repo, "src/auth/login.rs", "// ABC-12\nfn a() {}"))
    assert "tripwire `no-tickets-in-auth`" in inside.message and "fired inside the boundary" in inside.message
    assert env.records("tripwire")[-1]["name"] == "no-tickets-in-auth"
    clean = hook(env, _edit(repo, "src/auth/login.rs", "// fine\nfn a() {}"))
    assert clean.allowed_silently
    outside = hook(env, _edit(repo, "src/core.rs", "// ABC-12\nfn a() {}"))
    assert "tripwire" not in outside.message and "no-ticket-in-comment" in outside.message
    repo.config(_config("enforce", WIRE, rule_extra='class = "soft"'))
    denied = hook(env, _edit(repo, "src/auth/login.rs", "// ABC-12\nfn a() {}"))
    assert denied.denied and "no-tickets-in-auth" in denied.reason  # the same rule advises elsewhere, denies here
