"""post-edit: the advise rung's out-of-ground notice as PostToolUse additionalContext."""

from __future__ import annotations

import json
import time

import pytest
from guard_kit import Repo, hook, write_cache

from yupana.hooks.post_edit import SILENT

ENDPOINT = "http://127.0.0.1:9"
SCOPES = {"yup-1": ["src/a.rs", "src/b.rs"], "yup-3": ["src/z.rs", "src/q.rs"], "yup-5": ["src/z.rs"]}


def _config(mode: str = "advise", rung: str = "advise") -> str:
    return (f'[yupana.policy]\nmode = "{mode}"\nwork_item_scope = "{rung}"\n'
            f'[yupana.quipu]\nenabled = true\nendpoint = "{ENDPOINT}"\ndialect = "quipu"\n')


@pytest.fixture
def repo(tmp_path, env):
    write_cache(env, ENDPOINT, work_item_scopes=SCOPES, work_item_status={"yup-3": "closed", "yup-5": "abandoned"})
    repo = Repo(tmp_path / "repo", env).config(_config())
    crew = tmp_path / "shanty" / "crew" / "agent-7"
    crew.mkdir(parents=True)
    (crew / "plate.json").write_text(json.dumps({"item": "yup-1", "at": int(time.time()), "session": None}))
    env["SHANTY_ROOT"] = str(tmp_path / "shanty")
    env["SHANTY_AGENT"] = "agent-7"
    return repo


def _post(repo, rel: str) -> dict:
    payload = repo.payload(rel=rel)
    payload["hook_event_name"] = "PostToolUse"
    payload["tool_response"] = {"filePath": str(repo.root / rel), "success": True}
    return payload


def test_out_of_ground_edit_tells_the_model_what_the_graph_knows(env, repo):
    result = hook(env, _post(repo, "src/z.rs"), event="post-edit")
    assert set(result.out) == {"hookSpecificOutput"}
    specific = result.out["hookSpecificOutput"]
    assert specific["hookEventName"] == "PostToolUse" and set(specific) == {"hookEventName", "additionalContext"}
    text = specific["additionalContext"]
    assert "outside the observed ground of work item `yup-1`" in text and "Nothing was blocked" in text
    assert "`yup-3` (closed)" in text and "`yup-5` (abandoned)" in text
    assert "(policy fresh, cache age" in text
    [notice] = env.records("scope_notice")
    assert notice["item"] == "yup-1" and notice["rule"] == "scope-observed:yup-1" and notice["point"] == "PAA"


def test_unknown_path_says_no_prior_work(env, repo):
    text = hook(env, _post(repo, "src/new.rs"), event="post-edit").context
    assert "No tracked work item's commits have touched src/new.rs" in text


def test_inside_the_ground_is_silent(env, repo):
    assert hook(env, _post(repo, "src/a.rs"), event="post-edit").allowed_silently
    assert not env.records("scope_notice")


def test_silent_when_it_cannot_speak_honestly(env, repo, tmp_path):
    # no scope for the item
    (tmp_path / "shanty" / "crew" / "agent-7" / "plate.json").write_text(
        json.dumps({"item": "yup-404", "at": int(time.time())}))
    assert hook(env, _post(repo, "src/z.rs"), event="post-edit").allowed_silently
    # no plate
    del env["SHANTY_ROOT"]
    assert hook(env, _post(repo, "src/z.rs"), event="post-edit").allowed_silently


def test_silent_without_a_servable_cache_or_when_the_rung_is_off(env, repo, tmp_path):
    repo.config(_config("advise", "off"))
    assert hook(env, _post(repo, "src/z.rs"), event="post-edit").allowed_silently
    repo.config(_config("off", "advise"))
    assert hook(env, _post(repo, "src/z.rs"), event="post-edit").allowed_silently
    repo.config(_config())
    env.cache_path.unlink()
    assert hook(env, _post(repo, "src/z.rs"), event="post-edit").allowed_silently
    assert not env.records("scope_notice")


@pytest.mark.parametrize("stdin", [b"", b"garbage", b"{}", b'{"tool_name": "Edit", "tool_input": 7}'])
def test_malformed_payloads_are_silent(env, repo, stdin):
    result = hook(env, stdin, event="post-edit")
    assert result.allowed_silently
    # not JSON at all: the debug log says why nothing was checked; JSON without a file says nothing
    assert ("stdin is not a JSON object" in result.stderr) is (stdin in (b"", b"garbage"))


def test_codex_patch_notices_each_file_outside(env, repo):
    patch = ("*** Begin Patch\n*** Add File: src/z.rs\n+fn z() {}\n*** Add File: src/b.rs\n+fn b() {}\n"
             "*** Add File: docs/n.md\n+hello\n*** End Patch\n")
    payload = repo.patch(patch)
    payload["hook_event_name"] = "PostToolUse"
    text = hook(env, payload, event="post-edit").context
    assert "src/z.rs" in text and "docs/n.md" in text and "your edit to src/b.rs" not in text
    assert len(env.records("scope_notice")) == 2


# ── the per-invocation record ──────────────────────────────────────────────────────────


def _invoked(env) -> list[dict]:
    return env.records("post_edit_invoked")


def test_a_notice_ends_in_one_post_edit_invoked_record(env, repo):
    hook(env, _post(repo, "src/z.rs"), event="post-edit")
    records = env.records()
    [invoked] = _invoked(env)
    assert records[-1] == invoked  # the invocation's last record, after its scope_notice
    assert invoked["result"] == "notice" and invoked["notices"] == 1 and "reason" not in invoked
    assert invoked["parsed"] is True and invoked["item"] == "yup-1"
    assert invoked["session"] == "sess-1" and invoked["tool"] == "Edit" and invoked["client"] == "claude-code"
    assert invoked["tool_use_id"] == "toolu_1"
    guard = hook(env, dict(_post(repo, "src/z.rs"), hook_event_name="PreToolUse"))  # pre-edit, same file
    assert guard.allowed_silently or guard.out  # it ran; its record names the same project
    assert invoked["project"] == env.records("guard")[-1]["project"] and len(invoked["project"]) == 16
    assert isinstance(invoked["duration_ms"], float) and 0 <= invoked["duration_ms"] < 10_000


def test_every_silent_invocation_is_recorded_with_its_reason(env, repo, tmp_path):
    plate = tmp_path / "shanty" / "crew" / "agent-7" / "plate.json"
    hook(env, _post(repo, "src/a.rs"), event="post-edit")  # inside the ground
    plate.write_text(json.dumps({"item": "yup-404", "at": int(time.time())}))
    hook(env, _post(repo, "src/z.rs"), event="post-edit")  # the item has no observed scope
    plate.write_text(json.dumps({"item": "yup-1", "at": int(time.time())}))
    env.cache_path.unlink()
    hook(env, _post(repo, "src/z.rs"), event="post-edit")  # no servable cache
    repo.config('[yupana.policy]\nmode = "advise"\nwork_item_scope = "advise"\n')
    hook(env, _post(repo, "src/z.rs"), event="post-edit")  # the governed plane is not configured
    repo.config(_config("advise", "off"))
    hook(env, _post(repo, "src/z.rs"), event="post-edit")  # the rung is off
    repo.config(_config())
    del env["SHANTY_ROOT"]
    hook(env, _post(repo, "src/z.rs"), event="post-edit")  # no plate
    repo.config('[yupana.policy]\nmode = "sometimes"\n')
    hook(env, _post(repo, "src/z.rs"), event="post-edit")  # a configuration error
    hook(env, b"garbage", event="post-edit")
    hook(env, b"{}", event="post-edit")
    records = _invoked(env)
    assert [(r["result"], r["reason"]) for r in records] == [("silent", reason) for reason in (
        "inside-ground", "no-scope", "no-cache", "not-configured", "rung-off", "no-plate", "config-error",
        "unparsed", "no-file")]
    assert [r["parsed"] for r in records] == [True] * 7 + [False, True]
    assert {r["reason"] for r in records} | {"internal"} == set(SILENT)  # every documented reason, seen (internal: below)
    assert all(isinstance(r["duration_ms"], float) for r in records)
    assert "session" not in records[-2] and records[-1].get("session") is None  # nothing to name
    assert not env.records("scope_notice")


def test_an_internal_error_is_silent_and_still_recorded(env, repo):
    write_cache(env, ENDPOINT, work_item_scopes={"yup-1": 7})  # a scope that is not a list of paths
    result = hook(env, _post(repo, "src/z.rs"), event="post-edit")
    assert result.allowed_silently and "post-edit notice skipped" in result.stderr
    [invoked] = _invoked(env)
    assert (invoked["result"], invoked["reason"]) == ("silent", "internal")
