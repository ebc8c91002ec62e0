"""Governed tripwires: effects the seam can enforce, back-off formulas, globs."""

from __future__ import annotations

import pytest

from yupana.projection.errors import ProjectionError

from .helpers import AEGIS, wire

WIRE = AEGIS + "wire_auth"


def test_a_wire_projects(projected):
    entry = projected(wire('; aegis:constraintClass "hard" ; aegis:verificationPoint "PAG"')).cache["tripwires"][0]
    assert entry == {
        "iri": WIRE, "name": "auth-boundary", "paths": ["src/auth/**", "src/login.rs"], "effect": "deny",
        "class": "hard", "verification_point": "PAG", "hosted_at_layer": None, "backoff_formula": None,
        "backoff": None, "message": "auth changes need the security workflow",
    }


def test_effect_defaults_to_warn(projected):
    body = wire().replace('aegis:effect "deny" ;', "")
    assert projected(body).cache["tripwires"][0]["effect"] == "warn"


@pytest.mark.parametrize("effect", ["require-approval", "record", "escalate", "allow", "boom"])
def test_effects_the_seam_cannot_enforce_refuse_the_projection(projected, effect):
    with pytest.raises(ProjectionError) as err:
        projected(wire(effect=f'"{effect}"'))
    assert (err.value.subject, err.value.property) == (WIRE, "aegis:effect")
    assert "inert" in err.value.message


@pytest.mark.parametrize("formula,backoff", [
    ("300", {"kind": "fixed", "secs": 300}),
    (" 45 ", {"kind": "fixed", "secs": 45}),
    ("exp(min(overage / 60, 5))", {"kind": "exp", "d": 60.0, "c": 5.0}),
    ("exp( min( overage/2.5 , -1.5 ) )", {"kind": "exp", "d": 2.5, "c": -1.5}),
])
def test_throttle_formulas(projected, formula, backoff):
    entry = projected(wire(f'; aegis:backoffFormula "{formula}"', effect='"throttle"')).cache["tripwires"][0]
    assert entry["backoff"] == backoff
    assert entry["backoff_formula"] == formula


@pytest.mark.parametrize("formula", ["0", "exp(min(overage / 0, 5))", "exp(min(overage / -1, 5))",
                                     "overage * 2", "exp(overage)", "300s", "1e3"])
def test_bad_formulas_refuse(projected, formula):
    with pytest.raises(ProjectionError) as err:
        projected(wire(f'; aegis:backoffFormula "{formula}"', effect='"throttle"'))
    assert (err.value.subject, err.value.property) == (WIRE, "aegis:backoffFormula")


def test_a_throttle_wire_needs_a_formula(projected):
    with pytest.raises(ProjectionError) as err:
        projected(wire(effect='"throttle"'))
    assert (err.value.subject, err.value.property) == (WIRE, "aegis:backoffFormula")


def test_a_bad_formula_on_a_deny_wire_also_refuses(projected):
    with pytest.raises(ProjectionError):
        projected(wire('; aegis:backoffFormula "soon"'))


def test_globs_must_compile(projected):
    with pytest.raises(ProjectionError) as err:
        projected(wire().replace('"src/login.rs"', '"src/a**"'))
    assert (err.value.subject, err.value.property) == (WIRE, "aegis:appliesTo")


def test_a_wire_without_a_label_refuses(projected):
    with pytest.raises(ProjectionError) as err:
        projected(wire().replace('rdfs:label "auth-boundary" ;', ""))
    assert err.value.property == "rdfs:label"


def test_wire_overclaim_is_reported(projected):
    proj = projected(wire('; aegis:hostedAtLayer "policy"'))
    assert any(WIRE in n for n in proj.hosting_overclaims)
