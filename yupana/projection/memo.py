"""``projection.memo``: what an incremental refresh keeps from the last successful one. Cold path.

A refresh that succeeded leaves, beside ``projection.json``, a marshal file holding for
every text rule the store's digest of its triples (docs/refresh.md, "Incremental
refresh"), what the next refresh needs to know about it without reading it (its types and
exemption-selector links), its decoded cache entry and the SHACL results whose focus it
is; plus the exemption selectors' triples and the ``rdfs:subClassOf`` chain the rules were
decoded and validated against; and the digest of the triples the gate validated with the
results it gave. The next refresh reads, decodes and validates only the rules whose digest
changed (or whose selectors or class chain did) and keeps the rest — and when the triples
left to validate are the same as last time, it takes the last results without running the
validator.

The memo is a cache of work, never a source of truth: it is used only when its key
matches this refresh exactly — format, ``CACHE_VERSION``, endpoint key, dialect, default
graph, the digest of the shapes, and the digest of the projection code and queries that
produced it. Anything else (another endpoint, a new yupana, edited shapes, a file that is
not a memo, unreadable, too large) means a full refresh; it is never an error. Hooks never
read it.

Each kept rule and the gate's last results are stored as their own marshal bytes beside a
SHA-256 of them (with the rule's IRI): an entry edited or damaged in the file fails its
digest and is discarded — that rule is read from the store again, the gate validates again —
never kept as if the store had said it (:attr:`Memo.discarded` counts them). It is written only after ``projection.json`` was; an older memo left by a failed
write is still correct (every entry is keyed by the digests it came from), it only saves
less work.
"""

from __future__ import annotations

from typing import Any

import hashlib
import marshal
import os
from dataclasses import dataclass, field

from yupana.planes import CACHE_VERSION
from yupana.projection.subject import Subject

FORMAT = 2  # 2: every rule entry and the gate's results carry their own digest
LIMIT = 1 << 30  # a memo past 1 GiB is not read (a full refresh instead)

#: One kept text rule: ``(digest, types, exemption-selector links, cache entry, SHACL results)``;
#: each result is the tuple of :class:`yupana.projection.gate.ShapeResult`'s fields.
RuleMemo = tuple[str, tuple[str, ...], tuple[str, ...], dict[str, Any], tuple[tuple[Any, ...], ...]]
#: One triple as kept: ``(predicate, kind, value, datatype, lang)``.
KeptTriple = tuple[str, str, str, str | None, str | None]


@dataclass
class Memo:
    """The memo of one successful refresh (see the module doc)."""

    key: dict[str, Any]
    rules: dict[str, RuleMemo] = field(default_factory=dict)
    #: Exemption selector IRI -> its triples as read, sorted.
    selectors: dict[str, tuple[KeptTriple, ...]] = field(default_factory=dict)
    #: Every ``rdfs:subClassOf`` edge read, sorted.
    classes: tuple[tuple[str, str], ...] = ()
    #: The triples the gate validated — ``(count, digest)`` — and the results it gave, or None.
    gate: tuple[int, str, tuple[tuple[Any, ...], ...]] | None = None
    #: Entries the file held that failed their digest (dropped when it was read).
    discarded: int = 0


def path_for(cache_path: str) -> str:
    """``projection.memo`` beside ``projection.json`` (same stem, like the hot twin)."""
    return os.path.splitext(cache_path)[0] + ".memo"


def key_for(endpoint: str, dialect: str, default_graph: str | None, shapes_digest: str) -> dict[str, Any]:
    """What a memo must have been written for to be used by this refresh."""
    return {"format": FORMAT, "cache_version": CACHE_VERSION, "endpoint": endpoint, "dialect": dialect,
            "default_graph": default_graph or None, "shapes": shapes_digest, "code": code_digest()}


_CODE: list[str] = []


def code_digest() -> str:
    """SHA-256 over the projection code, the plane registry and the query files: a memo
    written by other decoders or other queries is not this refresh's memo."""
    if not _CODE:
        from yupana import __version__
        from yupana.projection import queries

        here = os.path.dirname(os.path.abspath(__file__))
        files = sorted(os.path.join(here, n) for n in os.listdir(here) if n.endswith(".py"))
        files.append(os.path.join(os.path.dirname(here), "planes.py"))
        qdir = queries.queries_dir()
        files += sorted(os.path.join(qdir, n) for n in os.listdir(qdir) if n.endswith(".rq"))
        digest = hashlib.sha256(__version__.encode())
        for path in files:
            with open(path, "rb") as fh:
                digest.update(os.path.basename(path).encode() + b"\0" + fh.read() + b"\0")
        _CODE.append(digest.hexdigest())
    return _CODE[0]


def load(path: str, key: dict[str, Any]) -> tuple[Memo | None, str]:
    """``(memo, "")`` when ``path`` holds a memo for exactly ``key``, else ``(None, why not)``."""
    from yupana.state import statefile

    try:
        raw = statefile.read(path, LIMIT)
    except FileNotFoundError:
        return None, "no memo of a prior refresh"
    except (OSError, statefile.Refused) as exc:
        return None, f"the memo is unreadable ({exc})"
    try:
        doc = marshal.loads(raw)
    except (ValueError, EOFError, TypeError) as exc:
        return None, f"the memo is not a memo ({exc})"
    if not isinstance(doc, dict) or not isinstance(doc.get("key"), dict):
        return None, "the memo is not a memo"
    if doc["key"] != key:
        changed = sorted(k for k in set(key) | set(doc["key"]) if key.get(k) != doc["key"].get(k))
        return None, f"the memo was written for another {', '.join(changed)}"
    rules, selectors, classes = doc.get("rules"), doc.get("selectors"), doc.get("classes")
    if not isinstance(rules, dict) or not isinstance(selectors, dict) or not isinstance(classes, tuple):
        return None, "the memo is not a memo"
    kept: dict[str, RuleMemo] = {}
    discarded = 0
    for iri, sealed in rules.items():
        entry = _unseal(iri, sealed)
        if isinstance(entry, tuple) and len(entry) == 5 and isinstance(entry[3], dict):
            kept[iri] = entry
        else:
            discarded += 1
    gate = None
    if doc.get("gate") is not None:
        found = _unseal("gate", doc["gate"])
        if isinstance(found, tuple) and len(found) == 3:
            gate = found
        else:
            discarded += 1
    return Memo(key=doc["key"], rules=kept, selectors=selectors, classes=classes, gate=gate,
                discarded=discarded), ""


def _seal(name: str, value: Any) -> tuple[bytes, bytes]:
    """``value`` as its marshal bytes and their digest (bound to ``name``: an entry moved to
    another rule fails too)."""
    blob = marshal.dumps(value)
    return blob, hashlib.sha256(name.encode("utf-8", "surrogatepass") + b"\0" + blob).digest()


def _unseal(name: str, sealed: Any) -> Any:
    """What :func:`_seal` sealed, or None when it is not a sealed value or fails its digest."""
    if not (isinstance(sealed, tuple) and len(sealed) == 2 and isinstance(sealed[0], bytes)
            and isinstance(sealed[1], bytes)):
        return None
    blob, digest = sealed
    if hashlib.sha256(name.encode("utf-8", "surrogatepass") + b"\0" + blob).digest() != digest:
        return None
    try:
        return marshal.loads(blob)
    except (ValueError, EOFError, TypeError):
        return None


def save(path: str, memo: Memo) -> str | None:
    """Write ``memo`` atomically; None, or why it could not be written."""
    from yupana.state import atomic

    body = marshal.dumps({"key": memo.key, "rules": {iri: _seal(iri, entry) for iri, entry in memo.rules.items()},
                          "selectors": memo.selectors, "classes": memo.classes,
                          "gate": _seal("gate", memo.gate) if memo.gate is not None else None})
    try:
        atomic.write(path, body)
    except OSError as exc:
        return f"cannot write {path}: {exc.strerror or exc} (the next refresh keeps less of this one)"
    return None


def discard(path: str) -> None:
    """Remove the memo at ``path`` (best effort)."""
    try:
        os.unlink(path)
    except OSError:
        pass


def kept_triples(subject: Subject | None) -> tuple[KeptTriple, ...]:
    """A subject's triples as the memo keeps them (sorted), () for none."""
    if subject is None:
        return ()
    return tuple(sorted((p, t.kind, t.value, t.datatype or "", t.lang or "")
                        for p in subject.predicates() for t in subject.terms(p)))
