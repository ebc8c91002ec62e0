"""How precise are a secret scanner's rules once ported into aegis text rules? (issue 25 §5)

Every sample of detect-secrets' own plugin and heuristic-filter tests
(benchmarks/data/detect-secrets/samples.json: the line a test scans and whether the scanner
must flag it) is written by an agent (a `Write` of the sample's text to the sample's file name)
and judged by the real pre-edit hook, through `yupana test` (each case one rehearsal of the
real hook, the catalogue gated as a refresh gates it), against two catalogues:

* before.ttl — each plugin's regexes ported to RE2, nothing else;
* after.ttl  — the same regexes with what the scanner says beside them: the entropy floors of
  its high-entropy plugins (aegis:minEntropy of the quoted string, aegis:secretGroup), the
  keywords its keyword detector needs (aegis:requiredKeyword), its `fake` exclusion
  (aegis:allowStopword), IPPublicDetector's private ranges (aegis:allowMatchRegex) and its
  default heuristic filters as one shared selector's content allowlist.

A sample of plugin P counts as fired when one of P's rules fired on it (other plugins' rules are
counted on their own samples, as the scanner's tests count them). The table prints, per plugin
and in total, the true positives kept (samples the scanner must flag that fired) and the false
positives fired (samples it must not flag that fired), before and after, and how many of its own
samples detect-secrets 1.5.0 itself gets wrong — its plugin alone (as its plugin tests run it: the
heuristic-filter samples are the ones it fires on) and its plugin with its default filters, as
`detect-secrets scan` runs it (both recorded in samples.json by data/detect-secrets/extract.py).

    python benchmarks/secret_precision.py [--json] [--plugin NAME …]
    python benchmarks/secret_precision.py --cost RUNS     # the hook's wall time, each catalogue

A measurement of precision, not of time: the figures do not depend on the machine's load.
Exit 0 always (1 only when a catalogue is refused or `yupana test` cannot run).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "benchmarks" / "data" / "detect-secrets"
CATALOGUES = ("before", "after")


def load_samples(plugins: list[str] | None = None) -> list[dict[str, Any]]:
    samples = json.loads((DATA / "samples.json").read_text(encoding="utf-8"))["samples"]
    texts = {s["id"]: s["text"] for s in samples if "text" in s}
    for s in samples:
        if "text_of" in s:  # a long text stored once (data/detect-secrets/extract.py)
            s["text"] = texts[s.pop("text_of")]
    return [s for s in samples if not plugins or s["plugin"] in plugins]


def rule_plugins() -> dict[str, str]:
    """Rule local name (``ds_<name>``) → the detect-secrets plugin it ports."""
    sys.path.insert(0, str(DATA))
    try:
        import port  # type: ignore[import-not-found]
    finally:
        sys.path.pop(0)
    return {f"ds_{name}": plugin for plugin, name, _regex, _extra in port.rules()}


def _toml_string(value: str) -> str:
    text = json.dumps(value, ensure_ascii=False)  # a TOML basic string: \" \\ \n \uXXXX
    return text.replace("\x7f", "\\u007f")


def cases_file(samples: list[dict[str, Any]], path: Path) -> None:
    out = []
    for s in samples:
        out.append("[[case]]\n"
                   f"name = {_toml_string(s['id'])}\n"
                   'tool = "Write"\n'
                   f"path = {_toml_string(s['path'])}\n"
                   f"text = {_toml_string(s['text'])}\n"
                   'expect = "allow"\n')
    path.write_text("\n".join(out), encoding="utf-8")


def fired(catalogue: Path, cases: Path) -> dict[str, set[str]]:
    """Case name → the rules that fired on it (matches, not errors), by the real hook."""
    env = dict(os.environ)
    proc = subprocess.run([sys.executable, "-m", "yupana", "test", "--catalogue", str(catalogue), str(cases), "--json"],
                          capture_output=True, text=True, env=env, cwd=str(ROOT))
    if proc.returncode not in (0, 1):
        raise SystemExit(f"yupana test could not run on {catalogue.name} (exit {proc.returncode}): "
                         f"{proc.stderr.strip() or proc.stdout.strip()}")
    doc = json.loads(proc.stdout)
    return {c["name"]: {f["id"] for f in c.get("fired", []) if f.get("outcome") != "unknown"}
            for c in doc["cases"]}


def measure(samples: list[dict[str, Any]]) -> dict[str, Any]:
    """Per plugin and in total: samples the scanner must flag (tp) and must not (fp) — how many
    fired before and after — and how many the scanner itself gets wrong."""
    owner = rule_plugins()
    with tempfile.TemporaryDirectory(prefix="secret-precision-") as tmp:
        cases = Path(tmp) / "samples.test.toml"
        cases_file(samples, cases)
        results = {name: fired(DATA / f"{name}.ttl", cases) for name in CATALOGUES}
    rows: dict[str, dict[str, Any]] = {}
    for s in samples:
        row = rows.setdefault(s["plugin"], {"tp": 0, "fp": 0, "scanner_wrong_tp": 0, "scanner_wrong_fp": 0,
                                            "scanner_alone_wrong_tp": 0, "scanner_alone_wrong_fp": 0,
                                            **{f"{c}_{k}": 0 for c in CATALOGUES for k in ("tp", "fp")},
                                            "missed": {c: [] for c in CATALOGUES}, "false": {c: [] for c in CATALOGUES}})
        kind = "tp" if s["expected"] else "fp"
        row[kind] += 1
        if s["scanner"] != s["expected"]:
            row[f"scanner_wrong_{kind}"] += 1
        if s["scanner_plugin_alone"] != s["expected"]:
            row[f"scanner_alone_wrong_{kind}"] += 1
        for c in CATALOGUES:
            hit = any(owner.get(r) == s["plugin"] for r in results[c].get(s["id"], ()))
            row[f"{c}_{kind}"] += hit
            if s["expected"] and not hit:
                row["missed"][c].append(s["id"])
            if not s["expected"] and hit:
                row["false"][c].append(s["id"])
    total: dict[str, Any] = {k: sum(r[k] for r in rows.values()) for k in
                             ("tp", "fp", "scanner_wrong_tp", "scanner_wrong_fp", "scanner_alone_wrong_tp",
                              "scanner_alone_wrong_fp",
                              *(f"{c}_{k}" for c in CATALOGUES for k in ("tp", "fp")))}
    return {"plugins": dict(sorted(rows.items())), "total": total, "samples": len(samples)}


def _hook_env(tmp: Path, catalogue: Path) -> tuple[dict[str, str], Path]:
    """A project whose store is ``catalogue`` (file: endpoint), projected once, in its own state."""
    project = tmp / catalogue.stem
    (project / ".bobbin").mkdir(parents=True)
    (project / ".bobbin" / "config.toml").write_text(
        f'[yupana.policy]\nmode = "enforce"\n[yupana.quipu]\nenabled = true\nendpoint = "file:{catalogue}"\n'
        "projection_cache_ttl_secs = 86400\nrefresh_interval_secs = 86400\n", encoding="utf-8")
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("YUPANA_", "BOBBIN_"))}
    env.update(HOME=str(tmp / f"home-{catalogue.stem}"), XDG_STATE_HOME=str(tmp / f"state-{catalogue.stem}"),
               TMPDIR=str(tmp))  # once-per-session notice markers live in the temp directory
    done = subprocess.run([sys.executable, "-m", "yupana", "project"], cwd=project, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"yupana project refused {catalogue.name}: {done.stderr.strip()}")
    return env, project


def cost(samples: list[dict[str, Any]], runs: int) -> dict[str, Any]:
    """Median wall time of the whole pre-edit hook (fresh process) against each catalogue, for a
    small Edit and a ~100 KB Write of the samples' lines, interleaved with ``python -c pass``."""
    import statistics
    import time

    lines = [s["text"] for s in samples if len(s["text"]) < 4096]
    big = "\n".join(lines)
    while len(big) < 100_000:
        big += "\n" + "\n".join(lines)
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="secret-precision-cost-") as tmp:
        setups = {c: _hook_env(Path(tmp), DATA / f"{c}.ttl") for c in CATALOGUES}
        payloads = {}
        for c, (_env, project) in setups.items():
            small = {"tool_name": "Edit", "tool_input": {"file_path": str(project / "app.py"), "old_string": "x = 1",
                                                         "new_string": "x = 2  # retry count"}}
            write = {"tool_name": "Write", "tool_input": {"file_path": str(project / "samples.py"), "content": big[:100_000]}}
            payloads[c] = {k: json.dumps({"hook_event_name": "PreToolUse", "session_id": "bench", "cwd": str(project), **v})
                           # a session per run (below): the deadline notice is shown once per session
                           for k, v in (("small Edit", small), ("100 KB Write", write))}
        times: dict[str, list[float]] = {}
        cut: dict[str, int] = {}  # runs whose stderr says the deadline cut a check (UNKNOWN, failing open)
        for n in range(runs):
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-c", "pass"], check=True)
            times.setdefault("python -c pass", []).append(time.perf_counter() - t0)
            for c, (env, project) in setups.items():
                for kind, payload in payloads[c].items():
                    t0 = time.perf_counter()
                    done = subprocess.run([sys.executable, "-m", "yupana", "hook", "pre-edit"], input=payload.replace('"bench"', f'"bench-{c}-{n}"', 1).encode(),
                                          env=env, cwd=project, capture_output=True, check=True)
                    times.setdefault(f"{c}: {kind}", []).append(time.perf_counter() - t0)
                    cut[f"{c}: {kind}"] = cut.get(f"{c}: {kind}", 0) + (b"ran out of its" in done.stderr)
    base = statistics.median(times["python -c pass"])
    for key, values in times.items():
        med = statistics.median(values)
        out[key] = {"median_ms": round(med * 1000, 1), "ratio": round(med / base, 2), "deadline_cut": cut.get(key, 0),
                    "runs": len(values)}
    return out


def render(result: dict[str, Any]) -> str:
    head = ("| plugin | TP kept before | TP kept after | FP fired before | FP fired after | "
            "detect-secrets wrong, plugin alone (TP missed / FP flagged) | with its default filters |")
    lines = [head, "|---|---|---|---|---|---|---|"]

    def line(name: str, r: dict[str, Any]) -> str:
        return (f"| {name} | {r['before_tp']}/{r['tp']} | {r['after_tp']}/{r['tp']} | {r['before_fp']}/{r['fp']} | "
                f"{r['after_fp']}/{r['fp']} | {r['scanner_alone_wrong_tp']} / {r['scanner_alone_wrong_fp']} | "
                f"{r['scanner_wrong_tp']} / {r['scanner_wrong_fp']} |")

    for name, r in result["plugins"].items():
        lines.append(line(name, r))
    lines.append(line("**total**", result["total"]))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="the figures (and each missed or wrongly fired sample) as JSON")
    parser.add_argument("--plugin", action="append", help="only this plugin's samples (repeatable)")
    parser.add_argument("--cost", type=int, metavar="RUNS", default=0,
                        help="instead: the hook's wall time against each catalogue (RUNS interleaved runs; load-sensitive)")
    args = parser.parse_args(argv)
    samples = load_samples(args.plugin)
    if not samples:
        print("no samples (check --plugin)", file=sys.stderr)
        return 1
    if args.cost:
        for key, row in cost(samples, args.cost).items():
            tail = f"  deadline cut a check in {row['deadline_cut']}/{row['runs']} runs" if row["deadline_cut"] else ""
            print(f"{key:28} {row['median_ms']:8.1f} ms  {row['ratio']:5.2f}x{tail}")
        return 0
    result = measure(samples)
    if args.json:
        print(json.dumps(result, indent=1))
    else:
        print(f"{result['samples']} samples of detect-secrets' own tests, through the real pre-edit hook\n")
        print(render(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
