"""The work-item ladder: plate, observed, derived (never denies), unknown."""

from __future__ import annotations

import json

import pytest

from yupana.evaluate import SATISFIED, UNKNOWN, UNSATISFIED
from yupana.evaluate import work_items

SCOPES = {"yup-1": ["src/a.rs", "src/b.rs"], "epic-9": ["src/c.rs"]}
PARENTS = {"yup-2": "epic-9", "yup-3": "epic-none"}


@pytest.mark.parametrize("setting,mode,rung", [
    ("off", "enforce", "off"), ("advise", "enforce", "advise"), ("enforce", "advise", "advise"),
    ("enforce", "enforce", "enforce"), ("enforce", "off", "off"),
])
def test_mode_is_a_ceiling(setting, mode, rung):
    assert work_items.effective_rung(setting, mode) == rung


def _plate(tmp_path, body, now=1000, max_age=None):
    crew = tmp_path / "crew" / "agent-7"
    crew.mkdir(parents=True, exist_ok=True)
    (crew / "plate.json").write_text(body if isinstance(body, str) else json.dumps(body))
    env = {"SHANTY_ROOT": str(tmp_path), "SHANTY_AGENT": "agent-7"}
    if max_age is not None:
        env["YUPANA_PLATE_MAX_AGE_SECS"] = str(max_age)
    return work_items.read_plate(now, env)


def test_plate_reading(tmp_path):
    assert _plate(tmp_path, {"item": "yup-1", "at": 1000 - 14400, "session": None}) == ("yup-1", "")
    assert _plate(tmp_path, {"item": "yup-1", "at": 1000 - 14401})[0] is None
    assert _plate(tmp_path, {"item": "yup-1", "at": 900}, max_age=50)[0] is None
    assert _plate(tmp_path, {"item": "", "at": 1000})[0] is None
    assert _plate(tmp_path, {"item": "yup-1", "at": "soon"})[0] is None
    assert _plate(tmp_path, "{not json")[0] is None
    assert work_items.read_plate(1000, {})[0] is None


def test_observed_rung():
    inside = work_items.evaluate("enforce", "yup-1", SCOPES, PARENTS, "src/a.rs", "t")
    assert inside.outcome == SATISFIED and inside.id == "scope-observed:yup-1"
    outside = work_items.evaluate("enforce", "yup-1", SCOPES, PARENTS, "src/z.rs", "t")
    assert outside.outcome == UNSATISFIED and outside.blocking and "yup-1" in outside.message
    advised = work_items.evaluate("advise", "yup-1", SCOPES, PARENTS, "src/z.rs", "t")
    assert advised.outcome == UNSATISFIED and not advised.blocking
    assert outside.extra == {"provenance": "observed", "item": "yup-1"}


def test_derived_rung_never_denies_and_allows_in_ground():
    inside = work_items.evaluate("enforce", "yup-2", SCOPES, PARENTS, "src/c.rs", "t")
    assert inside.outcome == SATISFIED and inside.extra["parent"] == "epic-9"
    outside = work_items.evaluate("enforce", "yup-2", SCOPES, PARENTS, "src/z.rs", "t")
    assert outside.outcome == UNSATISFIED and not outside.blocking and outside.id == "scope-derived:yup-2"


@pytest.mark.parametrize("item,scopes,parents", [
    (None, SCOPES, PARENTS), ("yup-3", SCOPES, PARENTS), ("yup-4", SCOPES, PARENTS), ("yup-1", None, None),
    ("yup-2", SCOPES, None),
])
def test_unknown_rung(item, scopes, parents):
    found = work_items.evaluate("enforce", item, scopes, parents, "src/z.rs", "t")
    assert found.outcome == UNKNOWN and found.extra["provenance"] == "unknown" and not found.blocking


def test_off_rung_says_nothing():
    assert work_items.evaluate("off", "yup-1", SCOPES, PARENTS, "src/z.rs", "t") is None
