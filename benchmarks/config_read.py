"""Hot-path cost of reading the configuration (the resolved snapshot), and the one-time miss.

    .venv/bin/python benchmarks/config_read.py [--runs N]

A hook needs the configuration in a few milliseconds and may not import pydantic, so it
reads the snapshot that ``yupana.settings`` keeps keyed by the config files' fingerprints.
Reported: the in-process median of ``settings.load`` on a hit; the whole process
``python -c "from yupana import settings; settings.load(root)"`` against ``python -c pass``
in the same run (ratio); and the cost of a miss in process (an operator edited the file: the
next hook resolves once with ``yupana.config.resolver``; the whole first hook is
benchmarks/config_cold.py).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

CONFIG = """\
[yupana.quipu]
enabled = true
endpoint = "http://127.0.0.1:3030"

[yupana.policy]
mode = "enforce"
work_item_scope = "advise"
"""


def write_config(root: str, tenants: int) -> None:
    os.makedirs(os.path.join(root, ".bobbin"), exist_ok=True)
    with open(os.path.join(root, ".bobbin", "config.toml"), "w") as fh:
        fh.write(CONFIG)
        for i in range(tenants):
            fh.write(f'\n[yupana.policy.scopes.polecat-{i}]\nallow_paths = ["src/**", "tests/**"]\n'
                     f'deny_paths = ["src/config.rs"]\nmax_impacted_symbols = 25\n')
        for i in range(20):
            fh.write(f'\n[[yupana.policy.tripwires]]\nname = "wire-{i}"\npaths = ["infra/z{i}/**"]\neffect = "warn"\n')


def wall(argv: list[str], env: dict, runs: int) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(argv, env=env, check=True)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        env = {k: v for k, v in os.environ.items() if not k.startswith("YUPANA_")}
        env.update(HOME=os.path.join(tmp, "home"), XDG_STATE_HOME=os.path.join(tmp, "state"))
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        os.environ.update(env)
        root = os.path.join(tmp, "repo")
        write_config(root, tenants=20)
        from yupana import settings

        t0 = time.perf_counter()
        settings.load(root)
        miss = time.perf_counter() - t0
        hits = []
        for _ in range(args.runs * 10):
            t0 = time.perf_counter()
            settings.load(root)
            hits.append(time.perf_counter() - t0)
        code = f"from yupana import settings; settings.load({root!r})"
        rounds = [(wall([sys.executable, "-c", "pass"], env, 1), wall([sys.executable, "-c", code], env, 1))
                  for _ in range(args.runs)]
        base = statistics.median(r[0] for r in rounds)
        proc = statistics.median(r[1] for r in rounds)
    print(f"python: {sys.executable}, runs: {args.runs}, config: 20 tenant scopes + 20 tripwires")
    print(f"  snapshot hit, in process   {statistics.median(hits) * 1e3:7.3f} ms")
    print(f"  whole process              {proc * 1e3:7.1f} ms  /  -c pass {base * 1e3:.1f} ms  =  {proc / base:.2f}x")
    print(f"  miss (resolve once, in process, tomllib import included)  {miss * 1e3:7.1f} ms")


if __name__ == "__main__":
    main()
