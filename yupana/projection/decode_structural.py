"""Structural policies (Selector + Predicate atoms), strictly. Cold path.

As the interop reference §1.1, in the strict direction (docs/vocabulary.md): every
single-valued property with two values is an error, ``rdfs:label`` is required, the
selector must be an ``aegis:Selector`` with one ``aegis:evidenceSource`` (the tree-sitter
query), one ``aegis:language`` and ``aegis:tier "tree-sitter"``, the predicate an
``aegis:Predicate`` with one RE2 ``aegis:evidenceSource`` and a lexical ``aegis:matchType``;
``aegis:gate`` must compile in RE2; ``aegis:appliesTo`` globs are unioned (de-duplicated,
sorted: the store's row order is not defined) and must compile; ``aegis:effect`` defaults
to ``"warn"`` and must be in quipu's closed set; class, verification point and hosting
layer are closed sets. ``aegis:latencyBudgetMs`` must be a non-negative integer literal —
an unparseable value fails the projection (the Rust original dropped it silently).

Also here: the placement fields every policy plane shares, and the hosting-overclaim
audit (a declared ``aegis:hostedAtLayer`` stronger than ``orchestration``).
"""

from __future__ import annotations

from typing import Any

from yupana.projection.subject import Subject, glob, regex
from yupana.projection.vocab import (
    CONSTRAINT_CLASSES,
    EFFECTS,
    HOSTED_AT_LAYERS,
    RDFS_LABEL,
    ROLLOUT_STAGES,
    STRUCTURAL_MATCH_TYPES,
    VERIFICATION_POINTS,
    A,
)

_LAYER_RANK = {"orchestration": 0, "tool": 1, "policy": 2}
_U64_MAX = 2**64 - 1


def decode(policies: list[Subject], atoms: dict[str, Subject]) -> list[dict[str, Any]]:
    """The cache's ``policies`` entries, sorted by IRI."""
    return [decode_policy(p, atoms) for p in sorted(policies, key=lambda s: s.iri)]


def decode_policy(policy: Subject, atoms: dict[str, Subject]) -> dict[str, Any]:
    """One structural policy as the Rust original's ``ProjectedPolicy`` plus ``iri``."""
    check_boundary(policy)
    name = policy.string(RDFS_LABEL)
    selector = linked_atom(policy, A("selector"), atoms, A("Selector"))
    predicate = linked_atom(policy, A("predicate"), atoms, A("Predicate"))
    query = selector.string(A("evidenceSource"))
    language = selector.string(A("language"))
    selector.enum(A("tier"), ("tree-sitter",), required=True)
    pattern = regex(predicate, A("evidenceSource"), predicate.string(A("evidenceSource")))
    match_type = predicate.enum(A("matchType"), STRUCTURAL_MATCH_TYPES, required=True)
    gate = predicate.string(A("gate"), required=False)
    if gate is not None:
        regex(predicate, A("gate"), gate)
    applies_to = [glob(policy, A("appliesTo"), g) for g in policy.strings(A("appliesTo"))]
    place = placement(policy)
    return {
        "iri": policy.iri,
        "rule": {
            "name": name,
            "language": language,
            "query": query,
            "gate": gate,
            "match_type": match_type,
            "pattern": pattern,
            "applies_to": applies_to,
            "message": None,
            "class": place["class"],
            "verification_point": place["verification_point"],
            "backoff_formula": policy.string(A("backoffFormula"), required=False),
        },
        "effect": policy.enum(A("effect"), EFFECTS, default="warn"),
        "latency_budget_ms": latency_budget_ms(policy),
        "hosted_at_layer": place["hosted_at_layer"],
        **staged(policy),
    }


def staged(subject: Subject) -> dict[str, str]:
    """``{"stage": …}`` when the subject states an ``aegis:rolloutStage`` (one of shadow, advise,
    enforce; two values or another word fail the projection), else ``{}`` = enforce."""
    stage = subject.enum(A("rolloutStage"), ROLLOUT_STAGES)
    return {"stage": stage} if stage is not None else {}


def check_boundary(policy: Subject) -> None:
    """Discovery matched ``"action"``; a second boundary value is a conflict."""
    policy.enum(A("boundary"), ("action", "transition"), required=True)


def linked_atom(policy: Subject, link: str, atoms: dict[str, Subject], cls: str) -> Subject:
    """The one atom ``policy`` links to through ``link``, which must be typed ``cls``."""
    iri = policy.links(link, min_count=1, max_count=1)[0]
    atom = atoms.get(iri)
    if atom is None or not atom.predicates():
        raise policy.error(link, f"names <{iri}>, about which the store holds nothing")
    if not atom.is_a(cls):
        short = cls.rsplit("/", 1)[-1]
        raise policy.error(link, f"names <{iri}>, which is not typed aegis:{short}")
    return atom


def placement(policy: Subject) -> dict[str, Any]:
    """``class``, ``verification_point`` and ``hosted_at_layer`` (each None when absent)."""
    return {
        "class": policy.enum(A("constraintClass"), CONSTRAINT_CLASSES),
        "verification_point": policy.enum(A("verificationPoint"), VERIFICATION_POINTS),
        "hosted_at_layer": policy.enum(A("hostedAtLayer"), HOSTED_AT_LAYERS),
    }


def latency_budget_ms(policy: Subject) -> int | None:
    """``aegis:latencyBudgetMs`` as an int; a value that is not a non-negative integer fails."""
    term = policy.one(A("latencyBudgetMs"), required=False)
    if term is None:
        return None
    text = term.value.strip()
    if not term.is_literal or not text.isascii() or not text.isdigit() or int(text) > _U64_MAX:
        raise policy.error(A("latencyBudgetMs"), f"{term.value!r} is not a non-negative integer (milliseconds)")
    return int(text)


def overclaims(entries: list[dict[str, Any]], plane: str) -> list[str]:
    """A notice for each entry whose declared hosting layer is stronger than orchestration.

    yupana runs in agent-harness hooks, i.e. at the orchestration layer; a policy claiming
    ``tool`` or ``policy`` hosting says more than this host delivers. It is still enforced.
    """
    out = []
    for entry in entries:
        layer = entry.get("hosted_at_layer")
        if layer and _LAYER_RANK.get(layer, 0) > _LAYER_RANK["orchestration"]:
            name = entry.get("name") or (entry.get("rule") or {}).get("name")
            out.append(
                f"hosting overclaim: {plane} {name!r} <{entry['iri']}> declares aegis:hostedAtLayer "
                f"\"{layer}\", but yupana enforces it from an agent-harness hook (orchestration layer)"
            )
    return out


def unstaged(subject: Subject, plane: str) -> None:
    """A plane that does not honour ``aegis:rolloutStage`` refuses one: a wire or a memory
    policy stated ``shadow`` would otherwise enforce while it reads as staged."""
    if subject.terms(A("rolloutStage")):
        raise subject.error(A("rolloutStage"), f"is not honoured by {plane} (only text rules, structural "
                            "policies and governed tripwires have a rollout stage, docs/vocabulary.md); remove it, or this policy would "
                            "enforce while it reads as staged")
