"""What the decision log (issue 24 §2: ``digest`` and ``would_deny`` on the hooks' records) costs a hook.

    .venv/bin/python benchmarks/decision_log.py [--runs N] [--before DIR]

``yupana hook pre-edit`` as a whole process under ``advise`` (the mode ``would_deny`` is
computed in) with 500 text rules and 50 tripwires served from a warm cache: an ordinary edit
(nothing fires) and an edit a block-tier rule fires on in a public repository (a would-deny:
the ``governed`` record and the constraints carry the new fields). With ``--before DIR`` (a
tree of yupana before the change, e.g. ``git archive <commit> | tar -x -C DIR``) the same
hooks run from it too, through ``PYTHONPATH``, interleaved with this tree's, so the machine's
load falls on both alike. No new module is imported (tests/test_hot_imports.py), so the
target is no measurable difference.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pre_edit  # the pre-edit benchmark's catalogue, setup and timer


def main(argv: list[str]) -> int:
    runs = int(argv[argv.index("--runs") + 1]) if "--runs" in argv else 21
    before = argv[argv.index("--before") + 1] if "--before" in argv else None
    script = os.path.join(os.path.dirname(sys.executable), "yupana")
    trees = [("after", None)] + ([("before", before)] if before else [])
    with tempfile.TemporaryDirectory(prefix="yupana-bench-") as top:
        prepared = [_prepare(os.path.join(top, name), tree) for name, tree in trees]  # a state directory each
        commands = []
        labels = ["ordinary edit", "block-tier hit"]
        for case in range(len(labels)):
            for env, payloads in prepared:
                commands.append(([sys.executable, script, "hook", "pre-edit"], payloads[case], env))
        samples = _median_ms(commands, runs)
        print(f"python: {sys.executable}, runs: {runs}, advise, 500 text rules, 50 tripwires, a scope")
        i = 0
        for label in labels:
            row = []
            for name, _ in trees:
                row.append(f"{name} {samples[i]:.1f} ms")
                i += 1
            print(f"  {label:<15} " + "  ".join(row))
        spool = os.path.join(top, "after", "state", "yupana", "metrics.jsonl")
        with open(spool) as fh:
            guards = [r for r in map(json.loads, fh) if r.get("kind") == "guard" and "would_deny" in r]
        print(f"  after: guard records with would_deny: {len(guards)} "
              f"({sum(1 for g in guards if g['would_deny'])} true), digest {guards[-1].get('digest') if guards else None}")
    return 0


def _prepare(base: str, tree: str | None) -> tuple[dict, list[bytes]]:
    """The pre-edit benchmark's state and project under ``base``, the project in advise (exposure
    public: a block-tier hit would deny under enforce), and the two payloads."""
    os.makedirs(base)
    env, payloads = pre_edit.setup(base)
    if tree:
        env["PYTHONPATH"] = tree
    root = os.path.join(base, "enforce")
    with open(os.path.join(root, ".bobbin", "config.toml"), "w") as fh:
        fh.write(pre_edit.config("advise").replace('[yupana.policy]\nmode = "advise"\n',
                                                   '[yupana.policy]\nmode = "advise"\nexposure = "public"\n'))
    hit = json.loads(payloads["enforce"])
    hit["tool_input"]["new_string"] = 'let k = "internal-only-indigo8";\n'  # a (?i)internal-only-<word> rule
    return env, [payloads["enforce"], json.dumps(hit).encode()]


def _median_ms(commands: list[tuple[list[str], bytes, dict]], runs: int) -> list[float]:
    import statistics
    import subprocess
    import time

    samples: list[list[float]] = [[] for _ in commands]
    for _ in range(runs):
        for i, (cmd, stdin, env) in enumerate(commands):
            started = time.perf_counter()
            done = subprocess.run(cmd, input=stdin, env=env, capture_output=True)
            samples[i].append(time.perf_counter() - started)
            if done.returncode != 0:
                raise SystemExit(f"hook failed: {done.stderr[-300:]!r}")
    return [statistics.median(s) * 1e3 for s in samples]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
