"""yupana's hooks under the real Gemini CLI (pinned, from npm), driven by a scripted fake Gemini API.

Each case asserts on the file system, on yupana's own records and on what the model was sent
(the ``functionResponse`` of the next request).
"""

from __future__ import annotations

import gemini_kit as gk
import pytest

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


def scope(action_scope: str = "enforce") -> str:
    return SCOPE.format(action_scope=action_scope)


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
