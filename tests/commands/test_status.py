"""``yupana status`` through the real CLI: real config files, a real cache written by
``yupana project`` (embedded store over a small Turtle catalogue, or a real quipu-dialect
server that is then stopped), and a real spool written by the real hooks."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from catalogue_kit import PREFIXES, write_catalogue

RUST_TOP_KEYS = {"base_ref", "base_commit", "tenant", "tiers", "languages", "quipu", "policy",
                 "policy_mode_provenance", "metrics", "rule_set", "signed_rule_set"}
OUR_TOP_KEYS = {"schema", "yupana_version", "schema_version", "root", "tenant_source", "config", "hooks", "spool", "now", "exit_code",
                "clients", "landing", "tamper", "rollout"}
RUST_RULE_SET_KEYS = {"local", "graph_enabled", "projected", "structural", "text", "error", "state", "digest",
                      "attempts", "cache_age_secs", "verification"}
RUST_POLICY_KEYS = {"mode", "scope_configured", "scope", "enforcing_without_scope"}
HOOK_KEYS = {"record_kind", "invocations_in_window", "window_complete", "sampled", "duration_recorded", "duration_ms",
             "fail_open", "fail_open_rate", "fail_open_kinds", "served_from_cache", "served_from_cache_rate",
             "results", "last_invocation_at", "last_invocation_age_secs"}


def write_config(root: Path, *, endpoint: str | None = "file:cat", mode: str | None = None, quipu: str = "",
                 policy: str = "", extra: str = "") -> None:
    lines = []
    if endpoint is not None:
        lines += ["[yupana.quipu]", "enabled = true", f'endpoint = "{endpoint}"', quipu]
    lines += ["[yupana.policy]"] + ([f'mode = "{mode}"'] if mode else []) + [policy, extra]
    path = root / ".bobbin" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")


@pytest.fixture
def root(tmp_path) -> Path:
    root = tmp_path / "project"
    write_catalogue(root / "cat", 3)
    (root / "src").mkdir(parents=True)
    (root / "src" / "lib.rs").write_text("fn old() {}\n")
    return root


def status(yupana, root: Path, *flags: str, timeout: float = 60) -> tuple[int, dict]:
    done = yupana("status", "--json", *flags, cwd=root, timeout=timeout)
    assert done.stdout, done.stderr
    return done.returncode, json.loads(done.stdout)


def human(yupana, root: Path, *flags: str) -> tuple[int, str]:
    done = yupana("status", *flags, cwd=root)
    return done.returncode, done.stdout.decode()


def project(yupana, root: Path) -> None:
    done = yupana("project", cwd=root)
    assert done.returncode == 0, done.stderr


def edit(yupana, root: Path, *flags: str, rel: str = "src/lib.rs", new: str = "fn new() {}", session: str = "s-1"):
    payload = {"session_id": session, "cwd": str(root), "hook_event_name": "PreToolUse", "tool_name": "Edit",
               "tool_input": {"file_path": str(root / rel), "old_string": "fn old() {}", "new_string": new}}
    done = yupana(*flags, "hook", "pre-edit", stdin=json.dumps(payload), cwd=root)
    assert done.returncode == 0
    return done


def bash(yupana, root: Path, command: str = "ls", session: str = "s-1"):
    payload = {"session_id": session, "cwd": str(root), "hook_event_name": "PreToolUse", "tool_name": "Bash",
               "tool_input": {"command": command}}
    done = yupana("hook", "pre-bash", stdin=json.dumps(payload), cwd=root)
    assert done.returncode == 0
    return done


def post_edit(yupana, root: Path, rel: str = "src/lib.rs", session: str = "s-1"):
    payload = {"session_id": session, "cwd": str(root), "hook_event_name": "PostToolUse", "tool_name": "Edit",
               "tool_input": {"file_path": str(root / rel), "old_string": "fn old() {}", "new_string": "fn new() {}"},
               "tool_response": {"filePath": str(root / rel), "success": True}}
    done = yupana("hook", "post-edit", stdin=json.dumps(payload), cwd=root)
    assert done.returncode == 0
    return done


# ── rule-set states and exit codes ─────────────────────────────────────────────────────


def test_unconfigured_plane_is_off_and_the_json_keeps_the_rust_keys(yupana, root):
    write_config(root, endpoint=None, mode="advise")
    code, out = status(yupana, root)
    assert code == 0 and out["exit_code"] == 0
    assert RUST_TOP_KEYS | OUR_TOP_KEYS == set(out)
    assert RUST_RULE_SET_KEYS <= set(out["rule_set"]) and RUST_POLICY_KEYS <= set(out["policy"])
    assert set(out["policy_mode_provenance"]) == {"effective", "source", "user_mode", "lowered_by_project",
                                                  "managed_mode"}
    assert set(out["quipu"]) >= {"enabled", "branch_model"} and set(out["metrics"]) == {"record_paths"}
    assert out["rule_set"]["state"] == "off" and out["rule_set"]["verification"] == "unsigned"
    assert out["rule_set"]["digest"] is None and out["rule_set"]["attempts"] == 0
    assert out["signed_rule_set"]["loaded"] is False and out["signed_rule_set"]["state"] == "never-loaded"
    assert out["signed_rule_set"]["note"]
    assert set(out["hooks"]["pre-edit"]) == HOOK_KEYS == set(out["hooks"]["pre-bash"]) == set(out["hooks"]["post-edit"])
    code, text = human(yupana, root)
    assert code == 0 and "rule set    : off — the governed plane is not configured" in text
    assert "signed rules: never-loaded" in text


def test_loaded_cache_reports_counts_digest_age_and_does_not_ask_the_store(yupana, env, root):
    write_config(root, mode="enforce")
    project(yupana, root)
    code, out = status(yupana, root)
    rs = out["rule_set"]
    cached = json.loads(env.cache_path.read_text())
    assert code == 0 and rs["state"] == "loaded" and rs["freshness"] == "fresh"
    assert rs["text"] == 3 and rs["structural"] == 0 and rs["projected"] == 3
    assert rs["counts"]["text"] == 3 and rs["counts"]["ci_jobs"] is None  # no map in the store: UNKNOWN, not 0
    assert rs["digest"] == cached["digest"] and rs["digest"].startswith("sha256:")
    assert rs["endpoint"] == "file:" + str(root / "cat") and 0 <= rs["cache_age_secs"] <= 60
    assert rs["ttl_secs"] == 3600 and rs["cache_path"] == str(env.cache_path)
    assert rs["live"]["checked"] is False and rs["attempts"] == 0
    assert rs["refresh"]["consecutive_failures"] == 0 and rs["refresh"]["last_attempt_at"] is not None
    code, text = human(yupana, root)
    assert "rule set    : loaded" in text and "text 3" in text and "CI map jobs UNKNOWN" in text
    assert f"digest      : {cached['digest']}" in text and "store       : not asked" in text


def test_a_store_with_no_rules_is_empty(yupana, root):
    (root / "cat" / "catalogue.ttl").write_text(PREFIXES)
    write_config(root, mode="advise")
    project(yupana, root)
    code, out = status(yupana, root)
    assert code == 0 and out["rule_set"]["state"] == "empty" and out["rule_set"]["projected"] == 0


def test_no_servable_cache_is_degraded_exit_3_and_says_the_store_answers(yupana, root):
    write_config(root, mode="enforce")
    code, out = status(yupana, root)
    rs = out["rule_set"]
    assert code == 3 and out["exit_code"] == 3 and rs["state"] == "degraded"
    assert rs["miss"]["label"] == "absent" and rs["digest"] is None
    assert rs["live"]["checked"] and rs["live"]["ok"] and rs["attempts"] == 1  # the file store loads
    code, text = human(yupana, root)
    assert code == 3 and "⚠ DEGRADED — no servable cache (absent)" in text and "yupana project" in text


def test_status_never_refreshes_and_never_writes_the_cache(yupana, env, root):
    write_config(root, mode="enforce", quipu="refresh_interval_secs = 0")
    project(yupana, root)
    state_dir = env.cache_path.parent
    before = {p.name: p.stat().st_mtime_ns for p in state_dir.iterdir() if p.name != "metrics.jsonl"}
    time.sleep(1.1)  # overdue: a hook would start a refresh here
    code, out = status(yupana, root)
    assert code == 0 and out["rule_set"]["state"] == "stale"
    time.sleep(0.5)  # a detached refresh, had one been started, would be writing now
    after = {p.name: p.stat().st_mtime_ns for p in state_dir.iterdir() if p.name != "metrics.jsonl"}
    assert after == before
    assert not env.records("served_from_cache")


def test_overdue_cache_is_stale_with_its_age_while_the_store_answers(yupana, env, root):
    write_config(root, mode="advise", quipu="refresh_interval_secs = 0")
    project(yupana, root)
    env["YUPANA_POLICY__MODE"] = "off"  # this hook run must not start a refresh of its own
    edit(yupana, root)
    del env["YUPANA_POLICY__MODE"]
    time.sleep(2.1)
    code, out = status(yupana, root)
    rs = out["rule_set"]
    assert code == 0 and rs["state"] == "stale" and rs["freshness"] == "stale" and rs["cache_age_secs"] >= 2
    assert rs["live"]["checked"] and rs["live"]["ok"] and rs["live"]["why"] == "the cache is stale"
    assert rs["digest"] is not None and rs["text"] == 3  # stale still serves, and says what
    # the hook ran 2 s ago: inside a 1 s window it is silent, and status says so
    code, text = human(yupana, root, "--window", "1")
    assert "⚠ STALE — serving last-known policy" in text
    assert "pre-edit  : 0 in 1s, last " in text and "has the hook stopped running?" in text
    assert "the store answers: `yupana project` refreshes the cache now" in text
    assert "pre-bash  : 0 in 1s — never recorded" in text


def test_dead_endpoint_is_stale_with_age_then_degraded_past_the_ttl(yupana, env, root, quipu_server):
    server = quipu_server(root / "cat" / "catalogue.ttl")
    url = server.url
    quipu = 'dialect = "quipu"\nrefresh_interval_secs = 300\nrefresh_backoff_secs = 60\nrequest_timeout_secs = 1.0'
    write_config(root, endpoint=url, mode="enforce", quipu=quipu)
    project(yupana, root)
    server.stop()  # nothing listens on that port any more
    code, out = status(yupana, root)
    assert code == 0 and out["rule_set"]["state"] == "loaded" and not out["rule_set"]["live"]["checked"]
    code, out = status(yupana, root, "--live")  # fresh cache, but the live store is gone: stale
    rs = out["rule_set"]
    assert code == 0 and rs["state"] == "stale" and rs["freshness"] == "fresh" and rs["attempts"] == 1
    assert rs["live"]["ok"] is False and rs["live"]["error_kind"] == "connect" and rs["error"].startswith("connect:")
    assert rs["cache_age_secs"] is not None and rs["digest"] is not None
    code, out = status(yupana, root, "--offline")
    assert out["rule_set"]["state"] == "loaded" and out["rule_set"]["live"]["why"] == "--offline"
    assert yupana("project", cwd=root).returncode == 1  # the refresher records the failure and a back-off
    code, out = status(yupana, root)
    rs, refresh = out["rule_set"], out["rule_set"]["refresh"]
    assert code == 0 and rs["state"] == "stale" and rs["freshness"] == "stale"
    assert refresh["consecutive_failures"] == 1 and refresh["last_error_kind"] == "connect"
    assert 0 < refresh["backoff_remaining_secs"] <= 60
    code, text = human(yupana, root)
    assert "⚠ STALE" in text and "FAILED (connect:" in text and "1 failure(s) in a row" in text
    assert "hooks start no refresh for" in text and "did NOT answer (asked because the cache is stale): connect:" in text
    assert "cache       : stale, age " in text
    write_config(root, endpoint=url, mode="enforce", quipu=quipu.replace("300", "0") +
                 "\nprojection_cache_ttl_secs = 1")
    time.sleep(2.1)
    code, out = status(yupana, root)
    rs = out["rule_set"]
    assert code == 3 and rs["state"] == "degraded" and rs["miss"]["label"] == "expired"
    assert rs["cache_age_secs"] >= 2 and rs["live"]["error_kind"] == "connect"


def test_a_store_that_never_answers_cannot_hold_the_terminal(yupana, root, faulty_server):
    url = faulty_server("never-answer")
    write_config(root, endpoint=url, mode="advise", quipu='dialect = "sparql11"\nrequest_timeout_secs = 0.5')
    code, out = status(yupana, root, timeout=15)
    live = out["rule_set"]["live"]
    assert code == 3 and live["checked"] and not live["ok"] and live["error_kind"] in ("timeout", "deadline")
    assert live["budget_secs"] == 0.5 and "within 0.5s" in live["error"]


# ── policy: mode, scope, caveats ──────────────────────────────────────────────────────


def test_enforce_without_a_scope_for_the_tenant_is_a_loud_caveat(yupana, env, root):
    write_config(root, endpoint=None, mode="enforce", extra='[yupana.policy.scopes.polecat-3]\n'
                 'allow_paths = ["src/**"]\nmax_impacted_files = 3\n[yupana.policy.scopes.hollow]\n')
    _code, out = status(yupana, root, "--tenant", "builder")
    assert out["tenant"] == "builder" and out["policy"]["enforcing_without_scope"] is True
    assert out["policy"]["scope_configured"] is False and out["policy"]["scope"] is None
    _code, text = human(yupana, root, "--tenant", "builder")
    assert "policy      : mode=enforce  scope=none" in text
    assert "⚠ enforcing without scope" in text and "tenant `builder` has no declared scope" in text
    _code, text = human(yupana, root, "--tenant", "polecat-3")
    assert "scope=configured (allow=1 deny=0 sym≤— files≤3)" in text and "⚠ enforcing without scope" not in text
    _code, out = status(yupana, root, "--tenant", "polecat-3")
    policy = out["policy"]
    assert policy["enforcing_without_scope"] is False and policy["scope_configured"] is True
    assert policy["scope"] == {"allow_paths": 1, "deny_paths": 0, "allow_targets": 0, "deny_targets": 0,
                               "max_impacted_symbols": None, "max_impacted_files": 3}
    assert policy["ceilings"] == {"max_impacted_symbols": None, "max_impacted_files": 3}
    _code, out = status(yupana, root, "--tenant", "hollow")  # an entry that constrains nothing is no scope
    assert out["policy"]["scope_configured"] is True and out["policy"]["enforcing_without_scope"] is True
    env["BOBBIN_ROLE"] = "polecat-3"  # the tenant falls back to $BOBBIN_ROLE
    _code, out = status(yupana, root)
    assert out["tenant"] == "polecat-3" and out["tenant_source"] == "$BOBBIN_ROLE"
    assert out["policy"]["enforcing_without_scope"] is False


def test_the_work_item_rung_covers_a_tenant_without_scope_and_the_mode_caps_the_rungs(yupana, root):
    write_config(root, endpoint=None, mode="enforce", policy='work_item_scope = "enforce"\naction_scope = "advise"')
    _code, out = status(yupana, root, "--tenant", "builder")
    assert out["policy"]["enforcing_without_scope"] is False
    assert out["policy"]["work_item_scope"] == {"setting": "enforce", "effective": "enforce"}
    write_config(root, endpoint=None, mode="advise", policy='work_item_scope = "enforce"')
    _code, out = status(yupana, root, "--tenant", "builder")
    assert out["policy"]["work_item_scope"] == {"setting": "enforce", "effective": "advise"}
    assert out["policy"]["enforcing_without_scope"] is False  # not enforcing at all
    _code, text = human(yupana, root, "--tenant", "builder")
    assert "work_item_scope=enforce→advise" in text


def test_a_project_that_lowers_the_users_mode_exits_4(yupana, env, root):
    env.user_config('[yupana.policy]\nmode = "enforce"\n')
    write_config(root, endpoint=None, mode="advise")
    code, out = status(yupana, root)
    prov = out["policy_mode_provenance"]
    assert code == 4 and out["exit_code"] == 4
    assert prov == {"effective": "advise", "source": "project", "user_mode": "enforce", "lowered_by_project": True,
                    "managed_mode": None}
    code, text = human(yupana, root)
    assert code == 4 and "⚠ the project config LOWERED the user's mode (enforce → advise)" in text
    assert "mode from   : project file" in text and "(user file: enforce)" in text
    write_config(root, endpoint=None, mode="enforce")  # raising it is fine
    assert status(yupana, root)[0] == 0


def test_a_layer_below_the_managed_floor_is_ignored_and_shown_exit_4(yupana, env, root):
    managed = env.managed_config('[yupana.policy]\nmode = "enforce"\n')
    write_config(root, endpoint=None, mode="off")
    code, out = status(yupana, root)
    assert code == 4 and out["policy"]["mode"] == "enforce"
    assert out["policy_mode_provenance"]["source"] == "managed"
    assert out["config"]["lowered"] == [{"layer": "project", "file": str(root / ".bobbin" / "config.toml"),
                                         "key": "policy.mode", "value": "off", "floor": "enforce"}]
    assert out["config"]["managed"]["path"] == str(managed) and out["config"]["managed"]["present"] is True
    code, text = human(yupana, root)
    assert code == 4 and f"floor       : managed {managed}" in text
    assert f"⚠ project {root / '.bobbin' / 'config.toml'} tried policy.mode = \"off\", below its floor" in text
    assert "mode from   : the managed floor" in text


def test_a_managed_floor_the_hooks_user_can_write_is_a_warning(yupana, env, root):
    import os

    managed = env.managed_config('[yupana.policy]\nmode = "advise"\n')
    write_config(root, endpoint=None, mode="enforce")
    code, out = status(yupana, root)
    assert out["config"]["managed"]["writable"] is os.access(managed, os.W_OK) or os.access(managed.parent, os.W_OK)
    assert out["config"]["managed"]["writable"] is True  # the test's own file: this user can write it
    assert code == 4 and out["config"]["lowered"] == []
    code, text = human(yupana, root)
    assert "⚠ the managed floor is WRITABLE by this user" in text and str(managed) in text
    managed.unlink()
    code, out = status(yupana, root)
    assert code == 0 and out["config"]["managed"] == {"path": str(managed), "present": False, "writable": False,
                                                      "writable_paths": [], "bypassed": None}


def test_a_variable_that_sets_the_machines_floor_aside_is_a_warning(tmp_path, monkeypatch):
    """/etc/bobbin/config.toml cannot be written by a test: the machine's path is pointed at a file here."""
    from yupana.commands import status as status_cmd
    from yupana.state import paths

    machine = tmp_path / "etc" / "config.toml"
    machine.parent.mkdir()
    machine.write_text('[yupana.policy]\nmode = "enforce"\n')
    monkeypatch.setattr(paths, "MANAGED_CONFIG", str(machine))
    resolved = {"managed": {"path": str(tmp_path / "elsewhere.toml"), "present": False}}
    section = status_cmd.managed_section(resolved)
    assert section["bypassed"] == str(machine)
    report = {"rule_set": {"state": "loaded"}, "config": {"controls": {"state": "ok"}, "managed": section,
                                                         "lowered": []}, "policy_mode_provenance": {}}
    assert status_cmd.exit_code(report) == 4
    assert status_cmd.managed_section({"managed": {"path": str(machine), "present": True}})["bypassed"] is None


def test_degraded_wins_over_a_lowered_mode(yupana, env, root):
    env.user_config('[yupana.policy]\nmode = "enforce"\n')
    write_config(root, mode="advise")
    code, out = status(yupana, root, "--offline")
    assert code == 3 and out["policy_mode_provenance"]["lowered_by_project"] is True
    assert out["rule_set"]["state"] == "degraded" and out["rule_set"]["live"]["checked"] is False


def test_a_config_error_exits_1_naming_the_file_and_key(yupana, root):
    write_config(root, endpoint=None, mode="strict")
    done = yupana("status", cwd=root)
    err = done.stderr.decode()
    assert done.returncode == 1 and "configuration error" in err and "yupana.policy.mode" in err
    assert str(root / ".bobbin" / "config.toml") in err
    done = yupana("status", "--json", cwd=root)
    out = json.loads(done.stdout)
    assert done.returncode == 1 and out["error"]["kind"] == "config" and "yupana.policy.mode" in out["error"]["message"]


def test_warnings_and_notify_on_fail_open_are_shown(yupana, root):
    write_config(root, endpoint=None, mode="advise", policy="notify_on_fail_open = false\nmdoe = \"enforce\"")
    _code, out = status(yupana, root)
    assert any("unknown key yupana.policy.mdoe" in w for w in out["config"]["warnings"])
    assert out["policy"]["notify_on_fail_open"] is False
    _code, text = human(yupana, root)
    assert "warning     : " in text and "yupana.policy.mdoe" in text
    assert "notify_on_fail_open = false" in text and "stderr and the spool only" in text


# ── hook health ───────────────────────────────────────────────────────────────────────


def test_hook_health_counts_invocations_durations_and_results(yupana, env, root):
    write_config(root, endpoint=None, mode="enforce", extra='[yupana.policy.scopes.polecat-3]\nallow_paths = ["src/**"]')
    for _ in range(3):
        edit(yupana, root, "--tenant", "polecat-3")
    denied = edit(yupana, root, "--tenant", "polecat-3", rel="docs/notes.md")
    assert b"permissionDecision" in denied.stdout
    bash(yupana, root)
    _code, out = status(yupana, root, "--last", "3")
    pre_edit, pre_bash = out["hooks"]["pre-edit"], out["hooks"]["pre-bash"]
    guards = env.records("guard")
    assert pre_edit["invocations_in_window"] == 4 and pre_edit["sampled"] == 3 and out["hooks"]["last_n"] == 3
    durations = sorted(g["duration_ms"] for g in guards[-3:])
    assert pre_edit["duration_ms"] == {"p50": durations[1], "p95": durations[2]}
    assert pre_edit["results"] == {"allow": 2, "deny": 1} and pre_edit["fail_open"] == 0
    assert pre_edit["last_invocation_at"] == guards[-1]["ts"] and pre_edit["last_invocation_age_secs"] >= 0
    assert pre_bash["invocations_in_window"] == 1 and pre_bash["duration_ms"] is None
    assert pre_bash["duration_recorded"] is False and pre_bash["results"] == {"parsed": 1}
    _code, text = human(yupana, root)
    assert "  pre-edit  : 4 in 24h, last " in text and f"p95 {max(g['duration_ms'] for g in guards)} ms" in text
    assert "failed open 0/4 (0%)" in text and "allow 3, deny 1" in text
    assert "  pre-bash  : 1 in 24h" in text and "duration not recorded by this hook" in text


def test_hook_health_rates_fail_open_and_stale_serving_per_hook(yupana, env, root):
    write_config(root, mode="advise", quipu="refresh_interval_secs = 0\nrefresh_backoff_secs = 3600")
    edit(yupana, root, session="a")  # no cache yet: fails open (projection) and starts a refresh
    deadline = time.time() + 30
    while not env.cache_path.exists() and time.time() < deadline:  # the detached refresh writes it
        time.sleep(0.2)
    assert env.cache_path.exists()
    (root / "cat" / "catalogue.ttl").write_text("@prefix broken")  # later refreshes fail: the cache stays stale
    time.sleep(1.1)  # overdue now (refresh_interval_secs = 0): served stale
    edit(yupana, root, session="b")
    edit(yupana, root, session="b")
    bash(yupana, root, session="c")
    _code, out = status(yupana, root, "--offline")
    pre_edit = out["hooks"]["pre-edit"]
    fail_open = [r for r in env.records("fail_open") if r["hook"] == "pre-edit"]
    served = [r for r in env.records("served_from_cache") if r.get("hook") == "pre-edit"]
    assert len(fail_open) >= 1 and len(served) >= 1
    assert pre_edit["sampled"] == 3
    assert pre_edit["fail_open"] == 1 and pre_edit["fail_open_kinds"] == {"projection": 1}
    assert pre_edit["served_from_cache"] == 2 and pre_edit["served_from_cache_rate"] == round(2 / 3, 4)
    assert out["hooks"]["pre-bash"]["fail_open"] == 0
    _code, text = human(yupana, root, "--offline")
    assert "failed open 1/3 (33%: projection 1), served stale 2/3 (67%)" in text


def test_hook_health_counts_post_edit_its_latency_and_the_stale_cache_it_served(yupana, env, root, tmp_path):
    """post-edit writes one post_edit_invoked record per invocation, last: status counts it like
    the other hooks, and the served_from_cache records it wrote before are its own."""
    write_config(root, mode="advise", policy='work_item_scope = "advise"',
                 quipu="refresh_interval_secs = 0\nrefresh_backoff_secs = 3600")
    project(yupana, root)
    plate = tmp_path / "shanty" / "crew" / "agent-7" / "plate.json"
    plate.parent.mkdir(parents=True)
    plate.write_text(json.dumps({"item": "yup-1", "at": int(time.time())}))
    env.update(SHANTY_ROOT=str(tmp_path / "shanty"), SHANTY_AGENT="agent-7")
    (root / "cat" / "catalogue.ttl").write_text("@prefix broken")  # refreshes fail: the cache stays stale
    time.sleep(1.1)  # overdue now (refresh_interval_secs = 0): served stale
    post_edit(yupana, root, session="p")
    post_edit(yupana, root, session="p")
    del env["SHANTY_ROOT"]
    post_edit(yupana, root, session="q")  # no plate: silent before the cache is asked
    _code, out = status(yupana, root, "--offline")
    post = out["hooks"]["post-edit"]
    invoked = env.records("post_edit_invoked")
    assert [r["reason"] for r in invoked] == ["no-scope", "no-scope", "no-plate"]
    assert len([r for r in env.records("served_from_cache") if r.get("hook") == "post-edit"]) == 2
    assert post["record_kind"] == "post_edit_invoked" and post["invocations_in_window"] == 3 and post["sampled"] == 3
    assert post["results"] == {"silent": 3} and post["duration_recorded"] is True
    durations = sorted(r["duration_ms"] for r in invoked)
    assert post["duration_ms"] == {"p50": durations[1], "p95": durations[2]}
    assert post["served_from_cache"] == 2 and post["served_from_cache_rate"] == round(2 / 3, 4)
    assert out["hooks"]["unattributed"] == {"fail_open": 0, "served_from_cache": 0}
    assert post["last_invocation_at"] == invoked[-1]["ts"]
    assert out["clients"]["claude-code"]["last_seen"]["by_hook"]["post-edit"] == invoked[-1]["ts"]
    _code, text = human(yupana, root, "--offline")
    assert "  post-edit : 3 in 24h, last " in text and f"p95 {durations[2]} ms" in text
    assert "served stale 2/3 (67%)" in text and "silent 3" in text


def test_a_spool_that_cannot_be_written_is_said(yupana, env, root, tmp_path):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    env["YUPANA_METRICS_PATH"] = str(blocker / "metrics.jsonl")
    write_config(root, endpoint=None, mode="advise")
    _code, out = status(yupana, root)
    assert out["spool"]["write_error"] and out["spool"]["exists"] is False
    _code, text = human(yupana, root)
    assert "⚠ records cannot be written" in text and "hook invocations go unrecorded" in text


def test_a_running_refresh_is_named(yupana, env, root):
    import fcntl
    import os

    write_config(root, mode="advise")
    project(yupana, root)
    lock = env.cache_path.parent / "refresh.lock"
    fd = os.open(lock, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()} {int(time.time())}\n".encode(), 0)
        _code, out = status(yupana, root)
        assert out["rule_set"]["refresh"]["running"].startswith(f"pid {os.getpid()}, started ")
        _code, text = human(yupana, root)
        assert f"a refresh is running now (pid {os.getpid()}" in text
    finally:
        os.close(fd)
    _code, out = status(yupana, root)
    assert out["rule_set"]["refresh"]["running"] is None


def test_config_override_replaces_discovery_and_is_the_source(yupana, env, root, tmp_path):
    env.user_config('[yupana.policy]\nmode = "enforce"\n')
    write_config(root, endpoint=None, mode="off")
    other = tmp_path / "fleet.toml"
    other.write_text('[yupana.policy]\nmode = "advise"\n')
    code, out = status(yupana, root, "--config", str(other))
    assert code == 0 and out["config"]["sources"] == [{"layer": "--config", "path": str(other)}]
    assert out["policy_mode_provenance"]["source"] == "--config" and out["policy"]["mode"] == "advise"
    done = yupana("status", "--config", str(tmp_path / "missing.toml"), cwd=root)
    assert done.returncode == 1 and "no such config file" in done.stderr.decode()


def test_a_fifo_refresh_lock_never_hangs_status_and_is_named(yupana, env, root):
    """Issue 23 §7: a FIFO at refresh.lock made `status` (and `metrics`) block forever in open()."""
    import os

    write_config(root, mode="enforce")
    project(yupana, root)
    lock = env.cache_path.parent / "refresh.lock"
    lock.unlink(missing_ok=True)
    os.mkfifo(lock)
    _, out = status(yupana, root, timeout=30)
    refresh = out["rule_set"]["refresh"]
    assert refresh["running"] is None and "refresh.lock is a FIFO, not a regular file" in refresh["lock_problem"]
    done = yupana("status", cwd=root, timeout=30)
    assert "the refresh lock is unusable" in done.stdout.decode() and "remove it" in done.stdout.decode()


def test_a_fifo_refresh_lock_never_hangs_explain_of_a_stale_cache(yupana, env, root):
    """The dry run asks whether a live hook would start a refresh: that look at refresh.lock
    was a blocking open too (issue 23 §7)."""
    import os

    import time

    write_config(root, mode="enforce", quipu="refresh_interval_secs = 0")
    project(yupana, root)
    time.sleep(1.1)  # the cache's age passes the 0 s interval: a refresh is due
    lock = env.cache_path.parent / "refresh.lock"
    lock.unlink(missing_ok=True)
    os.mkfifo(lock)
    payload = {"session_id": "s-1", "cwd": str(root), "hook_event_name": "PreToolUse", "tool_name": "Edit",
               "tool_input": {"file_path": str(root / "src" / "lib.rs"), "old_string": "fn old() {}", "new_string": "x"}}
    done = yupana("explain", stdin=json.dumps(payload), cwd=root, timeout=30)
    assert done.returncode == 0, done.stderr
    assert b"a detached refresh would be started" in done.stdout
