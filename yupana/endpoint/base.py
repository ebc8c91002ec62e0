"""What every transport returns, and the errors and deadline they share. Cold path.

A transport answers SPARQL SELECT queries with :class:`SelectResult`: the projected
variables and one dict per row mapping each *bound* variable to a :class:`Term` (unbound
variables are absent, as in the W3C results format). It never returns a partial answer:
a truncated, timed-out or malformed reply raises :class:`EndpointError`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import NamedTuple

XSD = "http://www.w3.org/2001/XMLSchema#"


class Term(NamedTuple):
    """One RDF term from a result row (a named tuple: a refresh builds hundreds of thousands)."""

    kind: str  # "uri" | "literal" | "bnode"
    value: str
    datatype: str | None = None
    lang: str | None = None

    @property
    def is_iri(self) -> bool:
        return self.kind == "uri"

    @property
    def is_literal(self) -> bool:
        return self.kind == "literal"


@dataclass(slots=True)
class SelectResult:
    variables: list[str]
    rows: list[dict[str, Term]]
    # Things the server told us that a human should know (for example quipu withholding
    # subclass inference for a constant type). Never errors: those raise.
    notices: list[str] = field(default_factory=list)
    # The row cap the server said it applies (Virtuoso's ``X-SPARQL-MaxRows``), if any.
    row_cap: int | None = None


class EndpointError(Exception):
    """A read or write that failed. Each failure is its own subclass; ``kind`` is the stable
    label records and ``--json`` carry (connect, timeout, deadline, http, protocol,
    truncated, query, auth, unsupported). Every transport raises only these: the exceptions
    of the HTTP client and the embedded store are translated where they are caught."""

    kind = "error"

    def __init__(self, message: str) -> None:
        from yupana.redact import redact_text

        message = redact_text(message)  # every URL an error quotes, without its credentials
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return f"{self.kind}: {self.message}"


class ConnectError(EndpointError):
    """The store could not be reached (refused, no route, DNS, TLS handshake)."""

    kind = "connect"


class StoreTimeout(EndpointError):
    """The store did not answer within the request timeout."""

    kind = "timeout"


class DeadlineError(EndpointError):
    """The refresh's own wall-clock budget ran out."""

    kind = "deadline"


class HTTPError(EndpointError):
    """The store answered with an HTTP error status."""

    kind = "http"


class ProtocolError(EndpointError):
    """The answer was not what the protocol promises (bad JSON, wrong shape, cut short)."""

    kind = "protocol"


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


KINDS: dict[str, type[EndpointError]] = {cls.kind: cls for cls in (
    ConnectError, StoreTimeout, DeadlineError, HTTPError, ProtocolError, TruncatedError, QueryError, AuthError,
    UnsupportedError)}


class Deadline:
    """One wall-clock budget shared by every request of a refresh."""

    __slots__ = ("_end", "budget")

    def __init__(self, seconds: float) -> None:
        self.budget = seconds
        self._end = time.monotonic() + seconds

    def remaining(self) -> float:
        return self._end - time.monotonic()

    def expired(self) -> bool:
        return self.remaining() <= 0

    def check(self, what: str) -> None:
        if self.expired():
            raise DeadlineError(f"the refresh deadline of {self.budget:g}s passed before {what}")

    def timeout(self, cap: float) -> float:
        """A per-operation timeout: ``cap``, but never past the deadline (and never <= 0)."""
        left = self.remaining()
        if left <= 0:
            raise DeadlineError(f"the refresh deadline of {self.budget:g}s has passed")
        return max(0.001, min(cap, left))


# What a transport can do; callers ask ``cap in endpoint.capabilities``, never ``hasattr``.
SELECT, ASK, WRITE, POLICY_CHECK = "select", "ask", "write", "policy-check"


class Endpoint:
    """Interface of every transport: a SELECT, and what else its ``capabilities`` declare."""

    #: Identity recorded in the cache; a cache written for another identity is refused.
    identity: str = ""
    #: "sparql11" | "quipu" | "embedded"
    dialect: str = ""
    #: Whether the projection must prove each answer complete itself, by asking the store
    #: for its row count in the same query (:func:`yupana.projection.queries.counted`):
    #: true for SPARQL 1.1 stores, which may cap rows without saying so; quipu proves
    #: completeness with its ``truncated`` flag, the embedded store has no cap.
    counted_reads: bool = False
    #: What this transport does besides SELECT (:data:`ASK`, :data:`WRITE`, :data:`POLICY_CHECK`).
    capabilities: frozenset[str] = frozenset({SELECT})

    def select(self, query: str, deadline: Deadline) -> SelectResult:  # pragma: no cover - interface
        raise NotImplementedError

    def ask(self, query: str, deadline: Deadline) -> bool:
        raise UnsupportedError(f"the {self.dialect or 'configured'} store does not answer ASK queries here")

    def write_triples(self, prefixes: dict[str, str], triples: str, graph: str | None, deadline: Deadline) -> None:
        """Insert ``triples`` — in the syntax Turtle and SPARQL's ``INSERT DATA`` share
        (prefixed names from ``prefixes``, ``a``, ``;``, literals) — into ``graph``
        (the store's default graph when None)."""
        raise UnsupportedError(f"the {self.dialect or 'configured'} store has no write path "
                               "(a SPARQL 1.1 store needs [yupana.quipu] update_endpoint)")

    def policy_check(self, policy_iri: str, target_iri: str, deadline: Deadline) -> dict:
        raise UnsupportedError(f"the {self.dialect or 'configured'} store has no governed policy check")

    def close(self) -> None:
        pass
