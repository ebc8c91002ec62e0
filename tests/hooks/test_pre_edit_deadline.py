"""deadline_ms bounds the analysis, never the decisive path-only checks (issue 9 §2).

A blown budget leaves the expensive checks UNKNOWN: a ``deadline`` constraint and a
``fail_open`` record naming the stage that was cut on every invocation, the notice once per
session. Declared path scope, path-only tripwires and throttle records run first and a deny
they reach stands, however large the edit. Text rules on a small edit are bounded checks
and are never cut (issue 25 §3: tests/hooks/test_pre_edit_contention.py), so the cuts here
come from edits beyond the bound.
"""

from __future__ import annotations

import json

from guard_kit import Repo, hook, text_rule, write_cache

ENDPOINT = "http://127.0.0.1:9"
SLOW_RULES = [text_rule(f"r{i}", rf"zq{i}\d{{40}}", tier="warn") for i in range(3000)]  # admitted, never matching


def _config(deadline_ms: int, deny: str = "src/config.rs", verify: bool = False, extra: str = "") -> str:
    return (f'[yupana.policy]\nmode = "enforce"\ndeadline_ms = {deadline_ms}\nverify = {str(verify).lower()}\n'
            f'[yupana.policy.scopes.polecat-3]\ndeny_paths = ["{deny}"]\n{extra}'
            f'[yupana.quipu]\nenabled = true\nendpoint = "{ENDPOINT}"\ndialect = "quipu"\n')


BEYOND_BOUND = "zq1 zq2\n" * 10_000  # 80 000 characters: more than text_rules.BOUNDED_CHARS


def _huge(size: int) -> str:
    line = "fn f() { let zq1 = 1; let zq2 = 2; }\n"
    return line * (size // len(line))


def test_blown_deadline_leaves_the_analysis_unknown_with_a_notice_once_per_session(env, tmp_path):
    write_cache(env, ENDPOINT, text_rules=SLOW_RULES)
    repo = Repo(tmp_path / "repo", env).config(_config(1, deny="vendor/**"))
    payload = repo.payload(rel="src/config.rs", new_string=BEYOND_BOUND)
    first = hook(env, payload, "--tenant", "polecat-3")
    assert not first.denied and "deadline" in first.message and "UNKNOWN" in first.message
    second = hook(env, payload, "--tenant", "polecat-3")
    assert second.allowed_silently and "deadline" in second.stderr
    guard = env.records("guard")[-1]
    assert guard["result"] == "allow"
    assert any({"id": "deadline", "plane": "guard", "outcome": "unknown", "response": "logged"}.items() <= c.items()
               for c in guard["constraints"])
    # every cut edit gets its own record, the notice is once per session
    assert [r["fail_kind"] for r in env.records("fail_open")] == ["deadline", "deadline"]


def test_a_denied_path_is_denied_however_large_the_write_and_tight_the_deadline(env, tmp_path):
    write_cache(env, ENDPOINT, text_rules=SLOW_RULES)
    repo = Repo(tmp_path / "repo", env).config(_config(5, verify=True))
    for size in (200_000, 2_000_000):
        payload = repo.payload("Write", rel="src/config.rs", content=_huge(size), session=f"s{size}")
        done = hook(env, payload, "--tenant", "polecat-3")
        assert done.denied and "the denied path `src/config.rs`" in done.reason, (size, done)
        guard = env.records("guard")[-1]
        assert guard["result"] == "deny"
        assert any(c["id"] == "scope-declared:polecat-3" and c["response"] == "blocked" for c in guard["constraints"])


def test_a_path_only_deny_tripwire_stands_on_a_huge_edit(env, tmp_path):
    write_cache(env, ENDPOINT, text_rules=SLOW_RULES)
    wire = '[[yupana.policy.tripwires]]\nname = "auth"\npaths = ["src/auth/**"]\neffect = "deny"\n'
    repo = Repo(tmp_path / "repo", env).config(_config(5, deny="vendor/**", extra=wire))
    done = hook(env, repo.payload("Write", rel="src/auth/keys.rs", content=_huge(2_000_000)), "--tenant", "polecat-3")
    assert done.denied and "tripwire `auth`" in done.reason
    assert [r["name"] for r in env.records("tripwire")] == ["auth"]


def test_a_throttle_is_recorded_on_a_huge_edit_past_the_deadline(env, tmp_path):
    write_cache(env, ENDPOINT, text_rules=SLOW_RULES)
    wire = '[[yupana.policy.tripwires]]\nname = "hot"\npaths = ["src/core.rs"]\neffect = "throttle"\nbackoff_secs = 300\n'
    repo = Repo(tmp_path / "repo", env).config(_config(5, deny="vendor/**", extra=wire))
    hook(env, repo.payload("Write", rel="src/core.rs", content=_huge(2_000_000)), "--tenant", "polecat-3")
    [throttle] = env.records("throttle")
    assert throttle["constraint_id"] == "tripwire:hot" and throttle["backoff_secs"] == 300
    lines = [json.loads(x) for x in (env.state / "yupana" / "throttles.jsonl").read_text().splitlines()]
    assert lines[0]["scope"] == str(repo.root)


def test_every_cut_edit_is_recorded_and_the_notice_names_the_stage_really_cut(env, tmp_path):
    write_cache(env, ENDPOINT, text_rules=SLOW_RULES)
    repo = Repo(tmp_path / "repo", env).config(_config(1, deny="vendor/**", verify=False))
    payload = repo.payload(rel="src/config.rs", new_string=BEYOND_BOUND)
    first = hook(env, payload, "--tenant", "polecat-3")
    hook(env, payload, "--tenant", "polecat-3")
    assert "verify" not in first.message  # verify is off: it cannot be what was cut
    stages = [r["stage"] for r in env.records("fail_open") if r["fail_kind"] == "deadline"]
    assert len(stages) == 2 and set(stages) <= {"governed", "text rules"}
    assert stages[0] in first.message
    assert all(any(c["id"] == "deadline" for c in g["constraints"]) for g in env.records("guard"))


def test_grounded_rules_on_a_huge_edit_stop_at_the_deadline_and_are_named(env, tmp_path):
    """Grounded predicates tokenise and classify the whole introduced text: here ~0.7 s of
    work (decoding the payload ~20 ms), which no deadline check interrupted; now it is cut,
    and recorded under its own stage."""
    grounded = [{"iri": "urn:g", "name": "no-ticket", "label": None, "match_type": "must-not-ground",
                 "tier": "block", "rationale": None}]
    write_cache(env, ENDPOINT, grounded_rules=grounded, grounding={"ids": ["yup-12"], "prefixes": ["yup"]})
    repo = Repo(tmp_path / "repo", env).config(_config(150, deny="vendor/**"))
    body = "".join(f"w{i} p-{i} " for i in range(350_000)) + "see yup-12\n"  # ~5.5 MB, 700 000 distinct tokens
    done = hook(env, repo.payload("Write", rel="docs/notes.md", content=body), "--tenant", "polecat-3")
    assert not done.denied  # the reference at the very end was never reached: UNKNOWN, not a verdict
    [cut] = [r for r in env.records("fail_open") if r["fail_kind"] == "deadline"]
    assert cut["stage"] == "grounded rules" and "grounded rules" in done.message
    constraints = env.records("guard")[-1]["constraints"]
    assert {"id": "no-ticket", "plane": "grounded", "outcome": "unknown", "response": "logged"} in constraints
    assert any({"id": "deadline", "plane": "guard", "outcome": "unknown", "response": "logged"}.items() <= c.items()
               for c in constraints)
