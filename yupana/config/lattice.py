"""The tightening lattice: which way each ``[yupana]`` key may move above a floor. Standard library only.

Every row of :mod:`yupana.config.schema` carries a ``tighten`` kind (docs/configuration.md,
"The managed floor", holds the table). A *floor* — the managed file, or for a nested
``.bobbin/config.toml`` the configuration of the project above it — may be tightened by any
layer above it, never loosened:

* ``rung``: a mode ladder (``off`` < ``advise`` < ``enforce``): higher or equal;
* ``more``: a list of denials (``deny_paths``, ``deny_targets``; ``[[rules]]`` and
  ``[[tripwires]]`` by ``name``): the floor's entries always stay, a layer may add more;
* ``narrower``: an allow list (``allow_paths``, ``allow_targets``): empty means "anything",
  so a non-empty floor admits only a non-empty list each of whose globs lies inside one of
  the floor's (the same glob, or under a floor glob ``X/**``, or anything under ``**``);
* ``lower`` / ``higher``: a number whose smaller (a ceiling; unset = none) / larger value
  is the stricter;
* ``true``: a boolean whose ``true`` is the stricter;
* ``fixed``: the floor's value stands (the store, its credentials, the trusted keys);
* ``free``: no safety meaning; any layer may set it.

:func:`clamp` applies the floor to one layer's table and returns what was lowered, so the
resolver (:mod:`yupana.config.resolver`) applies it once, for every key and every plane.
"""

from __future__ import annotations

from yupana.config import schema as schema
from yupana.config.validate import validate

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from typing import Any

    from yupana.config.schema import Spec

    Lowered = tuple[tuple[str, ...], object, object]  # (key path, value tried, value kept)

KINDS = ("rung", "more", "narrower", "lower", "higher", "true", "fixed", "free")
RUNGS = {mode: i for i, mode in enumerate(schema.MODES)}


def clamp(floor: dict[str, Any], layer: dict[str, Any], spec: Spec = schema.SETTINGS,
          at: tuple[str, ...] = ()) -> tuple[dict[str, Any], list[Lowered]]:
    """``layer`` (one file's, or the environment's, ``[yupana]`` table, raw) with every key the
    ``floor`` also sets moved back to the floor where it was looser (a lowered scalar is
    dropped from the table: the floor's stands), and each such ``(key path, tried, kept)``.
    Keys the floor does not set pass untouched."""
    out = dict(layer)
    lowered: list[Lowered] = []
    fields = {schema.key_of(n, s): s for n, s in spec["fields"].items()}
    for key, value in layer.items():
        sub = fields.get(key)
        if sub is None or key not in floor or floor[key] is None and sub["kind"] != "table":
            continue
        kept, low = _one(floor[key], value, sub, at + (key,))
        if low and sub["tighten"] not in ("more", "narrower", "table", "map"):
            del out[key]  # the floor's value stands, and says where it came from
        else:
            out[key] = kept
        lowered += low
    return out, lowered


def _one(floor: object, value: object, spec: Spec, at: tuple[str, ...]) -> tuple[object, list[Lowered]]:
    kind = spec["kind"]
    if kind == "table":
        if isinstance(floor, dict) and isinstance(value, dict):
            return clamp(floor, value, spec, at)
        return value, []
    if kind == "map":
        if not (isinstance(floor, dict) and isinstance(value, dict)):
            return value, []
        out, lowered = dict(value), []
        for name, entry in value.items():
            if isinstance(floor.get(name), dict) and isinstance(entry, dict):
                out[name], low = clamp(floor[name], entry, spec["item"], at + (str(name),))
                lowered += low
        return out, lowered
    tighten = spec["tighten"]
    typed = _typed(value, spec)
    if typed is _INVALID:
        return value, []  # the validation that follows names it
    if tighten == "free":
        return value, []
    kept = _kept(tighten, _typed(floor, spec), typed)
    if kept is _SAME:
        return value, []
    return kept, [(at, typed, kept)]


_SAME = object()
_INVALID = object()


def _typed(value: object, spec: Spec) -> object:
    errors: list[Any] = []
    out = validate(value, spec, (), errors)
    return _INVALID if errors else out


def _kept(tighten: str, floor: Any, value: Any) -> object:
    """What stands of ``value`` above ``floor`` (``_SAME``: all of it)."""
    if tighten == "rung":
        return _SAME if RUNGS.get(value, -1) >= RUNGS.get(floor, -1) else floor
    if tighten == "true":
        return _SAME if value or not floor else floor
    if tighten == "fixed":
        return _SAME if value == floor else floor
    if tighten == "lower":
        return _SAME if floor is None or (value is not None and value <= floor) else floor
    if tighten == "higher":
        return _SAME if floor is None or (value is not None and value >= floor) else floor
    if tighten == "more":
        return _more(floor or [], value or [])
    if tighten == "narrower":
        return _narrower(floor or [], value or [])
    raise ValueError(f"unknown tighten kind {tighten!r}")


def _name(entry: object) -> object:
    return entry.get("name") if isinstance(entry, dict) else entry


def _more(floor: list[Any], value: list[Any]) -> object:
    """Every floor entry kept (a ``[[table]]`` entry by ``name``: the floor's wins), the layer's others added."""
    by_name = {_name(e): e for e in value}
    if all(_name(f) in by_name and by_name[_name(f)] == f for f in floor):
        return _SAME
    names = {_name(f) for f in floor}
    return list(floor) + [e for e in value if _name(e) not in names]


def _narrower(floor: list[str], value: list[str]) -> object:
    """Only the layer's globs that lie inside the floor's; none left: the floor's."""
    if not floor:
        return _SAME
    inside = [v for v in value if any(within(v, f) for f in floor)]
    if value and len(inside) == len(value):
        return _SAME
    return inside or list(floor)


def within(glob: str, outer: str) -> bool:
    """Whether every path ``glob`` matches is matched by ``outer`` (conservatively: False when unsure)."""
    if glob == outer or outer == "**":
        return True
    if outer.endswith("/**"):
        return glob.startswith(outer[:-2])
    return False


def looser(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """The dotted keys (``policy.mode``) where the resolved ``after`` is looser than ``before``:
    ``before`` taken as a floor, what ``after`` would have lowered."""
    return [".".join(at) for at, _, _ in clamp(before, after)[1]]
