"""``yupana hook pre-bash`` through the real CLI: records, action scope, host-memory policy."""

from __future__ import annotations

import json

import pytest
from prebash import configure, hook, meminfo, memory_policy, output, write_cache

SCOPE = """
[yupana.policy.scopes.polecat-3]
allow_targets = ["host:build-*", "service:metrics", "repo:github.com/acme/*"]
deny_targets = ["service:etcd", "host:build-secret*"]
"""


# ── parsing and records ────────────────────────────────────────────────────────────────


def test_every_invocation_is_recorded_and_a_command_always_yields_an_action(env):
    proc = hook(env, "sudo -u deploy systemctl restart nginx.service")
    assert proc.stdout == b""
    [invoked] = env.records("pre_bash_invoked")
    assert invoked["parsed"] is True and invoked["session"] == "sess-1" and invoked["payload_bytes"] > 0
    assert "payload_keys" not in invoked
    [act] = env.records("action")
    assert (act["target_class"], act["verb"], act["target"]) == ("service", "systemctl restart", "nginx")


def test_an_abstention_is_recorded_as_unknown_with_its_reason(env):
    hook(env, "cat <<'EOF'\nssh prod.example.com\nEOF")
    [act] = env.records("action")
    assert act["target_class"] == "unknown" and act["reason"] == "cat is not in the recognised set"
    assert "verb" not in act and "target" not in act


def test_a_compound_command_records_each_resolved_action(env):
    hook(env, "git pull https://github.com/acme/app && sudo systemctl restart app && ssh ops@db.example.com")
    assert [(r["target_class"], r["target"]) for r in env.records("action")] == [
        ("repo", "github.com/acme/app"), ("service", "app"), ("host", "db.example.com")]


def test_unparseable_payloads_allow_silently_and_record_key_names_only(env):
    proc = hook(env, None, payload={"session_id": "s", "tool_name": "Bash", "tool_input": {"cmd": "secret"}})
    assert proc.stdout == b""
    [rec] = env.records("pre_bash_invoked")
    assert rec["parsed"] is False
    assert rec["payload_keys"] == "session_id,tool_name,tool_input"
    assert "secret" not in json.dumps(env.records())
    assert env.records("action") == []

    proc = hook(env, None, payload=b"\x00not json{")
    assert proc.stdout == b"" and proc.returncode == 0
    assert b"pre-bash: stdin is not a JSON object (10 bytes); allowing without checking" in proc.stderr
    rec = env.records("pre_bash_invoked")[-1]
    assert rec["parsed"] is False and "payload_keys" not in rec


def test_codex_argv_commands_are_read(env):
    proc = hook(env, ["bash", "-lc", "ssh deploy@web.example.com uptime"])
    assert proc.stdout == b""
    [act] = env.records("action")
    assert act["target"] == "web.example.com"


def test_the_raw_command_never_reaches_the_spool(env):
    configure(env, mode="enforce", action_scope="enforce", scopes=SCOPE)
    hook(env, "ssh build-secret-1.example.com 'echo hunter2-password'", role="polecat-3")
    text = env.spool_path.read_text()
    assert "hunter2" not in text and "echo" not in text


# ── action scope ───────────────────────────────────────────────────────────────────────


def test_action_scope_off_by_default_records_but_never_speaks(env):
    configure(env, mode="enforce", scopes=SCOPE, governed=False)
    proc = hook(env, "systemctl stop etcd", role="polecat-3")
    assert proc.stdout == b"" and b"action scope" not in proc.stderr
    assert env.records("action_scope") == []
    assert env.records("action")[0]["target"] == "etcd"


def test_advise_goes_to_stderr_and_the_spool_and_refuses_nothing(env):
    configure(env, mode="advise", action_scope="advise", scopes=SCOPE, governed=False)
    proc = hook(env, "systemctl stop etcd", role="polecat-3")
    assert proc.stdout == b""
    assert b"service:etcd" in proc.stderr and b"enforce would deny" in proc.stderr
    [rec] = env.records("action_scope")
    assert rec == {**rec, "class": "service", "target": "etcd", "rule": "deny_targets:service:etcd", "result": "advise"}


def test_mode_is_a_ceiling_on_action_scope(env):
    configure(env, mode="advise", action_scope="enforce", scopes=SCOPE, governed=False)
    proc = hook(env, "systemctl stop etcd", role="polecat-3")
    assert proc.stdout == b""
    assert env.records("action_scope")[0]["result"] == "advise"

    configure(env, mode="off", action_scope="enforce", scopes=SCOPE, governed=False)
    proc = hook(env, "systemctl stop etcd", role="polecat-3")
    assert proc.stdout == b"" and len(env.records("action_scope")) == 1


def test_enforce_denies_with_a_reason_for_the_model(env):
    configure(env, mode="enforce", action_scope="enforce", scopes=SCOPE, governed=False)
    proc = hook(env, "ssh prod.example.com uptime", role="polecat-3")
    out = output(proc)["hookSpecificOutput"]
    assert out["hookEventName"] == "PreToolUse" and out["permissionDecision"] == "deny"
    reason = out["permissionDecisionReason"]
    assert "host `prod.example.com`" in reason and "polecat-3" in reason and "not among the allowed targets" in reason
    assert "systemMessage" not in output(proc)
    [rec] = env.records("action_scope")
    assert (rec["rule"], rec["result"]) == ("allow_targets", "deny")


@pytest.mark.parametrize("command,denied", [
    ("ssh build-7.example.com make", False),                      # allowed by host:build-*
    ("ssh build-secret-2.example.com", True),                     # deny beats allow
    ("systemctl restart metrics", False),
    ("systemctl restart etcd", True),
    ("git clone git@github.com:acme/tool.git", False),
    ("git push https://github.com/other/tool.git", True),
    ("docker stop web", True),                                    # not in the allow list
    ("ssh prod 'uptime'", False),                                 # bare hostname: abstains
    ("ssh prod.example.com uptime | tee log", True),              # into a pure filter: the ssh is read alone
    ("ssh user@prod.example.com 2>&1 | tee ssh.log", True),
    ("ssh prod.example.com uptime | grep -v load | head -n 3", True),
    ("systemctl restart etcd 2>&1 | tail -5", True),
    ("ssh build-7.example.com make | tee build.log", False),      # allowed target, through a filter
    ("ssh prod.example.com uptime | ssh b.example.com 'cat > x'", False),  # two non-filters: abstains
    ("ssh prod.example.com | sed -e 's/x/y/e'", False),            # sed's e flag runs a command: abstains
    ("ssh prod.example.com | awk '{print}'", False),               # awk is no pure filter: abstains
    ("grep -r 'ssh prod.example.com' docs | head -3", False),      # only filters: nothing acts
    ("make && ssh prod.example.com", True),                       # every segment certain
    ("make > log 2>&1 && ssh prod.example.com", True),            # a redirection is data, not a command
    ("ssh prod.example.com uptime > \"$(mktemp)\"", False),        # a substitution: the line abstains
    ("gh issue create --body 'ran ssh prod.example.com; systemctl stop etcd'", False),
    ("cat <<'EOF'\nsystemctl stop etcd\nssh prod.example.com\nEOF", False),
    ("echo \"systemctl stop etcd\"", False),
    ("git commit -m 'ssh prod.example.com'", False),
    ("VAR=1 ssh prod.example.com", True),
    ("sh -c 'systemctl stop etcd'", True),
    ("sudo -u x systemctl restart etcd", True),
    ("env FOO=1 timeout 5 ssh u@prod.example.com", True),
])
def test_enforced_scope_denies_exactly_the_resolved_violations(env, command, denied):
    configure(env, mode="enforce", action_scope="enforce", scopes=SCOPE, governed=False)
    out = output(hook(env, command, role="polecat-3"))
    assert (out.get("hookSpecificOutput", {}).get("permissionDecision") == "deny") is denied
    assert bool(env.records("action_scope")) is denied


def test_an_empty_allow_list_permits_any_target_but_deny_still_applies(env):
    configure(env, mode="enforce", action_scope="enforce", governed=False,
              scopes='[yupana.policy.scopes.polecat-3]\ndeny_targets = ["service:etcd"]\n')
    assert output(hook(env, "ssh anything.example.com", role="polecat-3")) == {}
    assert output(hook(env, "systemctl stop etcd", role="polecat-3"))["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_no_tenant_or_no_scope_entry_is_unconstrained(env):
    configure(env, mode="enforce", action_scope="enforce", scopes=SCOPE, governed=False)
    assert output(hook(env, "systemctl stop etcd")) == {}
    assert output(hook(env, "systemctl stop etcd", role="someone-else")) == {}
    assert env.records("action_scope") == []


def test_the_tenant_comes_from_bobbin_role_not_the_tenant_flag(env):
    configure(env, mode="enforce", action_scope="enforce", scopes=SCOPE, governed=False)
    from conftest import run_yupana

    payload = json.dumps({"session_id": "s", "cwd": str(env.base), "tool_name": "Bash",
                          "tool_input": {"command": "systemctl stop etcd"}})
    proc = run_yupana(["hook", "pre-bash", "--tenant", "polecat-3"], env, stdin=payload, cwd=str(env.base))
    assert proc.returncode == 0
    # --tenant is accepted (hooks never exit on a flag) but pre-bash reads $BOBBIN_ROLE only
    assert proc.stdout == b""


def test_a_malformed_target_glob_fails_open_loudly_once_per_session(env):
    configure(env, mode="enforce", action_scope="enforce", governed=False,
              scopes='[yupana.policy.scopes.polecat-3]\ndeny_targets = ["service:[etcd"]\n')
    first = hook(env, "systemctl stop etcd", role="polecat-3")
    assert "systemMessage" in output(first) and "hookSpecificOutput" not in output(first)
    assert "NOT enforced" in output(first)["systemMessage"]
    second = hook(env, "systemctl stop etcd", role="polecat-3")
    assert second.stdout == b"" and b"malformed target glob" in second.stderr
    recs = env.records("fail_open")
    assert [r["fail_kind"] for r in recs] == ["globs", "globs"]


def test_a_config_error_fails_open_loudly(env):
    env.user_config('[yupana.policy]\nmode = "sometimes"\n')
    proc = hook(env, "systemctl stop etcd", role="polecat-3")
    assert "configuration error" in output(proc)["systemMessage"]
    assert env.records("fail_open")[0]["fail_kind"] == "config"
    assert env.records("action")[0]["target"] == "etcd"  # the action is recorded before the config is read


# ── host-memory policy ─────────────────────────────────────────────────────────────────


def test_advise_below_the_floor_reports_the_measured_values(env):
    configure(env, mode="advise")
    write_cache(env, memory_policies=[memory_policy(gib=8.0)])
    proc = hook(env, "cd repo && nice cargo build --release", extra_env=meminfo(env, available_gib=3.25, total_gib=15.5))
    out = output(proc)
    assert "hookSpecificOutput" not in out
    message = out["systemMessage"]
    assert "build-memory-floor" in message and "3.25 GiB" in message and "15.50 GiB" in message
    assert "8.00 GiB" in message and "enforce would deny" in message and "policy fresh" in message
    [rec] = env.records("memory_policy")
    assert rec == {**rec, "rule": "build-memory-floor", "result": "advise", "available_gib": 3.25,
                   "total_gib": 15.5, "threshold_gib": 8.0, "policy_freshness": "fresh"}


def test_enforce_denies_only_for_a_hard_policy(env):
    configure(env, mode="enforce")
    write_cache(env, memory_policies=[memory_policy(gib=8.0)])
    extra = meminfo(env, available_gib=2.0)
    out = output(hook(env, "cargo test", extra_env=extra))
    reason = out["hookSpecificOutput"]["permissionDecisionReason"]
    assert "2.00 GiB" in reason and "16.00 GiB" in reason and "8.00 GiB" in reason and "Wait for memory" in reason
    assert env.records("memory_policy")[-1]["result"] == "deny"

    write_cache(env, memory_policies=[memory_policy(gib=8.0, cls="soft")])
    out = output(hook(env, "cargo test", extra_env=extra))
    assert "hookSpecificOutput" not in out and "governed, not blocking" in out["systemMessage"]
    assert env.records("memory_policy")[-1]["result"] == "notify"

    write_cache(env, memory_policies=[memory_policy(gib=8.0, cls=None, effect="warn")])
    out = output(hook(env, "cargo test", extra_env=extra))
    assert "hookSpecificOutput" not in out


def test_above_the_floor_or_unmatched_is_silent(env):
    configure(env, mode="enforce")
    write_cache(env, memory_policies=[memory_policy(gib=8.0)])
    assert hook(env, "cargo build", extra_env=meminfo(env, available_gib=8.0)).stdout == b""
    low = meminfo(env, available_gib=1.0)
    for command in ("cargo check", "echo 'cargo build'", "git commit -m 'cargo build'",
                    "cat <<EOF\ncargo build\nEOF"):
        assert hook(env, command, extra_env=low).stdout == b"", command
    assert env.records("memory_policy") == []


def test_wrappers_and_shell_payloads_do_not_hide_a_memory_heavy_command(env):
    configure(env, mode="enforce")
    write_cache(env, memory_policies=[memory_policy(gib=8.0)])
    low = meminfo(env, available_gib=1.0)
    for command in ("sudo -E env RUSTFLAGS=-g timeout 600 cargo build", "bash -lc 'cd x && cargo build'"):
        out = output(hook(env, command, extra_env=low))
        assert out["hookSpecificOutput"]["permissionDecision"] == "deny", command


def test_an_unreadable_line_can_advise_but_never_deny(env):
    configure(env, mode="enforce")
    write_cache(env, memory_policies=[memory_policy(regex=r"cargo\s+build")])
    out = output(hook(env, "cargo build 'unterminated", extra_env=meminfo(env, available_gib=1.0)))
    assert "hookSpecificOutput" not in out and "could not be read with certainty" in out["systemMessage"]


def test_mode_off_makes_the_memory_policy_inert(env):
    configure(env, mode="off")
    write_cache(env, memory_policies=[memory_policy(gib=8.0)])
    assert hook(env, "cargo build", extra_env=meminfo(env, available_gib=1.0)).stdout == b""
    assert env.records("memory_policy") == [] and env.records("fail_open") == []


@pytest.mark.parametrize("available,total,fail_kind,words", [
    (None, 16.0, "memory-signal", "MemFree is not a substitute"),
    (4.0, None, "memory-signal", "no MemTotal"),
    (4.0, 6.0, "memory-threshold", "above this host's MemTotal"),
])
def test_a_memory_signal_that_cannot_be_trusted_fails_open_loudly(env, available, total, fail_kind, words):
    configure(env, mode="enforce")
    write_cache(env, memory_policies=[memory_policy(gib=8.0)])
    extra = meminfo(env, available_gib=available, total_gib=total)
    first = output(hook(env, "cargo build", extra_env=extra))
    assert "hookSpecificOutput" not in first
    assert words in first["systemMessage"] and "UNGUARDED" in first["systemMessage"]
    second = hook(env, "cargo build", extra_env=extra)
    assert second.stdout == b"" and words.encode() in second.stderr  # once per session, stderr every time
    recs = env.records("fail_open")
    assert [r["fail_kind"] for r in recs] == [fail_kind, fail_kind]
    assert env.records("memory_policy") == []


def test_an_unreadable_meminfo_file_fails_open(env):
    configure(env, mode="enforce")
    write_cache(env, memory_policies=[memory_policy()])
    out = output(hook(env, "cargo build", extra_env={"YUPANA_MEMINFO_PATH": str(env.base / "missing")}))
    assert "host memory is unreadable" in out["systemMessage"]


def test_a_broken_regex_fails_open(env):
    configure(env, mode="enforce")
    write_cache(env, memory_policies=[memory_policy(regex="cargo(")])
    out = output(hook(env, "cargo build", extra_env=meminfo(env, available_gib=1.0)))
    assert "does not compile" in out["systemMessage"]
    assert env.records("fail_open")[0]["fail_kind"] == "memory-regex"


def test_no_servable_cache_fails_open_loudly(env):
    configure(env, mode="enforce")
    proc = hook(env, "cargo build", extra_env=meminfo(env, available_gib=1.0))
    out = output(proc)
    assert "hookSpecificOutput" not in out and "no servable projection cache" in out["systemMessage"]
    [rec] = env.records("fail_open")
    assert (rec["fail_kind"], rec["miss"]) == ("projection", "absent")


def test_a_cache_past_its_ttl_fails_open(env):
    env.user_config('[yupana.policy]\nmode = "enforce"\n[yupana.quipu]\nenabled = true\nendpoint = "http://127.0.0.1:9"\n'
                    'projection_cache_ttl_secs = 600\n')
    write_cache(env, memory_policies=[memory_policy()], age_secs=700)
    out = output(hook(env, "cargo build", extra_env=meminfo(env, available_gib=1.0)))
    assert "hookSpecificOutput" not in out and "past projection_cache_ttl_secs" in out["systemMessage"]
    assert env.records("fail_open")[0]["miss"] == "expired"


def test_a_stale_cache_still_enforces_and_says_so(env):
    env.user_config('[yupana.policy]\nmode = "enforce"\n[yupana.quipu]\nenabled = true\nendpoint = "http://127.0.0.1:9"\n'
                    'refresh_interval_secs = 60\nprojection_cache_ttl_secs = 3600\n')
    write_cache(env, memory_policies=[memory_policy()], age_secs=900)
    out = output(hook(env, "cargo build", extra_env=meminfo(env, available_gib=1.0)))
    reason = out["hookSpecificOutput"]["permissionDecisionReason"]
    assert "policy STALE: cache age 9" in reason
    assert [r["hook"] for r in env.records("served_from_cache")] == ["pre-bash"]
    assert env.records("memory_policy")[0]["policy_freshness"] == "stale"


def test_memory_and_action_scope_decide_together(env):
    configure(env, mode="enforce", action_scope="advise", scopes=SCOPE)
    write_cache(env, memory_policies=[memory_policy()])
    proc = hook(env, "cargo build && ssh prod.example.com", role="polecat-3", extra_env=meminfo(env, 1.0))
    out = output(proc)
    assert out["hookSpecificOutput"]["permissionDecision"] == "deny"  # memory: hard, enforce
    assert b"prod.example.com" in proc.stderr  # action scope: advise only
    assert env.records("action_scope")[0]["result"] == "advise"


def test_an_unrelated_command_imports_no_regex_engine_and_takes_no_disk_sample(env):
    import subprocess
    import sys

    configure(env, mode="enforce")
    write_cache(env, memory_policies=[memory_policy()])
    hook(env, "ls")  # the first call resolves the configuration snapshot
    payload = json.dumps({"session_id": "s", "cwd": str(env.base), "tool_name": "Bash",
                          "tool_input": {"command": "ls -la && git status"}})
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "yupana", "hook", "pre-bash"], input=payload.encode(),
                          env=env, cwd=str(env.base), capture_output=True)
    assert proc.returncode == 0 and proc.stdout == b""
    imported = {line.split("|")[-1].strip() for line in proc.stderr.decode().splitlines() if "|" in line}
    assert "yupana.hooks.pre_bash" in imported
    forbidden = {"re2", "json", "subprocess", "shlex", "typing", "dataclasses", "tempfile", "tomllib", "argparse",
                 "yupana.state.disk_samples", "httpx", "rdflib", "pydantic"}
    assert not imported & forbidden, sorted(imported & forbidden)
