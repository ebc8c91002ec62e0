"""Parse cost of typical hook payloads, and what importing the reader adds to a process.

    .venv/bin/python benchmarks/payload_parse.py [--runs N]

Two measurements, both in this run:

* in-process: median microseconds of ``payload.parse`` (and of ``proposed_buffer`` where
  it reads a real file) per payload kind;
* import: the self times ``-X importtime`` reports for the modules the reader adds;
* whole process: median wall time of ``python -c "import yupana.edit.payload; parse(…)"``
  against ``python -c pass`` on the same interpreter, as a ratio (bytecode is written first
  so compilation is not measured).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

from yupana.edit import payload  # noqa: E402


def _payload(tool: str, tool_input: dict, cwd: str) -> bytes:
    return json.dumps({"session_id": "bench", "transcript_path": "/tmp/t.jsonl", "cwd": cwd,
                       "permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": tool,
                       "tool_input": tool_input, "tool_use_id": "toolu_1"}).encode()


def _cases(root: str) -> dict[str, bytes]:
    src = os.path.join(root, "src")
    os.makedirs(src, exist_ok=True)
    body = "".join(f"fn f{i}() -> u32 {{ {i} }}\n" for i in range(400))
    with open(os.path.join(src, "lib.rs"), "w") as fh:
        fh.write(body)
    lib = os.path.join(src, "lib.rs")
    patch = ("*** Begin Patch\n"
             f"*** Update File: {lib}\n@@\n fn f10() -> u32 {{ 10 }}\n-fn f11() -> u32 {{ 11 }}\n+fn f11() -> u32 {{ 111 }}\n"
             "@@\n fn f200() -> u32 { 200 }\n-fn f201() -> u32 { 201 }\n+fn f201() -> u32 { 2010 }\n"
             f"*** Add File: {src}/new.rs\n" + "".join(f"+pub fn g{i}() {{}}\n" for i in range(40))
             + "*** End Patch\n")
    return {
        "Edit (small)": _payload("Edit", {"file_path": lib, "old_string": "fn f7() -> u32 { 7 }",
                                          "new_string": "fn f7() -> u32 { 70 }"}, root),
        "Write (10 KB)": _payload("Write", {"file_path": f"{src}/gen.rs", "content": body[:10_000]}, root),
        "MultiEdit (5 edits)": _payload("MultiEdit", {"file_path": lib, "edits": [
            {"old_string": f"fn f{i}() -> u32 {{ {i} }}", "new_string": f"fn f{i}() -> u32 {{ {i * 2} }}"}
            for i in range(300, 305)]}, root),
        "apply_patch (2 files)": _payload("apply_patch", {"command": patch}, root),
        "Bash": _payload("Bash", {"command": "cargo test --workspace", "description": "run tests"}, root),
        "Write (10 MB)": _payload("Write", {"file_path": f"{src}/big.txt", "content": ("y" * 63 + "\n") * 163_840},
                                  root),
    }


def _median_us(fn, runs: int) -> float:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples) * 1e6


def _process_ms(commands: list[list[str]], runs: int, env: dict) -> list[float]:
    """Median wall ms of each command, runs interleaved so machine load hits all alike."""
    samples: list[list[float]] = [[] for _ in commands]
    for _ in range(runs):
        for i, args in enumerate(commands):
            started = time.perf_counter()
            subprocess.run(args, check=True, env=env, stdout=subprocess.DEVNULL)
            samples[i].append(time.perf_counter() - started)
    return [statistics.median(s) * 1e3 for s in samples]


def main(argv: list[str]) -> int:
    runs = int(argv[argv.index("--runs") + 1]) if "--runs" in argv else 200
    with tempfile.TemporaryDirectory() as root:
        cases = _cases(root)
        print(f"{'payload':<24}{'bytes':>10}{'parse µs':>12}{'+ buffer µs':>14}")
        for name, raw in cases.items():
            n = max(3, runs // 20) if len(raw) > 1_000_000 else runs
            parse_us = _median_us(lambda raw=raw: payload.parse(raw), n)

            def parse_and_build(raw: bytes = raw) -> None:
                inv = payload.parse(raw)
                for edit in inv.edits:
                    payload.proposed_buffer(edit)

            inv = payload.parse(raw)
            buffer_us = _median_us(parse_and_build, n) if inv.edits and name != "Write (10 MB)" else float("nan")
            print(f"{name:<24}{len(raw):>10}{parse_us:>12.1f}{buffer_us:>14.1f}")

        env = dict(os.environ)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        small = cases["apply_patch (2 files)"].decode()
        code = ("import yupana.edit.payload as p; inv = p.parse(" + repr(small) + ".encode()); "
                "[p.proposed_buffer(e) for e in inv.edits]")
        subprocess.run([sys.executable, "-c", code], check=True, env=env)  # write bytecode
        proc_runs = max(5, runs // 4)
        base, with_reader = _process_ms([[sys.executable, "-c", "pass"], [sys.executable, "-c", code]],
                                        proc_runs, env)
        imports = []
        for _ in range(proc_runs):
            err = subprocess.run([sys.executable, "-X", "importtime", "-c", "import yupana.edit.payload"],
                                 check=True, env=env, capture_output=True, text=True).stderr
            added = 0
            for line in err.splitlines():
                parts = [x.strip() for x in line.split("|")]
                if len(parts) == 3 and parts[2].lstrip() in ("_json", "yupana.fastjson", "yupana.edit.apply_patch",
                                                              "yupana.edit.payload", "yupana.hooks"):
                    added += int(parts[0].split(":")[1])
            imports.append(added)
        print(f"\nimport (self times of yupana.hooks, fastjson, _json, payload; -X importtime, median of "
              f"{proc_runs}): {statistics.median(imports) / 1000:.2f} ms")
        print(f"whole process, median of {proc_runs}: python -c pass {base:.1f} ms; "
              f"import + parse + rebuild an apply_patch payload {with_reader:.1f} ms "
              f"(ratio {with_reader / base:.2f}x, +{with_reader - base:.1f} ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
