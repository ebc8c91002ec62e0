"""Two projection caches compared rule by rule and field by field. Cold path, no I/O.

Every rule plane and the planes that shape a rule's reach are compared (:data:`PLANES`),
entries matched by their IRI (a CI map's jobs by theirs). An entry is ``added``, ``removed``
or ``changed``; a changed entry lists each field that differs (nested objects as dotted
paths, ``rule.pattern``; a list of strings as the items added and removed). Two readings a
reviewer needs are made on top:

* the **tier** — what the rule does when it matches: ``block``, ``warn`` or ``record`` —
  computed with the hooks' own functions (:func:`yupana.evaluate.policy_blocks`, the text
  tiers) under the rule's rollout stage (``shadow``: ``record``; ``advise``: at most
  ``warn``), so a tier ``raised`` or ``lowered`` is what the hooks will do differently —
  promoting a rule from shadow to enforce is a raise;
* a text rule's **exemptions** — every path regex that exempts it: its own and those of the
  selectors it links, in the side's own catalogue — ``widened`` (regexes added), ``narrowed``
  (removed) or both. A selector edited changes the exemptions of every rule linking it, and
  each such rule is reported, though its own triples did not change.

Data planes (the grounding set, work-item scopes, disk history) are observations, not
rules: not compared.
"""

from __future__ import annotations

from typing import Any

from dataclasses import dataclass, field

from yupana.evaluate import policy_blocks

#: (cache key, what an entry is called, the field that names it). Order is the report's.
PLANES: tuple[tuple[str, str, str], ...] = (
    ("policies", "structural policy", "rule.name"),
    ("text_rules", "text rule", "name"),
    ("exemption_selectors", "exemption selector", "name"),
    ("grounded_rules", "grounded rule", "name"),
    ("tripwires", "tripwire", "name"),
    ("memory_policies", "memory policy", "name"),
    ("ci_map", "CI job", "job"),
    ("repo_exposure", "repository exposure", "repo"),
    ("landing_policies", "landing policy", "repo"),
    ("unprojected", "unprojected policy", "iri"),
)
#: The field that says what an added or removed entry does (its pattern, paths, …), per plane.
GIST = {"policies": "rule.pattern", "text_rules": "pattern", "exemption_selectors": "exempt_path_regexes",
        "grounded_rules": "match_type", "tripwires": "paths", "memory_policies": "command_regex",
        "ci_map": "commands", "repo_exposure": "exposure", "landing_policies": "requires", "unprojected": "reason"}
NOT_COMPARED = ("grounding", "work_item_scopes", "work_item_parents", "work_item_status", "disk_history")
TIERS = ("record", "warn", "block")
#: Fields derived from others, reported through what they derive from: a text rule's combined
#: exemption alternation is its ``exemptions`` (own and linked regexes).
DERIVED = (("text_rules", "exempt_path_regex"),)


@dataclass
class FieldChange:
    """One field of a changed entry: its old and new value; for a list of strings also the
    items ``added`` and ``removed``."""

    field: str
    old: Any
    new: Any
    added: list[str] | None = None
    removed: list[str] | None = None

    def as_dict(self) -> dict[str, Any]:
        out = {"field": self.field, "old": self.old, "new": self.new}
        if self.added is not None:
            out.update(added=self.added, removed=self.removed)
        return out


@dataclass
class Change:
    """One entry added, removed or changed."""

    plane: str
    iri: str
    name: str
    change: str  # added | removed | changed
    fields: list[FieldChange] = field(default_factory=list)
    tier: tuple[str | None, str | None] = (None, None)
    #: A text rule's exemption regexes (own + linked selectors'): added and removed.
    exemptions_added: list[str] = field(default_factory=list)
    exemptions_removed: list[str] = field(default_factory=list)
    entry: dict[str, Any] | None = None  # an added or removed entry as its side holds it
    kind: str = ""  # what the entry is called (default: its plane's word, :data:`PLANES`)

    def __post_init__(self) -> None:
        self.kind = self.kind or kind_of(self.plane)

    @property
    def tier_move(self) -> str | None:
        """``raised`` / ``lowered`` for a changed entry whose tier moved, else None."""
        old, new = self.tier
        if self.change != "changed" or old is None or new is None or old == new:
            return None
        return "raised" if TIERS.index(new) > TIERS.index(old) else "lowered"

    @property
    def exemptions(self) -> str | None:
        """``widened`` / ``narrowed`` / ``widened and narrowed`` for a changed text rule, else None."""
        if self.change != "changed":
            return None
        words = (["widened"] if self.exemptions_added else []) + (["narrowed"] if self.exemptions_removed else [])
        return " and ".join(words) or None

    def as_dict(self) -> dict[str, Any]:
        return {"plane": self.plane, "kind": self.kind, "iri": self.iri, "name": self.name,
                "change": self.change, "fields": [f.as_dict() for f in self.fields],
                "tier": {"old": self.tier[0], "new": self.tier[1], "move": self.tier_move},
                "exemptions": {"move": self.exemptions, "added": self.exemptions_added,
                               "removed": self.exemptions_removed},
                "entry": self.entry}


@dataclass
class Diff:
    """Every change, in report order (planes as :data:`PLANES`, entries by name then IRI)."""

    changes: list[Change]

    def summary(self) -> dict[str, int]:
        moves = [c.tier_move for c in self.changes]
        wider = [c.exemptions or "" for c in self.changes]
        return {"added": sum(c.change == "added" for c in self.changes),
                "removed": sum(c.change == "removed" for c in self.changes),
                "changed": sum(c.change == "changed" for c in self.changes),
                "tiers_raised": moves.count("raised"), "tiers_lowered": moves.count("lowered"),
                "exemptions_widened": sum("widened" in w for w in wider),
                "exemptions_narrowed": sum("narrowed" in w for w in wider)}


def gist(change: Change) -> Any:
    """What an added or removed entry does, in one value (a structural policy without a
    pattern: its query; a CI job: its commands)."""
    entry = change.entry or {}
    value = _flat(entry).get(GIST[change.plane])
    if change.plane == "policies" and value is None:
        value = _flat(entry).get("rule.query")
    if change.plane == "ci_map" and isinstance(value, list):
        value = [c.get("command") for c in value if isinstance(c, dict)]
    return value


def kind_of(plane: str) -> str:
    return next(kind for key, kind, _ in PLANES if key == plane)


def compare(old: dict[str, Any], new: dict[str, Any]) -> Diff:
    """What changed from cache ``old`` to cache ``new`` (see the module doc)."""
    changes: list[Change] = []
    old_exempt, new_exempt = _exemptions(old), _exemptions(new)
    for plane, _, name_field in PLANES:
        before, after = _entries(old, plane), _entries(new, plane)
        found: list[Change] = []
        for iri in sorted(set(before) | set(after)):
            a, b = before.get(iri), after.get(iri)
            if a is None and b is not None:
                found.append(Change(plane, iri, _name(b, name_field, iri), "added", tier=(None, tier_of(plane, b)),
                                    entry=_public(b)))
            elif b is None and a is not None:
                found.append(Change(plane, iri, _name(a, name_field, iri), "removed", tier=(tier_of(plane, a), None),
                                    entry=_public(a)))
            elif a is not None and b is not None:
                fields = [f for f in _fields(a, b) if (plane, f.field) not in DERIVED]
                change = Change(plane, iri, _name(b, name_field, iri), "changed", fields=fields,
                                tier=(tier_of(plane, a), tier_of(plane, b)))
                if plane == "text_rules":
                    was, now = old_exempt.get(iri, set()), new_exempt.get(iri, set())
                    change.exemptions_added, change.exemptions_removed = sorted(now - was), sorted(was - now)
                if change.fields or change.exemptions_added or change.exemptions_removed:
                    found.append(change)
        if plane == "ci_map":
            found += _coverage(old, new)
        changes += sorted(found, key=lambda c: (c.name, c.iri))
    return Diff(changes)


def _coverage(old: dict[str, Any], new: dict[str, Any]) -> list[Change]:
    """The CI map's ``complete`` (every hosted job mapped), when it changed: a map that stops
    being complete turns an unmatched change from quiet into UNKNOWN (docs/ci-map.md)."""
    was, now = (_complete(c.get("ci_map")) for c in (old, new))
    if was == now:
        return []
    return [Change("ci_map", "", "coverage", "changed", fields=[FieldChange("complete", was, now)], kind="CI map")]


def tier_of(plane: str, entry: dict[str, Any]) -> str | None:
    """What a rule does when it matches — block, warn or record — as the hooks decide it;
    None for an entry that is not a rule."""
    tier = _tier(plane, entry)
    stage = entry.get("stage")  # aegis:rolloutStage, a ceiling (docs/vocabulary.md "Rollout stage")
    if tier is None or stage in (None, "enforce"):
        return tier
    if stage == "shadow":
        return "record"  # evaluated and recorded, shown to nobody
    return "warn" if tier == "block" else tier  # advise: at most a warning


def _tier(plane: str, entry: dict[str, Any]) -> str | None:
    if plane in ("text_rules", "grounded_rules"):
        return "block" if entry.get("tier") == "block" else "warn"  # absent: warn (docs/vocabulary.md)
    if plane in ("policies", "tripwires", "memory_policies"):
        rule: dict[str, Any] = entry["rule"] if plane == "policies" and isinstance(entry.get("rule"), dict) else entry
        effect = entry.get("effect")
        blocks = policy_blocks(rule.get("class"), effect)
        if plane == "tripwires":
            blocks = blocks and effect == "deny"  # a tripwire blocks only as deny (evaluate/tripwires.py)
        if blocks:
            return "block"
        return "record" if effect in ("allow", "record") else "warn"
    return None


def _entries(cache: dict[str, Any], plane: str) -> dict[str, dict[str, Any]]:
    value = cache.get(plane)
    if plane == "ci_map":
        value = (value or {}).get("jobs") if isinstance(value, dict) else None
    out: dict[str, dict[str, Any]] = {}
    for entry in value or ():
        if isinstance(entry, dict) and isinstance(entry.get("iri"), str):
            out[entry["iri"]] = entry
    return out


def _name(entry: dict[str, Any], name_field: str, iri: str) -> str:
    value: Any = entry
    for part in name_field.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    if isinstance(value, str) and value:
        return value
    return _local(iri)


def _public(entry: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in entry.items() if not k.startswith("_")}


def _flat(entry: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in entry.items():
        if key.startswith("_") or (not prefix and key == "iri"):
            continue
        if isinstance(value, dict) and value and key != "backoff":
            out.update(_flat(value, f"{prefix}{key}."))
        elif _keyed(value):  # a CI job's commands: each by its IRI, field by field
            for item in value:
                out.update(_flat(item, f"{prefix}{key}[{_local(item['iri'])}]."))
        else:
            out[prefix + key] = value
    return out


def _fields(a: dict[str, Any], b: dict[str, Any]) -> list[FieldChange]:
    flat_a, flat_b = _flat(a), _flat(b)
    out = []
    for key in sorted(set(flat_a) | set(flat_b)):
        old, new = flat_a.get(key), flat_b.get(key)
        if old == new:
            continue
        if _strings(old) and _strings(new):
            was, now = set(old or ()), set(new or ())
            out.append(FieldChange(key, old, new, added=sorted(now - was), removed=sorted(was - now)))
        else:
            out.append(FieldChange(key, old, new))
    return out


def _complete(ci_map: Any) -> bool | None:
    return ci_map.get("complete") if isinstance(ci_map, dict) else None  # None: no CI map


def _keyed(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, dict) and isinstance(v.get("iri"), str)
                                                           for v in value)


def _local(iri: str) -> str:
    return iri.rsplit("/", 1)[-1].rsplit("#", 1)[-1] or iri


def _strings(value: Any) -> bool:
    return value is None or (isinstance(value, list) and all(isinstance(v, str) for v in value))


def _exemptions(cache: dict[str, Any]) -> dict[str, set[str]]:
    """Each text rule's exemption regexes: its own and those of the selectors it links."""
    selectors = {iri: set(e.get("exempt_path_regexes") or ()) for iri, e in _entries(cache, "exemption_selectors").items()}
    out: dict[str, set[str]] = {}
    for iri, rule in _entries(cache, "text_rules").items():
        found = set(rule.get("exempt_path_regexes") or ())
        for linked in rule.get("exemption_selectors") or ():
            found |= selectors.get(linked, set())
        out[iri] = found
    return out
