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


def test_a_miss_resolves_in_process_without_a_child_process(env, repo):
    """The first hook after an edit must not wait on another interpreter (issue 9 §7)."""
    (repo / ".bobbin" / "config.toml").write_text('[yupana.policy]\nmode = "enforce"\n')
    code = (
        "import sys, os, json\n"
        "spawned = []\n"
        "real = os.posix_spawn\n"
        "os.posix_spawn = lambda *a, **k: spawned.append(a[0]) or real(*a, **k)\n"
        "import subprocess\n"
        "orig = subprocess.Popen.__init__\n"
        "def popen(self, *a, **k):\n"
        "    spawned.append(a[0] if a else k.get('args'))\n"
        "    orig(self, *a, **k)\n"
        "subprocess.Popen.__init__ = popen\n"
        "from yupana import settings\n"
        f"s = settings.load({str(repo)!r})\n"
        "print(json.dumps({'mode': s['config']['policy']['mode'], 'spawned': spawned,"
        " 'pydantic': 'pydantic' in sys.modules}))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    import json

    assert json.loads(done.stdout) == {"mode": "enforce", "spawned": [], "pydantic": False}
    assert list((env.state / "yupana" / "config").glob("*.snap"))  # and the next hook hits


def test_a_snapshot_keeps_no_bundle_url_secret_and_is_the_owners_alone(env, repo):
    """Issue 23 §3: a presigned bundle URL's signature was kept in a world-readable snapshot."""
    import os
    import stat

    from conftest import run_yupana

    signed = "https://bucket.example/rules.bundle?X-Amz-Signature=LEAKsig123&X-Amz-Credential=LEAKcred9&code=LEAKcode7&v=2"
    (repo / ".bobbin" / "config.toml").write_text(f'[yupana.policy]\nmode = "advise"\n[yupana.bundle]\nurl = "{signed}"\n')
    old = os.umask(0o022)
    try:
        assert _load(env, repo)["mode"] == "advise"  # a hook's load writes the snapshot
    finally:
        os.umask(old)
    [snap] = (env.state / "yupana" / "config").glob("*.snap")
    data = snap.read_bytes()
    assert b"LEAK" not in data and b"rules.bundle?X-Amz-Signature=***" in data and b"&v=2" in data
    assert stat.S_IMODE(snap.stat().st_mode) == 0o600
    shown = run_yupana(["config", "check", "--json"], env, cwd=repo)
    assert b"LEAK" not in shown.stdout + shown.stderr and b"bucket.example" in shown.stdout


def test_two_projects_whose_snapshot_names_collide_never_read_each_others(env, tmp_path):
    """Snapshots are named by a 61-bit hash of the project (no hashing module on the hot path):
    should two projects' names collide, each still gets its own configuration, resolved again
    when the other overwrote the file, and no control change is reported for the other's."""
    roots = {}
    for name, mode in (("a", "advise"), ("b", "enforce")):
        root = roots[name] = tmp_path / name
        (root / ".bobbin").mkdir(parents=True)
        (root / ".bobbin" / "config.toml").write_text(f'[yupana.policy]\nmode = "{mode}"\n')
    shared = env.state / "yupana" / "config" / "collide.snap"
    shared.parent.mkdir(parents=True, exist_ok=True)
    code = (
        "import json, os; from yupana import settings\n"
        f"settings.snapshot_path = lambda root, override=None, nested=(): {str(shared)!r}\n"
        "out = []\n"
        f"for root in ({str(roots['a'])!r}, {str(roots['b'])!r}, {str(roots['a'])!r}, {str(roots['a'])!r}):\n"
        "    s = settings.load(root)\n"
        "    out.append([s['config']['policy']['mode'], bool(s.get('control_changed'))])\n"
        "print(json.dumps(out))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    import json

    assert json.loads(done.stdout) == [["advise", False], ["enforce", False], ["advise", False], ["advise", False]]
    assert shared.exists()


def test_the_snapshot_an_older_version_named_by_sha1_is_removed_when_the_project_resolves(env, repo):
    import hashlib

    (repo / ".bobbin" / "config.toml").write_text('[yupana.policy]\nmode = "advise"\n')
    config = env.state / "yupana" / "config"
    config.mkdir(parents=True, exist_ok=True)
    legacy = config / (hashlib.sha1(f"{repo}\0".encode()).hexdigest()[:20] + ".snap")
    legacy.write_bytes(b"an older version's snapshot")
    assert _load(env, repo)["mode"] == "advise"
    assert not legacy.exists()
    assert len(list(config.glob("*.snap"))) == 1
