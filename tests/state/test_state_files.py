"""State files cannot hang or fool a hook (issue 9 §8), through the real CLI.

A FIFO, a device or a symlink to /dev/zero or /dev/urandom at any state path the hooks read
neither hangs the hook (every run here has a bounded timeout) nor is used: the hook finishes
and says so (a ``state_file`` record, stderr, once-per-session notice). A hand-edited cache
entry of the wrong shape is the loud ``unreadable`` miss, not a silently skipped rule. ``yupana
project`` on a read-only state directory is the named ``write`` error. A fail-open guard record
with no cache never says ``policy_freshness: "fresh"``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from catalogue_kit import configure, write_catalogue

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "hooks"))
from guard_kit import Repo, hook, text_rule, write_cache

ENDPOINT = "http://127.0.0.1:9"
HOST = r"\b[a-z0-9-]+\.corp\.example\b"
HOOK_TIMEOUT = 30  # seconds: a hook that blocks on a FIFO or reads /dev/zero never ends on its own


def _config() -> str:
    return (f'[yupana.policy]\nmode = "enforce"\n[yupana.quipu]\nenabled = true\nendpoint = "{ENDPOINT}"\n'
            'dialect = "quipu"\n')


@pytest.fixture
def repo(tmp_path, env) -> Repo:
    repo = Repo(tmp_path / "repo", env).config(_config())
    repo.file("src/net.rs", 'let host = "";\n')
    write_cache(env, ENDPOINT, text_rules=[text_rule("rule_no_internal_hostnames", HOST, tier="block")])
    return repo


def _edit(repo: Repo, session: str = "s-1") -> dict:
    return repo.payload(rel="src/net.rs", old_string='let host = "";', new_string='let host = "db1.corp.example";',
                        session=session)


def _run_hook(env, payload: dict):
    t0 = time.monotonic()
    try:
        result = hook(env, payload)  # run_yupana's default timeout bounds it
    except subprocess.TimeoutExpired:  # pragma: no cover - the bug this file is about
        pytest.fail("the hook hung on a state file")
    assert time.monotonic() - t0 < HOOK_TIMEOUT
    return result


def _state_paths(env) -> dict[str, Path]:
    store = env.cache_for(ENDPOINT).parent
    snaps = list((env.state / "yupana" / "config").glob("*.snap"))
    assert len(snaps) == 1, snaps
    return {
        "projection.json": store / "projection.json",
        "projection.hot": store / "projection.hot",
        "refresh-state.json": store / "refresh-state.json",
        "exposure.json": store / "exposure.json",
        "throttles.jsonl": env.state / "yupana" / "throttles.jsonl",
        "config snapshot": snaps[0],
    }


def _plant(path: Path, kind: str) -> None:
    if path.exists() or path.is_symlink():
        path.unlink()
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to(kind)


@pytest.mark.parametrize("kind", ["fifo", "/dev/zero", "/dev/urandom"])
@pytest.mark.parametrize("name", ["projection.json", "projection.hot", "refresh-state.json", "exposure.json",
                                  "throttles.jsonl", "config snapshot"])
def test_a_fifo_or_device_at_a_state_path_neither_hangs_nor_is_used(env, repo, name, kind):
    _run_hook(env, _edit(repo, session="warm-up"))  # writes the config snapshot
    target = _state_paths(env)[name]
    _plant(target, kind)
    result = _run_hook(env, _edit(repo))
    refused = [r for r in env.records("state_file") if r["path"] == str(target)]
    assert refused and refused[-1]["hook"] == "pre-edit", env.records()
    assert "not a regular file" in refused[-1]["reason"]
    assert f"refused the state file {target}" in result.stderr
    assert f"refused the state file {target}" in result.message  # the once-per-session notice
    if name == "projection.json":  # no cache can be read: a loud fail-open, never an allow that looks checked
        assert env.records("fail_open")[-1]["miss"] == "unreadable"
        assert env.records("guard")[-1]["policy_freshness"] == "unavailable"
    else:  # the rule is still enforced from the cache (a block-tier finding: exposure unknown, a warning)
        assert "rule_no_internal_hostnames" in result.message
        assert not [r for r in env.records("fail_open") if r.get("fail_kind") == "projection"]


def test_a_fifo_at_the_spool_or_a_marker_does_not_hang_the_hook_or_hide_the_notice(env, repo, tmp_path):
    # the once-per-session marker of the state_file notice: a FIFO there must not swallow it
    os.mkfifo(env.tmp / "yupana-guard-failopen-s-1-state_file")
    os.mkfifo(env.spool_path)
    result = _run_hook(env, _edit(repo))
    assert "rule_no_internal_hostnames" in result.message
    assert f"refused the state file {env.spool_path}" in result.stderr
    assert f"refused the state file {env.spool_path}" in result.message


@pytest.mark.parametrize("edit,field", [
    (lambda rule: rule.pop("pattern"), "`pattern` is missing"),
    (lambda rule: rule.__setitem__("tier", ["block"]), "`tier` is list"),
    (lambda rule: rule.__setitem__("pattern", 7), "`pattern` is int"),
])
def test_a_malformed_hand_edited_entry_is_a_loud_unreadable_miss(env, repo, edit, field):
    path = env.cache_for(ENDPOINT)
    body = json.loads(path.read_text())
    edit(body["text_rules"][0])
    path.write_text(json.dumps(body))  # a hand edit: the hot twin no longer matches
    result = _run_hook(env, _edit(repo))
    assert "policy guard failed open" in result.message and "malformed entry" in result.message
    assert "text_rules[0] (rule_no_internal_hostnames)" in result.message and field in result.message
    fail = env.records("fail_open")[-1]
    assert fail["fail_kind"] == "projection" and fail["miss"] == "unreadable"
    assert env.records("guard")[-1]["policy_freshness"] == "unavailable"
    # the twin is never derived from it: the next hook says the same, and status agrees
    assert "malformed entry" in _run_hook(env, _edit(repo, session="s-2")).message
    status = subprocess.run([sys.executable, "-m", "yupana", "status", "--json"], env=env, cwd=repo.root,
                            capture_output=True, timeout=60)
    assert b"malformed entry" in status.stdout, status.stdout[-2000:]


def test_a_fail_open_guard_record_with_no_cache_is_not_fresh(env, tmp_path):
    repo = Repo(tmp_path / "repo", env).config(_config())
    repo.file("src/net.rs", 'let host = "";\n')
    result = _run_hook(env, _edit(repo))
    assert "policy guard failed open" in result.message
    guard = env.records("guard")[-1]
    assert guard["policy_freshness"] == "unavailable"
    assert guard["constraints"][0]["id"] == "projection"


def _unshare_ro() -> list[str] | None:
    unshare = shutil.which("unshare")
    if not unshare:
        return None
    probe = subprocess.run([unshare, "-rm", "true"], capture_output=True)
    return [unshare, "-rm"] if probe.returncode == 0 else None


def test_project_on_a_read_only_state_directory_is_the_named_write_error(env, tmp_path):
    prefix = _unshare_ro()
    if prefix is None:
        pytest.skip("unshare -rm (a private mount namespace for a read-only bind mount) is not available")
    root = tmp_path / "p"
    write_catalogue(root / "cat", 2)
    configure(root, "file:cat")
    state = env.state
    (state / "yupana").mkdir(parents=True, exist_ok=True)
    script = (f'mount --bind -o ro "{state}" "{state}" && exec "{sys.executable}" -m yupana project')
    for attempt in ("fresh", "with a prior cache"):
        done = subprocess.run([*prefix, "sh", "-c", script], env=env, cwd=root, capture_output=True, timeout=120)
        err = done.stderr.decode()
        assert done.returncode == 1, err
        assert "Traceback" not in err and "refresh FAILED (write)" in err and "Read-only file system" in err
        if attempt == "fresh":
            assert "no prior cache for this endpoint" in err
            # a writable state directory: the same command succeeds, then the mount goes read-only again
            ok = subprocess.run([sys.executable, "-m", "yupana", "project"], env=env, cwd=root,
                                capture_output=True, timeout=120)
            assert ok.returncode == 0, ok.stderr
        else:
            assert "prior cache kept" in err


def test_the_state_file_reader_bounds_every_read(tmp_path):
    from yupana.state import statefile

    statefile.drain()  # refusals an earlier test left in this process
    big = tmp_path / "big"
    big.write_bytes(b"x" * 2048)
    with pytest.raises(statefile.Refused, match="over the 1024-byte bound"):
        statefile.read(str(big), 1024)
    assert statefile.read(str(big), 4096) == b"x" * 2048
    assert statefile.read(str(big), 1024, tail=100) == b"x" * 100
    link = tmp_path / "link"
    link.symlink_to(big)
    assert statefile.read(str(link), 4096) == b"x" * 2048  # a symlink to a regular file is fine
    assert statefile.drain() == [(str(big), "is 2048 bytes, over the 1024-byte bound for this state file")]


def test_the_mount_table_and_the_lock_holder_are_read_like_every_state_file(tmp_path):
    """A FIFO planted where pre-bash reads the mount table, or as refresh.lock when status names its
    holder, neither hangs (each read runs in its own bounded process) nor is read."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    cache = tmp_path / "projection.json"
    os.mkfifo(tmp_path / "refresh.lock")
    code = ("import sys\nfrom yupana.state import disk_samples, refresh_state\nfrom yupana.workers import refresher\n"
            "assert refresh_state.lock_path(sys.argv[2]).endswith('refresh.lock')\n"
            "print(disk_samples.read_mounts(sys.argv[1]), refresher.holder(sys.argv[2]))")
    done = subprocess.run([sys.executable, "-c", code, str(fifo), str(cache)], capture_output=True, text=True,
                          timeout=HOOK_TIMEOUT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[] holder unknown"
