"""What every transport returns, and the errors and deadline they share. Cold path.

The failures are :mod:`yupana.endpoint.errors` (re-exported here). A transport answers SPARQL SELECT queries with :class:`SelectResult`: the projected
variables and one dict per row mapping each *bound* variable to a :class:`Term` (unbound
variables are absent, as in the W3C results format). It never returns a partial answer:
a truncated, timed-out or malformed reply raises :class:`EndpointError`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import NamedTuple

from yupana.endpoint.errors import (KINDS, AuthError, BadResponse, ConnectError, DeadlineError, EndpointError, HTTPError,
                                    HTTPStatus, ProtocolError, QueryError, StoreTimeout, TruncatedError, Unreachable,
                                    UnsupportedError, WrongURL)

XSD = "http://www.w3.org/2001/XMLSchema#"

# The errors are re-exported: transports and callers import them from here or from errors.
__all__ = ["ASK", "CAPABILITIES", "KINDS", "POLICY_CHECK", "SELECT", "UPDATE", "WRITE", "XSD", "AuthError",
           "BadResponse", "ConnectError", "Deadline", "DeadlineError", "Endpoint", "EndpointError", "HTTPError",
           "HTTPStatus", "ProtocolError", "QueryError", "SelectResult", "StoreTimeout", "Term", "TruncatedError",
           "Unreachable", "UnsupportedError", "WrongURL"]


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


# What a transport can do; callers ask ``endpoint.can(cap)``, never ``hasattr``.
SELECT, ASK, UPDATE, WRITE, POLICY_CHECK = "select", "ask", "update", "write", "policy-check"
CAPABILITIES = frozenset({SELECT, ASK, UPDATE, WRITE, POLICY_CHECK})


class Endpoint:
    """Interface of every transport: a SELECT, and what else its ``capabilities`` declare.

    The primitives (``select``, ``ask``, ``update``, ``write_triples``, ``policy_check``)
    are the transports'; the store operations yupana's own workers need
    (:meth:`write_disk_observations`, :meth:`repository_exposure`) are built on them here,
    once, so a worker only calls them.
    """

    #: Identity recorded in the cache; a cache written for another identity is refused.
    identity: str = ""
    #: "sparql11" | "quipu" | "embedded"
    dialect: str = ""
    #: Whether the projection must prove each answer complete itself, by asking the store
    #: for its row count in the same query (:func:`yupana.projection.queries.counted`):
    #: true for SPARQL 1.1 stores, which may cap rows without saying so; quipu proves
    #: completeness with its ``truncated`` flag, the embedded store has no cap.
    counted_reads: bool = False
    #: What this transport does (:data:`SELECT`, :data:`ASK`, :data:`UPDATE`, :data:`WRITE`,
    #: :data:`POLICY_CHECK`); a method outside the set raises :class:`UnsupportedError`.
    capabilities: frozenset[str] = frozenset({SELECT})
    #: Seconds spent waiting for the store so far — each request from sent to its answer's
    #: last byte — for the refresh's phase report; None when the transport cannot tell the
    #: store's time from its own (the embedded store: all of a select is the store's).
    server_secs: float | None = None

    def can(self, capability: str) -> bool:
        """Whether this transport declares ``capability`` (one of :data:`CAPABILITIES`)."""
        if capability not in CAPABILITIES:
            raise ValueError(f"unknown endpoint capability {capability!r}")
        return capability in self.capabilities

    def select(self, query: str, deadline: Deadline) -> SelectResult:  # pragma: no cover - interface
        raise NotImplementedError

    def ask(self, query: str, deadline: Deadline) -> bool:
        raise UnsupportedError(f"the {self.dialect or 'configured'} store does not answer ASK queries here")

    def update(self, sparql_update: str, deadline: Deadline) -> None:
        raise UnsupportedError(f"the {self.dialect or 'configured'} store does not take SPARQL Update here")

    def write_triples(self, prefixes: dict[str, str], triples: str, graph: str | None, deadline: Deadline) -> None:
        """Insert ``triples`` — in the syntax Turtle and SPARQL's ``INSERT DATA`` share
        (prefixed names from ``prefixes``, ``a``, ``;``, literals) — into ``graph``
        (the store's default graph when None)."""
        raise UnsupportedError(f"the {self.dialect or 'configured'} store has no write path "
                               "(a SPARQL 1.1 store needs [yupana.quipu] update_endpoint)")

    def policy_check(self, policy_iri: str, target_iri: str, deadline: Deadline) -> dict[str, object]:
        raise UnsupportedError(f"the {self.dialect or 'configured'} store has no governed policy check")

    # -- the store operations of yupana's workers ------------------------------------------

    def write_disk_observations(self, samples: list[dict[str, object]], graph: str | None, deadline: Deadline) -> None:
        """Write queued disk-impact samples as ``aegis:CommandDiskImpactObservation``s
        (:func:`yupana.endpoint.records.disk_observation_triples`) through :meth:`write_triples`."""
        from yupana.endpoint.records import disk_observation_triples
        from yupana.planes import AEGIS

        self.write_triples({"aegis": AEGIS}, disk_observation_triples(samples), graph, deadline)

    def repository_exposure(self, repo: str, deadline: Deadline) -> tuple[str, str | None]:
        """(exposure, reason) of repository ``repo`` from the store's governed policy check
        (public, internal, or unknown with the reason); EndpointError when the check fails."""
        from yupana import exposure

        reply = self.policy_check(exposure.POLICY_IRI, exposure.repo_iri(repo), deadline)
        return exposure.outcome_to_exposure(reply)

    def close(self) -> None:
        pass
