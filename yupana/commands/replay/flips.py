"""What changed between the two sides' decisions on the same inputs, counted and grouped. Cold path.

A *flip* is an input whose decision differs: **newly denied** (the candidate denies, live did
not), **no longer denied** (live denied, the candidate does not), **newly notified** (live
allowed silently, the candidate notifies) and **no longer notified** (the reverse). Each is
attributed to the rules that fired on one side only (for a change of tier, the rules of the
side that decided), and counted per rule, tenant, repository and client, with a few examples
whose text is masked (what either side's rules caught becomes ``***``; redacted; clipped).

An input captured with ``masked`` catches, or redacted, is counted under *not judged*
(``masked``) and never as judged: it is rerun on its masked text, where the rules that caught
it no longer see what they caught, so neither a flip nor its absence is a verdict (a flip seen
there is listed in ``masked_flips`` for a person to look at).
"""

from __future__ import annotations

from typing import Any

from yupana.commands.replay.judge import Verdict

KINDS = ("newly_denied", "no_longer_denied", "newly_notified", "no_longer_notified")
GROUPS = ("rule", "tenant", "repo", "client")
MAX_EXAMPLES = 3
EXCERPT = 120
MASK = "***"


def kind_of(live: Verdict, candidate: Verdict) -> str | None:
    if live.decision == candidate.decision:
        return None
    if candidate.decision == "deny":
        return "newly_denied"
    if live.decision == "deny":
        return "no_longer_denied"
    return "newly_notified" if candidate.decision == "notify" else "no_longer_notified"


def responsible(kind: str, live: Verdict, candidate: Verdict) -> list[str]:
    """The rules a flip of ``kind`` is attributed to."""
    newly = kind.startswith("newly")
    mine, other = (candidate, live) if newly else (live, candidate)
    only = [r for r in mine.rules if r not in other.rules]
    return only or mine.rules or ["(no governed rule)"]


class Flips:
    """The tally of a replay."""

    def __init__(self) -> None:
        self.counts = dict.fromkeys(KINDS, 0)
        self.groups: dict[str, dict[str, dict[str, int]]] = {
            k: {g: {} for g in GROUPS} for k in KINDS}
        self.examples: dict[str, list[dict[str, Any]]] = {k: [] for k in KINDS}
        self.not_judged: dict[str, int] = {"not_captured": 0, "masked": 0, "unreadable": 0}
        self.masked_flips: list[dict[str, Any]] = []
        self.judged = 0
        self.unchanged = 0
        self.truncated = 0
        self.recorded: dict[str, Any] = {"compared": 0, "differed": 0, "examples": []}

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def add(self, rec: dict[str, Any], host: str, live: Verdict, candidate: Verdict) -> None:
        kind = kind_of(live, candidate)
        if rec.get("masked") or rec.get("redacted"):  # rerun on masked text: what it shows is not a verdict
            self.not_judged["masked"] += 1
            if kind is not None and len(self.masked_flips) < MAX_EXAMPLES * 2:
                rules = responsible(kind, live, candidate)
                self.masked_flips.append(dict(_example(rec, host, live, candidate, rules), kind=kind))
            return
        self.judged += 1
        if rec.get("truncated"):
            self.truncated += 1
        if kind is None:
            self.unchanged += 1
            return
        rules = responsible(kind, live, candidate)
        example = _example(rec, host, live, candidate, rules)
        self.counts[kind] += 1
        keys = {"rule": rules, "tenant": [_text(rec.get("tenant"), "(no tenant)")],
                "repo": [_text(rec.get("repo"), _text(rec.get("project"), "(no repository)"))],
                "client": [_text(rec.get("client"), "(unknown client)")]}
        for group, values in keys.items():
            table = self.groups[kind][group]
            for value in values:
                table[value] = table.get(value, 0) + 1
        if len(self.examples[kind]) < MAX_EXAMPLES:
            self.examples[kind].append(example)

    def compare_recorded(self, rec: dict[str, Any], host: str, live: Verdict, digest: object) -> None:
        """The live side's decision against the one the hook recorded, for an input captured under
        the same rule set in ``enforce``, or in ``advise`` where the capture says what enforce would
        have answered (pre-edit's ``would_deny``: a would-deny is a deny): a difference says the
        replay did not see what the hook saw (the host's own configuration, the file's prior
        content, throttles, the tracker, a stale cache's notice) — a reason to read its flips with care."""
        recorded = rec.get("decision")
        if rec.get("mode") == "advise" and isinstance(rec.get("would_deny"), bool):
            recorded = "deny" if rec["would_deny"] else recorded
        elif rec.get("mode") != "enforce":
            return
        if (rec.get("masked") or rec.get("redacted") or not digest or rec.get("digest") != digest
                or recorded not in ("allow", "notify", "deny")):
            return
        self.recorded["compared"] += 1
        if recorded == live.decision:
            return
        self.recorded["differed"] += 1
        if len(self.recorded["examples"]) < MAX_EXAMPLES:
            example = _example(rec, host, live, live, live.rules)
            del example["candidate"]
            self.recorded["examples"].append(dict(example, recorded=recorded))

    def as_json(self) -> dict[str, Any]:
        return {"counts": dict(self.counts), "total": self.total, "judged": self.judged, "unchanged": self.unchanged,
                "truncated_inputs": self.truncated,
                "groups": {k: {g: dict(sorted(t.items(), key=lambda kv: (-kv[1], kv[0]))) for g, t in v.items()}
                           for k, v in self.groups.items()},
                "examples": self.examples, "not_judged": dict(self.not_judged), "masked_flips": self.masked_flips,
                "recorded": {k: (list(v) if isinstance(v, list) else v) for k, v in self.recorded.items()}}


def _text(value: object, default: str) -> str:
    return value if isinstance(value, str) and value else default


def _example(rec: dict[str, Any], host: str, live: Verdict, candidate: Verdict, rules: list[str]) -> dict[str, Any]:
    from yupana import redact

    caught = sorted({t for t in live.caught + candidate.caught if len(t) >= 3}, key=len, reverse=True)

    def mask(text: str) -> str:
        for t in caught:
            text = text.replace(t, MASK)
        text = redact.redact_text(text)
        return text if len(text) <= EXCERPT else text[:EXCERPT] + "…"

    out: dict[str, Any] = {"ts": rec.get("ts"), "host": host, "hook": rec.get("hook"), "tool": rec.get("tool"),
                           "client": rec.get("client"), "tenant": rec.get("tenant"), "repo": rec.get("repo"),
                           "live": live.decision, "candidate": candidate.decision, "rules": rules}
    if isinstance(rec.get("command"), str):
        out["command"] = mask(rec["command"])
    edits = rec.get("edits")
    if isinstance(edits, list):
        out["paths"] = [str(e.get("path")) for e in edits if isinstance(e, dict)]
        text = "\n".join(str(e.get("text") or "") for e in edits if isinstance(e, dict))
        out["text"] = mask(text)
    return out
