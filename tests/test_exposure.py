"""Exposure: answered from exposure.json now; a miss starts one detached lookup against /policy/check."""

from __future__ import annotations

import json
import os
import time

from pathlib import Path

import pytest
from conftest import run_yupana

from yupana import exposure

AEGIS = "http://aegis.gastown.local/ontology/"


def _project(env, tmp_path, endpoint: str, dialect: str | None = "quipu"):
    root = tmp_path / "repo"
    (root / ".bobbin").mkdir(parents=True, exist_ok=True)
    lines = ["[yupana.quipu]", "enabled = true", f'endpoint = "{endpoint}"']
    if dialect:
        lines.append(f'dialect = "{dialect}"')
    (root / ".bobbin" / "config.toml").write_text("\n".join(lines) + "\n")
    return root


def _wait_for(path, timeout=20.0):
    end = time.time() + timeout
    while time.time() < end:
        if os.path.exists(path):
            return True
        time.sleep(0.05)
    return False


@pytest.mark.parametrize("outcome,expected", [("satisfied", "public"), ("unsatisfied", "internal"),
                                              ("unknown", "unknown")])
def test_worker_maps_policy_check_outcomes(env, tmp_path, quipu_server, outcome, expected):
    server = quipu_server()
    server.policy_outcomes[AEGIS + "repo_acme"] = outcome
    root = _project(env, tmp_path, server.url)
    done = run_yupana(["exposure-worker", "--repo", "acme", "--endpoint", server.url, "--root", str(root)], env)
    assert done.returncode == 0, done.stderr
    entry = json.loads((env.cache_for(server.url).parent / "exposure.json").read_text())["entries"][f"{server.url}|acme"]
    assert entry["exposure"] == expected
    posts = [r for r in server.requests if r.path == "/policy/check"]
    assert [r.json for r in posts] == [{"policy": exposure.POLICY_IRI, "target": AEGIS + "repo_acme"}]
    assert not env.records("command")  # internal commands are not counted as operator commands


def test_worker_stores_transport_failures_as_unknown_with_the_reason(env, tmp_path, quipu_server):
    server = quipu_server()
    server.fail_next(500, "boom", path="/policy/check")
    root = _project(env, tmp_path, server.url)
    run_yupana(["exposure-worker", "--repo", "acme", "--endpoint", server.url, "--root", str(root)], env)
    entry = json.loads((env.cache_for(server.url).parent / "exposure.json").read_text())["entries"][f"{server.url}|acme"]
    assert entry["exposure"] == "unknown" and "/policy/check failed" in entry["reason"]


def test_lookup_never_waits_and_starts_one_detached_worker(env, tmp_path, quipu_server, monkeypatch):
    server = quipu_server()
    server.policy_outcomes[AEGIS + "repo_acme"] = "satisfied"
    root = _project(env, tmp_path, server.url)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    quipu = {"endpoint": server.url, "dialect": "quipu"}
    t0 = time.monotonic()
    first = exposure.lookup(quipu, "acme", int(time.time()), root=str(root))
    second = exposure.lookup(quipu, "acme", int(time.time()), root=str(root))
    assert time.monotonic() - t0 < 0.5
    assert first[0] == "unknown" and "background" in first[1]
    assert second[0] == "unknown" and "already running" in second[1]
    assert _wait_for(env.cache_for(server.url).parent / "exposure.json")
    end = time.time() + 20
    while time.time() < end and os.path.exists(exposure.pending_marker("acme", server.url)):
        time.sleep(0.05)
    assert exposure.lookup(quipu, "acme", int(time.time()), root=str(root)) == ("public", None)
    assert len([r for r in server.requests if r.path == "/policy/check"]) == 1


def test_expired_answers_are_not_served(env, monkeypatch, tmp_path):
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    path = env.cache_for("http://127.0.0.1:9").parent / "exposure.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    now = int(time.time())
    quipu = {"endpoint": "http://127.0.0.1:9", "dialect": "quipu"}
    path.write_text(json.dumps({"entries": {
        "http://127.0.0.1:9|fresh": {"exposure": "internal", "at": now - 10},
        "http://127.0.0.1:9|old": {"exposure": "public", "at": now - exposure.TTL_SECS - 1},
        "http://127.0.0.1:9|down": {"exposure": "unknown", "at": now - 10, "reason": "connect refused"},
    }}))
    assert exposure.lookup(quipu, "fresh", now, root=str(tmp_path)) == ("internal", None)
    assert exposure.lookup(quipu, "down", now, root=str(tmp_path)) == ("unknown", "connect refused")
    assert exposure.lookup(quipu, "old", now, root=str(tmp_path))[0] == "unknown"


def test_no_repo_or_no_policy_check_is_unknown_without_a_lookup(env, monkeypatch, tmp_path):
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    assert exposure.lookup({"endpoint": "http://x"}, None, 0, root=".") == ("unknown", "the file is in no git tree")
    found, why = exposure.lookup({"endpoint": "file:/data/catalogue.ttl"}, "acme", 0, root=".")
    assert found == "unknown" and "no /policy/check" in why
    found, why = exposure.lookup({"endpoint": "http://x", "dialect": "sparql11"}, "acme", 0, root=".")
    assert found == "unknown" and "SPARQL 1.1" in why
    assert not os.path.exists(exposure.pending_marker("acme", "http://x"))


def test_outcome_mapping():
    assert exposure.outcome_to_exposure({"outcome": "satisfied"}) == ("public", None)
    assert exposure.outcome_to_exposure({"outcome": "unsatisfied"}) == ("internal", None)
    assert exposure.outcome_to_exposure({})[0] == "unknown"
    assert "unrecognised" in exposure.outcome_to_exposure({"outcome": "maybe"})[1]
    assert exposure.outcome_to_exposure("nope")[0] == "unknown"


def test_resolve_takes_the_first_source_that_knows(env, monkeypatch, tmp_path):
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    path = Path(exposure.cache_path_for({"endpoint": "http://127.0.0.1:9", "dialect": "quipu"}, str(tmp_path)))
    path.parent.mkdir(parents=True, exist_ok=True)
    now = int(time.time())
    path.write_text(json.dumps({"entries": {"http://127.0.0.1:9|acme": {"exposure": "internal", "at": now - 10}}}))
    quipu = {"endpoint": "http://127.0.0.1:9", "dialect": "quipu"}
    graph = [{"iri": AEGIS + "repo_acme", "repo": "acme", "exposure": "public", "comment": None}]
    # 1. the projected graph statement, before /policy/check
    assert exposure.resolve(quipu, graph, "internal", "acme", now, root=str(tmp_path)) == (
        "public", "stated in the governed graph on aegis:repo_acme", "graph")
    # 2. /policy/check's stored answer, before the config declaration
    assert exposure.resolve(quipu, [], "public", "acme", now, root=str(tmp_path)) == (
        "internal", "quipu's /policy/check", "policy-check")
    # 3. the config declaration while /policy/check does not know yet (dry: no lookup started)
    found = exposure.resolve(quipu, [], "public", "other", now, root=str(tmp_path),
                             workers=exposure.LookOnly())
    assert found == ("public", "declared by [yupana.policy] exposure", "config")
    # nothing knows: unknown, naming every source
    found, why, source = exposure.resolve({"endpoint": "http://x", "dialect": "sparql11"}, graph, None, "other", now,
                                          root=str(tmp_path))
    assert (found, source) == ("unknown", "none")
    assert why == ("no exposure source knows this repository: the governed graph states no aegis:exposure for "
                   "aegis:repo_other; a generic SPARQL 1.1 store has no /policy/check to ask; "
                   "[yupana.policy] exposure is not set")
    assert not os.path.exists(exposure.pending_marker("other", "http://x"))
