"""``yupana project`` and ``yupana project --dump`` through the real CLI."""

from __future__ import annotations

import fcntl
import json
import os
import time
from pathlib import Path

import pytest
from catalogue_kit import configure, write_catalogue
from servers.faulty import FaultyServer

PLANES = ("policies", "text_rules", "exemption_selectors", "grounded_rules", "tripwires", "memory_policies",
          "ci_map", "repo_exposure", "landing_policies", "grounding", "work_item_scopes", "work_item_parents", "work_item_status", "disk_history",
          "unprojected")


@pytest.fixture
def root(tmp_path) -> Path:
    root = tmp_path / "project"
    write_catalogue(root / "cat", 3)
    configure(root, "file:cat")
    return root


def plane_lines(stdout: str) -> dict[str, list[str]]:
    return {line.split()[0]: line.split() for line in stdout.splitlines() if line.startswith("  ")}


def test_project_prints_one_line_per_plane_with_count_digest_duration_and_endpoint(yupana, env, root):
    done = yupana("project", cwd=root)
    assert done.returncode == 0, done.stderr
    key = "file:" + str(root / "cat")
    lines = plane_lines(done.stdout.decode())
    assert tuple(lines) == PLANES
    text = lines["text_rules"]
    assert text[1] == "3" and text[2].startswith("sha256:") and text[3].endswith("s") and text[-1] == key
    assert lines["grounding"][1] == "unknown"  # UNKNOWN is said, never a silent 0
    assert "rule set digest sha256:" in done.stdout.decode()
    cached = json.loads(env.cache_path.read_text())
    assert cached["endpoint"] == key and len(cached["text_rules"]) == 3


def test_project_without_configuration_projects_the_bundled_catalogue_into_its_own_cache(yupana, env, tmp_path):
    bare = tmp_path / "bare"
    bare.mkdir()
    done = yupana("project", cwd=bare)
    assert done.returncode == 0, done.stderr
    lines = plane_lines(done.stdout.decode())
    assert int(lines["text_rules"][1]) > 0 and lines["text_rules"][-1].endswith("fixtures/catalogue")
    from yupana.state import paths

    bundled = env.cache_path  # the only store with a cache: the bundled catalogue's own
    assert bundled.exists() and bundled.parent.parent == env.state / "yupana" / "stores"
    assert bundled.parent.name == paths.store_digest(json.loads(bundled.read_text())["dataset"])
    assert (bundled.parent / "endpoint").read_text().split(" | ")[0].endswith("fixtures/catalogue")


def test_a_failed_refresh_exits_non_zero_names_the_reason_and_keeps_the_prior_cache(yupana, env, root):
    assert yupana("project", cwd=root).returncode == 0
    before = env.cache_path.read_bytes()
    (root / "cat" / "catalogue.ttl").write_text("@prefix broken")
    done = yupana("project", cwd=root)
    err = done.stderr.decode()
    assert done.returncode == 1
    assert "refresh FAILED (protocol)" in err and "catalogue.ttl" in err
    assert "prior cache kept (age " in err
    assert env.cache_path.read_bytes() == before


def test_a_failure_with_nothing_to_keep_says_so(yupana, env, root):
    (root / "cat" / "catalogue.ttl").write_text("@prefix broken")
    done = yupana("project", cwd=root)
    assert done.returncode == 1 and "no prior cache for this endpoint (absent)" in done.stderr.decode()


def test_project_json_reports_the_outcome(yupana, env, root):
    done = yupana("project", "--json", cwd=root)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["status"] == "refreshed" and out["error"] is None
    text = next(p for p in out["planes"] if p["plane"] == "text_rules")
    assert text["count"] == 3 and text["digest"].startswith("sha256:") and text["requests"] >= 1
    assert out["gate"]["conforms"] is True


def test_project_json_reports_each_phase_and_what_a_second_refresh_kept(yupana, env, root):
    first = json.loads(yupana("project", "--json", cwd=root).stdout)
    phases = first["phases"]
    assert set(phases) == {"server_s", "transfer_s", "decode_s", "compile_s", "gate_s", "write_s"}
    assert all(phases[k] >= 0 for k in ("server_s", "transfer_s", "decode_s", "gate_s"))
    assert all(phases[k] is None or phases[k] >= 0 for k in ("compile_s", "write_s"))  # measured by the writer
    assert sum(v for v in phases.values() if v) <= first["duration_s"] + 0.01
    assert first["incremental"] == {"rules_kept": 0, "rules_read": 3, "full_reason": "no memo of a prior refresh"}
    second = json.loads(yupana("project", "--json", cwd=root).stdout)
    assert second["incremental"] == {"rules_kept": 3, "rules_read": 0, "full_reason": None}
    assert second["gate"]["kept_subjects"] == 3 and second["gate"]["conforms"] is True
    table = yupana("project", cwd=root).stdout.decode()
    assert "text rules: 3 unchanged and kept, 0 read" in table and "phases: server " in table
    (root / "cat" / "catalogue.ttl").write_text((root / "cat" / "catalogue.ttl").read_text().replace(
        'rdfs:label "no ACME ticket 1"', 'rdfs:label "no ACME ticket one"'))
    third = json.loads(yupana("project", "--json", cwd=root).stdout)
    assert third["incremental"]["rules_read"] == 1 and third["incremental"]["rules_kept"] == 2
    labels = [r["label"] for r in json.loads(env.cache_path.read_text())["text_rules"]]
    assert labels == ["no ACME ticket 0", "no ACME ticket one", "no ACME ticket 2"]


def test_a_malformed_changed_rule_still_fails_and_keeps_cache_and_memo(yupana, env, root):
    assert yupana("project", cwd=root).returncode == 0
    cache_before = env.cache_path.read_bytes()
    memo_before = env.cache_path.with_suffix(".memo").read_bytes()
    catalogue = root / "cat" / "catalogue.ttl"
    catalogue.write_text(catalogue.read_text().replace('aegis:enforcementTier "block" ;', 'aegis:enforcementTier "never" ;', 1))
    done = yupana("project", cwd=root)
    err = done.stderr.decode()
    assert done.returncode == 1 and "refresh FAILED (projection)" in err
    assert "rule_acme_0: aegis:enforcementTier: 'never' is not one of block, warn" in err
    assert env.cache_path.read_bytes() == cache_before
    assert env.cache_path.with_suffix(".memo").read_bytes() == memo_before


def test_a_running_refresh_makes_project_exit_busy(yupana, env, root):
    lock = env.cache_for("file:" + str(root / "cat")).parent / "refresh.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock, os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    os.write(fd, f"{os.getpid()} {int(time.time())}\n".encode())
    try:
        done = yupana("project", "--wait", "0.3", cwd=root)
    finally:
        os.close(fd)
    assert done.returncode == 3
    assert f"a refresh is already running (pid {os.getpid()}" in done.stderr.decode()


def test_a_slow_refresh_says_what_it_is_doing_on_stderr(yupana, env, root):
    server = FaultyServer("never-answer").start()
    try:
        configure(root, server.url, dialect="sparql11", refresh_deadline_secs=2.5, request_timeout_secs=10)
        done = yupana("project", "--verbose", cwd=root)  # piped: progress only with --verbose (issue 14 §1)
    finally:
        server.stop()
    err = done.stderr.decode()
    assert done.returncode == 1
    assert f"yupana: projecting from {server.url}" in err
    assert "refresh FAILED (" in err


def test_a_fast_refresh_prints_no_progress(yupana, env, root):
    done = yupana("project", cwd=root)
    assert done.returncode == 0 and "projecting from" not in done.stderr.decode()


# ── --dump ───────────────────────────────────────────────────────────────────────────


def test_dump_without_configuration_shows_the_bundled_catalogue(yupana, env, tmp_path):
    bare = tmp_path / "bare"
    bare.mkdir()
    done = yupana("project", "--dump", "--json", cwd=bare)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["version"] == 1 and out["endpoint"].endswith("fixtures/catalogue")
    assert "fresh" in json.dumps(out["freshness"]) and "STALE" not in json.dumps(out["freshness"]).upper()
    assert len(out["text_rules"]) > 0 and "written_at" in out


def test_dump_shows_the_cache_as_it_is_for_a_configured_endpoint(yupana, env, root):
    done = yupana("project", "--dump", "--json", cwd=root)
    assert done.returncode == 1 and "nothing to dump" in done.stderr.decode() and "yupana project" in \
        done.stderr.decode()
    assert yupana("project", cwd=root).returncode == 0
    done = yupana("project", "--dump", "--json", cwd=root)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert [r["name"] for r in out["text_rules"]] == ["rule_acme_0", "rule_acme_1", "rule_acme_2"]


def test_dump_of_a_cache_hooks_would_refuse_warns(yupana, env, root):
    assert yupana("project", cwd=root).returncode == 0
    configure(root, "file:cat", projection_cache_ttl_secs=0)
    done = yupana("project", "--dump", "--json", cwd=root)
    assert done.returncode == 0
    assert "hooks would NOT serve this cache (expired)" in done.stderr.decode()


def test_dump_no_refresh_without_a_cache_fails_clearly(yupana, env, tmp_path):
    bare = tmp_path / "bare"
    bare.mkdir()
    done = yupana("project", "--dump", "--no-refresh", cwd=bare)
    assert done.returncode == 1 and "nothing to dump" in done.stderr.decode()


@pytest.mark.parametrize("name", ["my policies", "team-{a}", "ü {x} y"])
def test_a_file_store_under_a_path_with_a_space_or_brace_projects_and_guards(yupana, env, tmp_path, name):
    root = tmp_path / name
    write_catalogue(root / "cat dir", 2)
    configure(root, "file:cat dir")
    text = (root / ".bobbin" / "config.toml").read_text()
    (root / ".bobbin" / "config.toml").write_text('[yupana.policy]\nmode = "enforce"\nexposure = "public"\n' + text)
    done = yupana("project", cwd=root)
    assert done.returncode == 0, done.stderr
    assert json.loads(env.cache_path.read_text())["counts"]["text_rules"] == 2
    (root / "lib.rs").write_text("old\n")
    payload = {"session_id": "s", "transcript_path": "/tmp/t.jsonl", "cwd": str(root), "permission_mode": "default",
               "hook_event_name": "PreToolUse", "tool_name": "Edit",
               "tool_input": {"file_path": str(root / "lib.rs"), "old_string": "old", "new_string": "// ACME1-4"}}
    hooked = yupana("hook", "pre-edit", cwd=root, stdin=json.dumps(payload))
    assert json.loads(hooked.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny", hooked.stdout


@pytest.mark.parametrize("dialect", ["sparql11", "quipu"])
def test_a_store_answering_200k_deep_json_is_a_protocol_failure(yupana, env, root, dialect):
    server = FaultyServer("deep-json").start()
    try:
        configure(root, server.url, dialect=dialect)
        done = yupana("project", cwd=root)
    finally:
        server.stop()
    err = done.stderr.decode()
    assert done.returncode == 1
    assert "refresh FAILED (protocol)" in err and "deeper than any SPARQL result" in err, err
    assert "RecursionError" not in err and "internal" not in err
