"""Cost of the SHACL gate for ~100 and ~1000 governed subjects.

    .venv/bin/python benchmarks/shacl_gate.py [--sizes 100,1000] [--runs 3]

Each catalogue is the example catalogue (fixtures/catalogue: every plane, a realistic mix
of policies, atoms, text rules, selectors, grounded predicates, tripwires, memory policies
and CI jobs) copied k times under renamed IRIs until it holds about N governed subjects.
It is projected through the embedded store, and the projection's triples are validated:

* ``gate (warm)``: median wall time of ``gate.validate(triples)`` in this process, with
  pySHACL imported and the shapes parsed (what a long-running caller pays);
* ``refresh-worker (cold)``: median wall time of a fresh process that imports the gate,
  parses the shapes and validates once — what a refresh pays on top of projecting;
* ``shapes validate``: median wall time of ``python -m yupana shapes validate`` on the
  catalogue's Turtle files (the store's CI), and ``python -c pass`` for scale.
"""

from __future__ import annotations

import argparse
import os
import pickle
import re
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

from yupana.endpoint.base import Deadline  # noqa: E402
from yupana.endpoint.embedded import EmbeddedStore  # noqa: E402
from yupana.projection import gate  # noqa: E402
from yupana.projection.refresh import project  # noqa: E402

CATALOGUE = os.path.join(REPO, "fixtures", "catalogue")
# Instance IRIs carry an underscore (policy_x, sel_x, wi_frt_1200); classes and properties do not.
INSTANCE = re.compile(r"aegis:([a-z][A-Za-z0-9]*_[A-Za-z0-9_]+)")

COLD = """
import pickle, sys, time
t0 = time.perf_counter()
from yupana.projection import gate
triples = pickle.load(open(sys.argv[1], "rb"))
report = gate.validate(triples)
assert report.conforms, report.summary()
print(time.perf_counter() - t0)
"""


def catalogue_copies(k: int, directory: str) -> list[str]:
    """The example catalogue, k copies with renamed instance IRIs, as Turtle files."""
    paths = []
    for name in sorted(os.listdir(CATALOGUE)):
        if not name.endswith(".ttl"):
            continue
        with open(os.path.join(CATALOGUE, name), encoding="utf-8") as fh:
            text = fh.read()
        head, _, body = text.rpartition("@prefix aegis: <http://aegis.gastown.local/ontology/> .")
        copies = [INSTANCE.sub(lambda m, i=i: f"aegis:{m.group(1)}_c{i}", body) for i in range(k)]
        path = os.path.join(directory, f"{k}-{name}")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(head + "@prefix aegis: <http://aegis.gastown.local/ontology/> .\n" + "\n".join(copies))
        paths.append(path)
    return paths


def subjects_per_copy() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        triples = project(EmbeddedStore(catalogue_copies(1, tmp), "file:bench"), {}, Deadline(60), env={}).triples
    return len({s for s, _, _ in triples})


def wall(argv: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(argv, check=False, capture_output=True, cwd=REPO)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,1000")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    per_copy = subjects_per_copy()
    python = sys.executable
    baseline = wall([python, "-c", "pass"], 7)
    print(f"python -c pass: {baseline * 1000:.0f} ms; example catalogue: {per_copy} governed subjects a copy")
    print(f"{'subjects':>8} {'triples':>8} {'gate (warm)':>12} {'refresh-worker (cold)':>22} {'shapes validate':>16}")
    gate.load_shapes()
    for size in (int(s) for s in args.sizes.split(",")):
        k = max(1, round(size / per_copy))
        with tempfile.TemporaryDirectory() as tmp:
            files = catalogue_copies(k, tmp)
            triples = project(EmbeddedStore(files, "file:bench"), {}, Deadline(120), env={}).triples
            subjects = len({s for s, _, _ in triples})
            warm = []
            for _ in range(args.runs):
                t0 = time.perf_counter()
                report = gate.validate(triples)
                warm.append(time.perf_counter() - t0)
                assert report.conforms, report.summary()
            pickled = os.path.join(tmp, "triples.pickle")
            with open(pickled, "wb") as fh:
                pickle.dump(triples, fh)
            cold = []
            for _ in range(args.runs):
                out = subprocess.run([python, "-c", COLD, pickled], capture_output=True, text=True, cwd=REPO)
                if out.returncode:
                    raise SystemExit(out.stderr)
                cold.append(float(out.stdout))
            cli = wall([python, "-m", "yupana", "shapes", "validate", "--allow-warnings", *files], args.runs)
        print(f"{subjects:>8} {len(triples):>8} {statistics.median(warm):>11.2f}s {statistics.median(cold):>21.2f}s "
              f"{cli:>15.2f}s")


if __name__ == "__main__":
    main()
