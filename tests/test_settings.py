"""The hot-path configuration snapshot: hits, invalidation, errors, and no pydantic in-process."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest


def _load(env, root, override=None):
    code = (
        "import sys, json; from yupana import settings\n"
        "try:\n"
        f"    s = settings.load({str(root)!r}, {override!r})\n"
        "    out = {'mode': s['config']['policy']['mode'], 'pydantic': 'pydantic' in sys.modules}\n"
        "except settings.ConfigError as e:\n"
        "    out = {'error': str(e), 'pydantic': 'pydantic' in sys.modules}\n"
        "print(json.dumps(out))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    import json

    return json.loads(done.stdout)


@pytest.fixture
def repo(env, tmp_path):
    root = tmp_path / "repo"
    (root / ".bobbin").mkdir(parents=True)
    return root


def test_snapshot_resolves_once_then_hits_without_pydantic(env, repo):
    (repo / ".bobbin" / "config.toml").write_text('[yupana.policy]\nmode = "advise"\n')
    first = _load(env, repo)
    assert first == {"mode": "advise", "pydantic": False}
    snaps = list((env.state / "yupana" / "config").glob("*.snap"))
    assert len(snaps) == 1
    mtime = snaps[0].stat().st_mtime_ns
    assert _load(env, repo)["mode"] == "advise"
    assert snaps[0].stat().st_mtime_ns == mtime  # a hit does not rewrite the snapshot


def test_editing_a_file_invalidates_the_snapshot(env, repo):
    cfg = repo / ".bobbin" / "config.toml"
    cfg.write_text('[yupana.policy]\nmode = "advise"\n')
    assert _load(env, repo)["mode"] == "advise"
    cfg.write_text('[yupana.policy]\nmode = "enforce"\n')
    assert _load(env, repo)["mode"] == "enforce"
    cfg.unlink()
    assert _load(env, repo)["mode"] == "off"
    env.user_config('[yupana.policy]\nmode = "advise"\n')  # a file appearing counts too
    assert _load(env, repo)["mode"] == "advise"


def test_env_override_is_part_of_the_key(env, repo):
    assert _load(env, repo)["mode"] == "off"
    env["YUPANA_POLICY__MODE"] = "enforce"
    assert _load(env, repo)["mode"] == "enforce"


def test_errors_are_snapshotted_and_name_the_file(env, repo):
    cfg = repo / ".bobbin" / "config.toml"
    cfg.write_text('[yupana.policy]\nmode = "sometimes"\n')
    out = _load(env, repo)
    assert str(cfg) in out["error"] and "yupana.policy.mode" in out["error"]
    assert out["pydantic"] is False
    # The second call answers from the snapshot: fast, same error.
    t = time.monotonic()
    assert _load(env, repo)["error"] == out["error"]
    assert time.monotonic() - t < 30


def test_no_state_dir_still_resolves(env, repo):
    env.pop("XDG_STATE_HOME")
    env.pop("HOME")
    (repo / ".bobbin" / "config.toml").write_text('[yupana.policy]\nmode = "advise"\n')
    assert _load(env, repo)["mode"] == "advise"
