"""Plane membership: the discovery queries, and how action-boundary Policies divide. Cold path.

Discovery finds each plane's subjects (docs/vocabulary.md, "Plane membership"). Action
policies are discovered together and told apart from their batched reads, because what
makes a Policy structural, a tripwire or a host-memory policy is a property of its atoms:

* host-memory — an ``aegis:operatingPoint`` whose ``aegis:calibrationBasis`` is
  ``"MemAvailable GiB"``;
* structural — otherwise, an ``aegis:selector`` with ``aegis:tier "tree-sitter"``;
* tripwire — no selector, no predicate, at least one ``aegis:appliesTo``;
* anything else is *unprojected* and listed with the reason, so nothing vanishes silently.
"""

from __future__ import annotations

from typing import Any

from dataclasses import dataclass, field

from yupana.projection.read import Reader
from yupana.projection.subject import Subject
from yupana.projection.vocab import MEMORY_BASIS, A

SELECTOR, PREDICATE, OPERATING_POINT = A("selector"), A("predicate"), A("operatingPoint")
POLICY_LINKS = (SELECTOR, PREDICATE, OPERATING_POINT)


def action_policies(reader: Reader) -> list[str]:
    """Every ``aegis:Policy`` at ``aegis:boundary "action"``."""
    return reader.discover("policies_discover", "policies")


def text_rules(reader: Reader) -> list[str]:
    """Every subject typed ``aegis:TextRule`` or a subclass (``a/rdfs:subClassOf*``)."""
    return reader.discover("text_rules_discover", "text_rules")


def grounded_predicates(reader: Reader) -> list[str]:
    """Every ``aegis:Predicate`` with ``aegis:candidateSource "token"``."""
    return reader.discover("grounded_discover", "grounded_rules")


def ci_maps(reader: Reader) -> list[str]:
    """Every ``aegis:CiMap``."""
    return reader.discover("ci_maps_discover", "ci_map")


def repo_exposures(reader: Reader) -> list[str]:
    """Every subject of ``aegis:exposure`` (a repository whose exposure the graph states)."""
    return reader.discover("repo_exposure_discover", "repo_exposure", prop="aegis:exposure")


def landing_holders(reader: Reader) -> list[str]:
    """Every subject of ``aegis:landingPolicy`` or ``aegis:repositoryType`` (the landing lookup
    starts from the policy link, then the repository type: docs/vocabulary.md)."""
    return reader.discover("landing_discover", "landing_policies", prop="aegis:landingPolicy")


def policy_atoms(policies: dict[str, Subject]) -> list[str]:
    """The selector, predicate and operating-point IRIs the policies link to (sorted)."""
    found: set[str] = set()
    for policy in policies.values():
        for link in POLICY_LINKS:
            found.update(policy.links(link))
    return sorted(found)


@dataclass
class Membership:
    structural: list[Subject] = field(default_factory=list)
    tripwires: list[Subject] = field(default_factory=list)
    memory: list[Subject] = field(default_factory=list)
    #: ``{"iri", "reason"}`` for policies no plane takes.
    unprojected: list[dict[str, Any]] = field(default_factory=list)


def classify_policies(policies: dict[str, Subject], atoms: dict[str, Subject]) -> Membership:
    """Divide action policies among the planes. A link to an atom the store holds nothing
    about is a :class:`ProjectionError` on the policy (a typo must not demote a policy)."""
    out = Membership()
    for iri in sorted(policies):
        policy = policies[iri]
        linked = {}
        for link in POLICY_LINKS:
            linked[link] = [atoms[a] for a in policy.links(link)]
            for atom in linked[link]:
                if not atom.predicates():
                    raise policy.error(link, f"names <{atom.iri}>, about which the store holds nothing")
        if any(_literal_is(op, A("calibrationBasis"), MEMORY_BASIS) for op in linked[OPERATING_POINT]):
            out.memory.append(policy)
        elif any(_literal_is(sel, A("tier"), "tree-sitter") for sel in linked[SELECTOR]):
            out.structural.append(policy)
        elif not linked[SELECTOR] and not linked[PREDICATE] and policy.has(A("appliesTo")):
            out.tripwires.append(policy)
        else:
            out.unprojected.append({"iri": iri, "reason": _reason(linked)})
    return out


def _literal_is(subject: Subject, predicate: str, value: str) -> bool:
    return any(t.is_literal and t.value == value for t in subject.terms(predicate))


def _reason(linked: dict[str, list[Subject]]) -> str:
    if linked[SELECTOR]:
        tiers = sorted({t.value for sel in linked[SELECTOR] for t in sel.terms(A("tier"))})
        found = f" (found {', '.join(repr(t) for t in tiers)})" if tiers else ""
        return ("its aegis:selector has no aegis:tier \"tree-sitter\"" + found + " and it has no "
                "\"MemAvailable GiB\" operating point: no plane at the action seam evaluates it")
    if linked[PREDICATE]:
        return ("it has an aegis:predicate but no aegis:selector: not a structural policy, a tripwire "
                "or a host-memory policy, so it is not enforced at the action seam")
    return "it has no aegis:selector, no aegis:predicate and no aegis:appliesTo: nothing to evaluate at the action seam"
