"""A real Virtuoso (Debian ``virtuoso-opensource``): its own database directory, its own
virtuoso.ini, free loopback ports, stopped by its process id.

The ini written here is the packaged one's relevant part: stock settings unless the
caller passes ``max_rows`` (``[SPARQL] ResultSetMaxRows``; the package default is 10 000).
Data is bulk-loaded with ``DB.DBA.TTLP_MT`` through ``isql`` into a named graph; the
SPARQL endpoint (``<base>/sparql``) answers over every graph when no
``default-graph-uri`` is sent.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request

GRAPH = "http://yupana.test/catalogue"
STOCK_MAX_ROWS = 10000


def binary() -> str | None:
    return shutil.which("virtuoso-t")


def isql_binary() -> str | None:
    return shutil.which("isql-vt") or shutil.which("isql")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


INI = """[Database]
DatabaseFile = {db}/virtuoso.db
ErrorLogFile = {db}/virtuoso.log
LockFile = {db}/virtuoso.lck
TransactionFile = {db}/virtuoso.trx
xa_persistent_file = {db}/virtuoso.pxa
ErrorLogLevel = 7
FileExtend = 200
Striping = 0
TempStorage = TempDatabase

[TempDatabase]
DatabaseFile = {db}/virtuoso-temp.db
TransactionFile = {db}/virtuoso-temp.trx
Striping = 0

[Parameters]
ServerPort = 127.0.0.1:{sql_port}
DisableUnixSocket = 1
MaxClientConnections = 10
CheckpointInterval = 60
CaseMode = 2
DirsAllowed = ., {db}, {data}
NumberOfBuffers = 10000
MaxDirtyBuffers = 6000
ThreadsPerQuery = 2

[HTTPServer]
ServerPort = 127.0.0.1:{http_port}
ServerRoot = {db}
MaxClientConnections = 10
ServerThreads = 10
Charset = UTF-8
EnabledGzipContent = 0

[SPARQL]
{sparql}
"""


class VirtuosoServer:
    def __init__(self, directory: str, *, max_rows: int | None = None) -> None:
        self.directory = directory
        self.db = os.path.join(directory, "db")
        self.data = os.path.join(directory, "data")
        self.max_rows = max_rows
        self.base = ""
        self.sql_port = 0
        self._proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return self.base + "/sparql"

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    def start(self, timeout: float = 60.0) -> "VirtuosoServer":
        exe = binary()
        if exe is None or isql_binary() is None:
            raise RuntimeError("Virtuoso is not installed (apt-get install virtuoso-opensource)")
        os.makedirs(self.db, exist_ok=True)
        os.makedirs(self.data, exist_ok=True)
        # Stock [SPARQL] settings, as the Debian package ships them, unless a cap is asked for.
        sparql = [f"ResultSetMaxRows = {self.max_rows if self.max_rows is not None else STOCK_MAX_ROWS}",
                  "MaxQueryCostEstimationTime = 400", "MaxQueryExecutionTime = 60"]
        for _ in range(3):
            self.sql_port, http_port = _free_port(), _free_port()
            ini = os.path.join(self.directory, "virtuoso.ini")
            with open(ini, "w") as fh:
                fh.write(INI.format(db=self.db, data=self.data, sql_port=self.sql_port, http_port=http_port,
                                    sparql="\n".join(sparql)))
            log = open(os.path.join(self.directory, "server.log"), "ab")
            self._proc = subprocess.Popen([exe, "+foreground", "+configfile", ini], cwd=self.db,
                                          stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
            log.close()
            self.base = f"http://127.0.0.1:{http_port}"
            if self._wait_ready(timeout):
                return self
            self.stop()
        raise RuntimeError(f"virtuoso-t did not start; see {self.directory}/server.log and {self.db}/virtuoso.log")

    def _wait_ready(self, timeout: float) -> bool:
        end = time.monotonic() + timeout
        query = urllib.parse.urlencode({"query": "ASK {}"})
        while time.monotonic() < end:
            if self._proc.poll() is not None:
                return False
            try:
                with urllib.request.urlopen(f"{self.url}?{query}", timeout=2) as resp:
                    if resp.status == 200:
                        return True
            except urllib.error.HTTPError:
                time.sleep(0.2)
            except OSError:
                time.sleep(0.2)
        return False

    def isql(self, statements: str, timeout: float = 120.0) -> str:
        done = subprocess.run([isql_binary(), f"127.0.0.1:{self.sql_port}", "dba", "dba", "VERBOSE=OFF",
                               "BANNER=OFF", "PROMPT=OFF", "ECHO=OFF", "ERRORS=STDOUT"],
                              input=statements, capture_output=True, text=True, timeout=timeout)
        out = done.stdout + done.stderr
        if done.returncode != 0 or "*** Error" in out:
            raise RuntimeError(f"isql failed: {out.strip()[:2000]}")
        return out

    def load_turtle(self, path: str, graph: str = GRAPH) -> None:
        """Bulk-load a Turtle file into ``graph`` (TTLP_MT reads it server-side)."""
        local = os.path.join(self.data, f"load-{time.monotonic_ns()}.ttl")
        shutil.copyfile(path, local)
        self.isql(f"DB.DBA.TTLP_MT(file_to_string_output('{local}'), '', '{graph}', 0);\ncheckpoint;\n")

    def clear(self, graph: str = GRAPH) -> None:
        self.isql(f"SPARQL CLEAR GRAPH <{graph}>;\n")

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)
