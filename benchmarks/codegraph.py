"""Tree-sitter structural checks on whole real crates: cold index, warm pre-edit analysis, FP rate.

    .venv/bin/python benchmarks/codegraph.py [--crates mio-0.8.4,sequoia-openpgp-1.12.0]
                                             [--edits 40] [--deadline-ms 100] [--no-fp]

Crates come from Debian's packaged sources (``apt-get install librust-mio-dev
librust-sequoia-openpgp-dev`` → /usr/share/cargo/registry/); each is copied to a temporary
repository so files can be edited, and indexed into a temporary ``YUPANA_CODEGRAPH_DIR``.

* cold index — ``background.build`` of the whole crate: MB/s and lines/s of Rust source.
* warm pre-edit analysis — ``--edits`` deterministic edits, each inserting a statement at
  the top of a real function body (an Edit whose ``old_string`` is the function's opening
  line); every edit runs in a fresh interpreter, like a hook: ``verify.verify_edit`` then
  ``blast.measure`` (max_hops 5) under ``deadline_at = now + deadline_ms``. Reported: the
  analysis time (median, p90, max), how many finished inside the deadline, impacted
  symbols; and the whole process against ``python -c pass`` measured in the same run.
  ``fresh``: the edited file is indexed as it is on disk; ``stale``: the file was changed
  since (a previous edit landed and no background refresh ran yet), so the hook re-parses
  it first.
* false positives — every file of the crate verified against itself with all of it
  counted as introduced (nothing pre-exists): files with a violation / files. Dependencies
  Debian's packaging patches removed from Cargo.toml (non-Linux targets, unpackaged
  dev-dependencies) are added back first: the code still names them.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
REGISTRY = os.environ.get("YUPANA_CARGO_REGISTRY", "/usr/share/cargo/registry")

PROBE = r"""
import json, os, sys, time
t0 = time.perf_counter()
from yupana.edit import payload
root, rel, old, new, deadline_ms = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5])
raw = json.dumps({"cwd": root, "tool_name": "Edit",
                  "tool_input": {"file_path": os.path.join(root, rel), "old_string": old, "new_string": new}})
edit = payload.parse(raw.encode()).edits[0]
start = time.perf_counter()
deadline_at = time.monotonic() + deadline_ms / 1000.0
from yupana.codegraph import blast, verify
v = verify.verify_edit(edit, root, deadline_at)
mid = time.perf_counter()
b = blast.measure(edit, root, 5, deadline_at)
end = time.perf_counter()
print(json.dumps({"analysis_ms": (end - start) * 1e3, "verify_ms": (mid - start) * 1e3, "blast_ms": (end - mid) * 1e3,
                  "violations": None if v is None else len(v.violations),
                  "symbols": getattr(b, "symbols", None), "unmeasured": getattr(b, "kind", None),
                  "why": getattr(b, "reason", None)}))
"""


def rs_files(root: str) -> list[str]:
    return [os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs if f.endswith(".rs") and "/target/" not in d]


def pick_edits(ci, root: str, n: int, seed: int = 7) -> list[tuple[str, str, str]]:
    """Edits inserting a statement at the top of real function bodies (unique opening lines)."""
    rng = random.Random(seed)
    rels = sorted(ci.files)
    rng.shuffle(rels)
    edits: list[tuple[str, str, str]] = []
    for rel in rels:
        text = open(os.path.join(root, rel), encoding="utf-8", errors="replace").read()
        lines = text.split("\n")
        fns = [s for s in ci.symbols_of(rel) if s[2] in ("fn", "method")]
        rng.shuffle(fns)
        for s in fns[:2]:
            line = lines[s[8] - 1] if s[8] - 1 < len(lines) else ""
            if not line.rstrip().endswith("{") or text.count(line) != 1 or "fn " not in line:
                continue
            indent = " " * (len(line) - len(line.lstrip()) + 4)
            edits.append((rel, line, f"{line}\n{indent}let _probe = core::mem::size_of::<usize>();"))
            break
        if len(edits) >= n:
            break
    return edits


def run_probe(env: dict, root: str, edit: tuple, deadline_ms: int) -> tuple[dict, float]:
    rel, old, new = edit
    t = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", PROBE, root, rel, old, new, str(deadline_ms)], env=env,
                          capture_output=True, text=True)
    wall = (time.perf_counter() - t) * 1e3
    if done.returncode != 0:
        raise SystemExit(f"probe failed for {rel}: {done.stderr[-2000:]}")
    return json.loads(done.stdout), wall


def pass_ms(env: dict, runs: int) -> float:
    out = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], env=env, check=True)
        out.append((time.perf_counter() - t) * 1e3)
    return statistics.median(out)


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def warm(env: dict, root: str, edits: list, deadline_ms: int, stale: bool) -> dict:
    rows, walls = [], []
    for edit in edits:
        path = os.path.join(root, edit[0])
        if stale:  # a previous edit landed since the file was indexed
            with open(path, "a", encoding="utf-8") as fh:
                fh.write("\n// touched by an earlier edit\n")
            past = time.time() - 1
            os.utime(path, (past, past))
        got, wall = run_probe(env, root, edit, deadline_ms)
        rows.append(got)
        walls.append(wall)
    analysis = [r["analysis_ms"] for r in rows]
    inside = sum(1 for r in rows if r["analysis_ms"] <= deadline_ms and r["unmeasured"] is None)
    symbols = [r["symbols"] for r in rows if r["symbols"] is not None]
    return {"n": len(rows), "median": statistics.median(analysis), "p90": pct(analysis, 0.9), "max": max(analysis),
            "verify_median": statistics.median(r["verify_ms"] for r in rows),
            "blast_median": statistics.median(r["blast_ms"] for r in rows),
            "measured_in_deadline": inside, "unmeasured": sum(1 for r in rows if r["unmeasured"]),
            "violations": sum(r["violations"] or 0 for r in rows),
            "symbols_median": statistics.median(symbols) if symbols else None,
            "wall_median": statistics.median(walls),
            "reasons": sorted({r["why"] for r in rows if r["why"]})[:3]}


def debian_removed_deps(src: str) -> set[str]:
    """Dependencies Debian's packaging patches removed from Cargo.toml (non-Linux targets,
    unpackaged dev-dependencies): the code still names them, the manifest no longer does."""
    names: set[str] = set()
    patches = os.path.join(src, "debian", "patches")
    for name in sorted(os.listdir(patches)) if os.path.isdir(patches) else ():
        header = ""
        for line in open(os.path.join(patches, name), encoding="utf-8", errors="replace"):
            body = line[1:].strip()
            if body.startswith("["):
                header = body.strip("[]")
                if line.startswith("-") and "dependencies." in header:
                    names.add(header.rsplit(".", 1)[-1].strip('"').replace("-", "_"))
            elif line.startswith("-") and header.endswith("dependencies") and "=" in body:
                names.add(body.split("=", 1)[0].strip().split(".")[0].strip('"').replace("-", "_"))
    return names


def false_positives(root: str, restored: set[str]) -> tuple[int, int, list]:
    from yupana.codegraph import index, verify

    index.forget()
    ci = index.open_crate(os.path.join(root, "Cargo.toml"), root, time.monotonic() + 120)
    ci.crate.deps |= restored
    files = bad = 0
    shown = []
    for rel in sorted(ci.files):
        if rel.startswith(("tests/ui", "tests/compile-fail", "tests/compile_fail")):
            continue  # trybuild fixtures are written not to compile
        data = open(os.path.join(root, rel), "rb").read()
        env = verify.Env(os.path.join(root, rel), ci.crate, ci, rel, ci.info(rel))
        result = verify.verify_source(data, [(0, len(data))], env, None)
        files += 1
        if result.violations:
            bad += 1
            shown += [(rel, v) for v in result.violations[:2]]
    index.forget()
    return files, bad, shown


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--crates", default="mio-0.8.4,sequoia-openpgp-1.12.0")
    parser.add_argument("--edits", type=int, default=40)
    parser.add_argument("--deadline-ms", type=int, default=100)
    parser.add_argument("--no-fp", action="store_true", help="skip the false-positive sweep")
    args = parser.parse_args()
    from yupana.codegraph import background, index

    work = tempfile.mkdtemp(prefix="yupana-codegraph-bench-")
    os.environ["YUPANA_CODEGRAPH_DIR"] = os.path.join(work, "index")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}  # hooks run with .pyc
    env["PYTHONPATH"] = REPO
    env["YUPANA_CODEGRAPH_WATCH"] = "0"  # no edit lands here: no after-edit refreshers left waiting
    try:
        for name in args.crates.split(","):
            src = os.path.join(REGISTRY, name)
            if not os.path.isdir(src):
                print(f"{name}: not installed under {REGISTRY} (apt-get install librust-<crate>-dev)")
                continue
            root = os.path.join(work, name)
            shutil.copytree(src, root, ignore=shutil.ignore_patterns("debian"))
            os.makedirs(os.path.join(root, ".git"))
            files = rs_files(root)
            size = sum(os.path.getsize(f) for f in files)
            lines = sum(open(f, "rb").read().count(b"\n") for f in files)
            t = time.perf_counter()
            ci = background.build(root, root)
            cold = time.perf_counter() - t
            print(f"\n{name}: {len(files)} files, {lines} lines, {size / 1e6:.2f} MB")
            print(f"  cold index: {cold:.2f} s = {size / 1e6 / cold:.2f} MB/s, {lines / cold:.0f} lines/s")
            edits = pick_edits(ci, root, args.edits)
            index.forget()
            run_probe(env, root, edits[0], args.deadline_ms)  # compile .pyc once
            base = pass_ms(env, max(10, len(edits) // 2))
            for label, stale in (("fresh", False), ("stale", True)):
                r = warm(env, root, edits, args.deadline_ms, stale)
                print(f"  warm analysis ({label}, {r['n']} edits, deadline {args.deadline_ms} ms): median "
                      f"{r['median']:.1f} ms (verify {r['verify_median']:.1f}, blast {r['blast_median']:.1f}), "
                      f"p90 {r['p90']:.1f}, max {r['max']:.1f}; measured in time {r['measured_in_deadline']}/{r['n']}, "
                      f"unmeasured {r['unmeasured']}; impacted symbols median {r['symbols_median']}; "
                      f"violations {r['violations']}")
                print(f"    whole process median {r['wall_median']:.1f} ms vs python -c pass {base:.1f} ms "
                      f"= {r['wall_median'] / base:.2f}x")
                for why in r["reasons"]:
                    print(f"    unmeasured: {why}")
                if stale:  # leave the copies as they are now and re-index them for the FP sweep
                    background.build(root, root)
            if not args.no_fp:
                t = time.perf_counter()
                restored = debian_removed_deps(src)
                n, bad, shown = false_positives(root, restored)
                print(f"  false positives: {bad}/{n} files with a violation ({100 * bad / max(n, 1):.2f}%), "
                      f"{time.perf_counter() - t:.1f} s"
                      + (f" (Debian-removed dependencies restored: {', '.join(sorted(restored))})" if restored else ""))
                for rel, v in shown[:6]:
                    print(f"    {rel}:{v['line']}: {v['kind']} {v['symbol']}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
