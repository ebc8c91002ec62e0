"""What a hook reads of the projection cache: the hot twin, one section at a time. Stdlib only.

:class:`HotCache` answers ``get(key)`` like the cache's dict (docs/cache-format.md): the
bookkeeping fields from the header, a plane from its own section — unmarshalled the first
time it is asked for, never before. Text rules are :class:`TextRules`: each rule is stored on
its own, and :meth:`TextRules.candidates` returns the rules whose prefilters admit a text by
asking the literal index (:mod:`yupana.regex.rule_index`) which ones can, so a hook with
50,000 rules in the catalogue reads the handful that share an n-gram with the edit. The
layout is :mod:`yupana.state.hot_derive`'s.
"""

from __future__ import annotations

import marshal

from yupana.regex.prefilter import Admission
from yupana.regex.rule_index import Index
from yupana.state.hot_file import Corrupt, HotFile

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from typing import Any

_MISSING = object()
PLANE = "plane:"  # section name prefix of every plane but the text rules
RULES, RULE_OFFSETS = "text_rules:records", "text_rules:offsets"
INDEX = "text_rules:index:"


class TextRules:
    """The text rules of a hot twin: counted from the header, read one record at a time."""

    __slots__ = ("file", "count", "index", "_offsets", "_rules")

    def __init__(self, file: HotFile) -> None:
        info = file.header["text_rules"]
        self.file = file
        self.count: int = info["count"]
        self.index = Index(info["index"], self._section)
        self._offsets: Any = None
        self._rules: dict[int, dict[str, Any]] = {}

    def __len__(self) -> int:
        return self.count

    def __bool__(self) -> bool:
        return self.count > 0

    def __getitem__(self, i: int) -> dict[str, Any]:
        if not 0 <= i < self.count:
            raise IndexError(i)
        return self.rule(i)

    def __iter__(self) -> Any:
        return (self.rule(i) for i in range(self.count))

    def _section(self, name: str) -> memoryview:
        return self.file.view(INDEX + name)

    def rule(self, i: int) -> dict[str, Any]:
        """Rule ``i`` (the cache's order), with its derived ``_prefilter`` and ``_run``."""
        found = self._rules.get(i)
        if found is None:
            if self._offsets is None:
                self._offsets = self.file.view(RULE_OFFSETS).cast("I")
            off, _ = self.file.header["sections"][RULES]
            base = self.file.base + off
            try:
                found = marshal.loads(self.file.buf[base + self._offsets[i]:base + self._offsets[i + 1]])
            except (EOFError, ValueError, TypeError) as exc:
                raise Corrupt(f"text rule {i} does not unmarshal ({exc})") from None
            self._rules[i] = found
        return found

    def all(self) -> list[dict[str, Any]]:
        """Every rule, in order (``explain``, tests; a hook uses :meth:`candidates`)."""
        return [self.rule(i) for i in range(self.count)]

    def candidates(self, text: str, deadline_at: float | None = None) -> tuple[list[dict[str, Any]], int]:
        """(the rules whose prefilters admit ``text``, in order; how many were not looked at
        because ``deadline_at`` passed) — :func:`yupana.evaluate.text_rules.candidates`."""
        admission = Admission(text, deadline_at)
        ids = self.index.candidates(text, admission.folded, deadline_at)
        if ids is None:
            return [], self.count
        ordered = sorted(ids)
        out = []
        for n, i in enumerate(ordered):
            if admission.expired():
                return out, len(ordered) - n
            rule = self.rule(i)
            admitted = admission.admits(rule.get("_prefilter"), rule.get("_run"))
            if admitted is None:
                return out, len(ordered) - n
            if admitted:
                out.append(rule)
        return out, 0


class HotCache:
    """The cache a hook is served: ``get``/``[]`` as on the JSON's dict, sections on demand."""

    __slots__ = ("file", "meta", "text_rules", "_planes")

    def __init__(self, file: HotFile) -> None:
        self.file = file
        self.meta: dict[str, Any] = file.header["meta"]
        self.text_rules = TextRules(file)
        self._planes: dict[str, Any] = {}

    def get(self, key: str, default: Any = None) -> Any:
        if key in self.meta:
            return self.meta[key]
        if key == "text_rules":
            return self.text_rules
        if key in self._planes:
            return self._planes[key]
        name = PLANE + key
        if not self.file.has(name):
            return default
        value = self._planes[key] = self.file.load(name)
        return value

    def __getitem__(self, key: str) -> Any:
        value = self.get(key, _MISSING)
        if value is _MISSING:
            raise KeyError(key)
        return value

    def __contains__(self, key: str) -> bool:
        return self.get(key, _MISSING) is not _MISSING

    def policy_languages(self) -> tuple[str, ...]:
        """The languages some pre-edit structural policy is for (no section read)."""
        return tuple(self.file.header.get("policy_languages") or ())
