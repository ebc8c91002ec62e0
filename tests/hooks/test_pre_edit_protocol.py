"""pre-edit output discipline through the real CLI: silence, the deny envelope, loud fail-opens."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from guard_kit import Repo, hook

ENFORCE_SCOPE = """
[yupana.policy]
mode = "enforce"
[yupana.policy.scopes.polecat-3]
allow_paths = ["src/**", "tests/**"]
deny_paths = ["src/config.rs"]
"""


@pytest.fixture
def repo(tmp_path, env):
    return Repo(tmp_path / "repo", env)


@pytest.mark.parametrize("stdin", [b"", b"not json", b"\xff\xfe\x00", b"[1,2]", b"{\"tool_name\": "])
def test_unparseable_payload_is_a_silent_allow_on_record(env, stdin):
    result = hook(env, stdin)
    assert result.allowed_silently
    [guard] = env.records("guard")
    assert guard["parsed"] is False and guard["result"] == "allow" and guard["ext"] == "" and guard["mode"] == "?"
    assert f"stdin is not a JSON object ({len(stdin)} bytes)" in result.stderr


def test_payload_without_a_file_is_a_silent_allow(env, repo):
    result = hook(env, {"session_id": "s", "cwd": str(repo.root), "tool_name": "Edit", "tool_input": {"old_string": "a"}})
    assert result.allowed_silently
    [guard] = env.records("guard")
    assert guard["parsed"] is True and guard["ext"] == "" and guard["tool"] == "Edit"


def test_default_mode_is_off_and_inert(env, repo):
    repo.config('[yupana.policy.scopes.polecat-3]\nallow_paths = ["src/**"]\n')
    result = hook(env, repo.payload(rel="docs/outside.md"), "--tenant", "polecat-3")
    assert result.allowed_silently
    [guard] = env.records("guard")
    assert guard["mode"] == "off" and guard["result"] == "allow" and "constraints" not in guard
    assert guard["session"] == "sess-1" and guard["ext"] == "md" and isinstance(guard["duration_ms"], (int, float))


def test_deny_envelope_is_exactly_the_contract(env, repo):
    repo.config(ENFORCE_SCOPE)
    result = hook(env, repo.payload(rel="src/config.rs"), "--tenant", "polecat-3")
    assert set(result.out) == {"hookSpecificOutput"}
    specific = result.out["hookSpecificOutput"]
    assert set(specific) == {"hookEventName", "permissionDecision", "permissionDecisionReason"}
    assert specific["hookEventName"] == "PreToolUse" and specific["permissionDecision"] == "deny"
    reason = specific["permissionDecisionReason"]
    assert reason.startswith("yupana: edit to src/config.rs") and "polecat-3" in reason
    assert "the denied path `src/config.rs`" in reason and "request a wider capability scope" in reason


def test_allowed_edit_under_enforce_is_silent_never_allow(env, repo):
    repo.config(ENFORCE_SCOPE)
    result = hook(env, repo.payload(rel="src/graph/blast.rs"), "--tenant", "polecat-3")
    assert result.allowed_silently
    [guard] = env.records("guard")
    assert guard["result"] == "allow" and guard["policy_freshness"] == "fresh"
    assert guard["constraints"] == [{"id": "scope-declared:polecat-3", "plane": "scope", "outcome": "satisfied",
                                     "response": "no-action"}]


def test_config_error_fails_open_loudly_once_per_session(env, repo):
    repo.config('[yupana.policy]\nmode = "sometimes"\n')
    first = hook(env, repo.payload(session="s-a"))
    assert set(first.out) == {"systemMessage"}
    assert "failed open" in first.message and "configuration error" in first.message
    assert "yupana:" in first.stderr and "mode" in first.stderr
    second = hook(env, repo.payload(session="s-a"))
    assert second.allowed_silently and "configuration error" in second.stderr
    other = hook(env, repo.payload(session="s-b"))
    assert "failed open" in other.message
    fails = env.records("fail_open")
    assert [r["fail_kind"] for r in fails] == ["config"] * 3 and all("mode" in r["reason"] for r in fails)
    assert [g["mode"] for g in env.records("guard")] == ["?"] * 3


def test_config_override_flag_replaces_discovery(env, repo, tmp_path):
    repo.config('[yupana.policy]\nmode = "off"\n')
    override = tmp_path / "other.toml"
    override.write_text(ENFORCE_SCOPE)
    result = hook(env, repo.payload(rel="src/config.rs"), "--tenant", "polecat-3", "--config", str(override))
    assert result.denied
    missing = hook(env, repo.payload(rel="src/config.rs"), "--config", str(tmp_path / "absent.toml"))
    assert "failed open" in missing.message and not missing.denied


def test_unknown_hook_arguments_allow_with_a_stderr_line(env, repo):
    from conftest import run_yupana

    done = run_yupana(["hook", "pre-edit", "--from-the-future"], env, stdin=json.dumps(repo.payload()))
    assert done.returncode == 0 and done.stdout == b"" and b"not understood" in done.stderr
    done = run_yupana(["hook", "pre-everything"], env, stdin=b"{}")
    assert done.returncode == 0 and done.stdout == b""


def test_internal_error_discards_partial_work_and_fails_open(env, repo):
    """A bug in any stage after a deny was decided must not leak a half-made verdict."""
    repo.config(ENFORCE_SCOPE)
    code = (
        "import sys\n"
        "from yupana.hooks import pre_edit\n"
        "def broken(self, *args, **kwargs):\n"
        "    raise RuntimeError('tripwire stage exploded')\n"
        "pre_edit.Guard.tripwires = broken\n"
        "from yupana.cli import main\n"
        "sys.exit(main(['--tenant', 'polecat-3', 'hook', 'pre-edit']))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], input=json.dumps(repo.payload(rel="src/config.rs")).encode(),
                          env=env, capture_output=True)
    assert done.returncode == 0
    out = json.loads(done.stdout)
    assert set(out) == {"systemMessage"} and "internal error" in out["systemMessage"]
    assert b"tripwire stage exploded" in done.stderr
    [guard] = env.records("guard")
    assert guard["result"] == "notify" and guard["constraints"][0]["outcome"] == "unknown"
    assert env.records("fail_open")[0]["fail_kind"] == "internal"


def test_record_paths_is_opt_in(env, repo):
    repo.config(ENFORCE_SCOPE)
    hook(env, repo.payload(rel="src/a.rs"), "--tenant", "polecat-3")
    assert "path" not in env.records("guard")[-1]
    repo.config(ENFORCE_SCOPE + '[yupana.metrics]\nrecord_paths = "relative"\n')
    hook(env, repo.payload(rel="src/a.rs"), "--tenant", "polecat-3")
    assert env.records("guard")[-1]["path"] == "src/a.rs"
    repo.config(ENFORCE_SCOPE + '[yupana.metrics]\nrecord_paths = "absolute"\n')
    hook(env, repo.payload(rel="src/a.rs"), "--tenant", "polecat-3")
    assert env.records("guard")[-1]["path"] == str(repo.root / "src/a.rs")


def test_attribution_fields(env, repo):
    repo.config(ENFORCE_SCOPE)
    env["SHANTY_AGENT"] = "crew-7"
    env["BOBBIN_ROLE"] = "polecat-3"
    env["YUPANA_PRINCIPAL_CHAIN"] = "mayor,crew-2"
    hook(env, repo.payload(rel="src/a.rs"))
    guard = env.records("guard")[-1]
    assert guard["agent"] == "crew-7" and guard["tenant"] == "polecat-3" and guard["executor"] == "crew-7"
    assert guard["principal_chain"] == ["mayor", "crew-2"] and guard["attribution_conflict"] is True
