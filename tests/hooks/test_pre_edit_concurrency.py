"""20 concurrent hooks while the cache is being rewritten: no exit 2, no torn read, one verdict each."""

from __future__ import annotations

import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from conftest import run_yupana
from guard_kit import Repo, text_rule, write_cache

from yupana.state import cache

ENDPOINT = "http://127.0.0.1:9"


def test_concurrent_hooks_during_refresh_writes(env, tmp_path):
    repo = Repo(tmp_path / "repo", env).config(
        # a generous deadline: 20 processes on two cores would otherwise (rightly) run out of it
        f'[yupana.policy]\nmode = "enforce"\ndeadline_ms = 60000\n[yupana.quipu]\nenabled = true\nendpoint = "{ENDPOINT}"\n'
        'dialect = "quipu"\n')
    exposure = env.cache_for(ENDPOINT).parent / "exposure.json"
    exposure.parent.mkdir(parents=True, exist_ok=True)
    exposure.write_text(json.dumps({"entries": {f"{ENDPOINT}|widgets": {"exposure": "public", "at": int(time.time())}}}))
    # two catalogues of different sizes: both deny the edit below
    small = write_cache(env, ENDPOINT, text_rules=[text_rule("no_hosts", r"\b[a-z0-9-]+\.corp\.example\b")])
    big = dict(small, text_rules=small["text_rules"] + [text_rule(f"filler_{i}", f"filler{i}x") for i in range(300)])
    stop = threading.Event()
    writes = [0]

    def refresher():
        while not stop.is_set():
            body = dict(big if writes[0] % 2 else small, written_at=int(time.time()))
            assert cache.save(body, str(env.cache_for(body["endpoint"]))) is None
            writes[0] += 1

    payload = json.dumps(repo.payload(rel="src/net.rs", new_string="db1.corp.example"))
    run_yupana(["hook", "pre-edit"], env, stdin=payload)  # resolve the config snapshot once
    writer = threading.Thread(target=refresher)
    writer.start()
    try:
        with ThreadPoolExecutor(max_workers=20) as pool:
            results = list(pool.map(lambda _: run_yupana(["hook", "pre-edit"], env, stdin=payload), range(20)))
    finally:
        stop.set()
        writer.join()
    assert writes[0] > 2
    for done in results:
        assert done.returncode == 0, done.stderr
        out = json.loads(done.stdout)
        assert out.get("hookSpecificOutput", {}).get("permissionDecision") == "deny", (out, done.stderr[-600:])
        assert b"failed open" not in done.stderr and b"unreadable" not in done.stderr
    assert not env.records("fail_open")
    assert sum(1 for g in env.records("guard") if g["result"] == "deny") == 21
