"""Signed rule-set bundles through the real CLI: a publisher signs, hosts fetch from a real static server."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from catalogue_kit import write_catalogue
from conftest import Env, run_yupana
from servers.oxigraph import free_port
from servers.static_etag import StaticServer


def toml_list(items: list[str]) -> str:
    return "[" + ", ".join(json.dumps(i) for i in items) + "]"


def configure(root: Path, endpoint: str, extra: str = "") -> None:
    (root / ".bobbin").mkdir(parents=True, exist_ok=True)
    (root / ".bobbin" / "config.toml").write_text(
        f'[yupana.quipu]\nenabled = true\nendpoint = {json.dumps(endpoint)}\n{extra}')


def keygen(env: Env, path: Path) -> str:
    done = run_yupana(["bundle", "keygen", "--out", str(path), "--json"], env)
    assert done.returncode == 0, done.stderr
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    return json.loads(done.stdout)["public_key"]


@pytest.fixture
def fleet(tmp_path):
    """A publisher (its own state) projecting a 3-rule catalogue, a signing key, a served directory."""
    cat = write_catalogue(tmp_path / "cat", 3)
    endpoint = "file:" + str(cat)
    pub_env = Env(tmp_path / "publisher")
    pub = tmp_path / "pubproj"
    key = tmp_path / "key.pem"
    public = keygen(pub_env, key)
    configure(pub, endpoint, f'[yupana.bundle]\nsigning_key_path = {json.dumps(str(key))}\n')
    srv = tmp_path / "srv"
    srv.mkdir()
    server = StaticServer(str(srv)).start()
    yield {"tmp": tmp_path, "endpoint": endpoint, "pub_env": pub_env, "pub": pub, "key": key, "public": public,
           "srv": srv, "server": server, "cat": cat}
    server.stop()


def build(f, out: str = "rules.bundle", *extra: str) -> subprocess.CompletedProcess:
    return run_yupana(["bundle", "build", "--out", str(f["srv"] / out), "--json", *extra], f["pub_env"], cwd=f["pub"])


def host(f, name: str, trusted: list[str], url: str, endpoint: str | None = None, ttl: int | None = None):
    env = Env(f["tmp"] / name)
    root = f["tmp"] / (name + "proj")
    extra = f"projection_cache_ttl_secs = {ttl}\n" if ttl is not None else ""
    configure(root, endpoint or f["endpoint"], extra + f"[yupana.bundle]\nurl = {json.dumps(url)}\n"
              f"trusted_keys = {toml_list(trusted)}\n")
    return env, root


def project(env, root) -> tuple[int, dict, str]:
    done = run_yupana(["project", "--json"], env, cwd=root)
    return done.returncode, json.loads(done.stdout), done.stderr.decode()


def test_a_host_installs_the_signed_bundle_then_a_304_costs_nothing_and_status_shows_it(fleet):
    done = build(fleet)
    assert done.returncode == 0, done.stderr
    built = json.loads(done.stdout)
    assert built["key_id"].startswith("ed25519:") and built["endpoint"] == fleet["endpoint"]
    env, root = host(fleet, "h1", [fleet["public"]], fleet["server"].url + "/rules.bundle")
    code, out, err = project(env, root)
    assert code == 0, err
    assert out["status"] == "refreshed" and out["digest"] == built["digest"]
    assert json.loads(env.cache_path.read_text())["written_at"] == built["confirmed_at"]  # the store's time, not ours
    assert env.cache_path.with_name("projection.hot").exists()  # the same save path: the hot twin is written
    code, out, err = project(env, root)
    assert code == 0 and out["status"] == "not-modified", err
    assert fleet["server"].statuses == [200, 304] and fleet["server"].bytes_sent == built["bytes"]
    status = json.loads(run_yupana(["status", "--json", "--offline"], env, cwd=root).stdout)
    signed = status["signed_rule_set"]
    assert signed["loaded"] is True and signed["state"] == "loaded"
    assert signed["version"] == built["digest"] and signed["key_id"] == built["key_id"]
    assert signed["source"].endswith("/rules.bundle") and signed["age_secs"] >= 0
    text = run_yupana(["status", "--offline"], env, cwd=root).stdout.decode()
    assert f"signed rules: loaded {built['digest']}, key {built['key_id']}" in text


def test_plain_python_http_server_serves_a_bundle_with_if_modified_since(fleet):
    assert build(fleet).returncode == 0
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "http.server", "--bind", "127.0.0.1", str(port)],
                              cwd=fleet["srv"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        url = f"http://127.0.0.1:{port}/rules.bundle"
        env, root = host(fleet, "h2", [fleet["public"]], url)
        for _ in range(50):
            code, out, err = project(env, root)
            if out.get("error_kind") != "bundle-connect":
                break
            time.sleep(0.1)
        assert code == 0 and out["status"] == "refreshed", err
        code, out, err = project(env, root)
        assert code == 0 and out["status"] == "not-modified", err
    finally:
        server.terminate()
        server.wait(5)


def refused(fleet, env, root, kind: str) -> dict:
    before = env.cache_path.read_bytes() if env.cache_path.exists() else None
    code, out, err = project(env, root)
    assert code == 1 and out["error_kind"] == kind, (out, err)
    assert f"refresh FAILED ({kind})" in err
    if before is not None:
        assert env.cache_path.read_bytes() == before and "prior cache kept" in err
    state = json.loads(env.cache_path.with_name("refresh-state.json").read_text())
    assert state["last_error_kind"] == kind
    return out


def test_a_tampered_byte_an_unknown_key_and_a_wrong_endpoint_are_refused_and_the_prior_cache_serves(fleet):
    assert build(fleet).returncode == 0
    url = fleet["server"].url + "/rules.bundle"
    env, root = host(fleet, "h3", [fleet["public"]], url)
    assert project(env, root)[0] == 0
    path = fleet["srv"] / "rules.bundle"
    data = bytearray(path.read_bytes())
    at = data.index(b'"pattern":"') + len(b'"pattern":"')
    data[at] = ord("Z") if data[at] != ord("Z") else ord("Y")
    path.write_bytes(bytes(data))
    refused(fleet, env, root, "bundle-signature")
    status = json.loads(run_yupana(["status", "--json", "--offline"], env, cwd=root).stdout)
    assert status["signed_rule_set"]["last_error_kind"] == "bundle-signature"
    assert status["signed_rule_set"]["loaded"] is True  # the prior, verified bundle keeps serving
    other = fleet["tmp"] / "other.pem"
    keygen(fleet["pub_env"], other)
    assert build(fleet, "rules.bundle", "--key", str(other)).returncode == 0
    refused(fleet, env, root, "bundle-unknown-key")
    env2, root2 = host(fleet, "h4", [fleet["public"]], url, endpoint="file:" + str(fleet["tmp"] / "elsewhere"))
    assert build(fleet).returncode == 0
    refused(fleet, env2, root2, "bundle-endpoint")


def test_key_rotation_trusts_several_keys_and_an_expired_bundle_is_refused(fleet):
    other = fleet["tmp"] / "next.pem"
    nxt = keygen(fleet["pub_env"], other)
    assert build(fleet, "rules.bundle", "--key", str(other)).returncode == 0
    url = fleet["server"].url + "/rules.bundle"
    env, root = host(fleet, "h5", [fleet["public"], nxt], url)
    code, out, err = project(env, root)
    assert code == 0 and out["status"] == "refreshed", err
    env2, root2 = host(fleet, "h6", [fleet["public"], nxt], url, ttl=0)
    time.sleep(1.1)
    refused(fleet, env2, root2, "bundle-expired")
    assert not env2.cache_path.exists()


def test_bundle_build_needs_a_signing_key_and_refuses_on_a_bundle_host(fleet, tmp_path):
    env = Env(tmp_path / "nokey")
    root = tmp_path / "nokeyproj"
    configure(root, fleet["endpoint"])
    done = run_yupana(["bundle", "build", "--out", str(tmp_path / "x.bundle")], env, cwd=root)
    assert done.returncode == 1 and b"signing_key_path" in done.stderr
    assert not (tmp_path / "x.bundle").exists()
    done = run_yupana(["bundle", "keygen", "--out", str(fleet["key"])], env)
    assert done.returncode == 1 and b"never replaced" in done.stderr


def test_bundle_from_a_real_oxigraph_store(fleet, oxigraph_server):
    url = oxigraph_server(fleet["cat"] / "catalogue.ttl")
    configure(fleet["pub"], url, f'[yupana.bundle]\nsigning_key_path = {json.dumps(str(fleet["key"]))}\n')
    done = build(fleet)
    assert done.returncode == 0, done.stderr
    env, root = host(fleet, "h7", [fleet["public"]], fleet["server"].url + "/rules.bundle", endpoint=url)
    code, out, err = project(env, root)
    assert code == 0 and out["status"] == "refreshed", err
    cached = json.loads(env.cache_path.read_text())
    assert len(cached["text_rules"]) == 3 and cached["endpoint"] == url.rstrip("/")
