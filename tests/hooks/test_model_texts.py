"""Issue 22 §3: what the model reads never explains how to disarm the guard.

Every hook is driven through the real CLI in many scenarios — each plane's deny and advice,
store down, a stale cache whose last refresh failed, a corrupt cache, a configuration error,
a refused state file, the recurrence advisory — under both clients' protocols (Claude Code's
tools and Codex's ``apply_patch`` / ``turn_id``; with ``advise_audience = "both"`` so every
advisory reaches the model too), and every model-facing text is checked by
:func:`model_text_kit.forbidden`. The operator still gets the diagnostics: the checks below
also hold that they went to stderr, the systemMessage or the spool.
"""

from __future__ import annotations

import os
import time

import pytest
from guard_kit import Repo, hook, text_rule, write_cache
from model_text_kit import assert_clean, forbidden, model_texts

ENDPOINT = "http://127.0.0.1:9"
HOST = r"\b[a-z0-9-]+\.corp\.example\b"
SCOPE = """
[yupana.policy.scopes.polecat-3]
deny_paths = ["src/config.rs"]
allow_paths = ["src/**"]
deny_targets = ["service:etcd"]
max_impacted_files = 0
"""
WIRES = """
[[yupana.policy.tripwires]]
name = "auth-boundary"
paths = ["src/auth/**"]
effect = "deny"
message = "auth changes need the security workflow"

[[yupana.policy.tripwires]]
name = "hot-file"
paths = ["src/core.rs"]
effect = "throttle"
backoff_secs = 300

[[yupana.policy.tripwires]]
name = "docs-watch"
paths = ["src/notes.rs"]
effect = "warn"
"""
RULES = """
[[yupana.policy.rules]]
name = "no-ticket-in-comment"
language = "rust"
query = "(line_comment) @c"
match_type = "must-not-match"
pattern = "[A-Z]+-[0-9]+"
message = "Ticket ids belong in the tracker."
"""


def config(mode: str = "enforce", *, governed: bool = True, exposure: str = "public", extra: str = "") -> str:
    quipu = (f'[yupana.quipu]\nenabled = true\nendpoint = "{ENDPOINT}"\ndialect = "quipu"\n'
             "projection_cache_ttl_secs = 7200\nrefresh_interval_secs = 300\n") if governed else ""
    return (f'[yupana.policy]\nmode = "{mode}"\nadvise_audience = "both"\naction_scope = "{mode}"\n'
            f'exposure = "{exposure}"\n{extra}\n{SCOPE}\n{WIRES}\n{RULES}\n{quipu}')


def rules_cache(env, **kw) -> None:
    write_cache(env, ENDPOINT, text_rules=[
        text_rule("rule_no_internal_hostnames", HOST, label="no internal hostnames", rationale="hostnames leak"),
        text_rule("rule_todo", r"\bTODO\b", tier="warn")], **kw)


@pytest.fixture
def repo(tmp_path, env) -> Repo:
    repo = Repo(tmp_path / "repo", env)
    repo.file("src/lib.rs", "fn a() {}\n")
    repo.file("src/config.rs", "fn b() {}\n")
    return repo


EDITS = {  # name -> (rel, new text): one per plane's finding
    "deny_paths": ("src/config.rs", "fn b2() {}"),
    "allow_paths": ("build.rs", "fn c() {}"),
    "tripwire deny": ("src/auth/session.rs", "fn s() {}"),
    "tripwire throttle": ("src/core.rs", "fn k() {}"),
    "tripwire warn": ("src/notes.rs", "fn n() {}"),
    "local rule": ("src/lib.rs", "// see ABC-123\nfn a() {}"),
    "governed block": ("src/lib.rs", 'let h = "db1.corp.example";'),
    "governed warn": ("src/lib.rs", "// TODO later"),
    "self-protection: the project config": (".bobbin/config.toml", '[yupana.policy]\nmode = "off"'),
    "self-protection: a nested config": ("src/.bobbin/config.toml", '[yupana.policy]\nmode = "off"'),
    "self-protection: client settings": (".claude/settings.json", '{"env": {"YUPANA_POLICY__MODE": "off"}}'),
}
COMMANDS = ["systemctl restart etcd", "sed -i s/enforce/off/ .bobbin/config.toml", "rm -rf .bobbin",
            "git config core.hooksPath /dev/null", "echo '' > .git/hooks/pre-push"]


def claude_edit(repo: Repo, rel: str, text: str, session: str = "sess-1") -> dict:
    return {**repo.payload(tool="Write", rel=rel, content=text, session=session), "prompt_id": "p1"}


def codex_patch(repo: Repo, rel: str, text: str, session: str = "sess-2") -> dict:
    added = "".join(f"+{line}\n" for line in text.split("\n"))
    patch = f"*** Begin Patch\n*** Add File: {repo.root / rel}\n{added}*** End Patch\n"
    return {**repo.patch(patch, session=session), "turn_id": "t1"}


def edit_both(env, repo: Repo, rel: str, text: str, *flags: str, sessions: tuple[str, str] = ("c", "x")):
    """The same edit as Claude Code and as Codex send it: both results."""
    return [("claude-code", hook(env, claude_edit(repo, rel, text, sessions[0]), *flags)),
            ("codex", hook(env, codex_patch(repo, rel, text, sessions[1]), *flags))]


def bash_both(env, repo: Repo, command: str, *flags: str):
    base = {"session_id": "b", "cwd": str(repo.root), "hook_event_name": "PreToolUse", "tool_name": "Bash",
            "tool_input": {"command": command}}
    return [("claude-code", hook(env, {**base, "prompt_id": "p"}, *flags, event="pre-bash")),
            ("codex", hook(env, {**base, "turn_id": "t", "tool_input": {"command": ["bash", "-lc", command]}},
                           *flags, event="pre-bash"))]


def check(label: str, results, named: tuple[str, ...] = ()) -> list[str]:
    """``named``: what the call itself named, which a text may say back (model_text_kit.forbidden)."""
    texts = []
    for client, result in results:
        found = model_texts(result.stdout)
        assert_clean(f"{label} ({client})", found, named)
        texts += found
    return texts


def test_the_forbidden_patterns_catch_what_issue_22_quotes():
    assert forbidden("start the store, or correct the port in [yupana.quipu] endpoint")
    assert forbidden("the push is BLOCKED; `git push --no-verify` skips this hook")
    assert forbidden("set mode = \"off\" in .bobbin/config.toml") and forbidden("deny_paths names it")
    assert forbidden("edits are UNGUARDED until it is fixed; `yupana config check` shows the details")
    assert forbidden("export YUPANA_POLICY__MODE=off") and forbidden("git config core.hooksPath /dev/null")
    assert not forbidden("yupana: edit to src/config.rs is outside the paths this task may change; "
                         "change only the files the task names")
    # what the call itself named may be said back: the model wrote it
    refusal = "yupana: edit to .bobbin/config.toml is refused: it is one of the guard's own files"
    assert forbidden(refusal) and not forbidden(refusal, named=(".bobbin/config.toml",))


@pytest.mark.parametrize("mode", ["enforce", "advise"])
def test_every_planes_deny_and_advice_is_clean_on_both_clients(env, repo, mode):
    repo.config(config(mode))
    rules_cache(env)
    spoken = []
    for name, (rel, text) in EDITS.items():
        spoken += check(f"{mode}: {name}", edit_both(env, repo, rel, text, "--tenant", "polecat-3"), named=(rel,))
    for command in COMMANDS:
        spoken += check(f"{mode}: {command}", bash_both(env, repo, command, "--tenant", "polecat-3"))
    assert len(spoken) >= 10, spoken  # the scenarios did speak to the model
    if mode == "enforce":
        result = hook(env, claude_edit(repo, "src/config.rs", "fn z() {}"), "--tenant", "polecat-3")
        assert result.denied and "src/config.rs" in result.reason


def test_exposure_unknown_and_internal_advice_is_clean(env, repo):
    repo.config(config("enforce", exposure="internal"))
    rules_cache(env)
    check("internal exposure", edit_both(env, repo, "src/lib.rs", 'let h = "db1.corp.example";'))
    repo.config(config("enforce").replace('exposure = "public"\n', ""))
    check("unknown exposure", edit_both(env, repo, "src/lib.rs", 'let h = "db2.corp.example";'))


def test_store_down_no_cache_is_clean_and_the_operator_is_told(env, repo):
    repo.config(config("enforce"))
    results = edit_both(env, repo, "src/lib.rs", "fn a2() {}") + bash_both(env, repo, "ls")
    check("no cache", results)
    assert any("no servable projection cache" in r.stderr for _, r in results)
    assert env.records("fail_open")


def test_a_stale_cache_whose_refresh_failed_is_clean_and_the_operator_gets_the_error(env, repo):
    from yupana.state import refresh_state

    repo.config(config("enforce"))
    rules_cache(env, age=4000)
    now = int(time.time())
    error = ("unreachable: cannot connect to 127.0.0.1:9: connection refused — nothing listens on that port (is "
             "the store running?): start the store, or correct the port in [yupana.quipu] endpoint")
    refresh_state.write(str(env.cache_for(ENDPOINT)), {
        "endpoint": ENDPOINT, "last_attempt_at": now, "last_failure_at": now, "last_success_at": now - 4000,
        "last_error": error, "consecutive_failures": 3, "backoff_until": now + 600})
    results = edit_both(env, repo, "src/lib.rs", 'let h = "db1.corp.example";')
    texts = check("stale cache", results)
    assert any("STALE" in t for t in texts)  # the model still learns the policy is old
    assert any("correct the port" in r.stderr or "correct the port" in r.message for _, r in results) or \
        any("correct the port" in str(rec) for rec in env.records("served_from_cache"))


def test_a_corrupt_cache_and_a_config_error_are_clean(env, repo):
    repo.config(config("enforce"))
    path = env.cache_for(ENDPOINT)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{not json")
    check("corrupt cache", edit_both(env, repo, "src/lib.rs", "fn a3() {}") + bash_both(env, repo, "ls"))
    repo.config('[yupana.policy]\nmode = "enforce"\ndeny_paths = 3\n[yupana.policy.scopes.x\n')
    results = edit_both(env, repo, "src/lib.rs", "fn a4() {}") + bash_both(env, repo, "ls")
    check("config error", results)
    assert all("configuration error" in r.stderr for _, r in results)


def test_a_refused_state_file_is_clean(env, repo):
    repo.config(config("enforce"))
    rules_cache(env)
    throttles = env.state / "yupana" / "throttles.jsonl"
    throttles.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(throttles)
    results = edit_both(env, repo, "src/core.rs", "fn k2() {}", "--tenant", "polecat-3")
    check("refused state file", results)
    assert any("refused the state file" in r.stderr for _, r in results)


def test_the_recurrence_advisory_is_clean(env, repo):
    repo.config(config("enforce"))
    rules_cache(env)
    text = 'let host = "db1.corp.example"; let port = 5432; connect(host, port);'
    hook(env, claude_edit(repo, "src/lib.rs", text), "--tenant", "polecat-3")
    near = text.replace("db1.corp.example", "db1.corp.exemple")
    texts = check("recurrence", edit_both(env, repo, "src/lib.rs", near, "--tenant", "polecat-3"))
    assert texts or env.records("recurrence_advisory") == []



@pytest.mark.parametrize("mode", ["enforce", "advise"])
def test_a_host_memory_verdict_from_a_stale_cache_is_clean(env, mode):
    import prebash
    from yupana.state import refresh_state

    prebash.configure(env, mode=mode, extra='advise_audience = "both"')
    prebash.write_cache(env, memory_policies=[prebash.memory_policy(gib=8.0)], age_secs=1000)
    now = int(time.time())
    refresh_state.write(str(env.cache_for(prebash.CLOSED_ENDPOINT)), {
        "endpoint": prebash.CLOSED_ENDPOINT, "last_attempt_at": now, "last_failure_at": now,
        "last_success_at": now - 1000, "last_error": "unreachable: correct the port in [yupana.quipu] endpoint",
        "consecutive_failures": 1, "backoff_until": now + 600})
    extra = prebash.meminfo(env, available_gib=2.0)
    for client in ({"prompt_id": "p"}, {"turn_id": "t"}):
        payload = {"session_id": "m", "cwd": str(env.base), "hook_event_name": "PreToolUse", "tool_name": "Bash",
                   "tool_input": {"command": "cargo build"}, **client}
        proc = prebash.hook(env, None, payload=payload, extra_env=extra)
        texts = model_texts(proc.stdout.decode())
        assert texts and any("policy STALE" in t for t in texts), texts
        assert_clean(f"host memory {mode} {client}", texts)
        if mode == "enforce":
            assert "correct the port" in proc.stderr.decode()  # the operator still reads why


def test_a_blown_deadline_and_an_unmeasured_blast_radius_are_clean(env, repo):
    repo.config(config("enforce", extra="deadline_ms = 1\nverify = true"))
    rules_cache(env)
    big = "\n".join(f"fn f{i}() {{ let h = \"db{i}.corp.example\"; }}" for i in range(3000))
    results = edit_both(env, repo, "src/lib.rs", big, "--tenant", "polecat-3")
    texts = check("deadline", results)
    kinds = {r["fail_kind"] for r in env.records("fail_open")}
    assert "deadline" in kinds, kinds  # the scenario did run out of time
    assert any("could not be fully checked" in t for t in texts)  # Codex's model form of the notice
