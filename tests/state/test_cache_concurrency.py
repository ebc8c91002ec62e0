"""20 processes rewriting the cache while readers read throughout: never a torn or mixed cache.

Every cache a writer saves carries its generation number at the top level and in every
rule, and a rule count derived from it; a reader checks all three on every read, through
the hot twin and through the JSON. A torn file would be unreadable; a mixed one (a twin
served for another JSON, rules of two writes) would disagree with itself.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time

import pytest

WRITERS = 20
READERS = 4
SAVES_PER_WRITER = 8

COMMON = textwrap.dedent("""
    import os, sys, time
    from yupana.state import cache
    EP = "http://quipu.example:3030"
    DATASET = "quipu:test"  # the cache is keyed by the dataset that selects its data

    def make(gen):
        n = 20 + gen % 17
        rules = [{"name": "g%d-r%d" % (gen, i), "generation": gen, "pattern": "MARK%d_%d" % (gen, i),
                  "tier": "block"} for i in range(n)]
        return {"version": 1, "written_at": int(time.time()), "endpoint": EP, "dataset": DATASET, "generation": gen,
                "text_rules": rules, "tripwires": [{"name": "w%d" % gen, "generation": gen, "paths": ["a/**"], "effect": "deny"}]}
""")

WRITER = COMMON + textwrap.dedent("""
    me, saves = int(sys.argv[1]), int(sys.argv[2])
    path = sys.argv[3]
    errors = 0
    for k in range(saves):
        if cache.save(make(me * 1000 + k), path) is not None:
            errors += 1
    print(errors)
""")

READER = COMMON + textwrap.dedent("""
    path, stop, hot = sys.argv[1], sys.argv[2], sys.argv[3] == "hot"
    reads = bad = 0
    problems = []
    generations = set()
    while not os.path.exists(stop) or reads < 50:
        load = cache.load_servable if hot else cache.load_servable_json
        found, miss = load(path, EP, 3600, int(time.time()) + 1, dataset=DATASET)
        reads += 1
        if miss is not None:
            bad += 1
            problems.append(miss.label + ": " + miss.reason)
            continue
        gen = found.get("generation")
        rules = found["text_rules"]
        ok = (len(rules) == 20 + gen % 17
              and all(r.get("generation") == gen for r in rules)
              and [r["name"] for r in rules] == ["g%d-r%d" % (gen, i) for i in range(len(rules))]
              and found["tripwires"][0]["generation"] == gen)
        if hot:
            ok = ok and all(r.get("_prefilter") == (("MARK%d_%d" % (gen, i),), False) for i, r in enumerate(rules))
        if not ok:
            bad += 1
            problems.append("mixed generation %r" % gen)
        generations.add(gen)
    import json
    print(json.dumps({"reads": reads, "bad": bad, "problems": problems[:5], "generations": len(generations)}))
""")


@pytest.mark.slow
def test_concurrent_writers_and_readers_never_see_a_torn_or_mixed_cache(tmp_path):
    path = str(tmp_path / "state" / "projection.json")
    stop = str(tmp_path / "stop")
    seed = subprocess.run([sys.executable, "-c", WRITER, "999", "1", path], capture_output=True, text=True)
    assert seed.stdout.strip() == "0", seed.stderr
    readers = [subprocess.Popen([sys.executable, "-c", READER, path, stop, "hot" if i % 2 == 0 else "json"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in range(READERS)]
    time.sleep(0.3)
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(w), str(SAVES_PER_WRITER), path],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for w in range(WRITERS)]
    for proc in writers:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0 and out.strip() == "0", err
    open(stop, "w").close()
    reports = []
    for proc in readers:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        reports.append(json.loads(out))
    for report in reports:
        assert report["bad"] == 0, report["problems"]
        assert report["reads"] >= 50
    # the readers really did read through the rewrites, not one quiet file
    assert max(r["generations"] for r in reports) > 3
    leftovers = [p.name for p in (tmp_path / "state").iterdir() if ".tmp." in p.name]
    assert leftovers == []
