"""Large writes against ~220 real secret-detection rules (issue 25 §2).

    .venv/bin/python benchmarks/large_write.py [--runs N] [--no-assert]

The catalogue: gitleaks' default rules converted into aegis text rules
(benchmarks/gitleaks_catalogue.py → benchmarks/data/gitleaks/catalogue/, MIT licence), projected
by the real ``yupana project`` through the embedded store (strict projection and SHACL gate).
Two hooks, each whole-process ``yupana hook pre-edit`` (the console script, payload on stdin),
strictly alternating with the same interpreter's ``python -c pass``, ratio of medians:

* a small ``.md`` Edit of prose: target ≤ 2x;
* a 100 KB ``.py`` Write of real code (this repository's own sources, the first 100 KB) with
  :data:`PLANTED` secrets at fixed places: target ≤ 3x, and the hook's own time well inside
  ``deadline_ms`` (100 ms): no text-rule check cut, every planted secret found.

Also printed, in process: the text-rule pass over the 100 KB text (index lookup, regex stage)
and the findings, which :func:`planted_text` and tests/evaluate/test_text_rules_large.py share.
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

import scale  # noqa: E402

CATALOGUE = os.path.join(REPO, "benchmarks", "data", "gitleaks", "catalogue")
TARGET_SMALL, TARGET_WRITE = 2.0, 3.0
SIZE = 100_000
# (gitleaks rule, a line of code carrying a secret of that kind): made-up values, well-formed
PLANTED = [
    ("aws-access-token", 'AWS_ACCESS_KEY_ID = "AKIAZ3MQ7PLX4WBN2KTD"\n'),
    ("github-pat", 'token = "ghp_R7x2Kq9LmN4vT8wZ1bC6dF3gH5jP0sY2uA9e"\n'),
    ("slack-bot-token", 'SLACK = "xoxb-2748391056-4829103756284-Qw8ErT5yUi2OpAs7DfGh1JkL"\n'),
    ("stripe-access-token", 'stripe.api_key = "sk_live_4eC39HqLyjWDarjtT1zdp7dcQ9x"\n'),
    ("private-key", "KEY = '''-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM9Oi8Zb4pR0q1X6sHjD2LkW8vYc5N\n"
                    "aQ7uE3tF9gB1hJ6kL2mN0pS4rT8wV5xZ3yC7dK1eR9fG2hJ4lM6nP8qS0tU3vW==\n-----END RSA PRIVATE KEY-----'''\n"),
    ("gitlab-pat", 'GITLAB_TOKEN = "glpat-x8Kq2Lm9Nv4Tw7Zb1Cd6"\n'),
    ("generic-api-key", 'client_secret = "q8Z3vK1xP7wR4tY9mL2nB6cJ5hG0fD8s"\n'),
]


def source_text(size: int = SIZE) -> str:
    """``size`` characters of real Python: this repository's own sources, in a fixed order."""
    text = ""
    for path in sorted(glob.glob(os.path.join(REPO, "yupana", "**", "*.py"), recursive=True)):
        with open(path, encoding="utf-8") as fh:
            text += fh.read()
        if len(text) >= size:
            break
    return text[:size]


def planted_text(size: int = SIZE) -> str:
    """:func:`source_text` with every :data:`PLANTED` line put in at an even spacing (at line
    starts), about ``size`` characters in all."""
    body = source_text(size - sum(len(line) for _, line in PLANTED))
    lines = body.splitlines(keepends=True)
    step = max(1, len(lines) // (len(PLANTED) + 1))
    for k, (_, line) in enumerate(PLANTED, start=1):
        lines.insert(k * step + k - 1, line)
    return "".join(lines)


def project(base: str, env: dict) -> str:
    """A project whose store is the gitleaks catalogue, projected; its root."""
    root = scale.project_dir(base, "gitleaks", "file:" + CATALOGUE)
    done = subprocess.run([sys.executable, "-m", "yupana", "project"], cwd=root, env=env, capture_output=True,
                          text=True)
    if done.returncode != 0:
        raise SystemExit(f"yupana project failed: {done.stdout}{done.stderr}")
    return root


def in_process(root: str, text: str) -> None:
    """The text-rule pass over ``text`` in this process, and what it finds."""
    from yupana.evaluate import text_rules
    from yupana.state import cache

    paths = glob.glob(os.path.join(os.environ["XDG_STATE_HOME"], "yupana", "stores", "*", "projection.json"))
    served, miss = cache.read(paths[0])
    assert served is not None, miss
    rules = served.get("text_rules")
    started = time.perf_counter()
    admitted, _ = text_rules.candidates(rules, text)
    looked = time.perf_counter()
    found = text_rules.evaluate(rules, text, "src/app.py", lambda: ("public", None, "acme/widgets"))
    done = time.perf_counter()
    fired = sorted({f.id for f in found if f.outcome != "unknown"})
    print(f"  in process, {len(text) // 1000} KB: index {1e3 * (looked - started):.1f} ms ({len(admitted)} of "
          f"{len(rules)} rules admitted), whole text-rule pass {1e3 * (done - looked):.1f} ms; "
          f"{len(fired)} rules fired: {', '.join(fired)}")


def main(argv: list[str]) -> int:
    runs = int(argv[argv.index("--runs") + 1]) if "--runs" in argv else 21
    check = "--no-assert" not in argv
    py = sys.executable
    script = os.path.join(os.path.dirname(py), "yupana")
    hook = [py, script, "hook", "pre-edit"] if os.path.exists(script) else [py, "-m", "yupana", "hook", "pre-edit"]
    base = tempfile.mkdtemp(prefix="yupana-large-")
    try:
        env = scale.setup_env(base)
        root = project(base, env)
        text = planted_text()
        small = {"file_path": os.path.join(root, "docs", "guide.md"), "old_string": "TBD",
                 "new_string": scale.MD_EDIT}
        write = {"file_path": os.path.join(root, "src", "app.py"), "content": text}
        scenarios = [("small .md Edit", scale.payload(root, "Edit", small), TARGET_SMALL),
                     (f"{len(text) // 1000} KB .py Write, {len(PLANTED)} secrets", scale.payload(root, "Write", write),
                      TARGET_WRITE)]
        for _, body, _ in scenarios:  # resolve the config snapshot, derive the twin, warm the page cache
            scale.timed(hook, body, env)
        done = subprocess.run(hook, input=scenarios[1][1], env=env, capture_output=True)
        out = json.loads(done.stdout or b"{}")
        said = json.dumps(out) + done.stderr.decode()
        missing = [rule for rule, _ in PLANTED if rule not in said]
        print(f"python: {py} ({sys.version.split()[0]}), runs: {runs}, load average {os.getloadavg()[0]:.2f}; "
              f"{len(text)} characters written")
        print(f"  the Write's decision: {(out.get('hookSpecificOutput') or {}).get('permissionDecision', 'allow')}; "
              f"planted secrets not named: {missing or 'none'}; deadline cut: {'deadline' in said}")
        in_process(root, text)
        base_samples: list[float] = []
        samples: list[list[float]] = [[] for _ in scenarios]
        for _ in range(runs):
            for i, (_, body, _) in enumerate(scenarios):
                base_samples.append(scale.timed([py, "-c", "pass"], None, env))
                samples[i].append(scale.timed(hook, body, env))
        base_ms = statistics.median(base_samples) * 1e3
        print(f"  python -c pass: {base_ms:.1f} ms (median of {len(base_samples)})")
        failed = [f"planted secrets not found: {missing}"] if missing else []
        for (label, _, target), s in zip(scenarios, samples):
            ms = statistics.median(s) * 1e3
            ratio = ms / base_ms
            ok = ratio <= target
            failed += [] if ok else [f"{label}: {ratio:.2f}x > {target}x"]
            print(f"  pre-edit {label:<32} {ms:6.1f} ms (max {max(s) * 1e3:6.1f})  {ratio:5.2f}x  target ≤ {target}x "
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
