"""deadline_ms bounds the analysis: a blown budget is an allow with a once-per-session UNKNOWN notice."""

from __future__ import annotations

from guard_kit import Repo, hook, text_rule, write_cache

ENDPOINT = "http://127.0.0.1:9"


def _config(deadline_ms: int) -> str:
    return (f'[yupana.policy]\nmode = "enforce"\ndeadline_ms = {deadline_ms}\n'
            '[yupana.policy.scopes.polecat-3]\ndeny_paths = ["src/config.rs"]\n'
            f'[yupana.quipu]\nenabled = true\nendpoint = "{ENDPOINT}"\ndialect = "quipu"\n')


def test_blown_deadline_allows_with_unknown_notice_once_per_session(env, tmp_path):
    # 3000 rules whose prefilter admits the edit and whose regexes do not match: slow, and clean
    write_cache(env, ENDPOINT, text_rules=[text_rule(f"r{i}", rf"zq{i}\d{{40}}", tier="warn") for i in range(3000)])
    repo = Repo(tmp_path / "repo", env).config(_config(60000))
    payload = repo.payload(rel="src/config.rs", new_string="zq1 zq2")
    assert hook(env, payload, "--tenant", "polecat-3").denied  # with time to spare, the scope denies

    repo.config(_config(1))
    first = hook(env, payload, "--tenant", "polecat-3")
    assert not first.denied and "deadline" in first.message and "UNKNOWN" in first.message
    second = hook(env, payload, "--tenant", "polecat-3")
    assert second.allowed_silently and "deadline" in second.stderr
    guard = env.records("guard")[-1]
    assert guard["result"] == "allow"
    assert {"id": "deadline", "plane": "guard", "outcome": "unknown", "response": "logged"} in guard["constraints"]
    assert [r["fail_kind"] for r in env.records("fail_open")] == ["deadline", "deadline"]
    assert env.records("fail_open")[0]["stage"] in ("verify", "scope")
