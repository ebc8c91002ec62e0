"""The SHACL gate: validate governed triples against ``shapes/``. Cold path.

A refresh hands :func:`validate` every (subject, predicate, object) it read for the
governed subjects; the cache is written only when the report :attr:`GateReport.conforms`.
``yupana shapes validate`` (the store's CI) validates Turtle files with pySHACL through
:func:`validate_graph`: that is the reference.

* **The refresh checks SHACL Core itself.** :func:`validate` evaluates every shape the
  native plan takes (:mod:`.gate_native`: core targets and SPARQL targets, predicate and
  sequence paths, the constraints ``shapes/`` uses) on the triples with dict indexes, no
  rdflib data graph; pySHACL validates only the shapes the plan cannot take (a shapes
  graph of their own), and only when one of them has a focus node in the data. With
  today's shapes that is none. ``tests/projection/test_gate_native.py`` asserts the results
  equal :func:`validate_graph` 's on every plane's catalogue and seeded mutations of them.

Choices that matter to callers:

* **Inference is off.** The triples must carry what SHACL needs: the ``rdf:type`` of each
  governed subject and of the atoms it links (selector, predicate, operating point,
  exemption selector, CI job and command), and the ``rdfs:subClassOf`` facts that make a
  subclass instance an ``aegis:TextRule`` (SHACL follows subclass facts found in the data
  graph, exactly as discovery's ``a/rdfs:subClassOf*`` does).
* **Advanced SHACL is on**: plane membership is stated once per shape as a SPARQL target
  (``sh:SPARQLTarget``), mirroring the discovery query, and the constraints are SHACL core.
  Per-focus-node ``sh:sparql`` constraints were ~25x slower under rdflib (each is re-parsed
  per focus node), see docs/shapes.md.
* **The decoders' compile steps run too.** SHACL has no RE2 and no glob compiler; the
  values the shapes mark ``yupana:compiles`` are compiled by the decoders' own steps
  (:mod:`yupana.projection.gate_compiles`) and each refusal is a violation of the same
  report (constraint ``yupana:CompilesAsRE2`` / ``yupana:CompilesAsGlob``), so the store's
  CI sees what every host's refresh would refuse.
* **Only violations refuse.** ``conforms`` is false when some result has severity
  ``violation``; warnings and infos are reported (and fail ``shapes validate`` unless
  ``--allow-warnings``) but never refuse a refresh: they flag what the decoder tolerates.

Every import of rdflib / pyshacl is inside a function: importing this module costs nothing.
"""

from __future__ import annotations

from typing import Any

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from yupana.projection import gate_compiles
from yupana.projection.gate_results import PREFIXES as PREFIXES
from yupana.projection.gate_results import SEVERITIES as SEVERITIES
from yupana.projection.gate_results import SH as SH
from yupana.projection.gate_results import XSD_STRING as XSD_STRING
from yupana.projection.gate_results import ShapeResult as ShapeResult
from yupana.projection.gate_results import _constraint_name, _kind, _severity
from yupana.projection.gate_results import _node_text as _node_text
from yupana.projection.gate_results import compact as compact
from yupana.projection.gate_results import render_path as render_path
from yupana.projection.gate_results import to_rdflib as to_rdflib

class GateError(Exception):
    """The gate could not run (shapes missing or broken, validator failure): not a verdict
    on the data. Callers treat it as an internal error, never as "conforms"."""


@dataclass(slots=True)
class GateReport:
    """The outcome of one validation. ``conforms`` is False iff some result is a violation."""

    conforms: bool
    results: list[ShapeResult] = field(default_factory=list)
    shapes_dir: str = ""
    triples: int = 0
    duration_s: float = 0.0
    #: Subjects whose results an incremental refresh kept from the last one (not validated again).
    kept_subjects: int = 0
    #: Graphs pySHACL validated (a refresh validates in bounded chunks: :mod:`.gate_chunks`).
    chunks: int = 1

    def count(self, severity: str) -> int:
        return sum(1 for r in self.results if r.severity == severity)

    @property
    def text(self) -> str:
        """The human report: a summary line, then one block per result."""
        return render_text(self.results, self.conforms, self.triples)

    def summary(self, limit: int = 3) -> str:
        """One line naming the first ``limit`` violations (for refresh errors)."""
        bad = [r for r in self.results if r.severity == "violation"]
        if not bad:
            return "conforms"
        parts = [f"{compact(r.focus)} {r.path or '(node)'}: {r.message}" for r in bad[:limit]]
        more = f"; and {len(bad) - limit} more" if len(bad) > limit else ""
        return f"{len(bad)} SHACL violation{'s' if len(bad) != 1 else ''}: " + "; ".join(parts) + more


def default_shapes_dir() -> str:
    """The shapes shipped with yupana: ``shapes/`` at the top of the source tree."""
    from yupana.state import paths

    return os.path.join(paths.source_root(), "shapes")


def shape_files(shapes_dir: str) -> list[str]:
    """The ``*.ttl`` files of a shapes directory, sorted; GateError when there are none."""
    if not os.path.isdir(shapes_dir):
        raise GateError(f"no shapes directory at {shapes_dir}")
    files = sorted(os.path.join(shapes_dir, n) for n in os.listdir(shapes_dir) if n.endswith(".ttl"))
    if not files:
        raise GateError(f"{shapes_dir} holds no .ttl shapes files")
    return files


def shapes_digest(shapes_dir: str | None = None) -> str:
    """SHA-256 over the names and contents of the shapes files: a change to any shape is a
    different digest (an incremental refresh then validates everything again)."""
    import hashlib

    digest = hashlib.sha256()
    for path in shape_files(shapes_dir or default_shapes_dir()):
        with open(path, "rb") as fh:
            digest.update(os.path.basename(path).encode() + b"\0" + fh.read() + b"\0")
    return "sha256:" + digest.hexdigest()


_SHAPES_CACHE: dict[tuple[Any, ...], object] = {}


def load_shapes(shapes_dir: str | None = None) -> Any:
    """Parse every shapes file of ``shapes_dir`` into one rdflib Graph (cached per process,
    keyed by the files' paths, sizes and mtimes). GateError names a broken file."""
    import rdflib

    shapes_dir = shapes_dir or default_shapes_dir()
    files = shape_files(shapes_dir)
    key = tuple((f, os.stat(f).st_size, os.stat(f).st_mtime_ns) for f in files)
    cached = _SHAPES_CACHE.get(key)
    if cached is not None:
        return cached
    graph = rdflib.Graph()
    for path in files:
        try:
            graph.parse(path, format="turtle")
        except Exception as exc:  # noqa: BLE001 - any parser failure is a broken shapes file
            raise GateError(f"shapes file {path} does not parse: {exc}") from None
    _SHAPES_CACHE.clear()
    _SHAPES_CACHE[key] = graph
    return graph


def graph_from_triples(triples: Any) -> object:
    """An rdflib Graph holding ``triples`` ((subject, predicate, Term) tuples).

    Each distinct subject, predicate and object is converted once (rdflib terms are costly
    to build, and a catalogue repeats its predicates, types and linked atoms on every rule)."""
    import rdflib

    graph = rdflib.Graph()
    add = graph.add
    names: dict[Any, Any] = {}
    for s, p, o in triples:
        rs = names.get(s)
        if rs is None:
            rs = names[s] = to_rdflib(s)
        rp = names.get(p)
        if rp is None:
            rp = names[p] = to_rdflib(p)
        ro = names.get(o)
        if ro is None:
            ro = names[o] = to_rdflib(o)
        add((rs, rp, ro))
    return graph


def validate(triples: Any, shapes_dir: str | None = None) -> GateReport:
    """Validate governed triples (``(subject, predicate, Term)``) against the shapes: the
    native shapes checked on the triples themselves (:mod:`.gate_native`), the others — if
    any has a focus node here — by pySHACL over an rdflib graph of the triples; SPARQL
    targets answered by the embedded store (:mod:`.gate_targets`) either way."""
    from yupana.projection import gate_native, gate_native_check, gate_targets

    triples = list(triples)
    shapes_dir = shapes_dir or default_shapes_dir()
    shapes = load_shapes(shapes_dir)
    started = time.perf_counter()
    try:
        selection = gate_targets.selected(shapes, triples)
    except (SyntaxError, ValueError) as exc:  # a shape's SELECT the store cannot run
        raise GateError(f"the SHACL validator failed: a SPARQL target of the shapes does not run: {exc}") from None
    try:
        plan = gate_native.plan(shapes)
    except Exception as exc:  # noqa: BLE001 - a shapes graph too broken to read is not a verdict
        raise GateError(f"the SHACL gate cannot read the shapes: {type(exc).__name__}: {exc}") from None
    data = gate_native_check.Data(triples)
    results = gate_native_check.check(plan, data, selection)
    graph = None
    if plan.fallback is not None and any(
            targets is None or gate_native_check.focus_nodes(targets, data, selection)
            for targets in plan.fallback_targets):
        graph = graph_from_triples(triples)
        fallback = gate_targets.resolved(plan.fallback, triples, to_rdflib, selection)
        results += _pyshacl(graph, fallback)
    def compile_checks() -> list[gate_compiles.Refusal]:
        refused = gate_native_check.refusals(shapes, plan, data, selection) if graph is None else None
        if refused is None:  # a shape whose focus nodes only pySHACL finds
            refused = gate_compiles.refusals(graph if graph is not None else graph_from_triples(triples), shapes)
        return refused

    return _report(merge(results, _compile_checks(compile_checks)), shapes_dir, data.count, started)


def validate_graph(data_graph: Any, shapes_dir: str | None = None, *, shapes: Any = None) -> GateReport:
    """Validate an rdflib Graph in place with pySHACL (it is not modified: the shapes hold no
    rules); ``shapes``: the shapes graph to use instead of the one ``shapes_dir`` parses to.
    This is ``yupana shapes validate`` (the store's CI), and the reference the refresh's
    native gate is tested against."""
    shapes_dir = shapes_dir or default_shapes_dir()
    shapes = load_shapes(shapes_dir) if shapes is None else shapes
    started = time.perf_counter()
    results = _pyshacl(data_graph, shapes)
    refused = _compile_checks(lambda: gate_compiles.refusals(data_graph, shapes))
    return _report(merge(results, refused), shapes_dir, len(data_graph), started)


def _compile_checks(run: Callable[[], list[gate_compiles.Refusal]]) -> list[gate_compiles.Refusal]:
    """The compile steps' refusals; GateError when they cannot run (a broken shape, a failing target)."""
    try:
        return run()
    except gate_compiles.CompileCheckError as exc:
        raise GateError(f"a shape's compile check cannot run: {exc}") from None
    except Exception as exc:  # noqa: BLE001 - pySHACL's targets raise many types; none is a verdict
        raise GateError(f"the compile checks failed: {type(exc).__name__}: {exc}") from None


def _report(results: list[ShapeResult], shapes_dir: str, triples: int, started: float) -> GateReport:
    return GateReport(conforms=not any(r.severity == "violation" for r in results), results=results,
                      shapes_dir=shapes_dir, triples=triples, duration_s=time.perf_counter() - started)


def _pyshacl(data_graph: Any, shapes: Any) -> list[ShapeResult]:
    """pySHACL's results for an rdflib data graph and shapes graph."""
    import pyshacl

    try:
        _, report_graph, _ = pyshacl.validate(
            data_graph, shacl_graph=shapes, inference="none", advanced=True, inplace=True,
            allow_warnings=True, allow_infos=True,
        )
    except Exception as exc:  # noqa: BLE001 - pySHACL raises many types; none is a verdict
        raise GateError(f"the SHACL validator failed: {type(exc).__name__}: {exc}") from None
    return parse_report(report_graph, shapes)


def parse_report(report_graph: Any, shapes_graph: Any) -> list[ShapeResult]:
    """Flatten every ``sh:ValidationResult`` of a report graph, in a stable order."""
    import rdflib

    sh = rdflib.Namespace(SH)
    owners = {ps: ns for ns, ps in shapes_graph.subject_objects(sh.property)}
    results = []
    # Only the report's own results: nested ones (sh:detail, or those pySHACL produced while
    # checking an sh:node reference) are restated by the top-level result that cites them.
    top = [n for report in report_graph.subjects(rdflib.RDF.type, sh.ValidationReport)
           for n in report_graph.objects(report, sh.result)]
    for node in top:
        one = report_graph.value
        focus = one(node, sh.focusNode)
        path = one(node, sh.resultPath)
        component = one(node, sh.sourceConstraintComponent)
        severity = one(node, sh.resultSeverity)
        value = one(node, sh.value)
        source = one(node, sh.sourceShape)
        messages = sorted(str(m) for m in report_graph.objects(node, sh.resultMessage))
        shape = owners.get(source, source)
        results.append(ShapeResult(
            focus=_node_text(focus),
            path=None if path is None else render_path(report_graph, path),
            constraint=_constraint_name(component),
            severity=_severity(severity),
            message="; ".join(messages) or f"{_constraint_name(component)} constraint not met",
            value=None if value is None else _node_text(value),
            shape=compact(str(shape)) if isinstance(shape, rdflib.URIRef) else None,
            value_kind=_kind(value),
        ))
    return ordered(results)


def ordered(results: list[ShapeResult]) -> list[ShapeResult]:
    """Results in the report's stable order (:func:`result_order`)."""
    return sorted(results, key=result_order)


def merge(shacl: list[ShapeResult], refused: list[gate_compiles.Refusal]) -> list[ShapeResult]:
    """SHACL's results and the compile steps' refusals as one list of results, in order.

    A refusal is a violation at the subject that holds the value and the property that
    states it (where the refresh's decoder names it), its constraint the step
    (``yupana:CompilesAsRE2``, ``yupana:CompilesAsGlob``) and its message the compiler's own
    reason. A value SHACL already refuses at the same focus node and path (a glob the
    shapes' pattern rejects) is reported once, by SHACL."""
    import rdflib

    shown = {(r.focus, r.path, r.value) for r in shacl if r.severity == "violation"}
    results = list(shacl)
    for refusal in refused:
        result = ShapeResult(
            focus=_node_text(refusal.subject),
            path=compact(str(refusal.predicate)),
            constraint=compact(refusal.step),
            severity="violation",
            message=f"{refusal.problem} — a refresh refuses the projection on it",
            value=str(refusal.value),
            shape=compact(str(refusal.shape)) if isinstance(refusal.shape, rdflib.URIRef) else None,
            value_kind="literal",
        )
        if (result.focus, result.path, result.value) not in shown:
            results.append(result)
    return ordered(results)


_SEVERITY_ORDER = {s: i for i, s in enumerate(SEVERITIES)}


def result_order(r: ShapeResult) -> tuple[int, str, str, str, str, str, str, str]:
    """The stable order of results: severity, focus, path, constraint, value (then message,
    shape and value kind, so that no two results tie and every run lists them alike)."""
    return (_SEVERITY_ORDER.get(r.severity, 9), r.focus, r.path or "", r.constraint, r.value or "", r.message,
            r.shape or "", r.value_kind or "")


def render_text(results: list[ShapeResult], conforms: bool, triples: int) -> str:
    """The human report used by :attr:`GateReport.text`."""
    counts = {s: sum(1 for r in results if r.severity == s) for s in SEVERITIES}
    head = "conforms" if conforms else "DOES NOT CONFORM"
    parts = [f"{n} {s}{'s' if n != 1 else ''}" for s, n in counts.items() if n]
    lines = [f"SHACL gate: {head} ({', '.join(parts) or 'no results'}; {triples} triples)"]
    for r in results:
        where = f"{compact(r.focus)}  {r.path or '(node)'}"
        value = f"  value: {r.shown_value()}" if r.value is not None else ""
        lines.append(f"  {r.severity:<9} {where}  [{r.constraint}]{value}")
        lines.append(f"            {r.message}")
    return "\n".join(lines)
