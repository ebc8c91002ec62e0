"""The shapes the refresh's gate checks itself, compiled once per shapes graph. Cold path.

pySHACL builds an rdflib graph of the data (about 1 KB a triple) and walks it node by node;
for 10 000 text rules that was ~2.7 s of a ~5.9 s refresh. Every shape of ``shapes/`` is
SHACL Core over predicate paths, so the gate checks those itself
(:mod:`yupana.projection.gate_native_check`, on the refresh's own triples) and leaves to
pySHACL only the shapes :func:`plan` cannot take.

A shape is **native** when all of it is among what the check implements exactly as pySHACL
0.40 does: targets ``sh:targetClass`` (instances through the data's ``rdf:type`` /
``rdfs:subClassOf*`` facts), ``sh:targetNode`` (IRIs), ``sh:targetSubjectsOf``,
``sh:targetObjectsOf`` and SPARQL targets (answered by :mod:`.gate_targets`); a path that
is a predicate or a sequence of predicates; the constraints ``minCount``, ``maxCount``,
``datatype``, ``nodeKind``, ``pattern`` (with ``flags``), ``minLength``, ``maxLength``,
``in``, ``hasValue``, ``class``, ``node``, ``property``, ``min/maxInclusive``,
``min/maxExclusive``, ``closed`` (with ``ignoredProperties``); at most one ``sh:severity``;
and exactly one ``sh:message`` (a literal without a language) whenever it reports anything
(pySHACL's generated messages are copied only for ``nodeKind``). Anything else — ``sh:deactivated``, implicit class targets,
``sh:sparql``, logical or qualified constraints, other paths, a constraint without a
message — makes the shape pySHACL's, and with it every shape it is connected to through
``sh:property`` / ``sh:node`` (either way): those go to pySHACL together, in the shapes
graph :attr:`Plan.fallback` (their triples, the blank nodes and lists they reach, the
``sh:prefixes`` declarations). ``tests/projection/test_gate_native.py`` compares the two on
every plane's catalogue and seeded mutations of it.
"""

from __future__ import annotations

from typing import Any

import re
from dataclasses import dataclass, field

from yupana.projection import gate_targets

SH = "http://www.w3.org/ns/shacl#"
RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
RDFS = "http://www.w3.org/2000/01/rdf-schema#"

TARGETS = ("targetClass", "targetNode", "targetSubjectsOf", "targetObjectsOf", "target")
#: Parameters a native shape may carry; every other sh: predicate makes it pySHACL's.
SINGLE = ("minCount", "maxCount", "datatype", "nodeKind", "minLength", "maxLength", "in", "closed",
          "ignoredProperties", "severity", "path", "flags", "hasValue")
MULTI = ("class", "node", "property", "pattern", "minInclusive", "minExclusive", "maxInclusive", "maxExclusive",
         "message")
INERT = ("name", "description", "order", "group", "defaultValue")
NODE_KINDS = {SH + k for k in ("IRI", "BlankNode", "Literal", "BlankNodeOrIRI", "BlankNodeOrLiteral", "IRIOrLiteral")}


class NotNative(Exception):
    """A shape the native check does not take (the reason)."""


@dataclass(slots=True)
class Shape:
    """One native shape: where its focus nodes come from, its path and its checks."""

    node: Any
    path: tuple[str, ...] | None = None  # predicate IRIs; None for a node shape
    path_text: str | None = None
    severity: str = "violation"
    message: str | None = None
    name: str | None = None  # the named shape results cite (a property shape's owner)
    #: (constraint, parameter): the order does not matter, results are sorted
    checks: list[tuple[str, Any]] = field(default_factory=list)
    targets: Targets | None = None
    graph: Any = None  # the shapes graph (pySHACL's generated nodeKind message names the kind in its prefixes)


@dataclass(slots=True)
class Targets:
    """A shape's target declarations (``sparql``: the rdflib nodes of its SPARQL targets)."""

    classes: list[str] = field(default_factory=list)
    nodes: list[str] = field(default_factory=list)
    subjects_of: list[str] = field(default_factory=list)
    objects_of: list[str] = field(default_factory=list)
    sparql: list[Any] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.classes or self.nodes or self.subjects_of or self.objects_of or self.sparql)


@dataclass(slots=True)
class Plan:
    """The native shapes of a shapes graph, and what is left to pySHACL."""

    shapes: dict[Any, Shape]
    top: list[Shape]  # native shapes with targets of their own
    #: the shapes pySHACL validates: their own shapes graph, None when there are none
    fallback: Any = None
    #: targets of the fallback shapes (None for a shape whose targets only pySHACL can find)
    fallback_targets: list[Targets | None] = field(default_factory=list)
    #: every shape's own targets, for the compile checks (None: only pySHACL can find them)
    targets: dict[Any, Targets | None] = field(default_factory=dict)
    deactivated: set[Any] = field(default_factory=set)


_PLANS: dict[int, tuple[Any, Plan]] = {}


def plan(shapes: Any) -> Plan:
    """The :class:`Plan` of an rdflib shapes graph (cached per graph, by identity)."""
    cached = _PLANS.get(id(shapes))
    if cached is not None and cached[0] is shapes:
        return cached[1]
    made = _compile(shapes)
    _PLANS.clear()
    _PLANS[id(shapes)] = (shapes, made)
    return made


def _compile(g: Any) -> Plan:
    import rdflib

    sh = rdflib.Namespace(SH)
    nodes = _shape_nodes(g)
    owners: dict[Any, Any] = {}
    links: dict[Any, set[Any]] = {n: set() for n in nodes}
    for owner, prop in g.subject_objects(sh.property):
        owners[prop] = owner  # as parse_report names a property shape's results
        links.setdefault(owner, set()).add(prop)
        links.setdefault(prop, set()).add(owner)
    for owner, ref in g.subject_objects(sh.node):
        links.setdefault(owner, set()).add(ref)
        links.setdefault(ref, set()).add(owner)
    sparql = gate_targets.sparql_targets(g)
    compiled: dict[Any, Shape] = {}
    failed: set[Any] = set()
    targets: dict[Any, Targets | None] = {}
    deactivated = {s for s in nodes if (s, sh.deactivated, None) in g}
    for node in nodes:
        targets[node] = _targets(g, node, sparql)
        try:
            compiled[node] = _shape(g, node, owners, targets[node], nodes)
        except NotNative:
            failed.add(node)
    failed |= _recursive(g, set(compiled))
    # what is connected to a shape pySHACL must check goes with it
    todo = list(failed)
    while todo:
        for other in links.get(todo.pop(), ()):
            if other not in failed:
                failed.add(other)
                todo.append(other)
    native = {n: s for n, s in compiled.items() if n not in failed}
    top = [s for s in native.values() if s.targets]
    fallback = _subgraph(g, failed) if failed else None
    return Plan(shapes=native, top=top, fallback=fallback,
                fallback_targets=[targets.get(n) for n in failed if n not in deactivated],
                targets=targets, deactivated=deactivated)


def _shape_nodes(g: Any) -> set[Any]:
    """The nodes pySHACL takes as shapes (ShapesGraph._build_node_shape_cache)."""
    import rdflib

    sh = rdflib.Namespace(SH)
    found = set(g.subjects(rdflib.RDF.type, sh.NodeShape)) | set(g.subjects(rdflib.RDF.type, sh.PropertyShape))
    for p in (sh.targetClass, sh.targetNode, sh.targetObjectsOf, sh.targetSubjectsOf, sh.property, sh.node):
        found |= set(g.subjects(p, None))
    for p in (sh.property, sh.node, sh.qualifiedValueShape, getattr(sh, "not")):
        found |= set(g.objects(None, p))
    for p in (getattr(sh, "and"), getattr(sh, "or"), sh.xone):
        for lst in g.objects(None, p):
            found |= set(g.items(lst))
    return found


def _targets(g: Any, node: Any, sparql: set[Any]) -> Targets | None:
    """The shape's targets, None when some are beyond the native check (implicit class
    targets, a target that is not an IRI, a custom target type)."""
    import rdflib

    sh = rdflib.Namespace(SH)
    types = set(g.objects(node, rdflib.RDF.type))
    if rdflib.RDFS.Class in types or types & set(g.subjects(rdflib.RDFS.subClassOf, rdflib.RDFS.Class)):
        return None
    out = Targets()
    for name, into in (("targetClass", out.classes), ("targetNode", out.nodes),
                       ("targetSubjectsOf", out.subjects_of), ("targetObjectsOf", out.objects_of)):
        for value in g.objects(node, sh[name]):
            if not isinstance(value, rdflib.URIRef):
                return None
            into.append(str(value))
    for target in g.objects(node, sh.target):
        if target not in sparql or len(set(g.objects(target, sh.select))) != 1:
            return None
        out.sparql.append(target)
    return out


def _shape(g: Any, node: Any, owners: dict[Any, Any], targets: Targets | None, shapes: set[Any]) -> Shape:
    import rdflib

    from yupana.projection.gate_results import _severity, compact, render_path

    if targets is None:
        raise NotNative("targets")
    sh = rdflib.Namespace(SH)
    values = _parameters(g, node, sh)
    shape = Shape(node=node, targets=targets, graph=g)
    typed = set(g.objects(node, rdflib.RDF.type))
    if "path" in values:
        if sh.NodeShape in typed:
            raise NotNative("a node shape with a path")
        shape.path = _path(g, values["path"][0])
        shape.path_text = render_path(g, values["path"][0])
    elif sh.PropertyShape in typed:
        raise NotNative("a property shape without a path")
    shape.severity = _severity(values.get("severity", [sh.Violation])[0])
    messages = values.get("message", [])
    if len(messages) == 1 and isinstance(messages[0], rdflib.Literal) and not messages[0].language:
        shape.message = str(messages[0])
    elif messages:
        raise NotNative("several sh:message values, or one with a language")
    named = owners.get(node, node)
    shape.name = compact(str(named)) if isinstance(named, rdflib.URIRef) else None
    shape.checks = _checks(g, values, shapes, sh)
    if shape.message is None and any(c not in ("property", "nodeKind") for c, _ in shape.checks):
        raise NotNative("no sh:message (pySHACL generates one)")
    return shape


def _parameters(g: Any, node: Any, sh: Any) -> dict[str, list[Any]]:
    """The shape's sh: parameters by local name; NotNative for one the check does not take."""
    values: dict[str, list[Any]] = {}
    for p, o in g.predicate_objects(node):
        p = str(p)
        if p == RDF + "type":
            if o not in (sh.NodeShape, sh.PropertyShape):
                raise NotNative(f"type {o}")
            continue
        if not p.startswith(SH):
            continue
        name = p[len(SH):]
        if name not in SINGLE + MULTI + INERT + TARGETS:
            raise NotNative(name)
        values.setdefault(name, []).append(o)
    if any(len(values.get(name, ())) > 1 for name in SINGLE):
        raise NotNative("a parameter given twice")
    for param in _custom_parameters(g):
        if (node, param, None) in g:
            raise NotNative("a custom constraint component")
    return values


def _checks(g: Any, values: dict[str, list[Any]], shapes: set[Any], sh: Any) -> list[tuple[str, Any]]:
    """The (constraint, parameter) checks of a shape's parameters; NotNative for a value the
    check does not take."""
    import rdflib

    checks: list[tuple[str, Any]] = []
    for name in ("minCount", "maxCount", "minLength", "maxLength"):
        for value in values.get(name, ()):
            if not isinstance(value, rdflib.Literal) or type(value.value) is not int or value.value < 0:
                raise NotNative(f"sh:{name} {value!r}")
            checks.append((name, value.value))
    for value in values.get("datatype", ()):
        if not isinstance(value, rdflib.URIRef):
            raise NotNative("datatype")
        checks.append(("datatype", value))
    for value in values.get("nodeKind", ()):
        if str(value) not in NODE_KINDS:
            raise NotNative("nodeKind")
        checks.append(("nodeKind", value))
    flags = values.get("flags", [])
    for value in values.get("pattern", ()):
        checks.append(("pattern", _pattern(value, flags[0] if flags else None)))
    for value in values.get("in", ()):
        checks.append(("in", frozenset(_key(m) for m in g.items(value))))
    for value in values.get("hasValue", ()):
        checks.append(("hasValue", _key(value)))
    for value in values.get("class", ()):
        if not isinstance(value, rdflib.URIRef):
            raise NotNative("class")
        checks.append(("class", str(value)))
    for name in ("minInclusive", "minExclusive", "maxInclusive", "maxExclusive"):
        for value in values.get(name, ()):
            if not isinstance(value, rdflib.Literal):
                raise NotNative(name)
            checks.append((name, value))
    for value in values.get("node", ()):
        if value not in shapes or (value, sh.path, None) in g:
            raise NotNative("sh:node names no node shape")
        checks.append(("node", value))
    for value in values.get("property", ()):
        if value not in shapes or (value, sh.path, None) not in g:
            raise NotNative("sh:property names no property shape")
        checks.append(("property", value))
    if "closed" in values:
        closed = values["closed"][0]
        if not isinstance(closed, rdflib.Literal) or not isinstance(closed.value, bool):
            raise NotNative("closed")
        ignored = {str(i) for lst in values.get("ignoredProperties", ()) for i in g.items(lst)}
        working = {str(p) for prop in values.get("property", ()) for p in g.objects(prop, sh.path)
                   if isinstance(p, rdflib.URIRef)}
        if closed.value:
            checks.append(("closed", (frozenset(ignored), frozenset(working))))
    elif "ignoredProperties" in values:
        raise NotNative("ignoredProperties without closed")
    return checks


def _path(g: Any, path: Any) -> tuple[str, ...]:
    import rdflib

    if isinstance(path, rdflib.URIRef):
        return (str(path),)
    if (path, rdflib.RDF.first, None) in g:
        members = list(g.items(path))
        if len(members) > 1 and all(isinstance(m, rdflib.URIRef) for m in members):
            return tuple(str(m) for m in members)
    raise NotNative("a path other than a predicate or a sequence of predicates")


def _pattern(value: Any, flags: Any) -> re.Pattern[str]:
    """pySHACL's compiled pattern (PatternConstraintComponent): only ``i`` and ``m`` flags."""
    import rdflib

    if not isinstance(value, rdflib.Literal):
        raise NotNative("pattern")
    found = 0
    if flags is not None:
        text = str(flags.value).lower()
        found |= re.I if "i" in text else 0
        found |= re.M if "m" in text else 0
    source = str(value.value) if value.value is not None and len(value.value) > 1 else str(value)
    try:
        return re.compile(source, found)
    except re.error:
        raise NotNative("a pattern Python cannot compile") from None


def _key(term: Any) -> Any:
    """The key :mod:`.gate_native_check` compares a shapes-graph term by (``in``, ``hasValue``)."""
    import rdflib

    if isinstance(term, rdflib.URIRef):
        return str(term)
    if isinstance(term, rdflib.BNode):
        return "_:" + str(term)
    if term.datatype is None and not term.language:
        return ("p", str(term))
    return ("r", term)


def _custom_parameters(g: Any) -> set[Any]:
    import rdflib

    sh = rdflib.Namespace(SH)
    return {p for param in g.objects(None, sh.parameter) for p in g.objects(param, sh.path)}


def _recursive(g: Any, nodes: set[Any]) -> set[Any]:
    """Shapes on a cycle of ``sh:node`` / ``sh:property`` references (pySHACL stops those
    with a warning; the native check does not follow it)."""
    import rdflib

    sh = rdflib.Namespace(SH)
    refs = {n: [o for p in (sh.node, sh.property) for o in g.objects(n, p)] for n in nodes}
    cyclic: set[Any] = set()
    for start in nodes:
        todo, seen = list(refs.get(start, ())), set()
        while todo:
            n = todo.pop()
            if n == start:
                cyclic.add(start)
                break
            if n not in seen:
                seen.add(n)
                todo.extend(refs.get(n, ()))
    return cyclic


def _subgraph(g: Any, roots: set[Any]) -> Any:
    """The shapes graph of ``roots``: their triples and those of the blank nodes they reach,
    the ``sh:prefixes`` declarations, and any custom constraint components or target types."""
    import rdflib

    sh = rdflib.Namespace(SH)
    out = rdflib.Graph()
    out.namespace_manager = g.namespace_manager
    todo = list(roots)
    for kind in (sh.ConstraintComponent, sh.SPARQLTargetType, sh.TargetType, sh.JSTargetType):
        todo.extend(g.subjects(rdflib.RDF.type, kind))
    seen: set[Any] = set()
    while todo:
        node = todo.pop()
        if node in seen:
            continue
        seen.add(node)
        for s, p, o in g.triples((node, None, None)):
            out.add((s, p, o))
            if isinstance(o, rdflib.BNode) or p == sh.prefixes:
                todo.append(o)
    return out
