"""A plain static file server that also honours ETag / If-None-Match (as object stores and CDNs do).

Python's ``http.server`` answers ``If-Modified-Since`` only; this subclass adds a strong ETag
(SHA-256 of the file) and a 304 for a matching ``If-None-Match``, and counts requests and
bytes served (``.requests``, ``.bytes_sent``, ``.statuses``). Loopback, a free port.
"""

from __future__ import annotations

import hashlib
import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer


class StaticServer:
    def __init__(self, directory: str) -> None:
        self.directory = directory
        self.requests = 0
        self.bytes_sent = 0
        self.statuses: list[int] = []
        self.lock = threading.Lock()
        self.httpd: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def start(self) -> "StaticServer":
        owner = self

        class Handler(SimpleHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                path = self.translate_path(self.path)
                try:
                    with open(path, "rb") as fh:
                        data = fh.read()
                except OSError:
                    owner._count(404, 0)
                    self.send_error(404)
                    return
                etag = '"' + hashlib.sha256(data).hexdigest()[:32] + '"'
                if self.headers.get("If-None-Match") == etag:
                    owner._count(304, 0)
                    self.send_response(304)
                    self.send_header("ETag", etag)
                    self.end_headers()
                    return
                owner._count(200, len(data))
                self.send_response(200)
                self.send_header("Content-Type", "application/octet-stream")
                self.send_header("Content-Length", str(len(data)))
                self.send_header("ETag", etag)
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), partial(Handler, directory=self.directory))
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def _count(self, status: int, size: int) -> None:
        with self.lock:
            self.requests += 1
            self.bytes_sent += size
            self.statuses.append(status)

    def stop(self) -> None:
        if self.httpd:
            self.httpd.shutdown()
            self.httpd.server_close()
