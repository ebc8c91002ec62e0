"""Run one real client against a scripted fake model, optionally inside a private network.

``python runner.py SPEC.json`` (under ``unshare -n`` when the machine allows it: then only
loopback exists, brought up here, and the fake model server lives in the same namespace).

SPEC keys: ``argv`` (the client command), ``cwd``, ``env``, ``turns`` (the script),
``log`` (the request log path), ``files`` ({path: text} written once the port is known;
``{PORT}`` in them, in ``env`` values and in ``argv`` is replaced), ``timeout`` (seconds),
``result`` (where the JSON result goes: rc, stdout, stderr, timed_out, seconds), ``netns``
(bring ``lo`` up first).

The client runs in its own session; on timeout its whole process group is killed by id.
Standard library only.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import fake_models


def _fill(value: str, port: int) -> str:
    return value.replace("{PORT}", str(port))


def main(spec_path: str) -> int:
    with open(spec_path, encoding="utf-8") as fh:
        spec = json.load(fh)
    if spec.get("netns"):
        subprocess.run(["ip", "link", "set", "lo", "up"], check=True, timeout=10)
    server = fake_models.serve(spec["turns"], spec["log"])
    port = server.server_port
    result: dict = {"port": port}
    try:
        for path, text in (spec.get("files") or {}).items():
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(_fill(text, port))
        env = {k: _fill(v, port) for k, v in spec["env"].items()}
        argv = [_fill(a, port) for a in spec["argv"]]
        started = time.monotonic()
        proc = subprocess.Popen(argv, cwd=spec["cwd"], env=env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        try:
            out, err = proc.communicate(timeout=spec.get("timeout", 60))
            result["timed_out"] = False
        except subprocess.TimeoutExpired:
            _kill_group(proc.pid)
            out, err = proc.communicate(timeout=10)
            result["timed_out"] = True
        _kill_group(proc.pid)  # whatever the client left running in its group (hook children)
        result.update(rc=proc.returncode, stdout=out.decode("utf-8", "replace"),
                      stderr=err.decode("utf-8", "replace"), seconds=round(time.monotonic() - started, 2))
    finally:
        server.shutdown()
        server.server_close()
        with open(spec["result"], "w", encoding="utf-8") as fh:
            json.dump(result, fh)
    return 0


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
