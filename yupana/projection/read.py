"""Every request a refresh makes goes through :class:`Reader`. Cold path.

* :meth:`Reader.discover` asks a discovery query whole first: one unsorted request, proven
  complete like every answer (below). Only a store that cuts that answer at its row cap is
  then asked page by page, by key: each page is ``ORDER BY STR(?s) LIMIT page`` of the
  subjects whose ``STR(?s)`` sorts after the previous page's last one, so no store has to
  sort past one page (stock Virtuoso refuses a sorted OFFSET past 19 998 rows) and a plane
  larger than the server's row cap is read whole; one request per page. Sorting is most of
  a large discovery's cost (Oxigraph: ~1.9 s a page at 50 000 subjects, against 0.1 s
  unsorted), so a store without a cap never sorts.
* :meth:`Reader.read` reads subjects' properties in batches: one query
  ``SELECT ?s ?p ?o WHERE { VALUES ?s {…} VALUES ?p {…} ?s ?p ?o }`` per ``batch_size``
  subjects, so requests grow with batches, not subjects. A batch the transport reports as
  truncated is split in half and read again (a truncated answer is never used).
* :meth:`Reader.rows` runs a paged SELECT and returns its rows.
* :meth:`Reader.digests` asks the store for a digest of each subject's triples instead of
  the triples (:func:`queries.digested`), and :meth:`Reader.read` with ``digests=`` reads
  triples and digests in one answer (:func:`queries.digested_read`): what the incremental
  refresh compares with the prior refresh (docs/refresh.md, "Incremental refresh").

Every answer is proven complete. quipu says when it dropped rows (its transport raises
``truncated``); the embedded store has no cap. A SPARQL 1.1 store may cap rows silently,
so for it (``Endpoint.counted_reads``) each query is sent :func:`~queries.counted`: the
answer carries the store's own count of its rows, and an answer with fewer rows, or
without the count, is a ``truncated`` error that blames the cap. Pages are sized one row
under the cap including the count row (``max_rows - 2``), never exactly at it.

Requests are counted per plane, and notices the store attaches to answers (quipu's
withheld-inference marker) are collected once each. The time of every select is split into
``server_s`` (waiting for the store: :attr:`Endpoint.server_secs`) and ``transfer_s``
(turning its answers into rows), for the refresh's phase report.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from yupana.endpoint.base import (Deadline, DeadlineError, Endpoint, EndpointError, ProtocolError, SelectResult, Term,
                                  TruncatedError)
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
        #: Subjects a digest request asks about: its answer is one row per subject, so ten
        #: read batches at a time, one page at most (fewer requests: 5 instead of 50 for 10 000).
        self.digest_batch = max(self.batch_size, min(self.page_size, 10 * self.batch_size))
        self.requests: dict[str, int] = {}
        self.notices: list[str] = []
        #: Every subject read, by IRI: a subject read by two planes is one Subject, so
        #: its triples (for the SHACL gate) are recorded once.
        self.subjects: dict[str, Subject] = {}
        self._iris: dict[Term, Term] = {}
        self._names: dict[str, str] = {}
        #: Seconds waiting for the store, and turning its answers into rows.
        self.server_s = 0.0
        self.transfer_s = 0.0
        #: Seconds the last request of each plane took (see :meth:`select`).
        self._took: dict[str, float] = {}

    def select(self, query: str, plane: str) -> SelectResult:
        """One request, counted against ``plane`` (and timed: server and transfer).

        A request is not sent when the deadline leaves less time than the last request of
        ``plane`` took (DeadlineError): it would be abandoned half-way, and the store left
        answering a query nobody waits for."""
        last = self._took.get(plane)
        left = self.deadline.remaining()
        if last is not None and 0 < left < last:
            raise DeadlineError(f"the refresh deadline of {self.deadline.budget:g}s leaves {left:.2f}s, less than the "
                                f"last {plane} request took ({last:.2f}s): the next one was not sent, so the store is "
                                "not left answering a query nobody waits for")
        self.requests[plane] = self.requests.get(plane, 0) + 1
        waited = self.endpoint.server_secs
        started = time.perf_counter()
        try:
            result = self.endpoint.select(query, self.deadline)
        finally:
            elapsed = time.perf_counter() - started
            self._took[plane] = elapsed
            server = elapsed if waited is None else min(elapsed, (self.endpoint.server_secs or 0.0) - waited)
            self.server_s += server
            self.transfer_s += elapsed - server
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
        """The subject IRIs the discovery query ``name`` finds (variable ``?s``), sorted by
        ``STR(?s)`` as the pages are; ``prop`` is the property a blank-node subject is blamed
        on (what made it a member)."""
        found: list[str] = []
        seen: set[str] = set()
        if queries.pageable(name):
            try:
                whole = self.complete(queries.render(name, whole=True), plane, fix="max_rows")
            except TruncatedError:
                pass  # the store caps answers: page by key below
            else:
                self._found(whole, name, prop, found, seen)
                return sorted(found)
        after = ""
        while True:
            page = self.complete(queries.render(name, limit=self.page_size, after=after), plane, fix="max_rows")
            keys = self._found(page, name, prop, found, seen)
            if len(page) < self.page_size:
                return found
            last = max(keys, default="")
            if last <= after:
                raise ProtocolError(f"{self._where()}: {name} did not move past {after!r}: the store "
                                                "does not order STR(?s) as it compares it; nothing was read")
            after = last

    @staticmethod
    def _found(rows: list[dict[str, Term]], name: str, prop: str, found: list[str], seen: set[str]) -> list[str]:
        """Add the subjects of ``rows`` to ``found`` (each once); returns the page's keys."""
        keys = []
        for row in rows:
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
        return keys

    def read(self, name: str, subjects: Sequence[str], plane: str, *,
             digests: dict[str, str] | None = None) -> dict[str, Subject]:
        """Read ``subjects`` with the batched query ``name``; every subject gets an entry.

        With ``digests`` (a dict to fill), each batch is read with its digests in the same
        answer (:func:`queries.digested_read`): ``digests[iri]`` is set for every subject
        read whose objects hold no blank node, and the rows each subject's digest row counts
        prove the batch complete (instead of :func:`queries.counted`'s count row)."""
        out = {iri: self.subject(iri) for iri in subjects}
        self._check_iris(subjects, "(subject IRI)")
        for batch in queries.batched(list(out), self.batch_size):
            self._read_batch(name, batch, plane, out, digests)
        return out

    def digests(self, name: str, subjects: Sequence[str], plane: str) -> dict[str, str]:
        """The store's digest of each subject's triples as the batched read ``name`` would
        read them (:func:`queries.digested`), without the triples. A subject missing from
        the answer (no triples, a blank-node object, a cut answer) has no digest: it is
        never taken as unchanged. EndpointError when the store cannot run the query."""
        self._check_iris(subjects, "(subject IRI)")
        out: dict[str, str] = {}
        for batch in queries.batched(list(subjects), self.digest_batch):
            try:
                rows = self.select(queries.digested(queries.render(name, values={"s": batch})), plane).rows
            except TruncatedError:
                continue  # a cut answer: these subjects are read, not taken as unchanged
            wanted = set(batch)
            for row in rows:
                iri, digest = _digest_of(row)
                if iri is not None and iri in wanted and digest is not None:
                    out[iri] = digest
        return out

    def _check_iris(self, iris: Sequence[str], prop: str) -> None:
        for iri in iris:
            try:
                queries.serialise_iri(iri)
            except queries.TermError as exc:
                raise ProjectionError(iri, prop, f"cannot be written into a query safely: {exc}") from None

    def batched_rows(self, name: str, var: str, iris: Sequence[str], plane: str) -> list[dict[str, Term]]:
        """The rows of query ``name`` run once per batch of ``iris`` bound to ``?var``."""
        self._check_iris(iris, "(IRI)")
        rows: list[dict[str, Term]] = []
        for batch in queries.batched(list(iris), self.batch_size):
            rows.extend(self.complete(queries.render(name, values={var: batch}), plane))
        return rows

    def _read_batch(self, name: str, batch: Sequence[str], plane: str, out: dict[str, Subject],
                    digests: dict[str, str] | None = None) -> None:
        query = queries.render(name, values={"s": batch})
        try:
            if digests is None:
                rows = self.complete(query, plane)
            else:
                rows = self._digested_rows(name, query, batch, plane, digests)
        except EndpointError as exc:
            if isinstance(exc, TruncatedError) and len(batch) > 1:
                self._notice(f"the store cut an answer of {plane} at its row cap, so batches were split and read "
                             f"again (complete, at the cost of extra requests) — lower [yupana.quipu] batch_size "
                             f"(now {self.batch_size}) or raise the store's row cap: {exc.message.split(': ', 1)[0]}")
                half = len(batch) // 2
                self._read_batch(name, batch[:half], plane, out, digests)
                self._read_batch(name, batch[half:], plane, out, digests)
                return
            raise
        iris, names = self._iris, self._names
        for row in rows:
            s, p, o = row.get("s"), row.get("p"), row.get("o")
            if s is None or p is None or o is None or s.value not in out:
                raise ProtocolError(f"{name}: the store answered with a row outside the request: {row!r}")
            if o.kind == "uri":  # types, links and predicates repeat on every subject: hold one of each
                o = iris.setdefault(o, o)
            out[s.value].add(names.setdefault(p.value, p.value), o)

    def _digested_rows(self, name: str, query: str, batch: Sequence[str], plane: str,
                       digests: dict[str, str]) -> list[dict[str, Term]]:
        """The triple rows of one batch read with its digests (see :meth:`read`)."""
        answer = self.select(queries.digested_read(query), plane)
        triples: list[dict[str, Term]] = []
        counted: dict[str, int] = {}
        found: dict[str, tuple[str | None, int]] = {}
        for row in answer.rows:
            if queries.ROWS_VAR in row:
                iri, digest = _digest_of(row)
                rows = row[queries.ROWS_VAR].value
                if iri is None or not rows.isdigit():
                    raise ProtocolError(f"{self._where()}: a digest row of the answer is malformed: {row!r}")
                found[iri] = (digest, int(rows))
            else:
                triples.append(row)
                s = row.get("s")
                if s is not None:
                    counted[s.value] = counted.get(s.value, 0) + 1
        if self.counted:
            # Rows cut at a silent cap are seen missing: fewer triples than the subject's digest
            # row counts, or triples whose digest row was cut. A subject with neither may be
            # empty, or wholly cut: it is read again the counted way.
            cut = [iri for iri in batch if counted.get(iri, 0) != found.get(iri, (None, 0))[1]]
            if cut or (answer.row_cap is not None and len(answer.rows) >= answer.row_cap):
                from yupana.endpoint.sparql11 import capped_error

                raise capped_error(self._where(), len(answer.rows), None, answer.row_cap, fix="batch_size")
            empty = [iri for iri in batch if iri not in found]
            if empty:
                triples.extend(self.complete(queries.render(name, values={"s": empty}), plane))
        for iri, (digest, _) in found.items():
            if digest is not None:
                digests[iri] = digest
        return triples

    def subject(self, iri: str) -> Subject:
        """The one :class:`Subject` for ``iri`` (created empty on first use)."""
        found = self.subjects.get(iri)
        if found is None:
            found = self.subjects[iri] = Subject(iri)
        return found

    def sorted_triples(self) -> list[tuple[str, str, Term]]:
        """Every triple read, ordered by subject, predicate and object."""
        return [t for iri in sorted(self.subjects) for t in self.subjects[iri].triples()]


def _digest_of(row: dict[str, Term]) -> tuple[str | None, str | None]:
    """``(subject IRI, digest)`` of a :func:`queries.digested` row; the digest is None when
    the row has none or the subject has a blank-node object (its label is not stable)."""
    s, digest, blanks = row.get("s"), row.get(queries.DIGEST_VAR), row.get(queries.BLANKS_VAR)
    iri = s.value if s is not None and s.is_iri else None
    if digest is None or blanks is None or blanks.value.strip() not in ("0", "0.0", "+0"):
        return iri, None
    return iri, digest.value
