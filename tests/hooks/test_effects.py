"""Live and rehearsed effects: every registered hook decides the same either way.

``yupana explain`` runs the real hook with :class:`yupana.hooks.effects.RehearsalEffects`;
a real hook with the live ones. Each case runs a hook rehearsed and then live, in one
process, on the same payload and state: the stdout (the decision and every word of it) must
be identical, the rehearsal must leave nothing behind (no spool line, no once-per-session
marker), and — where no detached worker can race the spool — it must predict exactly the
records the live run then writes.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest
from guard_kit import Repo, text_rule, write_cache

from yupana.hooks import registry

ENDPOINT = "http://127.0.0.1:9"  # nothing listens: no case asks the store anything

RUN = r"""
import json, os, sys, time
from yupana.cli import HookArgs
from yupana.hooks import registry
from yupana.hooks.effects import RehearsalEffects
from yupana.state import paths

name, spool, tmp = sys.argv[1], sys.argv[2], sys.argv[3]
raw = sys.stdin.buffer.read()
args = HookArgs(name)
args.tenant = os.environ.get("BOBBIN_ROLE")
runtime = registry.get(name).runtime()

def state():
    lines = open(spool).read().splitlines() if os.path.exists(spool) else []
    throttled = os.path.exists(paths.state_file("throttles.jsonl"))
    return lines, sorted(f for f in os.listdir(tmp) if f.startswith("yupana-guard-failopen-")), throttled

before = state()
rehearsed = RehearsalEffects()
dry = runtime(args, time.monotonic(), rehearsed)
dry_out = dry.answer(raw)
after_rehearsal = state()
live = runtime(args, time.monotonic())
live_out = live.answer(raw)
lines, markers, throttled = state()
print(json.dumps({"dry": dry_out, "live": live_out, "dry_decision": dry.outcome.decision,
                  "live_decision": live.outcome.decision, "untouched": after_rehearsal == before,
                  "dry_records": [r["kind"] for r in rehearsed.records],
                  "live_records": [json.loads(x)["kind"] for x in lines[len(before[0]):]],
                  "notices": rehearsed.notices, "markers": markers, "throttled": throttled}))
"""


def _run(env, hook: str, payload, cwd) -> dict:
    raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    done = subprocess.run([sys.executable, "-c", RUN, hook, str(env.spool_path), str(env.tmp)], input=raw, env=env,
                          cwd=str(cwd), capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    return json.loads(done.stdout)


def _same(got: dict, *, records: bool = True) -> None:
    assert got["dry"] == got["live"] and got["dry_decision"] == got["live_decision"]
    assert got["untouched"], "the rehearsal wrote a record or a marker"
    if records:
        assert got["dry_records"] == got["live_records"]


PRE_EDIT = f"""
[yupana.policy]
mode = "enforce"
tripwires = [{{ name = "lib-watch", paths = ["src/**"], effect = "throttle", backoff_secs = 300 }}]
[yupana.policy.scopes.polecat-3]
allow_paths = ["docs/**"]
[yupana.quipu]
enabled = true
endpoint = "{ENDPOINT}"
"""


def test_pre_edit_denies_advises_and_records_alike(env, tmp_path):
    write_cache(env, ENDPOINT, text_rules=[text_rule("no-todo", r"TODO", tier="warn")])
    repo = Repo(tmp_path / "repo", env).config(PRE_EDIT)
    env["BOBBIN_ROLE"] = "polecat-3"
    got = _run(env, "pre-edit", repo.payload(rel="src/lib.rs", new_string="// TODO later"), repo.root)
    _same(got)
    out = json.loads(got["live"])
    assert out["hookSpecificOutput"]["permissionDecision"] == "deny" and "capability scope" in got["live"]
    assert {"guard", "tripwire", "throttle"} <= set(got["live_records"])
    assert got["throttled"], "the live run writes the back-off the rehearsal only reported"


def test_a_missing_cache_fails_open_alike_and_only_the_live_run_marks_it(env, tmp_path):
    repo = Repo(tmp_path / "repo", env).config(PRE_EDIT.replace("tripwires = [", "# tripwires = ["))
    got = _run(env, "pre-edit", repo.payload(rel="docs/x.md"), repo.root)
    _same(got, records=False)  # a refresh worker may be started: its records race the comparison
    assert "failed open" in got["live"] and "fail_open" in got["dry_records"]
    assert [n["kind"] for n in got["notices"]] == ["projection"] and got["notices"][0]["shown"]
    assert got["markers"] == ["yupana-guard-failopen-sess-1-projection"]


def test_pre_edit_unreadable_payload(env, tmp_path):
    _same(_run(env, "pre-edit", b"not json", tmp_path))


PRE_BASH = f"""
[yupana.policy]
mode = "enforce"
action_scope = "enforce"
[yupana.policy.scopes.polecat-3]
deny_targets = ["service:etcd"]
[yupana.quipu]
enabled = true
endpoint = "{ENDPOINT}"
refresh_interval_secs = 86400
"""


def _bash(cwd, command) -> dict:
    return {"session_id": "sess-1", "cwd": str(cwd), "hook_event_name": "PreToolUse", "tool_name": "Bash",
            "tool_input": {"command": command}}


@pytest.mark.parametrize("command", ["systemctl stop etcd", "cargo build --release", ["ls", "-la"]],
                         ids=["action scope deny", "disk advisory", "argv"])
def test_pre_bash_decides_and_records_alike(env, tmp_path, command):
    env.user_config(PRE_BASH)
    env["BOBBIN_ROLE"] = "polecat-3"
    history = {"cargo:build|repo:none|cwd:none|root": {"n": 100, "p90": 1 << 50, "latest": 1}}
    write_cache(env, ENDPOINT, disk_history=history)
    got = _run(env, "pre-bash", _bash(tmp_path, command), tmp_path)
    _same(got)
    assert "pre_bash_invoked" in got["live_records"] and "action" in got["live_records"]
    if command == "systemctl stop etcd":
        assert json.loads(got["live"])["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_post_edit_notice_alike(env, tmp_path):
    write_cache(env, ENDPOINT, work_item_scopes={"yup-1": ["src/a.rs"]})
    repo = Repo(tmp_path / "repo", env).config(
        f'[yupana.policy]\nmode = "advise"\nwork_item_scope = "advise"\n'
        f'[yupana.quipu]\nenabled = true\nendpoint = "{ENDPOINT}"\n')
    crew = tmp_path / "shanty" / "crew" / "agent-7"
    crew.mkdir(parents=True)
    (crew / "plate.json").write_text(json.dumps({"item": "yup-1", "at": int(time.time()), "session": None}))
    env.update(SHANTY_ROOT=str(tmp_path / "shanty"), SHANTY_AGENT="agent-7")
    payload = dict(repo.payload(rel="src/z.rs"), hook_event_name="PostToolUse")
    got = _run(env, "post-edit", payload, repo.root)
    _same(got)
    assert "outside the observed ground" in got["live"] and got["live_records"] == ["scope_notice", "post_edit_invoked"]


def test_every_registered_hook_is_covered_here():
    assert set(registry.CLIENT_HOOKS) == {"pre-edit", "pre-bash", "post-edit"}  # a new hook adds its case above
    # git's pre-push runs commands and is never rehearsed: tests/commands/test_landing.py runs it for real
    assert {n for n, h in registry.HOOKS.items() if h.protocol == "git"} == {"pre-push"}
