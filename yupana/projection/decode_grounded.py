"""Grounded (entity-grounded) predicates, strictly. Cold path.

Interop §1.4 and docs/vocabulary.md: an ``aegis:Predicate`` with ``aegis:candidateSource
"token"`` (exactly that one value), an ``aegis:groundingQuery`` (required, exactly 1; its
text is not run — the grounding set comes from yupana's own query), ``aegis:matchType`` in
``must-ground | must-not-ground``, optional ``aegis:name`` (exactly 1 when present; the
IRI's tail otherwise), ``rdfs:label`` and ``rdfs:comment`` (repeats merged, not duplicated
as the Rust original did), ``aegis:enforcementTier`` ``block | warn`` (absent = ``warn``).
"""

from __future__ import annotations

from typing import Any

from yupana.projection.decode_structural import staged
from yupana.projection.subject import Subject, merged, name_from_iri
from yupana.projection.vocab import GROUNDED_MATCH_TYPES, RDFS_COMMENT, RDFS_LABEL, TEXT_TIERS, A


def decode(predicates: list[Subject]) -> list[dict[str, Any]]:
    """The cache's ``grounded_rules`` entries, sorted by IRI."""
    return [decode_predicate(p) for p in sorted(predicates, key=lambda s: s.iri)]


def decode_predicate(pred: Subject) -> dict[str, Any]:
    pred.enum(A("candidateSource"), ("token",), required=True)
    pred.string(A("groundingQuery"))
    return {
        "iri": pred.iri,
        "name": pred.string(A("name"), required=False) or name_from_iri(pred),
        "label": merged(pred.strings(RDFS_LABEL)),
        "match_type": pred.enum(A("matchType"), GROUNDED_MATCH_TYPES, required=True),
        "tier": pred.enum(A("enforcementTier"), TEXT_TIERS, default="warn"),
        "rationale": merged(pred.strings(RDFS_COMMENT)),
        **staged(pred),
    }
