"""HTTP for the network transports: every request bounded in time, whatever the server does.

Three limits apply to each request, all enforced on every socket operation (not only
between chunks), so neither a silent server nor one that drips a byte at a time can hold
a refresh:

* connecting: ``connect_timeout_secs``;
* the answer, from the moment the connection is ready to the last byte of the body:
  ``request_timeout_secs`` in total (not per read);
* both of the above never past the refresh :class:`~yupana.endpoint.base.Deadline`.

httpx builds the requests (form and JSON bodies, headers); the sockets come from a small
httpcore network backend that clamps each read, write and connect to the time the
request has left. A timed-out request raises :class:`EndpointError` with kind
``deadline`` when the refresh deadline was the limit, ``timeout`` when the per-request
limit was, ``connect`` when no connection could be made.

Redirects are not followed (a POST turned into a GET loses the query, and credentials
must not travel to another host): a 3xx is an error that names the new location.
Environment proxies (``HTTP(S)_PROXY``) are not used: yupana talks to the store directly.
"""

from __future__ import annotations

import math
import ssl
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any
from dataclasses import dataclass

import httpcore
import httpx

from yupana.endpoint.auth import Credentials
from yupana.endpoint.base import Deadline, Endpoint
from yupana.endpoint.errors import (BadResponse, BrokenConnection, ConnectTimeout, DeadlineError, EndpointError,
                                    HTTPStatus, NameNotResolved, NotAnEndpoint, Redirected, Refused, StoreTimeout,
                                    TLSFailure, TooLarge, Unreachable)

USER_AGENT = "yupana/0.1 (+governance-plane client)"
MAX_BODY_BYTES = 256 << 20  # a catalogue batch is kilobytes; this only stops a runaway server
_EXCERPT = 160


class _Clock(threading.local):
    """The time limits of the request running on this thread (monotonic seconds)."""

    until: float = math.inf  # the answer must be complete by then
    deadline_end: float = math.inf  # the refresh deadline
    answer_secs: float = math.inf  # request_timeout_secs, restarted once connected

    def clamp(self, timeout: float | None, error: type[Exception]) -> float:
        left = self.until - time.monotonic()
        if left <= 0:
            raise error("the request's time limit was reached")
        return left if timeout is None else min(timeout, left)

    def connected(self) -> None:
        """Start the answer's clock when a fresh connection is ready."""
        self.until = min(time.monotonic() + self.answer_secs, self.deadline_end)


class _LimitedStream(httpcore.NetworkStream):
    def __init__(self, inner: httpcore.NetworkStream, clock: _Clock) -> None:
        self._inner = inner
        self._clock = clock

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, self._clock.clamp(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, self._clock.clamp(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: ssl.SSLContext, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore.NetworkStream:
        inner = self._inner.start_tls(ssl_context, server_hostname, self._clock.clamp(timeout, httpcore.ConnectTimeout))
        return _LimitedStream(inner, self._clock)

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _LimitedBackend(httpcore.NetworkBackend):
    def __init__(self, clock: _Clock) -> None:
        self._inner = httpcore.SyncBackend()
        self._clock = clock

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Iterable[Any] | None = None) -> httpcore.NetworkStream:
        # Connecting has its own limit (httpx passes connect_timeout_secs) but never
        # outlives the refresh deadline.
        left = self._clock.deadline_end - time.monotonic()
        if left <= 0:
            raise httpcore.ConnectTimeout("the refresh deadline passed before connecting")
        limit = left if timeout is None else min(timeout, left)
        stream = self._inner.connect_tcp(host, port, limit, local_address, socket_options)
        self._clock.connected()
        return _LimitedStream(stream, self._clock)

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Iterable[Any] | None = None) -> httpcore.NetworkStream:
        raise httpcore.UnsupportedProtocol("unix sockets are not supported")

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


class _CoreStream(httpx.SyncByteStream):
    def __init__(self, stream: Iterable[bytes]) -> None:
        self._stream = stream

    def __iter__(self) -> Iterator[bytes]:
        yield from self._stream

    def close(self) -> None:
        close = getattr(self._stream, "close", None)  # httpcore's stream may or may not have one
        if close is not None:
            close()


class _Transport(httpx.BaseTransport):
    """httpx transport over an httpcore pool whose sockets obey :class:`_Clock`.
    httpcore's exceptions pass through unchanged; :func:`_failure` maps both families."""

    def __init__(self, clock: _Clock) -> None:
        self._clock = clock
        self._pool: httpcore.ConnectionPool | None = None

    def _pool_for(self, scheme: bytes) -> httpcore.ConnectionPool:
        # Built on first use: loading the system CA store costs ~50 ms, paid only for https.
        # The system store (and SSL_CERT_FILE / SSL_CERT_DIR) is used, so an internal CA works.
        if self._pool is None:
            self._pool = httpcore.ConnectionPool(
                ssl_context=ssl.create_default_context() if scheme == b"https" else None,
                max_connections=4,
                max_keepalive_connections=2,
                keepalive_expiry=5.0,
                network_backend=_LimitedBackend(self._clock),
            )
        return self._pool

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        core = httpcore.Request(
            method=request.method,
            url=httpcore.URL(scheme=request.url.raw_scheme, host=request.url.raw_host,
                             port=request.url.port, target=request.url.raw_path),
            headers=request.headers.raw,
            content=request.stream,
            extensions=request.extensions,
        )
        resp = self._pool_for(request.url.raw_scheme).handle_request(core)
        return httpx.Response(status_code=resp.status, headers=resp.headers, stream=_CoreStream(resp.stream),  # type: ignore[arg-type]  # sync pool: a sync stream
                              extensions=resp.extensions)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()


@dataclass(slots=True)
class Reply:
    """A complete HTTP answer (the body was read to the end within the limits)."""

    url: str
    status: int
    headers: httpx.Headers
    body: bytes
    scrub: object = None  # hides the read credentials should a server echo them


    @property
    def content_type(self) -> str:
        return str(self.headers.get("content-type", "")).split(";")[0].strip().lower()

    def excerpt(self) -> str:
        """The start of the body, for error messages."""
        text = self.body[:_EXCERPT].decode("utf-8", "replace").strip().replace("\n", " ")
        text += "…" if len(self.body) > _EXCERPT else ""
        return str(self.scrub(text)) if callable(self.scrub) else text


class Http:
    """One connection pool with fixed connect / answer limits, and a request counter."""

    def __init__(self, *, connect_timeout: float, request_timeout: float, authorization: str | None = None,
                 scrub: Callable[[str], str] | None = None) -> None:
        self.connect_timeout = connect_timeout
        self.request_timeout = request_timeout
        self.requests = 0
        #: Seconds from each request sent to its answer's last byte, summed (the store's time).
        self.waited_s = 0.0
        self._clock = _Clock()
        self._authorization = authorization
        self._scrub = scrub or (lambda text: text)
        self._client = httpx.Client(
            transport=_Transport(self._clock),
            timeout=httpx.Timeout(connect=connect_timeout, read=request_timeout, write=request_timeout,
                                  pool=connect_timeout),
            follow_redirects=False,
            headers={"User-Agent": USER_AGENT},
            trust_env=False,
        )

    def post(self, url: str, *, what: str, deadline: Deadline, data: dict[str, str] | None = None,
             json: object | None = None, headers: dict[str, str] | None = None,
             authorization: str | None = None) -> Reply:
        """POST and read the whole answer within the limits; any failure is an EndpointError.

        ``authorization`` replaces the configured read credentials for this request (writes
        carry their own token). Non-2xx statuses are returned, not raised: the dialect
        modules know what they mean.
        """
        return self.request("POST", url, what=what, deadline=deadline, data=data, json=json, headers=headers,
                            authorization=authorization)

    def get(self, url: str, *, what: str, deadline: Deadline, headers: dict[str, str] | None = None,
            sink: Callable[[bytes], None] | None = None) -> Reply:
        """GET within the same limits (a conditional GET's 304 is returned, not a redirect).
        ``sink``: a 2xx answer's body goes to it chunk by chunk as it arrives (the Reply's body
        is then empty), so a large answer is never held whole; whatever it raises stops the read."""
        return self.request("GET", url, what=what, deadline=deadline, headers=headers, sink=sink)

    def request(self, method: str, url: str, *, what: str, deadline: Deadline, data: dict[str, str] | None = None,
                json: object | None = None, headers: dict[str, str] | None = None,
                authorization: str | None = None, sink: Callable[[bytes], None] | None = None) -> Reply:
        """The one place httpx is called and its failures become :mod:`yupana.endpoint.errors`."""
        deadline.check(what)
        now = time.monotonic()
        clock = self._clock
        clock.deadline_end = now + deadline.remaining()
        clock.answer_secs = self.request_timeout
        # A reused keep-alive connection skips connect_tcp: the answer's clock starts now.
        # A fresh connection restarts it once connected (connecting has its own limit).
        clock.until = min(now + self.request_timeout, clock.deadline_end)
        send_headers = dict(headers or {})
        auth = authorization if authorization is not None else self._authorization
        if auth:
            send_headers["Authorization"] = auth
        self.requests += 1
        received = 0
        try:
            with self._client.stream(method, url, data=data, json=json, headers=send_headers) as resp:
                if 300 <= resp.status_code < 400 and not (method == "GET" and resp.status_code == 304):
                    where = resp.headers.get("location", "?")
                    raise Redirected(f"{url} redirects ({resp.status_code}) to {where}: "
                                                "set [yupana.quipu] endpoint to the final URL (redirects are not followed)")
                chunks: list[bytes] = []
                keep = chunks.append if sink is None or not 200 <= resp.status_code < 300 else sink
                for chunk in resp.iter_bytes():
                    keep(chunk)
                    received += len(chunk)
                    if received > MAX_BODY_BYTES:
                        raise TooLarge(f"{url}: the answer to {what} exceeds "
                                                        f"{MAX_BODY_BYTES >> 20} MiB; nothing was read — lower "
                                                        "[yupana.quipu] batch_size")
                    if time.monotonic() >= clock.until:
                        raise httpcore.ReadTimeout("the request's time limit was reached")
                return Reply(url, resp.status_code, resp.headers, b"".join(chunks), self._scrub)
        except EndpointError:
            raise
        except (httpx.HTTPError, httpcore.ConnectError, httpcore.TimeoutException, httpcore.NetworkError,
                httpcore.ProtocolError, httpcore.UnsupportedProtocol, httpx.InvalidURL) as exc:
            raise self._failure(exc, url, what, deadline, received) from None
        finally:
            clock.until = clock.deadline_end = clock.answer_secs = math.inf
            self.waited_s += time.monotonic() - now

    def _failure(self, exc: Exception, url: str, what: str, deadline: Deadline, received: int) -> EndpointError:
        reason = self._scrub(str(exc) or type(exc).__name__)
        if isinstance(exc, (httpcore.TimeoutException, httpx.TimeoutException)):
            if deadline.expired():
                return DeadlineError(f"the refresh deadline of {deadline.budget:g}s passed while waiting for "
                                                 f"{url} ({what}); nothing was read — the store is slow or stuck: retry "
                                                 "later, or raise [yupana.quipu] refresh_deadline_secs")
            if isinstance(exc, (httpcore.ConnectTimeout, httpx.ConnectTimeout)):
                return ConnectTimeout(f"{url}: no connection within {self.connect_timeout:g}s "
                                                "(connect_timeout_secs) — is the store up and reachable from here?")
            return StoreTimeout(f"{url}: no complete answer to {what} within {self.request_timeout:g}s "
                                            f"(request_timeout_secs; {received} bytes received) — the store is slow or "
                                            "stuck: retry later, or raise [yupana.quipu] request_timeout_secs")
        if isinstance(exc, (httpcore.ConnectError, httpx.ConnectError)):
            cls, said = _connect_failure(exc, reason)
            return cls(f"{url}: {said}")
        if isinstance(exc, (httpcore.UnsupportedProtocol, httpx.UnsupportedProtocol, httpx.InvalidURL)):
            return NotAnEndpoint(f"{url}: {reason} — use an http:// or https:// endpoint")
        if isinstance(exc, (httpcore.RemoteProtocolError, httpx.RemoteProtocolError, httpcore.ReadError,
                            httpx.ReadError, httpcore.NetworkError, httpx.NetworkError)):
            return BrokenConnection(f"{url}: the connection broke before the answer to {what} was complete "
                                             f"({received} bytes received: {reason}); nothing was read — retry, and "
                                             "check the store's logs if it keeps happening")
        return HTTPStatus(f"{url}: {what} failed ({reason})")

    def close(self) -> None:
        self._client.close()


def _connect_failure(exc: BaseException, reason: str) -> tuple[type[Unreachable], str]:
    """What kind of connection failure ``exc`` is (refused, DNS, TLS), and what to try."""
    import socket

    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, ConnectionRefusedError):
            return Refused, (f"cannot connect: connection refused at once ({reason}) — nothing listens on that host and "
                    "port (is the store running?): start the store, or correct the port in [yupana.quipu] endpoint")
        if isinstance(cause, socket.gaierror):
            return NameNotResolved, (f"cannot connect: the host name does not resolve ({reason}) — check the spelling of the host in "
                    "[yupana.quipu] endpoint, or this machine's DNS")
        if isinstance(cause, ssl.SSLError):
            return TLSFailure, (f"cannot connect: the TLS handshake failed ({reason}) — is the endpoint https:// for a store that speaks "
                    "plain http (or the other way round), or is its certificate trusted here?")
        cause = cause.__cause__ or cause.__context__
    return Unreachable, f"cannot connect ({reason}) — is the store running, and is [yupana.quipu] endpoint right?"


def parse_json(reply: Reply, what: str) -> object:
    """The body as JSON, or an EndpointError that shows what came instead."""
    import json

    if any(kind in reply.content_type for kind in ("html", "xml")):
        raise BadResponse(f"{reply.url}: expected JSON for {what}, got {reply.content_type} "
                                        f"({reply.excerpt()!r}) — is the endpoint the store's SPARQL/query URL?")
    try:
        return json.loads(reply.body)
    except RecursionError:
        raise BadResponse(f"{reply.url}: the answer to {what} nests JSON arrays or objects deeper than any SPARQL "
                          f"result does (more than the parser's recursion limit); it starts {reply.excerpt()!r} — "
                          "a broken or hostile store") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise BadResponse(f"{reply.url}: the answer to {what} is not valid JSON ({exc}); it starts "
                                        f"{reply.excerpt()!r} — is the endpoint a SPARQL service?") from None


class HttpEndpoint(Endpoint):
    """An endpoint spoken to over HTTP: its one :class:`Http` pool, the request count and the
    store's time (quipu and SPARQL 1.1 protocol stores)."""

    _http: Http

    def _connect(self, connect_timeout: float, request_timeout: float, credentials: Credentials | None) -> None:
        self._http = Http(connect_timeout=connect_timeout, request_timeout=request_timeout,
                          authorization=credentials.header() if credentials else None,
                          scrub=credentials.scrub if credentials else None)

    @property
    def requests(self) -> int:
        """HTTP requests made so far (for benchmarks)."""
        return self._http.requests

    @property
    def server_secs(self) -> float:  # type: ignore[override]  # a property over the base's attribute
        """Seconds spent waiting for the store's answers so far (see :class:`Endpoint`)."""
        return self._http.waited_s

    def close(self) -> None:
        self._http.close()
