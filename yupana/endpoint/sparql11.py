"""The SPARQL 1.1 Protocol transport (Oxigraph, Fuseki, GraphDB, Virtuoso, Stardog, …).

* Queries: form-encoded ``POST`` of ``query=`` to the configured query URL (never GET,
  which long VALUES batches would overflow, and never an ``application/sparql-query``
  body, on which some servers hang), ``Accept: application/sparql-results+json``.
* Dataset: ``default-graph-uri`` when ``[yupana.quipu] default_graph`` is set.
* Updates: form-encoded ``POST`` of ``update=`` to ``update_endpoint`` (default: the
  query URL).
* Credentials: optional Basic or Bearer (see :mod:`yupana.endpoint.auth`).

Every request is bounded by the connect and answer limits and the refresh deadline
(:mod:`yupana.endpoint.http`); every failure is an :class:`EndpointError` whose message
says what to do.
"""

from __future__ import annotations

from yupana.endpoint.auth import Credentials
from yupana.endpoint.base import ASK, SELECT, UPDATE, WRITE, Deadline, SelectResult
from yupana.endpoint.errors import (AuthError, Busy, EndpointError, HTTPStatus, NotAnEndpoint, NotFound, QueryError,
                                    StoreTimeout, TruncatedError)
from yupana.endpoint.http import HttpEndpoint, Reply, parse_json
from yupana.endpoint.results import parse_boolean, parse_select

ACCEPT_RESULTS = "application/sparql-results+json"


MAX_ROWS_HEADER = "x-sparql-maxrows"


class Sparql11Endpoint(HttpEndpoint):
    dialect = "sparql11"
    counted_reads = True
    capabilities = frozenset({SELECT, ASK, UPDATE, WRITE})

    def __init__(self, url: str, *, default_graph: str | None = None, update_url: str | None = None,
                 connect_timeout: float = 2.0, request_timeout: float = 2.0,
                 credentials: Credentials | None = None) -> None:
        self.url = url
        self.identity = url.rstrip("/")
        self.update_url = update_url or url
        self.default_graph = default_graph or None
        self._connect(connect_timeout, request_timeout, credentials)

    def select(self, query: str, deadline: Deadline) -> SelectResult:
        reply = self._query_reply(query, deadline, "a SPARQL query")
        result = parse_select(parse_json(reply, "a SPARQL query"), self.url)
        result.row_cap = _row_cap(reply)
        if result.row_cap is not None and len(result.rows) >= result.row_cap:
            raise capped_error(self.url, len(result.rows), None, result.row_cap)
        return result

    def ask(self, query: str, deadline: Deadline) -> bool:
        """An ASK query's answer."""
        return parse_boolean(self._query(query, deadline, "an ASK query"), self.url)

    def write_triples(self, prefixes: dict[str, str], triples: str, graph: str | None, deadline: Deadline) -> None:
        """As ``INSERT DATA`` to the update URL (``GRAPH <graph>`` when given)."""
        head = "".join(f"PREFIX {name}: <{iri}>\n" for name, iri in prefixes.items())
        body = f"GRAPH <{graph}> {{\n{triples}\n}}" if graph else triples
        self.update(f"{head}INSERT DATA {{\n{body}\n}}", deadline)

    def update(self, sparql_update: str, deadline: Deadline) -> None:
        """Run a SPARQL Update (form ``update=``). Inserts go where the update text says:
        ``default_graph`` only scopes reads, so write ``GRAPH <…> { … }`` to target it."""
        reply = self._http.post(self.update_url, what="a SPARQL update", deadline=deadline,
                                data={"update": sparql_update}, headers={"Accept": "*/*"})
        if not 200 <= reply.status < 300:
            raise status_error(reply, "the SPARQL update", endpoint_key="update_endpoint")

    def _query(self, query: str, deadline: Deadline, what: str) -> object:
        return parse_json(self._query_reply(query, deadline, what), what)

    def _query_reply(self, query: str, deadline: Deadline, what: str) -> Reply:
        form = {"query": query}
        if self.default_graph:
            form["default-graph-uri"] = self.default_graph
        reply = self._http.post(self.url, what=what, deadline=deadline, data=form,
                                headers={"Accept": ACCEPT_RESULTS})
        if not 200 <= reply.status < 300:
            raise status_error(reply, what)
        return reply


def _row_cap(reply: Reply) -> int | None:
    value = reply.headers.get(MAX_ROWS_HEADER, "").strip()
    return int(value) if value.isdigit() else None


def capped_error(url: str, received: int, expected: int | None, cap: int | None, *, fix: str = "") -> EndpointError:
    """The answer was cut by the store's row cap: say so, name the setting and what to do.

    ``expected`` is the row count the store itself gave for the full answer (when known);
    ``cap`` the cap it announced (``X-SPARQL-MaxRows``), when it did.
    """
    of = f" of the {expected} rows of the full answer" if expected is not None else ""
    said = (f" (it announced X-SPARQL-MaxRows: {cap})" if cap is not None
            else " without saying so (no X-SPARQL-MaxRows header)")
    lower = (f"[yupana.quipu] {fix}" if fix
             else "[yupana.quipu] batch_size (batched reads) or max_rows (paged discovery: at most the cap)")
    return TruncatedError(f"{url} returned only {received} rows{of}: the store caps result rows{said}. "
                                      "A partial catalogue is never used, so nothing was stored — raise the store's "
                                      f"row cap (Virtuoso: [SPARQL] ResultSetMaxRows in virtuoso.ini) or lower {lower}")


def status_error(reply: Reply, what: str, endpoint_key: str = "endpoint") -> EndpointError:
    """What a non-2xx status from a SPARQL 1.1 server means, and what to do about it."""
    status, url, body = reply.status, reply.url, reply.excerpt()
    said = f": {body}" if body else ""
    if status == 400:
        return QueryError(f"{url} rejected {what} (400 Bad Request){said} — the query or a value in it "
                                      "is not accepted by this store")
    if status in (401, 403):
        return AuthError(f"{url} refused {what} ({status}){said} — check [yupana.quipu] auth, auth_user "
                                     "and the secret (credentials_env / credentials_file)")
    if status == 404:
        return NotFound(f"{url}: not found (404) — [yupana.quipu] {endpoint_key} must be the store's "
                                     "SPARQL URL (Oxigraph: http://host:7878/query, Fuseki: …/<dataset>/sparql)")
    if status in (405, 406, 415):
        return NotAnEndpoint(f"{url} does not accept {what} as a form-encoded POST ({status}){said} — "
                                            "is this a SPARQL 1.1 endpoint? (for quipu set dialect = \"quipu\")")
    if status in (408, 504):
        return StoreTimeout(f"{url} (or a gateway in front of it) gave up on {what} ({status}){said} — "
                                        "retry later, or raise the store's query timeout")
    if status in (429, 503):
        return Busy(f"{url} is busy or unavailable ({status}){said} — retry later")
    return HTTPStatus(f"{url} failed {what} (HTTP {status}){said} — check the store's logs")
