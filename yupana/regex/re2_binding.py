"""RE2 for the hooks, on google-re2's C++ extension without its Python wrapper. Hot path.

``import re2`` costs a hook ~3.5 ms, and ~3 ms of it is the wrapper's own imports
(``functools`` pulls in ``collections``, ``operator``, ``reprlib``, ``types``) rather than RE2:
the extension module ``re2._re2`` loads in ~1 ms. The wrapper also encodes the whole text to
UTF-8 and converts offsets on every ``search`` call, so a windowed scan of a 100 KB Write
paid one encoding per window per rule. This module loads the extension by itself (falling
back to ``from re2 import _re2``, the wrapper and all, when it cannot) and gives the hooks the
small part of the wrapper's API they use, with the wrapper's semantics:

* :func:`compile` → :class:`Pattern` (``search(text, pos, endpos)``, ``finditer``,
  ``groups``, ``groupindex``, ``pattern``), RE2's error log off (its ``E0000 … re2.cc`` line
  would reach the client's stderr); a pattern RE2 refuses raises :data:`error` with RE2's
  message, as ``re2.compile`` does;
* :class:`Match` (``group``, ``groups``, ``groupdict``, ``start``, ``end``, ``span``), offsets
  in characters of the ``str`` searched, as ``re`` and the wrapper give them;
* :func:`escape`, and :func:`search_set` (an unanchored ``RE2::Set``).

Every caller compiles through here, hot and cold: RE2 always runs with its log off, and a
refused pattern is :data:`error` (``re2.error`` itself) carrying RE2's message.

A text is encoded once and kept while it is being searched (the last four texts); an ASCII
text's byte offsets are its character offsets; for any other text the byte offset of every
2048th character is found once, and a match's offsets are converted from the last one
converted (a scan front to back converts each stretch of the text once) or from the nearest
block (the wrapper scanned from the start of the text, on every call).
tests/regex/test_re2_binding.py holds every call to the wrapper's answer.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from collections.abc import Iterator
    from types import ModuleType
    from typing import Any

SET_MAX_MEM = 64 << 20  # an RE2::Set's DFA never runs out at this budget (it resets its cache and goes on)
_NULL = (-1, -1)
_BLOCK = 2048  # characters between the byte offsets a non-ASCII text keeps


def _load() -> ModuleType:
    """``re2._re2``: found on ``sys.path`` and loaded without running ``re2/__init__.py``."""
    loaded = sys.modules.get("re2._re2")
    if loaded is not None:
        return loaded
    try:
        external, bootstrap = sys.modules["_frozen_importlib_external"], sys.modules["_frozen_importlib"]
        for entry in sys.path:
            package = os.path.join(entry or ".", "re2")
            if not os.path.isfile(os.path.join(package, "__init__.py")):
                continue
            for suffix in external.EXTENSION_SUFFIXES:
                path = os.path.join(package, "_re2" + suffix)
                if os.path.isfile(path):
                    loader = external.ExtensionFileLoader("re2._re2", path)
                    spec = bootstrap.ModuleSpec("re2._re2", loader, origin=path)
                    module: ModuleType = bootstrap.module_from_spec(spec)
                    loader.exec_module(module)
                    sys.modules["re2._re2"] = module  # `import re2` later finds it there
                    return module
            break  # the first re2 package on the path is the one `import re2` would take
    except (ImportError, OSError, AttributeError, KeyError):
        pass
    from re2 import _re2

    fallback: ModuleType = _re2
    return fallback


_re2 = _load()
error = _re2.Error  # what re2.error is
_UNANCHORED = _re2.RE2.Anchor.UNANCHORED
_OPTIONS = _re2.RE2.Options()
_OPTIONS.log_errors = False


class _Text:
    """A ``str`` being searched: its UTF-8 bytes and, for a text that is not ASCII, the byte
    offset of every :data:`_BLOCK`-th character (built once, in one pass) and the last offset
    converted to characters: a conversion scans from the nearer of the two."""

    __slots__ = ("text", "data", "ascii", "_starts", "_at")

    def __init__(self, text: str) -> None:
        self.text = text
        self.data = text.encode("utf-8")
        self.ascii = len(self.data) == len(text)
        self._starts: list[int] | None = None
        self._at = (0, 0)  # the last byte offset converted to characters, and its character offset

    def _blocks(self) -> list[int]:
        if self._starts is None:
            starts = [0]
            for _ in range(len(self.text) // _BLOCK):
                starts.append(starts[-1] + _re2.CharLenToBytes(self.data, starts[-1], _BLOCK))
            self._starts = starts
        return self._starts

    def to_byte(self, char: int) -> int:
        if self.ascii:
            return char
        if char >= len(self.text):
            return len(self.data)
        block, within = divmod(char, _BLOCK)
        base = self._blocks()[block]
        return base + _re2.CharLenToBytes(self.data, base, within) if within else base

    def to_char(self, byte: int) -> int:
        if self.ascii or byte < 0:
            return byte
        if byte >= len(self.data):
            return len(self.text)
        base_byte, base_char = self._at
        if not base_byte <= byte < base_byte + 4 * _BLOCK:  # behind the last conversion, or far ahead
            starts = self._blocks()
            lo, hi = 0, len(starts) - 1  # the last block starting at or before `byte`
            while lo < hi:
                mid = (lo + hi + 1) // 2
                if starts[mid] <= byte:
                    lo = mid
                else:
                    hi = mid - 1
            if not base_byte <= byte or starts[lo] > base_byte:
                base_byte, base_char = starts[lo], lo * _BLOCK
        char = base_char + int(_re2.BytesToCharLen(self.data, base_byte, byte))
        self._at = (byte, char)
        return char

    def spans(self, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
        """A match's byte spans in characters: its offsets converted in increasing order, each
        from the one before (a scan front to back converts each stretch of the text once)."""
        chars = {offset: self.to_char(offset) for offset in sorted({o for span in spans for o in span if o >= 0})}
        return [span if span == _NULL else (chars[span[0]], chars[span[1]]) for span in spans]


_KEPT = 4  # texts kept encoded: a scan's text, and the few small ones its matches are checked in
_recent: list[_Text] = []


def _text(text: str) -> _Text:
    for kept in _recent:
        if kept.text is text:
            return kept
    made = _Text(text)
    _recent.insert(0, made)
    del _recent[_KEPT:]
    return made


class Pattern:
    """A compiled RE2 pattern (``str`` patterns and texts only)."""

    __slots__ = ("pattern", "_regexp", "groups", "_groupindex")

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self._regexp = _re2.RE2(pattern.encode("utf-8"), _OPTIONS)
        if not self._regexp.ok():
            raise error(self._regexp.error())
        self.groups: int = self._regexp.NumberOfCapturingGroups()
        self._groupindex: dict[str, int] | None = None

    @property
    def groupindex(self) -> dict[str, int]:
        if self._groupindex is None:
            self._groupindex = {name.decode("utf-8"): index for name, index in self._regexp.NamedCapturingGroups()}
        return self._groupindex

    def search(self, text: str, pos: int | None = None, endpos: int | None = None) -> Match | None:
        return next(self.finditer(text, pos, endpos), None)

    def finditer(self, text: str, pos: int | None = None, endpos: int | None = None) -> Iterator[Match]:
        n = len(text)
        pos = 0 if pos is None else max(0, min(pos, n))
        endpos = n if endpos is None else max(0, min(endpos, n))
        if pos > endpos:
            return
        t = _text(text)
        at, stop = t.to_byte(pos), t.to_byte(endpos)
        while True:
            spans = self._regexp.Match(_UNANCHORED, t.data, at, stop)
            if spans[0] == _NULL:
                return
            end = spans[0][1]
            yield Match(self, text, spans if t.ascii else t.spans(spans))
            if at == stop:
                return
            if end == at:  # an empty match: step over one character
                at += 1 if t.ascii else _re2.CharLenToBytes(t.data, at, 1)
            else:
                at = end


class Match:
    """One match: its groups' spans in characters of the text searched."""

    __slots__ = ("re", "string", "_spans")

    def __init__(self, regexp: Pattern, text: str, spans: list[tuple[int, int]]) -> None:
        self.re = regexp
        self.string = text
        self._spans = spans

    def _index(self, group: int | str) -> int:
        if not isinstance(group, int):
            try:
                group = self.re.groupindex[group]
            except KeyError:
                raise IndexError("bad group name") from None
        if not 0 <= group <= self.re.groups:
            raise IndexError("bad group index")
        return group

    def __getitem__(self, group: int | str) -> str | None:
        span = self._spans[self._index(group)]
        return None if span == _NULL else self.string[span[0]:span[1]]

    def group(self, *groups: int | str) -> Any:
        if len(groups) <= 1:
            return self[groups[0] if groups else 0]
        return tuple(self[g] for g in groups)

    def groups(self, default: Any = None) -> tuple[Any, ...]:
        return tuple(default if (item := self[g]) is None else item for g in range(1, self.re.groups + 1))

    def groupdict(self, default: Any = None) -> dict[str, Any]:
        return {name: default if (item := self[index]) is None else item for name, index in self.re.groupindex.items()}

    def start(self, group: int | str = 0) -> int:
        return self._spans[self._index(group)][0]

    def end(self, group: int | str = 0) -> int:
        return self._spans[self._index(group)][1]

    def span(self, group: int | str = 0) -> tuple[int, int]:
        return self._spans[self._index(group)]


def compile(pattern: str) -> Pattern:  # the name re2 and re give it
    """``pattern`` compiled with RE2's defaults (UTF-8, Perl classes, leftmost-first), RE2's
    log off; raises :data:`error` when RE2 refuses it."""
    return Pattern(pattern)


def escape(literal: str) -> str:
    """``literal`` with every RE2 metacharacter quoted."""
    return str(_re2.RE2.QuoteMeta(literal.encode("utf-8")).decode("utf-8"))


class SearchSet:
    """An unanchored ``RE2::Set``: ``Match(text)`` gives the indices of the patterns found
    anywhere in ``text``, or None."""

    __slots__ = ("_set",)

    def __init__(self, patterns: list[str]) -> None:
        options = _re2.RE2.Options()
        options.log_errors = False
        options.max_mem = SET_MAX_MEM
        self._set = _re2.Set(_UNANCHORED, options)
        for pattern in patterns:
            if self._set.Add(pattern.encode("utf-8")) == -1:
                raise error(f"failed to add {pattern!r} to Set")
        if not self._set.Compile():
            raise error("failed to compile Set")

    def Match(self, text: str) -> list[int] | None:  # RE2::Set's name, as the wrapper spells it
        t = _text(text)
        return self._set.Match(t.data) or None


def search_set(patterns: list[str]) -> SearchSet:
    """A compiled unanchored set of ``patterns``; raises :data:`error` when a pattern or the set
    does not compile."""
    return SearchSet(patterns)
