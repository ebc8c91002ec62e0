"""Refresh time and HTTP request count for catalogues of 100, 1k and 10k text rules.

    .venv/bin/python benchmarks/projection_refresh.py [--sizes 100,1000,10000] [--batch 200] [--runs 3]

Each catalogue (N text rules of a subclass, each with a label, two rationales, a class and
a local exemption; every tenth rule also links a shared exemption selector; plus two
structural policies and a tripwire) is served by a real ``oxigraph serve`` on a loopback
port and projected with the SPARQL 1.1 transport; the same file is also projected through
the embedded store. Reported per size: median wall time of a whole ``project()``, the HTTP
requests it made (counted by the transport), the requests of the text-rule plane, and the
count predicted by ``1 + ceil(N / batch)`` (discovery asked whole: neither store caps rows). ``python -c pass`` is timed in the same run
for scale. Requests grow with batches, not with subjects.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
sys.path.insert(0, os.path.join(REPO, "tests"))

from servers.oxigraph import OxigraphServer, binary  # noqa: E402

from yupana.endpoint.base import Deadline  # noqa: E402
from yupana.endpoint.embedded import EmbeddedStore  # noqa: E402
from yupana.endpoint.sparql11 import Sparql11Endpoint  # noqa: E402
from yupana.projection.refresh import project  # noqa: E402

HEAD = """\
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix aegis: <http://aegis.gastown.local/ontology/> .
aegis:InternalIdentifierPattern rdfs:subClassOf aegis:TextRule .
aegis:sel_fixtures a aegis:Selector ; aegis:name "fixtures" ; aegis:evidenceSource "test fixtures" ;
    aegis:exemptPathRegex "^tests/fixtures/" , "^benches/data/" .
aegis:sel_rs a aegis:Selector ; aegis:name "rs" ; aegis:evidenceSource "(line_comment) @c" ;
    aegis:language "rust" ; aegis:tier "tree-sitter" .
aegis:pred_ticket a aegis:Predicate ; aegis:name "ticket" ; aegis:evidenceSource "\\\\b[A-Z]+-[0-9]+\\\\b" ;
    aegis:matchType "must-not-match" .
aegis:policy_a a aegis:Policy ; rdfs:label "no-ticket" ; aegis:boundary "action" ; aegis:selector aegis:sel_rs ;
    aegis:predicate aegis:pred_ticket ; aegis:effect "deny" ; aegis:constraintClass "hard" ; aegis:verificationPoint "PAG" .
aegis:policy_b a aegis:Policy ; rdfs:label "no-ticket-src" ; aegis:boundary "action" ; aegis:selector aegis:sel_rs ;
    aegis:predicate aegis:pred_ticket ; aegis:appliesTo "src/**" .
aegis:wire_auth a aegis:Policy ; rdfs:label "auth" ; aegis:boundary "action" ; aegis:appliesTo "src/auth/**" ;
    aegis:effect "deny" .
"""


def catalogue(n: int, path: str) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(HEAD)
        for i in range(n):
            link = " ; aegis:exemptionSelector aegis:sel_fixtures" if i % 10 == 0 else ""
            fh.write(f'aegis:rule_{i:05d} a aegis:InternalIdentifierPattern ; rdfs:label "rule {i}" ; '
                     f'aegis:regex "\\\\bsecret{i}[a-z]+\\\\b" ; aegis:enforcementTier "{"block" if i % 3 else "warn"}" ; '
                     f'aegis:identifierClass "token" ; rdfs:comment "why {i}" , "seen in incident {i % 17}" ; '
                     f'aegis:exemptPathRegex "^docs/{i % 5}/"{link} .\n')


def timed(endpoint_factory, batch: int, runs: int) -> tuple[float, int, int, int]:
    times, requests = [], []
    text = rules = 0
    for _ in range(runs):
        endpoint = endpoint_factory()
        start = time.perf_counter()
        proj = project(endpoint, {"batch_size": batch}, Deadline(600), env={})
        times.append(time.perf_counter() - start)
        requests.append(getattr(endpoint, "requests", sum(p.requests for p in proj.planes.values())))
        text = proj.planes["text_rules"].requests
        rules = proj.cache["counts"]["text_rules"]
        endpoint.close()
    return statistics.median(times), requests[-1], text, rules


def python_pass(runs: int = 7) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        samples.append(time.perf_counter() - start)
    return min(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,1000,10000")
    parser.add_argument("--batch", type=int, default=200)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    if binary() is None:
        sys.exit("the oxigraph server binary is not installed (pip install oxigraph)")
    baseline = python_pass()
    print(f"python -c pass: {baseline * 1000:.1f} ms; batch_size {args.batch}; discovery asked whole (no cap)")
    print(f"{'rules':>6} {'store':>9} {'refresh s':>10} {'x pass':>8} {'HTTP req':>9} {'text req':>9} {'predicted':>9}")
    with tempfile.TemporaryDirectory() as tmp:
        for n in (int(s) for s in args.sizes.split(",")):
            path = os.path.join(tmp, f"rules-{n}.ttl")
            catalogue(n, path)
            predicted = 1 + math.ceil(n / args.batch)
            server = OxigraphServer(os.path.join(tmp, f"db-{n}"), [path]).start()
            try:
                for label, factory in (
                    ("oxigraph", lambda server=server: Sparql11Endpoint(server.url, request_timeout=120)),
                    ("embedded", lambda path=path: EmbeddedStore([path], "file:" + path)),
                ):
                    secs, requests, text, rules = timed(factory, args.batch, args.runs)
                    assert rules == n, (rules, n)
                    shown = requests if label == "oxigraph" else "-"
                    print(f"{n:>6} {label:>9} {secs:>10.3f} {secs / baseline:>8.0f} {shown:>9} {text:>9} {predicted:>9}")
            finally:
                server.stop()


if __name__ == "__main__":
    main()
