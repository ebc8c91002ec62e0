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

from collections.abc import Callable, Iterable

#: The namespace of yupana's own annotations in shapes/ (not a vocabulary of the data).
YUPANA = "urn:yupana:"
COMPILES = YUPANA + "compiles"
SH = "http://www.w3.org/ns/shacl#"


def steps() -> dict[str, Callable[[str], str | None]]:
    """Each compile step a shape may name → the decoder's function saying why it refuses a value."""
    from yupana.projection.subject import glob_problem, re2_problem

    return {YUPANA + "CompilesAsRE2": re2_problem, YUPANA + "CompilesAsGlob": glob_problem}


class Refusal(NamedTuple):
    """One value a decoder's compile step refuses: the node holding it, the predicate (an rdflib
    term), the step's IRI, the node shape, the value's text and the reason."""

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
    """Every value of ``data_graph`` the shapes mark as compiled that its step refuses, the
    focus nodes found by pySHACL's own targets (``yupana shapes validate``)."""
    import rdflib
    from pyshacl.shapes_graph import ShapesGraph

    if not marks(shapes_graph):
        return []
    shapes = ShapesGraph(shapes_graph)
    shapes.shapes  # noqa: B018 - builds pySHACL's shape cache that lookup_shape_from_node reads

    def focus_of(node: Any) -> Any:
        shape: Any = shapes.lookup_shape_from_node(node)  # pySHACL's Shape: its methods are untyped
        if shape is None or shape.deactivated:
            return None
        shape.set_advanced(True)
        return shape.focus_nodes(data_graph)

    def values(node: Any, predicate: Any) -> list[tuple[Any, str | None]]:
        return [(o, str(o) if isinstance(o, rdflib.Literal) else None) for o in data_graph.objects(node, predicate)]

    return found_refusals(shapes_graph, focus_of, values)


def marks(shapes_graph: Any) -> list[tuple[Any, Any, Callable[[str], str | None], list[Any], list[Any]]]:
    """The property shapes marked ``yupana:compiles``, in a stable order: (property shape, step
    IRI, step, path as predicate IRIs, the node shapes it is the ``sh:property`` of).
    CompileCheckError for a mark that cannot be run."""
    import rdflib

    marked = sorted(shapes_graph.subject_objects(rdflib.URIRef(COMPILES)), key=lambda pair: (str(pair[1]), str(pair[0])))
    sh_property = rdflib.URIRef(SH + "property")
    known = steps()
    out = []
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
        out.append((prop, step_iri, step, predicates, owners))
    return out


def found_refusals(shapes_graph: Any, focus_of: Callable[[Any], Any],
                   values: Callable[[Any, Any], Iterable[tuple[Any, str | None]]]) -> list[Refusal]:
    """The refusals of :func:`marks` over one data graph: ``focus_of(shape node)`` gives the
    focus nodes of a shape's own targets (None when it is no shape or deactivated),
    ``values(node, predicate)`` each object with its literal text (None for a node)."""
    found: dict[tuple[Any, ...], Refusal] = {}
    for prop, step_iri, step, predicates, owners in marks(shapes_graph):
        for owner in [*owners, prop]:  # the node shape's targets, and the property shape's own when it has any
            focus = focus_of(owner)
            if focus is None:
                continue
            holders = set(focus)
            for predicate in predicates[:-1]:
                holders = {o for s in holders for o, text in values(s, predicate) if text is None}
            for holder in holders:
                for _, text in values(holder, predicates[-1]):
                    if text is None or not text.strip():
                        continue
                    problem = step(text)
                    if problem:
                        key = (holder, predicates[-1], str(step_iri), text)
                        named = owners[0] if owner is prop else owner  # results name the node shape
                        found.setdefault(key, Refusal(holder, predicates[-1], str(step_iri), named, text, problem))
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
