"""Store load from a fleet: H hosts refreshing against (a) Oxigraph directly, (b) a signed bundle.

Each simulated host has its own project config and state directory and runs the real detached
refresh worker (``python -m yupana refresh-worker --force``), one process per host per interval
(a few at a time: the machine is small). A counting HTTP proxy in front of a real Oxigraph
server counts what reaches the store; the bundle is served by a counting static server
(tests/servers/static_etag.py: ETag / If-None-Match), rebuilt once per interval by one
publisher (``yupana bundle build``) through the same proxy.

    .venv/bin/python benchmarks/fleet.py [--hosts 1,10,50] [--intervals 2] [--rules 50] [--jobs 4]

Prints one row per (mode, hosts): store requests and bytes per interval, bundle-server
requests and bytes per interval, and the hosts whose refresh failed.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE / "tests"))

from catalogue_kit import write_catalogue  # noqa: E402
from servers import oxigraph  # noqa: E402
from servers.static_etag import StaticServer  # noqa: E402


class CountingProxy:
    """A TCP proxy to the store that counts HTTP requests (client → store) and bytes (store → client)."""

    def __init__(self, target_port: int) -> None:
        self.target = ("127.0.0.1", target_port)
        self.requests = 0
        self.bytes = 0
        self.lock = threading.Lock()
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def port(self) -> int:
        return self.sock.getsockname()[1]

    def reset(self) -> tuple[int, int]:
        with self.lock:
            out = (self.requests, self.bytes)
            self.requests = self.bytes = 0
        return out

    def _accept(self) -> None:
        while True:
            client, _ = self.sock.accept()
            upstream = socket.create_connection(self.target)
            threading.Thread(target=self._pipe, args=(client, upstream, True), daemon=True).start()
            threading.Thread(target=self._pipe, args=(upstream, client, False), daemon=True).start()

    def _pipe(self, src: socket.socket, dst: socket.socket, upward: bool) -> None:
        try:
            while data := src.recv(65536):
                with self.lock:
                    if upward:
                        self.requests += data.count(b" HTTP/1.1\r\n")
                    else:
                        self.bytes += len(data)
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass


def configure(root: Path, text: str) -> None:
    (root / ".bobbin").mkdir(parents=True, exist_ok=True)
    (root / ".bobbin" / "config.toml").write_text(text)


def env_for(base: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("YUPANA_", "BOBBIN_", "SHANTY_", "QUIPU_"))}
    for d in ("home", "state", "tmp"):
        (base / d).mkdir(parents=True, exist_ok=True)
    env.update(HOME=str(base / "home"), XDG_STATE_HOME=str(base / "state"), TMPDIR=str(base / "tmp"))
    return env


def yupana(args: list[str], env: dict, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "yupana", *args], env=env, cwd=cwd, capture_output=True, timeout=120)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--hosts", default="1,10,50")
    parser.add_argument("--intervals", type=int, default=2)
    parser.add_argument("--rules", type=int, default=50)
    parser.add_argument("--jobs", type=int, default=4)
    opts = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="yupana-fleet-"))
    cat = write_catalogue(work / "cat", opts.rules)
    store = oxigraph.OxigraphServer(str(work / "db"), [str(cat / "catalogue.ttl")]).start()
    proxy = CountingProxy(int(store.url.split(":")[2].split("/")[0]))
    endpoint = store.url.replace(f":{store.url.split(':')[2].split('/')[0]}/", f":{proxy.port}/")
    srv = work / "srv"
    srv.mkdir()
    static = StaticServer(str(srv)).start()
    pub_env, pub = env_for(work / "pub"), work / "pubproj"
    key = work / "key.pem"
    public = json.loads(yupana(["--json", "bundle", "keygen", "--out", str(key)], pub_env, work).stdout)["public_key"]
    configure(pub, f'[yupana.quipu]\nenabled = true\nendpoint = "{endpoint}"\n'
                   f'[yupana.bundle]\nsigning_key_path = "{key}"\n')
    print(f"store {endpoint} (proxy to {store.url}), {opts.rules} text rules, {opts.intervals} intervals")
    print(f"{'mode':<8} {'hosts':>5} {'store req/int':>13} {'store KB/int':>12} {'bundle req/int':>14} "
          f"{'bundle KB/int':>13} {'failed':>6}")
    try:
        for hosts in [int(h) for h in opts.hosts.split(",")]:
            for mode in ("direct", "bundle"):
                roots = []
                for i in range(hosts):
                    base = work / f"{mode}-{hosts}-{i}"
                    root = base / "proj"
                    extra = (f'[yupana.bundle]\nurl = "{static.url}/rules.bundle"\ntrusted_keys = ["{public}"]\n'
                             if mode == "bundle" else "")
                    configure(root, f'[yupana.quipu]\nenabled = true\nendpoint = "{endpoint}"\n{extra}')
                    roots.append((env_for(base), root))
                proxy.reset()
                static.requests = static.bytes_sent = 0
                failed = 0
                for _ in range(opts.intervals):
                    if mode == "bundle":
                        done = yupana(["bundle", "build", "--out", str(srv / "rules.bundle")], pub_env, pub)
                        assert done.returncode == 0, done.stderr
                    with ThreadPoolExecutor(opts.jobs) as pool:
                        codes = list(pool.map(lambda er: yupana(["refresh-worker", "--force", "--root", str(er[1])],
                                                                er[0], er[1]).returncode, roots))
                    failed += sum(1 for c in codes if c)
                reqs, nbytes = proxy.reset()
                n = opts.intervals
                print(f"{mode:<8} {hosts:>5} {reqs / n:>13.1f} {nbytes / n / 1024:>12.1f} {static.requests / n:>14.1f} "
                      f"{static.bytes_sent / n / 1024:>13.1f} {failed:>6}", flush=True)
    finally:
        static.stop()
        store.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
