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
    """A read that failed. ``kind`` is a stable label: connect, timeout, deadline, http,
    protocol, truncated, query, auth, unsupported."""

    def __init__(self, kind: str, message: str) -> None:
        from yupana.redact import redact_text

        message = redact_text(message)  # every URL an error quotes, without its credentials
        super().__init__(message)
        self.kind = kind
        self.message = message

    def __str__(self) -> str:
        return f"{self.kind}: {self.message}"


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
            raise EndpointError("deadline", f"the refresh deadline of {self.budget:g}s passed before {what}")

    def timeout(self, cap: float) -> float:
        """A per-operation timeout: ``cap``, but never past the deadline (and never <= 0)."""
        left = self.remaining()
        if left <= 0:
            raise EndpointError("deadline", f"the refresh deadline of {self.budget:g}s has passed")
        return max(0.001, min(cap, left))


class Endpoint:
    """Interface of every transport."""

    #: Identity recorded in the cache; a cache written for another identity is refused.
    identity: str = ""
    #: "sparql11" | "quipu" | "embedded"
    dialect: str = ""
    #: Whether the projection must prove each answer complete itself, by asking the store
    #: for its row count in the same query (:func:`yupana.projection.queries.counted`):
    #: true for SPARQL 1.1 stores, which may cap rows without saying so; quipu proves
    #: completeness with its ``truncated`` flag, the embedded store has no cap.
    counted_reads: bool = False

    def select(self, query: str, deadline: Deadline) -> SelectResult:  # pragma: no cover - interface
        raise NotImplementedError

    def close(self) -> None:
        pass
