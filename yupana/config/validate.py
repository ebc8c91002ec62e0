"""Typing a ``[yupana]`` table by the schema table, as pydantic's lax mode would. Standard library only.

:func:`validate` fills defaults and collects every problem as ``(loc, message, input)`` in
pydantic's own words ("Input should be 'off', 'advise' or 'enforce'"), so an error reads the
same whichever engine found it (tests/config/test_resolver.py holds the two to the same answers).
"""

from __future__ import annotations

from yupana.config import schema as schema

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from typing import Any

    from yupana.config.schema import Spec

    Loc = tuple[str | int, ...]  # where a key is: ("policy", "rules", 0, "pattern")
    Problem = tuple[Loc, str, object]  # (loc, message, input)

_STR = schema.field("str")
_TRUE = ("1", "true", "t", "yes", "y", "on")
_FALSE = ("0", "false", "f", "no", "n", "off")


def validate(value: object, spec: Spec, loc: Loc, errors: list[Problem]) -> object:
    """``value`` as ``spec`` types it (defaults filled); each problem appended as (loc, message, input)."""
    kind = spec["kind"]
    if value is None and spec["optional"]:
        return None
    if kind == "table":
        return _table(value, spec, loc, errors)
    if kind == "map":
        if not isinstance(value, dict):
            errors.append((loc, "Input should be a valid dictionary", value))
            return None
        return {str(k): validate(v, spec["item"], loc + (k,), errors) for k, v in value.items()}
    if kind in ("list_str", "list_table"):
        if not isinstance(value, (list, tuple)):
            errors.append((loc, "Input should be a valid list", value))
            return None
        item = spec["item"] if kind == "list_table" else _STR
        return [validate(v, item, loc + (i,), errors) for i, v in enumerate(value)]
    return _scalar(value, spec, loc, errors)


def _table(value: object, spec: Spec, loc: Loc, errors: list[Problem]) -> dict[str, Any] | None:
    if not isinstance(value, dict):
        errors.append((loc, f"Input should be a valid dictionary or instance of {spec['name']}", value))
        return None
    return validate_table(value, spec, loc, errors)


def validate_table(value: dict[str, Any], spec: Spec, loc: Loc, errors: list[Problem]) -> dict[str, Any]:
    """A table's keys as ``spec`` (a ``table`` spec) types them: :func:`validate` on a dict."""
    out: dict[str, Any] = {}
    used = set()
    for name, sub in spec["fields"].items():
        key = schema.key_of(name, sub)
        if key in value or name in value:
            found = key if key in value else name
            used.add(found)
            out[key] = validate(value[found], sub, loc + (key,), errors)
        elif sub["required"]:
            errors.append((loc + (key,), "Field required", value))
        else:
            out[key] = default(sub)
    if loc:  # unknown keys stay inside tables (a newer binary may read them), and go at the top level
        for key, raw in value.items():
            if key not in used:
                out[key] = _plain(raw)
    return out


def default(spec: Spec) -> object:
    """A fresh copy of the key's default (a table: all of its defaults)."""
    if spec["kind"] == "table":
        return _table({}, spec, ("-",), [])
    found = spec["default"]
    if isinstance(found, (list, dict)):
        return type(found)(found)
    return found


def _plain(value: object) -> object:
    """An unknown key's value as the snapshot can hold it (TOML dates become ISO strings)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return value.isoformat() if hasattr(value, "isoformat") else str(value)


def _scalar(value: object, spec: Spec, loc: Loc, errors: list[Problem]) -> object:
    kind = spec["kind"]
    problem = None
    out = value
    if kind == "str":
        if not isinstance(value, str):
            problem = "Input should be a valid string"
    elif kind == "enum":
        if not (isinstance(value, str) and value in spec["choices"]):
            problem = f"Input should be {_either(spec['choices'])}"
    elif kind == "bool":
        out, problem = _bool(value)
    elif kind in ("int", "float"):
        number, problem = _int(value) if kind == "int" else _float(value)
        out = number
        if problem is None and number is not None:  # (no problem: a number)
            problem = _bounds(number, spec)
    if problem is not None:
        errors.append((loc, problem, value))
        return None
    return out


def _either(choices: tuple[str, ...]) -> str:
    shown = [repr(c) for c in choices]
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " or " + shown[-1]


def _bool(value: object) -> tuple[bool | None, str | None]:
    if isinstance(value, bool):
        return value, None
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value), None
    if isinstance(value, str) and value.strip().lower() in _TRUE + _FALSE:
        return value.strip().lower() in _TRUE, None
    if isinstance(value, (int, float, str)):
        return None, "Input should be a valid boolean, unable to interpret input"
    return None, "Input should be a valid boolean"


def _int(value: object) -> tuple[int | None, str | None]:
    if isinstance(value, int):
        return int(value), None
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return None, "Input should be a finite number"
        if not value.is_integer():
            return None, "Input should be a valid integer, got a number with a fractional part"
        return int(value), None
    if isinstance(value, str):
        try:
            return int(value.strip()), None
        except ValueError:
            return None, "Input should be a valid integer, unable to parse string as an integer"
    return None, "Input should be a valid integer"


def _float(value: object) -> tuple[float | None, str | None]:
    if isinstance(value, (int, float)):
        return float(value), None
    if isinstance(value, str):
        try:
            return float(value.strip()), None
        except ValueError:
            return None, "Input should be a valid number, unable to parse string as a number"
    return None, "Input should be a valid number"


def _bounds(value: float, spec: Spec) -> str | None:
    if spec["ge"] is not None and not value >= spec["ge"]:
        return f"Input should be greater than or equal to {spec['ge']}"
    if spec["gt"] is not None and not value > spec["gt"]:
        return f"Input should be greater than {spec['gt']}"
    if spec["le"] is not None and not value <= spec["le"]:
        return f"Input should be less than or equal to {spec['le']}"
    return None
