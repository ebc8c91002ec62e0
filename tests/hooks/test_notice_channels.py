"""Which channel each notice takes, per client and advise_audience (issue 11 §4), through the real CLI.

tests/clients proves the same under the real Claude Code and Codex; these run everywhere.
"""

from __future__ import annotations


import pytest
from guard_kit import Repo, hook

SCOPE = '[yupana.policy]\nmode = "{mode}"\n{extra}\n[yupana.policy.scopes.t]\ndeny_paths = ["secrets/**"]\n'
BROKEN_WIRE = '\n[[yupana.policy.tripwires]]\nname = "broken"\npaths = ["src/***"]\neffect = "deny"\n'


@pytest.fixture
def repo(tmp_path, env):
    return Repo(tmp_path / "repo", env)


def claude(repo: Repo, rel: str) -> dict:
    return dict(repo.payload("Write", rel, content="x\n"), prompt_id="p1")


def codex(repo: Repo, rel: str) -> dict:
    return dict(repo.patch(f"*** Begin Patch\n*** Add File: {rel}\n+x\n*** End Patch\n"), turn_id="t1")


@pytest.mark.parametrize("audience,pane,model", [("operator", True, False), ("model", False, True),
                                                 ("both", True, True)])
def test_claude_advisories_go_where_advise_audience_says(env, repo, audience, pane, model):
    repo.config(SCOPE.format(mode="advise", extra=f'advise_audience = "{audience}"'))
    result = hook(env, claude(repo, "secrets/a.env"), "--tenant", "t")
    assert ("enforce would deny" in result.message) is pane
    assert ("enforce would deny" in result.context) is model


def test_claude_operator_notices_stay_operator_only_whatever_the_audience(env, repo):
    repo.config(SCOPE.format(mode="enforce", extra='advise_audience = "model"') + BROKEN_WIRE)
    result = hook(env, claude(repo, "docs/a.md"), "--tenant", "t")
    assert "misconfigured" in result.message and "misconfigured" not in result.context


def test_codex_a_notice_beside_a_deny_reaches_the_model_too_in_its_model_form(env, repo):
    from yupana.hooks.protocol import MODEL_NOTICE

    repo.config(SCOPE.format(mode="enforce", extra="") + BROKEN_WIRE)
    result = hook(env, codex(repo, "secrets/a.env"), "--tenant", "t")
    assert result.denied and "misconfigured" in result.message and MODEL_NOTICE in result.context
    assert "misconfigured" not in result.context  # the operator's diagnostics never reach the model (issue 22 §3)


def test_codex_pre_bash_notices_reach_the_model(env, repo):
    repo.config('[yupana.policy]\nmode = "enforce"\naction_scope = "enforce"\n'
                '[yupana.policy.scopes.t]\ndeny_targets = ["host:prod-***"]\n')
    payload = {"session_id": "s", "turn_id": "t1", "cwd": str(repo.root), "hook_event_name": "PreToolUse",
               "tool_name": "Bash", "tool_input": {"command": "ssh prod-db uptime"}}
    env["BOBBIN_ROLE"] = "t"
    result = hook(env, payload, event="pre-bash")
    assert "malformed target glob" in result.message and "malformed target glob" not in result.context
    assert "could not be fully checked" in result.context
    claude_payload = dict(payload, session_id="s2", prompt_id="p")
    del claude_payload["turn_id"]
    result = hook(env, claude_payload, event="pre-bash")
    assert "malformed target glob" in result.message and result.context == ""


@pytest.mark.parametrize("client", [claude, codex])
def test_a_deny_reason_ends_without_a_period(env, repo, client):
    repo.config(SCOPE.format(mode="enforce", extra=""))
    result = hook(env, client(repo, "secrets/a.env"), "--tenant", "t")
    assert result.denied and result.reason.endswith("or request a wider capability scope")


def test_an_unknown_audience_is_a_config_error_named(env, repo, yupana):
    repo.config(SCOPE.format(mode="advise", extra='advise_audience = "agent"'))
    done = yupana("config", "check", "--json", cwd=repo.root)
    assert done.returncode != 0 and "advise_audience" in done.stdout.decode() + done.stderr.decode()
