"""``[yupana.metrics] record_inputs``: real hook runs keep what they judged, masked and bounded,
in ``inputs.jsonl`` beside the spool (0600); off by default; a rehearsal writes nothing."""

from __future__ import annotations

import json
import os
import stat
import time

from hooks.guard_kit import Repo, hook, text_rule, write_cache
from prebash import hook as bash_hook

ENDPOINT = "http://127.0.0.1:9"
HOST = r"\b[a-z0-9-]+\.corp\.example\b"


def _config(capture: str | None = "masked", mode: str = "enforce") -> str:
    metrics = f'[yupana.metrics]\nrecord_inputs = "{capture}"\n' if capture else ""
    return (f'[yupana.policy]\nmode = "{mode}"\n{metrics}[yupana.quipu]\nenabled = true\nendpoint = "{ENDPOINT}"\n'
            'dialect = "quipu"\nprojection_cache_ttl_secs = 7200\nrefresh_interval_secs = 300\n')


def _setup(tmp_path, env, capture: str | None = "masked") -> Repo:
    write_cache(env, ENDPOINT, text_rules=[text_rule("rule_no_internal_hostnames", HOST),
                                           text_rule("rule_todo", r"\bTODO\b", tier="warn")])
    entry = {"exposure": "public", "at": int(time.time())}  # the repository's exposure, known
    (env.cache_for(ENDPOINT).parent / "exposure.json").write_text(
        json.dumps({"version": 1, "entries": {f"{ENDPOINT}|widgets": entry}}))
    env["YUPANA_METRICS_PATH"] = str(tmp_path / "host" / "metrics.jsonl")
    return Repo(tmp_path / "repo", env).config(_config(capture))


def _captured(tmp_path) -> list[dict]:
    path = tmp_path / "host" / "inputs.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_edits_and_commands_are_captured_beside_the_spool_private_and_masked(tmp_path, env):
    repo = _setup(tmp_path, env)
    env["BOBBIN_ROLE"] = "polecat-1"
    assert hook(env, repo.payload(rel="src/net.rs", old_string="x", new_string="// TODO: later")).message
    denied = hook(env, repo.payload(rel="src/db.rs", old_string="x", new_string='let h = "db1.corp.example"; ok'))
    assert denied.denied
    bash_hook(env, "ls -la src", cwd=repo.root)
    path = tmp_path / "host" / "inputs.jsonl"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    todo, db, ls = _captured(tmp_path)
    assert todo["hook"] == "pre-edit" and todo["tool"] == "Edit" and todo["tenant"] == "polecat-1"
    assert todo["edits"] == [{"path": "src/net.rs", "op": "edit", "text": "// ***: later"}]  # a warn-tier catch too
    assert todo["decision"] == "notify" and todo["repo"] == "widgets" and todo["digest"] and todo["mode"] == "enforce"
    assert todo["masked"] == ["rule_todo"] and todo["kind"] == "input"
    assert db["decision"] == "deny" and db["exposure"] == "public" and db["masked"] == ["rule_no_internal_hostnames"]
    assert "db1.corp.example" not in path.read_text() and '"***"; ok' in db["edits"][0]["text"]
    assert ls["hook"] == "pre-bash" and ls["command"] == "ls -la src" and "edits" not in ls
    assert "cwd" not in ls  # at the project root


def test_a_command_keeps_the_directory_it_runs_in_relative_to_the_project(tmp_path, env):
    """A client keeps an agent's ``cd`` (Claude Code sends the new cwd): the capture keeps where
    the command ran, relative to the project root, so replay runs it there."""
    repo = _setup(tmp_path, env, capture="full")
    (repo.root / "src" / "deep").mkdir(parents=True)
    bash_hook(env, "ls ..", cwd=repo.root / "src" / "deep")
    [ls] = _captured(tmp_path)
    assert ls["cwd"] == "src/deep" and ls["command"] == "ls .."


def test_full_keeps_the_text_the_rules_caught(tmp_path, env):
    repo = _setup(tmp_path, env, capture="full")
    assert hook(env, repo.payload(rel="src/db.rs", old_string="x", new_string='let h = "db1.corp.example";')).denied
    (db,) = _captured(tmp_path)
    assert db["edits"][0]["text"] == 'let h = "db1.corp.example";' and "masked" not in db


def test_a_rehearsal_captures_nothing(tmp_path, env, yupana):
    repo = _setup(tmp_path, env)
    payload = repo.payload(rel="src/db.rs", old_string="x", new_string='let h = "db1.corp.example";')
    done = yupana("explain", "--hook", "pre-edit", stdin=json.dumps(payload), cwd=repo.root)
    assert done.returncode == 0, done.stderr
    assert _captured(tmp_path) == []


def test_off_by_default_nothing_is_captured(tmp_path, env):
    repo = _setup(tmp_path, env, capture=None)
    assert hook(env, repo.payload(rel="src/net.rs", old_string="x", new_string="// TODO: later")).message
    assert not (tmp_path / "host" / "inputs.jsonl").exists()
    assert (tmp_path / "host" / "metrics.jsonl").exists()


def test_the_introduced_text_is_bounded(tmp_path, env):
    repo = _setup(tmp_path, env)
    hook(env, repo.payload(tool="Write", rel="src/big.rs", content="a" * 40000))
    (big,) = _captured(tmp_path)
    assert big["truncated"] is True and len(big["edits"][0]["text"]) == 16 * 1024


def test_the_governed_agent_cannot_switch_off_a_capture_the_managed_floor_sets(tmp_path, env):
    repo = _setup(tmp_path, env, capture="off")
    env.managed_config('[yupana.metrics]\nrecord_inputs = "masked"\n')
    assert hook(env, repo.payload(rel="src/net.rs", old_string="x", new_string="let a = 1;")).allowed_silently
    (kept,) = _captured(tmp_path)
    assert kept["edits"][0]["text"] == "let a = 1;"


def test_the_file_rotates_into_one_old_slot_and_is_kept_private(tmp_path, monkeypatch):
    from yupana.state import inputs

    path = tmp_path / "inputs.jsonl"
    path.write_text('{"kind":"input","ts":1}\n')
    path.chmod(0o644)  # a file another tool left readable
    assert inputs.append({"kind": "input", "ts": 2}, str(path))
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    monkeypatch.setattr(inputs, "ROTATE_BYTES", 10)
    assert inputs.append({"kind": "input", "ts": 3}, str(path))
    assert [json.loads(x)["ts"] for x in (tmp_path / "inputs.jsonl.old").read_text().splitlines()] == [1, 2]
    assert [json.loads(x)["ts"] for x in path.read_text().splitlines()] == [3]


def test_under_advise_an_edit_keeps_what_enforce_would_have_answered(tmp_path, env):
    repo = _setup(tmp_path, env, capture="full")
    repo.config(_config("full", mode="advise"))
    assert hook(env, repo.payload(rel="src/db.rs", old_string="x", new_string='let h = "db1.corp.example";')).message
    assert hook(env, repo.payload(rel="src/ok.rs", old_string="x", new_string="let a = 1;")).allowed_silently
    db, ok = _captured(tmp_path)
    assert (db["mode"], db["decision"], db["would_deny"]) == ("advise", "notify", True)
    assert (ok["decision"], ok["would_deny"]) == ("allow", False)
    repo.config(_config("full"))
    assert hook(env, repo.payload(rel="src/db.rs", old_string="x", new_string='let h = "db1.corp.example";')).denied
    assert "would_deny" not in _captured(tmp_path)[-1]  # under enforce the decision says it
