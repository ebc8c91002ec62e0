"""Where each client shows what yupana says (issue 11 §4), proven on what the fake model was sent.

* Codex shows a ``systemMessage`` to nobody in ``codex exec``: every notice must reach the
  model as ``additionalContext`` (a developer message), on every hook.
* ``[yupana.policy] advise_audience`` puts advisories in front of the model on both clients
  (default ``operator``: Claude Code's pane only).
* A deny reason reads with one period before Codex's ``. Command: <patch>`` suffix.
"""

from __future__ import annotations

import kit
import pytest
from model_text_kit import forbidden

pytestmark = pytest.mark.clients

ADVISE = """[yupana.policy]
mode = "advise"
{audience}
[yupana.policy.scopes.polecat-3]
deny_paths = ["secrets/**"]
"""
ENFORCE = """[yupana.policy]
mode = "enforce"

[yupana.policy.scopes.polecat-3]
deny_paths = ["secrets/**"]
"""
ADVISORY = "advise: enforce would deny"


def advise(audience: str | None) -> str:
    return ADVISE.format(audience=f'advise_audience = "{audience}"' if audience else "")


def _yupana_notes(texts: list[str], needle: str) -> list[str]:
    return [t for t in texts if needle in t]


# ── Codex: every notice through additionalContext ─────────────────────────────────────


def test_codex_every_notice_of_pre_edit_and_pre_bash_reaches_the_model(tmp_path):
    """One session: an advise-run advisory (pre-edit) and a fail-open notice (pre-bash, once per
    session, each failing call still on record) are developer messages; neither exists
    anywhere else in ``codex exec``."""
    case = kit.Case(tmp_path, "codex")
    case.config('[yupana.policy]\nmode = "advise"\naction_scope = "advise"\n'
                '[yupana.policy.scopes.polecat-3]\ndeny_paths = ["secrets/**"]\ndeny_targets = ["host:prod-***"]\n')
    case.register()
    turns = [kit.patch("*** Begin Patch\n*** Add File: secrets/new.env\n+K=1\n*** End Patch\n")[0],
             kit.shell("ssh prod-db.example.com uptime")[0], kit.shell("ssh prod-db.example.com id")[0]]
    run = case.run(turns)
    assert (case.repo / "secrets" / "new.env").read_text() == "K=1\n"  # advise never blocks
    assert case.ssh_calls() == ["prod-db.example.com uptime", "prod-db.example.com id"]  # failed open: both ran
    developer = run.model_messages("developer")
    advisories = _yupana_notes(developer, ADVISORY)
    assert len(advisories) == 1 and "the denied path `secrets/**`" in advisories[0], developer
    # the fail-open notice reaches the model in its model form only (issue 22 §3): the glob, the key
    # and "NOT enforced" are the operator's (stderr, the spool)
    assert _yupana_notes(developer, "malformed target glob") == [] and _yupana_notes(developer, "NOT enforced") == []
    notices = _yupana_notes(developer, "could not be fully checked against policy")
    assert len(notices) == 1, developer  # once per session
    assert all(forbidden(t) == [] for t in _yupana_notes(developer, "yupana")), developer
    assert [(r["fail_kind"], r["hook"]) for r in case.records("fail_open")] == [("globs", "pre-bash")] * 2


def test_codex_a_deny_reason_reads_with_one_period_before_the_command(tmp_path):
    case = kit.Case(tmp_path, "codex")
    case.config(ENFORCE).register()
    run = case.run(kit.patch("*** Begin Patch\n*** Add File: secrets/new.env\n+K=1\n*** End Patch\n"))
    assert not (case.repo / "secrets" / "new.env").exists()
    [result] = run.tool_results()
    assert "request a wider capability scope. Command: " in result and ".." not in result.split("Command:")[0]


# ── Claude Code: advise_audience ───────────────────────────────────────────────────────


def _claude_advise_run(base, audience: str | None):
    case = kit.Case(base, "claude")
    case.config(advise(audience)).register()
    target = case.repo / "secrets" / "prod.env"
    run = case.run(kit.write(str(target), "API_KEY=1\n"), mode="bypassPermissions")
    assert target.read_text() == "API_KEY=1\n"  # advise never blocks
    assert run.tool_results()[0].startswith("File created successfully")
    assert [g["result"] for g in case.records("guard")] == ["notify"]
    in_pane = bool([e for e in run.system_events() if ADVISORY in str(e)])
    return in_pane, ADVISORY in run.model_text(), run


@pytest.mark.parametrize("audience,pane", [("model", False), ("both", True)])
def test_claude_advise_audience_puts_the_advisory_in_front_of_the_model(tmp_path, audience, pane):
    # the default (operator): the pane shows it, the model is never sent it (the contract's advise run)
    assert _claude_advise_run(tmp_path / "default", None)[:2] == (True, False)
    in_pane, to_model, run = _claude_advise_run(tmp_path / audience, audience)
    assert (in_pane, to_model) == (pane, True), run.system_events()
    assert "the denied path `secrets/**`" in run.model_text()


def test_claude_a_deny_reason_ends_without_a_doubled_period(tmp_path):
    case = kit.Case(tmp_path, "claude")
    case.config(ENFORCE).register()
    target = case.repo / "secrets" / "prod.env"
    run = case.run(kit.write(str(target), "API_KEY=1\n"), mode="bypassPermissions")
    assert not target.exists()
    [result] = run.tool_results()
    assert result.startswith("PreToolUse:Write hook error: yupana: edit to secrets/prod.env")
    assert result.rstrip().endswith("request a wider capability scope")
