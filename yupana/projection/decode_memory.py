"""Host-memory policies, strictly. Cold path.

A host-memory policy (docs/vocabulary.md, "Host-memory policies") is an action-boundary
``aegis:Policy`` whose Selector inspects the live command line (``aegis:tier "live"``,
``aegis:language "shell"``), whose Predicate's ``aegis:evidenceSource`` is the RE2 command
regex with ``aegis:matchType "must-not-match"``, and whose ``aegis:OperatingPoint`` is a
``"deterministic_threshold"`` with a positive ``aegis:threshold`` read in the unit of
``aegis:calibrationBasis "MemAvailable GiB"``. ``aegis:effect`` (default ``"warn"``) must be
``deny`` or ``warn``: the two outcomes the pre-bash seam can deliver.
"""

from __future__ import annotations

from typing import Any

import math

from yupana.projection.decode_structural import check_boundary, linked_atom, placement, unstaged
from yupana.projection.subject import Subject, merged, regex
from yupana.projection.vocab import MEMORY_BASIS, MEMORY_EFFECTS, RDFS_COMMENT, RDFS_LABEL, A


def decode(policies: list[Subject], atoms: dict[str, Subject]) -> list[dict[str, Any]]:
    """The cache's ``memory_policies`` entries, sorted by IRI."""
    return [decode_policy(p, atoms) for p in sorted(policies, key=lambda s: s.iri)]


def decode_policy(policy: Subject, atoms: dict[str, Subject]) -> dict[str, Any]:
    check_boundary(policy)
    unstaged(policy, "host-memory policies")
    name = policy.string(RDFS_LABEL)
    selector = linked_atom(policy, A("selector"), atoms, A("Selector"))
    predicate = linked_atom(policy, A("predicate"), atoms, A("Predicate"))
    point = linked_atom(policy, A("operatingPoint"), atoms, A("OperatingPoint"))
    selector.enum(A("tier"), ("live",), required=True)
    selector.enum(A("language"), ("shell",), required=True)
    command_regex = regex(predicate, A("evidenceSource"), predicate.string(A("evidenceSource")))
    predicate.enum(A("matchType"), ("must-not-match",), required=True)
    point.enum(A("kind"), ("deterministic_threshold",), required=True)
    basis = point.enum(A("calibrationBasis"), (MEMORY_BASIS,), required=True)
    threshold = point.one(A("threshold"))
    try:
        gib = float(threshold.value) if threshold.is_literal else math.nan
    except ValueError:
        gib = math.nan
    if not math.isfinite(gib) or gib <= 0:
        raise point.error(A("threshold"), f"{threshold.value!r} is not a positive number of GiB")
    place = placement(policy)
    return {
        "iri": policy.iri,
        "name": name,
        "command_regex": command_regex,
        "threshold_gib": gib,
        "calibration_basis": basis,
        "effect": policy.enum(A("effect"), MEMORY_EFFECTS, default="warn"),
        "class": place["class"],
        "verification_point": place["verification_point"],
        "message": merged(policy.strings(RDFS_COMMENT)),
    }
