"""yupana's hooks under the real Gemini CLI (pinned, from npm), driven by a scripted fake Gemini API.

Each case asserts on the file system, on yupana's own records and on what the model was sent
(the ``functionResponse`` of the next request).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import gemini_kit as gk
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "hooks"))
from conftest import Env
from guard_kit import write_cache

pytestmark = pytest.mark.clients

SCOPE = """[yupana.policy]
mode = "enforce"
action_scope = "{action_scope}"

[yupana.policy.scopes.polecat-3]
deny_paths = ["secrets/**"]
deny_targets = ["host:prod-*"]
"""


@pytest.fixture
def case(tmp_path):
    return gk.GeminiCase(tmp_path)


TRIPWIRE = """[yupana.policy]
mode = "enforce"

[[yupana.policy.tripwires]]
name = "auth-boundary"
paths = ["src/auth/**"]
effect = "deny"
message = "auth code is owned by the security team"
"""


def scope(action_scope: str = "enforce") -> str:
    return SCOPE.format(action_scope=action_scope)


# ── denies hold, and the model is told why ───────────────────────────────────────────────────


@pytest.mark.parametrize("mode", ["yolo", "auto_edit"])
def test_a_deny_paths_write_is_denied_and_the_model_is_sent_the_reason(case, mode):
    case.config(scope()).register()
    target = case.repo / "secrets" / "prod.env"
    run = case.run(gk.write_file(str(target), "API_KEY=1\n"), mode=mode)
    assert not target.exists()
    [result] = run.tool_results()
    assert result.startswith("Tool execution blocked: yupana: edit to secrets/prod.env is outside the capability")
    assert "the denied path `secrets/**`" in result
    [guard] = case.records("guard")
    assert (guard["result"], guard["rule"], guard["client"]) == ("deny", "scope-declared:polecat-3", "gemini")


def test_a_tripwire_replace_of_an_existing_file_is_denied_and_the_file_keeps_its_content(case):
    case.config(TRIPWIRE).register()
    target = case.file("src/auth/login.rs", "fn login() {}\n")
    run = case.run(gk.replace(str(target), "fn login() {}", "fn login() { bypass() }"))
    assert target.read_text() == "fn login() {}\n"
    [result] = run.tool_results()
    assert result.startswith("Tool execution blocked: yupana:") and "auth-boundary" in result
    assert [g["result"] for g in case.records("guard")] == ["deny"]


def test_an_unrelated_edit_lands_exactly_as_with_no_hook(tmp_path):
    seen = {}
    for hooked in (True, False):
        case = gk.GeminiCase(tmp_path / ("hooked" if hooked else "bare")).config(scope())
        if hooked:
            case.register()
        target = case.file("src/lib.rs", "pub fn old() {}\n")
        run = case.run(gk.replace(str(target), "old", "ok"))
        seen[hooked] = ([r.replace(str(case.repo), "<repo>") for r in run.tool_results()], target.read_text(),
                        [e.get("status") for e in run.tool_events()])
        if hooked:
            assert [(g["result"], g["client"]) for g in case.records("guard")] == [("allow", "gemini")]
            assert [p["client"] for p in case.records("post_edit_invoked")] == ["gemini"]
        else:
            assert case.records() == []
    assert seen[True] == seen[False]
    assert seen[True][1] == "pub fn ok() {}\n" and seen[True][2] == ["success"]


def test_control_a_claude_shaped_deny_is_an_allow_in_gemini(case):
    """Why Gemini needs its own adapter: it never reads permissionDecision."""
    claude = ('{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", '
              '"permissionDecisionReason": "no"}}')
    case.config(scope()).register({"pre-edit": f"printf '%s' '{claude}'"})
    target = case.repo / "secrets" / "prod.env"
    case.run(gk.write_file(str(target), "API_KEY=1\n"))
    assert target.read_text() == "API_KEY=1\n"


def test_pre_bash_denies_a_resolved_prod_host_and_lets_an_echo_of_it_run(case):
    case.config(scope()).register()
    run = case.run(gk.shell("ssh prod-db.example.com uptime"))
    assert case.ssh_calls() == []
    [result] = run.tool_results()
    assert result.startswith("Tool execution blocked: yupana: this command would act on host `prod-db.example.com`")
    assert "the denied target `host:prod-*`" in result
    assert [(r["result"], r["target"]) for r in case.records("action_scope")] == [("deny", "prod-db.example.com")]
    assert [r["client"] for r in case.records("pre_bash_invoked")] == ["gemini"]

    run = case.run(gk.shell('echo "ssh prod-db.example.com uptime"'))
    assert case.ssh_calls() == []
    assert "ssh prod-db.example.com uptime" in run.tool_results()[0]
    assert "blocked" not in run.tool_results()[0]


def test_control_the_same_ssh_runs_when_the_scope_does_not_deny_it(case):
    case.config(scope(action_scope="off")).register()
    run = case.run(gk.shell("ssh prod-db.example.com uptime"))
    assert case.ssh_calls() == ["prod-db.example.com uptime"]
    assert "fake-ssh-ran" in run.tool_results()[0]


def test_post_edit_tells_the_model_in_the_after_tool_result_when_an_edit_left_its_ground(case):
    """AfterTool's additionalContext is Gemini's one channel to the model besides a deny."""
    endpoint = "http://127.0.0.1:9"
    write_cache(Env(case.base), endpoint, work_item_scopes={"yup-1": ["src/a.rs"], "yup-3": ["src/z.rs"]},
                work_item_status={"yup-3": "closed"})
    case.config(f'[yupana.policy]\nmode = "advise"\nwork_item_scope = "advise"\n'
                f'[yupana.quipu]\nenabled = true\nendpoint = "{endpoint}"\ndialect = "quipu"\n').register()
    crew = case.base / "shanty" / "crew" / "agent-7"
    crew.mkdir(parents=True)
    (crew / "plate.json").write_text(json.dumps({"item": "yup-1", "at": int(time.time()), "session": None}))
    case.extra_env = {"SHANTY_ROOT": str(case.base / "shanty"), "SHANTY_AGENT": "agent-7"}
    target = case.file("src/z.rs", "fn z() {}\n")
    run = case.run(gk.replace(str(target), "fn z() {}", "fn z() { 1 }"))
    assert target.read_text() == "fn z() { 1 }\n"
    [result] = run.tool_results()
    assert "<hook_context>yupana:" in result and "outside the observed ground of work item `yup-1`" in result
    assert "`yup-3` (closed)" in result
    assert [p["client"] for p in case.records("post_edit_invoked")] == ["gemini"]


def test_claude_codes_timeout_of_5_is_5_ms_in_gemini_every_deny_is_cut_and_status_says_so(case):
    """What `gemini hooks migrate --from-claude` produces: the hook is cut before it answers."""
    case.config(scope()).register(timeout=5)
    target = case.repo / "secrets" / "prod.env"
    run = case.run(gk.write_file(str(target), "API_KEY=1\n"))
    assert target.read_text() == "API_KEY=1\n"
    assert "Hook timed out after 5ms" in run.stderr
    done = case.yupana("status", "--json", "--offline")
    gemini = json.loads(done.stdout)["clients"]["gemini"]
    assert done.returncode == 3
    assert any("milliseconds" in p["problem"] and p["degraded"] for p in gemini["problems"])


def test_the_agent_cannot_switch_geminis_hooks_off(case):
    """Gemini's settings and folder trust are controls: neither its edit tool nor its shell may change them."""
    case.config(scope()).register(where="project")
    settings = case.project_settings
    before = settings.read_text()
    run = case.run(gk.write_file(str(settings), '{"hooksConfig": {"enabled": false}}'))
    assert settings.read_text() == before and run.tool_results()[0].startswith("Tool execution blocked: yupana: refused")
    trusted = case.home / ".gemini" / "trustedFolders.json"
    run = case.run(gk.shell(f"echo '{{\"{case.repo}\": \"DO_NOT_TRUST\"}}' > {trusted}"))
    assert not trusted.exists() and run.tool_results()[0].startswith("Tool execution blocked: yupana: refused")


# ── notices ──────────────────────────────────────────────────────────────────────────────────


def test_a_fail_open_notice_is_shown_to_the_user_once_per_session_and_never_to_the_model(case):
    case.config('[yupana.policy]\nmode = "enforce"\n[yupana.policy.scopes.polecat-3]\nallow_paths = ["src/***"]\n')
    case.register()
    turns = [gk.write_file(str(case.repo / "docs" / "a.md"), "a\n")[0],
             gk.write_file(str(case.repo / "docs" / "b.md"), "b\n")[0]]
    run = case.run(turns)
    assert (case.repo / "docs" / "a.md").exists() and (case.repo / "docs" / "b.md").exists()
    assert run.stderr.count("malformed glob") == 1, run.stderr
    assert [r["fail_kind"] for r in case.records("fail_open")] == ["globs", "globs"]
    assert "malformed glob" not in run.model_text()


@pytest.mark.parametrize("audience", ["operator", "model"])
def test_an_advise_run_tells_the_user_what_enforce_would_deny_whatever_the_audience(case, audience):
    """BeforeTool has no channel to the model but the deny reason: an advisory meant for the model
    reaches the user (never dropped), and the model sees an ordinary success."""
    case.config(f'[yupana.policy]\nmode = "advise"\nadvise_audience = "{audience}"\n'
                '[yupana.policy.scopes.polecat-3]\ndeny_paths = ["secrets/**"]\n').register()
    target = case.repo / "secrets" / "prod.env"
    run = case.run(gk.write_file(str(target), "API_KEY=1\n"))
    assert target.read_text() == "API_KEY=1\n"
    assert "enforce would deny" in run.stderr
    assert "enforce would deny" not in run.model_text()
    assert [g["result"] for g in case.records("guard")] == ["notify"]


# ── a yupana that is missing, crashes or is slow never blocks the agent ─────────────────────────


def test_a_missing_yupana_behind_the_wrapper_is_an_allow(case):
    case.config(scope()).register({"pre-edit": gk.wrapped("pre-edit", "/nonexistent/yupana hook pre-edit")})
    target = case.repo / "secrets" / "prod.env"
    run = case.run(gk.write_file(str(target), "API_KEY=1\n"))
    assert target.read_text() == "API_KEY=1\n"
    assert "blocked" not in run.tool_results()[0]


def test_control_a_bare_registration_of_a_missing_yupana_blocks_every_edit(case):
    """Why the wrapper is mandatory: Gemini fails CLOSED on any exit but 0 or 1 that prints text."""
    case.config(scope()).register({"pre-edit": "/nonexistent/yupana hook pre-edit"})
    target = case.repo / "src" / "lib.rs"
    run = case.run(gk.write_file(str(target), "pub fn ok() {}\n"))
    assert not target.exists()
    assert run.tool_results()[0].startswith("Tool execution blocked:")


def test_a_crashing_yupana_behind_the_wrapper_is_an_allow(case):
    crash = case.bin / "crashing-yupana"
    crash.write_text("#!/bin/sh\necho 'thread main panicked'\necho 'Traceback: boom' >&2\nexit 101\n")
    crash.chmod(0o755)
    case.config(scope()).register({"pre-edit": gk.wrapped("pre-edit", f"{crash} hook pre-edit")})
    target = case.repo / "secrets" / "prod.env"
    run = case.run(gk.write_file(str(target), "API_KEY=1\n"))
    assert target.read_text() == "API_KEY=1\n"
    assert "blocked" not in run.tool_results()[0]


def test_a_yupana_slower_than_the_registered_timeout_is_an_allow(case):
    case.config(scope()).register({"pre-edit": "sleep 3; " + gk.wrapped("pre-edit")}, timeout=1000)
    target = case.repo / "secrets" / "prod.env"
    run = case.run(gk.write_file(str(target), "API_KEY=1\n"))
    assert target.read_text() == "API_KEY=1\n"
    assert "blocked" not in run.tool_results()[0]
    assert case.records("guard") == []  # cut before it answered
    assert "Hook timed out after 1000ms" in run.stderr  # what the user is shown


# ── after `yupana install gemini`, and nothing else ─────────────────────────────────────────


def test_after_yupana_install_gemini_the_deny_cases_hold_and_after_uninstall_the_edit_lands(case):
    case.config(scope())
    done = case.yupana("install", "gemini")
    assert done.returncode == 0, done.stderr
    target = case.repo / "secrets" / "prod.env"
    run = case.run(gk.write_file(str(target), "API_KEY=1\n"))
    assert not target.exists()
    assert "the denied path `secrets/**`" in run.tool_results()[0]
    run = case.run(gk.shell("ssh prod-db.example.com uptime"))
    assert case.ssh_calls() == [] and "host `prod-db.example.com`" in run.tool_results()[0]
    assert [(r["result"], r["client"]) for r in case.records("guard")] == [("deny", "gemini")]

    done = case.yupana("uninstall", "gemini")
    assert done.returncode == 0, done.stderr
    case.run(gk.write_file(str(target), "API_KEY=1\n"))
    assert target.read_text() == "API_KEY=1\n" and len(case.records("guard")) == 1


def test_an_agent_started_in_a_subdirectory_reads_no_project_registration_and_status_says_so(case):
    """Gemini reads <cwd>/.gemini/settings.json only (and its workspace is the cwd): a project
    registration never runs in repo/src; registered for the user, the project's configuration governs."""
    case.config('[yupana.policy]\nmode = "enforce"\n[yupana.policy.scopes.polecat-3]\ndeny_paths = ["src/vault/**"]\n')
    assert case.yupana("install", "gemini").returncode == 0
    target = case.repo / "src" / "vault" / "key.pem"
    target.parent.mkdir(parents=True)
    case.run(gk.write_file(str(target), "KEY\n"), cwd=case.repo / "src")
    assert target.exists() and case.records("guard") == []
    done = case.yupana("status", "--json", "--offline", cwd=case.repo / "src")
    gemini = json.loads(done.stdout)["clients"]["gemini"]
    assert done.returncode == 3
    assert any("never invoked" in p["problem"] and "--user" in p["fix"] for p in gemini["problems"])

    target.unlink()
    assert case.yupana("install", "gemini", "--user").returncode == 0
    run = case.run(gk.write_file(str(target), "KEY\n"), cwd=case.repo / "src")
    assert not target.exists() and "the denied path `src/vault/**`" in run.tool_results()[0]


def test_skip_trust_alone_skips_a_project_registration_silently_but_not_a_user_one(tmp_path):
    """Gemini drops an untrusted folder's .gemini/settings.json before --skip-trust trusts it."""
    case = gk.GeminiCase(tmp_path, trust="flag").config(scope())
    assert case.yupana("install", "gemini").returncode == 0
    target = case.repo / "secrets" / "prod.env"
    case.run(gk.write_file(str(target), "API_KEY=1\n"))
    assert target.read_text() == "API_KEY=1\n" and case.records("guard") == []
    done = case.yupana("status", "--json", "--offline")
    gemini = json.loads(done.stdout)["clients"]["gemini"]
    assert done.returncode == 3 and gemini["state"] == "degraded"
    assert any("--skip-trust" in p["problem"] and "--user" in p["fix"] for p in gemini["problems"])

    target.unlink()
    assert case.yupana("uninstall", "gemini").returncode == 0
    assert case.yupana("install", "gemini", "--user").returncode == 0
    run = case.run(gk.write_file(str(target), "API_KEY=1\n"))
    assert not target.exists() and "the denied path `secrets/**`" in run.tool_results()[0]
    done = case.yupana("status", "--json", "--offline")
    assert done.returncode == 0 and json.loads(done.stdout)["clients"]["gemini"]["state"] == "ok"
