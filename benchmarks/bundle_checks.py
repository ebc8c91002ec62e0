"""Requests a bundle host makes to its bundle server while its hooks run (issue 23 §2, the 304 storm).

One host installs a signed bundle confirmed ``--age`` seconds ago (older than the refresh
interval, within the TTL: served STALE), then ``--hooks`` real ``yupana hook pre-edit``
invocations run spread over ``--secs`` seconds, each free to start the detached refresh
worker. A counting static server (tests/servers/static_etag.py: ETag / If-None-Match)
answers the GETs. The goal is at most one request per host per interval, so the bound printed
is ``1 + ceil(secs / interval)`` (the install, then one per interval).

    .venv/bin/python benchmarks/bundle_checks.py [--hooks 100] [--secs 30] [--interval 2]

Prints one line: hooks, seconds, interval, GETs (200s / 304s) and the bound. To compare with
another version, run it with ``PYTHONPATH`` naming that version's source tree.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE / "tests"))

from catalogue_kit import write_catalogue  # noqa: E402
from servers.static_etag import StaticServer  # noqa: E402


def yupana(args: list[str], env: dict[str, str], cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "yupana", *args], env=env, cwd=cwd, input=stdin,
                          capture_output=True, text=True, timeout=120)


def environment(base: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("YUPANA_", "BOBBIN_", "SHANTY_", "QUIPU_"))}
    for name in ("home", "state", "tmp"):
        (base / name).mkdir(parents=True, exist_ok=True)
    env.update(HOME=str(base / "home"), XDG_STATE_HOME=str(base / "state"), TMPDIR=str(base / "tmp"))
    return env


def settle(lock: Path) -> None:
    """Wait until no detached refresh worker holds the single-flight lock."""
    end = time.monotonic() + 60
    while time.monotonic() < end:
        fd = os.open(lock, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            time.sleep(0.05)
        finally:
            os.close(fd)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hooks", type=int, default=100)
    parser.add_argument("--secs", type=float, default=30.0)
    parser.add_argument("--interval", type=int, default=2)
    parser.add_argument("--age", type=int, default=600, help="how long ago the bundle was confirmed")
    args = parser.parse_args()
    from yupana.projection import bundle
    from yupana.projection.digest import rule_set_digest

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        cat = write_catalogue(work / "cat", 3)
        endpoint = "file:" + str(cat)
        pub_env = environment(work / "publisher")
        pub = work / "pubproj"
        (pub / ".bobbin").mkdir(parents=True)
        (pub / ".bobbin" / "config.toml").write_text(f'[yupana.quipu]\nendpoint = "{endpoint}"\n')
        srv = work / "srv"
        srv.mkdir()
        done = yupana(["project", "--json"], pub_env, pub)
        assert done.returncode == 0, done.stderr
        cache = json.loads(Path(json.loads(done.stdout)["cache_path"]).read_text())
        cache["written_at"] = int(time.time()) - args.age
        cache["digest"] = rule_set_digest(cache)
        pem, raw = bundle.generate_private_pem()
        (work / "key.pem").write_bytes(pem)
        (srv / "rules.bundle").write_bytes(bundle.build(cache, bundle.load_private(str(work / "key.pem"))))
        server = StaticServer(str(srv)).start()
        host_env = environment(work / "host")
        root = work / "hostproj"
        subprocess.run(["git", "init", "-q", str(root)], check=True)
        (root / ".bobbin").mkdir()
        (root / ".bobbin" / "config.toml").write_text(
            f'[yupana.policy]\nmode = "enforce"\nexposure = "public"\n'
            f'[yupana.quipu]\nenabled = true\nendpoint = "{endpoint}"\nrefresh_interval_secs = {args.interval}\n'
            f'projection_cache_ttl_secs = 3600\n[yupana.bundle]\nurl = "{server.url}/rules.bundle"\n'
            f'trusted_keys = ["{bundle.public_key_text(raw)}"]\n')
        started = time.monotonic()
        done = yupana(["project", "--json"], host_env, root)
        assert done.returncode == 0, done.stderr
        lock = Path(json.loads(done.stdout)["cache_path"]).with_name("refresh.lock")
        payload = json.dumps({"session_id": "s1", "cwd": str(root), "hook_event_name": "PreToolUse",
                              "tool_name": "Write", "tool_use_id": "t1",
                              "tool_input": {"file_path": str(root / "notes.md"), "content": "see ACME0-42"}})
        denied = 0
        for i in range(args.hooks):
            due = started + args.secs * i / args.hooks
            time.sleep(max(0.0, due - time.monotonic()))
            done = yupana(["hook", "pre-edit"], host_env, root, stdin=payload)
            denied += '"deny"' in done.stdout
        settle(lock)
        elapsed = time.monotonic() - started
        server.stop()
        bound = 1 + math.ceil(elapsed / args.interval)
        print(f"hooks {args.hooks} ({denied} denied) over {elapsed:.1f}s, refresh_interval_secs {args.interval}: "
              f"{server.requests} GETs ({server.statuses.count(200)} x 200, {server.statuses.count(304)} x 304); "
              f"bound 1 + ceil(secs / interval) = {bound}")


if __name__ == "__main__":
    main()
