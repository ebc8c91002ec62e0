"""Hot-path read cost of the projection cache, for 1k and 10k text rules.

    .venv/bin/python benchmarks/cache_read.py [--runs N]

For each size, three ways a hook can get the cache (``cache.load_servable``):

* ``hot twin``   — projection.hot matches: open it and read its header (the normal case;
  planes and text rules are read later, only those an edit needs);
* ``json+derive`` — no usable twin (the first hook after another tool wrote the JSON):
  parse the JSON, derive regex prefilters, glob tokens and the literal index, rewrite the twin;
* ``json only``  — parse and shape-check the JSON, nothing derived (``load_servable_json``, what
  ``yupana project --dump`` reads).

Reported in-process (median ms of the call) and as whole processes: the median wall time
of ``python -c "<import yupana.state.cache; load_servable(...)>"`` against ``python -c pass`` on
the same interpreter in the same run, as a ratio. Text rules come from the realistic
corpus of benchmarks/rule_corpus.py.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
sys.path.insert(0, os.path.join(REPO, "benchmarks"))

import rule_corpus  # noqa: E402

from yupana.state import cache, dataset  # noqa: E402

EP = "http://quipu.example:3030"
DATASET = dataset.identity({"endpoint": EP})  # what cache.save writes for a body that names none


def build(n: int) -> dict:
    base = rule_corpus.text_rules(500)
    rules = []
    for i in range(n):
        rule = dict(base[i % len(base)])
        rule["name"] = f"{rule['name']}_{i}"
        rule["iri"] = f"{rule['iri']}_{i}"
        rules.append(rule)
    tripwires = [{"iri": f"urn:w{i}", "name": f"wire-{i}", "paths": [f"infra/zone{i}/**", f"**/secrets-{i}.*"],
                  "effect": "warn", "class": "soft", "verification_point": "PAG", "hosted_at_layer": "orchestration",
                  "backoff_formula": None, "backoff": None, "message": None} for i in range(50)]
    return {"version": 1, "written_at": int(time.time()), "endpoint": EP, "dialect": "quipu", "digest": "sha256:b",
            "counts": {"text_rules": n}, "policies": [], "text_rules": rules, "exemption_selectors": [],
            "grounded_rules": [], "grounding": None, "work_item_scopes": None, "work_item_parents": None,
            "tripwires": tripwires, "memory_policies": [], "ci_map": None, "disk_history": None, "unprojected": [],
            "notices": []}


def _drop_twin(path: str) -> None:
    try:
        os.unlink(cache.hot_path_for(path))
    except FileNotFoundError:
        pass


MODES = {
    "hot twin": (True, False),
    "json+derive": (True, True),
    "json only": (False, False),
}


def in_process(path: str, hot: bool, drop: bool, runs: int) -> float:
    times = []
    for _ in range(runs):
        if drop:
            _drop_twin(path)
        t0 = time.perf_counter()
        found, miss = (cache.load_servable if hot else cache.load_servable_json)(path, EP, 3600, int(time.time()),
                                                                                 dataset=DATASET)
        times.append(time.perf_counter() - t0)
        assert miss is None and found is not None, miss
    return statistics.median(times) * 1000


def whole_process(argv: list[str], runs: int, before=None) -> float:
    times = []
    for _ in range(runs):
        if before:
            before()
        t0 = time.perf_counter()
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    py = sys.executable
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in (1000, 10_000):
            path = os.path.join(tmp, f"c{n}", "projection.json")
            assert cache.save(build(n), path) is None
            json_kib = os.path.getsize(path) / 1024
            hot_kib = os.path.getsize(cache.hot_path_for(path)) / 1024
            for mode, (hot, drop) in MODES.items():
                ms = in_process(path, hot, drop, args.runs)
                code = (f"import time; from yupana.state import cache; "
                        f"f, m = cache.{'load_servable' if hot else 'load_servable_json'}({path!r}, {EP!r}, 3600, "
                        f"int(time.time()), dataset={DATASET!r}); "
                        f"assert m is None")
                whole_process([py, "-c", code], 1, (lambda path=path: _drop_twin(path)) if drop else None)  # warm bytecode
                base = whole_process([py, "-c", "pass"], args.runs)
                proc = whole_process([py, "-c", code], args.runs, (lambda path=path: _drop_twin(path)) if drop else None)
                rows.append((n, mode, json_kib, hot_kib, ms, proc, base))
            _drop_twin(path)
            cache.read(path)  # leave a twin behind, as a hook would
    print(f"cache read ({args.runs} runs each, medians; python {sys.version.split()[0]})")
    print(f"{'rules':>6}  {'path':<12} {'json KiB':>9} {'hot KiB':>8} {'in-process ms':>14} "
          f"{'process ms':>11} {'-c pass ms':>11} {'ratio':>6}")
    for n, mode, jk, hk, ms, proc, base in rows:
        print(f"{n:>6}  {mode:<12} {jk:>9.0f} {hk:>8.0f} {ms:>14.2f} {proc:>11.1f} {base:>11.1f} {proc / base:>5.2f}x")


if __name__ == "__main__":
    main()
