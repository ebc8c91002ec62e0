"""The refresh's SHACL gate: the projection validated in bounded chunks, within the deadline. Cold path.

pySHACL holds the whole data graph in an rdflib graph (about 1 KB a triple) and walks every
focus node of every shape; validating 450 000 triples at once took 863 MB. The gate now
checks the shapes itself (:mod:`.gate_native`) and needs pySHACL only for shapes its plan
cannot take, but the chunks stay: they bound the memory of the embedded store answering
the SPARQL targets and of any pySHACL run, and let the deadline cut between them. A refresh
validates in chunks of about ``chunk_triples`` triples, each a self-contained
graph: a set of *roots* (subjects no other read subject links to: policies, text rules,
CI maps, …) with everything they reach through the subjects read (their atoms, exemption
selectors, jobs and commands, the classes of their types and the ``rdfs:subClassOf``
chain above). The refresh deadline is checked before each chunk, so the gate cannot run
past it by more than one chunk.

Why the chunks' results are the whole graph's: every shape of ``shapes/`` looks at a focus
node's own triples, the nodes it links to (``sh:class``, ``sh:node``, two-step paths) and
the class chain, and targets it through its own triples, the class chain, or — for an
exemption selector — a text rule linking it. A chunk holds all of that for each node it
holds (a node comes with the root that reaches it, and that root's links), so each result
a chunk gives is one the whole graph gives, and each node the whole graph targets is
targeted in a chunk holding its linking root. A shared node (a selector many rules link)
is validated in every chunk holding it; identical results are counted once per chunk at
most (the most any one chunk gives). ``tests/projection/test_gate_chunks.py`` compares
chunked with whole validation. A shape reaching further (three-step paths, inverse paths,
targets through another root) would break this: keep shapes local, or validate whole.

``kept`` results (an incremental refresh's, for the text rules it did not read: their
focus is one of those rules and they come from the memo) are added to the report as they
are: those rules' triples are not in any chunk. And when the triples to validate are the
very triples the last refresh validated (:func:`triples_digest`; the memo's key covers
the shapes), the last results are the results: ``same`` skips pySHACL altogether.
"""

from __future__ import annotations

from typing import Any

import gc
import time
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence

from yupana.endpoint.base import Deadline, DeadlineError, Term
from yupana.projection import gate
from yupana.projection.subject import Subject

#: About this many triples a chunk (a root's closure is never split): ~1 s and ~15 MB of
#: rdflib graph each.
CHUNK_TRIPLES = 20_000

Triple = tuple[str, str, Term]


class GateCut(DeadlineError):
    """The deadline passed between two chunks: ``validated`` are the subjects whose chunk ran,
    and ``results`` what those chunks gave (final for every focus node whose chunk ran)."""

    def __init__(self, message: str, validated: set[str], results: list[gate.ShapeResult]) -> None:
        super().__init__(message)
        self.validated = validated
        self.results = results


def validate(subjects: Mapping[str, Subject], shapes_dir: str | None = None, *, kept: Sequence[gate.ShapeResult] = (),
             kept_subjects: int = 0, deadline: Deadline | None = None, chunk_triples: int = CHUNK_TRIPLES,
             same: Sequence[gate.ShapeResult] | None = None) -> gate.GateReport:
    """Validate the triples of ``subjects`` chunk by chunk and add ``kept`` results (see the
    module doc); ``same``: the results of these very triples from the last refresh (nothing
    is run).

    GateError when the shapes or the validator fail; :class:`GateCut` (a DeadlineError) when
    ``deadline`` passes before a chunk (the chunk running then finishes first)."""
    shapes_dir = shapes_dir or gate.default_shapes_dir()
    started = time.perf_counter()
    merged: Counter[gate.ShapeResult] = Counter(same or ())
    count = done = 0
    validated: set[str] = set()
    if same is None:
        gate.load_shapes(shapes_dir)  # a broken shapes directory fails before any chunk runs
        # An rdflib graph is freed only by the cycle collector: collect after each chunk, and
        # freeze what exists now so that each collection looks at the chunk's objects only
        # (without it each chunk left ~15 MB behind until a full collection ran).
        gc.freeze()
        try:
            for chunk in chunks(subjects, chunk_triples):
                count += 1
                if deadline is not None and deadline.expired():
                    raise GateCut(f"the refresh deadline of {deadline.budget:g}s passed before the SHACL gate "
                                  f"(chunk {count}; {done} of {count_triples(subjects)} triples validated): "
                                  "raise [yupana.quipu] refresh_deadline_secs for a catalogue this size",
                                  validated, list(merged.elements()))
                report = gate.validate(chunk, shapes_dir)
                merged |= Counter(report.results)
                done += len(chunk)
                validated.update(s for s, _, _ in chunk)
                del chunk, report
                gc.collect()
        finally:
            gc.unfreeze()
    results = sorted([*merged.elements(), *kept], key=gate.result_order)
    return gate.GateReport(conforms=not any(r.severity == "violation" for r in results), results=results,
                           shapes_dir=shapes_dir, triples=count_triples(subjects),
                           duration_s=time.perf_counter() - started,
                           kept_subjects=kept_subjects, chunks=count)


def chunks(subjects: Mapping[str, Subject], chunk_triples: int = CHUNK_TRIPLES) -> Iterator[list[Triple]]:
    """The triples of ``subjects`` as self-contained chunks of about ``chunk_triples`` triples
    (see the module doc); each chunk's triples are made only when it is validated."""
    links: dict[str, list[str]] = {}
    linked: set[str] = set()
    sizes: dict[str, int] = {}
    for iri, subject in subjects.items():
        out: set[str] = set()
        size = 0
        for p in subject.predicates():
            for o in subject.terms(p):
                size += 1
                if o.kind == "uri" and o.value != iri and o.value in subjects:
                    out.add(o.value)
        links[iri] = sorted(out)
        linked.update(out)
        sizes[iri] = size
    roots = [s for s in sorted(subjects) if s not in linked]
    reached: set[str] = set()
    current: set[str] = set()
    size = 0
    for root in [*roots, *sorted(subjects)]:  # then whatever no root reaches (a cycle)
        if root in reached:
            continue
        for node in _closure(root, links):
            reached.add(node)
            if node not in current:
                current.add(node)
                size += sizes[node]
        if size >= chunk_triples:
            yield [t for s in sorted(current) for t in subjects[s].triples()]
            current, size = set(), 0
    if current or not subjects:
        yield [t for s in sorted(current) for t in subjects[s].triples()]


def count_triples(subjects: Mapping[str, Subject]) -> int:
    """How many triples ``subjects`` hold."""
    return sum(len(subject.terms(p)) for subject in subjects.values() for p in subject.predicates())


def _closure(root: str, links: dict[str, list[str]]) -> list[str]:
    seen = {root}
    todo = [root]
    while todo:
        for node in links.get(todo.pop(), ()):
            if node not in seen:
                seen.add(node)
                todo.append(node)
    return sorted(seen)


def kept_results(rows: Sequence[tuple[Any, ...]]) -> list[gate.ShapeResult]:
    """The memo's result tuples back as :class:`ShapeResult` s."""
    return [gate.ShapeResult(*row) for row in rows]


def as_row(result: gate.ShapeResult) -> tuple[Any, ...]:
    """One result as the memo keeps it (the dataclass's fields in order)."""
    return (result.focus, result.path, result.constraint, result.severity, result.message, result.value,
            result.shape, result.value_kind)


def triples_digest(subjects: Mapping[str, Subject]) -> str:
    """SHA-256 of the triples of ``subjects`` in order (each field length-prefixed: distinct
    triples, distinct digests)."""
    import hashlib

    digest = hashlib.sha256()
    update = digest.update
    for s, p, o in (t for iri in sorted(subjects) for t in subjects[iri].triples()):
        value = o.value
        update(f"{len(s)}:{s}{len(p)}:{p}{o.kind}{len(value)}:{value}{o.datatype or ''}\t{o.lang or ''}\n".encode())
    return digest.hexdigest()
