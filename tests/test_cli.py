"""The command line's routing, through the real CLI: the subcommand is the word in the command
position, never any argument that happens to be spelt ``hook``."""

from __future__ import annotations

import json
import subprocess

from conftest import run_yupana


def test_a_tenant_named_hook_is_a_status_argument(env):
    done = run_yupana(["status", "--tenant", "hook", "--json"], env)
    assert b"not understood" not in done.stderr
    assert json.loads(done.stdout)["tenant"] == "hook"
    text = run_yupana(["--tenant", "hook", "status"], env)
    assert b"not understood" not in text.stderr and b"hook (from --tenant)" in text.stdout


def test_a_path_named_hook_is_a_ci_select_argument(env, tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True, env=env)
    done = run_yupana(["ci-select", "--paths", "hook"], env, cwd=tmp_path)
    assert b"not understood" not in done.stderr
    assert b"1 path(s) from --paths" in done.stdout


def test_hook_dispatch_still_allows_what_it_does_not_understand(env):
    for argv in (["hook", "pre-everything"], ["hook", "pre-edit", "--from-the-future"],
                 ["--tenant", "t", "hook", "bogus"], ["--from-the-future", "x", "hook", "pre-edit"]):
        done = run_yupana(argv, env, stdin=b"{}")
        assert done.returncode == 0 and done.stdout == b"", argv
        assert b"hook invocation not understood" in done.stderr, argv
    done = run_yupana(["--tenant", "t", "hook", "pre-bash"], env, stdin=b'{"tool_name": "Bash", "tool_input": {"command": "ls"}}')
    assert done.returncode == 0 and b"not understood" not in done.stderr


def test_the_hooks_come_from_the_registry(env):
    """`hook --help`, the dispatcher and explain's --hook all read yupana/hooks/registry.py."""
    from yupana.hooks import registry

    shown = run_yupana(["hook", "--help"], env).stdout.decode()
    for row in registry.HOOKS.values():
        assert f"{row.name}" in shown and row.description in shown and row.event in shown
        assert hasattr(row.runtime(), "answer")  # the row names a real runtime
    unknown = run_yupana(["hook", "pre-nothing"], env, stdin=b"{}").stderr.decode()
    assert "this version knows " + ", ".join(registry.HOOKS) in unknown
    explain = run_yupana(["explain", "--help"], env).stdout.decode()
    assert all(name in explain for name in registry.CLIENT_HOOKS)
    assert "pre-push" not in explain  # a git hook runs commands: explain does not rehearse it
