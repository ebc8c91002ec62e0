"""A SPARQL 1.1 Protocol server behind credentials (like Fuseki or GraphDB with security on).

Real HTTP over pyoxigraph: form-encoded ``POST`` of ``query=`` (with ``default-graph-uri``)
answered in W3C SPARQL JSON, ``update=`` applied. It demands ``Authorization`` equal to
``Basic base64(user:password)`` or ``Bearer <token>``, answering 401 otherwise, and logs
every request's headers and form fields in :attr:`GuardedServer.requests`.
"""

from __future__ import annotations

import base64
import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs

import pyoxigraph

from servers.quipu_server import _w3c


class GuardedServer:
    def __init__(self, files: list[str] = (), *, basic: tuple[str, str] | None = None,
                 bearer: str | None = None) -> None:
        self.store = pyoxigraph.Store()
        for path in files:
            self.store.load(path=str(path), format=pyoxigraph.RdfFormat.TURTLE)
        self.expected = ("Basic " + base64.b64encode(f"{basic[0]}:{basic[1]}".encode()).decode()) if basic \
            else (f"Bearer {bearer}" if bearer else None)
        self.requests: list[dict] = []
        self._httpd: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/sparql"

    def start(self) -> "GuardedServer":
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def setup(self) -> None:
                super().setup()
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                form = {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode()).items()}
                server.requests.append({"headers": {k.lower(): v for k, v in self.headers.items()}, "form": form})
                if server.expected and self.headers.get("authorization") != server.expected:
                    return self._send(401, "text/plain", b"Unauthorized", {"WWW-Authenticate": 'Basic realm="sparql"'})
                if "update" in form:
                    self.server_store.update(form["update"])
                    return self._send(204, "text/plain", b"")
                kwargs = {}
                if "default-graph-uri" in form:
                    kwargs["default_graph"] = pyoxigraph.NamedNode(form["default-graph-uri"])
                try:
                    result = self.server_store.query(form.get("query", ""), **kwargs)
                except SyntaxError as exc:
                    return self._send(400, "text/plain", str(exc).encode())
                if isinstance(result, pyoxigraph.QueryBoolean):
                    doc = {"head": {}, "boolean": bool(result)}
                else:
                    names = [v.value for v in result.variables]
                    doc = {"head": {"vars": names},
                           "results": {"bindings": [{n: _w3c(s[n]) for n in names if s[n] is not None} for s in result]}}
                self._send(200, "application/sparql-results+json", json.dumps(doc).encode())

            @property
            def server_store(self):
                return server.store

            def _send(self, status: int, ctype: str, body: bytes, headers: dict | None = None) -> None:
                self.send_response(status)
                self.send_header("content-type", ctype)
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
