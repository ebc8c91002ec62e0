"""What the opt-in input capture (issue 24 §2: ``[yupana.metrics] record_inputs``) costs a hook.

    .venv/bin/python benchmarks/input_capture.py [--runs N] [--steps N]

The pre-edit benchmark's project (500 text rules, 25 governed and 25 local tripwires, a scope;
warm cache; enforce) twice: ``record_inputs`` off, and ``masked``. Two measurements:

* the whole hook, ``yupana hook pre-edit`` as a fresh process on the same ordinary edit, the two
  configurations interleaved so the machine's load falls on both alike: the median of each;
* the capture step alone, in process: a real pre-edit run on that edit, then its
  :meth:`~yupana.hooks.runtime.HookRuntime.capture_inputs` (entry, masking, redaction, the 0600
  append) timed ``--steps`` times: its median — the goal is under 1 ms.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pre_edit  # the pre-edit benchmark's catalogue, setup and timer


def main(argv: list[str]) -> int:
    runs = int(argv[argv.index("--runs") + 1]) if "--runs" in argv else 21
    steps = int(argv[argv.index("--steps") + 1]) if "--steps" in argv else 2001
    script = os.path.join(os.path.dirname(sys.executable), "yupana")
    with tempfile.TemporaryDirectory(prefix="yupana-bench-") as top:
        env, payloads = pre_edit.setup(top)
        off = payloads["enforce"]
        root = os.path.join(top, "enforce")
        capture_root = os.path.join(top, "capture")
        os.makedirs(os.path.join(capture_root, ".bobbin"))
        os.symlink(os.path.join(root, ".git"), os.path.join(capture_root, ".git"))
        with open(os.path.join(capture_root, ".bobbin", "config.toml"), "w") as fh:
            fh.write(pre_edit.config("enforce") + '\n[yupana.metrics]\nrecord_inputs = "masked"\n')
        on = off.replace(root.encode(), capture_root.encode())
        argv_ = [sys.executable, script, "hook", "pre-edit"]
        whole = pre_edit.median_ms([(argv_, off), (argv_, on)], runs, env)
        capture = os.path.join(top, "state", "yupana", "inputs.jsonl")
        captured = sum(1 for _ in open(capture)) if os.path.exists(capture) else 0
        step = _capture_step(env, on, steps)
        print(f"python: {sys.executable}, runs: {runs}, enforce, 500 text rules, 50 tripwires, a scope, ordinary edit")
        print(f"  whole hook      off {whole[0]:.1f} ms  masked {whole[1]:.1f} ms  (difference {whole[1] - whole[0]:+.1f} ms;"
              f" {captured} inputs captured)")
        print(f"  capture step    median {step * 1000:.3f} ms over {steps} appends (goal: < 1 ms)")
    return 0


def _capture_step(env: dict, raw: bytes, steps: int) -> float:
    """Median seconds of one capture_inputs() after a real in-process pre-edit run on ``raw``."""
    import json

    os.environ.clear()
    os.environ.update(env)
    os.chdir(json.loads(raw)["cwd"])
    from yupana.hooks import registry
    from yupana.hooks.registry import HookArgs

    hook = registry.get("pre-edit").runtime()(HookArgs("pre-edit"), time.monotonic())
    hook.answer(raw)  # decides, records, and captures once
    assert (hook.cfg.get("metrics") or {}).get("record_inputs") == "masked", "the capture is not configured"
    samples = []
    for _ in range(steps):
        started = time.perf_counter()
        hook.capture_inputs()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
