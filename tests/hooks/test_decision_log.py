"""Issue 24 §2: every guard, pre-bash and post-edit record says which rule set it decided with
(``digest``, the served cache's) and, under advise, whether enforce would have refused
(``would_deny``) — which a warn-tier notice never is. Through the real hooks, on real caches."""

from __future__ import annotations

import json
import time

import pytest
from guard_kit import Repo, hook, text_rule, write_cache
from prebash import hook as bash_hook, meminfo, memory_policy

ENDPOINT = "http://127.0.0.1:9"
HOST = r"\b[a-z0-9-]+\.corp\.example\b"
DIGEST = "sha256:test"  # what guard_kit.write_cache names its rule set


def _config(mode: str, extra: str = "") -> str:
    return (f'[yupana.policy]\nmode = "{mode}"\n{extra}\n[yupana.quipu]\nenabled = true\nendpoint = "{ENDPOINT}"\n'
            'dialect = "quipu"\nprojection_cache_ttl_secs = 7200\nrefresh_interval_secs = 300\n')


def _public(env) -> None:
    path = env.cache_for(ENDPOINT).parent / "exposure.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    entry = {"exposure": "public", "at": int(time.time())}
    path.write_text(json.dumps({"version": 1, "entries": {f"{ENDPOINT}|widgets": entry}}))


@pytest.fixture
def repo(tmp_path, env):
    write_cache(env, ENDPOINT, text_rules=[text_rule("rule_no_internal_hostnames", HOST),
                                           text_rule("rule_todo", r"\bTODO\b", tier="warn")])
    _public(env)
    return Repo(tmp_path / "repo", env)


def _edit(repo, text: str, rel: str = "src/net.rs"):
    return repo.payload(rel=rel, old_string="let host = \"\";", new_string=text)


def test_under_advise_a_block_tier_hit_would_deny_and_a_warn_tier_hit_would_not(env, repo):
    repo.config(_config("advise"))
    blocked = hook(env, _edit(repo, 'let host = "db1.corp.example";'))
    warned = hook(env, _edit(repo, "// TODO: later"))
    clean = hook(env, _edit(repo, "let x = 1;"))
    assert not blocked.denied and "enforce would deny" in blocked.message
    assert not warned.denied and "rule_todo" in warned.message
    assert clean.allowed_silently
    first, second, third = env.records("guard")
    # both notified the same way: only would_deny tells them apart
    assert first["result"] == second["result"] == "notify"
    assert first["would_deny"] is True and first["rule"] == "rule_no_internal_hostnames"
    assert second["would_deny"] is False and second["rule"] == "rule_todo"
    assert third["would_deny"] is False and third["result"] == "allow"
    assert first["digest"] == second["digest"] == third["digest"] == DIGEST
    gov_block, gov_warn = env.records("governed")
    assert (gov_block["would_deny"], gov_warn["would_deny"]) == (True, False)
    assert gov_block["digest"] == gov_warn["digest"] == DIGEST and gov_block["blocking"] is False
    assert [(c["id"], c["would_deny"]) for c in first["constraints"] + second["constraints"]
            if c["outcome"] == "unsatisfied"] == [("rule_no_internal_hostnames", True), ("rule_todo", False)]


def test_under_enforce_the_record_carries_the_digest_and_no_would_deny(env, repo):
    repo.config(_config("enforce"))
    assert hook(env, _edit(repo, 'let host = "db1.corp.example";')).denied
    [guard] = env.records("guard")
    assert guard["result"] == "deny" and guard["digest"] == DIGEST and "would_deny" not in guard
    [gov] = env.records("governed")
    assert gov["blocking"] is True and gov["digest"] == DIGEST and "would_deny" not in gov


def test_without_a_catalogue_there_is_no_digest(env, tmp_path):
    repo = Repo(tmp_path / "plain", env).config('[yupana.policy]\nmode = "advise"\n')
    hook(env, _edit(repo, 'let host = "db1.corp.example";'))
    [guard] = env.records("guard")
    assert "digest" not in guard and guard["would_deny"] is False


def test_a_failed_open_invocation_names_the_rule_set_it_could_not_serve(env, tmp_path):
    repo = Repo(tmp_path / "nocache", env).config(_config("advise").replace(ENDPOINT, "http://127.0.0.1:7"))
    hook(env, _edit(repo, 'let host = "db1.corp.example";'))
    [fail] = env.records("fail_open")
    assert fail["fail_kind"] == "projection" and "digest" not in fail  # nothing was served: no digest
    assert "digest" not in env.records("guard")[0]


def test_a_stale_cache_served_says_which_rule_set(env, tmp_path):
    write_cache(env, ENDPOINT, age=1000, text_rules=[text_rule("rule_no_internal_hostnames", HOST)])
    repo = Repo(tmp_path / "stale", env).config(_config("advise"))
    hook(env, _edit(repo, "let x = 1;"))
    [served] = env.records("served_from_cache")
    assert served["digest"] == DIGEST and env.records("guard")[0]["digest"] == DIGEST


def test_a_soft_local_rule_under_advise_does_not_hide_a_governed_block(env, repo):
    rules = ('[[yupana.policy.rules]]\nname = "no-ticket"\nlanguage = "rust"\nquery = "(line_comment) @c"\n'
             'match_type = "must-not-match"\npattern = "[A-Z]+-[0-9]+"\nmessage = "Ticket ids belong in the tracker."\n'
             'class = "soft"\n')
    repo.config(_config("advise", rules))
    result = hook(env, _edit(repo, '// ABC-12\nlet host = "db1.corp.example";'))
    assert "Ticket ids" in result.message and "corp.example" in result.message
    [guard] = env.records("guard")
    assert guard["would_deny"] is True and guard["rule"] == "no-ticket+rule_no_internal_hostnames"
    assert {c["id"]: c["would_deny"] for c in guard["constraints"] if c["outcome"] == "unsatisfied"} == {
        "no-ticket": False, "rule_no_internal_hostnames": True}


@pytest.mark.parametrize(("setting", "would"), [(None, True), ("advise", False)])
def test_self_protection_under_advise_would_deny_unless_it_is_itself_capped(env, repo, setting, would):
    extra = f'self_protection = "{setting}"' if setting else ""
    repo.config(_config("advise", extra))
    result = hook(env, repo.payload(rel=".bobbin/config.toml", old_string="advise", new_string="off"))
    assert not result.denied and "self-protection" in result.message
    [guard] = env.records("guard")
    assert guard["self_protection"] == ["config"] and guard["would_deny"] is would


# ── pre-bash ─────────────────────────────────────────────────────────────────────────────

SCOPE = '[yupana.policy.scopes.polecat-3]\ndeny_targets = ["service:etcd"]\n'


def _bash_config(env, mode: str, action_scope: str, governed: bool = False) -> None:
    quipu = f'[yupana.quipu]\nenabled = true\nendpoint = "{ENDPOINT}"\n' if governed else ""
    env.user_config(f'[yupana.policy]\nmode = "{mode}"\naction_scope = "{action_scope}"\n{SCOPE}\n{quipu}')


@pytest.mark.parametrize(("setting", "would"), [("enforce", True), ("advise", False)])
def test_pre_bash_action_scope_under_advise_says_what_enforce_would_do(env, setting, would):
    _bash_config(env, "advise", setting)
    bash_hook(env, "sudo systemctl restart etcd", role="polecat-3")
    [rec] = env.records("action_scope")
    assert rec["result"] == "advise" and rec["would_deny"] is would and "digest" not in rec


def test_pre_bash_action_scope_under_enforce_has_no_would_deny(env):
    _bash_config(env, "enforce", "enforce")
    bash_hook(env, "sudo systemctl restart etcd", role="polecat-3")
    [rec] = env.records("action_scope")
    assert rec["result"] == "deny" and "would_deny" not in rec


def test_pre_bash_memory_policy_record_names_its_rule_set(env):
    from prebash import write_cache as bash_cache

    _bash_config(env, "advise", "off", governed=True)
    bash_cache(env, endpoint=ENDPOINT, memory_policies=[memory_policy(), memory_policy("soft-floor", cls="soft")])
    bash_hook(env, "cargo build", extra_env=meminfo(env, available_gib=2.0))
    recs = {r["rule"]: r for r in env.records("memory_policy")}
    assert recs["build-memory-floor"]["would_deny"] is True and recs["soft-floor"]["would_deny"] is False
    assert {r["digest"] for r in recs.values()} == {DIGEST}
    assert "digest" not in env.records("pre_bash_invoked")[0]  # written first, before any catalogue is read


# ── post-edit ────────────────────────────────────────────────────────────────────────────


def test_post_edit_record_names_the_rule_set_and_never_would_deny(env, tmp_path):
    write_cache(env, ENDPOINT, work_item_scopes={"yup-1": ["src/a.rs"]})
    repo = Repo(tmp_path / "repo", env).config(_config("advise", 'work_item_scope = "enforce"'))
    crew = tmp_path / "shanty" / "crew" / "agent-7"
    crew.mkdir(parents=True)
    (crew / "plate.json").write_text(json.dumps({"item": "yup-1", "at": int(time.time()), "session": None}))
    env["SHANTY_ROOT"], env["SHANTY_AGENT"] = str(tmp_path / "shanty"), "agent-7"
    payload = repo.payload(rel="src/z.rs")
    payload["hook_event_name"] = "PostToolUse"
    assert "outside the observed ground" in hook(env, payload, event="post-edit").context
    [rec] = env.records("post_edit_invoked")
    assert rec["result"] == "notice" and rec["digest"] == DIGEST and rec["would_deny"] is False
    # the pre-edit of the same out-of-ground edit: the rung is capped by advise, enforce would refuse
    payload["hook_event_name"] = "PreToolUse"
    hook(env, payload)
    guard = env.records("guard")[-1]
    assert guard["would_deny"] is True and guard["rule"] == "scope-observed:yup-1" and guard["digest"] == DIGEST
