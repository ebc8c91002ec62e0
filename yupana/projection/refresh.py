"""One refresh: discover, read in batches, decode strictly, build the cache dict. Cold path.

Order (every request shares one :class:`Deadline`):

1. fatal planes — action-boundary policies and their atoms (structural policies,
   tripwires, host-memory policies), text rules and their exemption selectors, grounded
   predicates, CI maps, repository exposure, landing policies; then the ``rdfs:subClassOf`` chain above
   every type read. Any transport failure (truncation included) or strict-decode failure
   here fails the whole projection: :class:`EndpointError` propagates,
   :class:`ProjectionError` is raised.
2. non-fatal planes — the grounding set (only when grounded rules exist), work-item scopes
   and parents (only when ``SHANTY_ROOT`` and ``SHANTY_AGENT`` are both set in ``env``),
   disk history. A failure makes that field ``None`` (UNKNOWN) and adds a notice.

Requests: every discovery query is asked whole (one request; paged by ``max_rows - 1``
rows only when the store cuts it) and every read is batched (``batch_size`` subjects a
request), so for N subjects of a plane a refresh makes one discovery request plus
``ceil(N/batch_size)`` reads; see docs/cache-format.md ("How a refresh reads the store")
for the whole count.

Text rules are incremental (:mod:`yupana.projection.text_plane`): given the memo of the
last successful refresh (:mod:`yupana.projection.memo`), only the rules whose triples the
store digests differently are read and decoded; the others keep their entries.
"""

from __future__ import annotations

from typing import Any

import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from yupana.endpoint.base import Deadline, Endpoint, EndpointError, Term
from yupana.projection import (
    decode_ci,
    decode_exposure,
    decode_grounded,
    decode_landing,
    decode_memory,
    decode_structural,
    decode_text,
    decode_tripwires,
    discover,
    text_chunks,
    text_plane,
)
from yupana.projection.decode_disk import fetch_disk_history
from yupana.projection.decode_workitems import (fetch_grounding, fetch_parents, fetch_scopes, fetch_status,
                                                tracker_wired)
from yupana.projection.digest import rule_set_digest
from yupana.projection.errors import ProjectionError
from yupana.projection.memo import Memo
from yupana.projection.read import Reader
from yupana.projection.subject import Subject
from yupana.projection.vocab import RDFS_SUBCLASS_OF

from yupana.planes import CACHE_VERSION, PLANES, count


@dataclass
class PlaneStats:
    """What one plane cost: subjects (or entries) found, wall time and requests made."""

    count: int = 0
    duration_s: float = 0.0
    requests: int = 0


@dataclass
class Projection:
    """The result of :func:`project`.

    ``cache`` is docs/cache-format.md's object without ``written_at``; ``subjects`` every
    subject read (the governed subjects, their atoms and the classes of the class chain),
    whose :attr:`triples` the SHACL gate validates; ``planes`` per-plane stats; ``notices`` what went UNKNOWN and
    why; ``hosting_overclaims`` the hosting-layer audit (also in ``cache["notices"]``),
    for the ``hosting_overclaim`` spool record.
    """

    cache: dict[str, Any]
    subjects: dict[str, Subject]
    planes: dict[str, PlaneStats]
    notices: list[str]
    hosting_overclaims: list[str] = field(default_factory=list)
    #: The text rules read and kept (:mod:`.text_plane`), the selectors read and the class
    #: chain: what the memo of this refresh is made of.
    text: text_plane.TextPlane = field(default_factory=lambda: text_plane.TextPlane(read={}))
    selectors: dict[str, Subject] = field(default_factory=dict)
    edges: tuple[tuple[str, str], ...] = ()
    #: Seconds: ``server`` (waiting for the store), ``transfer`` (its answers into rows),
    #: ``decode`` (the rest: subjects, strict decoders, the cache object).
    phases: dict[str, float] = field(default_factory=dict)
    #: Said on stderr, not stored: how this refresh could not be incremental.
    warnings: list[str] = field(default_factory=list)

    @property
    def triples(self) -> list[tuple[str, str, Term]]:
        """Every (subject, predicate, object) read, ordered by subject, predicate and object."""
        return [t for iri in sorted(self.subjects) for t in self.subjects[iri].triples()]


def project(endpoint: Endpoint, quipu: dict[str, Any], deadline: Deadline, *, env: dict[str, Any] | None = None,
            memo: Memo | None = None, progress: text_chunks.Progress | None = None) -> Projection:
    """Project the governed catalogue behind ``endpoint`` (``quipu`` = ``config["quipu"]``);
    ``memo``: the last successful refresh's, matching this one (text rules it can stand for
    are kept, not read); ``progress``: read, decode and gate the text rules chunk by chunk
    and count how far it got (:mod:`.text_chunks`: what a deadline cut keeps)."""
    started = time.perf_counter()
    run = _Run(Reader(endpoint, deadline, batch_size=quipu.get("batch_size") or 200,
                      max_rows=quipu.get("max_rows") or 10000))
    read = run.read_fatal(memo, progress)
    decoded = run.decode_fatal(read)
    optional = run.read_optional(dict(os.environ) if env is None else env, grounded=bool(decoded["grounded_rules"]))
    reader = run.reader
    overclaims = (decode_structural.overclaims(decoded["policies"], "policy")
                  + decode_structural.overclaims(decoded["tripwires"], "tripwire"))
    counts: dict[str, int | None] = {"unprojected": len(read.membership.unprojected)}
    cache = {
        "version": CACHE_VERSION,
        "endpoint": endpoint.identity.rstrip("/"),
        "dialect": endpoint.dialect,
        "digest": "",
        "counts": counts,
        **{p.key: (decoded[p.key] if p.key in decoded else optional[p.key]) for p in PLANES},
        "unprojected": read.membership.unprojected,
        "notices": [*reader.notices, *overclaims, *run.failures],
    }
    counts.update({p.key: count(p.key, cache[p.key]) for p in PLANES})
    cache["digest"] = rule_set_digest(cache)
    wall = time.perf_counter() - started
    phases = {"server": reader.server_s, "transfer": reader.transfer_s,
              # the text rules' chunks validated while reading are the gate's time (:mod:`.text_chunks`)
              "decode": max(0.0, wall - reader.server_s - reader.transfer_s - (progress.gate_s if progress else 0.0))}
    text = read.text
    return Projection(cache=cache, subjects=reader.subjects, planes=run.planes, notices=run.failures,
                      hosting_overclaims=overclaims, text=text, edges=read.edges, phases=phases,
                      selectors={iri: run.atoms[iri] for iri in read.selector_iris if iri in run.atoms},
                      warnings=[text.warning] if text.warning else [])


@dataclass
class _Read:
    """What the fatal planes read, before any of it is decoded."""

    policies: dict[str, Subject]
    membership: discover.Membership
    text: text_plane.TextPlane
    selector_iris: list[str]
    grounded_iris: list[str]
    maps: dict[str, Subject]
    jobs: dict[str, Subject]
    commands: dict[str, Subject]
    repos: dict[str, Subject]
    holders: dict[str, Subject]
    landing: dict[str, Subject]
    edges: tuple[tuple[str, str], ...]


class _Run:
    """One refresh's reader, its per-plane stats, the atoms read so far and the non-fatal failures."""

    def __init__(self, reader: Reader) -> None:
        self.reader = reader
        self.planes: dict[str, PlaneStats] = {}
        self.atoms: dict[str, Subject] = {}
        self.failures: list[str] = []

    @contextmanager
    def plane(self, name: str) -> Iterator[PlaneStats]:
        """Time what runs inside as plane ``name``'s work and count its requests."""
        stats = self.planes.setdefault(name, PlaneStats())
        start = time.perf_counter()
        try:
            yield stats
        finally:
            stats.duration_s += time.perf_counter() - start
            stats.requests = self.reader.requests.get(name, 0)

    def read_atoms(self, iris: list[str], name: str) -> None:
        fresh = [i for i in iris if i not in self.atoms]
        self.atoms.update(self.reader.read("atoms_read", fresh, name))

    def read_fatal(self, memo: Memo | None, progress: text_chunks.Progress | None = None) -> _Read:
        """1. The fatal planes: every subject read, then the class chain above their types."""
        reader, plane = self.reader, self.plane
        with plane("policies") as stats:
            policies = reader.read("policies_read", discover.action_policies(reader), "policies")
            self.read_atoms(discover.policy_atoms(policies), "policies")
            stats.count = len(policies)
        with plane("text_rules") as stats:
            if progress is not None:
                progress.atoms = self.atoms
            text = text_plane.read_rules(reader, memo, progress, self.atoms)
            stats.count = len(text.read) + len(text.kept)
        with plane("exemption_selectors") as stats:
            selector_iris = text.selector_links()
            self.read_atoms(selector_iris, "exemption_selectors")
            stats.count = len(selector_iris)
        with plane("grounded_rules") as stats:
            grounded_iris = discover.grounded_predicates(reader)
            self.read_atoms(grounded_iris, "grounded_rules")
            stats.count = len(grounded_iris)
        with plane("ci_map") as stats:
            maps = reader.read("ci_read", discover.ci_maps(reader), "ci_map")
            jobs = reader.read("ci_read", decode_ci.job_links(maps), "ci_map")
            commands = reader.read("ci_read", decode_ci.command_links(jobs), "ci_map")
            stats.count = len(maps)
        with plane("repo_exposure") as stats:
            repos = reader.read("repo_exposure_read", discover.repo_exposures(reader), "repo_exposure")
            stats.count = len(repos)
        with plane("landing_policies") as stats:
            holders = reader.read("landing_read", discover.landing_holders(reader), "landing_policies")
            holders.update(reader.read("landing_read", [i for i in decode_landing.type_links(holders)
                                                        if i not in holders], "landing_policies"))
            landing = reader.read("landing_read", decode_landing.policy_links(holders), "landing_policies")
            stats.count = len(holders)
        subjects = [*policies.values(), *self.atoms.values(), *text.read.values(), *maps.values(), *jobs.values(),
                    *commands.values(), *repos.values(), *holders.values(), *landing.values()]
        with plane("classes") as stats:
            supers = _class_chain(reader, subjects, text.kept_types())
            edges = tuple(sorted((sub, sup) for sub, sups in supers.items() for sup in sups))
            stats.count = len(edges)
        with plane("text_rules"):
            before = set(text.read)
            if text_plane.settle(text, reader, memo, self.atoms, edges):
                _classes_of([text.read[iri] for iri in text.read if iri not in before], supers)
        with plane("policies"):
            membership = discover.classify_policies(policies, self.atoms)
        return _Read(policies, membership, text, selector_iris, grounded_iris, maps, jobs, commands, repos, holders,
                     landing, edges)

    def decode_fatal(self, read: _Read) -> dict[str, Any]:
        """The fatal planes decoded strictly (ProjectionError names the subject and property)."""
        plane, atoms, text = self.plane, self.atoms, read.text
        with plane("policies"):
            structural = decode_structural.decode(read.membership.structural, atoms)
            tripwires = decode_tripwires.decode(read.membership.tripwires)
            memory = decode_memory.decode(read.membership.memory, atoms)
        with plane("text_rules"):
            text_rules, exemption_selectors = decode_text.decode(text.read, atoms,
                                                                 {iri: kept[3] for iri, kept in text.kept.items()})
        with plane("grounded_rules"):
            grounded = decode_grounded.decode([atoms[i] for i in read.grounded_iris])
        with plane("ci_map"):
            ci_map = decode_ci.decode(read.maps, read.jobs, read.commands)
        with plane("repo_exposure"):
            repo_exposure = decode_exposure.decode(read.repos)
        with plane("landing_policies"):
            landing_policies = decode_landing.decode_all(read.holders, read.landing)
        return {"policies": structural, "text_rules": text_rules, "exemption_selectors": exemption_selectors,
                "grounded_rules": grounded, "tripwires": tripwires, "memory_policies": memory, "ci_map": ci_map,
                "repo_exposure": repo_exposure, "landing_policies": landing_policies}

    def read_optional(self, env: dict[str, Any], *, grounded: bool) -> dict[str, Any]:
        """2. The non-fatal planes: a failure makes the plane None (UNKNOWN) and a notice."""
        tracker = tracker_wired(env)
        return {
            "grounding": self._optional("grounding", "the grounding set", fetch_grounding) if grounded else None,
            "work_item_scopes": self._optional("work_item_scopes", "work-item scopes", fetch_scopes) if tracker else None,
            "work_item_parents": self._optional("work_item_parents", "work-item parents", fetch_parents)
            if tracker else None,
            "work_item_status": self._optional("work_item_status", "work-item status", fetch_status)
            if tracker else None,
            "disk_history": self._optional("disk_history", "disk-impact history", fetch_disk_history),
        }

    def _optional(self, name: str, what: str, fetch: Callable[[Reader], dict[str, Any]]) -> dict[str, Any] | None:
        with self.plane(name) as stats:
            try:
                value = fetch(self.reader)
            except (EndpointError, ProjectionError) as exc:
                self.failures.append(f"{what} is UNKNOWN for this refresh: {exc}")
                return None
            stats.count = count(name, value) or 0
            return value


def _class_chain(reader: Reader, subjects: list[Subject], more_types: set[str] | None = None) -> dict[str, set[str]]:
    """Read the subClassOf chain above every type of ``subjects`` (and ``more_types``: the
    kept rules'); fill ``Subject.classes``. The chain's edges join the triples (a validator
    targeting a superclass needs them). Returns the edges read, subclass -> superclasses.
    """
    types = sorted({t for s in subjects for t in s.types()} | (more_types or set()))
    supers: dict[str, set[str]] = {}
    for row in reader.batched_rows("classes_read", "t", types, "classes"):
        sub, sup = row.get("s"), row.get("o")
        if sub is None or sup is None or not sub.is_iri or not sup.is_iri:
            continue
        if sup.value not in supers.setdefault(sub.value, set()):
            supers[sub.value].add(sup.value)
            reader.subject(sub.value).add(RDFS_SUBCLASS_OF, sup)
    _classes_of(subjects, supers)
    return supers


def _classes_of(subjects: list[Subject], supers: dict[str, set[str]]) -> None:
    """Fill each subject's ``classes``: its types and every superclass above them (one set
    shared by the subjects of the same types: nothing changes it afterwards)."""
    shared: dict[tuple[str, ...], set[str]] = {}
    for subject in subjects:
        types = tuple(subject.types())
        seen = shared.get(types)
        if seen is None:
            todo = list(types)
            seen = shared[types] = set(todo)
            while todo:
                for found in supers.get(todo.pop(), ()):
                    if found not in seen:
                        seen.add(found)
                        todo.append(found)
        subject.classes = seen
