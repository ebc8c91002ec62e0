"""Governed tripwires, strictly. Cold path.

A tripwire is an action-boundary ``aegis:Policy`` with ``aegis:appliesTo`` globs and no
selector or predicate (docs/vocabulary.md, "Governed tripwires"): ``rdfs:label`` (1) names
it, every glob must compile, ``aegis:effect`` (default ``"warn"``) must be ``deny``,
``warn`` or ``throttle`` — an effect this seam cannot enforce refuses the projection rather
than decode into an inert wire — and a throttle wire needs an ``aegis:backoffFormula``:
a whole number of seconds (``"300"``) or ``"exp(min(overage / D, C))"`` with numbers
``D > 0`` and ``C``. A formula, when present, must parse whatever the effect.
"""

from __future__ import annotations

from typing import Any

import math
import re

from yupana.projection.decode_structural import check_boundary, placement, staged
from yupana.projection.subject import Subject, glob, merged
from yupana.projection.vocab import RDFS_COMMENT, RDFS_LABEL, TRIPWIRE_EFFECTS, A

_NUM = r"([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))"
_FIXED = re.compile(r"\s*([0-9]+)\s*\Z")
_EXP = re.compile(r"\s*exp\(\s*min\(\s*overage\s*/\s*" + _NUM + r"\s*,\s*" + _NUM + r"\s*\)\s*\)\s*\Z")


def decode(wires: list[Subject]) -> list[dict[str, Any]]:
    """The cache's ``tripwires`` entries, sorted by IRI."""
    return [decode_wire(w) for w in sorted(wires, key=lambda s: s.iri)]


def decode_wire(wire: Subject) -> dict[str, Any]:
    check_boundary(wire)
    name = wire.string(RDFS_LABEL)
    paths = [glob(wire, A("appliesTo"), g) for g in wire.strings(A("appliesTo"), min_count=1)]
    effect = wire.string(A("effect"), required=False) or "warn"
    if effect not in TRIPWIRE_EFFECTS:
        raise wire.error(A("effect"), f"{effect!r} cannot be enforced by a tripwire (allowed: deny, warn, "
                         "throttle); the projection is refused rather than decode an inert wire")
    formula = wire.string(A("backoffFormula"), required=False)
    backoff = parse_backoff(wire, formula) if formula is not None else None
    if effect == "throttle" and backoff is None:
        raise wire.error(A("backoffFormula"), "is missing; a throttle wire needs a back-off: a whole number "
                         "of seconds such as \"300\", or \"exp(min(overage / D, C))\"")
    place = placement(wire)
    return {
        "iri": wire.iri,
        "name": name,
        "paths": paths,
        "effect": effect,
        "class": place["class"],
        "verification_point": place["verification_point"],
        "hosted_at_layer": place["hosted_at_layer"],
        "backoff_formula": formula,
        "backoff": backoff,
        "message": merged(wire.strings(RDFS_COMMENT)),
        **staged(wire),
    }


def parse_backoff(wire: Subject, formula: str) -> dict[str, Any]:
    """``{"kind": "fixed", "secs": N}`` or ``{"kind": "exp", "d": D, "c": C}``; anything else fails."""
    fixed = _FIXED.match(formula)
    if fixed:
        secs = int(fixed.group(1))
        if secs < 1:
            raise wire.error(A("backoffFormula"), f"{formula!r}: a fixed back-off must be at least 1 second")
        return {"kind": "fixed", "secs": secs}
    exp = _EXP.match(formula)
    if exp:
        d, c = float(exp.group(1)), float(exp.group(2))
        if not (math.isfinite(d) and math.isfinite(c)) or d <= 0:
            raise wire.error(A("backoffFormula"), f"{formula!r}: D must be a number greater than 0")
        return {"kind": "exp", "d": d, "c": c}
    raise wire.error(A("backoffFormula"), f"{formula!r} is not understood; write a whole number of seconds "
                     "(\"300\") or \"exp(min(overage / D, C))\" with numbers D > 0 and C")
