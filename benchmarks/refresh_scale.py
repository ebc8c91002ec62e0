"""A refresh near the store's own speed: 10k / 50k text rules against a real Oxigraph server.

    .venv/bin/python benchmarks/refresh_scale.py [--sizes 10000,50000] [--runs 3] [--deadline 20] [--source DIR]

Per size, one ``oxigraph serve`` holds the catalogue of ``projection_refresh.py`` (N text
rules of a subclass, a tenth of them linking a shared exemption selector, two structural
policies and a tripwire). Measured in the same run, against the same server:

* **one query** — the store returning every governed triple in a single SELECT
  (``?s a/rdfs:subClassOf* aegis:TextRule . ?s ?p ?o``, UNION the same for policies,
  selectors and predicates), the answer read to its last byte (median of ``--runs``);
* **full refresh** — ``yupana project --json`` as a fresh process, with no cache and no
  memo (what the first refresh of a store costs), under ``refresh_deadline_secs``;
* **unchanged refresh** — the same command again: nothing changed in the store;
* **1% changed** — after an update relabels 1% of the rules.

Each refresh reports its wall time, its ratio to one query, the peak RSS of its process
(``wait4``) and the phases ``project --json`` reports (server, transfer, decode, compile,
gate, write; ``-`` = not measured by the writer). Targets (issue 12 §2): full ≤ 10x one
query and inside the deadline, unchanged ≤ 2x one query, peak RSS ≤ 300 MB at 50k; the
command exits 1 when a target is missed. ``python -c pass`` is timed too, for scale. The
machine these figures come from is a shared, loaded 2-core box: read the ratios.
``--source DIR`` runs another checkout's yupana instead (``python -m yupana`` with
``PYTHONPATH=DIR``), to measure a before and an after against the same store.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
import urllib.parse
import urllib.request

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "tests"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from projection_refresh import catalogue, python_pass  # noqa: E402
from servers.oxigraph import OxigraphServer, binary  # noqa: E402

EVERY_GOVERNED_TRIPLE = """
PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
PREFIX aegis: <http://aegis.gastown.local/ontology/>
SELECT ?s ?p ?o WHERE {
  { ?s a/rdfs:subClassOf* aegis:TextRule . ?s ?p ?o } UNION { ?s a aegis:Policy . ?s ?p ?o }
  UNION { ?s a aegis:Selector . ?s ?p ?o } UNION { ?s a aegis:Predicate . ?s ?p ?o }
}"""
RELABEL = """
PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
PREFIX aegis: <http://aegis.gastown.local/ontology/>
DELETE { ?s rdfs:label ?l } INSERT { ?s rdfs:label ?new } WHERE {
  VALUES ?s { %s } ?s rdfs:label ?l . BIND(CONCAT(?l, " (edited)") AS ?new)
}"""
TARGETS = {"full": 10.0, "unchanged": 2.0}
# The installed command (the venv's script), else the module through this interpreter.
_SCRIPT = os.path.join(os.path.dirname(sys.executable), "yupana")
YUPANA = [_SCRIPT] if os.access(_SCRIPT, os.X_OK) else [sys.executable, "-m", "yupana"]
RSS_TARGET_MB = 300


def post(url: str, field: str, text: str, accept: str = "application/sparql-results+json") -> bytes:
    data = urllib.parse.urlencode({field: text}).encode()
    request = urllib.request.Request(url, data=data, headers={"Accept": accept})
    with urllib.request.urlopen(request, timeout=600) as answer:
        return answer.read()


def one_query(url: str, runs: int) -> tuple[float, int]:
    times, size = [], 0
    for _ in range(runs):
        start = time.perf_counter()
        size = len(post(url, "query", EVERY_GOVERNED_TRIPLE))
        times.append(time.perf_counter() - start)
    return statistics.median(times), size


def refresh(root: str, env: dict[str, str], command: list[str]) -> tuple[float, float, dict]:
    """``yupana project --json`` in ``root`` as a fresh process: (wall seconds, its own peak RSS
    in MB from ``wait4``, its document)."""
    start = time.perf_counter()
    out_r, out_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.chdir(root)
            os.dup2(out_w, 1)
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 2)
            os.execve(command[0], [*command, "project", "--json"], env)
        finally:
            os._exit(127)
    os.close(out_w)
    chunks = []
    while True:
        chunk = os.read(out_r, 1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(out_r)
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - start
    out = b"".join(chunks)
    doc = json.loads(out) if out.strip() else {"status": f"exit {status}", "error": "no output"}
    return wall, usage.ru_maxrss / 1024, doc


def phases(doc: dict) -> str:
    found = doc.get("phases") or {}
    names = ("server", "transfer", "decode", "compile", "gate", "write")
    return " ".join(f"{n} {'-' if found.get(n + '_s') is None else format(found[n + '_s'], '.2f')}" for n in names)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,50000")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--deadline", type=float, default=20.0, help="refresh_deadline_secs (the default is 20)")
    parser.add_argument("--source", default=None, help="run the yupana of this checkout instead (PYTHONPATH)")
    args = parser.parse_args()
    command = [sys.executable, "-m", "yupana"] if args.source else YUPANA
    if binary() is None:
        sys.exit("the oxigraph server binary is not installed (pip install oxigraph)")
    baseline = python_pass()
    print(f"python -c pass: {baseline * 1000:.1f} ms; refresh_deadline_secs = {args.deadline:g}; "
          f"load average {os.getloadavg()[0]:.2f}; yupana from {args.source or REPO}")
    missed = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in (int(s) for s in args.sizes.split(",")):
            path = os.path.join(tmp, f"rules-{n}.ttl")
            catalogue(n, path)
            server = OxigraphServer(os.path.join(tmp, f"db-{n}"), [path]).start()
            try:
                root = os.path.join(tmp, f"project-{n}")
                os.makedirs(os.path.join(root, ".bobbin"))
                with open(os.path.join(root, ".bobbin", "config.toml"), "w") as fh:
                    fh.write(f'[yupana.quipu]\nenabled = true\nendpoint = "{server.url}"\n'
                             f"refresh_deadline_secs = {args.deadline}\nrequest_timeout_secs = 60\n")
                env = {k: v for k, v in os.environ.items() if not k.startswith(("YUPANA_", "BOBBIN_", "SHANTY_"))}
                env.update(HOME=os.path.join(tmp, f"home-{n}"), XDG_STATE_HOME=os.path.join(tmp, f"state-{n}"))
                if args.source:
                    env["PYTHONPATH"] = os.path.abspath(args.source)
                query_s, size = one_query(server.url, args.runs)
                print(f"\n{n} text rules: one query {query_s:.3f}s ({size >> 20} MiB of results)")
                print(f"  {'refresh':<12} {'wall s':>7} {'x query':>8} {'x pass':>7} {'RSS MB':>7}  {'kept':>6}  phases (s)")
                rows = [("full", refresh(root, env, command))]
                rows.append(("unchanged", refresh(root, env, command)))
                rules = [f"<http://aegis.gastown.local/ontology/rule_{i:05d}>" for i in range(0, n, 100)]
                post(server.update_url, "update", RELABEL % " ".join(rules), accept="*/*")
                rows.append(("1% changed", refresh(root, env, command)))
                for label, (wall, peak, doc) in rows:
                    kept = (doc.get("incremental") or {}).get("rules_kept", "-")
                    ok = doc.get("status") == "refreshed"
                    print(f"  {label:<12} {wall:>7.2f} {wall / query_s:>8.1f} {wall / baseline:>7.0f} {peak:>7.0f}  "
                          f"{kept:>6}  {phases(doc)}" + ("" if ok else f"  FAILED {doc.get('error_kind')}: "
                                                         f"{(doc.get('error') or '')[:160]}"))
                    target = TARGETS.get(label)
                    if not ok:
                        missed.append(f"{n} {label}: {doc.get('status')} ({doc.get('error_kind')})")
                    elif target is not None and wall / query_s > target:
                        missed.append(f"{n} {label}: {wall / query_s:.1f}x one query > {target:g}x")
                    if n >= 50000 and peak > RSS_TARGET_MB:
                        missed.append(f"{n} {label}: peak RSS {peak:.0f} MB > {RSS_TARGET_MB} MB")
            finally:
                server.stop()
    if missed:
        print("\nMISSED: " + "; ".join(missed))
        return 1
    print("\nall targets met")
    return 0


if __name__ == "__main__":
    sys.exit(main())
