"""Disk-impact history: last 100 samples per key, nearest-rank p90, UNKNOWN on failure."""

from __future__ import annotations

import pytest

from yupana.projection.decode_disk import p90

from .helpers import AEGIS, history, observations

KEY_A = "cargo:build|repo:git|cwd:repo-root|mount:5d41402abc4b"
KEY_B = "docker:build|repo:git|cwd:subdir|root"


@pytest.mark.parametrize("values,expected", [
    ([5], 5),
    (list(range(1, 11)), 9),
    (list(range(1, 101)), 90),
    (list(range(1, 12)), 10),  # ceil(9.9) = 10
    ([-5, -1, -3], -1),
])
def test_nearest_rank_p90(values, expected):
    assert p90(values) == expected
    assert p90(list(reversed(values))) == expected


def test_last_100_samples_per_key(projected):
    disk = projected(history()).cache["disk_history"]
    # key A: the newest 100 of 130 are samples 30..129
    assert disk[KEY_A] == {"n": 100, "p90": (30 + 89) * 1_000_000, "latest": 1_129}
    assert disk[KEY_B] == {"n": 3, "p90": 100, "latest": 60}


def test_paging_gives_the_same_history(projected):
    whole = projected(history())
    paged = projected(history(), max_rows=21)
    assert paged.cache["disk_history"] == whole.cache["disk_history"]
    assert paged.planes["disk_history"].requests > whole.planes["disk_history"].requests


def test_paging_stops_once_every_key_has_its_samples(projected):
    # newest first: all 300 A samples are newer than B's, so B is reached only at the end;
    # with only A present, paging stops after A has 100.
    only_a = observations("s", "root", [(10_000 + i, i) for i in range(300)], "a")
    proj = projected(only_a, max_rows=51)
    assert proj.cache["disk_history"]["s|root"]["n"] == 100
    assert proj.planes["disk_history"].requests == 1 + 2  # keys + two pages of 50


def test_no_observations_is_an_empty_history(projected):
    proj = projected("")
    assert proj.cache["disk_history"] == {}
    assert proj.cache["counts"]["disk_history"] == 0


@pytest.mark.parametrize("delta,at", [('"lots"', "5000"), ("5, 6", "5000"), ("5", '"yesterday"'), ("5", "-7")])
def test_a_malformed_observation_makes_history_unknown_not_the_refresh_fail(projected, delta, at):
    bad = (f'aegis:diskobs_bad a aegis:CommandDiskImpactObservation ; aegis:commandSignature "s" ; '
           f'aegis:filesystemIdentity "root" ; aegis:deltaBytes {delta} ; aegis:observedAt {at} .\n')
    proj = projected(history(5) + bad + 'aegis:wire a aegis:Policy ; rdfs:label "w" ; aegis:boundary "action" ; aegis:appliesTo "x" .')
    assert proj.cache["disk_history"] is None
    assert proj.cache["counts"]["disk_history"] is None
    assert proj.cache["tripwires"][0]["name"] == "w"  # the governed planes are unaffected
    assert any("disk-impact history is UNKNOWN" in n and AEGIS + "diskobs_bad" in n for n in proj.notices)
