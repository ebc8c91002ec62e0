"""Peak RSS of `yupana project` on a bundle host offered a 250 MiB garbage bundle (issue 23 §2).

Three bundles of ``--mib`` MiB on a real loopback static server (``python -m http.server``, a
process of its own: a child forked from a process holding the file would inherit its peak),
each fetched by a fresh ``python -m yupana project --json`` whose peak RSS is read with
``wait4``: random bytes (``garbage``); a well-formed first line and a header naming the
trusted key over random bytes with a bogus 64-byte signature (``forged``: the whole payload
must be read to check the signature); the same header with an unknown key (``unknown-key``).

    .venv/bin/python benchmarks/bundle_memory.py [--mib 250]

To compare with another version, run it with ``PYTHONPATH`` naming that version's source tree.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE / "tests"))

from servers.oxigraph import free_port  # noqa: E402


def write(path: Path, head: bytes, size: int) -> None:
    block = os.urandom(1 << 20)
    with open(path, "wb") as fh:
        fh.write(head)
        left = size - len(head)
        while left > 0:
            fh.write(block[:left])
            left -= len(block)


def peak_rss_mib(args: list[str], env: dict[str, str], cwd: Path) -> tuple[int, str, float]:
    proc = subprocess.Popen([sys.executable, "-m", "yupana", *args], env=env, cwd=cwd,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out = proc.stdout.read() if proc.stdout else b""
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    kind = json.loads(out).get("error_kind") or json.loads(out).get("status")
    return proc.returncode, str(kind), usage.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mib", type=int, default=250)
    args = parser.parse_args()
    from yupana.projection import bundle

    size = args.mib << 20
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        srv = work / "srv"
        srv.mkdir()
        _, raw = bundle.generate_private_pem()
        port = free_port()
        server = subprocess.Popen([sys.executable, "-m", "http.server", "--bind", "127.0.0.1", str(port)], cwd=srv,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(1.0)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("YUPANA_", "BOBBIN_", "SHANTY_", "QUIPU_"))}
        for name in ("home", "state", "tmp"):
            (work / name).mkdir()
        env.update(HOME=str(work / "home"), XDG_STATE_HOME=str(work / "state"), TMPDIR=str(work / "tmp"))
        root = work / "proj"
        (root / ".bobbin").mkdir(parents=True)
        (root / ".bobbin" / "config.toml").write_text(
            f'[yupana.quipu]\nenabled = true\nendpoint = "file:{work / "store"}"\n[yupana.bundle]\n'
            f'url = "http://127.0.0.1:{port}/rules.bundle"\ntrusted_keys = ["{bundle.public_key_text(raw)}"]\n')
        signature = base64.b64encode(bytes(64)).decode()
        for case, key in (("garbage", None), ("forged", bundle.key_id(raw)), ("unknown-key", "ed25519:0123456789abcdef")):
            head = b"" if key is None else bundle.MAGIC + json.dumps(
                {"key_id": key, "signature": signature, "digest": None, "endpoint": None, "confirmed_at": 0}).encode() + b"\n"
            write(srv / "rules.bundle", head, size)
            code, kind, rss = peak_rss_mib(["project", "--json"], env, root)
            print(f"{case:<12} {args.mib} MiB: exit {code} ({kind}), peak RSS {rss:.0f} MiB")
        server.terminate()
        server.wait(5)


if __name__ == "__main__":
    main()
