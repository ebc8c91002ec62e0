"""Does a hook's cost grow with the catalogue? (issue 12 §1)

    .venv/bin/python benchmarks/scale.py [--runs N] [--sizes 500,5000,20000,50000] [--no-assert]

Whole-process wall time of the real hooks (the console script a harness runs, executed by
the venv's interpreter, payload piped on stdin), as the ratio of medians against the same
interpreter's ``python -c pass``, runs interleaved so machine load hits all alike:

* **pre-edit, small ``.md`` Edit, N text rules** (500 / 5k / 20k / 50k, every pattern
  distinct: benchmarks/rule_corpus.py's realistic kinds, each rule with its own literal):
  the growth curve. Target ≤ 1.6x at every size.
* **pre-edit, small ``.rs`` Edit, bundled catalogue** (fixtures/catalogue projected by the
  real ``yupana project`` through the embedded store): ≤ 1.8x.
* **pre-edit, 200 KB ``.rs`` Write, bundled catalogue**: real Rust (tokio's runtime sources
  from Debian's ``librust-tokio-dev`` when installed, else a generated file of the same
  shape), so the structural policies' literals (``unwrap``, ``expect``) are present and
  tree-sitter must run: ≤ 2.5x.
* **pre-bash, unrelated command, 20k text rules in the catalogue** (``ls -la && git
  status``): pre-bash reads no text rules, ≤ 1.6x.

Every project runs ``mode = "enforce"`` with a declared scope for the tenant; the caches
are warm (written by ``yupana project`` or by ``state.cache.save``, the refresher's path)
and the configuration snapshots resolved before timing. Fails (exit 1) over target.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
sys.path.insert(0, os.path.join(REPO, "benchmarks"))

import rule_corpus  # noqa: E402

SIZES = (500, 5_000, 20_000, 50_000)
TARGET_MD, TARGET_RS, TARGET_RS_BIG, TARGET_BASH = 1.6, 1.8, 2.5, 1.6
PREBASH_RULES = 20_000
MD_EDIT = ("Deployment notes\n\nThe widget service now reads its settings from the environment; see the "
           "runbook section on rollouts for the order of steps and who to ask when a canary fails.\n")


def distinct_rules(n: int) -> list[dict]:
    """``n`` text rules with distinct patterns: the corpus's kinds, each made the rule's own by
    a literal no other rule has (a code name, host or ticket prefix with the rule's number)."""
    base = rule_corpus.text_rules(500)
    out = []
    for i in range(n):
        rule = dict(base[i % len(base)])
        kind = rule["class"]
        tag = f"{rule_corpus.CODENAMES[i % len(rule_corpus.CODENAMES)]}{i}"
        if kind in ("hostname", "email", "address"):
            rule["pattern"] = rf"\b[a-z0-9-]+\.{tag}\.{rule_corpus.ORGS[i % len(rule_corpus.ORGS)]}\.internal\b"
        elif kind == "ticket":
            rule["pattern"] = rf"\b{rule_corpus.PROJECTS[i % len(rule_corpus.PROJECTS)]}{i}-[0-9]+\b"
        elif kind in ("codename", "customer"):
            rule["pattern"] = rf"(?i)\bproject[ _-]?{tag}\b"
        elif kind == "credential":
            rule["pattern"] = rf"\b{tag}_(?:token|secret|key)\s*=\s*['\"][A-Za-z0-9/+]{{20,}}"
        elif i >= 500:  # debug, todo, home-dir, generic: keep the first 500's, then make them distinct
            rule["pattern"] = rf"\bdebug_{tag}\(|\bTODO\({tag}\)"
        rule["name"] = f"{rule['name']}_{i}"
        rule["iri"] = f"{rule['iri']}_{i}"
        out.append(rule)
    return out


def rust_source(size: int = 200_000) -> tuple[str, str]:
    """(what it is, ~``size`` characters of real Rust) — tokio's runtime when Debian ships it."""
    files = sorted(glob.glob("/usr/share/cargo/registry/tokio-1*/src/runtime/**/*.rs", recursive=True))
    if files:
        text = ""
        for path in files:
            with open(path, encoding="utf-8", errors="replace") as fh:
                text += fh.read()
            if len(text) >= size:
                break
        if len(text) >= size:
            return f"tokio runtime sources ({len(files)} files available)", text[:size].rsplit("\n", 1)[0] + "\n"
    parts = []
    i = 0
    while sum(len(p) for p in parts) < size:
        parts.append(f"/// Reads entry {i} from the table.\npub fn entry_{i}(table: &Table, key: &str) -> Option<u32> {{\n"
                     f"    // look the key up, then parse it\n    let raw = table.get(key).expect(\"present\");\n"
                     f"    let value = raw.trim().parse::<u32>().ok()?;\n    Some(value + {i})\n}}\n\n")
        i += 1
    return "generated Rust (no Debian tokio sources)", "".join(parts)


def payload(cwd: str, tool: str, tool_input: dict, event: str = "PreToolUse") -> bytes:
    return json.dumps({"session_id": "bench", "transcript_path": "/tmp/t.jsonl", "cwd": cwd,
                       "permission_mode": "default", "hook_event_name": event, "tool_name": tool,
                       "tool_use_id": "toolu_1", "tool_input": tool_input}).encode()


def project_dir(base: str, name: str, endpoint: str) -> str:
    root = os.path.join(base, name)
    os.makedirs(os.path.join(root, ".git"), exist_ok=True)
    os.makedirs(os.path.join(root, ".bobbin"), exist_ok=True)
    with open(os.path.join(root, ".git", "config"), "w") as fh:
        fh.write('[remote "origin"]\n\turl = git@github.com:acme/widgets.git\n')
    with open(os.path.join(root, ".bobbin", "config.toml"), "w") as fh:
        fh.write('[yupana.policy]\nmode = "enforce"\n\n[yupana.policy.scopes.bench]\n'
                 'allow_paths = ["src/**", "docs/**", "tests/**"]\ndeny_paths = ["src/secrets/**"]\n\n'
                 f'[yupana.quipu]\nenabled = true\nendpoint = "{endpoint}"\n')
    return root


def write_cache(endpoint: str, rules: list[dict]) -> None:
    """A warm cache of ``rules`` for ``endpoint``, written as the refresher writes one."""
    from yupana.state import cache, dataset, stores

    body = {"version": 1, "written_at": int(time.time()), "endpoint": endpoint, "dialect": "sparql11",
            "digest": f"sha256:bench{len(rules)}", "counts": {"text_rules": len(rules)}, "policies": [],
            "text_rules": rules, "exemption_selectors": [], "grounded_rules": [], "grounding": None,
            "work_item_scopes": None, "work_item_parents": None, "tripwires": [], "memory_policies": [],
            "ci_map": None, "disk_history": None, "repo_exposure": [], "unprojected": [], "notices": []}
    error = cache.save(body, stores.cache_path(dataset.identity({"endpoint": endpoint})))
    assert error is None, error


def setup_env(base: str) -> dict:
    """A clean environment with its own HOME, state and temporary directories under ``base``
    (also made this process's, so :func:`write_cache` writes where the hooks read)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("YUPANA_", "BOBBIN_", "SHANTY_", "XDG_"))}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.update(HOME=os.path.join(base, "home"), XDG_STATE_HOME=os.path.join(base, "state"),
               TMPDIR=os.path.join(base, "tmp"), BOBBIN_ROLE="bench")
    for d in ("home", "state", "tmp"):
        os.makedirs(os.path.join(base, d), exist_ok=True)
    os.environ.update({k: env[k] for k in ("HOME", "XDG_STATE_HOME", "TMPDIR")})
    return env


def setup(base: str) -> tuple[dict, list[tuple[str, list[str], bytes, float]], str]:
    """The environment and the scenarios: (label, hook argv tail, payload, target)."""
    env = setup_env(base)
    scenarios = []
    for n in SIZES:
        endpoint = f"http://127.0.0.1:9/rules{n}"
        root = project_dir(base, f"md{n}", endpoint)
        write_cache(endpoint, distinct_rules(n))
        edit = {"file_path": os.path.join(root, "docs", "guide.md"), "old_string": "TBD", "new_string": MD_EDIT}
        scenarios.append((f"pre-edit  .md Edit, {n:>6} text rules", ["pre-edit"],
                          payload(root, "Edit", edit), TARGET_MD))
    root = project_dir(base, "bundled", "file:" + os.path.join(REPO, "fixtures", "catalogue"))
    done = subprocess.run([sys.executable, "-m", "yupana", "project"], cwd=root, env=env, capture_output=True,
                          text=True)
    if done.returncode != 0:
        raise SystemExit(f"yupana project failed: {done.stdout}{done.stderr}")
    small = {"file_path": os.path.join(root, "src", "lib.rs"), "old_string": "let total = 0;",
             "new_string": "let total = compute(a, b);\n"}
    scenarios.append(("pre-edit  .rs Edit, bundled catalogue", ["pre-edit"], payload(root, "Edit", small), TARGET_RS))
    what, source = rust_source()
    big = {"file_path": os.path.join(root, "src", "runtime.rs"), "content": source}
    scenarios.append((f"pre-edit  {len(source) // 1000} KB .rs Write, bundled", ["pre-edit"],
                      payload(root, "Write", big), TARGET_RS_BIG))
    endpoint = f"http://127.0.0.1:9/rules{PREBASH_RULES}"
    root = os.path.join(base, f"md{PREBASH_RULES}")
    if not os.path.isdir(root):
        root = project_dir(base, f"md{PREBASH_RULES}", endpoint)
        write_cache(endpoint, distinct_rules(PREBASH_RULES))
    scenarios.append((f"pre-bash  unrelated, {PREBASH_RULES} text rules", ["pre-bash"],
                      payload(root, "Bash", {"command": "ls -la && git status"}), TARGET_BASH))
    return env, scenarios, what


def timed(argv: list[str], stdin: bytes | None, env: dict, cwd: str | None = None) -> float:
    started = time.perf_counter()
    done = subprocess.run(argv, input=stdin, env=env, capture_output=True, cwd=cwd)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{argv} exited {done.returncode}: {done.stderr[-400:]!r}")
    if stdin is not None and done.stdout:
        json.loads(done.stdout)  # one whole JSON object or nothing
    return elapsed


def main(argv: list[str]) -> int:
    global SIZES
    runs = int(argv[argv.index("--runs") + 1]) if "--runs" in argv else 25
    if "--sizes" in argv:
        SIZES = tuple(int(x) for x in argv[argv.index("--sizes") + 1].split(","))
    check = "--no-assert" not in argv
    py = sys.executable
    script = os.path.join(os.path.dirname(py), "yupana")
    hook = [py, script, "hook"] if os.path.exists(script) else [py, "-m", "yupana", "hook"]
    base = tempfile.mkdtemp(prefix="yupana-scale-")
    try:
        env, scenarios, what = setup(base)
        subprocess.run([py, "-m", "compileall", "-q", os.path.join(REPO, "yupana")], check=True, env=env,
                       stdout=subprocess.DEVNULL)
        for _, tail, body, _ in scenarios:  # resolve config snapshots, warm the page cache
            timed(hook + tail, body, env)
        print(f"python: {py} ({sys.version.split()[0]}), runs: {runs}, load average "
              f"{os.getloadavg()[0]:.2f}; 200 KB source: {what}")
        failed = []
        base_samples: list[float] = []
        samples: list[list[float]] = [[] for _ in scenarios]
        for _ in range(runs):
            for i, (_, tail, body, _) in enumerate(scenarios):
                base_samples.append(timed([py, "-c", "pass"], None, env))
                samples[i].append(timed(hook + tail, body, env))
        base_ms = statistics.median(base_samples) * 1e3
        print(f"  python -c pass: {base_ms:.1f} ms (median of {len(base_samples)})")
        for (label, _, _, target), s in zip(scenarios, samples):
            ms = statistics.median(s) * 1e3
            p90 = sorted(s)[int(0.9 * (len(s) - 1))] * 1e3
            ratio = ms / base_ms
            ok = ratio <= target
            failed += [] if ok else [f"{label.strip()}: {ratio:.2f}x > {target}x"]
            print(f"  {label:<42} {ms:6.1f} ms (p90 {p90:6.1f})  {ratio:5.2f}x  target ≤ {target}x  "
                  f"{'ok' if ok else 'OVER'}")
        print(f"  load average after: {os.getloadavg()[0]:.2f}")
        if failed and check:
            print("FAILED: " + "; ".join(failed))
            return 1
        return 0
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
