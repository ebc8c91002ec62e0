"""``yupana report`` over a large spool: wall time and peak memory.

    .venv/bin/python benchmarks/report_spool.py [--calls N] [--hosts H]

Writes H hosts' spools (``<dir>/host-<i>/metrics.jsonl``) holding N pre-edit calls (advise, one
text rule each, every third a would-deny, every tenth failing open on ``deadline``) and N pre-bash
calls (each with an ``action`` record) in all, then runs ``yupana report --spool <dir> --json``
as a fresh process and reports its wall time and peak RSS (``wait4``; stderr is read after stdout, so keep it short). Calls are counted as they
complete, so memory should not grow with the spools (target: peak RSS flat in N).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time


def write(top: str, calls: int, hosts: int) -> int:
    now = int(time.time())
    size = 0
    for h in range(hosts):
        path = os.path.join(top, f"host-{h}", "metrics.jsonl")
        os.makedirs(os.path.dirname(path))
        with open(path, "w") as fh:
            for i in range(h, calls, hosts):
                session = f"s{i % 500}"
                if i % 10 == 0:
                    fh.write(json.dumps({"kind": "fail_open", "ts": now, "fail_kind": "deadline", "hook": "pre-edit",
                                         "session": session}) + "\n")
                would = i % 3 == 0
                fh.write(json.dumps({
                    "kind": "guard", "ts": now, "result": "notify", "mode": "advise", "session": session,
                    "client": "claude-code", "project": "0123456789abcdef", "digest": "sha256:bench", "would_deny": would,
                    "rule": f"rule_{i % 40}", "constraints": [{"id": f"rule_{i % 40}", "plane": "text",
                                                               "outcome": "unsatisfied", "response": "warned",
                                                               "would_deny": would}]}) + "\n")
                fh.write(json.dumps({"kind": "pre_bash_invoked", "ts": now, "session": session, "client": "codex",
                                     "project": "0123456789abcdef", "parsed": True}) + "\n")
                fh.write(json.dumps({"kind": "action", "ts": now, "target_class": "host", "session": session}) + "\n")
        size += os.path.getsize(path)
    return size


def main(argv: list[str]) -> int:
    calls = int(argv[argv.index("--calls") + 1]) if "--calls" in argv else 100_000
    hosts = int(argv[argv.index("--hosts") + 1]) if "--hosts" in argv else 4
    with tempfile.TemporaryDirectory(prefix="yupana-report-") as top:
        size = write(top, calls, hosts)
        started = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "yupana", "report", "--spool", top, "--json", "--since", "all"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        out, err = proc.stdout.read(), proc.stderr.read()  # type: ignore[union-attr]
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(err.decode())
        doc = json.loads(out)
        rss = f"{usage.ru_maxrss / 1024:.0f} MiB"
        print(f"{hosts} hosts, {size / 2**20:.0f} MiB of spool, {doc['totals']['invocations']} calls "
              f"({doc['totals']['would_deny']} would-deny): {wall:.2f} s")
        print(f"  peak RSS of the report: {rss}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
