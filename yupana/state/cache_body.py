"""projection.json as the cache writer writes it: compact JSON in chunks, each plane digested. Cold path."""

from __future__ import annotations

from typing import Any

import hashlib
from collections.abc import Iterator


class JsonBody:
    """projection.json as it is written: compact JSON, each plane's part digested on the way
    (what lets the twin copy the planes a refresh did not change) and the whole file's SHA-1,
    produced in chunks — a 50,000-rule cache is never one string in memory. Cold path: the
    C encoder of :mod:`json`."""

    def __init__(self, cache: dict[str, Any]) -> None:
        import json

        self.cache = cache
        self.encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False,
                                       default=jsonable).encode
        self.digests: dict[str, str] = {}
        self._sha1: Any = None

    def check(self) -> None:
        """Raise ValueError for a value JSON cannot hold (NaN, an object), before writing."""
        for key, value in self.cache.items():
            if not isinstance(key, str):
                raise ValueError(f"JSON object keys must be strings, not {type(key).__name__}")
            if not isinstance(value, list):
                self.encode(value)

    def chunks(self) -> Iterator[bytes]:
        whole = hashlib.sha1(usedforsecurity=False)
        self._sha1 = whole
        for n, (key, value) in enumerate(self.cache.items()):
            part = hashlib.sha256()
            head = ("{" if n == 0 else ",") + self.encode(key) + ":"
            whole.update(head.encode("utf-8"))
            yield head.encode("utf-8")
            for piece in self._value(value):
                data = piece.encode("utf-8")
                part.update(data)
                whole.update(data)
                yield data
            self.digests[key] = part.hexdigest()
        tail = b"}" if self.cache else b"{}"
        whole.update(tail)
        yield tail

    def _value(self, value: Any) -> Iterator[str]:
        if not isinstance(value, list):
            yield self.encode(value)
            return
        yield "["
        for i, entry in enumerate(value):
            yield ("," if i else "") + self.encode(entry)
        yield "]"

    def sha1(self) -> str:
        return str(self._sha1.hexdigest())

    def plane_digests(self) -> dict[str, str]:
        """Each plane's digest without writing anything (the chunks made and dropped)."""
        for _ in self.chunks():
            pass
        return dict(self.digests)


def jsonable(value: Any) -> Any:
    if isinstance(value, (set, frozenset)):
        return list(value)
    raise ValueError(f"cannot write a {type(value).__name__} as JSON")
