"""What reading the hot path's modules from one bundle saves a hook (yupana/hot_import.py).

    .venv/bin/python benchmarks/hot_import.py [--runs N]

benchmarks/pre_edit.py's scenario (enforce, 500 text rules, 50 tripwires, a scope, warm cache;
and the same project with ``mode = "off"``), run as whole processes under ``-S`` from two copies
of this tree's package made for the run: one with its bundle, one where the bundle's name is
taken by a directory (so the hook imports every module the ordinary way and cannot write one).
Strict alternation with ``python -c pass``; the ratios of medians and what the bundle saves.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time

import pre_edit

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _copy(root: str) -> str:
    shutil.copytree(os.path.join(REPO, "yupana"), os.path.join(root, "yupana"),
                    ignore=shutil.ignore_patterns("hot.*.bundle*"))
    subprocess.run([sys.executable, "-m", "compileall", "-q", os.path.join(root, "yupana")], check=True)
    return root


def main(argv: list[str]) -> int:
    runs = int(argv[argv.index("--runs") + 1]) if "--runs" in argv else 21
    py = sys.executable
    base = tempfile.mkdtemp(prefix="yupana-bench-")
    try:
        site = sysconfig.get_paths()["purelib"]
        from yupana.hot_import import bundle_path

        envs, payloads = {}, {}
        for label in ("bundle", "ordinary"):  # each copy its own state: the config snapshot is keyed on the code
            root = os.path.join(base, label)
            env, payloads[label] = pre_edit.setup(root)
            envs[label] = dict(env, PYTHONPATH=os.pathsep.join([_copy(root), site]))
        os.makedirs(bundle_path(os.path.join(base, "ordinary", "yupana")))
        # what bin/yupana runs (``-m`` would add runpy's imports to both sides)
        hook = [py, "-S", "-c", "import sys; from yupana.cli import main; sys.exit(main())", "hook", "pre-edit"]
        for label, e in envs.items():  # config snapshots resolved, twins warm, the bundle written
            for mode in ("enforce", "off"):
                for _ in range(2):
                    subprocess.run(hook, input=payloads[label][mode], env=e, capture_output=True, check=True,
                                   cwd=base)
        assert os.path.isfile(bundle_path(os.path.join(base, "bundle", "yupana"))), "no bundle was written"
        commands: list[tuple[list[str], bytes | None]] = [([py, "-S", "-c", "pass"], None)]
        labels = []
        for mode in ("enforce", "off"):
            for label in ("bundle", "ordinary"):
                commands.append((hook, payloads[label][mode]))
                labels.append((mode, label))
        samples = _interleaved(commands, [envs["bundle"]] + [envs[label] for _, label in labels], runs, base)
        base_ms = samples[0]
        print(f"python: {py} ({sys.version.split()[0]}), runs: {runs}, -S, `-c pass` {base_ms:.1f} ms")
        by = dict(zip(labels, samples[1:]))
        for mode in ("enforce", "off"):
            b, o = by[(mode, "bundle")], by[(mode, "ordinary")]
            print(f"  pre-edit {mode:<7}  bundle {b:5.1f} ms = {b / base_ms:.2f}x   ordinary {o:5.1f} ms = "
                  f"{o / base_ms:.2f}x   saved {o - b:4.1f} ms")
        return 0
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _interleaved(commands: list[tuple[list[str], bytes | None]], envs: list[dict], runs: int, cwd: str) -> list[float]:
    samples: list[list[float]] = [[] for _ in commands]
    for _ in range(runs):
        for i, ((argv, stdin), env) in enumerate(zip(commands, envs)):
            started = time.perf_counter()
            done = subprocess.run(argv, input=stdin, env=env, capture_output=True, cwd=cwd)
            samples[i].append(time.perf_counter() - started)
            if done.returncode != 0 or (stdin is not None and done.stdout):
                raise SystemExit(f"unexpected hook output: rc={done.returncode} {done.stdout[:300]!r} "
                                 f"{done.stderr[-300:]!r}")
    return [statistics.median(s) * 1e3 for s in samples]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
