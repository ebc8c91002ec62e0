"""The native shapes (:mod:`.gate_native`) checked on the refresh's triples. Cold path.

The triples (``(subject, predicate, Term)``) are indexed once in plain dicts; a node is its
IRI, ``_:label`` for a blank node, or the literal's :class:`~yupana.endpoint.base.Term`.
Every check follows pySHACL 0.40's constraint component line by line where it is subtle:
literals are compared as rdflib compares the terms the reference gate builds
(:func:`yupana.projection.gate.to_rdflib`: ``xsd:string`` is a plain literal; a typed
literal's lexical form is rdflib's normalised one, ``"01"^^xsd:integer`` is ``"1"``), an
ill-typed literal fails ``sh:datatype``, ``sh:pattern`` reads an IRI's text and refuses a
blank node, ``sh:class`` refuses a literal, an ``sh:node`` result cites the value node and
not the nested results. Only typed or language-tagged literals are turned into rdflib terms,
and only when a check needs them.
"""

from __future__ import annotations

from typing import Any

from collections.abc import Iterable

from yupana.endpoint.base import Term
from yupana.projection import gate_compiles
from yupana.projection.gate_results import ShapeResult, to_rdflib
from yupana.projection.gate_native import RDF, RDFS, SH, Plan, Shape, Targets

XSD = "http://www.w3.org/2001/XMLSchema#"
XSD_STRING = XSD + "string"
RDF_TYPE = RDF + "type"
SUBCLASS = RDFS + "subClassOf"
NodeT = Any  # str (an IRI or "_:label") | Term (a literal)

_KINDS = {  # the node kinds each kind of node matches
    "bnode": {SH + "BlankNode", SH + "BlankNodeOrLiteral", SH + "BlankNodeOrIRI"},
    "literal": {SH + "Literal", SH + "BlankNodeOrLiteral", SH + "IRIOrLiteral"},
    "iri": {SH + "IRI", SH + "IRIOrLiteral", SH + "BlankNodeOrIRI"},
}
_RANGES = {"minInclusive": lambda c: c >= 0, "minExclusive": lambda c: c > 0,
           "maxInclusive": lambda c: c <= 0, "maxExclusive": lambda c: c < 0}


def plain(t: Term) -> bool:
    """A literal rdflib holds as a plain one (no language, no datatype or ``xsd:string``)."""
    return not t.lang and (t.datatype is None or t.datatype == XSD_STRING)


class Data:
    """The triples, indexed: each subject's objects per predicate (distinct, as a graph holds
    them), subjects per predicate, instances per class, subclasses per class."""

    def __init__(self, triples: Iterable[tuple[str, str, Term]]) -> None:
        self.out: dict[str, dict[str, list[NodeT]]] = {}
        self.views: dict[Term, Any] = {}
        out = self.out
        count = 0
        for s, p, o in triples:
            kind = o.kind
            node: NodeT = o.value if kind == "uri" else ("_:" + o.value if kind == "bnode" else o)
            props = out.get(s)
            if props is None:
                props = out[s] = {}
            objects = props.get(p)
            if objects is None:
                props[p] = [node]
            elif kind != "literal" or plain(o):
                if node in objects or (kind == "literal" and any(self.key(n) == ("p", o.value) for n in objects)):
                    continue  # the same triple twice (a graph holds it once)
                objects.append(node)
            else:
                key = self.key(node)
                if any(self.key(n) == key for n in objects):
                    continue
                objects.append(node)
            count += 1
        self.count = count
        self.by_predicate: dict[str, list[str]] = {}
        self.instances: dict[str, list[str]] = {}
        self.subclasses: dict[str, list[str]] = {}
        for s, props in self.out.items():
            for p, objects in props.items():
                self.by_predicate.setdefault(p, []).append(s)
                if p == RDF_TYPE:
                    for o in objects:
                        if isinstance(o, str):
                            self.instances.setdefault(o, []).append(s)
                elif p == SUBCLASS:
                    for o in objects:
                        if isinstance(o, str):
                            self.subclasses.setdefault(o, []).append(s)
        self._supers: dict[str, set[str]] = {}
        self._members: dict[str, list[str]] = {}

    def view(self, t: Term) -> Any:
        """The rdflib literal the reference gate makes of ``t``."""
        found = self.views.get(t)
        if found is None:
            found = self.views[t] = to_rdflib(t)
        return found

    def key(self, node: NodeT) -> Any:
        """Equal for exactly the nodes rdflib takes as one term."""
        if isinstance(node, str):
            return node
        return ("p", node.value) if plain(node) else ("r", self.view(node))

    def text(self, node: NodeT) -> str:
        """The node as a result shows it (gate._node_text of its rdflib term)."""
        if isinstance(node, str):
            return node
        return node.value if plain(node) else str(self.view(node))

    def objects(self, node: NodeT, predicate: str) -> list[NodeT]:
        return self.out.get(node, {}).get(predicate, []) if isinstance(node, str) else []

    def values(self, focus: NodeT, path: tuple[str, ...]) -> list[NodeT]:
        """The value nodes of a predicate path (a set, as pySHACL's)."""
        current = self.objects(focus, path[0])
        for predicate in path[1:]:
            found: dict[Any, NodeT] = {}
            for node in current:
                for o in self.objects(node, predicate):
                    found.setdefault(self.key(o), o)
            current = list(found.values())
        return current

    def members(self, cls: str) -> list[str]:
        """Instances of ``cls`` through ``rdf:type`` / ``rdfs:subClassOf*`` facts."""
        found = self._members.get(cls)
        if found is None:
            classes, todo = {cls}, [cls]
            while todo:
                for sub in self.subclasses.get(todo.pop(), ()):
                    if sub not in classes:
                        classes.add(sub)
                        todo.append(sub)
            found = self._members[cls] = list(dict.fromkeys(s for c in classes for s in self.instances.get(c, ())))
        return found

    def is_instance(self, node: NodeT, cls: str) -> bool:
        if not isinstance(node, str):
            return False
        for t in self.objects(node, RDF_TYPE):
            if isinstance(t, str) and cls in self._superclasses(t):
                return True
        return False

    def _superclasses(self, cls: str) -> set[str]:
        found = self._supers.get(cls)
        if found is None:
            found, todo = {cls}, [cls]
            while todo:
                for sup in self.objects(todo.pop(), SUBCLASS):
                    if isinstance(sup, str) and sup not in found:
                        found.add(sup)
                        todo.append(sup)
            self._supers[cls] = found
        return found


def focus_nodes(targets: Targets, data: Data, selection: dict[Any, list[Any]]) -> list[NodeT]:
    """The focus nodes of a shape's own targets (distinct)."""
    found: dict[Any, NodeT] = {}
    for cls in targets.classes:
        for s in data.members(cls):
            found.setdefault(s, s)
    for node in targets.nodes:
        found.setdefault(node, node)
    for p in targets.subjects_of:
        for s in data.by_predicate.get(p, ()):
            found.setdefault(s, s)
    for p in targets.objects_of:
        for s in data.by_predicate.get(p, ()):
            for o in data.objects(s, p):
                found.setdefault(data.key(o), o)
    for target in targets.sparql:
        for node in selection.get(target, ()):
            found.setdefault(data.key(node), node)
    return list(found.values())


def check(plan: Plan, data: Data, selection: dict[Any, list[Any]]) -> list[ShapeResult]:
    """Every result of the native shapes over ``data`` (unordered)."""
    results: list[ShapeResult] = []
    for shape in plan.top:
        assert shape.targets is not None
        results += evaluate(plan, shape, focus_nodes(shape.targets, data, selection), data)
    return results


def evaluate(plan: Plan, shape: Shape, focuses: list[NodeT], data: Data) -> list[ShapeResult]:
    """The results of one shape on each of ``focuses`` (pySHACL's Shape.validate)."""
    path = shape.path
    if path is None:
        pairs = [(f, [f]) for f in focuses]
    elif len(path) == 1:
        out_of, p = data.out.get, path[0]
        pairs = [(f, out_of(f, _NO_PROPS).get(p, _NO_VALUES) if isinstance(f, str) else _NO_VALUES) for f in focuses]
    else:
        pairs = [(f, data.values(f, path)) for f in focuses]
    out: list[ShapeResult] = []
    for name, param in shape.checks:
        if name == "property":
            out += evaluate(plan, plan.shapes[param], [v for _, values in pairs for v in values], data)
        elif name == "minCount":
            out += [_result(shape, name, f, None, data) for f, values in pairs if len(values) < param]
        elif name == "maxCount":
            out += [_result(shape, name, f, None, data) for f, values in pairs if len(values) > param]
        elif name == "hasValue":
            out += [_result(shape, name, f, None, data) for f, values in pairs
                    if not any(data.key(v) == param for v in values)]
        elif name == "closed":
            ignored, working = param
            out += [_result(shape, name, f, o, data, path=p)
                    for f, values in pairs for v in values if isinstance(v, str)
                    for p, objects in data.out.get(v, _NO_PROPS).items() if p not in ignored and p not in working
                    for o in objects if not (p == RDF_TYPE and o == RDFS + "Resource")]
        elif name == "pattern":
            search = param.search
            for f, values in pairs:
                for v in values:
                    if isinstance(v, str):
                        text = None if v.startswith("_:") else v
                    else:
                        text = v.value if plain(v) else _string(v, data)
                    if text is None or search(text) is None:
                        out.append(_result(shape, name, f, v, data))
        else:
            out += [_result(shape, name, f, v, data, rule=param) for f, values in pairs for v in values
                    if not _passes(name, param, v, plan, data)]
    return out


_NO_PROPS: dict[str, list[NodeT]] = {}
_NO_VALUES: list[NodeT] = []


def refusals(shapes: Any, plan: Plan, data: Data, selection: dict[Any, list[Any]]) -> list[gate_compiles.Refusal] | None:
    """The compile checks' refusals with the native plan's focus nodes (None when some shape
    they need has targets only pySHACL finds)."""
    marks = gate_compiles.marks(shapes)
    needed = {n for prop, _, _, _, owners in marks for n in [*owners, prop]}
    if any(plan.targets.get(n, 0) is None and n not in plan.deactivated for n in needed):
        return None

    def focus_of(node: Any) -> Any:  # as pySHACL: None for a node that is no shape, or is deactivated
        targets = plan.targets.get(node)
        if targets is None or node in plan.deactivated:
            return None
        return focus_nodes(targets, data, selection)

    def values(node: Any, predicate: Any) -> list[tuple[Any, str | None]]:
        return [(o, None if isinstance(o, str) else data.text(o)) for o in data.objects(node, str(predicate))]

    return gate_compiles.found_refusals(shapes, focus_of, values)


def _passes(name: str, param: Any, v: NodeT, plan: Plan, data: Data) -> bool:
    if name == "pattern":
        text = _string(v, data)
        return text is not None and param.search(text) is not None
    if name == "in":
        return data.key(v) in param
    if name == "nodeKind":
        return str(param) in _KINDS[_kind(v)]
    if name == "class":
        return data.is_instance(v, param)
    if name == "datatype":
        return _datatype(v, param, data)
    if name == "minLength":
        if param == 0:
            return True
        text = _string(v, data)
        return text is not None and len(text) >= param
    if name == "maxLength":
        text = _string(v, data)
        return text is not None and len(text) <= param
    if name == "node":
        return not evaluate(plan, plan.shapes[param], [v], data)
    return _in_range(name, param, v, data)


def _string(v: NodeT, data: Data) -> str | None:
    """pySHACL's value_node_to_string; None for a blank node (no string passes)."""
    if isinstance(v, str):
        return None if v.startswith("_:") else v
    if plain(v):
        return str(v.value)
    lit = data.view(v)
    if lit.value is not None and str(lit.datatype or "") in ("", RDF + "langString", XSD_STRING):
        return str(lit.value)
    return str(lit)


def _datatype(v: NodeT, rule: Any, data: Data) -> bool:
    """DatatypeConstraintComponent.evaluate, for one value node."""
    if isinstance(v, str):
        return False
    rule_iri = str(rule)
    if plain(v):
        return rule_iri in (XSD_STRING, RDFS + "Literal")
    lit = data.view(v)
    datatype, lang = lit.datatype, lit.language
    if datatype == rule:
        return getattr(lit, "ill_typed", None) is not True and _actual(lit.value, rule_iri)
    if rule_iri == RDFS + "Literal":
        return True
    if rule_iri == RDFS + "Datatype" and datatype:
        return True
    if datatype is None and lang is None and rule_iri == XSD_STRING:
        return _actual(lit.value, rule_iri)
    if rule_iri == RDF + "langString" and lang:
        return _actual(lit.value, rule_iri)
    return False


def _actual(value: Any, rule: str) -> bool:
    """DatatypeConstraintComponent._assert_actual_datatype."""
    import datetime
    from decimal import Decimal

    kinds: dict[str, Any] = {XSD_STRING: (str, bytes), RDF + "langString": (str, bytes), XSD + "integer": int,
                             XSD + "float": float, XSD + "decimal": Decimal, XSD + "boolean": bool,
                             XSD + "date": datetime.date, XSD + "time": datetime.time,
                             XSD + "dateTime": datetime.datetime}
    wanted = kinds.get(rule)
    return True if wanted is None else isinstance(value, wanted)


def _in_range(name: str, bound: Any, v: NodeT, data: Data) -> bool:
    """Min/MaxInclusive/ExclusiveConstraintComponent, for one value node."""
    if isinstance(v, str):
        return False
    lit = data.view(v)
    if isinstance(bound.value, str) != isinstance(lit.value, str):
        return False
    try:
        return bool(_RANGES[name](_compare(lit, bound)))
    except (TypeError, NotImplementedError):
        return False


def _compare(l1: Any, l2: Any) -> int:
    """pyshacl.rdfutil.compare.compare_literal (0.40), without importing pySHACL."""
    import datetime

    if l1.eq(l2):
        return 0
    if l1.value.__class__ in (datetime.datetime, datetime.time):
        if l1.value == l2.value:
            return 0
        if l1.value > l2.value:
            return 1
    elif l1 > l2:
        return 1
    return -1


def _kind(v: NodeT) -> str:
    if isinstance(v, str):
        return "bnode" if v.startswith("_:") else "iri"
    return "literal"


def _result(shape: Shape, name: str, focus: NodeT, value: NodeT | None, data: Data, *, path: str | None = None,
            rule: Any = None) -> ShapeResult:
    from yupana.projection.gate_results import compact

    message = shape.message
    if message is None:  # only nodeKind reports without a message of the shape's (gate_native)
        from pyshacl.rdfutil import stringify

        message = f"Value is not of Node Kind {stringify.stringify_node(shape.graph, rule)}"
    return ShapeResult(
        focus=data.text(focus),
        path=compact(path) if path is not None else shape.path_text,
        constraint=name,
        severity=shape.severity,
        message=message,
        value=None if value is None else data.text(value),
        shape=shape.name,
        value_kind=None if value is None else _kind(value),
    )
