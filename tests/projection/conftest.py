"""Helpers for projection tests: small Turtle catalogues in the embedded store."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from yupana.endpoint.base import Deadline, EndpointError, SelectResult
from yupana.endpoint.embedded import EmbeddedStore
from yupana.projection.refresh import Projection, project

PREFIXES = """\
@prefix rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
@prefix aegis: <http://aegis.gastown.local/ontology/> .
"""
AEGIS = "http://aegis.gastown.local/ontology/"

_counter = itertools.count()


class Recording(EmbeddedStore):
    """The embedded store, remembering every query text it was sent (the wire text)."""

    def __init__(self, files, identity):
        super().__init__(files, identity)
        self.sent: list[str] = []

    def select(self, query, deadline):
        self.sent.append(query)
        return super().select(query, deadline)


class Capped(Recording):
    """The embedded store behaving as a transport with a row cap: an answer of ``cap`` rows
    or more raises ``truncated``, as the HTTP transports do at the server's cap."""

    cap = 10000

    def select(self, query, deadline):
        result = super().select(query, deadline)
        if len(result.rows) >= self.cap:
            raise EndpointError("truncated", f"{len(result.rows)} rows reached the cap of {self.cap}")
        return result


class Failing(Recording):
    """The embedded store, failing every query that contains ``marker`` (for non-fatal planes)."""

    marker = "\x00"
    kind = "http"

    def select(self, query, deadline):
        if self.marker in query:
            self.sent.append(query)
            raise EndpointError(self.kind, "HTTP 500 from the store")
        return super().select(query, deadline)


class Noting(Recording):
    """The embedded store, attaching a quipu-style withheld-inference notice to type queries."""

    def select(self, query, deadline):
        result = super().select(query, deadline)
        if "a aegis:WorkItem" in query:
            return SelectResult(result.variables, result.rows,
                                [f"quipu withheld subclass inference for {AEGIS}WorkItem"])
        return result


def write_ttl(directory: Path, body: str) -> Path:
    path = directory / f"catalogue-{next(_counter)}.ttl"
    path.write_text(PREFIXES + body, encoding="utf-8")
    return path


@pytest.fixture
def store(tmp_path: Path):
    """Factory: ``store(turtle, cls=Recording)`` -> an embedded store over that Turtle."""

    def make(body: str, cls=Recording):
        path = write_ttl(tmp_path, body)
        return cls([str(path)], f"file:{path}")

    return make


@pytest.fixture
def projected(store):
    """Factory: ``projected(turtle, env=None, **quipu)`` -> Projection of that Turtle."""

    def run(body: str, env: dict | None = None, cls=Recording, **quipu) -> Projection:
        return project(store(body, cls), quipu, Deadline(30), env=env or {})

    return run


# Reusable catalogue pieces ---------------------------------------------------------------

STRUCTURAL = """
aegis:sel_comments a aegis:Selector ; aegis:name "comments" ;
    aegis:evidenceSource "(line_comment) @c" ; aegis:language "rust" ; aegis:tier "tree-sitter" .
aegis:pred_ticket a aegis:Predicate ; aegis:name "ticket" ;
    aegis:evidenceSource "\\\\b[A-Z]+-[0-9]+\\\\b" ; aegis:matchType "must-not-match" .
aegis:policy_ticket a aegis:Policy ; rdfs:label "no-ticket" ; aegis:boundary "action" ;
    aegis:selector aegis:sel_comments ; aegis:predicate aegis:pred_ticket {extra} .
"""


def structural(extra: str = "", selector_extra: str = "", predicate_extra: str = "") -> str:
    """A one-policy structural catalogue; ``extra`` is appended to the policy (``; …``)."""
    body = STRUCTURAL.replace("{extra}", extra)
    if selector_extra:
        body = body.replace('aegis:tier "tree-sitter" .', f'aegis:tier "tree-sitter" {selector_extra} .')
    if predicate_extra:
        body = body.replace('aegis:matchType "must-not-match" .', f'aegis:matchType "must-not-match" {predicate_extra} .')
    return body


TEXT_CLASSES = """
aegis:InternalIdentifierPattern rdfs:subClassOf aegis:TextRule .
"""
