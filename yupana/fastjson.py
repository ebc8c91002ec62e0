"""JSON for the hot path without importing :mod:`json`.

``import json`` pulls in :mod:`re` and :mod:`enum`, about 14 ms on a 2-core machine:
close to the whole cost of starting the interpreter. The C scanner and string encoder
behind :mod:`json` live in the built-in ``_json`` module, which imports nothing, so
hooks parse payloads and write records through it. The cold path uses :mod:`json`.

Errors are :class:`ValueError` (``json.JSONDecodeError`` is a subclass of it).
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import ClassVar

try:
    from _json import encode_basestring as _encode_str
    from _json import make_scanner as _make_scanner
except ImportError:  # pragma: no cover - only on interpreters without the C accelerator
    from json.decoder import JSONDecoder as _Decoder
    from json.encoder import encode_basestring as _encode_str

    # scan_once is set by JSONDecoder.__init__ and not declared in typeshed
    _scan = _Decoder().scan_once  # type: ignore[attr-defined]
else:

    def _no_constant(name: str) -> object:
        raise ValueError(f"non-standard JSON constant {name}")

    class _Context:
        strict = True
        object_hook = None
        object_pairs_hook = None
        parse_float = float
        parse_int = int
        parse_constant = staticmethod(_no_constant)
        memo: ClassVar[dict[str, object]] = {}  # the scanner's key memo, shared as json.decoder shares it

    # the scanner reads only these attributes; typeshed types its argument as a JSONDecoder
    _scan = _make_scanner(_Context())  # type: ignore[arg-type]

_WS = " \t\n\r"


def loads(text: str | bytes) -> object:
    """Parse one JSON document; raise ValueError on anything else."""
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8")
    n = len(text)
    i = 0
    while i < n and text[i] in _WS:
        i += 1
    try:
        value, end = _scan(text, i)
    except StopIteration as exc:
        raise ValueError(f"invalid JSON at offset {exc.value}") from None
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None
    except (SystemError, ValueError):
        # The C scanner reports syntax errors through json.decoder, which it expects to
        # be imported already. On this (rare) error path, let json itself explain.
        import json

        json.loads(text)
        raise ValueError("invalid JSON") from None
    while end < n and text[end] in _WS:
        end += 1
    if end != n:
        raise ValueError(f"extra data after JSON value at offset {end}")
    return value


def dumps(value: object) -> str:
    """Serialise dicts, lists, tuples, str, int, float, bool and None compactly."""
    parts: list[str] = []
    _encode(value, parts.append)
    return "".join(parts)


def _encode(value: object, out: Callable[[str], object]) -> None:
    if isinstance(value, str):
        out(_encode_str(value))
    elif value is None:
        out("null")
    elif value is True:
        out("true")
    elif value is False:
        out("false")
    elif isinstance(value, int):
        out(int.__repr__(value))
    elif isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise ValueError("cannot encode a non-finite float as JSON")
        out(float.__repr__(value))
    elif isinstance(value, dict):
        out("{")
        first = True
        for key, item in value.items():
            if not isinstance(key, str):
                raise ValueError(f"JSON object keys must be strings, not {type(key).__name__}")
            if not first:
                out(",")
            first = False
            out(_encode_str(key))
            out(":")
            _encode(item, out)
        out("}")
    elif isinstance(value, (list, tuple, set, frozenset)):
        out("[")
        first = True
        for item in value:
            if not first:
                out(",")
            first = False
            _encode(item, out)
        out("]")
    else:
        raise ValueError(f"cannot encode {type(value).__name__} as JSON")
