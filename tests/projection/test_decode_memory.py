"""Host-memory policies: the live command regex and the MemAvailable floor."""

from __future__ import annotations

import pytest

from yupana.projection.errors import ProjectionError

from .helpers import AEGIS, MEMORY


def test_a_memory_policy_projects(projected):
    entry = projected(MEMORY + '\naegis:policy_memory rdfs:comment "builds need 8 GiB free" .').cache["memory_policies"][0]
    assert entry == {
        "iri": AEGIS + "policy_memory", "name": "build-memory-floor",
        "command_regex": "\\bcargo\\s+(build|test)\\b", "threshold_gib": 8.0,
        "calibration_basis": "MemAvailable GiB", "effect": "deny", "class": "hard",
        "verification_point": "PAG", "message": "builds need 8 GiB free",
    }


@pytest.mark.parametrize("old,new,subject,prop", [
    ('aegis:kind "deterministic_threshold"', 'aegis:kind "threshold"', "op_floor", "aegis:kind"),
    ("aegis:threshold 8.0", "aegis:threshold 0.0", "op_floor", "aegis:threshold"),
    ("aegis:threshold 8.0", 'aegis:threshold "lots"', "op_floor", "aegis:threshold"),
    ("aegis:threshold 8.0 ;", "", "op_floor", "aegis:threshold"),
    ('"must-not-match"', '"must-match"', "pred_heavy", "aegis:matchType"),
    ('(build|test)', '(?=build)', "pred_heavy", "aegis:evidenceSource"),
    ('aegis:language "shell"', 'aegis:language "bash"', "sel_shell", "aegis:language"),
    ('aegis:tier "live"', 'aegis:tier "committed"', "sel_shell", "aegis:tier"),
    ('aegis:effect "deny"', 'aegis:effect "throttle"', "policy_memory", "aegis:effect"),
    ('aegis:operatingPoint aegis:op_floor', 'aegis:operatingPoint aegis:op_floor, aegis:op_floor2',
     "policy_memory", "aegis:operatingPoint"),
])
def test_malformed_memory_policies_refuse(projected, old, new, subject, prop):
    body = MEMORY.replace(old, new) + '\naegis:op_floor2 a aegis:OperatingPoint ; aegis:kind "exact_predicate" .'
    assert old in MEMORY
    with pytest.raises(ProjectionError) as err:
        projected(body)
    assert (err.value.subject, err.value.property) == (AEGIS + subject, prop)
