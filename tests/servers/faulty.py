"""A real socket server that misbehaves on purpose, one way per instance.

Behaviours (what a store, a proxy or a broken network does to a client):

* ``refuse``: nothing listens on the port (connection refused);
* ``never-answer``: accepts, reads the request, never answers;
* ``slow-drip``: sends a 200 with headers, then the body a byte at a time (``drip_secs``
  apart), far slower than any deadline; every read gets a byte before it times out;
* ``slow-headers``: the status line and headers themselves, a byte at a time;
* ``http-500``: ``500 Internal Server Error`` with a plain-text body;
* ``invalid-json``: a 200 ``application/sparql-results+json`` body that is not JSON;
* ``truncated``: a 200 announcing 4096 bytes, sending 120 of them, then closing;
* ``html``: a 200 ``text/html`` login page;
* ``wrong-shape``: a 200 JSON object that is not a SPARQL result;
* ``redirect``: a 302 to ``https://elsewhere.example/sparql`` (a moved endpoint);
* ``deep-json``: a 200 ``application/sparql-results+json`` body of 200,000 nested arrays (valid
  JSON, deeper than any parser's recursion limit);
* ``garbage``: on connect, before reading anything, a line of bytes that is neither HTTP nor
  TLS, then close (what an ``https://`` client meets at a port that speaks something else).

Paths are ignored, so the same URL serves as a SPARQL query URL or a quipu base URL.
"""

from __future__ import annotations

import socket
import threading

BEHAVIOURS = ("refuse", "never-answer", "slow-drip", "slow-headers", "http-500", "invalid-json", "truncated",
              "html", "wrong-shape", "redirect", "garbage", "deep-json")

_RESULTS = (b'{"head": {"vars": ["s"]}, "results": {"bindings": [' +
            b', '.join(b'{"s": {"type": "uri", "value": "urn:example:%d"}}' % i for i in range(200)) + b']}}')


class FaultyServer:
    def __init__(self, behaviour: str, *, drip_secs: float = 0.2) -> None:
        if behaviour not in BEHAVIOURS:
            raise ValueError(f"unknown behaviour {behaviour!r}; one of {', '.join(BEHAVIOURS)}")
        self.behaviour = behaviour
        self.drip_secs = drip_secs
        self.connections = 0
        #: Connections whose client hung up on a request never answered (``never-answer``).
        self.hung_up = 0
        self._stop = threading.Event()
        self._listener: socket.socket | None = None
        self._clients: list[socket.socket] = []
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> "FaultyServer":
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        if self.behaviour == "refuse":
            sock.close()  # the port was free a moment ago and nothing listens on it now
            return self
        sock.listen(16)
        sock.settimeout(0.1)
        self._listener = sock
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._listener is not None:
            self._listener.close()
        for client in list(self._clients):
            try:
                client.close()
            except OSError:
                pass

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                client, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.connections += 1
            self._clients.append(client)
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        try:
            if self.behaviour != "garbage":
                _read_request(client)
            getattr(self, "_" + self.behaviour.replace("-", "_"))(client)
        except OSError:
            pass
        finally:
            if self.behaviour not in ("never-answer",):
                try:
                    client.close()
                except OSError:
                    pass

    # -- behaviours ------------------------------------------------------------------------

    def _garbage(self, client: socket.socket) -> None:
        client.sendall(b"SSH-2.0-not-a-store \x00\x01\x02 garbage\r\n" * 8)

    def _never_answer(self, client: socket.socket) -> None:
        # Watch for the client hanging up (it gave up): counted in ``hung_up``.
        client.settimeout(0.05)
        while not self._stop.is_set():
            try:
                if not client.recv(4096):
                    self.hung_up += 1
                    return
            except TimeoutError:
                continue

    def _slow_drip(self, client: socket.socket) -> None:
        client.sendall(_head(200, "application/sparql-results+json", len(_RESULTS)))
        self._drip(client, _RESULTS)

    def _slow_headers(self, client: socket.socket) -> None:
        self._drip(client, _head(200, "application/sparql-results+json", len(_RESULTS)) + _RESULTS)

    def _http_500(self, client: socket.socket) -> None:
        body = b"Internal Server Error: the database is locked"
        client.sendall(_head(500, "text/plain", len(body)) + body)

    def _invalid_json(self, client: socket.socket) -> None:
        body = b'{"head": {"vars": ["s"]}, "results": {"bindings": [{"s": {"type": "uri", "value": "urn:x"}},]}}'
        client.sendall(_head(200, "application/sparql-results+json", len(body)) + body)

    def _deep_json(self, client: socket.socket) -> None:
        body = b"[" * 200_000 + b"]" * 200_000
        client.sendall(_head(200, "application/sparql-results+json", len(body)) + body)

    def _truncated(self, client: socket.socket) -> None:
        client.sendall(_head(200, "application/sparql-results+json", 4096) + _RESULTS[:120])
        client.shutdown(socket.SHUT_RDWR)

    def _html(self, client: socket.socket) -> None:
        body = b"<!doctype html><html><body><form action=/login>Please sign in</form></body></html>"
        client.sendall(_head(200, "text/html; charset=utf-8", len(body)) + body)

    def _wrong_shape(self, client: socket.socket) -> None:
        body = b'{"status": "ok", "version": "1.2.3"}'
        client.sendall(_head(200, "application/json", len(body)) + body)

    def _redirect(self, client: socket.socket) -> None:
        client.sendall(b"HTTP/1.1 302 Found\r\nLocation: https://elsewhere.example/sparql\r\n"
                       b"Content-Length: 0\r\nConnection: close\r\n\r\n")

    def _drip(self, client: socket.socket, data: bytes) -> None:
        for i in range(len(data)):
            if self._stop.wait(self.drip_secs):
                return
            client.sendall(data[i:i + 1])


def _head(status: int, content_type: str, length: int) -> bytes:
    reason = {200: "OK", 500: "Internal Server Error"}[status]
    return (f"HTTP/1.1 {status} {reason}\r\nContent-Type: {content_type}\r\nContent-Length: {length}\r\n"
            "Connection: close\r\n\r\n").encode()


def _read_request(client: socket.socket) -> None:
    """Read the request head and its Content-Length body, so the client is done sending."""
    client.settimeout(5)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = client.recv(65536)
        if not chunk:
            return
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip() or 0)
    while len(rest) < length:
        chunk = client.recv(65536)
        if not chunk:
            return
        rest += chunk
    client.settimeout(None)
