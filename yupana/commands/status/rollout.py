"""``yupana status``'s rollout section: each text rule below ``enforce`` (``aegis:rolloutStage``
``shadow`` or ``advise``, docs/vocabulary.md) and what it did in the status window. Cold path.

A shadow rule is shown to nobody, so this is where its evidence is read before it is
promoted: per rule, the pre-edit calls it fired on in the window and how many of those it
would have denied at ``enforce`` (the ``guard`` record's constraint: ``stage`` and
``would_deny``). Rules come from the served cache (a staged rule that fired on nothing is
listed with 0) and from the records (a rule staged in an earlier rule set still shows).
"""

from __future__ import annotations

from typing import Any


def section(records: list[dict[str, Any]], staged: dict[str, str], now: int, window_secs: int) -> dict[str, Any]:
    """``rollout`` in ``status --json``: ``rules`` ([{rule, stage, fired, would_deny}], shadow
    first, then by name) and ``window_secs``."""
    counts: dict[str, list[Any]] = {name: [stage, 0, 0] for name, stage in staged.items()}
    for rec in records:
        ts = rec.get("ts")
        constraints = rec.get("constraints")
        if rec.get("kind") != "guard" or not isinstance(constraints, list):
            continue
        if isinstance(ts, int) and ts < now - window_secs:
            continue
        hit: dict[str, tuple[str, bool]] = {}
        for c in constraints:
            if not isinstance(c, dict) or c.get("outcome") != "unsatisfied" or c.get("stage") not in ("shadow", "advise"):
                continue
            name = str(c.get("id"))
            before = hit.get(name, (c["stage"], False))
            hit[name] = (c["stage"], before[1] or c.get("would_deny") is True)
        for name, (stage, would) in hit.items():
            row = counts.setdefault(name, [stage, 0, 0])
            row[1] += 1
            row[2] += would
    rules = [{"rule": name, "stage": row[0], "fired": row[1], "would_deny": row[2]} for name, row in counts.items()]
    rules.sort(key=lambda r: (r["stage"] != "shadow", r["rule"]))
    return {"rules": rules, "window_secs": window_secs}


def render(rollout: dict[str, Any], add: Any) -> None:
    """The ``rollout`` lines of the text report (none when no rule is staged)."""
    for r in rollout["rules"]:
        shown = "shown to nobody" if r["stage"] == "shadow" else "warns only"
        add("rollout", f"{r['rule']}: {r['stage']} ({shown}) — fired on {r['fired']} edit(s), would have denied "
                       f"{r['would_deny']} at enforce (last {_span(rollout['window_secs'])})")


def _span(secs: int) -> str:
    return f"{secs // 3600}h" if secs % 3600 == 0 and secs else f"{secs}s"
