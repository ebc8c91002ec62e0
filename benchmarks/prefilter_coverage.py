"""How many realistic text-rule patterns get a literal prefilter, and what checking costs.

    .venv/bin/python benchmarks/prefilter_coverage.py [--rules 500]

Over the corpus of benchmarks/rule_corpus.py (500 patterns of the kinds operators write):

* coverage: patterns with a prefilter; "selective" ones (every literal >= 3 characters);
  case-insensitive ones; per category;
* cold cost: microseconds to compute one prefilter (what a refresh pays per rule);
* hot cost: microseconds to check all prefilters against a typical small edit, how many
  rules still need their regex, and what running RE2 on every rule would cost instead
  (import, compile and search), all in this process;
* soundness spot check: every corpus rule whose regex matches a sample text must pass its
  prefilter (the real proof is tests/regex/test_prefilter.py).
"""

from __future__ import annotations

import argparse
import collections
import os
import statistics
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
sys.path.insert(0, os.path.join(REPO, "benchmarks"))

import rule_corpus  # noqa: E402

from yupana.regex.prefilter import may_match, prefilter  # noqa: E402

SMALL_EDIT = '''    fn retry_backoff(attempt: u32) -> Duration {
        // exponential, capped; see the runbook for the tuning rationale
        let base = Duration::from_millis(250);
        base.saturating_mul(2u32.saturating_pow(attempt.min(6)))
    }
'''

SAMPLES = [
    SMALL_EDIT,
    "host = 'db7.corp.acme.com'  # FRT-1234 ticket\n",
    "AKIAABCDEFGHIJKLMNOP and ghp_" + "a" * 36,
    "password = 'hunter2hunter2'\nconsole.log(x)\n",
    "see /home/alice/notes and 10.4.1.2 or 192.168.7.9\n",
    "TODO: remove; Project Kestrel ships with Contoso Inc soon\n",
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rules", type=int, default=500)
    args = parser.parse_args()
    corpus = rule_corpus.patterns(args.rules)

    t0 = time.perf_counter()
    import re2

    import_ms = (time.perf_counter() - t0) * 1000
    compiled = []
    t0 = time.perf_counter()
    for _, pattern in corpus:
        compiled.append(re2.compile(pattern))
    compile_ms = (time.perf_counter() - t0) * 1000

    cold = []
    for _ in range(5):
        t0 = time.perf_counter()
        pfs = [prefilter(p) for _, p in corpus]
        cold.append((time.perf_counter() - t0) / len(corpus) * 1e6)

    by_kind: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0, 0])
    for (kind, _), pf in zip(corpus, pfs):
        row = by_kind[kind]
        row[0] += 1
        row[1] += pf is not None
        row[2] += pf is not None and min(map(len, pf[0])) >= 3
    with_pf = sum(pf is not None for pf in pfs)
    selective = sum(pf is not None and min(map(len, pf[0])) >= 3 for pf in pfs)
    folded = sum(pf is not None and pf[1] for pf in pfs)

    def check(text: str) -> list[int]:
        low = text.casefold()
        return [i for i, pf in enumerate(pfs) if may_match(pf, text, low)]

    hot = []
    for _ in range(50):
        t0 = time.perf_counter()
        survivors = check(SMALL_EDIT)
        hot.append((time.perf_counter() - t0) * 1e6)
    search_all = []
    for _ in range(10):
        t0 = time.perf_counter()
        for rx in compiled:
            rx.search(SMALL_EDIT)
        search_all.append((time.perf_counter() - t0) * 1e6)

    misses = 0
    for text in SAMPLES:
        passing = set(check(text))
        for i, rx in enumerate(compiled):
            if rx.search(text) and i not in passing:
                misses += 1
                print(f"FALSE NEGATIVE: {corpus[i][1]!r} on {text!r}")

    n = len(corpus)
    print(f"prefilter coverage over {n} realistic text-rule patterns (benchmarks/rule_corpus.py)")
    print(f"  with a prefilter      {with_pf:>4}  ({with_pf / n:.0%})")
    print(f"  selective (>= 3 chars) {selective:>3}  ({selective / n:.0%})")
    print(f"  case-folded           {folded:>4}")
    print(f"  {'category':<12} {'rules':>5} {'prefilter':>9} {'selective':>9}")
    for kind, (total, got, sel) in sorted(by_kind.items(), key=lambda kv: -kv[1][0]):
        print(f"  {kind:<12} {total:>5} {got:>9} {sel:>9}")
    print("cost")
    print(f"  cold: compute one prefilter            {statistics.median(cold):8.1f} us")
    print(f"  hot:  check all {n} on a small edit     {statistics.median(hot):8.1f} us "
          f"({len(survivors)} rule(s) left to run their regex)")
    print(f"  without prefilters: import re2 {import_ms:.1f} ms + compile {n} {compile_ms:.1f} ms "
          f"+ search {n} {statistics.median(search_all) / 1000:.2f} ms")
    print(f"  sample texts: {misses} false negative(s)")
    if misses:
        sys.exit(1)


if __name__ == "__main__":
    main()
