"""The refresh's native SHACL gate gives exactly pySHACL's results (gate_native, gate_native_check).

The reference is ``gate.validate_graph`` — pySHACL and the compile checks over an rdflib graph,
what ``yupana shapes validate`` runs — on the very triples the native gate reads."""

from __future__ import annotations

import os
import random
import shutil
from pathlib import Path

import pytest
import rdflib
from rdflib.namespace import RDF, RDFS

from yupana.endpoint.base import Term
from yupana.projection import gate, gate_native

from .helpers import (
    AEGIS, EXPOSURE, ITEMS, LANDING, MEMORY, OTHERS, PREFIXES, SELECTOR, TEXT_CLASSES, grounded, history, rule,
    structural, wire,
)
from .test_gate import BASE, COMPILE_MUTATIONS, EXTRA, MUTATIONS, as_terms
from .test_gate_chunks import catalogue

# A plain Namespace: rdflib's XSD warns whenever an unknown attribute is asked (pytest asks
# every module global for _mock_name while collecting).
XSD = rdflib.Namespace("http://www.w3.org/2001/XMLSchema#")

QUIPU = Path(os.environ.get("YUPANA_SHARED_FIXTURES", "/work/shared/fixtures")) / "quipu"
A = rdflib.Namespace(AEGIS)

EVERY_PLANE = (BASE + "\n".join(EXTRA) + ITEMS + LANDING + history(4) + OTHERS
               + 'aegis:wire_throttle a aegis:Policy ; rdfs:label "t" ; aegis:boundary "action" ; '
                 'aegis:appliesTo "a/**" ; aegis:effect "throttle" ; aegis:backoffFormula "300" .\n'
               + 'aegis:rule_sub a aegis:SubRule ; rdfs:label "s" ; aegis:regex "y" ; aegis:enforcementTier "warn" .\n'
               + "aegis:SubRule rdfs:subClassOf aegis:InternalIdentifierPattern .\n")


def catalogues() -> dict[str, rdflib.Graph]:
    """Every plane's catalogue of the tests, and quipu's own fixtures when they are here."""
    found = {"every plane": _parse(EVERY_PLANE), "text rules": _parse(catalogue(12))}
    for what, old, new, *_ in MUTATIONS + COMPILE_MUTATIONS:
        found[what] = _parse(BASE.replace(old, new, 1))
    for name in ("demo.ttl", "test-fixtures/seed-agents.ttl", "test-fixtures/seed-infra.ttl",
                 "test-fixtures/seed-knowledge.ttl"):
        if (QUIPU / name).exists():
            found["quipu " + name] = rdflib.Graph().parse(QUIPU / name, format="turtle")
    return found


def _parse(body: str) -> rdflib.Graph:
    return rdflib.Graph().parse(data=PREFIXES + body, format="turtle")


def both(graph: rdflib.Graph, shapes_dir: str | None = None) -> tuple[list[gate.ShapeResult], list[gate.ShapeResult]]:
    """(native, pySHACL's) results for the triples of ``graph`` as the store reads them."""
    triples = as_terms(graph)
    native = gate.validate(triples, shapes_dir).results
    reference = gate.validate_graph(gate.graph_from_triples(triples), shapes_dir).results
    return native, reference


CATALOGUES = catalogues()


def test_every_shape_of_shapes_dir_is_checked_natively():
    plan = gate_native.plan(gate.load_shapes())
    assert plan.fallback is None and len(plan.top) > 30
    assert all(shape.targets for shape in plan.top)


@pytest.mark.parametrize("name", sorted(CATALOGUES))
def test_each_catalogue_gives_pyshacls_results(name):
    native, reference = both(CATALOGUES[name])
    assert native == reference
    assert name.startswith(("every plane", "quipu", "text")) or reference  # every mutation has results


# ── seeded random mutations ──────────────────────────────────────────────────────────

WORDS = ["block", "warn", "deny", "throttle", "record", "live", "must-match", "must-ground", "complete", "public",
         "secret", "", " ", "a**", "[z-a]", "(?<=x)a", "src/**", "300", "exp(min(overage / 2, 3))", "MemAvailable GiB",
         "action", "tree-sitter", "root", "mount:deadbeef", "x|repo:a|cwd:b", "ci-selection-complete", "8.0", "-1"]
TYPED = [(XSD.integer, "abc"), (XSD.integer, "007"), (XSD.integer, "-5"), (XSD.anyURI, "http://x/y"),
         (XSD.decimal, "0.0"), (XSD.decimal, "8.50"), (XSD.boolean, "true"), (XSD.string, "s"), (XSD.date, "2024-13-01")]
CLASSES = ["TextRule", "InternalIdentifierPattern", "Selector", "Predicate", "Policy", "OperatingPoint", "CiMap",
           "CiJob", "LocalCommand", "WorkItem", "LandingPolicy", "RepositoryType", "CommandDiskImpactObservation"]


def mutate(graph: rdflib.Graph, rng: random.Random) -> rdflib.Graph:
    """``graph`` with one to three random changes of the kinds a store can hold."""
    out = rdflib.Graph()
    for t in graph:
        out.add(t)
    for _ in range(rng.randint(1, 3)):
        triples = sorted(out, key=lambda t: (str(t[0]), str(t[1]), str(t[2])))
        subjects = sorted({s for s, _, _ in triples}, key=str)
        s, p, o = rng.choice(triples)
        kind = rng.randrange(14)
        if kind == 0:  # drop a triple (a type, a subclass fact, a required value ...)
            out.remove((s, p, o))
        elif kind == 1:  # one more value of the same property
            out.add((s, p, rng.choice([rdflib.Literal(rng.choice(WORDS)), A[rng.choice(CLASSES).lower()], o])))
        elif kind == 2:  # a literal becomes an IRI or a blank node, and a node a literal
            out.remove((s, p, o))
            if isinstance(o, rdflib.Literal):
                out.add((s, p, rng.choice([A["x_" + str(o)[:8].replace(" ", "_")], rdflib.BNode("b" + str(rng.random())[2:8])])))
            else:
                out.add((s, p, rdflib.Literal(str(o))))
        elif kind == 3:  # a language tag
            out.remove((s, p, o))
            out.add((s, p, rdflib.Literal(str(o), lang=rng.choice(["en", "EN-gb"]))))
        elif kind == 4:  # a datatype, well- or ill-formed
            datatype, value = rng.choice(TYPED)
            out.remove((s, p, o))
            out.add((s, p, rdflib.Literal(value if rng.random() < 0.6 else str(o), datatype=datatype)))
        elif kind == 5:  # another enum word, a blank, a broken glob or regex
            out.remove((s, p, o))
            out.add((s, p, rdflib.Literal(rng.choice(WORDS))))
        elif kind == 6:  # an rdf:type or subClassOf fact goes
            facts = [t for t in triples if t[1] in (RDF.type, RDFS.subClassOf)]
            if facts:
                out.remove(rng.choice(facts))
        elif kind == 7:  # a subject gains a class
            out.add((rng.choice(subjects), RDF.type, A[rng.choice(CLASSES)]))
        elif kind == 8:  # an unexpected property (closed shapes), or a link to a non-selector
            observed = sorted(out.subjects(RDF.type, A.CommandDiskImpactObservation), key=str)
            target = rng.choice(observed if observed and rng.random() < 0.5 else subjects)
            out.add((target, rng.choice([A.argv, A.exemptionSelector, A.filePath, A.status, A.contains]),
                     rng.choice([rdflib.Literal("/dev/sda"), rng.choice(subjects)])))
        elif kind == 9:  # a blank-node subject copy (focus nodes that are blank nodes)
            b = rdflib.BNode("copy" + str(rng.randrange(1000)))
            for _, p2, o2 in out.triples((s, None, None)):
                out.add((b, p2, o2))
        elif kind == 10:  # the subject stated on another IRI (exposure, repository type)
            for _, p2, o2 in list(out.triples((s, None, None))):
                out.add((A["repo/" + str(rng.randrange(9))], p2, o2))
        elif kind >= 12:  # a glob or a regex only its compiler refuses, or one the shapes refuse too
            globs = kind == 12
            compiled = [t for t in triples if t[1] in ((A.appliesTo,) if globs else (A.regex, A.exemptPathRegex,
                                                                                   A.evidenceSource, A.gate))]
            if compiled:
                s, p, o = rng.choice(compiled)
                out.remove((s, p, o))
                out.add((s, p, rdflib.Literal(rng.choice(["[z-a]", "[z-a]/x", "a**", " "] if globs else
                                                         ["(?<=x)a", "(", "a\\1", " "]))))
        else:  # a typed number where a number goes, or a string where one does not
            out.add((s, rng.choice([A.latencyBudgetMs, A.threshold, A.observedAt, A.deltaBytes]),
                     rng.choice([rdflib.Literal(-3), rdflib.Literal("1.5", datatype=XSD.decimal), rdflib.Literal("x"),
                                 rdflib.Literal(2.5), rdflib.Literal("5", datatype=XSD.integer)])))
    return out


SEEDED = [(name, seed) for name in ("every plane", "text rules", "quipu demo.ttl") for seed in range(40)]


@pytest.mark.parametrize("name,seed", SEEDED, ids=[f"{n}-{s}" for n, s in SEEDED])
def test_mutated_catalogues_give_pyshacls_results(name, seed):
    if name not in CATALOGUES:
        pytest.skip(f"{name} is not among the shared fixtures")
    graph = mutate(CATALOGUES[name], random.Random(f"{name}/{seed}"))
    native, reference = both(graph)
    assert native == reference


def test_the_mutations_reach_every_kind_of_result():
    # so that the comparison above compares something: the mutated catalogues' results
    # cover every constraint the shapes use
    seen = set()
    for name, seed in SEEDED:
        graph = mutate(CATALOGUES[name], random.Random(f"{name}/{seed}"))
        seen |= {r.constraint for r in gate.validate(as_terms(graph)).results}
    assert {"minCount", "maxCount", "datatype", "nodeKind", "pattern", "in", "class", "node", "closed",
            "yupana:CompilesAsRE2", "yupana:CompilesAsGlob"} <= seen, seen


def test_literal_subtleties_match_pyshacl():
    body = (history(1) + MEMORY + 'aegis:diskobs_a_0 aegis:observedAt "abc"^^xsd:integer ; aegis:argv "x" .\n'
            + 'aegis:diskobs_b_0 a aegis:CommandDiskImpactObservation ; aegis:commandSignature "a:b|repo:c|cwd:d"@en ; '
            + 'aegis:filesystemIdentity "root"^^xsd:anyURI ; aegis:deltaBytes "007"^^xsd:integer ; '
            + 'aegis:observedAt "-1"^^xsd:integer .\n'
            + 'aegis:op_floor aegis:threshold "zero" .\n'
            + '_:blank a aegis:LandingPolicy ; rdfs:label "b" ; aegis:requires "local-commands-pass"@en .\n'
            + 'aegis:repo_x aegis:exposure "public"^^rdf:langString .\n'
            + 'aegis:notrepo aegis:exposure "internal" .\n_:somerepo aegis:exposure "internal" .\n'
            + 'aegis:diskobs_a_0 aegis:deltaBytes "+0012"^^xsd:integer .\n'
            + 'aegis:policy_memory aegis:effect "0012"^^xsd:integer ; aegis:latencyBudgetMs "-05"^^xsd:integer .\n'
            + "aegis:cimap_1 a aegis:CiMap ; aegis:coverage aegis:complete ; aegis:ciJob \"job\" .\n")
    native, reference = both(_parse(body))
    assert native == reference
    assert {"datatype", "closed", "pattern", "in", "minInclusive", "minExclusive", "nodeKind", "class"} <= {
        r.constraint for r in reference}


def test_lexical_forms_as_the_store_sends_them_match_pyshacl():
    # The store sends "0012"^^xsd:integer as written; rdflib (and so pySHACL's report) holds
    # it as "12", and "x"^^xsd:string as the plain "x".
    graph = _parse(MEMORY + history(1))
    triples = [t for t in as_terms(graph) if t[:2] not in ((AEGIS + "policy_memory", AEGIS + "effect"),
                                                           (AEGIS + "diskobs_a_0", AEGIS + "deltaBytes"))]
    integer, string = str(XSD.integer), str(XSD.string)
    triples += [(AEGIS + "policy_memory", AEGIS + "effect", Term("literal", "0012", integer, None)),
                (AEGIS + "policy_memory", AEGIS + "latencyBudgetMs", Term("literal", "-05", integer, None)),
                (AEGIS + "policy_memory", AEGIS + "verificationPoint", Term("literal", "PAG", string, None)),
                (AEGIS + "policy_memory", AEGIS + "verificationPoint", Term("literal", "PAG", None, None)),
                (AEGIS + "diskobs_a_0", AEGIS + "deltaBytes", Term("literal", "+0012", integer, None)),
                (AEGIS + "diskobs_a_0", AEGIS + "deltaBytes", Term("literal", "12", integer, None))]
    native = gate.validate(triples).results
    reference = gate.validate_graph(gate.graph_from_triples(triples)).results
    assert native == reference
    assert ("aegis:effect", "12") in {(r.path, r.value) for r in reference}
    assert not any(r.path in ("aegis:deltaBytes", "aegis:verificationPoint") for r in reference)  # one value each


# ── shapes the plan cannot take ──────────────────────────────────────────────────────

EXTRA_SHAPES = """
@prefix sh: <http://www.w3.org/ns/shacl#> .
@prefix aegis: <http://aegis.gastown.local/ontology/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .

aegis:EitherLabelShape a sh:NodeShape ;
    sh:targetClass aegis:Selector ;
    sh:or ( [ sh:path rdfs:label ; sh:minCount 1 ] [ sh:path aegis:name ; sh:minCount 2 ] ) ;
    sh:message "a selector has a label or two names" .

aegis:UnsaidShape a sh:NodeShape ;
    sh:targetClass aegis:Policy ;
    sh:property [ sh:path rdfs:label ; sh:maxCount 0 ] .

aegis:ClosedMapShape a sh:NodeShape ;
    sh:targetClass aegis:CiMap ;
    sh:closed true ;
    sh:property [ sh:path aegis:coverage ; sh:message "coverage" ] , [ sh:path aegis:ciJob ; sh:message "jobs" ] ;
    sh:message "a CI map says nothing else" .

aegis:LinkedSelectorShape a sh:NodeShape ;
    sh:targetClass aegis:Policy ;
    sh:property [ sh:path aegis:selector ; sh:node aegis:SelectorWarnShape ; sh:message "the selector warns" ] .

aegis:SelectorWarnShape a sh:NodeShape ;
    sh:property [ sh:path aegis:language ; sh:minCount 1 ; sh:severity sh:Warning ; sh:message "no language" ] .

aegis:TwoSaidShape a sh:NodeShape ;
    sh:targetClass aegis:CiJob ;
    sh:property [ sh:path aegis:name ; sh:maxCount 0 ; sh:message "no name"@en , "kein Name"@de ] .

aegis:QuietShape a sh:NodeShape ;
    sh:targetClass aegis:NothingHere ;
    sh:property [ sh:path rdfs:label ; sh:minCount 3 ; sh:datatype rdfs:Resource ] ;
    sh:deactivated false .
"""


@pytest.fixture
def mixed_shapes(tmp_path):
    shapes = tmp_path / "shapes"
    shutil.copytree(gate.default_shapes_dir(), shapes)
    (shapes / "zz-extra.ttl").write_text(EXTRA_SHAPES)
    return str(shapes)


def test_shapes_beyond_the_plan_are_validated_by_pyshacl_and_the_report_is_pyshacls(mixed_shapes, monkeypatch):
    plan = gate_native.plan(gate.load_shapes(mixed_shapes))
    held = {str(s) for s in plan.fallback.subjects(RDF.type, rdflib.URIRef(gate.SH + "NodeShape"))}
    assert held == {AEGIS + "EitherLabelShape", AEGIS + "UnsaidShape", AEGIS + "QuietShape", AEGIS + "TwoSaidShape"}
    assert len(plan.top) > 30  # the shipped shapes stay native
    calls = []
    real = gate._pyshacl
    monkeypatch.setattr(gate, "_pyshacl", lambda data, shapes: calls.append(len(shapes)) or real(data, shapes))
    graph = mutate(CATALOGUES["every plane"], random.Random(0))
    graph.add((A.cimap_main, A.note, rdflib.Literal("x")))
    native = gate.validate(as_terms(graph), mixed_shapes).results
    assert len(calls) == 1 and calls[0] < 100  # pySHACL saw those shapes only, not the shipped ones
    reference = gate.validate_graph(gate.graph_from_triples(as_terms(graph)), mixed_shapes).results
    assert native == reference
    assert {r.shape for r in reference if r.constraint == "or"} == {"aegis:EitherLabelShape"}
    assert {(r.path, r.value) for r in reference if r.shape == "aegis:ClosedMapShape"} == {
        ("rdf:type", AEGIS + "CiMap"), ("aegis:note", "x")}  # native: rdf:type is not ignored here
    # native too: a warning of the shape sh:node names fails the sh:node constraint
    assert (AEGIS + "policy_lsp", "node", "violation") in {(r.focus, r.constraint, r.severity) for r in reference}
    assert {r.message for r in reference if r.shape == "aegis:TwoSaidShape"} == {"kein Name; no name"}
    unsaid = [r for r in reference if r.shape == "aegis:UnsaidShape"]
    assert unsaid and all(r.message.startswith("More than 0 values") for r in unsaid)  # pySHACL's own message


def test_pyshacl_is_not_run_when_no_shape_beyond_the_plan_has_a_focus_node(mixed_shapes, monkeypatch):
    calls = []
    monkeypatch.setattr(gate, "_pyshacl", lambda data, shapes: calls.append(1) or [])
    triples = as_terms(_parse(TEXT_CLASSES + rule() + grounded() + EXPOSURE))
    report = gate.validate(triples, mixed_shapes)
    assert calls == [] and report.conforms and report.results == []
    gate.validate(as_terms(_parse(structural() + wire() + SELECTOR)), mixed_shapes)
    assert calls == [1]  # policies and selectors are the extra shapes' focus nodes


def test_the_embedded_store_holds_the_literals_exactly_as_read():
    # gate_targets loads the triples as N-Triples text (blank nodes take the Quad route):
    # quotes, backslashes, line breaks, language tags and datatypes arrive unchanged.
    import pyoxigraph

    from yupana.projection import gate_targets

    values = ['a "quoted" \\d+ back\\slash', "two\nlines\r\n", "tab\there", "é ünï \u2028", "\\u0041", ""]
    triples = [(AEGIS + f"s{i}", AEGIS + "p", Term("literal", v, str(XSD.string), None)) for i, v in enumerate(values)]
    triples += [(AEGIS + "t", AEGIS + "p", Term("literal", "x", None, "en-GB")),
                (AEGIS + "t", AEGIS + "p", Term("literal", "007", str(XSD.integer), None)),
                (AEGIS + "t", AEGIS + "q", Term("uri", AEGIS + "u", None, None))]
    fast, slow = pyoxigraph.Store(), pyoxigraph.Store()
    fast.load(gate_targets._ntriples(triples), format=pyoxigraph.RdfFormat.N_TRIPLES)
    slow.extend(gate_targets._quads(triples))
    assert set(fast) == set(slow) and len(fast) == len(triples)
    with pytest.raises(ValueError):
        gate_targets._ntriples([("_:b", AEGIS + "p", Term("uri", AEGIS + "u", None, None))])
