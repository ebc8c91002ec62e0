"""Cheap checks under CPU contention (issue 25 §3): are text rules ever cut on small edits?

    .venv/bin/python benchmarks/contention.py [--per-core 1,2,4,8,16] [--calls 96] [--rules 500]
                                              [--bound-rules 500,5000] [--source DIR] [--no-assert]

Two parts, both on the real hook (``python -m yupana hook pre-edit``, payload piped on stdin,
a fresh interpreter per call, warm cache, ``mode = "enforce"``, the default ``deadline_ms =
100``):

1. **The bound** — CPU time (``time.process_time``, so the machine's load does not count) of
   the text-rule pass of one hook over introduced text of 300 B, 8 KiB, 64 KiB (the bound,
   ``text_rules.BOUNDED_CHARS``) and 256 KiB of real Rust (tokio's sources from Debian when
   installed), against N distinct text rules (benchmarks/scale.py's corpus) through the hot
   twin's literal index, regex compilation included (each hook is a fresh process). The pass
   up to the bound must cost a small part of the deadline: that is what makes it a check the
   deadline need not cut.
2. **Contention** — A agents per core (``os.cpu_count()`` cores) each run hooks back to back,
   ``--calls`` calls per level in all; every call is an Edit of a ``.md`` file whose
   introduced text (300 B, 8 KiB or 64 KiB, in turn) carries an AWS access key that a
   ``block`` text rule forbids in a public repository, beside ``--rules`` other rules. Per
   level: p50 / p99 hook wall time (spawn to exit), the fail-open rate (calls with a
   ``deadline`` fail_open record), the text-rule checks cut (a ``deadline`` record whose stage
   is ``governed`` or ``text rules``) and the secrets denied. Goal: 0 text-rule checks cut
   for edits ≤ 64 KiB up to 8 agents per core.

``--source DIR`` runs the hooks from another tree (``git archive <rev> yupana | tar -x -C
DIR``) for a before. The machine is shared: the load average is printed; wall times are
noisy, the counts are the result. Exit 1 when a text-rule check was cut at ≤ 8 agents per
core (unless ``--no-assert``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
sys.path.insert(0, os.path.join(REPO, "benchmarks"))

import scale  # noqa: E402

SECRET = "AKIAIOSFODNN7EXAMPLE"
AWS = {"iri": "urn:bench:rule_aws_key", "name": "rule_aws_key", "label": "no AWS access keys",
       "labels": ["no AWS access keys"], "pattern": r"\bAKIA[0-9A-Z]{16}\b", "tier": "block", "class": "credential",
       "exempt_path_regex": None, "exempt_path_regexes": [], "exemption_selectors": [], "rationale": None,
       "rationales": []}
EDIT_SIZES = (300, 8 * 1024, 64 * 1024)
BOUND_SIZES = (300, 8 * 1024, 64 * 1024, 256 * 1024)
GOAL_PER_CORE = 8
CUT_STAGES = {"governed", "text rules"}

# One text-rule pass, as the hook makes it, timed in CPU seconds inside a fresh interpreter.
PASS = r"""
import sys, time
from yupana.state import cache
from yupana.evaluate import text_rules
path, endpoint, dataset, text_file = sys.argv[1:5]
text = open(text_file, encoding="utf-8").read()
served, miss = cache.load_servable(path, endpoint, 3600, int(time.time()), dataset=dataset)
assert served is not None, miss
t0 = time.process_time()
found = text_rules.evaluate(served.get("text_rules"), text, "src/lib.rs", lambda: ("public", None, "widgets"))
print(time.process_time() - t0, sum(1 for f in found if f.outcome == "unsatisfied"))
"""


def edit_text(size: int, n: int) -> str:
    """``size`` characters of prose ending with the secret (distinct per call: ``n``)."""
    tail = f"\nthe key for run {n}: {SECRET}\n"
    body = (scale.MD_EDIT * (size // len(scale.MD_EDIT) + 1))[: size - len(tail)]
    return body + tail


def write_rules(base: str, name: str, rules: list[dict]) -> tuple[str, str]:
    """A project and its warm cache of ``rules``, the repository public: (root, endpoint)."""
    from yupana.state import dataset, stores

    endpoint = f"http://127.0.0.1:9/{name}"
    root = scale.project_dir(base, name, endpoint)
    scale.write_cache(endpoint, rules)
    store = os.path.dirname(stores.cache_path(dataset.identity({"endpoint": endpoint})))
    with open(os.path.join(store, "exposure.json"), "w") as fh:
        json.dump({"version": 1, "entries": {f"{endpoint}|widgets": {"exposure": "public", "at": int(time.time())}}},
                  fh)
    return root, endpoint


def bound_part(base: str, env: dict, counts: list[int], runs: int) -> list[tuple[int, int, float, float, int]]:
    """(rules, size, median ms, max ms, violations) of the text-rule pass, CPU time."""
    from yupana.state import dataset, stores

    _, rust = scale.rust_source(max(BOUND_SIZES))
    rows = []
    for n in counts:
        _, endpoint = write_rules(base, f"bound{n}", scale.distinct_rules(n) + [AWS])
        ident = dataset.identity({"endpoint": endpoint})
        for size in BOUND_SIZES:
            text_file = os.path.join(base, f"text{size}.rs")
            with open(text_file, "w", encoding="utf-8") as fh:
                fh.write(rust[: size - len(SECRET) - 2] + f"\n{SECRET}\n")
            times, hits = [], 0
            for _ in range(runs):
                done = subprocess.run([sys.executable, "-c", PASS, stores.cache_path(ident), endpoint, ident, text_file],
                                      env=env, capture_output=True, text=True, cwd=base)
                if done.returncode != 0:
                    raise SystemExit(f"text-rule pass failed: {done.stderr[-600:]}")
                secs, hits = done.stdout.split()
                times.append(float(secs) * 1000)
            rows.append((n, size, statistics.median(times), max(times), int(hits)))
    return rows


def one_call(root: str, env: dict, n: int, size: int, session: str) -> tuple[float, bool]:
    edit = {"file_path": os.path.join(root, "docs", f"notes{n % 7}.md"), "old_string": "TBD",
            "new_string": edit_text(size, n)}
    body = json.loads(scale.payload(root, "Edit", edit))
    body["session_id"] = session
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "yupana", "hook", "pre-edit"], input=json.dumps(body).encode(),
                          env=env, capture_output=True, cwd=root)
    wall = (time.perf_counter() - started) * 1000
    if done.returncode != 0:
        raise SystemExit(f"hook exited {done.returncode}: {done.stderr[-400:]!r}")
    out = json.loads(done.stdout) if done.stdout else {}
    denied = (out.get("hookSpecificOutput") or {}).get("permissionDecision") == "deny"
    return wall, denied


def level(root: str, env: dict, agents: int, calls: int, tag: str) -> dict:
    """``agents`` concurrent agents making ``calls`` hook calls in all."""
    results: list[tuple[str, int, float, bool]] = []
    lock = threading.Lock()
    each = max(1, -(-calls // agents))

    def agent(a: int) -> None:
        for k in range(each):
            n = a * each + k
            size = EDIT_SIZES[n % len(EDIT_SIZES)]
            session = f"{tag}-{a}-{k}"
            wall, denied = one_call(root, env, n, size, session)
            with lock:
                results.append((session, size, wall, denied))

    threads = [threading.Thread(target=agent, args=(a,)) for a in range(agents)]
    load = os.getloadavg()[0]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    spool = os.path.join(env["XDG_STATE_HOME"], "yupana", "metrics.jsonl")
    cuts: dict[str, set[str]] = {}
    with open(spool, encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            if rec.get("kind") == "fail_open" and rec.get("fail_kind") == "deadline" and \
                    str(rec.get("session", "")).startswith(tag + "-"):
                cuts.setdefault(rec["session"], set()).add(str(rec.get("stage")))
    walls = sorted(r[2] for r in results)
    return {"agents": agents, "calls": len(results), "load": load,
            "p50": statistics.median(walls), "p99": walls[min(len(walls) - 1, int(round(0.99 * (len(walls) - 1))))],
            "failed_open": sum(1 for r in results if r[0] in cuts),
            "text_cut": sum(1 for r in results if cuts.get(r[0], set()) & CUT_STAGES),
            "denied": sum(1 for r in results if r[3])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--per-core", default="1,2,4,8,16", help="agents per core, comma-separated")
    parser.add_argument("--calls", type=int, default=96, help="hook calls per level, in all")
    parser.add_argument("--rules", type=int, default=500, help="text rules beside the AWS rule (contention part)")
    parser.add_argument("--bound-rules", default="500,5000", help="catalogue sizes for the bound part ('' skips it)")
    parser.add_argument("--runs", type=int, default=5, help="runs per row of the bound part")
    parser.add_argument("--source", help="run the hooks from this tree instead (a before)")
    parser.add_argument("--no-assert", action="store_true")
    args = parser.parse_args()
    cores = os.cpu_count() or 1
    base = tempfile.mkdtemp(prefix="yupana-contention-")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("YUPANA_", "BOBBIN_", "SHANTY_", "XDG_"))}
    env.update(HOME=os.path.join(base, "home"), XDG_STATE_HOME=os.path.join(base, "state"),
               TMPDIR=os.path.join(base, "tmp"), BOBBIN_ROLE="bench")
    for d in ("home", "state", "tmp"):
        os.makedirs(os.path.join(base, d), exist_ok=True)
    os.environ.update({k: env[k] for k in ("HOME", "XDG_STATE_HOME", "TMPDIR")})
    hook_env = dict(env, PYTHONPATH=os.path.abspath(args.source)) if args.source else env
    print(f"tree: {args.source or REPO}; {cores} cores; load average {os.getloadavg()[0]:.2f} at the start")

    counts = [int(x) for x in args.bound_rules.split(",") if x]
    if counts:
        print("\n1. the bound: CPU time of one hook's text-rule pass (regex compilation included), ms")
        print(f"{'rules':>6} {'introduced':>11} {'median':>8} {'max':>8} {'denied':>7}")
        for n, size, med, worst, hits in bound_part(base, hook_env, counts, args.runs):
            print(f"{n:>6} {size:>11} {med:>8.2f} {worst:>8.2f} {hits:>7}")

    root, _ = write_rules(base, "contention", scale.distinct_rules(args.rules) + [AWS])
    scale_md = os.path.join(root, "docs")
    os.makedirs(scale_md, exist_ok=True)
    one_call(root, hook_env, 0, 300, "warm-up")  # the configuration snapshot and the twin, resolved once
    print(f"\n2. contention: .md Edits of {', '.join(str(s) for s in EDIT_SIZES)} characters, each carrying a secret; "
          f"{args.rules + 1} text rules; deadline_ms 100")
    print(f"{'agents/core':>11} {'procs':>6} {'calls':>6} {'load':>6} {'p50 ms':>8} {'p99 ms':>8} "
          f"{'fail-open':>10} {'text cut':>9} {'denied':>9}")
    bad = False
    for per in [int(x) for x in args.per_core.split(",") if x]:
        row = level(root, hook_env, per * cores, args.calls, f"a{per}")
        rate = 100.0 * row["failed_open"] / row["calls"]
        print(f"{per:>11} {row['agents']:>6} {row['calls']:>6} {row['load']:>6.2f} {row['p50']:>8.1f} "
              f"{row['p99']:>8.1f} {rate:>9.1f}% {row['text_cut']:>9} {row['denied']:>4}/{row['calls']:<4}")
        bad |= per <= GOAL_PER_CORE and row["text_cut"] > 0
    print(f"\ngoal: 0 text-rule checks cut for edits <= 64 KiB up to {GOAL_PER_CORE} agents per core: "
          f"{'NOT met' if bad else 'met'}")
    if bad and not args.no_assert:
        sys.exit(1)


if __name__ == "__main__":
    main()
