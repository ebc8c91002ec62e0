"""A real HTTP server speaking quipu's contract over pyoxigraph (interop reference §3).

quipu itself cannot be installed here, so this server implements the parts of its HTTP
API that yupana uses, as the reference describes them:

* ``POST /query`` (JSON ``{"query", "graph"?}``; 415 without a JSON content type, 400
  plain text for malformed JSON, 400 ``{"error"}`` for a missing query or a parse error):
  W3C SPARQL JSON results when the lower-cased Accept header contains
  ``application/sparql-results+json``, otherwise the bespoke shape
  (``{"variables", "rows", "count", "truncated", "labels"}``; IRIs and plain literals as
  bare strings, typed / language literals as objects, numbers and booleans as JSON).
  Rows are capped at ``max_rows``: bespoke says ``truncated: true``, W3C drops them silently.
  Type patterns are asserted-only (pyoxigraph does no inference); when a plain
  ``?s a <Type>`` names a type with asserted subclasses, the answer carries the marker:
  the ``x-quipu-inference: withheld: <iri>, …`` header (W3C) or an ``inference`` object.
* ``POST /policy/check`` (``{"policy", "target"}``): the outcome set for the target in
  :attr:`QuipuServer.policy_outcomes`, else the policy's ``aegis:claim`` run as an ASK
  with ``$target`` replaced; 400 ``{"error"}`` when the target or a usable claim is missing.
* ``POST /knot`` (``{"turtle"}``): a write; with ``auth_token`` set it needs
  ``Authorization: Bearer <token>`` (401 otherwise), ``read_only`` makes it 403; the
  Turtle is inserted into the store.
* ``GET /health``.

Errors on demand: :meth:`QuipuServer.fail_next`. Every request is logged in
:attr:`QuipuServer.requests`.
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pyoxigraph

XSD = "http://www.w3.org/2001/XMLSchema#"
RDFS_SUBCLASS = "http://www.w3.org/2000/01/rdf-schema#subClassOf"
AEGIS = "http://aegis.gastown.local/ontology/"
_INTEGERS = {XSD + t for t in ("integer", "int", "long", "short", "byte", "nonNegativeInteger", "positiveInteger",
                               "negativeInteger", "nonPositiveInteger", "unsignedInt", "unsignedLong")}
_FLOATS = {XSD + "double", XSD + "float"}

_PREFIX = re.compile(r"PREFIX\s+([A-Za-z][\w.-]*)?:\s*<([^>]*)>", re.IGNORECASE)
_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'')
# `a` (or rdf:type) followed by whitespace and a constant: `a/rdfs:subClassOf*` and `a ?t` do not match.
_TYPE_PATTERN = re.compile(
    r"(?:(?<![\w:?$<#/.-])a|rdf:type|<http://www\.w3\.org/1999/02/22-rdf-syntax-ns#type>)\s+"
    r"(<[^>\s]*>|[A-Za-z][\w.-]*:[\w.-]*|:[\w.-]+)")


@dataclass
class Logged:
    """One request the server received."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    status: int = 0

    @property
    def json(self) -> object:
        try:
            return json.loads(self.body)
        except ValueError:
            return None


@dataclass
class PlannedError:
    status: int
    message: str
    path: str = "/query"
    times: int = 1
    plain: bool = False
    extra: dict = field(default_factory=dict)


class QuipuServer:
    def __init__(self, files: list[str] = (), *, max_rows: int = 10000, auth_token: str | None = None,
                 read_only: bool = False, graphs: dict[str, list[str]] | None = None) -> None:
        self.store = pyoxigraph.Store()
        for path in files:
            self.store.load(path=str(path), format=_format(str(path)))
        for graph, paths in (graphs or {}).items():
            for path in paths:
                self.store.load(path=str(path), format=_format(str(path)), to_graph=pyoxigraph.NamedNode(graph))
        self.max_rows = max_rows
        self.auth_token = auth_token
        self.read_only = read_only
        self.requests: list[Logged] = []
        self.policy_outcomes: dict[str, str] = {}
        self.delay_secs = 0.0
        self._planned: list[PlannedError] = []
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -----------------------------------------------------------------------

    def start(self) -> "QuipuServer":
        server = self

        class Handler(_Handler):
            quipu = server

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    @property
    def url(self) -> str:
        """The base URL (what ``[yupana.quipu] endpoint`` holds for quipu)."""
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    # -- knobs ---------------------------------------------------------------------------

    def fail_next(self, status: int, message: str = "", *, path: str = "/query", times: int = 1,
                  plain: bool = False, **extra: object) -> None:
        """Answer the next ``times`` requests to ``path`` with ``status`` and
        ``{"error": message, **extra}`` (or ``message`` as plain text)."""
        with self._lock:
            self._planned.append(PlannedError(status, message, path, times, plain, dict(extra)))

    def queries(self) -> list[str]:
        """The query texts received on /query, in order."""
        return [r.json.get("query") for r in self.requests if r.path == "/query" and isinstance(r.json, dict)]

    def _take_planned(self, path: str) -> PlannedError | None:
        with self._lock:
            for planned in self._planned:
                if planned.path == path and planned.times > 0:
                    planned.times -= 1
                    return planned
        return None

    # -- /query --------------------------------------------------------------------------

    def answer_query(self, body: dict, accept: str) -> tuple[int, dict[str, str], object]:
        query = body.get("query")
        if not isinstance(query, str):
            return 400, {}, {"error": "Invalid request: missing 'query' parameter"}
        if body.get("graph") and body.get("fork"):
            return 400, {}, {"error": "'graph' and 'fork' are mutually exclusive"}
        graph = body.get("graph")
        try:
            if graph:
                result = self.store.query(query, default_graph=pyoxigraph.NamedNode(graph))
            else:
                result = self.store.query(query)
        except (SyntaxError, ValueError) as exc:
            return 400, {}, {"error": f"SPARQL parse error: {exc}"}
        w3c = "application/sparql-results+json" in accept.lower()
        withheld = self.withheld_types(query) if not graph else []
        headers: dict[str, str] = {}
        if isinstance(result, pyoxigraph.QuerySolutions):
            variables = [v.value for v in result.variables]
            rows = []
            for solution in result:
                rows.append(solution)
                if len(rows) > self.max_rows:
                    break
            truncated = len(rows) > self.max_rows
            rows = rows[: self.max_rows]
            if w3c:
                if withheld:
                    headers["x-quipu-inference"] = "withheld: " + ", ".join(t for t, _ in withheld)
                headers["content-type"] = "application/sparql-results+json"
                bindings = [{v: _w3c(s[v]) for v in variables if s[v] is not None} for s in rows]
                return 200, headers, {"head": {"vars": variables}, "results": {"bindings": bindings}}
            doc = {"variables": variables,
                   "rows": [{v: _bespoke(s[v]) for v in variables if s[v] is not None} for s in rows],
                   "count": len(rows), "truncated": truncated, "labels": None}
        elif isinstance(result, pyoxigraph.QueryBoolean):
            if w3c:
                headers["content-type"] = "application/sparql-results+json"
                return 200, headers, {"head": {}, "boolean": bool(result)}
            doc = {"result": bool(result), "labels": None}
        else:
            triples = list(result)
            doc = {"triples": [{"subject": _bespoke(t.subject), "predicate": _bespoke(t.predicate),
                                "object": _bespoke(t.object)} for t in triples[: self.max_rows]],
                   "count": min(len(triples), self.max_rows), "truncated": len(triples) > self.max_rows,
                   "labels": None}
        if withheld:
            doc["inference"] = {"applied": False,
                                "withheldTypes": [{"type": t, "subclasses": subs} for t, subs in withheld],
                                "note": "plain type patterns are asserted-only; use a/rdfs:subClassOf* to expand"}
        return 200, headers, doc

    def withheld_types(self, query: str) -> list[tuple[str, list[str]]]:
        """Constant types of plain ``?s a <Type>`` patterns that have asserted subclasses."""
        prefixes = {name or "": iri for name, iri in _PREFIX.findall(query)}
        prefixes.setdefault("rdf", "http://www.w3.org/1999/02/22-rdf-syntax-ns#")
        body = _PREFIX.sub(" ", _STRING.sub('""', query))
        found: list[tuple[str, list[str]]] = []
        for token in _TYPE_PATTERN.findall(body):
            if token.startswith("<"):
                iri = token[1:-1]
            else:
                prefix, _, local = token.partition(":")
                if prefix not in prefixes:
                    continue
                iri = prefixes[prefix] + local
            if any(iri == t for t, _ in found):
                continue
            subs = [s["sub"].value for s in self.store.query(
                f"SELECT DISTINCT ?sub WHERE {{ ?sub <{RDFS_SUBCLASS}> <{iri}> FILTER(?sub != <{iri}>) }} ORDER BY ?sub")]
            if subs:
                found.append((iri, subs))
        return found

    # -- /policy/check and /knot ---------------------------------------------------------

    def answer_policy_check(self, body: dict) -> tuple[int, object]:
        policy, target = body.get("policy"), body.get("target")
        if not isinstance(target, str) or not target:
            return 400, {"error": "missing 'target'"}
        if target in self.policy_outcomes:
            outcome = self.policy_outcomes[target]
        else:
            if not isinstance(policy, str):
                return 400, {"error": "missing 'policy' or 'claim'"}
            rows = list(self.store.query(
                f"SELECT ?claim ?probe WHERE {{ <{policy}> <{AEGIS}claim> ?claim "
                f"OPTIONAL {{ <{policy}> <{AEGIS}evidenceProbe> ?probe }} }}"))
            if not rows:
                return 400, {"error": f"policy <{policy}> has no aegis:claim"}
            try:
                probe = rows[0]["probe"]
                if probe is not None and not bool(self.store.query(probe.value.replace("$target", f"<{target}>"))):
                    outcome = "unknown"
                else:
                    held = bool(self.store.query(rows[0]["claim"].value.replace("$target", f"<{target}>")))
                    outcome = "satisfied" if held else "unsatisfied"
            except (SyntaxError, ValueError) as exc:
                return 400, {"error": f"the claim of <{policy}> is not an ASK query: {exc}"}
        return 200, {"predicate_id": policy, "target_ref": target, "outcome": outcome,
                     "evidence_hash": "fnv1a:" + _fnv1a64(f"{policy}|{target}|{outcome}"), "tier": "committed",
                     "verifier": "quipu-test-server", "verifier_authorized": False, "signed": False,
                     "signature": None, "verifier_public_key": None}

    def answer_knot(self, headers: dict[str, str], body: dict) -> tuple[int, object]:
        if self.read_only:
            return 403, {"error": "the server is read-only", "endpoint": "/knot", "reason": "server_is_read_only"}
        if self.auth_token:
            scheme, _, token = headers.get("authorization", "").strip().partition(" ")
            if scheme.lower() != "bearer" or token.strip() != self.auth_token:
                return 401, {"error": "missing or invalid bearer token", "endpoint": "/knot",
                             "reason": "missing_or_invalid_bearer_token"}
        turtle = body.get("turtle")
        if not isinstance(turtle, str):
            return 400, {"error": "missing 'turtle'"}
        before = len(self.store)
        try:
            self.store.load(turtle.encode(), format=pyoxigraph.RdfFormat.TURTLE)
        except SyntaxError as exc:
            return 400, {"error": f"invalid Turtle: {exc}"}
        return 200, {"ok": True, "triples": len(self.store) - before}


class _Handler(BaseHTTPRequestHandler):
    quipu: QuipuServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:  # keep test output clean
        pass

    def setup(self) -> None:
        super().setup()
        # Headers and body go out in two writes; without this, Nagle + delayed ACK add ~40 ms.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def do_GET(self) -> None:
        entry = self._log(b"")
        if self.path == "/health":
            self._send(entry, 200, {"status": "ok"})
        else:
            self._send(entry, 404 if self.path not in ("/query", "/policy/check", "/knot") else 405,
                       f"no GET route {self.path}", plain=True)

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        entry = self._log(self.rfile.read(length) if length else b"")
        server = self.quipu
        if server.delay_secs:
            time.sleep(server.delay_secs)
        planned = server._take_planned(self.path)
        if planned is not None:
            payload = planned.message if planned.plain else {"error": planned.message, **planned.extra}
            return self._send(entry, planned.status, payload, plain=planned.plain)
        if self.path not in ("/query", "/policy/check", "/knot"):
            return self._send(entry, 404, f"no route {self.path}", plain=True)
        if "application/json" not in (self.headers.get("content-type") or "").lower():
            return self._send(entry, 415, "Expected request with `Content-Type: application/json`", plain=True)
        try:
            body = json.loads(entry.body)
        except ValueError as exc:
            return self._send(entry, 400, f"Failed to parse the request body as JSON: {exc}", plain=True)
        if not isinstance(body, dict):
            return self._send(entry, 400, "Failed to deserialize the JSON body: expected an object", plain=True)
        if self.path == "/query":
            status, headers, doc = server.answer_query(body, self.headers.get("accept") or "")
            return self._send(entry, status, doc, headers)
        if self.path == "/policy/check":
            status, doc = server.answer_policy_check(body)
            return self._send(entry, status, doc)
        status, doc = server.answer_knot(entry.headers, body)
        return self._send(entry, status, doc)

    def _log(self, body: bytes) -> Logged:
        entry = Logged(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body)
        self.quipu.requests.append(entry)
        return entry

    def _send(self, entry: Logged, status: int, payload: object, headers: dict[str, str] | None = None,
              plain: bool = False) -> None:
        entry.status = status
        data = payload.encode() if plain else json.dumps(payload).encode()
        headers = dict(headers or {})
        headers.setdefault("content-type", "text/plain; charset=utf-8" if plain else "application/json")
        self.send_response(status)
        for key, value in headers.items():
            self.send_header(key, value)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def _format(path: str):
    return pyoxigraph.RdfFormat.N_TRIPLES if path.endswith(".nt") else pyoxigraph.RdfFormat.TURTLE


def _w3c(term) -> dict:
    if isinstance(term, pyoxigraph.NamedNode):
        return {"type": "uri", "value": term.value}
    if isinstance(term, pyoxigraph.BlankNode):
        return {"type": "bnode", "value": term.value}
    out = {"type": "literal", "value": term.value}
    if term.language:
        out["xml:lang"] = term.language
    elif term.datatype.value != XSD + "string":
        out["datatype"] = term.datatype.value
    return out


def _bespoke(term) -> object:
    if isinstance(term, pyoxigraph.NamedNode):
        return term.value
    if isinstance(term, pyoxigraph.BlankNode):
        return "_:" + term.value
    if term.language:
        return {"value": term.value, "lang": term.language}
    datatype = term.datatype.value
    if datatype == XSD + "string":
        return term.value
    if datatype in _INTEGERS:
        return int(term.value)
    if datatype in _FLOATS:
        return float(term.value)
    if datatype == XSD + "boolean":
        return term.value in ("true", "1")
    return {"value": term.value, "datatype": datatype}


def _fnv1a64(text: str) -> str:
    value = 0xCBF29CE484222325
    for byte in text.encode():
        value = ((value ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{value:016x}"
