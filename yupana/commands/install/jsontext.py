"""JSON for a client's settings file that writes back exactly what it read.

``json`` turns ``1e400`` into ``inf`` and writes it back as ``Infinity`` — not JSON: the
client could no longer read its own settings — and ``1.50`` as ``1.5``. Here a number with a
fraction or exponent is read as a :class:`Number` (a float that keeps its text) and written
as that text; integers are exact already. A string holding a lone surrogate (``"\\ud800"``,
which JSON allows) is written back as the same escape instead of failing to encode.
The layout is ``json.dumps(indent=2, ensure_ascii=False)``'s.
"""

from __future__ import annotations

from typing import Any

import json
import re

_SURROGATE = re.compile("[\ud800-\udfff]")


class Number(float):
    """A JSON number with a fraction or exponent: its float value, written back as its text."""

    text: str

    def __new__(cls, text: str) -> Number:
        made = super().__new__(cls, text)
        made.text = text
        return made


def loads(text: str) -> Any:
    return json.loads(text, parse_float=Number)


def dumps(value: Any) -> str:
    out: list[str] = []
    _write(value, out, "")
    return "".join(out)


def _write(value: Any, out: list[str], indent: str) -> None:
    if isinstance(value, Number):
        out.append(value.text)
    elif isinstance(value, str):
        out.append(_string(value))
    elif isinstance(value, dict):
        if not value:
            out.append("{}")
            return
        inner = indent + "  "
        out.append("{")
        for i, (key, item) in enumerate(value.items()):
            out.append(("," if i else "") + "\n" + inner + _string(str(key)) + ": ")
            _write(item, out, inner)
        out.append("\n" + indent + "}")
    elif isinstance(value, list | tuple):
        if not value:
            out.append("[]")
            return
        inner = indent + "  "
        out.append("[")
        for i, item in enumerate(value):
            out.append(("," if i else "") + "\n" + inner)
            _write(item, out, inner)
        out.append("\n" + indent + "]")
    else:  # int, float we made, bool, None
        out.append(json.dumps(value, allow_nan=False))


def _string(text: str) -> str:
    quoted = json.dumps(text, ensure_ascii=False)
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", quoted)
