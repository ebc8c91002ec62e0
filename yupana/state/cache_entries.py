"""The shape of every plane entry of a projection cache, checked before a hook trusts it.

The refresher only writes entries its strict decoders produced, but ``projection.json`` is
a documented file that operators and other tools may write. A hand-edited entry that is
malformed — a text rule with no ``pattern``, a ``tier`` that is a list, a tripwire whose
``paths`` is a string — must not be skipped or reinterpreted by an evaluator: the whole cache
is an ``unreadable`` miss naming the entry and the field (the hook then fails open loudly,
and ``yupana project`` rewrites a good cache). Checked when the hot twin is derived, so a
twin never holds an unchecked entry. Standard library only (docs/cache-format.md "Plane
entries" lists the fields).
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from typing import Any

_STR = (str,)
_OPT_STR = (str, type(None))
_NUM = (int, float)

TEXT_TIERS = ("block", "warn")
ROLLOUT_STAGES = ("shadow", "advise", "enforce")  # a text rule's ``stage`` (aegis:rolloutStage)
GROUNDED_MATCH_TYPES = ("must-ground", "must-not-ground")
STRUCTURAL_MATCH_TYPES = ("must-match", "must-not-match", "must-exist")
EFFECTS = ("allow", "warn", "require-approval", "deny", "escalate", "record", "throttle")
WIRE_EFFECTS = ("deny", "warn", "throttle")
MEMORY_EFFECTS = ("deny", "warn")


class Malformed(ValueError):
    """``plane[index] (name) field: what is wrong``."""


def _where(plane: str, index: int, entry: dict[str, Any]) -> str:
    name = entry.get("name") if isinstance(entry.get("name"), str) else entry.get("iri")
    return f"{plane}[{index}]" + (f" ({name})" if isinstance(name, str) else "")


def _field(entry: dict[str, Any], key: str, types: tuple[Any, ...], where: str, *, required: bool = True,
           nonempty: bool = False, choices: tuple[Any, ...] | None = None) -> None:
    if key not in entry or entry[key] is None:
        if required and type(None) not in types:
            raise Malformed(f"{where}: `{key}` is missing")
        return
    value = entry[key]
    if not isinstance(value, types) or isinstance(value, bool):
        raise Malformed(f"{where}: `{key}` is {type(value).__name__} {_short(value)}, not {_names(types)}")
    if nonempty and not value:
        raise Malformed(f"{where}: `{key}` is empty")
    if choices is not None and value not in choices:
        raise Malformed(f"{where}: `{key}` is {value!r}; expected one of {', '.join(choices)}")


def _strings(entry: dict[str, Any], key: str, where: str, *, required: bool = False) -> None:
    value = entry.get(key)
    if value is None:
        if required:
            raise Malformed(f"{where}: `{key}` is missing")
        return
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise Malformed(f"{where}: `{key}` is {_short(value)}, not a list of strings")


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _names(types: tuple[Any, ...]) -> str:
    return " or ".join("null" if t is type(None) else {"str": "a string", "int": "a number", "float": "a number",
                                                         "dict": "an object", "list": "a list"}.get(t.__name__, t.__name__)
                       for t in types)


def _text_rule(e: dict[str, Any], w: str) -> None:
    _field(e, "name", _STR, w, nonempty=True)
    _field(e, "pattern", _STR, w, nonempty=True)
    _field(e, "tier", _STR, w, required=False, choices=TEXT_TIERS)  # absent: warn
    _field(e, "stage", _STR, w, required=False, choices=ROLLOUT_STAGES)  # absent: enforce
    for key in ("label", "class", "exempt_path_regex", "rationale"):
        _field(e, key, _OPT_STR, w, required=False)
    for key in ("labels", "rationales", "exempt_path_regexes", "exemption_selectors"):
        _strings(e, key, w)


def _grounded(e: dict[str, Any], w: str) -> None:
    _field(e, "name", _STR, w, nonempty=True)
    _field(e, "match_type", _STR, w, choices=GROUNDED_MATCH_TYPES)
    _field(e, "tier", _STR, w, required=False, choices=TEXT_TIERS)
    _field(e, "stage", _STR, w, required=False, choices=ROLLOUT_STAGES)  # absent: enforce
    _field(e, "label", _OPT_STR, w, required=False)


def _policy(e: dict[str, Any], w: str) -> None:
    rule = e.get("rule")
    if not isinstance(rule, dict):
        raise Malformed(f"{w}: `rule` is {_short(rule)}, not an object")
    _field(rule, "name", _STR, w + " rule", nonempty=True)
    _field(rule, "language", _STR, w + " rule", nonempty=True)
    _field(rule, "query", _STR, w + " rule", nonempty=True)
    _field(rule, "match_type", _STR, w + " rule", choices=STRUCTURAL_MATCH_TYPES)
    for key in ("pattern", "gate", "message", "class", "verification_point"):
        _field(rule, key, _OPT_STR, w + " rule", required=False)
    _strings(rule, "applies_to", w + " rule")
    _field(e, "effect", _STR, w, choices=EFFECTS)
    _field(e, "stage", _STR, w, required=False, choices=ROLLOUT_STAGES)  # absent: enforce


def _tripwire(e: dict[str, Any], w: str) -> None:
    _field(e, "name", _STR, w, nonempty=True)
    _strings(e, "paths", w, required=True)
    _field(e, "effect", _STR, w, choices=WIRE_EFFECTS)
    _field(e, "stage", _STR, w, required=False, choices=ROLLOUT_STAGES)  # absent: enforce
    for key in ("class", "verification_point", "message"):
        _field(e, key, _OPT_STR, w, required=False)
    _field(e, "backoff", (dict, type(None)), w, required=False)


def _memory(e: dict[str, Any], w: str) -> None:
    _field(e, "name", _STR, w, nonempty=True)
    _field(e, "command_regex", _STR, w, nonempty=True)
    _field(e, "threshold_gib", _NUM, w)
    _field(e, "effect", _STR, w, required=False, choices=MEMORY_EFFECTS)


def _selector(e: dict[str, Any], w: str) -> None:
    _strings(e, "exempt_path_regexes", w)


LANDING_REQUIREMENTS = ("ci-selection-complete", "local-commands-pass")
LANDING_SOURCES = ("repository", "repository-type")


def _landing(e: dict[str, Any], w: str) -> None:
    _field(e, "repo", _STR, w, nonempty=True)
    _field(e, "policy", _STR, w, nonempty=True)
    _field(e, "label", _STR, w, nonempty=True)
    _field(e, "source", _STR, w, choices=LANDING_SOURCES)
    _field(e, "repository_type", _OPT_STR, w, required=False)
    _strings(e, "requires", w, required=True)
    if not e["requires"]:
        raise Malformed(f"{w}: `requires` is empty")
    for word in e["requires"]:
        if word not in LANDING_REQUIREMENTS:
            raise Malformed(f"{w}: `requires` holds {word!r}; expected {', '.join(LANDING_REQUIREMENTS)}")


CHECKS = {"text_rules": _text_rule, "grounded_rules": _grounded, "policies": _policy, "tripwires": _tripwire,
          "memory_policies": _memory, "exemption_selectors": _selector, "landing_policies": _landing}


def check(cache: dict[str, Any]) -> str | None:
    """None when every entry of every plane has its documented shape, else what is wrong."""
    for plane, checker in CHECKS.items():
        for index, entry in enumerate(cache.get(plane) or ()):
            try:
                checker(entry, _where(plane, index, entry))
            except Malformed as exc:
                return str(exc)
    return None
