"""Text rules read, decoded and SHACL-gated a chunk at a time, so a cut attempt keeps its work. Cold path.

A refresh of a large catalogue (50 000 rules) can spend its whole deadline reading. Read
as one block and gated at the end, a cut attempt kept nothing, and the next attempt started
from zero again: it never converged. Here the rules to read are taken ``chunk_rules`` at a
time, and each chunk is, in turn:

1. read from the store (with the store's digest of each rule, :meth:`Reader.read`);
2. given what its decoding and validation need: the exemption selectors it links (read
   once per refresh, into the run's atoms) and the ``rdfs:subClassOf`` chain above its types;
3. decoded strictly (a chunk with a malformed rule is not gated here: it is left to the
   refresh's decoding of every rule, which fails naming subject and property, exactly as
   a refresh that never chunked);
4. validated by the SHACL gate as one graph: the chunk's rules, the selectors they link and
   the class chain (:func:`yupana.projection.gate.validate`);
5. turned into memo entries (:data:`~yupana.projection.memo.RuleMemo`: digest, types,
   links, cache entry, the results whose focus the rule is) — exactly what the memo keeps
   for an unchanged rule, so the rest of the refresh treats the chunk as kept rules, and
   their triples are let go.

The first rule (in the order read) linking each exemption selector stays read and is not
gated here: a selector's SHACL targets are "an IRI a text rule links", so the final gate
validates each selector with one linking rule (as :func:`.text_plane.settle` does for an
incremental refresh); so does a rule the store cannot digest (it could not be kept).

:class:`Progress` counts what the attempt got to (rules found, read, decoded, gated) and
holds the entries a deadline cut leaves in the memo (:func:`cut_memo`), so the next attempt
reads only the rest. The deadline is checked before every chunk's gate, as before every
request; the chunk then running finishes first (well under a second at the default size).
"""

from __future__ import annotations

from typing import Any

import time
from dataclasses import dataclass, field

from yupana.endpoint.base import Deadline
from yupana.projection import decode_text
from yupana.projection.errors import ProjectionError
from yupana.projection.memo import Memo, RuleMemo, kept_triples
from yupana.projection.read import Reader
from yupana.projection.subject import Subject
from yupana.projection.vocab import RDFS_SUBCLASS_OF

#: Rules a chunk: ~15 000 triples of a typical rule (7–8 triples each), under a second of
#: reading, decoding and validating on a loaded 2-core machine.
CHUNK_RULES = 2000


@dataclass
class Progress:
    """How far one refresh attempt got with the text rules, and what a cut keeps."""

    deadline: Deadline
    shapes_dir: str | None = None
    chunk_rules: int = field(default_factory=lambda: CHUNK_RULES)
    #: Text rules the store holds (found by discovery); None until discovery answered.
    rules: int | None = None
    #: Rules the memo of an earlier attempt holds (not read again), then, once the store has
    #: digested them, those it still holds unchanged.
    from_memo: int = 0
    read: int = 0
    decoded: int = 0
    gated: int = 0
    #: Rules kept in the memo when the attempt ended (set when it is written).
    kept_in_memo: int | None = None
    #: What the attempt was doing when the deadline cut it ("" when it was not cut).
    cut_at: str = ""
    #: Every rule decoded and validated so far, memo-kept ones included: what a cut leaves.
    entries: dict[str, RuleMemo] = field(default_factory=dict)
    #: The rules of :attr:`entries` gated by this attempt (the rest came from the memo).
    gated_iris: set[str] = field(default_factory=set)
    #: Exemption selectors linked so far (a linking rule of each stays read, see the module doc).
    linked: set[str] = field(default_factory=set)
    #: The ``rdfs:subClassOf`` edges read so far, and the types whose chain was read.
    edges: set[tuple[str, str]] = field(default_factory=set)
    chained: set[str] = field(default_factory=set)
    #: The run's atoms (the selectors read so far), for :func:`cut_memo`.
    atoms: dict[str, Subject] = field(default_factory=dict)
    #: Chunks validated here, and their triples (added to the gate's report).
    chunks: int = 0
    triples: int = 0
    gate_s: float = 0.0

    def as_json(self) -> dict[str, Any]:
        """``project --json``'s ``progress``: how far this attempt got."""
        return {"rules": self.rules, "from_memo": self.from_memo, "read": self.read, "decoded": self.decoded,
                "gated": self.gated, "kept_in_memo": self.kept_in_memo, "cut_at": self.cut_at or None}

    def line(self) -> str:
        """The same, in words (``yupana project`` and the refresh log)."""
        total = "?" if self.rules is None else str(self.rules)
        kept = "" if self.kept_in_memo is None else f"; {self.kept_in_memo} kept in the memo"
        memo = f" ({self.from_memo} from the memo)" if self.from_memo else ""
        where = f"; cut while {self.cut_at}" if self.cut_at else ""
        return (f"text rules: {self.read} of {total} read{memo}, {self.decoded} decoded, "
                f"{self.gated + self.from_memo} of {total} gated{kept}{where}")


def read_in_chunks(reader: Reader, iris: list[str], digests: dict[str, str], atoms: dict[str, Subject],
                   progress: Progress) -> tuple[dict[str, Subject], dict[str, RuleMemo]]:
    """Read ``iris`` chunk by chunk, decoding and gating each (see the module doc).
    Returns ``(read, gated)``: the rules left for the final gate, and the memo entries of
    the rules gated here. DeadlineError and GateError propagate."""
    left: dict[str, Subject] = {}
    gated: dict[str, RuleMemo] = {}
    for start in range(0, len(iris), max(1, progress.chunk_rules)):
        chunk = iris[start:start + max(1, progress.chunk_rules)]
        progress.cut_at = "reading text rules"
        rules = reader.read("text_rules_read", chunk, "text_rules", digests=digests)
        progress.read += len(chunk)
        progress.cut_at = "reading the selectors and class chain of text rules"
        _prepare(reader, rules, atoms, progress)
        progress.cut_at = "decoding text rules"
        try:
            entries, _ = decode_text.decode(rules, atoms)
        except ProjectionError:
            # Left for the refresh's own decoding of every rule, which fails on it with the
            # same words as a refresh that never chunked (a selector's error names every
            # rule linking it, not only this chunk's).
            left.update(rules)
            continue
        progress.decoded += len(chunk)
        progress.cut_at = "validating text rules"
        progress.deadline.check(f"validating text rules {start + 1}–{start + len(chunk)} with the SHACL gate")
        done = _gate(reader, rules, entries, atoms, digests, progress)
        gated.update(done)
        progress.entries.update(done)
        progress.gated_iris.update(done)
        progress.gated += len(done)
        for iri in done:  # kept from here on: its triples are not validated again, nor held
            del rules[iri]
            reader.subjects.pop(iri, None)
        left.update(rules)
    progress.cut_at = "reading the other planes"
    return left, gated


def _prepare(reader: Reader, rules: dict[str, Subject], atoms: dict[str, Subject], progress: Progress) -> None:
    """Read the selectors ``rules`` link and the class chain above their types (each once)."""
    fresh = [iri for iri in decode_text.selector_links(rules) if iri not in atoms]
    if fresh:
        atoms.update(reader.read("atoms_read", fresh, "exemption_selectors"))
    types = sorted({t for rule in rules.values() for t in rule.types()} - progress.chained)
    if not types:
        return
    for row in reader.batched_rows("classes_read", "t", types, "classes"):
        sub, sup = row.get("s"), row.get("o")
        if sub is None or sup is None or not sub.is_iri or not sup.is_iri:
            continue
        if (sub.value, sup.value) not in progress.edges:
            progress.edges.add((sub.value, sup.value))
            reader.subject(sub.value).add(RDFS_SUBCLASS_OF, sup)
    progress.chained.update(types)


def _gate(reader: Reader, rules: dict[str, Subject], entries: list[dict[str, Any]], atoms: dict[str, Subject],
          digests: dict[str, str], progress: Progress) -> dict[str, RuleMemo]:
    """Validate one chunk; the memo entries of its rules that can be kept (see the module doc)."""
    from yupana.projection import gate, gate_chunks

    hold: set[str] = set()
    for iri in sorted(rules):
        if iri not in digests:
            hold.add(iri)
        for sel in rules[iri].links(decode_text.LINK):
            if sel not in progress.linked:
                progress.linked.add(sel)
                hold.add(iri)
    graph: dict[str, Subject] = dict(rules)
    for rule in rules.values():
        for sel in rule.links(decode_text.LINK):
            graph[sel] = atoms[sel]
    todo = sorted({t for rule in rules.values() for t in rule.types()})
    while todo:  # the chain above the types, as the subjects that state it
        cls = todo.pop()
        if cls in graph or cls not in reader.subjects:
            continue
        graph[cls] = reader.subjects[cls]
        todo.extend(t.value for t in reader.subjects[cls].terms(RDFS_SUBCLASS_OF) if t.is_iri)
    started = time.perf_counter()
    report = gate.validate([t for iri in sorted(graph) for t in graph[iri].triples()], progress.shapes_dir)
    progress.gate_s += time.perf_counter() - started
    progress.chunks += 1
    progress.triples += report.triples
    by_focus: dict[str, list[tuple[Any, ...]]] = {}
    for result in report.results:
        by_focus.setdefault(result.focus, []).append(gate_chunks.as_row(result))
    return {entry["iri"]: (digests[entry["iri"]], tuple(sorted(rules[entry["iri"]].types())),
                           tuple(rules[entry["iri"]].links(decode_text.LINK)), entry,
                           tuple(by_focus.get(entry["iri"], ())))
            for entry in entries if entry["iri"] not in hold}


def above(types: tuple[str, ...] | list[str], edges: dict[str, set[str]]) -> frozenset[tuple[str, str]]:
    """The ``rdfs:subClassOf`` edges reachable upwards from ``types`` (``edges``: sub -> sups)."""
    found: set[tuple[str, str]] = set()
    todo = list(types)
    seen = set(todo)
    while todo:
        sub = todo.pop()
        for sup in edges.get(sub, ()):
            found.add((sub, sup))
            if sup not in seen:
                seen.add(sup)
                todo.append(sup)
    return frozenset(found)


def by_sub(edges: Any) -> dict[str, set[str]]:
    """``(sub, sup)`` pairs as sub -> superclasses."""
    out: dict[str, set[str]] = {}
    for sub, sup in edges:
        out.setdefault(sub, set()).add(sup)
    return out


def cut_memo(key: dict[str, Any], progress: Progress, prior: Memo | None, atoms: dict[str, Subject]) -> Memo | None:
    """The memo a deadline cut leaves: every rule decoded and validated so far, with the
    selectors and class chain they were validated against, and the rules of ``prior`` (the
    next attempt digests them as it digests any memo's). A rule of ``prior`` this attempt did
    not gate goes on only when what it was checked against is unchanged as far as this
    attempt read (its selectors, the chain above its types)."""
    entries = dict(prior.rules) if prior is not None else {}  # not verified yet: the next attempt digests them
    entries.update(progress.entries)
    if not entries:
        return None
    old_selectors = dict(prior.selectors) if prior is not None else {}
    old_edges = set(prior.classes) if prior is not None else set()
    selectors = dict(old_selectors)
    for sel in {s for entry in entries.values() for s in entry[2]}:
        if sel in atoms:
            selectors[sel] = kept_triples(atoms[sel])
    edges = old_edges | progress.edges
    old_map, new_map = by_sub(old_edges), by_sub(edges)
    rules: dict[str, RuleMemo] = {}
    for iri, entry in entries.items():
        if iri not in progress.gated_iris:
            if any(selectors.get(sel) != old_selectors.get(sel) for sel in entry[2]):
                continue
            if above(entry[1], old_map) != above(entry[1], new_map):
                continue
        rules[iri] = entry
    linked = {sel for entry in rules.values() for sel in entry[2]}
    return Memo(key=key, rules=rules, selectors={s: t for s, t in selectors.items() if s in linked},
                classes=tuple(sorted(edges)))
