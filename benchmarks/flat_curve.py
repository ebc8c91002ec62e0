"""Is the hook flat on any corpus? The growth curve for two generators (issue 25 §1).

    .venv/bin/python benchmarks/flat_curve.py [--runs N] [--sizes 500,5000,50000] [--no-assert]

``yupana hook pre-edit`` (the console script a harness runs, payload on stdin), a small
``.md`` Edit of ordinary prose that violates nothing, against a warm cache of N text rules
from each of two generators:

* ``realistic``: benchmarks/scale.py's distinct rules (benchmarks/rule_corpus.py's kinds,
  each with a literal of its own), which the literal index keys by a trigram;
* ``adversarial``: benchmarks/adversarial_corpus.py, patterns with no literal of three
  characters or more (classes, alternations of short literals, ``(?i)``, lazy quantifiers).

Each hook run strictly alternates with the same interpreter's ``python -c pass``; the ratio
is of medians. Target ≤ 1.6x at every size for both generators (fails, exit 1, over target).
Also printed: how many rules the index handed to the regex stage for this edit at each size
(in process, from the same twin), which is what a non-flat curve grows with.
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
sys.path.insert(0, os.path.join(REPO, "benchmarks"))

import adversarial_corpus  # noqa: E402
import scale  # noqa: E402

SIZES = (500, 5_000, 50_000)
TARGET = 1.6
CORPORA = {"realistic": scale.distinct_rules, "adversarial": adversarial_corpus.text_rules}


def admitted(endpoint: str) -> int:
    """How many rules the index hands to the regex stage for the benchmark's edit."""
    from yupana.evaluate import text_rules
    from yupana.state import cache, dataset, stores

    served, miss = cache.read(stores.cache_path(dataset.identity({"endpoint": endpoint})))
    assert served is not None, miss
    return len(text_rules.candidates(served.get("text_rules"), scale.MD_EDIT)[0])


def main(argv: list[str]) -> int:
    runs = int(argv[argv.index("--runs") + 1]) if "--runs" in argv else 21
    sizes = tuple(int(x) for x in argv[argv.index("--sizes") + 1].split(",")) if "--sizes" in argv else SIZES
    check = "--no-assert" not in argv
    py = sys.executable
    script = os.path.join(os.path.dirname(py), "yupana")
    hook = [py, script, "hook", "pre-edit"] if os.path.exists(script) else [py, "-m", "yupana", "hook", "pre-edit"]
    base = tempfile.mkdtemp(prefix="yupana-flat-")
    try:
        env = scale.setup_env(base)
        scenarios = []
        for corpus, make in CORPORA.items():
            for n in sizes:
                endpoint = f"http://127.0.0.1:9/{corpus}{n}"
                root = scale.project_dir(base, f"{corpus}{n}", endpoint)
                scale.write_cache(endpoint, make(n))
                edit = {"file_path": os.path.join(root, "docs", "guide.md"), "old_string": "TBD",
                        "new_string": scale.MD_EDIT}
                scenarios.append((corpus, n, scale.payload(root, "Edit", edit), admitted(endpoint)))
        for _, _, body, _ in scenarios:  # resolve config snapshots, warm the page cache
            scale.timed(hook, body, env)
        print(f"python: {py} ({sys.version.split()[0]}), runs: {runs}, load average {os.getloadavg()[0]:.2f}")
        base_samples: list[float] = []
        samples: list[list[float]] = [[] for _ in scenarios]
        for _ in range(runs):
            for i, (_, _, body, _) in enumerate(scenarios):
                base_samples.append(scale.timed([py, "-c", "pass"], None, env))
                samples[i].append(scale.timed(hook, body, env))
        base_ms = statistics.median(base_samples) * 1e3
        print(f"  python -c pass: {base_ms:.1f} ms (median of {len(base_samples)})")
        failed = []
        for (corpus, n, _, handed), s in zip(scenarios, samples):
            ms = statistics.median(s) * 1e3
            ratio = ms / base_ms
            ok = ratio <= TARGET
            failed += [] if ok else [f"{corpus} {n}: {ratio:.2f}x > {TARGET}x"]
            print(f"  pre-edit .md Edit, {corpus:<11} {n:>6} rules  {ms:6.1f} ms  {ratio:5.2f}x  "
                  f"regex stage {handed:>5} rules  target ≤ {TARGET}x {'ok' if ok else 'OVER'}")
        print(f"  load average after: {os.getloadavg()[0]:.2f}")
        if failed and check:
            print("FAILED: " + "; ".join(failed))
            return 1
        return 0
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
