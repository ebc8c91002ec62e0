"""The decoders' compile steps over the values the shapes mark. Cold path.

SHACL has no RE2 and no glob compiler, so a regex RE2 refuses (look-behind, a
backreference, an unbalanced ``(``) or a glob with a reversed range (``[z-a]``) conforms to
every SHACL constraint and is refused only when a refresh decodes it — on every host, after
the store's CI went green. The shapes therefore say which values a decoder compiles: a
property shape carrying ``yupana:compiles yupana:CompilesAsRE2`` (or
``yupana:CompilesAsGlob``) names them, on the node shape whose members the decoder reads
(``shapes/text-rules.ttl``, ``structural.ttl``, ``memory.ttl``, …). SHACL processors ignore
the annotation; :func:`refusals` reads it:

* the node shape's focus nodes are pySHACL's own (``sh:targetClass`` through the data's
  ``rdfs:subClassOf`` facts, SPARQL targets, …), so membership is stated once, in the shapes;
* the property shape's path is a predicate or a sequence of predicates; the value is
  compiled where the decoder reads it, so a refusal names the subject that holds the value
  and the last predicate — ``aegis:pred_x aegis:evidenceSource`` for a structural policy's
  ``( aegis:predicate aegis:evidenceSource )``, exactly as the refresh's error does;
* each non-blank literal is compiled by the decoder's own step
  (:func:`yupana.projection.subject.re2_problem`, :func:`~yupana.projection.subject.glob_problem`);
  a blank one is the SHACL constraints' finding, as it is the decoder's earlier check.

The gate (:func:`yupana.projection.gate.validate_graph`) turns each :class:`Refusal` into a
violation of the same report as SHACL's results, so ``yupana shapes validate``'s exit code,
``--json`` and every ``--format`` carry them.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from collections.abc import Callable

#: The namespace of yupana's own annotations in shapes/ (not a vocabulary of the data).
YUPANA = "urn:yupana:"
COMPILES = YUPANA + "compiles"
SH = "http://www.w3.org/ns/shacl#"


def steps() -> dict[str, Callable[[str], str | None]]:
    """Each compile step a shape may name → the decoder's function saying why it refuses a value."""
    from yupana.projection.subject import glob_problem, re2_problem

    return {YUPANA + "CompilesAsRE2": re2_problem, YUPANA + "CompilesAsGlob": glob_problem}


class Refusal(NamedTuple):
    """One value a decoder's compile step refuses (rdflib terms, the step's IRI, its reason)."""

    subject: Any
    predicate: Any
    step: str
    shape: Any
    value: Any
    problem: str


class CompileCheckError(Exception):
    """A ``yupana:compiles`` annotation that cannot be run (an unknown step, a path that is
    not a predicate or a sequence of predicates): a broken shape, never a verdict."""


def refusals(data_graph: Any, shapes_graph: Any) -> list[Refusal]:
    """Every value of ``data_graph`` the shapes mark as compiled that its step refuses."""
    import rdflib
    from pyshacl.shapes_graph import ShapesGraph

    marked = sorted(shapes_graph.subject_objects(rdflib.URIRef(COMPILES)), key=lambda pair: (str(pair[1]), str(pair[0])))
    if not marked:
        return []
    sh_property = rdflib.URIRef(SH + "property")
    shapes = ShapesGraph(shapes_graph)
    shapes.shapes  # noqa: B018 - builds pySHACL's shape cache that lookup_shape_from_node reads
    known = steps()
    found: dict[tuple[Any, ...], Refusal] = {}
    for prop, step_iri in marked:
        step = known.get(str(step_iri))
        if step is None:
            raise CompileCheckError(f"{prop} names an unknown compile step {step_iri} "
                                    f"(known: {', '.join(sorted(known))})")
        predicates = _path(shapes_graph, prop)
        owners = sorted(shapes_graph.subjects(sh_property, prop), key=str)
        if not owners:
            raise CompileCheckError(f"{prop}: a property shape marked {COMPILES} must be the sh:property of a node "
                                    "shape (whose members hold the values)")
        for owner in [*owners, prop]:  # the node shape's targets, and the property shape's own when it has any
            shape: Any = shapes.lookup_shape_from_node(owner)  # pySHACL's Shape: its methods are untyped
            if shape is None or shape.deactivated:
                continue
            shape.set_advanced(True)
            holders = set(shape.focus_nodes(data_graph))
            for predicate in predicates[:-1]:
                holders = {o for s in holders for o in data_graph.objects(s, predicate)
                           if not isinstance(o, rdflib.Literal)}
            for holder in holders:
                for value in data_graph.objects(holder, predicates[-1]):
                    if not isinstance(value, rdflib.Literal) or not str(value).strip():
                        continue
                    problem = step(str(value))
                    if problem:
                        key = (holder, predicates[-1], str(step_iri), str(value))
                        named = owners[0] if owner is prop else owner  # results name the node shape
                        found.setdefault(key, Refusal(holder, predicates[-1], str(step_iri), named, value, problem))
    return list(found.values())


def _path(shapes_graph: Any, prop: Any) -> list[Any]:
    """The property shape's path as a list of predicate IRIs."""
    import rdflib
    from rdflib.collection import Collection

    path = shapes_graph.value(prop, rdflib.URIRef(SH + "path"))
    if isinstance(path, rdflib.URIRef):
        return [path]
    if path is not None and (path, rdflib.RDF.first, None) in shapes_graph:
        members = list(Collection(shapes_graph, path))
        if members and all(isinstance(m, rdflib.URIRef) for m in members):
            return members
    raise CompileCheckError(f"{prop}: a property shape marked {COMPILES} needs an sh:path that is a predicate "
                            "or a sequence of predicates")
