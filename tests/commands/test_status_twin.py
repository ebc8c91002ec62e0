"""``yupana status`` compares the hot twin with projection.json (issue 23 §5): a twin that
matches says so; a damaged one, and one derived from another catalogue but given this JSON's
key — which the hooks serve, since they never read the JSON — are named, through the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from catalogue_kit import configure, write_catalogue

from yupana.state import cache, hot_derive, hot_view


@pytest.fixture
def root(tmp_path) -> Path:
    root = tmp_path / "project"
    write_catalogue(root / "cat", 3)
    configure(root, "file:cat")
    return root


def _status(yupana, root: Path) -> tuple[dict, str]:
    done = yupana("status", "--json", "--offline", cwd=root)
    assert done.stdout, done.stderr
    human = yupana("status", "--offline", cwd=root).stdout.decode()
    return json.loads(done.stdout)["rule_set"]["twin"], human


def test_a_twin_derived_by_the_refresh_matches(yupana, env, root):
    assert yupana("project", cwd=root).returncode == 0
    twin, human = _status(yupana, root)
    assert twin["state"] == "matches" and twin["problems"] == [] and twin["sections"] > 5
    assert "twin" in human and "matches projection.json" in human


def test_a_damaged_twin_is_named(yupana, env, root):
    assert yupana("project", cwd=root).returncode == 0
    hot = Path(cache.hot_path_for(str(env.cache_path)))
    data = bytearray(hot.read_bytes())
    twin = hot_view.HotFile(data=bytes(data))
    off, n = twin.header["sections"][hot_view.RULES]
    data[twin.base + off + n // 2] ^= 0x20
    hot.write_bytes(bytes(data))
    found, human = _status(yupana, root)
    assert found["state"] == "damaged" and "fails its checksum" in found["problems"][0]
    assert "⚠ DAMAGED" in human and str(hot) in human


def test_another_catalogues_twin_under_this_jsons_key_is_a_mismatch(yupana, env, root):
    assert yupana("project", cwd=root).returncode == 0
    path = env.cache_path
    body = json.loads(path.read_text())
    other = dict(body, text_rules=body["text_rules"][:1], digest="sha256:" + "0" * 64)
    prior = hot_view.HotFile(data=Path(cache.hot_path_for(str(path))).read_bytes())
    forged = hot_derive.image(other, {"key": prior.header["key"], "json_sha1": prior.header["json_sha1"]})
    Path(cache.hot_path_for(str(path))).write_bytes(b"".join(forged))
    found, human = _status(yupana, root)
    assert found["state"] == "mismatch"
    assert any(p.startswith("field 'digest'") for p in found["problems"])
    assert "plane 'text_rules': 1 entry in the twin, 3 entries in the JSON" in found["problems"]
    assert "⚠ MISMATCH" in human


def test_no_twin_is_said_plainly(yupana, env, root):
    assert yupana("project", cwd=root).returncode == 0
    Path(cache.hot_path_for(str(env.cache_path))).unlink()
    found, human = _status(yupana, root)
    assert found["state"] == "absent" and "the next hook derives it" in human
