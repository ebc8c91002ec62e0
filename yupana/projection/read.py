"""Every request a refresh makes goes through :class:`Reader`. Cold path.

* :meth:`Reader.discover` runs a discovery query page by page, by key: each page is
  ``ORDER BY STR(?s) LIMIT page`` of the subjects whose ``STR(?s)`` sorts after the previous
  page's last one, so no store has to sort past one page (stock Virtuoso refuses a sorted
  OFFSET past 19 998 rows) and a plane larger than the server's row cap is read whole;
  one request per page.
* :meth:`Reader.read` reads subjects' properties in batches: one query
  ``SELECT ?s ?p ?o WHERE { VALUES ?s {…} VALUES ?p {…} ?s ?p ?o }`` per ``batch_size``
  subjects, so requests grow with batches, not subjects. A batch the transport reports as
  truncated is split in half and read again (a truncated answer is never used).
* :meth:`Reader.rows` runs a paged SELECT and returns its rows.

Every answer is proven complete. quipu says when it dropped rows (its transport raises
``truncated``); the embedded store has no cap. A SPARQL 1.1 store may cap rows silently,
so for it (``Endpoint.counted_reads``) each query is sent :func:`~queries.counted`: the
answer carries the store's own count of its rows, and an answer with fewer rows, or
without the count, is a ``truncated`` error that blames the cap. Pages are sized one row
under the cap including the count row (``max_rows - 2``), never exactly at it.

Requests are counted per plane, and notices the store attaches to answers (quipu's
withheld-inference marker) are collected once each.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from yupana.endpoint.base import Deadline, Endpoint, EndpointError, ProtocolError, SelectResult, Term, TruncatedError
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
        self.counted = bool(getattr(endpoint, "counted_reads", False))
        # A page one row short of the cap (with the count row, when counted): a full page
        # can never be mistaken for a capped one.
        self.page_size = max(1, int(max_rows) - (2 if self.counted else 1))
        self.requests: dict[str, int] = {}
        self.notices: list[str] = []
        #: Every subject read, by IRI: a subject read by two planes is one Subject, so
        #: its triples (for the SHACL gate) are recorded once.
        self.subjects: dict[str, Subject] = {}

    def select(self, query: str, plane: str) -> SelectResult:
        """One request, counted against ``plane``."""
        self.requests[plane] = self.requests.get(plane, 0) + 1
        result = self.endpoint.select(query, self.deadline)
        self._notice(*result.notices)
        return result

    def _notice(self, *notices: str) -> None:
        for notice in notices:
            if notice not in self.notices:
                self.notices.append(notice)

    def complete(self, query: str, plane: str, *, fix: str = "batch_size") -> list[dict[str, Term]]:
        """The rows of ``query``, proven complete (see the module doc); ``fix`` names the
        setting that makes answers smaller (``batch_size`` for reads, ``max_rows`` for pages)."""
        if not self.counted:
            return self.select(query, plane).rows
        from yupana.endpoint.sparql11 import capped_error

        result = self.select(queries.counted(query), plane)
        rows: list[dict[str, Term]] = []
        expected = None
        for row in result.rows:
            count = row.get(queries.COUNT_VAR)
            if count is None:
                rows.append(row)
            elif expected is not None or not count.value.isdigit():
                raise ProtocolError(f"{self._where()}: the row count of an answer is {count.value!r} "
                                                "(expected one non-negative integer)")
            else:
                expected = int(count.value)
        if expected is None or len(rows) < expected:
            raise capped_error(self._where(), len(rows), expected, result.row_cap, fix=fix)
        if len(rows) > expected:
            raise ProtocolError(f"{self._where()}: the answer holds {len(rows)} rows but the store counted "
                                            f"{expected}; nothing was read — check the store's logs")
        return rows

    def _where(self) -> str:
        return getattr(self.endpoint, "url", None) or self.endpoint.identity

    def rows(self, name: str, plane: str, *,
             stop: Callable[[list[dict[str, Term]]], bool] | None = None) -> list[dict[str, Term]]:
        """Every row of the paged query ``name``, one request per page.

        ``stop(page)`` is called with each page's rows; a true answer ends paging early.
        """
        rows: list[dict[str, Term]] = []
        offset = 0
        while True:
            page = self.complete(queries.render(name, limit=self.page_size, offset=offset), plane, fix="max_rows")
            rows.extend(page)
            done = stop(page) if stop is not None else False
            if done or len(page) < self.page_size:
                return rows
            offset += self.page_size

    def discover(self, name: str, plane: str, prop: str = "rdf:type") -> list[str]:
        """The subject IRIs the discovery query ``name`` finds (variable ``?s``); ``prop`` is
        the property a blank-node subject is blamed on (what made it a member)."""
        found: list[str] = []
        seen: set[str] = set()
        after = ""
        while True:
            page = self.complete(queries.render(name, limit=self.page_size, after=after), plane, fix="max_rows")
            keys = []
            for row in page:
                term = row.get("s")
                if term is None:
                    continue
                if not term.is_iri:
                    shown = f"_:{term.value}" if term.kind == "bnode" else repr(term.value)
                    raise ProjectionError(shown, prop, f"a governed subject found by {name} is not an IRI; "
                                          "give it an IRI so it can be read back and cited")
                keys.append(term.value)
                if term.value not in seen:
                    seen.add(term.value)
                    found.append(term.value)
            if len(page) < self.page_size:
                return found
            last = max(keys, default="")
            if last <= after:
                raise ProtocolError(f"{self._where()}: {name} did not move past {after!r}: the store "
                                                "does not order STR(?s) as it compares it; nothing was read")
            after = last

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
            rows.extend(self.complete(queries.render(name, values={var: batch}), plane))
        return rows

    def _read_batch(self, name: str, batch: Sequence[str], plane: str, out: dict[str, Subject]) -> None:
        query = queries.render(name, values={"s": batch})
        try:
            rows = self.complete(query, plane)
        except EndpointError as exc:
            if isinstance(exc, TruncatedError) and len(batch) > 1:
                self._notice(f"the store cut an answer of {plane} at its row cap, so batches were split and read "
                             f"again (complete, at the cost of extra requests) — lower [yupana.quipu] batch_size "
                             f"(now {self.batch_size}) or raise the store's row cap: {exc.message.split(': ', 1)[0]}")
                half = len(batch) // 2
                self._read_batch(name, batch[:half], plane, out)
                self._read_batch(name, batch[half:], plane, out)
                return
            raise
        for row in rows:
            s, p, o = row.get("s"), row.get("p"), row.get("o")
            if s is None or p is None or o is None or s.value not in out:
                raise ProtocolError(f"{name}: the store answered with a row outside the request: {row!r}")
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
