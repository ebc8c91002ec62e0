"""quipu's native dialect: ``POST {endpoint}/query`` with a JSON body ``{"query": …}``.

quipu answers a query in one of two shapes (interop reference §3.1):

* W3C (``Accept: application/sparql-results+json``): standard SPARQL JSON results, typed
  terms; rows past the server's cap are dropped **silently**; withheld subclass
  inference is reported in the ``x-quipu-inference`` response header.
* bespoke (no standard Accept): ``{"variables", "rows", "count", "truncated", …}``, where
  IRIs and plain literals are both bare strings, so an IRI cannot be told from a string.

Rule used here: SELECT and ASK are always read in the W3C shape (typed terms, no
guessing). The bespoke shape is used for one thing only: when a W3C answer has as many
rows as the server's cap (``[yupana.quipu] max_rows``, which must not exceed quipu's
``[quipu.search] max_sparql_rows``), the same query is asked again in the bespoke shape,
whose ``truncated`` flag says whether rows were dropped. A truncated answer is a failed
read (EndpointError ``truncated``), never a short catalogue.

quipu's error bodies ``{"error": …}`` with 400/403/408/422 become errors that say what
happened. Extras: :meth:`QuipuEndpoint.policy_check` (``/policy/check``) and
:meth:`QuipuEndpoint.write_turtle` (``/knot``, bearer token).
"""

from __future__ import annotations

from yupana.endpoint.auth import Credentials
from yupana.endpoint.base import ASK, POLICY_CHECK, SELECT, WRITE, Deadline, SelectResult
from yupana.endpoint.errors import (AuthError, BadResponse, Busy, EndpointError, HTTPStatus, NotFound, QueryError,
                                    StoreTimeout, TruncatedError)
from yupana.endpoint.http import HttpEndpoint, Reply, parse_json
from yupana.endpoint.results import parse_boolean, parse_select

ACCEPT_RESULTS = "application/sparql-results+json"
ACCEPT_BESPOKE = "application/json"
INFERENCE_HEADER = "x-quipu-inference"


class QuipuEndpoint(HttpEndpoint):
    dialect = "quipu"
    capabilities = frozenset({SELECT, ASK, WRITE, POLICY_CHECK})

    def __init__(self, url: str, *, graph: str | None = None, max_rows: int = 10000,
                 connect_timeout: float = 2.0, request_timeout: float = 2.0,
                 credentials: Credentials | None = None) -> None:
        self.url = url.rstrip("/")
        self.identity = self.url
        self.graph = graph or None
        self.max_rows = max_rows
        self._connect(connect_timeout, request_timeout, credentials)

    # -- reads ---------------------------------------------------------------------------

    def select(self, query: str, deadline: Deadline) -> SelectResult:
        reply = self._post_query(query, deadline, ACCEPT_RESULTS, "a SPARQL query")
        if "sparql-results+json" not in reply.content_type:
            raise BadResponse(f"{reply.url}: quipu answered a SELECT in {reply.content_type or 'an unnamed type'} "
                                            "instead of application/sparql-results+json — is this quipu, and does it "
                                            "support W3C negotiation? (for a SPARQL 1.1 store set dialect = \"sparql11\")")
        result = parse_select(parse_json(reply, "a SPARQL query"), reply.url)
        withheld = parse_inference_header(reply.headers.get(INFERENCE_HEADER, ""))
        if withheld:
            result.notices.append(withheld_notice(withheld))
        if len(result.rows) >= self.max_rows:
            self._refuse_if_truncated(query, deadline, len(result.rows))
        return result

    def ask(self, query: str, deadline: Deadline) -> bool:
        """An ASK query's answer."""
        reply = self._post_query(query, deadline, ACCEPT_RESULTS, "an ASK query")
        doc = parse_json(reply, "an ASK query")
        if isinstance(doc, dict) and "result" in doc and "boolean" not in doc:
            doc = {"boolean": doc["result"]}  # bespoke fallback
        return parse_boolean(doc, reply.url)

    def probe(self, deadline: Deadline) -> bool:
        """Whether this URL answers like quipu: a bespoke ``{"result": bool}`` to ``ASK {}``.
        Used by dialect detection; transport failures raise, a foreign answer is False."""
        reply = self._http.post(self.url + "/query", what="the quipu dialect probe", deadline=deadline,
                                json={"query": "ASK {}"}, headers={"Accept": ACCEPT_BESPOKE})
        if reply.status != 200:
            return False
        try:
            doc = parse_json(reply, "the quipu dialect probe")
        except EndpointError:
            return False
        return isinstance(doc, dict) and isinstance(doc.get("result"), bool)

    def _refuse_if_truncated(self, query: str, deadline: Deadline, seen: int) -> None:
        reply = self._post_query(query, deadline, ACCEPT_BESPOKE, "the truncation check")
        doc = parse_json(reply, "the truncation check")
        if not isinstance(doc, dict) or not isinstance(doc.get("truncated"), bool):
            raise TruncatedError(f"{reply.url}: the answer has {seen} rows, the server's cap "
                                             f"([yupana.quipu] max_rows = {self.max_rows}), and quipu did not say whether "
                                             "rows were dropped; nothing was read — lower [yupana.quipu] batch_size")
        if doc["truncated"]:
            raise TruncatedError(f"{reply.url}: quipu dropped rows past its cap of {seen} "
                                             "([quipu.search] max_sparql_rows); a partial catalogue is never used, so "
                                             "nothing was read — lower [yupana.quipu] batch_size, or raise the cap on "
                                             "the server")

    def _post_query(self, query: str, deadline: Deadline, accept: str, what: str) -> Reply:
        body: dict[str, object] = {"query": query}
        if self.graph:
            body["graph"] = self.graph
        reply = self._http.post(self.url + "/query", what=what, deadline=deadline, json=body,
                                headers={"Accept": accept, "x-quipu-client": "yupana"})
        if reply.status != 200:
            raise quipu_error(reply, what)
        return reply

    # -- extras --------------------------------------------------------------------------

    def policy_check(self, policy_iri: str, target_iri: str, deadline: Deadline) -> dict[str, object]:
        """quipu's governed check (``POST /policy/check``): the reply object, with
        ``outcome`` in satisfied | unsatisfied | unknown."""
        reply = self._http.post(self.url + "/policy/check", what="the policy check", deadline=deadline,
                                json={"policy": policy_iri, "target": target_iri},
                                headers={"Accept": ACCEPT_BESPOKE, "x-quipu-client": "yupana"})
        if reply.status != 200:
            raise quipu_error(reply, "the policy check")
        doc = parse_json(reply, "the policy check")
        if not isinstance(doc, dict):
            raise BadResponse(f"{reply.url}: the policy check answered {type(doc).__name__}, not an object")
        return doc

    def write_triples(self, prefixes: dict[str, str], triples: str, graph: str | None, deadline: Deadline) -> None:
        """Through ``POST /knot`` as Turtle, with the write token (:func:`token_for_writes`);
        quipu has one graph per store, so ``graph`` is not sent."""
        from yupana.endpoint.auth import token_for_writes

        head = "".join(f"@prefix {name}: <{iri}> .\n" for name, iri in prefixes.items())
        self.write_turtle(head + "\n" + triples, token_for_writes(), deadline)

    def write_turtle(self, turtle: str, token: str | None, deadline: Deadline) -> dict[str, object]:
        """Insert Turtle through ``POST /knot`` with ``Authorization: Bearer <token>``
        (no header when the token is empty: a server without auth_token accepts that)."""
        reply = self._http.post(self.url + "/knot", what="the write", deadline=deadline, json={"turtle": turtle},
                                headers={"Accept": ACCEPT_BESPOKE, "x-quipu-client": "yupana"},
                                authorization=f"Bearer {token}" if token else "")
        if not 200 <= reply.status < 300:
            raise quipu_error(reply, "the write")
        doc = parse_json(reply, "the write") if reply.body.strip() else {}
        return doc if isinstance(doc, dict) else {"reply": doc}


def parse_inference_header(value: str) -> list[str]:
    """The type IRIs in ``x-quipu-inference: withheld: <iri>, <iri>`` (brackets optional)."""
    value = value.strip()
    if not value.lower().startswith("withheld"):
        return []
    iris = value.split(":", 1)[1] if ":" in value else ""
    return [part.strip().strip("<>").strip() for part in iris.split(",") if part.strip().strip("<>").strip()]


def withheld_notice(types: list[str]) -> str:
    shown = ", ".join(f"<{t}>" for t in types)
    return (f"quipu withheld subclass inference for {shown}: a plain `?x a <Type>` pattern matched only resources "
            "asserted to have exactly that type; write `?x a/rdfs:subClassOf* <Type>` to include subclasses")


def quipu_error(reply: Reply, what: str) -> EndpointError:
    """What a non-200 answer from quipu means. quipu's own errors are ``{"error": …}``;
    its body extractor answers 400/415 in plain text."""
    status, url = reply.status, reply.url
    message = reply.excerpt()
    reason = ""
    try:
        import json

        doc = json.loads(reply.body)
        if isinstance(doc, dict) and isinstance(doc.get("error"), str):
            message = doc["error"] if len(doc["error"]) <= 300 else doc["error"][:300] + "…"
            message = reply.scrub(message) if callable(reply.scrub) else message
            reason = str(doc.get("reason") or "")
    except (ValueError, RecursionError):  # not quipu's own error: the excerpt says what came
        pass
    said = f": {message}" if message else ""
    if status == 401:
        return AuthError(f"{url} refused {what}: missing or invalid bearer token (401){said} — set "
                                     "$QUIPU_AUTH_TOKEN, $QUIPU_AUTH_TOKEN_FILE or ~/.config/quipu/token to the "
                                     "server's [quipu.server] auth_token")
    if status == 403 and reason == "server_is_read_only":
        return AuthError(f"{url} is read-only ([quipu.server] read_only = true) and refused {what}{said}")
    if status == 403:
        return AuthError(f"{url}: quipu's policy denied {what} (403 PolicyDenied){said}")
    if status == 400:
        return QueryError(f"{url} rejected {what} (400){said} — fix the query or the value it names")
    if status == 408:
        return StoreTimeout(f"{url} stopped {what} at its server-side query timeout (408, "
                                        f"[quipu.search] query_timeout_ms){said} — lower [yupana.quipu] batch_size, "
                                        "or raise the server's budget")
    if status == 422:
        return QueryError(f"{url} refused {what} as too complex (422: an intermediate join exceeded "
                                      f"[quipu.search] max_join_rows){said} — lower [yupana.quipu] batch_size, or "
                                      "raise max_join_rows on the server")
    if status == 404:
        return NotFound(f"{url}: not found (404) — for quipu, [yupana.quipu] endpoint is the base URL "
                                     "(http://host:3030, without /query); for another store set dialect = \"sparql11\"")
    if status == 415:
        return BadResponse(f"{url} refused the request body (415){said}")
    if status in (429, 503):
        return Busy(f"{url} is busy or unavailable ({status}){said} — retry later")
    return HTTPStatus(f"{url} failed {what} (HTTP {status}){said} — check quipu's logs")
