"""The shapes' SPARQL targets, answered by the embedded store for one set of triples. Cold path.

A SHACL-AF SPARQL target (``sh:target [ a sh:SPARQLTarget ; sh:select "…" ]``) is, by its
definition, the ``?this`` bindings of its SELECT over the data graph. pySHACL runs each one
through rdflib's SPARQL engine, which evaluates a ``FILTER NOT EXISTS`` or a property path
once per candidate row: for 10 000 text rules the targets alone took ~1.9 s of a ~4.7 s
gate, and a refresh validates in chunks, so every chunk paid them again.

:func:`resolved` answers those SELECTs with pyoxigraph (the embedded store's engine: the
same SPARQL, ~100x faster here) over exactly the triples to validate, and gives pySHACL a
copy of the shapes in which each such target is replaced by the ``sh:targetNode`` s it
selected: the same focus nodes, so the same results (``tests/projection/test_gate.py``
compares both ways on every plane's catalogue and mutations). The constraints are still
checked by pySHACL. ``yupana shapes validate`` keeps pySHACL's own evaluation.
"""

from __future__ import annotations

from typing import Any

from collections.abc import Callable, Iterable

from yupana.endpoint.base import Term

SH = "http://www.w3.org/ns/shacl#"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"

#: Per shapes graph (by identity): ``[(shape, target node, SELECT text with its prefixes)]``.
_PLANS: dict[int, tuple[Any, list[tuple[Any, Any, str]]]] = {}


def resolved(shapes: Any, triples: Iterable[tuple[str, str, Term]], to_rdflib: Callable[[Any], Any],
             selection: dict[Any, list[str | Term]] | None = None) -> Any:
    """A copy of the rdflib ``shapes`` graph whose SPARQL targets are ``sh:targetNode`` s
    selected from ``triples`` (``shapes`` itself when it has no SPARQL target); ``to_rdflib``
    makes the rdflib term of an IRI, a ``_:`` label or a :class:`Term`, as the data graph's;
    ``selection``: :func:`selected` 's answer for these triples, when the caller has it."""
    plan = _plan(shapes)
    if not plan:
        return shapes
    import rdflib

    if selection is None:
        selection = selected(shapes, triples)
    out = rdflib.Graph()
    out.namespace_manager = shapes.namespace_manager
    targets = {target for _, target, _ in plan}
    sh_target = rdflib.URIRef(SH + "target")
    for triple in shapes:
        if triple[1] == sh_target and triple[2] in targets:
            continue
        out.add(triple)
    target_node = rdflib.URIRef(SH + "targetNode")
    for shape, target, _ in plan:
        for node in selection.get(target, ()):
            out.add((shape, target_node, to_rdflib(node)))
    return out


def selected(shapes: Any, triples: Iterable[tuple[str, str, Term]]) -> dict[Any, list[str | Term]]:
    """Each SPARQL target of ``shapes`` (its rdflib node) → the ``?this`` nodes its SELECT
    selects from ``triples`` (an IRI, a ``_:`` label or a literal :class:`Term`), every
    SELECT answered by one pyoxigraph store holding the triples. ValueError or SyntaxError
    when a SELECT does not run."""
    plan = _plan(shapes)
    if not plan:
        return {}
    import pyoxigraph

    triples = triples if isinstance(triples, list) else list(triples)
    store = pyoxigraph.Store()
    try:  # N-Triples text parsed by the store: ~3x faster than a Quad object a triple (the
        # parser renames blank nodes, so triples with one take the Quad route)
        store.load(_ntriples(triples), format=pyoxigraph.RdfFormat.N_TRIPLES)
    except (SyntaxError, ValueError):  # a term N-Triples cannot spell: say what is wrong term by term
        store = pyoxigraph.Store()
        store.extend(_quads(triples))
    answers: dict[Any, list[str | Term]] = {}
    for _, target, select in plan:
        rows = store.query(select)
        if not isinstance(rows, pyoxigraph.QuerySolutions):
            raise ValueError(f"a SPARQL target is not a SELECT: {select[:80]!r}")
        found = answers.setdefault(target, [])
        for row in rows:
            node = row["this"]
            if node is not None:
                found.append(_term_of(node))
    return answers


def sparql_targets(shapes: Any) -> set[Any]:
    """The SPARQL targets of ``shapes`` that :func:`selected` answers (their rdflib nodes)."""
    return {target for _, target, _ in _plan(shapes)}


def _plan(shapes: Any) -> list[tuple[Any, Any, str]]:
    cached = _PLANS.get(id(shapes))
    if cached is not None and cached[0] is shapes:
        return cached[1]
    import rdflib

    sh = rdflib.Namespace(SH)
    plan = []
    for shape, target in shapes.subject_objects(sh.target):
        if (target, rdflib.RDF.type, sh.SPARQLTarget) not in shapes:
            continue
        select = shapes.value(target, sh.select)
        if select is None:
            continue
        prologue = "".join(f"PREFIX {prefix}: <{namespace}>\n"
                           for prefixes in shapes.objects(target, sh.prefixes)
                           for declaration in shapes.objects(prefixes, sh.declare)
                           for prefix in shapes.objects(declaration, sh.prefix)
                           for namespace in shapes.objects(declaration, sh.namespace))
        plan.append((shape, target, prologue + str(select)))
    if len(_PLANS) >= 8:  # the shapes of this process, and the parts the gate gives pySHACL
        _PLANS.clear()
    _PLANS[id(shapes)] = (shapes, plan)
    return plan


def _ntriples(triples: Iterable[tuple[str, str, Term]]) -> bytes:
    lines: list[str] = []
    add = lines.append
    for s, p, o in triples:
        kind = o.kind
        if kind == "bnode" or s.startswith("_:"):
            raise ValueError("a blank node")
        if kind == "uri":
            obj = f"<{o.value}>"
        else:
            v = o.value
            if '"' in v or "\\" in v or "\n" in v or "\r" in v:
                v = v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
            obj = f'"{v}"@{o.lang}' if o.lang else (f'"{v}"^^<{o.datatype}>' if o.datatype else f'"{v}"')
        add(f"<{s}> <{p}> {obj} .\n")
    return "".join(lines).encode()


def _quads(triples: Iterable[tuple[str, str, Term]]) -> list[Any]:
    import pyoxigraph

    nodes: dict[Any, Any] = {}  # subjects, predicates and IRIs repeat: one pyoxigraph term each
    graph = pyoxigraph.DefaultGraph()
    quads = []
    for s, p, o in triples:
        subject = nodes.get(s)
        if subject is None:
            subject = nodes[s] = pyoxigraph.BlankNode(s[2:]) if s.startswith("_:") else pyoxigraph.NamedNode(s)
        predicate = nodes.get(p)
        if predicate is None:
            predicate = nodes[p] = pyoxigraph.NamedNode(p)
        obj = nodes.get(o) if o.kind != "literal" else None
        if obj is None:
            obj = _term(o)
            if o.kind != "literal":
                nodes[o] = obj
        quads.append(pyoxigraph.Quad(subject, predicate, obj, graph))
    return quads


def _term(o: Term) -> Any:
    import pyoxigraph

    if o.kind == "uri":
        return pyoxigraph.NamedNode(o.value)
    if o.kind == "bnode":
        return pyoxigraph.BlankNode(o.value)
    if o.lang:
        return pyoxigraph.Literal(o.value, language=o.lang)
    if o.datatype:
        return pyoxigraph.Literal(o.value, datatype=pyoxigraph.NamedNode(o.datatype))
    return pyoxigraph.Literal(o.value)


def _term_of(node: Any) -> str | Term:
    """A pyoxigraph term as an IRI, a ``_:`` label or a literal :class:`Term`."""
    import pyoxigraph

    if isinstance(node, pyoxigraph.NamedNode):
        return str(node.value)
    if isinstance(node, pyoxigraph.BlankNode):
        return "_:" + node.value
    lang = node.language
    return Term("literal", node.value, None if lang else node.datatype.value, lang)
