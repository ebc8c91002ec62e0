"""Two projects, two endpoints, one host (issue 9 §4), through the real CLI and real Oxigraph servers.

Each store keeps its own cache, refresh state and back-off in its own directory
(``$XDG_STATE_HOME/yupana/stores/<digest>/``); a refresh of one never switches governed
policy off in the other; ``$YUPANA_PROJECTION_CACHE_PATH`` still names one exact cache; a
cache left by an older yupana in ``$XDG_STATE_HOME/yupana/projection.json`` is migrated into
its endpoint's directory without losing anything.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest
from catalogue_kit import configure, write_catalogue
from conftest import run_yupana

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "hooks"))
from guard_kit import Repo, hook


def _project(tmp_path: Path, env, name: str, endpoint: str, **quipu) -> Repo:
    repo = Repo(tmp_path / name, env)
    configure(repo.root, endpoint, dialect="sparql11", **quipu)
    text = (repo.root / ".bobbin" / "config.toml").read_text()
    (repo.root / ".bobbin" / "config.toml").write_text('[yupana.policy]\nmode = "enforce"\n' + text)
    return repo


def _edit(repo: Repo, text: str) -> dict:
    repo.file("src/lib.rs", "old\n")
    return repo.payload(old_string="old", new_string=text)


def _governed(env, repo: Repo, ticket: str) -> str:
    """The hook's verdict on an edit that introduces ``ticket``: the message, which must be governed."""
    result = hook(env, _edit(repo, f"// see {ticket}"))
    assert "policy guard failed open" not in result.message, result
    assert ticket.split("-")[0].lower() in result.message.lower() and "(policy " in result.message, result
    return result.message


@pytest.fixture
def two(tmp_path, env, oxigraph_server):
    """Two projects, each on its own real Oxigraph holding a catalogue of its own."""
    alpha_cat = write_catalogue(tmp_path / "alpha-cat", 2, prefix="ALPHA", tier="warn")
    beta_cat = write_catalogue(tmp_path / "beta-cat", 3, prefix="BETA", tier="warn")
    alpha_url = oxigraph_server(alpha_cat / "catalogue.ttl", fresh=True)
    beta_url = oxigraph_server(beta_cat / "catalogue.ttl", fresh=True)
    assert alpha_url != beta_url
    alpha = _project(tmp_path, env, "alpha", alpha_url)
    beta = _project(tmp_path, env, "beta", beta_url)
    return alpha, alpha_url, beta, beta_url


def test_two_projects_on_two_endpoints_each_keep_their_own_governed_policy(env, two):
    alpha, alpha_url, beta, beta_url = two
    for repo in (alpha, beta):
        done = run_yupana(["project"], env, cwd=repo.root)
        assert done.returncode == 0, done.stderr
    assert json.loads(env.cache_for(alpha_url, dialect="sparql11").read_text())["counts"]["text_rules"] == 2
    assert json.loads(env.cache_for(beta_url, dialect="sparql11").read_text())["counts"]["text_rules"] == 3
    assert env.cache_for(alpha_url, dialect="sparql11").parent != env.cache_for(beta_url, dialect="sparql11").parent
    assert (env.cache_for(alpha_url, dialect="sparql11").parent / "endpoint").read_text() == (
        f"{alpha_url} | default_graph=- | auth=none | masked=-\n")
    assert not env.legacy_cache_path.exists()
    # the background refreshes of both projects, interleaved: neither switches the other off
    for _ in range(2):
        for repo in (alpha, beta):
            done = run_yupana(["refresh-worker", "--root", str(repo.root), "--force"], env)
            assert done.returncode == 0, done.stderr
        assert "(policy fresh" in _governed(env, alpha, "ALPHA0-12")
        assert "(policy fresh" in _governed(env, beta, "BETA2-7")
    # each project's hook knows only its own catalogue
    other = hook(env, _edit(alpha, "// see BETA2-7"))
    assert "BETA" not in other.message and "failed open" not in other.message
    states = [json.loads((env.cache_for(u, dialect="sparql11").parent / "refresh-state.json").read_text()) for u in (alpha_url, beta_url)]
    assert [s["endpoint"] for s in states] == [alpha_url, beta_url]
    assert all(s["consecutive_failures"] == 0 for s in states)


def test_one_store_backing_off_leaves_the_other_fresh(env, two, tmp_path):
    alpha, alpha_url, beta, beta_url = two
    for repo in (alpha, beta):
        assert run_yupana(["project"], env, cwd=repo.root).returncode == 0
    # beta's store goes away: its refresh fails and backs off; alpha's state is untouched
    dead = "http://127.0.0.1:9/query"
    configure(beta.root, dead, dialect="sparql11")
    assert run_yupana(["project"], env, cwd=beta.root).returncode != 0
    dead_state = json.loads((env.cache_for(dead, dialect="sparql11").parent / "refresh-state.json").read_text())
    assert dead_state["consecutive_failures"] == 1 and dead_state["backoff_until"] > time.time()
    alpha_state = json.loads((env.cache_for(alpha_url, dialect="sparql11").parent / "refresh-state.json").read_text())
    assert alpha_state["consecutive_failures"] == 0 and alpha_state["backoff_until"] is None
    assert "(policy fresh" in _governed(env, alpha, "ALPHA1-3")
    assert json.loads(env.cache_for(beta_url, dialect="sparql11").read_text())["counts"]["text_rules"] == 3  # kept for its endpoint


def test_the_explicit_cache_path_still_names_one_cache_for_every_endpoint(env, two, tmp_path):
    alpha, alpha_url, beta, _beta_url = two
    explicit = tmp_path / "pinned" / "cache.json"
    env["YUPANA_PROJECTION_CACHE_PATH"] = str(explicit)
    assert run_yupana(["project"], env, cwd=alpha.root).returncode == 0
    assert json.loads(explicit.read_text())["endpoint"] == alpha_url
    assert (explicit.parent / "refresh-state.json").exists() and not (env.state / "yupana" / "stores").exists()
    _governed(env, alpha, "ALPHA0-1")
    # the contract: a cache written for another endpoint is refused by name, never served
    refused = hook(env, _edit(beta, "// see BETA0-1"))
    assert "policy guard failed open" in refused.message and "written for" in refused.message
    assert env.records("fail_open")[-1]["miss"] == "endpoint"


def test_a_legacy_cache_migrates_into_its_endpoints_directory(env, two):
    alpha, alpha_url, beta, _beta_url = two
    assert run_yupana(["project"], env, cwd=alpha.root).returncode == 0
    store = env.cache_for(alpha_url, dialect="sparql11").parent
    legacy = env.state / "yupana"
    # what an older yupana left: one cache per user, its refresh state and exposure answers beside it
    body = env.cache_for(alpha_url, dialect="sparql11").read_bytes()
    state = (store / "refresh-state.json").read_bytes()
    for name in ("projection.json", "projection.hot", "refresh-state.json", "endpoint"):
        (store / name).replace(legacy / name) if name != "endpoint" else (store / name).unlink()
    (legacy / "exposure.json").write_text(json.dumps({"version": 1, "entries": {f"{alpha_url}|widgets": {
        "exposure": "internal", "at": int(time.time())}}}))
    store.rmdir() if not any(store.iterdir()) else None
    assert (legacy / "projection.json").exists() and not env.cache_for(alpha_url, dialect="sparql11").exists()
    # the next hook finds it where it belongs and serves it
    assert "(policy fresh" in _governed(env, alpha, "ALPHA1-9")
    assert env.cache_for(alpha_url, dialect="sparql11").read_bytes() == body
    assert (store / "refresh-state.json").read_bytes() == state
    assert json.loads((store / "exposure.json").read_text())["entries"][f"{alpha_url}|widgets"]["exposure"] == "internal"
    assert (store / "endpoint").read_text() == env.dataset_for(alpha_url, dialect="sparql11") + "\n"
    assert not (legacy / "projection.json").exists() and not (legacy / "refresh-state.json").exists()
    moved = env.records("state_migrated")
    assert len(moved) == 1 and moved[0]["legacy"] == str(legacy / "projection.json")
    # the other project, on another endpoint, is not affected by it
    assert run_yupana(["project"], env, cwd=beta.root).returncode == 0
    assert "(policy fresh" in _governed(env, alpha, "ALPHA1-9")
    assert "(policy fresh" in _governed(env, beta, "BETA0-9")


def test_a_legacy_cache_nothing_can_read_is_kept_for_the_operator(env, tmp_path):
    legacy = env.state / "yupana" / "projection.json"
    legacy.parent.mkdir(parents=True)
    legacy.write_text("{ not json")
    root = tmp_path / "p"
    write_catalogue(root / "cat", 1)
    configure(root, "file:cat")
    assert run_yupana(["project"], env, cwd=root).returncode == 0
    assert not legacy.exists() and (legacy.parent / "projection.json.unmigrated").read_text() == "{ not json"
    assert env.cache_for("file:" + str(root / "cat")).exists()
