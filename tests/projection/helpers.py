"""Helpers for projection tests: store classes and small Turtle catalogues for every plane."""

from __future__ import annotations

import itertools
from pathlib import Path

from yupana.endpoint.base import KINDS, SelectResult, TruncatedError
from yupana.endpoint.embedded import EmbeddedStore

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
            raise TruncatedError(f"{len(result.rows)} rows reached the cap of {self.cap}")
        return result


class Failing(Recording):
    """The embedded store, failing every query that contains ``marker`` (for non-fatal planes)."""

    marker = "\x00"
    kind = "http"

    def select(self, query, deadline):
        if self.marker in query:
            self.sent.append(query)
            raise KINDS[self.kind]("HTTP 500 from the store")
        return super().select(query, deadline)


def capped(cap: int) -> type:
    """A :class:`Capped` store class whose transport cap is ``cap`` rows."""
    return type("CappedAt", (Capped,), {"cap": cap})


def failing(marker: str, kind: str = "http") -> type:
    """A :class:`Failing` store class that fails queries containing ``marker``."""
    return type("FailingOn", (Failing,), {"marker": marker, "kind": kind})


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

MEMORY = """
aegis:sel_shell a aegis:Selector ; aegis:name "shell" ; aegis:evidenceSource "argv" ;
    aegis:language "shell" ; aegis:tier "live" .
aegis:pred_heavy a aegis:Predicate ; aegis:name "heavy" ;
    aegis:evidenceSource "\\\\bcargo\\\\s+(build|test)\\\\b" ; aegis:matchType "must-not-match" .
aegis:op_floor a aegis:OperatingPoint ; aegis:kind "deterministic_threshold" ;
    aegis:threshold 8.0 ; aegis:calibrationBasis "MemAvailable GiB" .
aegis:policy_memory a aegis:Policy ; rdfs:label "build-memory-floor" ; aegis:boundary "action" ;
    aegis:selector aegis:sel_shell ; aegis:predicate aegis:pred_heavy ; aegis:operatingPoint aegis:op_floor ;
    aegis:effect "deny" ; aegis:constraintClass "hard" ; aegis:verificationPoint "PAG" .
"""

WIRE_TTL = """
aegis:wire_auth a aegis:Policy ; rdfs:label "auth-boundary" ; aegis:boundary "action" ;
    aegis:appliesTo "src/auth/**" ; aegis:effect "deny" .
"""

OTHERS = """
aegis:pred_claim a aegis:Predicate ; aegis:name "claim" ; aegis:evidenceSource "x" ; aegis:matchType "must-ground" .
aegis:policy_claim a aegis:Policy ; rdfs:label "claim" ; aegis:boundary "action" ; aegis:predicate aegis:pred_claim .
aegis:policy_empty a aegis:Policy ; rdfs:label "empty" ; aegis:boundary "action" .
aegis:sel_lsp a aegis:Selector ; aegis:name "lsp" ; aegis:evidenceSource "q" ; aegis:tier "lsp" .
aegis:policy_lsp a aegis:Policy ; rdfs:label "lsp" ; aegis:boundary "action" ; aegis:selector aegis:sel_lsp ;
    aegis:predicate aegis:pred_claim .
aegis:policy_transition a aegis:Policy ; rdfs:label "transition" ; aegis:boundary "transition" ;
    aegis:appliesTo "x/**" .
aegis:policy_untyped rdfs:label "untyped" ; aegis:boundary "action" ; aegis:appliesTo "x/**" .
"""

def rule(extra: str = "", tier: str = "block", cls: str = "aegis:InternalIdentifierPattern") -> str:
    return TEXT_CLASSES + f"""
aegis:rule_no_hostnames a {cls} ; rdfs:label "no internal hostnames" ;
    aegis:regex "\\\\b[a-z0-9-]+\\\\.corp\\\\.example\\\\b" ; aegis:enforcementTier "{tier}" {extra} .
"""

SELECTOR = """
aegis:sel_fixtures a aegis:Selector ; aegis:name "guard-fixtures" ;
    aegis:evidenceSource "the guard's own fixtures" ;
    aegis:exemptPathRegex "^tests/fixtures/" , "^src/guard/patterns\\\\.rs$" .
"""

def wire(extra: str = "", effect: str = '"deny"') -> str:
    return f"""
aegis:wire_auth a aegis:Policy ; rdfs:label "auth-boundary" ; aegis:boundary "action" ;
    aegis:appliesTo "src/auth/**" , "src/login.rs" ; aegis:effect {effect} ;
    rdfs:comment "auth changes need the security workflow" {extra} .
"""

def grounded(extra: str = "", match_type: str = "must-not-ground") -> str:
    return f"""
aegis:pred_grounded a aegis:Predicate ; aegis:name "no-fabricated-ids" ; aegis:evidenceSource "graph:work-item-id-set" ;
    aegis:candidateSource "token" ;
    aegis:groundingQuery "SELECT ?id WHERE {{ ?w a aegis:WorkItem ; aegis:identifier ?id }}" ;
    aegis:matchType "{match_type}" {extra} .
aegis:pred_citation a aegis:Predicate ; aegis:name "citation" ; aegis:candidateSource "citation" ;
    aegis:groundingQuery "q" ; aegis:matchType "must-ground" .
"""

CI = """
aegis:cimap_main a aegis:CiMap ; aegis:coverage "complete" ; aegis:ciJob aegis:cijob_unit , aegis:cijob_lint .
aegis:cijob_unit a aegis:CiJob ; aegis:name "unit-tests" ; rdfs:label "Unit tests" ; aegis:localCommand aegis:cmd_pytest .
aegis:cijob_lint a aegis:CiJob ; aegis:name "lint" ; rdfs:label "Lint" ; aegis:localCommand aegis:cmd_ruff , aegis:cmd_pytest .
aegis:cmd_pytest a aegis:LocalCommand ; aegis:command "pytest -q" ; aegis:appliesTo "src/**" , "tests/**" .
aegis:cmd_ruff a aegis:LocalCommand ; aegis:command "ruff check" ; aegis:appliesTo "**/*.py" .
"""

ITEMS = """
aegis:bead_1 a aegis:WorkItem ; aegis:identifier "QUIP-12" .
aegis:bead_2 a aegis:WorkItem ; aegis:identifier "QUIP-7" .
aegis:bead_3 a aegis:WorkItem ; aegis:identifier "aegis-0upyu" .
aegis:bead_4 a aegis:Bead ; aegis:identifier "NOT-1" .
aegis:epic_1 aegis:identifier "EPIC-1" ; aegis:contains aegis:bead_1 , aegis:bead_2 .
aegis:epic_0 aegis:identifier "EPIC-0" ; aegis:contains aegis:bead_2 .
aegis:commit_a aegis:implements aegis:bead_1 ; aegis:modifies aegis:file_x , aegis:file_y .
aegis:commit_b aegis:implements aegis:bead_1 ; aegis:modifies aegis:file_x .
aegis:file_x aegis:filePath "src/x.rs" .
aegis:file_y aegis:filePath "src/y.rs" .
"""
EXPOSURE = """
aegis:repo_widgets aegis:exposure "public" ; rdfs:comment "open source" , "since 2024" .
aegis:repo_infra a aegis:GitRepo ; aegis:exposure "internal" .
"""
LANDING = """
aegis:landing_strict a aegis:LandingPolicy ; rdfs:label "strict" ;
    aegis:requires "ci-selection-complete" , "local-commands-pass" .
aegis:landing_service a aegis:LandingPolicy ; rdfs:label "service" ; aegis:requires "ci-selection-complete" .
aegis:repotype_service a aegis:RepositoryType ; aegis:landingPolicy aegis:landing_service .
aegis:repotype_bare a aegis:RepositoryType .
aegis:repo_widgets aegis:landingPolicy aegis:landing_strict ; aegis:repositoryType aegis:repotype_service .
aegis:repo_infra aegis:repositoryType aegis:repotype_service .
aegis:repo_scratch aegis:repositoryType aegis:repotype_bare .
"""
WIRED = {"SHANTY_ROOT": "/srv/shanty", "SHANTY_AGENT": "polecat-3"}


def observations(sig: str, fs: str, samples: list[tuple[int, int]], tag: str) -> str:
    """Disk-impact observations for one key: ``samples`` are (observedAt, deltaBytes)."""
    return "".join(
        f"aegis:diskobs_{tag}_{i} a aegis:CommandDiskImpactObservation ; aegis:commandSignature \"{sig}\" ; "
        f"aegis:filesystemIdentity \"{fs}\" ; aegis:deltaBytes {delta} ; aegis:observedAt {at} .\n"
        for i, (at, delta) in enumerate(samples)
    )


def history(n_a: int = 130) -> str:
    """Key A: ``n_a`` samples (time 1000+i, delta i MB); key B: three samples."""
    a = observations("cargo:build|repo:git|cwd:repo-root", "mount:5d41402abc4b",
                     [(1_000 + i, i * 1_000_000) for i in range(n_a)], "a")
    b = observations("docker:build|repo:git|cwd:subdir", "root", [(50, 7), (60, -3), (55, 100)], "b")
    return a + b


def many_rules(n: int) -> str:
    """``n`` minimal text rules of the subclass."""
    return TEXT_CLASSES + "\n".join(
        f'aegis:rule_{i:05d} a aegis:InternalIdentifierPattern ; rdfs:label "r{i}" ; aegis:regex "x{i}" ; '
        f'aegis:enforcementTier "warn" .' for i in range(n))
