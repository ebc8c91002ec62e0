"""The real node_exporter (Debian ``prometheus-node-exporter``) with only its textfile collector,
on a free loopback port: what a fleet's monitoring actually runs to read ``yupana metrics``."""

from __future__ import annotations

import shutil
import subprocess
import time
import urllib.error
import urllib.request

from servers.oxigraph import free_port


def binary() -> str | None:
    return shutil.which("prometheus-node-exporter") or shutil.which("node_exporter")


class NodeExporter:
    def __init__(self, textfile_dir: str) -> None:
        self.textfile_dir = textfile_dir
        self.port = free_port()
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/metrics"

    def start(self) -> "NodeExporter":
        exe = binary()
        assert exe, "no node_exporter binary"
        self.proc = subprocess.Popen([exe, "--collector.disable-defaults", "--collector.textfile",
                                      f"--collector.textfile.directory={self.textfile_dir}",
                                      f"--web.listen-address=127.0.0.1:{self.port}"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            try:
                self.scrape()
                return self
            except (urllib.error.URLError, ConnectionError):
                time.sleep(0.1)
        self.stop()
        raise RuntimeError("node_exporter did not start")

    def scrape(self) -> str:
        with urllib.request.urlopen(self.url, timeout=5) as resp:
            return resp.read().decode("utf-8")

    def stop(self) -> str:
        """Stop it; its log (stderr), which names any textfile it could not parse."""
        if self.proc is None:
            return ""
        self.proc.terminate()
        try:
            _, err = self.proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            _, err = self.proc.communicate()
        self.proc = None
        return err.decode("utf-8", "replace")
