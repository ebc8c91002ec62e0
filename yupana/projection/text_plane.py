"""The text-rule plane of a refresh, incremental when the memo of the last one matches. Cold path.

Without a memo every text rule is read, with the store's digest of each rule's triples in
the same answer (:meth:`Reader.read` with ``digests=``). With one (:mod:`.memo`):

1. the rules the memo does not hold are read; then the store digests the others
   (:meth:`Reader.digests`: one row per rule, no triples);
2. a rule whose digest equals the memo's is *kept*: not read, not decoded, not validated —
   its entry and its SHACL results come from the memo; every other rule is read;

A refresh (``progress`` given) reads the rules chunk by chunk and decodes and gates each
chunk as it comes (:mod:`.text_chunks`): those rules join the kept ones (:attr:`TextPlane.gated`),
so that a deadline cut keeps them — the reason for reading unknown rules first.
3. once the exemption selectors and the ``rdfs:subClassOf`` chain are read
   (:func:`settle`), a kept rule is read after all when a selector it links changed, when
   the class chain changed (then every rule is), when another plane read it too (it is
   then one subject with both reads' triples), or when it is the first rule (by IRI)
   linking a selector no read rule links: the SHACL targets of an exemption selector are
   "an IRI a text rule links", so the gate must see one linking rule with it.

What a kept rule would have decoded to and been validated against is exactly what the memo
holds: its own triples are the ones digested, its selectors' triples and the class chain
are compared whole, and the memo's key covers the shapes and the decoding code. The result
is the cache and the report a full refresh gives (tests/projection/test_incremental.py
checks that on randomised catalogue edits).

A store that cannot digest (no ``SHA256``/``GROUP_CONCAT``, or it refuses the query) is read
whole every time, and says so (:attr:`TextPlane.warning`); nothing is kept or memoised.
"""

from __future__ import annotations

from typing import Any

from dataclasses import dataclass, field

from yupana.endpoint.base import EndpointError, HTTPStatus, QueryError, UnsupportedError
from yupana.projection import decode_text, discover
from yupana.projection.gate import ShapeResult
from yupana.projection.memo import Memo, RuleMemo, kept_triples
from yupana.projection.read import Reader
from yupana.projection.subject import Subject
from yupana.projection.text_chunks import Progress, read_in_chunks

READ = "text_rules_read"
PLANE = "text_rules"


@dataclass
class TextPlane:
    """The rules of one refresh: ``read`` (Subjects) and ``kept`` (memo entries), disjoint."""

    read: dict[str, Subject]
    kept: dict[str, RuleMemo] = field(default_factory=dict)
    #: The store's digest of each rule's triples (read or kept); a rule without one is never kept.
    digests: dict[str, str] = field(default_factory=dict)
    #: Whether the store digests at all (False: no memo is written).
    digesting: bool = True
    #: Why the refresh read every rule ("" when it kept some), for the refresh's report.
    full_reason: str = ""
    warning: str = ""
    #: The rules of :attr:`kept` this refresh read, decoded and gated itself (:mod:`.text_chunks`).
    gated: set[str] = field(default_factory=set)
    #: The rules read, once :meth:`release` dropped their triples: ``iri -> (types, links)``.
    released: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = field(default_factory=dict)

    def links(self) -> dict[str, tuple[str, ...]]:
        """Every rule's exemption-selector links (read rules: checked to be IRIs)."""
        found = {iri: tuple(rule.links(decode_text.LINK)) for iri, rule in self.read.items()}
        found.update({iri: facts[1] for iri, facts in self.released.items()})
        found.update({iri: kept[2] for iri, kept in self.kept.items()})
        return found

    def release(self) -> None:
        """Keep of the rules read only what the memo needs (types and links) and let their
        triples go: a refresh of 50 000 rules holds ~100 MB of them until it writes."""
        self.released.update({iri: (tuple(sorted(rule.types())), tuple(rule.links(decode_text.LINK)))
                              for iri, rule in self.read.items()})
        self.read = {}

    def selector_links(self) -> list[str]:
        return sorted({sel for links in self.links().values() for sel in links})

    def kept_types(self) -> set[str]:
        return {t for kept in self.kept.values() for t in kept[1]}


def read_rules(reader: Reader, memo: Memo | None, progress: Progress | None = None,
               atoms: dict[str, Subject] | None = None) -> TextPlane:
    """Discover the text rules and read those the memo cannot stand for (steps 1–2).
    With ``progress``, they are read, decoded and gated chunk by chunk
    (:mod:`.text_chunks`; ``atoms``: the run's, where the selectors they link go)."""
    iris = discover.text_rules(reader)
    if progress is not None:
        progress.rules = len(iris)
    if memo is None or not memo.rules:
        return _read_all(reader, iris, "no memo of a prior refresh" if memo is None else "the memo keeps no rule",
                         progress, atoms)
    # The rules the memo does not hold are read first, so that an attempt the deadline cuts
    # spends its time on rules it can keep; then the store digests the others.
    known = [iri for iri in iris if iri in memo.rules]
    if progress is not None:
        progress.from_memo = len(known)  # until the store's digests say which of them changed
    plane = _read_all(reader, [iri for iri in iris if iri not in memo.rules], "", progress, atoms)
    if not plane.digesting:
        plane.read.update(reader.read(READ, known, PLANE))
        return plane
    try:
        current = reader.digests(READ, known, PLANE)
    except EndpointError as exc:
        if not _cannot_digest(exc):
            raise
        plane.read.update(reader.read(READ, known, PLANE))
        plane.kept, plane.gated, plane.digesting = {}, set(), False
        plane.full_reason, plane.warning = _plain_reason(exc)
        return plane
    kept = {iri: memo.rules[iri] for iri in known if current.get(iri) == memo.rules[iri][0]}
    if progress is not None:
        progress.from_memo = len(kept)
        progress.entries.update(kept)
    changed = _read_all(reader, [iri for iri in known if iri not in kept], "", progress, atoms)
    if not changed.digesting:  # the digests answered, the digested reads did not: keep nothing
        plane.read.update(changed.read)
        plane.read.update(reader.read(READ, sorted(kept), PLANE))
        plane.kept, plane.gated, plane.digesting = {}, set(), False
        plane.full_reason, plane.warning = changed.full_reason, changed.warning
        return plane
    plane.read.update(changed.read)
    plane.kept.update(changed.kept)
    plane.kept.update(kept)
    plane.gated.update(changed.gated)
    plane.digests.update(changed.digests)
    plane.digests.update({iri: current[iri] for iri in kept})
    return plane


def settle(plane: TextPlane, reader: Reader, memo: Memo | None, atoms: dict[str, Subject],
           edges: tuple[tuple[str, str], ...]) -> int:
    """Step 3: read the kept rules that must be read after all; returns how many. The rules
    this refresh gated itself (:attr:`TextPlane.gated`) were checked against what it read:
    only the last two reasons apply to them."""
    if not plane.kept:
        return 0
    from yupana.projection.text_chunks import above, by_sub

    from_memo = [iri for iri in plane.kept if iri not in plane.gated]
    again: set[str] = set()
    if memo is not None and from_memo:
        # The chain above a rule's own types is what its decoding and validation saw.
        old, new = by_sub(memo.classes), by_sub(edges)
        chains: dict[tuple[str, ...], bool] = {}
        for iri in from_memo:
            types = plane.kept[iri][1]
            if types not in chains:
                chains[types] = above(types, old) != above(types, new)
            if chains[types]:
                again.add(iri)
        if again and len(again) == len(from_memo):
            plane.full_reason = "the rdfs:subClassOf chain changed"
        links = plane.links()
        changed = {sel for iri in from_memo for sel in links[iri]
                   if memo.selectors.get(sel) != kept_triples(atoms.get(sel))}
        again |= {iri for iri in from_memo if changed.intersection(links[iri])}
    # A rule another plane read too (linked as a selector, a predicate, …) is one subject
    # with both reads' triples: it is read again, so the gate sees all of them together.
    again |= {iri for iri in plane.kept if iri in reader.subjects}
    links = plane.links()
    linked = {sel for iri in [*plane.read, *again] for sel in links[iri]}
    first: dict[str, str] = {}
    for iri in sorted(plane.kept):
        for sel in links[iri]:
            first.setdefault(sel, iri)
    again |= {first[sel] for sel in first if sel not in linked}
    if not again:
        return 0
    for iri in again:
        del plane.kept[iri]
    plane.gated.difference_update(again)
    found = reader.read(READ, sorted(again), PLANE, digests=plane.digests)
    plane.read.update(found)
    return len(again)


def _read_all(reader: Reader, iris: list[str], reason: str, progress: Progress | None = None,
              atoms: dict[str, Subject] | None = None) -> TextPlane:
    digests: dict[str, str] = {}
    try:
        gated: dict[str, RuleMemo] = {}
        if progress is None:
            rules = reader.read(READ, iris, PLANE, digests=digests)
        else:
            rules, gated = read_in_chunks(reader, iris, digests, {} if atoms is None else atoms, progress)
    except EndpointError as exc:
        if not _cannot_digest(exc):
            raise
        return _plain(reader, iris, exc)
    return TextPlane(read=rules, kept=gated, digests=digests, full_reason=reason, gated=set(gated))


def _plain(reader: Reader, iris: list[str], exc: EndpointError) -> TextPlane:
    rules = reader.read(READ, iris, PLANE)
    reason, warning = _plain_reason(exc)
    return TextPlane(read=rules, digesting=False, full_reason=reason, warning=warning)


def _plain_reason(exc: EndpointError) -> tuple[str, str]:
    return ("the store cannot digest",
            f"the store cannot digest text rules ({exc.message.split(' — ')[0]}), so every refresh reads, decodes "
            "and validates every text rule (docs/refresh.md, Incremental refresh)")


def _cannot_digest(exc: EndpointError) -> bool:
    """The store refused the digest query itself (not a timeout, a lost connection, …)."""
    return isinstance(exc, (QueryError, UnsupportedError)) or type(exc) is HTTPStatus


def memo_of(key: dict[str, Any], plane: TextPlane, entries: list[dict[str, Any]], selectors: dict[str, Subject],
            edges: tuple[tuple[str, str], ...], results: list[ShapeResult]) -> Memo | None:
    """The memo this refresh leaves for the next (None when the store does not digest):
    every rule with a digest, its entry as written and the SHACL results whose focus it is."""
    if not plane.digesting:
        return None
    from yupana.projection.gate_chunks import as_row

    by_focus: dict[str, list[tuple[Any, ...]]] = {}
    for result in results:
        by_focus.setdefault(result.focus, []).append(as_row(result))
    links = plane.links()
    rules: dict[str, RuleMemo] = {}
    for entry in entries:
        iri = entry["iri"]
        digest = plane.digests.get(iri)
        if digest is None:
            continue  # a blank-node object, or a digest the answer lacked: read next time
        kept = plane.kept.get(iri)
        if kept is not None:
            types = kept[1]
        elif iri in plane.read:
            types = tuple(sorted(plane.read[iri].types()))
        else:
            types = plane.released[iri][0]
        rules[iri] = (digest, types, links[iri], entry, tuple(by_focus.get(iri, ())))
    return Memo(key=key, rules=rules, selectors={iri: kept_triples(s) for iri, s in selectors.items()},
                classes=edges)
