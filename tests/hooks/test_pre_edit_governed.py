"""The governed plane through the real hook, from a real cache: text rules x exposure, grounded,
freshness (fresh / STALE with age), loud fail-open on a missing, expired or foreign cache."""

from __future__ import annotations

import json
import time

import pytest
from guard_kit import AEGIS, Repo, hook, text_rule, write_cache

ENDPOINT = "http://127.0.0.1:9"
HOST = r"\b[a-z0-9-]+\.corp\.example\b"


def _config(mode: str = "enforce", extra: str = "") -> str:
    return (f'[yupana.policy]\nmode = "{mode}"\n[yupana.quipu]\nenabled = true\nendpoint = "{ENDPOINT}"\n'
            f'dialect = "quipu"\nprojection_cache_ttl_secs = 7200\nrefresh_interval_secs = 300\n{extra}')


def _exposure(env, repo_name: str, exposure: str, reason: str | None = None) -> None:
    path = env.cache_for(ENDPOINT).parent / "exposure.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    entry = {"exposure": exposure, "at": int(time.time())}
    if reason:
        entry["reason"] = reason
    path.write_text(json.dumps({"version": 1, "entries": {f"{ENDPOINT}|{repo_name}": entry}}))


@pytest.fixture
def repo(tmp_path, env):
    repo = Repo(tmp_path / "repo", env).config(_config())
    write_cache(env, ENDPOINT, text_rules=[
        text_rule("rule_no_internal_hostnames", HOST, label="no internal hostnames",
                  exempt="(?:^tests/fixtures/)|(?:^docs/internal/)", rationale="hostnames leak topology"),
        text_rule("rule_todo", r"\bTODO\b", tier="warn"),
    ])
    return repo


def _edit(repo, text: str, rel: str = "src/net.rs", **kw):
    return repo.payload(rel=rel, old_string="let host = \"\";", new_string=text, **kw)


def test_block_rule_in_a_public_repo_denies_with_freshness(env, repo):
    _exposure(env, "widgets", "public")
    result = hook(env, _edit(repo, 'let host = "db1.corp.example";'))
    assert result.denied and set(result.out) == {"hookSpecificOutput"}
    reason = result.reason
    assert reason.startswith("yupana: edit to src/net.rs introduces `db1.corp.example`")
    assert "no internal hostnames" in reason and "public" in reason and "hostnames leak topology" in reason
    assert "(policy fresh, cache age 0s)" in reason or "(policy fresh, cache age 1s)" in reason
    [gov] = env.records("governed")
    assert gov["rules"] == ["rule_no_internal_hostnames"] and gov["exposure"] == "public"
    assert gov["repo"] == "widgets" and gov["policy_source"] == "cache" and gov["blocking"] is True
    guard = env.records("guard")[-1]
    assert guard["result"] == "deny" and guard["exposure"] == "public" and guard["repo"] == "widgets"
    assert guard["rule"] == "rule_no_internal_hostnames" and guard["policy_freshness"] == "fresh"
    assert guard["session"] == "sess-1"
    assert not env.records("served_from_cache") and not env.records("fail_open")


def test_internal_repo_downgrades_and_says_so(env, repo):
    _exposure(env, "widgets", "internal")
    result = hook(env, _edit(repo, "db1.corp.example"))
    assert not result.denied and "downgraded to a warning" in result.message and "internal" in result.message
    assert result.message.startswith("yupana (governed, not blocking)")
    assert env.records("guard")[-1]["exposure"] == "internal"


def test_unknown_exposure_warns_and_looks_it_up_in_the_background(env, repo):
    t0 = time.monotonic()
    result = hook(env, _edit(repo, "db1.corp.example"))
    assert not result.denied and "exposure of repo `widgets` is unknown" in result.message
    assert env.records("guard")[-1]["exposure"] == "unknown"
    # one detached lookup writes its (failed: nothing listens) answer for next time
    path = env.cache_for(ENDPOINT).parent / "exposure.json"
    end = time.monotonic() + 20
    while time.monotonic() < end and not path.exists():
        time.sleep(0.05)
    entry = json.loads(path.read_text())["entries"][f"{ENDPOINT}|widgets"]
    assert entry["exposure"] == "unknown" and entry["reason"]
    assert time.monotonic() - t0 < 30


def test_repo_without_origin_is_unresolved(env, tmp_path):
    repo = Repo(tmp_path / "bare", env, origin=None).config(_config())
    write_cache(env, ENDPOINT, text_rules=[text_rule("rule_no_internal_hostnames", HOST)])
    result = hook(env, _edit(repo, "db1.corp.example"))
    assert not result.denied and "no origin remote" in result.message
    assert env.records("guard")[-1]["repo"] == "unresolved"


def test_warn_tier_notifies_without_asking_exposure(env, repo):
    result = hook(env, _edit(repo, "// TODO: later"))
    assert not result.denied and "rule_todo" in result.message
    assert env.records("governed")[0]["exposure"] == "n/a"
    assert not (env.cache_for(ENDPOINT).parent / "exposure.json").exists()


def test_exemptions_and_unchanged_text(env, repo):
    _exposure(env, "widgets", "public")
    assert hook(env, _edit(repo, "db1.corp.example", rel="tests/fixtures/hosts.rs")).allowed_silently
    assert hook(env, _edit(repo, "db1.corp.example", rel="docs/internal/net.md")).allowed_silently
    unchanged = repo.payload(rel="src/net.rs", old_string="db1.corp.example", new_string="localhost")
    assert hook(env, unchanged).allowed_silently
    assert hook(env, repo.payload(rel="src/net.rs", old_string="db1.corp.example x", new_string="")).allowed_silently


def test_exemption_is_relative_to_the_files_git_top_not_the_session(env, repo, tmp_path):
    _exposure(env, "widgets", "public")
    payload = _edit(repo, "db1.corp.example", rel="tests/fixtures/a.rs")
    payload["cwd"] = str(tmp_path)  # the session root is above the repository
    assert hook(env, payload).allowed_silently


def test_advise_never_blocks(env, repo):
    repo.config(_config("advise"))
    _exposure(env, "widgets", "public")
    result = hook(env, _edit(repo, "db1.corp.example"))
    assert not result.denied and "enforce would deny" in result.message


def test_stale_cache_is_enforced_and_states_its_age(env, repo):
    write_cache(env, ENDPOINT, age=4000, text_rules=[text_rule("rule_no_internal_hostnames", HOST)])
    _exposure(env, "widgets", "public")
    result = hook(env, _edit(repo, "db1.corp.example"))
    assert result.denied and "policy STALE: cache age 400" in result.reason
    [served] = env.records("served_from_cache")
    assert served["age_secs"] >= 4000 and served["ttl_secs"] == 7200 and served["reason"]
    assert served["hook"] == "pre-edit" and served["session"] == env.records("guard")[-1]["session"]
    assert env.records("guard")[-1]["policy_freshness"] == "stale"
    assert env.records("governed")[0]["policy_age_secs"] >= 4000
    assert not env.records("fail_open")


@pytest.mark.parametrize("setup,label", [
    (lambda env: None, "no projection cache"),
    (lambda env: write_cache(env, ENDPOINT, age=8000), "past projection_cache_ttl_secs"),
    # another store's cache copied into this store's directory (each store has its own)
    (lambda env: write_cache(env, "http://other-store:3030", path=env.cache_for(ENDPOINT)), "refusing another deployment"),
])
def test_no_servable_cache_fails_open_loudly(env, tmp_path, setup, label):
    repo = Repo(tmp_path / "repo", env).config(_config())
    setup(env)
    first = hook(env, _edit(repo, "db1.corp.example", session="s-x"))
    assert not first.denied and set(first.out) == {"systemMessage"}
    assert "failed open" in first.message and label in first.message and "NOT enforced" in first.message
    assert label in first.stderr
    second = hook(env, _edit(repo, "db1.corp.example", session="s-x"))
    assert second.allowed_silently and "failed open" in second.stderr
    fails = env.records("fail_open")
    assert [r["fail_kind"] for r in fails] == ["projection", "projection"] and fails[0]["miss"]
    assert not env.records("served_from_cache")
    guard = env.records("guard")[-1]
    assert guard["constraints"][0] == {"id": "projection", "plane": "governed", "outcome": "unknown",
                                       "response": "logged"}


def test_notify_on_fail_open_false_keeps_the_pane_quiet_but_not_the_record(env, tmp_path):
    quiet = _config().replace('mode = "enforce"\n', 'mode = "enforce"\nnotify_on_fail_open = false\n', 1)
    repo = Repo(tmp_path / "repo", env).config(quiet)
    result = hook(env, _edit(repo, "db1.corp.example", session="s-quiet"))
    assert result.allowed_silently  # no systemMessage in the user's pane
    assert "failed open" in result.stderr and "no projection cache" in result.stderr
    assert [r["fail_kind"] for r in env.records("fail_open")] == ["projection"]


def test_rule_that_does_not_compile_fails_open_and_the_rest_still_apply(env, repo):
    write_cache(env, ENDPOINT, text_rules=[text_rule("rule_no_internal_hostnames", HOST),
                                           text_rule("rule_broken", "corp(")])
    _exposure(env, "widgets", "public")
    result = hook(env, _edit(repo, "db1.corp.example corp("))
    assert result.denied and "rule_no_internal_hostnames" in result.reason
    assert "rule_broken" in result.out["systemMessage"] and "did not compile" in result.out["systemMessage"]
    assert [r["fail_kind"] for r in env.records("fail_open")] == ["projection-rules"]


def test_grounded_rules(env, repo):
    grounded = [{"iri": AEGIS + "pred_no_ticket", "name": "no-ticket", "label": "no ticket ids",
                 "match_type": "must-not-ground", "tier": "block", "rationale": None}]
    write_cache(env, ENDPOINT, grounded_rules=grounded,
                grounding={"ids": ["yup-12"], "prefixes": ["yup"]})
    result = hook(env, _edit(repo, "// see yup-99"))
    assert result.denied and "`yup-99`" in result.reason and "fabricated" in result.reason
    assert env.records("governed")[0]["rules"] == ["no-ticket#fabricated-reference"]
    assert env.records("governed")[0]["exposure"] == "n/a"
    write_cache(env, ENDPOINT, grounded_rules=grounded, grounding=None)
    unknown = hook(env, _edit(repo, "// see yup-99"))
    assert not unknown.denied and "not evaluated" in unknown.message and "`no-ticket`" in unknown.message
    assert env.records("guard")[-1]["constraints"][0]["outcome"] == "unknown"


@pytest.mark.parametrize("config", [
    _config("off"),
    '[yupana.policy]\nmode = "enforce"\n[yupana.quipu]\nenabled = false\nendpoint = "http://127.0.0.1:9"\n',
    '[yupana.policy]\nmode = "enforce"\n[yupana.quipu]\nenabled = true\nendpoint = ""\n',
])
def test_governed_plane_is_not_consulted_unless_armed(env, tmp_path, config):
    repo = Repo(tmp_path / "repo", env).config(config)
    assert hook(env, _edit(repo, "db1.corp.example")).allowed_silently
    assert not env.records("governed") and not env.records("fail_open")


def test_a_patch_keeps_the_exposure_its_text_rule_was_judged_by(env, tmp_path):
    repo = Repo(tmp_path / "repo", env).config(_config(mode="advise"))
    write_cache(env, ENDPOINT, text_rules=[text_rule("rule_no_internal_hostnames", HOST)],
                grounded_rules=[{"iri": AEGIS + "pred_ids", "name": "no-ids", "label": None,
                                 "match_type": "must-not-ground", "tier": "warn", "rationale": None}],
                grounding={"ids": ["FRT-1"], "prefixes": ["FRT"]})
    _exposure(env, "widgets", "public")
    patch = ("*** Begin Patch\n*** Add File: src/a.rs\n+// db1.corp.example\n"
             "*** Add File: src/b.rs\n+// see FRT-1\n*** End Patch\n")
    result = hook(env, repo.patch(patch))
    assert "db1.corp.example" in result.message and "FRT-1" in result.message
    guard = env.records("guard")[-1]
    assert guard["exposure"] == "public" and guard["repo"] == "widgets"


# ── a twin too large to derive in a hook (issue 12 §1: the first hook after an upgrade) ──


def test_a_large_catalogue_without_its_twin_fails_open_loudly_and_a_worker_derives_it(env, tmp_path):
    """No usable hot twin and a JSON past the inline bound: the hook does not spend seconds
    deriving 4,000 rules' prefilters; it fails open loudly (the `rebuilding` miss), starts the
    twin worker, and the next edit is judged by the rebuilt twin."""
    import os

    from yupana.state import cache

    repo = Repo(tmp_path / "big", env).config(_config())
    rules = [text_rule(f"rule_{i:05d}", rf"\bcodename{i:05d}\b", tier="block") for i in range(4000)]
    write_cache(env, ENDPOINT, text_rules=rules + [text_rule("rule_no_internal_hostnames", HOST)])
    _exposure(env, "widgets", "public")
    path = env.cache_for(ENDPOINT)
    assert os.path.getsize(path) > cache.INLINE_DERIVE_BYTES
    os.unlink(cache.hot_path_for(str(path)))  # as after an upgrade that changed the twin's format
    started = time.monotonic()
    first = hook(env, _edit(repo, "db1.corp.example"))
    assert not first.denied and "too large to derive inside a hook; a worker is deriving it" in first.stderr
    assert "failed open" in first.message and "NOT enforced" in first.message
    [failed] = env.records("fail_open")
    assert failed["miss"] == "rebuilding"
    assert time.monotonic() - started < 5
    deadline = time.monotonic() + 60
    while not os.path.exists(cache.hot_path_for(str(path))) and time.monotonic() < deadline:
        time.sleep(0.2)
    found, miss = cache.read(str(path))
    assert miss is None and len(found.text_rules) == 4001
    second = hook(env, _edit(repo, "db1.corp.example"))
    assert second.denied and "rule_no_internal_hostnames" in second.reason


def test_a_codex_patch_across_repositories_records_the_deciding_files_exposure_and_repo(env, tmp_path):
    """Issue 23 §7: the public file decides the deny, so the record names it, not the first file."""
    gadgets = Repo(tmp_path / "gadgets", env, origin="git@github.com:acme/gadgets.git").config(_config())
    widgets = Repo(tmp_path / "widgets", env, origin="git@github.com:acme/widgets.git").config(_config())
    write_cache(env, ENDPOINT, text_rules=[text_rule("rule_no_internal_hostnames", HOST)])
    path = env.cache_for(ENDPOINT).parent / "exposure.json"
    now = int(time.time())
    path.write_text(json.dumps({"version": 1, "entries": {
        f"{ENDPOINT}|gadgets": {"exposure": "internal", "at": now},
        f"{ENDPOINT}|widgets": {"exposure": "public", "at": now}}}))
    patch = ("*** Begin Patch\n"
             f"*** Add File: {gadgets.root}/src/a.rs\n+let host = \"db1.corp.example\";\n"
             f"*** Add File: {widgets.root}/src/b.rs\n+let host = \"db2.corp.example\";\n"
             "*** End Patch\n")
    result = hook(env, {**gadgets.patch(patch), "cwd": str(tmp_path)})
    assert result.denied and "src/b.rs" in result.reason
    records = env.records("governed")
    assert {(g["repo"], g["exposure"], g["blocking"]) for g in records} == {
        ("gadgets", "internal", False), ("widgets", "public", True)}
    guard = env.records("guard")[-1]
    assert guard["result"] == "deny" and guard["exposure"] == "public" and guard["repo"] == "widgets"
