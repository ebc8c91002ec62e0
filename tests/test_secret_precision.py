"""A secret scanner's rules ported into aegis text rules (benchmarks/secret_precision.py, issue
25 §5): on a subset of detect-secrets' own samples, judged by the real pre-edit hook, the
precision properties drop false positives the bare regexes fire on and lose no true positive."""

from __future__ import annotations

import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
sys.path.insert(0, str(REPO / "benchmarks" / "data" / "detect-secrets"))

import port  # noqa: E402
import secret_precision  # noqa: E402



def _subset() -> list[dict]:
    samples = secret_precision.load_samples(["IPPublicDetector", "HexHighEntropyString", "Base64HighEntropyString",
                                             "AWSKeyDetector"])
    keyword = secret_precision.load_samples(["KeywordDetector"])
    picked = [s for s in keyword if s.get("filter_sample") or "fake" in s["text"]]
    picked += [s for s in keyword if s["expected"] and s["path"].endswith((".conf", ".go", ".py"))][:12]
    return samples + picked


def test_the_ported_catalogue_drops_false_positives_and_keeps_every_true_positive():
    samples = _subset()
    assert {s["expected"] for s in samples} == {True, False}
    result = secret_precision.measure(samples)
    total = result["total"]
    assert total["before_tp"] == total["tp"] and total["after_tp"] == total["tp"], json.dumps(result["plugins"])
    assert total["after_fp"] < total["before_fp"]
    for plugin in ("IPPublicDetector", "HexHighEntropyString", "Base64HighEntropyString", "KeywordDetector"):
        row = result["plugins"][plugin]
        assert row["after_fp"] < row["before_fp"], (plugin, row)
        assert row["after_fp"] == 0, (plugin, row["false"]["after"])


def test_the_committed_catalogues_are_what_port_writes():
    for name in ("before", "after"):
        written = (port.HERE / f"{name}.ttl").read_text(encoding="utf-8")
        assert written == port.catalogue(after=name == "after"), f"run python {port.__file__} and commit {name}.ttl"


def test_the_path_scope_of_a_file_type_rule_exempts_exactly_the_other_types():
    import re2

    exempt = re2.compile(port.not_ending_with(("m", "cs", "c")))
    assert not any(exempt.search(p) for p in ("a.m", "src/b.cs", "c.c"))
    assert all(exempt.search(p) for p in ("a.mm", "b.cc", "x.py", "adhoc", "c", "dir.c/x.go"))


def test_the_jwt_allowlist_never_allows_a_token_whose_segments_are_json_objects():
    import base64
    import random

    import re2

    allow = re2.compile(port.jwt_not_json())
    rnd = random.Random(25)
    for _ in range(500):
        header = json.dumps({"alg": "HS256", "kid": "k" * rnd.randint(0, 9), "n": rnd.randint(0, 10 ** rnd.randint(0, 8))})
        body = json.dumps({"sub": "u" * rnd.randint(0, 13), "iat": rnd.randint(0, 2 ** 31)})
        token = ".".join(base64.urlsafe_b64encode(p.encode()).decode().rstrip("=") for p in (header, body)) + "."
        assert not allow.search(token), token
    for bad in ("eyJAAAA.eyJBBB", "eyJBB.eyJCC.", "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ.eyJzdWIiOiIxIn0."):
        assert allow.search(bad), bad
