"""Every request a refresh makes goes through :class:`Reader`. Cold path.

* :meth:`Reader.discover` runs a discovery query page by page (``ORDER BY`` + ``LIMIT`` of
  ``max_rows - 1`` + ``OFFSET``), so a plane larger than the server's row cap is read whole
  instead of truncated; one request per page.
* :meth:`Reader.read` reads subjects' properties in batches: one query
  ``SELECT ?s ?p ?o WHERE { VALUES ?s {…} VALUES ?p {…} ?s ?p ?o }`` per ``batch_size``
  subjects, so requests grow with batches, not subjects. A batch the transport reports as
  truncated is split in half and read again (a truncated answer is never used).
* :meth:`Reader.rows` runs a paged SELECT and returns its rows.

Requests are counted per plane, and notices the store attaches to answers (quipu's
withheld-inference marker) are collected once each.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from yupana.endpoint.base import Deadline, Endpoint, EndpointError, SelectResult, Term
from yupana.projection import queries
from yupana.projection.errors import ProjectionError
from yupana.projection.subject import Subject


class Reader:
    """Runs the projection's queries against one endpoint within one deadline."""

    def __init__(self, endpoint: Endpoint, deadline: Deadline, *, batch_size: int = 200,
                 max_rows: int = 10000) -> None:
        self.endpoint = endpoint
        self.deadline = deadline
        self.batch_size = max(1, int(batch_size))
        # A page one row short of the cap: a full page can never be mistaken for a capped one.
        self.page_size = max(1, int(max_rows) - 1)
        self.requests: dict[str, int] = {}
        self.notices: list[str] = []
        #: Every subject read, by IRI: a subject read by two planes is one Subject, so
        #: its triples (for the SHACL gate) are recorded once.
        self.subjects: dict[str, Subject] = {}

    def select(self, query: str, plane: str) -> SelectResult:
        """One request, counted against ``plane``."""
        self.requests[plane] = self.requests.get(plane, 0) + 1
        result = self.endpoint.select(query, self.deadline)
        for notice in result.notices:
            if notice not in self.notices:
                self.notices.append(notice)
        return result

    def rows(self, name: str, plane: str, *,
             stop: Callable[[list[dict[str, Term]]], bool] | None = None) -> list[dict[str, Term]]:
        """Every row of the paged query ``name``, one request per page.

        ``stop(page)`` is called with each page's rows; a true answer ends paging early.
        """
        rows: list[dict[str, Term]] = []
        offset = 0
        while True:
            page = self.select(queries.render(name, limit=self.page_size, offset=offset), plane).rows
            rows.extend(page)
            done = stop(page) if stop is not None else False
            if done or len(page) < self.page_size:
                return rows
            offset += self.page_size

    def discover(self, name: str, plane: str) -> list[str]:
        """The subject IRIs the discovery query ``name`` finds (variable ``?s``)."""
        found: list[str] = []
        seen: set[str] = set()
        for row in self.rows(name, plane):
            term = row.get("s")
            if term is None:
                continue
            if not term.is_iri:
                shown = f"_:{term.value}" if term.kind == "bnode" else repr(term.value)
                raise ProjectionError(shown, "rdf:type", f"a governed subject found by {name} is not an IRI; "
                                      "give it an IRI so it can be read back and cited")
            if term.value not in seen:
                seen.add(term.value)
                found.append(term.value)
        return found

    def read(self, name: str, subjects: Sequence[str], plane: str) -> dict[str, Subject]:
        """Read ``subjects`` with the batched query ``name``; every subject gets an entry."""
        out = {iri: self.subject(iri) for iri in subjects}
        for iri in subjects:
            try:
                queries.serialise_iri(iri)
            except queries.TermError as exc:
                raise ProjectionError(iri, "(subject IRI)", f"cannot be written into a query safely: {exc}") from None
        for batch in queries.batched(list(out), self.batch_size):
            self._read_batch(name, batch, plane, out)
        return out

    def batched_rows(self, name: str, var: str, iris: Sequence[str], plane: str) -> list[dict[str, Term]]:
        """The rows of query ``name`` run once per batch of ``iris`` bound to ``?var``."""
        for iri in iris:
            try:
                queries.serialise_iri(iri)
            except queries.TermError as exc:
                raise ProjectionError(iri, "(IRI)", f"cannot be written into a query safely: {exc}") from None
        rows: list[dict[str, Term]] = []
        for batch in queries.batched(list(iris), self.batch_size):
            rows.extend(self.select(queries.render(name, values={var: batch}), plane).rows)
        return rows

    def _read_batch(self, name: str, batch: Sequence[str], plane: str, out: dict[str, Subject]) -> None:
        query = queries.render(name, values={"s": batch})
        try:
            result = self.select(query, plane)
        except EndpointError as exc:
            if exc.kind == "truncated" and len(batch) > 1:
                half = len(batch) // 2
                self._read_batch(name, batch[:half], plane, out)
                self._read_batch(name, batch[half:], plane, out)
                return
            raise
        for row in result.rows:
            s, p, o = row.get("s"), row.get("p"), row.get("o")
            if s is None or p is None or o is None or s.value not in out:
                raise EndpointError("protocol", f"{name}: the store answered with a row outside the request: {row!r}")
            out[s.value].add(p.value, o)

    def subject(self, iri: str) -> Subject:
        """The one :class:`Subject` for ``iri`` (created empty on first use)."""
        found = self.subjects.get(iri)
        if found is None:
            found = self.subjects[iri] = Subject(iri)
        return found

    def sorted_triples(self) -> list[tuple[str, str, Term]]:
        """Every triple read, ordered by subject, predicate and object."""
        return [(iri, p, o) for iri in sorted(self.subjects) for p in self.subjects[iri].predicates()
                for o in self.subjects[iri].terms(p)]
