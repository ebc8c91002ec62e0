"""One store, many datasets (issue 23 §1), through the real CLI and a real Oxigraph.

A cache is keyed by everything that selects its data (yupana/state/dataset.py): two projects
reading one Oxigraph through two default graphs, or one URL with two credentials in its query,
each keep their own store directory and cache; a cache of another dataset is refused by name
(the ``dataset`` miss), never served; a store directory of an older yupana (keyed by the
endpoint alone) is adopted only when it is proven to hold the configured dataset.
"""

from __future__ import annotations

import json
import shutil
import sys
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
    (repo.root / ".bobbin" / "config.toml").write_text('[yupana.policy]\nmode = "enforce"\nexposure = "public"\n' + text)
    return repo


def _edit(env, repo: Repo, text: str):
    repo.file("src/lib.rs", "old\n")
    return hook(env, repo.payload(old_string="old", new_string=text))


@pytest.fixture
def graphs(tmp_path, env, oxigraph_server):
    """One real Oxigraph holding team A's catalogue in urn:team-a and team B's in urn:team-b."""
    a_cat = write_catalogue(tmp_path / "a-cat", 2, prefix="ALPHA")
    b_cat = write_catalogue(tmp_path / "b-cat", 2, prefix="BETA")
    url = oxigraph_server(graphs={"urn:team-a": [a_cat / "catalogue.ttl"], "urn:team-b": [b_cat / "catalogue.ttl"]},
                          fresh=True)
    alpha = _project(tmp_path, env, "alpha", url, default_graph="urn:team-a")
    beta = _project(tmp_path, env, "beta", url, default_graph="urn:team-b")
    return url, alpha, beta


def test_two_default_graphs_of_one_store_each_get_their_own_rules(env, graphs):
    url, alpha, beta = graphs
    for repo in (alpha, beta):
        done = run_yupana(["project"], env, cwd=repo.root)
        assert done.returncode == 0, done.stderr
    a_cache = env.cache_for(url, dialect="sparql11", default_graph="urn:team-a")
    b_cache = env.cache_for(url, dialect="sparql11", default_graph="urn:team-b")
    assert a_cache.parent != b_cache.parent
    assert [r["name"] for r in json.loads(b_cache.read_text())["text_rules"]] == ["rule_beta_0", "rule_beta_1"]
    assert (b_cache.parent / "endpoint").read_text() == (
        f"{url} | default_graph=urn:team-b | auth=none | masked=-\n")
    # B never denies with A's rule, and denies with its own, "fresh"
    other = _edit(env, beta, "// see ALPHA0-12")
    assert not other.denied and "ALPHA" not in other.stdout + other.stderr, other.stdout
    own = _edit(env, beta, "// see BETA1-7")
    assert own.denied and "BETA1" in own.reason and "(policy fresh" in own.reason, own.reason
    assert _edit(env, alpha, "// see ALPHA0-12").denied
    assert not _edit(env, alpha, "// see BETA1-7").denied


def test_a_cache_of_another_dataset_is_refused_by_name(env, graphs):
    url, alpha, beta = graphs
    assert run_yupana(["project"], env, cwd=alpha.root).returncode == 0
    # A's cache copied where B's belongs (an operator's mistake, or an older yupana's shared directory)
    b_cache = env.cache_for(url, dialect="sparql11", default_graph="urn:team-b")
    b_cache.parent.mkdir(parents=True)
    shutil.copy(env.cache_for(url, dialect="sparql11", default_graph="urn:team-a"), b_cache)
    result = _edit(env, beta, "// see ALPHA0-12")
    assert not result.denied and "policy guard failed open" in result.message
    assert env.records("fail_open")[-1]["miss"] == "dataset"
    assert "urn:team-a" in result.message and "refusing another dataset's policy" in result.message
    status = json.loads(run_yupana(["status", "--json"], env, cwd=beta.root).stdout)
    assert status["rule_set"]["miss"]["label"] == "dataset"
    assert status["rule_set"]["dataset"].endswith("default_graph=urn:team-b | auth=none | masked=-")


def test_two_credentials_in_one_url_are_two_datasets_and_neither_is_stored(env, tmp_path, oxigraph_server):
    cat = write_catalogue(tmp_path / "cat", 1, prefix="ALPHA")
    url = oxigraph_server(cat / "catalogue.ttl")
    alpha = _project(tmp_path, env, "alpha", url + "?apikey=AAAAAAAA1")
    beta = _project(tmp_path, env, "beta", url + "?apikey=BBBBBBBB2")
    assert run_yupana(["project"], env, cwd=alpha.root).returncode == 0
    assert _edit(env, alpha, "// see ALPHA0-1").denied
    # B's key is another dataset: A's cache is not B's, whatever the store would answer B
    result = _edit(env, beta, "// see ALPHA0-1")
    assert not result.denied and "no projection cache at" in result.message
    assert env.records("fail_open")[-1]["miss"] == "absent"
    assert run_yupana(["project"], env, cwd=beta.root).returncode == 0
    stores = sorted((env.state / "yupana" / "stores").glob("*/projection.json"))
    assert len(stores) == 2
    names = [(s.parent / "endpoint").read_text() for s in stores]
    assert all(f"{url}?apikey=*** |" in n and "masked=k" in n for n in names) and names[0] != names[1]
    for path in (env.state / "yupana").rglob("*"):
        if path.is_file():
            body = path.read_bytes()
            assert b"AAAAAAAA1" not in body and b"BBBBBBBB2" not in body, path
    assert oct((env.state / "yupana" / "dataset.key").stat().st_mode & 0o777) == "0o600"
    # a new key (the old one deleted) is new directories, and hooks and the refresher agree on them
    (env.state / "yupana" / "dataset.key").unlink()
    shutil.rmtree(env.state / "yupana" / "stores")
    assert run_yupana(["project"], env, cwd=alpha.root).returncode == 0
    assert _edit(env, alpha, "// see ALPHA0-1").denied


def _legacy(env, url: str, **quipu) -> Path:
    """Move the dataset's store to the directory an older yupana kept it in (the endpoint's
    digest), as that yupana wrote it: no ``dataset`` field."""
    from yupana.state import paths

    new = env.cache_for(url, **quipu).parent
    old = Path(paths.store_dir(url.rstrip("/"), str(env.state / "yupana")))
    shutil.move(str(new), str(old))
    body = json.loads((old / "projection.json").read_text())
    del body["dataset"]
    (old / "projection.json").write_text(json.dumps(body))
    (old / "projection.hot").unlink()
    return old


def _settle(lock: Path) -> None:
    """Wait until no detached refresh worker holds the store's single-flight lock."""
    import fcntl
    import os
    import time

    end = time.monotonic() + 60
    while time.monotonic() < end:
        try:
            fd = os.open(lock, os.O_RDONLY)
        except FileNotFoundError:
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            time.sleep(0.05)
        finally:
            os.close(fd)
    raise AssertionError("a refresh worker still holds the lock after 60s")


def test_an_older_store_directory_proven_to_hold_the_dataset_is_adopted(env, tmp_path, oxigraph_server):
    cat = write_catalogue(tmp_path / "cat", 2, prefix="ALPHA")
    url = oxigraph_server(cat / "catalogue.ttl", fresh=True)
    alpha = _project(tmp_path, env, "alpha", url)
    assert run_yupana(["project"], env, cwd=alpha.root).returncode == 0
    old = _legacy(env, url, dialect="sparql11")
    written = json.loads((old / "projection.json").read_text())["written_at"]
    assert not _edit(env, alpha, "// see ALPHA1-3").denied  # not proven by a hook: absent, a refresh started
    # the refresher proves it (its memo names no default graph and exactly its rules) and adopts it
    # as it was: still fresh, so this worker does not even ask the store
    new = env.cache_for(url, dialect="sparql11")
    _settle(new.parent / "refresh.lock")  # the hook's own worker may hold the single flight on a busy machine
    done = run_yupana(["refresh-worker", "--root", str(alpha.root)], env)
    assert done.returncode == 0, done.stderr
    assert json.loads(new.read_text())["written_at"] == written
    assert env.records("state_migrated")[-1]["moves"][0].startswith("adopted")
    assert _edit(env, alpha, "// see ALPHA1-3").denied


def test_an_older_store_directory_not_proven_to_hold_the_dataset_is_not_served(env, graphs):
    url, alpha, beta = graphs
    assert run_yupana(["project"], env, cwd=alpha.root).returncode == 0
    old = _legacy(env, url, dialect="sparql11", default_graph="urn:team-a")
    assert (old / "projection.json").exists()
    # B's refresh finds it in the endpoint's old directory: it was read from urn:team-a, not B's graph
    assert run_yupana(["refresh-worker", "--root", str(beta.root), "--force"], env).returncode == 0
    moved = env.records("state_migrated")
    assert moved and "did not adopt" in moved[0]["moves"][0] and "urn:team-a" in moved[0]["moves"][0]
    assert not _edit(env, beta, "// see ALPHA0-12").denied
    assert _edit(env, beta, "// see BETA0-12").denied  # its own refresh


def test_a_file_store_of_an_older_yupana_is_adopted(env, tmp_path):
    root = tmp_path / "p"
    write_catalogue(root / "cat", 1, prefix="ALPHA")
    repo = Repo(root, env)
    configure(root, "file:cat")
    text = (root / ".bobbin" / "config.toml").read_text()
    (root / ".bobbin" / "config.toml").write_text('[yupana.policy]\nmode = "enforce"\nexposure = "public"\n' + text)
    assert run_yupana(["project"], env, cwd=root).returncode == 0
    key = "file:" + str(root / "cat")
    _legacy(env, key)
    assert run_yupana(["refresh-worker", "--root", str(root)], env).returncode == 0
    assert json.loads(env.cache_for(key).read_text())["dataset"] == env.dataset_for(key)
    assert env.records("state_migrated")[-1]["moves"][0].startswith("adopted")
    assert _edit(env, repo, "// see ALPHA0-3").denied
