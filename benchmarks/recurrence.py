"""The recurrence advisory's cost with a full corpus, as a ratio to ``python -c pass``.

    .venv/bin/python benchmarks/recurrence.py [--runs N] [--no-assert]

A project in ``mode = "enforce"`` with a declared scope; the store's ``denials.jsonl`` is
filled to its read bound (the newest 300 entries of ~1 MiB, each a real-size vector);
``yupana hook pre-edit`` is run on a 30-line allowed Edit (so every corpus entry is scored)
through the real entry point, interleaved with ``python -c pass`` and with the same hook on
an empty corpus. Target: full-corpus pre-edit ≤ 3.0x (the pre-edit budget of
benchmarks/pre_edit.py); the increment over the empty corpus is reported.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = 3.0


def _time(cmd: list[str], env: dict, stdin: bytes = b"") -> float:
    t = time.perf_counter()
    subprocess.run(cmd, input=stdin, env=env, capture_output=True, check=False)
    return time.perf_counter() - t


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--no-assert", action="store_true")
    ap.add_argument("--corpus", choices=("history", "adversarial"), default="history",
                    help="history: 300 real denied hunks of this repo's commits; adversarial: 300 entries all "
                         "near the edit (no entry can be skipped: the worst case)")
    args = ap.parse_args()
    base = tempfile.mkdtemp(prefix="yupana-recur-")
    env = dict(os.environ, XDG_STATE_HOME=os.path.join(base, "state"), HOME=os.path.join(base, "home"),
               PYTHONPATH=REPO)
    os.environ.update(XDG_STATE_HOME=env["XDG_STATE_HOME"])
    sys.path.insert(0, REPO)
    from yupana.evaluate import recurrence
    from yupana.project_root import project_key
    from yupana.state import dataset, denials, stores

    proj = os.path.join(base, "repo")
    os.makedirs(os.path.join(proj, ".bobbin"))
    os.makedirs(os.path.join(proj, ".git"))
    with open(os.path.join(proj, ".bobbin", "config.toml"), "w") as fh:
        fh.write('[yupana.policy]\nmode = "enforce"\n[yupana.policy.scopes.t]\ndeny_paths = ["src/secret.rs"]\n')
    corpus = stores.beside(dataset.identity({"endpoint": ""}, proj), denials.NAME)
    os.makedirs(os.path.dirname(corpus), exist_ok=True)
    now = int(time.time())
    text = "\n".join(f"    let value_{i} = compute_thing_{i}(input, {i}) + offset_{i % 7};" for i in range(30))
    if args.corpus == "history":
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from recurrence_commits import hunks

        texts = hunks(REPO, 600)[:denials.MAX_ENTRIES + 50]
    else:
        texts = [f"fn handler_{i}() {{ registry_{i}.dispatch(request, {i}) }} " + text.replace("value", f"v{i}")
                 for i in range(denials.MAX_ENTRIES + 50)]
    for t in texts:
        vec = recurrence.packed(recurrence.embed(t))
        denials.append(corpus, {"at": now, "project": project_key(proj), "sid": None, "rule": "scope-declared:t", "reason": "x" * 200,
                                "model": recurrence.MODEL_ID, **vec})
    payload = json.dumps({"session_id": "s", "cwd": proj, "hook_event_name": "PreToolUse", "tool_name": "Edit",
                          "tool_input": {"file_path": os.path.join(proj, "src", "lib.rs"), "old_string": "fn a() {}",
                                         "new_string": "fn b() {\n" + text + "\n}"}}).encode()
    hook = [sys.executable, "-m", "yupana", "--tenant", "t", "hook", "pre-edit"]
    empty_dir = os.path.join(base, "state-empty")
    env_empty = dict(env, XDG_STATE_HOME=empty_dir)
    for _ in range(2):  # bytecode, warm caches
        _time(hook, env, payload), _time(hook, env_empty, payload)
    full, empty, bare = [], [], []
    for _ in range(args.runs):
        bare.append(_time([sys.executable, "-c", "pass"], env))
        full.append(_time(hook, env, payload))
        empty.append(_time(hook, env_empty, payload))
    b, f, e = statistics.median(bare), statistics.median(full), statistics.median(empty)
    size = os.path.getsize(corpus)
    print(f"corpus ({args.corpus}) {size} bytes ({denials.MAX_ENTRIES} read), model {recurrence.MODEL_ID}")
    print(f"python -c pass {b * 1000:.1f} ms; pre-edit empty corpus {e * 1000:.1f} ms ({e / b:.2f}x); "
          f"full corpus {f * 1000:.1f} ms ({f / b:.2f}x); advisory cost {(f - e) * 1000:.1f} ms")
    if not args.no_assert and f / b > TARGET:
        print(f"FAIL: {f / b:.2f}x > {TARGET}x", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
