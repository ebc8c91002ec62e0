"""``yupana status``'s per-client hook health through the real CLI, without the clients themselves
(tests/clients runs the same under the real Claude Code and Codex): registration files,
Codex trust tables, and the ``client`` / ``project`` fields of the invocation records."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

CONFIG = '[yupana.policy]\nmode = "enforce"\ndeadline_ms = 2000\n[yupana.policy.scopes.t]\ndeny_paths = ["secrets/**"]\n'


@pytest.fixture
def root(tmp_path, env) -> Path:
    root = tmp_path / "repo"
    (root / ".bobbin").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / ".bobbin" / "config.toml").write_text(CONFIG)
    env["CODEX_HOME"] = str(env.home / ".codex")
    env["PATH"] = "/usr/bin:/bin"  # no claude, no codex on PATH: found only by their directories
    return root


def status(yupana, root: Path) -> tuple[int, dict]:
    done = yupana("status", "--json", "--offline", cwd=root)
    return done.returncode, json.loads(done.stdout)


def edit_payload(root: Path, **extra) -> str:
    return json.dumps({"session_id": "s1", "cwd": str(root), "hook_event_name": "PreToolUse", "tool_name": "Write",
                       "tool_input": {"file_path": str(root / "src" / "a.rs"), "content": "x"}, **extra})


def handler(command: str, timeout: int | None = 5) -> dict:
    out = {"type": "command", "command": command}
    if timeout is not None:
        out["timeout"] = timeout
    return out


def test_no_client_on_the_machine_is_not_found_and_not_degraded(yupana, root):
    code, out = status(yupana, root)
    assert code == 0 and out["clients"]["state"] == "ok"
    assert out["clients"]["claude-code"]["state"] == "not-found" and out["clients"]["codex"]["state"] == "not-found"


def test_the_invocation_records_name_their_client_and_project(yupana, env, root):
    yupana("--tenant", "t", "hook", "pre-edit", stdin=edit_payload(root, prompt_id="p1"), cwd=root)
    yupana("hook", "pre-edit", stdin=edit_payload(root), cwd=root)  # a bare Write: Claude Code's tool
    bash = {"session_id": "s2", "turn_id": "t1", "cwd": str(root), "hook_event_name": "PreToolUse",
            "tool_name": "Bash", "tool_input": {"command": "ls"}}
    yupana("hook", "pre-bash", stdin=json.dumps(bash), cwd=root)
    anonymous = dict(bash, turn_id=None)
    del anonymous["turn_id"]
    yupana("hook", "pre-bash", stdin=json.dumps(anonymous), cwd=root)
    guards, invoked = env.records("guard"), env.records("pre_bash_invoked")
    assert [g["client"] for g in guards] == ["claude-code", "claude-code"]
    assert [r.get("client") for r in invoked] == ["codex", None]
    assert len({r["project"] for r in guards + invoked}) == 1 and str(root) not in json.dumps(guards + invoked)
    _code, out = status(yupana, root)
    assert out["clients"]["project_key"] == guards[0]["project"]
    newest = out["clients"]["codex"]["last_seen"]["record"]
    assert (newest["kind"], newest["hook"], newest["tool"], newest["result"]) == ("pre_bash_invoked", "pre-bash",
                                                                                   "Bash", "parsed")


def test_claude_registered_by_hand_reports_wrapper_timeout_and_never_invoked(yupana, env, root):
    settings = env.home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps({"hooks": {"PreToolUse": [
        {"matcher": "Edit|Write", "hooks": [handler("yupana hook pre-edit", timeout=2)]}]}}))
    code, out = status(yupana, root)
    claude = out["clients"]["claude-code"]
    assert code == 3 and claude["state"] == "degraded" and claude["found_by"] == ["~/.claude"]
    [reg] = claude["registrations"]
    assert reg["scope"] == "user" and [(h["event"], h["timeout"], h["wrapped"]) for h in reg["hooks"]] == [
        ("pre-edit", 2, False)]
    problems = {p["problem"]: p for p in claude["problems"]}
    assert problems["pre-edit timeout 2s is not above deadline_ms 2000: the client cancels the hook first, and a "
                    "cancelled hook is an allow"]["degraded"] is False
    assert not problems["pre-edit is registered without the skew-proof wrapper"]["degraded"]
    assert problems["not registered: pre-bash, post-edit"]["fix"] == "`yupana install claude`"
    assert [p["degraded"] for p in claude["problems"] if "never invoked" in p["problem"]] == [True]

    yupana("hook", "pre-edit", stdin=edit_payload(root, prompt_id="p1"), cwd=root)
    code, out = status(yupana, root)
    assert code == 0 and out["clients"]["claude-code"]["state"] == "ok"


def test_a_record_from_another_project_or_an_older_yupana_does_not_count(yupana, env, root, tmp_path):
    settings = root / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps({"hooks": {"PreToolUse": [
        {"matcher": "Edit|Write", "hooks": [handler("out=$(yupana hook pre-edit 2>/dev/null) || exit 0")]}]}}))
    other = tmp_path / "other"
    (other / ".git").mkdir(parents=True)
    yupana("hook", "pre-edit", stdin=edit_payload(other, prompt_id="p1"), cwd=other)
    env.spool_path.parent.mkdir(parents=True, exist_ok=True)
    with env.spool_path.open("a") as fh:
        fh.write(json.dumps({"kind": "guard", "ts": 1, "result": "allow", "tool": "Write"}) + "\n")
    code, out = status(yupana, root)
    assert code == 3 and out["clients"]["claude-code"]["last_seen"]["at"] is None
    assert out["clients"]["unattributed_records"] == 1
    text = yupana("status", "--offline", cwd=root).stdout.decode()
    assert "1 older invocation record(s) name no client/project" in text


@pytest.mark.parametrize("state,trust,words", [
    ("", "untrusted", "is not trusted"),
    ('[hooks.state."{key}"]\ntrusted_hash = "sha256:0000"\n', "modified", "changed since it was trusted"),
    ('[hooks.state."{key}"]\nenabled = false\n', "disabled", "is disabled in config.toml"),
])
def test_a_codex_hook_codex_would_skip_is_degraded_with_the_fix(yupana, env, root, state, trust, words):
    home = env.home / ".codex"
    home.mkdir()
    (home / "hooks.json").write_text(json.dumps({"hooks": {"PreToolUse": [
        {"matcher": "apply_patch", "hooks": [handler("out=$(yupana hook pre-edit 2>/dev/null) || exit 0")]}]}}))
    key = f"{home / 'hooks.json'}:pre_tool_use:0:0"
    (home / "config.toml").write_text(state.format(key=key))
    code, out = status(yupana, root)
    codex = out["clients"]["codex"]
    [hook] = codex["registrations"][0]["hooks"]
    assert (hook["key"], hook["trust"]) == (key, trust) and hook["current_hash"].startswith("sha256:")
    assert code == 3 and codex["state"] == "degraded"
    [problem] = [p for p in codex["problems"] if words in p["problem"]]
    assert problem["degraded"] and "yupana install codex" in problem["fix"]
    assert "codex exec` skips it silently" in problem["problem"]


def test_status_lists_every_client_of_the_registry_with_its_install_command(yupana, env, root):
    from yupana import clients

    (env.home / ".codex").mkdir()
    _code, out = status(yupana, root)
    assert out["clients"]["names"] == list(clients.names())
    for row in clients.ROWS:
        entry = out["clients"][row.name]
        assert entry["label"] == row.label and entry["install"] == f"yupana install {row.install}"
        assert set(entry["last_seen"]["by_hook"]) == {"pre-edit", "pre-bash", "post-edit"}
    assert out["clients"]["codex"]["state"] == "not-registered"
    text = yupana("status", "--offline", cwd=root).stdout.decode()
    assert "yupana hooks NOT registered (`yupana install codex`)" in text
