"""The SHACL gate's results: :class:`ShapeResult` and how terms, paths and severities are
shown in it. Cold path.

Shared by the pySHACL report's reader (:mod:`.gate`) and the native checks
(:mod:`.gate_native`, :mod:`.gate_native_check`), so that both spell a result alike;
:mod:`.gate` re-exports every name.
"""

from __future__ import annotations

from typing import Any

from dataclasses import dataclass

from yupana.planes import AEGIS
from yupana.projection import gate_compiles

SH = "http://www.w3.org/ns/shacl#"
XSD_STRING = "http://www.w3.org/2001/XMLSchema#string"

#: Prefixes used to make IRIs readable in paths, shape names and the text report.
PREFIXES = {
    "aegis": AEGIS,
    "rdfs": "http://www.w3.org/2000/01/rdf-schema#",
    "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
    "xsd": "http://www.w3.org/2001/XMLSchema#",
    "sh": SH,
    "yupana": gate_compiles.YUPANA,
}

SEVERITIES = ("violation", "warning", "info")


@dataclass(frozen=True, slots=True)
class ShapeResult:
    """One SHACL validation result, flattened.

    ``focus`` is the focus node (full IRI, or ``_:id`` for a blank node); ``path`` the
    property path in SPARQL path syntax with the prefixes of :data:`PREFIXES`
    (``aegis:selector/aegis:tier``) or None for a node-level result; ``constraint`` the
    constraint component's short name (``minCount``, ``in``, ``pattern``, ``class`` …);
    ``severity`` one of :data:`SEVERITIES`; ``value`` the offending value (lexical form of a
    literal, full IRI of a node) or None, and ``value_kind`` says which (``literal``,
    ``iri``, ``bnode``); ``shape`` the named shape the result came from
    (``aegis:TripwireShape``), when there is one. ``shape`` and ``value_kind`` extend the
    interface's six fields compatibly (both default to None).
    """

    focus: str
    path: str | None
    constraint: str
    severity: str
    message: str
    value: str | None
    shape: str | None = None
    value_kind: str | None = None  # "iri" | "literal" | "bnode" | None (no value)

    def shown_value(self) -> str | None:
        """The value for people: a literal quoted, an IRI compacted, None when absent."""
        if self.value is None:
            return None
        if self.value_kind == "literal":
            text = self.value.replace("\n", "\\n")
            return '"' + (text if len(text) <= 60 else text[:59] + "…") + '"'
        return compact(self.value) if self.value_kind == "iri" else self.value

    def check(self) -> str:
        """The check that reported it, for CI titles: ``SHACL minCount`` for a SHACL constraint
        component, the compile step's own name (``yupana:CompilesAsRE2``) for a decoder's."""
        return self.constraint if ":" in self.constraint else f"SHACL {self.constraint}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "severity": self.severity,
            "focus": self.focus,
            "path": self.path,
            "constraint": self.constraint,
            "shape": self.shape,
            "message": self.message,
            "value": self.value,
            "value_kind": self.value_kind,
        }


def to_rdflib(term: Any) -> Any:
    """An rdflib term for a subject/predicate string or a :class:`~yupana.endpoint.base.Term`.

    Literals typed ``xsd:string`` become plain literals (RDF 1.1 says they are the same
    term; rdflib compares them as different, which would break ``sh:in``)."""
    import rdflib

    if isinstance(term, str):
        return rdflib.BNode(term[2:]) if term.startswith("_:") else rdflib.URIRef(term)
    kind = term.kind
    if kind == "uri":
        return rdflib.URIRef(term.value)
    if kind == "bnode":
        return rdflib.BNode(term.value)
    if term.lang:
        return rdflib.Literal(term.value, lang=term.lang)
    datatype = term.datatype if term.datatype and term.datatype != XSD_STRING else None
    return rdflib.Literal(term.value, datatype=datatype)


def render_path(graph: Any, path: Any) -> str:
    """A SHACL property path as SPARQL path text (sequences, inverse, alternatives, */+/?)."""
    import rdflib
    from rdflib.collection import Collection

    sh = rdflib.Namespace(SH)
    if isinstance(path, rdflib.URIRef):
        return compact(str(path))
    if (path, rdflib.RDF.first, None) in graph:
        return "/".join(render_path(graph, p) for p in Collection(graph, path))
    for prop, fmt in ((sh.inversePath, "^{}"), (sh.zeroOrMorePath, "{}*"), (sh.oneOrMorePath, "{}+"),
                      (sh.zeroOrOnePath, "{}?")):
        inner = graph.value(path, prop)
        if inner is not None:
            return fmt.format(render_path(graph, inner))
    alternatives = graph.value(path, sh.alternativePath)
    if alternatives is not None:
        return "(" + "|".join(render_path(graph, p) for p in Collection(graph, alternatives)) + ")"
    return f"_:{path}"


def compact(iri: str) -> str:
    """``aegis:effect`` for a known namespace, ``<iri>`` otherwise; ``_:x`` unchanged."""
    if iri.startswith("_:"):
        return iri
    for prefix, ns in PREFIXES.items():
        if iri.startswith(ns) and "/" not in iri[len(ns):] and "#" not in iri[len(ns):]:
            return f"{prefix}:{iri[len(ns):]}"
    return f"<{iri}>"


def _node_text(node: Any) -> str:
    import rdflib

    if node is None:
        return ""
    if isinstance(node, rdflib.BNode):
        return f"_:{node}"
    return str(node)


def _kind(node: Any) -> str | None:
    import rdflib

    if node is None:
        return None
    if isinstance(node, rdflib.Literal):
        return "literal"
    return "bnode" if isinstance(node, rdflib.BNode) else "iri"


def _constraint_name(component: Any) -> str:
    """``sh:MinCountConstraintComponent`` → ``minCount``."""
    if component is None:
        return "unknown"
    name = str(component).rsplit("#", 1)[-1].rsplit("/", 1)[-1]
    if name.endswith("ConstraintComponent"):
        name = name[: -len("ConstraintComponent")]
    return name[:1].lower() + name[1:] if name else "unknown"


def _severity(node: Any) -> str:
    name = str(node or "").rsplit("#", 1)[-1].lower()
    return name if name in SEVERITIES else "violation"
