"""The W3C SPARQL 1.1 Query Results JSON Format, read strictly.

Handled: ``uri``, ``literal`` (with ``datatype`` or ``xml:lang``), the legacy
``typed-literal``, ``bnode``; unbound variables are absent from a row; ASK answers as
JSON ``true``/``false``, ``1``/``0`` or those words as strings. A literal with neither
datatype nor language is an ``xsd:string`` (RDF 1.1), and a language-tagged literal
carries its language and no datatype, exactly as the embedded store reports them, so
a catalogue decodes the same through every transport.

Anything else (RDF-star triple terms, a missing ``results.bindings``, a value that is
not a string) is an :class:`EndpointError` of kind ``protocol``: never a partial answer.
"""

from __future__ import annotations

from yupana.endpoint.base import XSD, EndpointError, ProtocolError, SelectResult, Term, UnsupportedError

XSD_STRING = XSD + "string"
RDF_LANGSTRING = "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString"


def parse_select(doc: object, source: str) -> SelectResult:
    """A SELECT answer: ``{"head": {"vars": […]}, "results": {"bindings": […]}}``."""
    if not isinstance(doc, dict):
        raise _bad(source, f"expected a JSON object, got {type(doc).__name__}")
    if "results" not in doc and "boolean" in doc:
        raise _bad(source, "expected SELECT results, got a boolean (ASK) answer")
    head = doc.get("head")
    variables = head.get("vars", []) if isinstance(head, dict) else None
    if not isinstance(variables, list) or not all(isinstance(v, str) for v in variables):
        raise _bad(source, "missing or malformed head.vars")
    results = doc.get("results")
    bindings = results.get("bindings") if isinstance(results, dict) else None
    if not isinstance(bindings, list):
        raise _bad(source, "missing results.bindings (is this a SPARQL results document?)")
    rows: list[dict[str, Term]] = []
    for index, binding in enumerate(bindings):
        if not isinstance(binding, dict):
            raise _bad(source, f"row {index} is not an object")
        rows.append({name: parse_term(value, source, name, index) for name, value in binding.items()})
    return SelectResult(list(variables), rows)


def parse_term(value: object, source: str, name: str = "?", index: int = 0) -> Term:
    """One RDF term of a binding (the common shapes first: this runs for every cell)."""
    if type(value) is dict:
        kind = value.get("type")
        text = value.get("value")
        if type(text) is str:
            if kind == "uri":
                return Term("uri", text)
            if kind == "literal" or kind == "typed-literal":
                lang = value.get("xml:lang")
                datatype = value.get("datatype")
                if lang is None and datatype is None:
                    return Term("literal", text, XSD_STRING)
                if lang is None and type(datatype) is str and datatype != RDF_LANGSTRING:
                    return Term("literal", text, datatype)
                if type(lang) is str and lang and (datatype is None or datatype == RDF_LANGSTRING):
                    return Term("literal", text, None, lang)
            elif kind == "bnode":
                return Term("bnode", text)
    return _term_slow(value, source, name, index)


def _term_slow(value: object, source: str, name: str, index: int) -> Term:
    """The exact rules, with an error that says where; reached for unusual or bad terms."""
    where = f"row {index}, ?{name}"
    if not isinstance(value, dict):
        raise _bad(source, f"{where}: a term must be an object, got {type(value).__name__}")
    kind = value.get("type")
    text = value.get("value")
    if kind == "triple":
        raise UnsupportedError(f"{source}: {where}: RDF-star triple terms are not supported")
    if not isinstance(text, str):
        raise _bad(source, f"{where}: the term's value is missing or not a string")
    if kind == "uri":
        return Term("uri", text)
    if kind == "bnode":
        return Term("bnode", text)
    if kind in ("literal", "typed-literal"):
        lang = value.get("xml:lang")
        datatype = value.get("datatype")
        if lang is not None and not isinstance(lang, str) or datatype is not None and not isinstance(datatype, str):
            raise _bad(source, f"{where}: xml:lang and datatype must be strings")
        if lang:
            return Term("literal", text, None, lang)
        if datatype == RDF_LANGSTRING:
            raise _bad(source, f"{where}: an rdf:langString literal without xml:lang")
        return Term("literal", text, datatype or XSD_STRING)
    raise _bad(source, f"{where}: unknown term type {kind!r}")


def parse_boolean(doc: object, source: str) -> bool:
    """An ASK answer: ``{"head": {}, "boolean": true}`` (also 1/0, "true"/"false")."""
    value = doc.get("boolean") if isinstance(doc, dict) else None
    if value is True or value == 1 and not isinstance(value, float) or value in ("true", "1"):
        return True
    if value is False or value == 0 and not isinstance(value, float) or value in ("false", "0"):
        return False
    raise _bad(source, f"expected an ASK answer with a boolean, got {str(doc)[:120]!r}")


def _bad(source: str, detail: str) -> EndpointError:
    return ProtocolError(f"{source}: not a valid SPARQL JSON result: {detail} — is the endpoint the "
                                     "store's SPARQL query URL?")
