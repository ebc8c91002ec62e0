"""The one exception tree of the store boundary. Cold path.

Every transport raises only these: httpx/httpcore failures are translated in one place
(:meth:`yupana.endpoint.http.Http.request`), HTTP statuses by the dialect that knows what
they mean (:func:`~yupana.endpoint.sparql11.status_error`, :func:`~yupana.endpoint.quipu.quipu_error`),
the embedded store's by :mod:`yupana.endpoint.embedded`. A caller catches the branch it can
act on (``except Unreachable``, ``except WrongURL``) or the root::

    EndpointError                      kind
    ├── Unreachable  (= ConnectError)  connect      no connection could be made
    │   ├── Refused                                 nothing listens on that host and port
    │   ├── NameNotResolved                         DNS
    │   ├── TLSFailure                              the TLS handshake failed
    │   └── ConnectTimeout                          no connection within connect_timeout_secs
    ├── StoreTimeout                   timeout      no complete answer in time (or a 408/504)
    ├── DeadlineError                  deadline     the refresh's own budget ran out
    ├── HTTPStatus   (= HTTPError)     http         an HTTP error status
    │   ├── NotFound                   (+WrongURL)  404
    │   ├── Redirected                 (+WrongURL)  3xx: redirects are not followed
    │   └── Busy                                    429 / 503
    ├── BadResponse  (= ProtocolError) protocol     not what the protocol promises
    │   ├── BrokenConnection                        the connection broke mid-answer
    │   └── TooLarge                                the answer exceeds the body limit
    ├── TruncatedError                 truncated    cut at a row cap
    ├── QueryError                     query        the store refused the query itself
    ├── AuthError                      auth         credentials refused or unreadable
    └── UnsupportedError               unsupported  nothing can do what the configuration names
        └── NotAnEndpoint              (+WrongURL)  not http(s), an update URL, not a SPARQL service

``WrongURL`` is a second parent, not a ``kind``: every failure whose fix is "correct
``[yupana.quipu] endpoint``" (404, a redirect, a URL that is no query URL) is also a
``WrongURL``. ``kind`` is the stable label records and ``--json`` carry; a subclass inherits
its branch's, so the labels are the nine they always were (:data:`KINDS`).
"""

from __future__ import annotations


class EndpointError(Exception):
    """A read or write that failed; ``kind`` is its branch's stable label."""

    kind = "error"

    def __init__(self, message: str) -> None:
        from yupana.redact import redact_text

        message = redact_text(message)  # every URL an error quotes, without its credentials
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return f"{self.kind}: {self.message}"


class WrongURL(EndpointError):
    """Mixed into the failures whose fix is the endpoint URL (no ``kind`` of its own)."""


class Unreachable(EndpointError):
    """The store could not be reached (refused, no route, DNS, TLS handshake, connect timeout)."""

    kind = "connect"


class Refused(Unreachable):
    """The connection was refused at once: nothing listens on that host and port."""


class NameNotResolved(Unreachable):
    """The host name does not resolve."""


class TLSFailure(Unreachable):
    """The TLS handshake failed (http vs https, or an untrusted certificate)."""


class ConnectTimeout(Unreachable):
    """No connection within ``connect_timeout_secs``."""


class StoreTimeout(EndpointError):
    """The store did not answer within the request timeout."""

    kind = "timeout"


class DeadlineError(EndpointError):
    """The refresh's own wall-clock budget ran out."""

    kind = "deadline"


class HTTPStatus(EndpointError):
    """The store answered with an HTTP error status."""

    kind = "http"


class NotFound(HTTPStatus, WrongURL):
    """404: the URL is not the store's SPARQL/query URL."""


class Redirected(HTTPStatus, WrongURL):
    """3xx: the endpoint moved (redirects are not followed)."""


class Busy(HTTPStatus):
    """429 / 503: busy or unavailable; retry later."""


class BadResponse(EndpointError):
    """The answer was not what the protocol promises (bad JSON, wrong shape, cut short)."""

    kind = "protocol"


class BrokenConnection(BadResponse):
    """The connection broke before the answer was complete."""


class TooLarge(BadResponse):
    """The answer exceeds the body limit."""


class TruncatedError(EndpointError):
    """The store said, or the counted read proved, that the answer was cut at a row cap."""

    kind = "truncated"


class QueryError(EndpointError):
    """The store refused the query itself (syntax, unsupported feature)."""

    kind = "query"


class AuthError(EndpointError):
    """The store refused the credentials, or they could not be read."""

    kind = "auth"


class UnsupportedError(EndpointError):
    """The configuration names something no transport can do."""

    kind = "unsupported"


class NotAnEndpoint(UnsupportedError, WrongURL):
    """The URL is not an http(s) query URL of a store yupana can read."""


# The names the branches had before the tree (kept: callers and tests use them).
ConnectError = Unreachable
HTTPError = HTTPStatus
ProtocolError = BadResponse

KINDS: dict[str, type[EndpointError]] = {cls.kind: cls for cls in (
    Unreachable, StoreTimeout, DeadlineError, HTTPStatus, BadResponse, TruncatedError, QueryError, AuthError,
    UnsupportedError)}

__all__ = ["KINDS", "AuthError", "BadResponse", "BrokenConnection", "Busy", "ConnectError", "ConnectTimeout",
           "DeadlineError", "EndpointError", "HTTPError", "HTTPStatus", "NameNotResolved", "NotAnEndpoint", "NotFound",
           "ProtocolError", "QueryError", "Redirected", "Refused", "StoreTimeout", "TLSFailure", "TooLarge",
           "TruncatedError", "Unreachable", "UnsupportedError", "WrongURL"]
