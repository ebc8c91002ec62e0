"""The work-item scope ladder through the real pre-edit hook: observed, derived, unknown."""

from __future__ import annotations

import json
import time

import pytest
from guard_kit import Repo, hook, write_cache

ENDPOINT = "http://127.0.0.1:9"
SCOPES = {"yup-1": ["src/a.rs", "src/b.rs"], "epic-9": ["src/c.rs"]}
PARENTS = {"yup-2": "epic-9"}


def _config(mode: str = "enforce", rung: str = "enforce") -> str:
    return (f'[yupana.policy]\nmode = "{mode}"\nwork_item_scope = "{rung}"\n'
            f'[yupana.quipu]\nenabled = true\nendpoint = "{ENDPOINT}"\ndialect = "quipu"\n')


@pytest.fixture
def repo(tmp_path, env):
    write_cache(env, ENDPOINT, work_item_scopes=SCOPES, work_item_parents=PARENTS)
    return Repo(tmp_path / "repo", env).config(_config())


def _plate(env, tmp_path, item: str | None, age: int = 0) -> None:
    crew = tmp_path / "shanty" / "crew" / "agent-7"
    crew.mkdir(parents=True, exist_ok=True)
    (crew / "plate.json").write_text(json.dumps({"item": item, "at": int(time.time()) - age, "session": None}))
    env["SHANTY_ROOT"] = str(tmp_path / "shanty")
    env["SHANTY_AGENT"] = "agent-7"


def test_observed_rung_denies_outside_the_ground_under_enforce(env, repo, tmp_path):
    _plate(env, tmp_path, "yup-1")
    assert hook(env, repo.payload(rel="src/a.rs")).allowed_silently
    result = hook(env, repo.payload(rel="src/z.rs"))
    assert result.denied and "observed scope of work item `yup-1`" in result.reason
    assert "(policy fresh, cache age" in result.reason
    scope = env.records("scope")
    assert [(r["provenance"], r["result"], r["item"]) for r in scope] == [("observed", "allow", "yup-1"),
                                                                           ("observed", "deny", "yup-1")]
    guard = env.records("guard")[-1]
    assert guard["item"] == "yup-1" and guard["rule"] == "scope-observed:yup-1"


@pytest.mark.parametrize("mode,rung", [("advise", "enforce"), ("enforce", "advise")])
def test_the_lower_setting_wins(env, repo, tmp_path, mode, rung):
    repo.config(_config(mode, rung))
    _plate(env, tmp_path, "yup-1")
    result = hook(env, repo.payload(rel="src/z.rs"))
    assert not result.denied and "yup-1" in result.message
    assert env.records("scope")[-1]["result"] == "advise"


def test_rung_off_is_silent(env, repo, tmp_path):
    repo.config(_config("enforce", "off"))
    _plate(env, tmp_path, "yup-1")
    assert hook(env, repo.payload(rel="src/z.rs")).allowed_silently
    assert not env.records("scope")


def test_derived_rung_never_denies_and_allows_inside(env, repo, tmp_path):
    _plate(env, tmp_path, "yup-2")
    assert hook(env, repo.payload(rel="src/c.rs")).allowed_silently
    result = hook(env, repo.payload(rel="src/z.rs"))
    assert not result.denied and "derived" in result.message and "epic-9" in result.message
    assert [(r["provenance"], r["parent"], r["result"]) for r in env.records("scope")] == [
        ("derived", "epic-9", "allow"), ("derived", "epic-9", "advise")]


def test_unknown_scope_advises_once_per_session_for_an_identified_tenant(env, repo, tmp_path):
    _plate(env, tmp_path, "yup-404")
    first = hook(env, repo.payload(rel="src/z.rs"), "--tenant", "polecat-3")
    assert not first.denied and "UNKNOWN" in first.message and "polecat-3" in first.message
    assert hook(env, repo.payload(rel="src/y.rs"), "--tenant", "polecat-3").allowed_silently
    assert [r["provenance"] for r in env.records("scope")] == ["unknown", "unknown"]
    assert env.records("guard")[-1]["constraints"][0]["outcome"] == "unknown"


def test_unknown_scope_without_tenant_is_silent(env, repo, tmp_path):
    _plate(env, tmp_path, "yup-404")
    assert hook(env, repo.payload(rel="src/z.rs")).allowed_silently


def test_stale_or_missing_plate_is_unknown(env, repo, tmp_path):
    _plate(env, tmp_path, "yup-1", age=14401)
    result = hook(env, repo.payload(rel="src/z.rs"), "--tenant", "t")
    assert not result.denied and "stale" in result.message
    env["YUPANA_PLATE_MAX_AGE_SECS"] = "20000"
    assert hook(env, repo.payload(rel="src/z.rs", session="s-2"), "--tenant", "t").denied


def test_declared_scope_takes_precedence_over_the_ladder(env, repo, tmp_path):
    repo.config(_config() + '[yupana.policy.scopes.polecat-3]\nallow_paths = ["src/**"]\n')
    _plate(env, tmp_path, "yup-1")
    assert hook(env, repo.payload(rel="src/z.rs"), "--tenant", "polecat-3").allowed_silently
    assert not env.records("scope")


def test_stale_projection_is_stated(env, tmp_path):
    write_cache(env, ENDPOINT, age=1000, work_item_scopes=SCOPES, work_item_parents=PARENTS)
    repo = Repo(tmp_path / "repo", env).config(_config())
    _plate(env, tmp_path, "yup-1")
    result = hook(env, repo.payload(rel="src/z.rs"))
    assert result.denied and "policy STALE: cache age 100" in result.reason
    assert env.records("guard")[-1]["policy_freshness"] == "stale"
