"""Copilot CLI's payloads, as the real binary sent them (shared/fixtures/clients-more, copied into
tests/clients/fixtures/), through the real hook CLI: read into the edit model with Copilot's
field names, answered in the shape Copilot reads, and recorded as ``client: "copilot"``."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "hooks"))
from guard_kit import Repo, hook

FIXTURES = Path(__file__).resolve().parent / "fixtures"
ENFORCE = """[yupana.policy]
mode = "enforce"
action_scope = "enforce"

[yupana.policy.scopes.t]
deny_paths = ["README.md", "src/auth/**"]
deny_targets = ["host:db1.prod.example"]
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
def repo(tmp_path, env):
    env["BOBBIN_ROLE"] = "t"
    return Repo(tmp_path / "repo", env)


def recorded(name: str, repo: Repo) -> str:
    """A payload the real Copilot CLI 1.0.102 sent, placed in ``repo``."""
    return (FIXTURES / f"copilot-{name}.json").read_text().replace("<proj>", str(repo.root))


def records(env, kind: str) -> list[dict]:
    spool = env.state / "yupana" / "metrics.jsonl"
    lines = spool.read_text().splitlines() if spool.exists() else []
    return [r for r in map(json.loads, lines) if r.get("kind") == kind]


@pytest.mark.parametrize("name,tool", [("adapter-edit", "edit"), ("adapter-create", "create"),
                                       ("claude-Edit", "edit"), ("claude-Write", "create")])
def test_a_denied_edit_is_answered_flat_and_nested_with_the_same_reason(repo, env, name, tool):
    """Flat is what a preToolUse registration reads (nested alone there is an allow);
    nested is what a PreToolUse one reads."""
    repo.config(ENFORCE)
    done = hook(env, recorded(name, repo), "--client", "copilot")
    assert done.out["permissionDecision"] == "deny"
    reason = done.out["permissionDecisionReason"]
    assert reason.startswith("yupana: edit to ") and "outside the capability scope" in reason
    assert done.reason == reason
    [guard] = records(env, "guard")  # the record names Copilot's own tool, whichever way it was registered
    assert (guard["result"], guard["tool"], guard["client"]) == ("deny", tool, "copilot")


def test_the_payload_says_copilot_without_the_registration_saying_so(repo, env):
    repo.config(ENFORCE)
    done = hook(env, recorded("adapter-edit", repo))
    assert done.out["permissionDecision"] == "deny"
    assert [g["client"] for g in records(env, "guard")] == ["copilot"]


def test_the_text_a_create_introduces_is_file_text(repo, env):
    """Copilot's ``file_text`` is the content (read as ``path`` alone, a content rule saw nothing)."""
    repo.config(RULE)
    data = json.loads(recorded("adapter-create", repo))
    data["toolArgs"]["file_text"] = "// fixes ABC-9\npub fn login() {}\n"
    done = hook(env, data, "--client", "copilot")
    assert done.out["permissionDecision"] == "deny"
    assert "Ticket ids belong in the tracker" in done.out["permissionDecisionReason"]
    assert hook(env, recorded("adapter-create", repo), "--client", "copilot").allowed_silently


def test_the_text_an_edit_introduces_is_new_str(repo, env):
    repo.config(RULE)
    lib = repo.file("src/lib.rs", "pub fn helper() {}\n")
    payload = {"sessionId": "s", "timestamp": 1, "cwd": str(repo.root), "toolName": "edit",
               "toolArgs": {"path": str(lib), "old_str": "{}", "new_str": "{} // see ABC-123"}}
    done = hook(env, payload, "--client", "copilot")
    assert done.out["permissionDecision"] == "deny"
    assert "Ticket ids belong in the tracker" in done.out["permissionDecisionReason"]
    payload["toolArgs"] = {"path": str(lib), "old_str": "{}", "new_str": "{} // see the tracker"}
    assert hook(env, payload, "--client", "copilot").allowed_silently


def test_tool_args_as_a_json_string_are_read_the_same(repo, env):
    """Copilot's docs say toolArgs is a JSON string; 1.0.102 sends an object. Both are read."""
    repo.config(ENFORCE)
    data = json.loads(recorded("adapter-edit", repo))
    data["toolArgs"] = json.dumps(data["toolArgs"])
    done = hook(env, data, "--client", "copilot")
    assert done.out["permissionDecision"] == "deny"


@pytest.mark.parametrize("name", ["adapter-bash", "claude-Bash"])
def test_pre_bash_denies_the_recorded_ssh_to_a_prod_host(repo, env, name):
    repo.config(ENFORCE)
    done = hook(env, recorded(name, repo), "--client", "copilot", event="pre-bash")
    assert done.out["permissionDecision"] == "deny"
    assert "host `db1.prod.example`" in done.out["permissionDecisionReason"]
    assert [(r["result"], r["target"]) for r in records(env, "action_scope")] == [("deny", "db1.prod.example")]
    assert [r["client"] for r in records(env, "pre_bash_invoked")] == ["copilot"]


def test_an_allowed_edit_is_silent(repo, env):
    repo.config(ENFORCE.replace('"README.md", ', ""))
    done = hook(env, recorded("adapter-edit", repo), "--client", "copilot")
    assert done.allowed_silently
    assert [(g["result"], g["client"]) for g in records(env, "guard")] == [("allow", "copilot")]


def test_a_notice_goes_to_the_model_because_copilot_shows_the_user_none(repo, env):
    """Copilot drops systemMessage; a flat additionalContext reaches the model."""
    repo.config('[yupana.policy]\nmode = "enforce"\n[yupana.policy.scopes.t]\nallow_paths = ["src/***"]\n')
    done = hook(env, recorded("adapter-edit", repo), "--client", "copilot")
    # the model is told a check could not run (issue 22 §3); the operator's detail is on stderr and in the spool
    assert "could not be fully checked" in done.out["additionalContext"] and "malformed glob" in done.stderr
    assert "permissionDecision" not in done.out


def test_post_edit_answers_with_context_never_a_deny(repo, env):
    repo.config(ENFORCE)
    data = json.loads(recorded("adapter-edit", repo))
    data["toolResult"] = {"resultType": "success", "textResultForLlm": "File updated with changes."}
    done = hook(env, data, "--client", "copilot", event="post-edit")
    assert "permissionDecision" not in (done.out or {})
    assert [r["client"] for r in records(env, "post_edit_invoked")] == ["copilot"]


def test_a_copilot_tool_yupana_does_not_read_is_a_loud_unknown(repo, env):
    """``view`` (recorded) reaching pre-edit is not an edit yupana can read: never a silent allow."""
    repo.config(ENFORCE)
    done = hook(env, recorded("adapter-view", repo), "--client", "copilot")
    assert "could not be fully checked" in done.out["additionalContext"] and "permissionDecision" not in done.out
    assert "view" in done.stderr
    [fail] = records(env, "fail_open")
    assert (fail["fail_kind"], fail["client"], fail["tool"]) == ("unknown_tool", "copilot", "view")


@pytest.mark.parametrize("name,event,hook_name", [("adapter-bash", None, "pre-bash"), ("adapter-edit", None, "pre-edit"),
                                                  ("adapter-edit", "post", "post-edit")])
def test_explain_rehearses_the_hook_a_copilot_payload_is_for(repo, env, yupana, name, event, hook_name):
    repo.config(ENFORCE)
    data = json.loads(recorded(name, repo))
    if event == "post":
        data["toolResult"] = {"resultType": "success", "textResultForLlm": "ok"}
    done = yupana("explain", "--json", stdin=json.dumps(data), cwd=repo.root)
    report = json.loads(done.stdout)
    assert report["hook"] == hook_name
    if hook_name != "post-edit":
        assert report["decision"] == "deny"


@pytest.mark.parametrize("where", [
    lambda repo, env: env.home / ".copilot" / "settings.json",
    lambda repo, env: env.home / ".copilot" / "config.json",
    lambda repo, env: env.home / ".copilot" / "hooks" / "yupana.json",
    lambda repo, env: repo.root / ".github" / "hooks" / "yupana.json",
    lambda repo, env: repo.root / ".github" / "copilot" / "settings.json",
    lambda repo, env: repo.root / ".github" / "copilot" / "settings.local.json",
], ids=["user-settings", "folder-trust", "user-hooks", "repo-hooks", "repo-settings", "repo-settings-local"])
def test_an_agent_cannot_switch_copilots_hooks_off(repo, env, where):
    """Copilot's hooks, the settings whose disableAllHooks turns them all off, and its folder trust are
    the guard's own controls: a create there is refused whatever the tenant's scope allows."""
    repo.config('[yupana.policy]\nmode = "enforce"\n[yupana.policy.scopes.t]\nallow_paths = ["**"]\n')
    path = where(repo, env)
    payload = {"sessionId": "s", "timestamp": 1, "cwd": str(repo.root), "toolName": "create",
               "toolArgs": {"path": str(path), "file_text": '{"disableAllHooks": true}'}}
    done = hook(env, payload, "--client", "copilot")
    assert done.out["permissionDecision"] == "deny", done
    assert "ask the operator" in done.out["permissionDecisionReason"]
    assert records(env, "guard")[-1]["rule"] == "self-protection:client"


def test_a_moved_copilot_home_is_protected_too(repo, env, tmp_path):
    env["COPILOT_HOME"] = str(tmp_path / "elsewhere")
    repo.config('[yupana.policy]\nmode = "enforce"\n')
    payload = {"sessionId": "s", "timestamp": 1, "cwd": str(repo.root), "toolName": "create",
               "toolArgs": {"path": str(tmp_path / "elsewhere" / "settings.json"), "file_text": "{}"}}
    assert hook(env, payload, "--client", "copilot").out["permissionDecision"] == "deny"


def test_an_ordinary_workflow_under_github_is_not_a_control(repo, env):
    repo.config('[yupana.policy]\nmode = "enforce"\n')
    payload = {"sessionId": "s", "timestamp": 1, "cwd": str(repo.root), "toolName": "create",
               "toolArgs": {"path": str(repo.root / ".github" / "workflows" / "ci.yml"), "file_text": "on: push\n"}}
    assert hook(env, payload, "--client", "copilot").allowed_silently


PATCH = "*** Begin Patch\n*** Update File: README.md\n@@\n-hello\n+hello world\n*** End Patch\n"


@pytest.mark.parametrize("args", [PATCH, {"input": PATCH}, json.dumps({"input": PATCH})],
                         ids=["bare-string", "object", "json-string"])
def test_apply_patch_from_a_gpt_model_is_read_as_a_patch(repo, env, args):
    repo.config(ENFORCE)
    repo.file("README.md", "hello\n")
    payload = {"sessionId": "s", "timestamp": 1, "cwd": str(repo.root), "toolName": "apply_patch", "toolArgs": args}
    done = hook(env, payload, "--client", "copilot")
    assert done.out["permissionDecision"] == "deny" and "README.md" in done.out["permissionDecisionReason"]
    assert [(g["tool"], g["client"]) for g in records(env, "guard")] == [("apply_patch", "copilot")]


@pytest.mark.parametrize("command,denied", [("str_replace", True), ("create", True), ("insert", True),
                                            ("view", False)])
def test_str_replace_editor_is_read_by_its_command(repo, env, command, denied):
    repo.config(ENFORCE)
    repo.file("README.md", "hello\n")
    args = {"command": command, "path": str(repo.root / "README.md"), "old_str": "hello", "new_str": "hi",
            "file_text": "hi\n", "insert_line": 1}
    payload = {"sessionId": "s", "timestamp": 1, "cwd": str(repo.root), "toolName": "str_replace_editor",
               "toolArgs": args}
    done = hook(env, payload, "--client", "copilot")
    if denied:
        assert done.out["permissionDecision"] == "deny"
    else:  # a view reaching pre-edit is not read: a loud UNKNOWN, never a silent allow
        assert "permissionDecision" not in done.out and done.out["additionalContext"]
        assert [r["fail_kind"] for r in records(env, "fail_open")] == ["unknown_tool"]


def test_a_shell_write_to_copilots_settings_is_refused(repo, env):
    repo.config('[yupana.policy]\nmode = "enforce"\n')
    target = env.home / ".copilot" / "settings.json"
    payload = {"sessionId": "s", "timestamp": 1, "cwd": str(repo.root), "toolName": "bash",
               "toolArgs": {"command": f"echo '{{\"disableAllHooks\": true}}' > {target}", "description": "x"}}
    done = hook(env, payload, "--client", "copilot", event="pre-bash")
    assert done.out["permissionDecision"] == "deny" and "ask the operator" in done.out["permissionDecisionReason"]
