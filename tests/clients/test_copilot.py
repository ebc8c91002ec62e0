"""yupana's hooks under the real GitHub Copilot CLI (pinned, from npm), driven by a scripted fake model.

Copilot CLI speaks Anthropic Messages to the loopback fake (BYOK, offline). Each case asserts
on the file system, on yupana's own records and on what the model was sent next.
"""

from __future__ import annotations

import json

import copilot_kit as ck
import pytest

pytestmark = pytest.mark.clients

SCOPE = """[yupana.policy]
mode = "enforce"
action_scope = "enforce"

[yupana.policy.scopes.polecat-3]
deny_paths = ["secrets/**"]
deny_targets = ["host:prod-*"]
"""
TRIPWIRE = """[yupana.policy]
mode = "enforce"

[[yupana.policy.tripwires]]
name = "auth-boundary"
paths = ["src/auth/**"]
effect = "deny"
message = "auth code is owned by the security team"
"""
RULE = """[yupana.policy]
mode = "enforce"

[[yupana.policy.rules]]
name = "no-ticket-in-comment"
language = "rust"
query = "(line_comment) @c"
match_type = "must-not-match"
pattern = "[A-Z]+-[0-9]+"
message = "Ticket ids belong in the tracker."
"""


@pytest.fixture
def case(tmp_path):
    return ck.CopilotCase(tmp_path)


def test_a_deny_paths_edit_is_denied_the_file_unchanged_and_the_reason_sent_to_the_model(case):
    case.config(SCOPE).register()
    secret = case.file("secrets/prod.env", "KEY=old\n")
    run = case.run(ck.edit(str(secret), "KEY=old", "KEY=new"))
    assert secret.read_text() == "KEY=old\n"
    [result] = run.tool_results()
    assert result.startswith("Denied by preToolUse hook: yupana: edit to secrets/prod.env is outside the capability")
    assert "the denied path `secrets/**`" in result
    [guard] = case.records("guard")
    assert (guard["result"], guard["tool"], guard["client"]) == ("deny", "edit", "copilot")


def test_a_tripwire_create_is_denied_and_nothing_is_written(case):
    case.config(TRIPWIRE).register()
    target = case.repo / "src" / "auth" / "login.rs"
    run = case.run(ck.create(str(target), "pub fn login() {}\n"))
    assert not target.exists()
    [result] = run.tool_results()
    assert result.startswith("Denied by preToolUse hook: yupana:") and "auth-boundary" in result
    assert [g["result"] for g in case.records("guard")] == ["deny"]


def test_the_text_an_edit_introduces_is_what_a_content_rule_reads(case):
    """Copilot names its fields old_str/new_str/file_text: read as Claude's, the rule sees the new text."""
    case.config(RULE).register()
    lib = case.file("src/lib.rs", "pub fn f() -> u8 { 1 }\n")
    run = case.run(ck.edit(str(lib), "{ 1 }", "{ 1 } // see ABC-123"))
    assert lib.read_text() == "pub fn f() -> u8 { 1 }\n"
    assert "Ticket ids belong in the tracker" in run.tool_results()[0]
    new = case.repo / "src" / "new.rs"
    run = case.run(ck.create(str(new), "// fixes ABC-9\nfn g() {}\n"))
    assert not new.exists() and "Ticket ids belong in the tracker" in run.tool_results()[0]
    assert [g["result"] for g in case.records("guard")] == ["deny", "deny"]


def test_an_unrelated_edit_lands(case):
    case.config(SCOPE).register()
    readme = case.file("README.md", "hello\n")
    run = case.run(ck.edit(str(readme), "hello", "hello world"))
    assert readme.read_text() == "hello world\n"
    assert run.tool_results()[0].startswith(f"File {readme} updated")
    assert [(g["result"], g["client"]) for g in case.records("guard")] == [("allow", "copilot")]
    assert [r["client"] for r in case.records("post_edit_invoked")] == ["copilot"]


def test_pre_bash_denies_a_resolved_prod_host_and_lets_an_echo_of_it_run(case):
    case.config(SCOPE).register()
    run = case.run(ck.bash("ssh prod-db.example.com uptime"))
    assert case.ssh_calls() == []
    [result] = run.tool_results()
    assert result.startswith("Denied by preToolUse hook: yupana:")
    assert "host `prod-db.example.com`" in result and "the denied target `host:prod-*`" in result
    assert [(r["result"], r["target"]) for r in case.records("action_scope")] == [("deny", "prod-db.example.com")]

    run = case.run(ck.bash('echo "ssh prod-db.example.com uptime"'))
    assert case.ssh_calls() == []
    assert run.tool_results()[0].startswith("ssh prod-db.example.com uptime")
    assert len(case.records("action_scope")) == 1


def test_a_notice_reaches_the_model_since_copilot_shows_the_user_none(case):
    """Copilot drops systemMessage: a fail-open notice goes to the model as additionalContext."""
    case.config('[yupana.policy]\nmode = "enforce"\n[yupana.policy.scopes.polecat-3]\nallow_paths = ["src/***"]\n')
    case.register()
    target = case.repo / "docs" / "a.md"
    target.parent.mkdir()  # Copilot's create does not make directories
    run = case.run(ck.create(str(target), "a\n"))
    assert target.exists()
    assert "could not be fully checked" in run.model_text()  # the detail is the operator's (issue 22 §3)
    assert [r["fail_kind"] for r in case.records("fail_open")] == ["globs"]


def test_under_advise_the_edit_lands_and_the_model_is_told_what_enforce_would_deny(case):
    """Copilot shows the user nothing: an advise run's advisory reaches the model (additionalContext)."""
    case.config(SCOPE.replace('mode = "enforce"', 'mode = "advise"')).register()
    secret = case.file("secrets/prod.env", "KEY=old\n")
    run = case.run(ck.edit(str(secret), "KEY=old", "KEY=new"))
    assert secret.read_text() == "KEY=new\n"
    assert "Additional context from preToolUse hook" in run.model_text() and "enforce would deny" in run.model_text()
    assert [g["result"] for g in case.records("guard")] == ["notify"]


# ── a slow, crashing or missing yupana never blocks the agent ────────────────────────
@pytest.mark.parametrize("command", [
    pytest.param("sleep 4; " + ck.wrapped("pre-edit"), id="slower-than-its-timeout"),
    pytest.param("out=$(sh -c 'echo boom >&2; exit 101' 2>/dev/null) || exit 0; printf '%s' \"$out\"", id="crashing"),
    pytest.param("out=$(/nonexistent/yupana hook pre-edit --client copilot 2>/dev/null) || exit 0; "
                 "printf '%s' \"$out\"", id="missing"),
    pytest.param("out=$(printf '%s' '{\"permissionDecision\": \"de') || exit 0; printf '%s' \"$out\"",
                 id="truncated-output"),
])
def test_a_failing_yupana_through_the_wrapper_never_blocks_the_edit(case, command):
    case.config(SCOPE)
    case.register({"pre-edit": command, "pre-bash": "", "post-edit": ""}, timeout=1 if "sleep" in command else 5)
    secret = case.file("secrets/prod.env", "KEY=old\n")
    run = case.run(ck.edit(str(secret), "KEY=old", "KEY=new"))
    assert secret.read_text() == "KEY=new\n", run
    assert run.tool_results()[0].startswith(f"File {secret} updated")


def test_control_without_the_wrapper_a_missing_yupana_denies_every_edit(case):
    """Why the wrapper is mandatory: Copilot fails CLOSED on a hook error."""
    case.config(SCOPE)
    case.register({"pre-edit": "/nonexistent/yupana hook pre-edit", "pre-bash": "", "post-edit": ""})
    readme = case.file("README.md", "hello\n")
    run = case.run(ck.edit(str(readme), "hello", "hello world"))
    assert readme.read_text() == "hello\n"
    assert "(hook errored)" in run.tool_results()[0]


# ── folder trust: repository hooks in -p ─────────────────────────────────────────────
def test_repository_hooks_are_skipped_silently_in_an_untrusted_folder_and_status_says_so(case):
    case.config(SCOPE)
    done = case.yupana("install", "copilot", "--project")
    assert done.returncode == 3 and "skips them silently" in done.stderr
    secret = case.file("secrets/prod.env", "KEY=old\n")
    case.run(ck.edit(str(secret), "KEY=old", "KEY=new"))
    assert secret.read_text() == "KEY=new\n" and case.records("guard") == []

    done = case.yupana("status", "--json", "--offline")
    copilot = json.loads(done.stdout)["clients"]["copilot"]
    assert done.returncode == 3 and copilot["state"] == "degraded"
    assert any("not trusted" in p["problem"] and "--user" in p["fix"] for p in copilot["problems"])

    secret.write_text("KEY=old\n")
    case.run(ck.edit(str(secret), "KEY=old", "KEY=new"), args=("--trust-folder",))
    assert secret.read_text() == "KEY=old\n"
    assert [g["result"] for g in case.records("guard")] == ["deny"]


# ── yupana install copilot in a fresh repository, and nothing else ───────────────────
def test_after_yupana_install_copilot_the_deny_cases_hold_and_uninstall_removes_them(case):
    case.config(SCOPE)
    done = case.yupana("install", "copilot")
    assert done.returncode == 0, done.stderr + done.stdout
    secret = case.file("secrets/prod.env", "KEY=old\n")
    run = case.run(ck.edit(str(secret), "KEY=old", "KEY=new"))
    assert secret.read_text() == "KEY=old\n" and "the denied path `secrets/**`" in run.tool_results()[0]
    run = case.run(ck.bash("ssh prod-db.example.com uptime"))
    assert case.ssh_calls() == [] and "host `prod-db.example.com`" in run.tool_results()[0]
    readme = case.file("README.md", "hello\n")
    case.run(ck.edit(str(readme), "hello", "hello world"))
    assert readme.read_text() == "hello world\n"
    code = case.yupana("status", "--json", "--offline")
    assert json.loads(code.stdout)["clients"]["copilot"]["state"] == "ok", code.stdout

    done = case.yupana("uninstall", "copilot")
    assert done.returncode == 0, done.stderr
    case.run(ck.edit(str(secret), "KEY=old", "KEY=new"))
    assert secret.read_text() == "KEY=new\n"
    assert [r["result"] for r in case.records("guard")] == ["deny", "allow"]


def test_an_agent_started_in_a_subdirectory_is_governed_by_the_user_registration(case):
    case.config(SCOPE)
    assert case.yupana("install", "copilot").returncode == 0
    secret = case.file("secrets/prod.env", "KEY=old\n")
    (case.repo / "src").mkdir()
    run = case.run(ck.edit(str(secret), "KEY=old", "KEY=new"), cwd=case.repo / "src")
    assert secret.read_text() == "KEY=old\n" and "the denied path `secrets/**`" in run.tool_results()[0]


def test_the_post_edit_notice_reaches_the_model_in_the_tool_result(case):
    """postToolUse additionalContext is appended to what the model reads of the edit's result."""
    import sys
    import time

    import conftest
    sys.path.insert(0, str(ck.kit.HERE.parent / "hooks"))
    from guard_kit import write_cache

    endpoint = "http://127.0.0.1:9"
    state = conftest.Env(case.base / "state-env")
    write_cache(state, endpoint, work_item_scopes={"yup-1": ["src/a.rs"], "yup-3": ["src/z.rs"]},
                work_item_status={"yup-3": "closed"})
    case.state = state.state
    crew = case.base / "shanty" / "crew" / "agent-7"
    crew.mkdir(parents=True)
    (crew / "plate.json").write_text(json.dumps({"item": "yup-1", "at": int(time.time()), "session": None}))
    case.config('[yupana.policy]\nmode = "advise"\nwork_item_scope = "advise"\n'
                f'[yupana.quipu]\nenabled = true\nendpoint = "{endpoint}"\ndialect = "quipu"\n').register()
    case.tenant = None
    z = case.file("src/z.rs", "fn z() {}\n")
    run = case.run(ck.edit(str(z), "fn z() {}", "fn z() { 1 }"), env={"SHANTY_ROOT": str(case.base / "shanty"),
                                                                       "SHANTY_AGENT": "agent-7"})
    assert z.read_text() == "fn z() { 1 }\n"
    [result] = run.tool_results()
    assert "Additional guidance from postToolUse hooks" in result
    assert "outside the observed ground of work item `yup-1`" in result and "`yup-3` (closed)" in result
    assert [r["result"] for r in case.records("post_edit_invoked")] == ["notice"]
