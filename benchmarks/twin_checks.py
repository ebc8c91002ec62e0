"""What the hot twin's block checksums cost a hook (issue 23 §5).

    .venv/bin/python benchmarks/twin_checks.py [--runs N] [--sizes 1000,10000,50000]

In-process, per catalogue size (benchmarks/scale.py's distinct realistic text rules + 50
tripwires), the reads a pre-edit makes of a warm twin: ``cache.load_servable`` (open, header),
the text rules' candidates for an edit (the literal index, the postings, the records of the
rules returned) and the tripwires' plane — for a one-line edit and a 20 KB file. Each is
timed with the checksums compared (as shipped) and with :meth:`HotFile._check` replaced by
one that compares nothing, interleaved; the difference is what integrity costs. Median µs.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
sys.path.insert(0, os.path.join(REPO, "benchmarks"))

from cache_read import EP, build  # noqa: E402
from scale import distinct_rules  # noqa: E402

from yupana.state import cache, hot_view  # noqa: E402

SMALL = 'let host = "db1.corp.example"; // TODO: tidy the retry loop\n'
LARGE = "".join(f"fn handler_{i}(req: Request) -> Response {{ route(req, \"/api/v{i % 7}/items\").await }}\n"
                for i in range(260))  # ~20 KB


def one(path: str, text: str) -> float:
    t0 = time.perf_counter()
    served, miss = cache.load_servable(path, EP, 3600, int(time.time()))
    assert served is not None, miss
    served.text_rules.candidates(text)
    served.get("tripwires")
    elapsed = time.perf_counter() - t0
    served.file.close()
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=41)
    parser.add_argument("--sizes", default="1000,10000,50000")
    args = parser.parse_args()
    checked = hot_view.HotFile._check

    def unchecked(self: hot_view.HotFile, name: str, first: int, data: bytes) -> None:
        self._ok.update((name, first + i) for i in range(-(-len(data) // hot_view.BLOCK)))

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in (int(s) for s in args.sizes.split(",")):
            path = os.path.join(tmp, f"c{n}", "projection.json")
            body = build(0)
            body["text_rules"] = distinct_rules(n)
            assert cache.save(body, path) is None
            for label, text in (("1-line edit", SMALL), ("20 KB file", LARGE)):
                on: list[float] = []
                off: list[float] = []
                for _ in range(args.runs):
                    hot_view.HotFile._check = checked  # type: ignore[method-assign]
                    on.append(one(path, text))
                    hot_view.HotFile._check = unchecked  # type: ignore[method-assign]
                    off.append(one(path, text))
                hot_view.HotFile._check = checked  # type: ignore[method-assign]
                rows.append((n, label, statistics.median(off) * 1e6, statistics.median(on) * 1e6))
    print(f"twin reads of a pre-edit ({args.runs} runs each, medians; python {sys.version.split()[0]})")
    print(f"{'rules':>6}  {'edit':<12} {'unchecked µs':>13} {'checked µs':>11} {'cost µs':>8}")
    for n, label, off_us, on_us in rows:
        print(f"{n:>6}  {label:<12} {off_us:>13.0f} {on_us:>11.0f} {on_us - off_us:>8.0f}")


if __name__ == "__main__":
    main()
