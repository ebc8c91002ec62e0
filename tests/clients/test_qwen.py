"""yupana's hooks under the real Qwen Code CLI (pinned, from npm, on Node 22), driven by a scripted fake model.

Each case asserts on the file system, on yupana's own records, on the fake ``ssh``'s log and
on what the model was sent next (the Anthropic ``tool_result`` Qwen Code returns).
"""

from __future__ import annotations

import kit
import pytest
import qwen_kit
from qwen_kit import QwenCase

pytestmark = pytest.mark.clients

SCOPE = """[yupana.policy]
mode = "enforce"
action_scope = "{action_scope}"

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


def scope(action_scope: str = "enforce") -> str:
    return SCOPE.format(action_scope=action_scope)


@pytest.fixture
def case(tmp_path):
    return QwenCase(tmp_path)


def test_control_without_a_hook_the_denied_write_lands_and_the_prod_ssh_runs(case):
    case.config(scope())
    target = case.repo / "secrets" / "prod.env"
    run = case.run(qwen_kit.write_file(str(target), "API_KEY=1\n"))
    assert target.read_text() == "API_KEY=1\n"
    assert "Successfully created" in run.tool_results()[0]
    case.run(qwen_kit.shell("ssh prod-db.example.com uptime"))
    assert case.ssh_calls() == ["prod-db.example.com uptime"]
    assert case.records() == []


@pytest.mark.parametrize("command", [
    "sleep 8; " + kit.wrapped("pre-edit"),          # slower than the registered 5000 ms
    "exit 1",                                       # crashes (exit 1, no output)
    "echo boom >&2; exit 3",                        # crashes loudly
    kit.wrapped("pre-edit").replace(kit.YUPANA, "/nonexistent/yupana"),  # yupana missing, wrapped
])
def test_a_slow_crashing_or_missing_yupana_never_blocks_the_agent(case, command):
    case.config(scope())
    case.register({"pre-edit": command, "pre-bash": command})
    target = case.repo / "secrets" / "prod.env"
    run = case.run(qwen_kit.write_file(str(target), "API_KEY=1\n"), timeout=90)
    assert target.read_text() == "API_KEY=1\n"
    assert "Successfully created" in run.tool_results()[0]
    assert run.rc == 0
    run = case.run(qwen_kit.shell('echo "ssh prod-db.example.com"'))
    assert run.tool_results() and "ssh prod-db.example.com" in run.tool_results()[0]
    assert run.rc == 0
