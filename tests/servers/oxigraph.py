"""The real Oxigraph SPARQL server (PyPI ``oxigraph``), started from the venv's bin dir.

Data is loaded with ``oxigraph load`` into a fresh on-disk location before serving (the
default graph, or named graphs), then ``oxigraph serve`` listens on a free loopback port.
The SPARQL query URL is ``<base>/query``, updates go to ``<base>/update``.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request


def binary() -> str | None:
    """``oxigraph`` beside the running interpreter (the venv's bin), else on PATH."""
    here = os.path.join(os.path.dirname(sys.executable), "oxigraph")
    if os.access(here, os.X_OK):
        return here
    return shutil.which("oxigraph")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def update_url(query_url: str) -> str:
    """The update URL of the server whose query URL is given."""
    return query_url.rsplit("/query", 1)[0] + "/update"


class OxigraphServer:
    def __init__(self, location: str, files: list[str] = (), graphs: dict[str, list[str]] | None = None) -> None:
        self.location = location
        self.files = list(files)
        self.graphs = dict(graphs or {})
        self.base = ""
        self._proc: subprocess.Popen | None = None
        self._log = os.path.join(location + ".log")

    @property
    def url(self) -> str:
        return self.base + "/query"

    @property
    def update_url(self) -> str:
        return self.base + "/update"

    def start(self, timeout: float = 30.0) -> "OxigraphServer":
        exe = binary()
        if exe is None:
            raise RuntimeError("the oxigraph server binary is not installed (pip install oxigraph)")
        os.makedirs(self.location, exist_ok=True)
        loads = [(None, self.files)] + list(self.graphs.items())
        for graph, files in loads:
            if not files:
                continue
            cmd = [exe, "load", "--location", self.location, "--file", *[os.path.abspath(f) for f in files]]
            if graph:
                cmd += ["--graph", graph]
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
            if done.returncode != 0:
                raise RuntimeError(f"oxigraph load failed: {done.stderr.strip()}")
        for _ in range(3):  # a free port can be taken between probe and bind: retry
            port = free_port()
            with open(self._log, "ab") as log:
                self._proc = subprocess.Popen([exe, "serve", "--location", self.location, "--bind", f"127.0.0.1:{port}"],
                                              stdout=log, stderr=subprocess.STDOUT)
            self.base = f"http://127.0.0.1:{port}"
            if self._wait_ready(timeout):
                return self
            self.stop()
        raise RuntimeError(f"oxigraph serve did not start; see {self._log}")

    def _wait_ready(self, timeout: float) -> bool:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self._proc.poll() is not None:
                return False
            try:
                with urllib.request.urlopen(self.base + "/query?query=ASK%7B%7D", timeout=1) as resp:
                    if resp.status == 200:
                        return True
            except urllib.error.HTTPError:
                return True  # it answers HTTP: ready
            except OSError:
                time.sleep(0.05)
        return False

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)
