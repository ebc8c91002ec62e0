"""Path globs with the Rust original's semantics (``glob::Pattern``, default options).

The dialect, exactly as the governed catalogue and ``[yupana.policy]`` globs are written:

* ``?`` matches one character and ``*`` any run of characters, **including** ``/``
  (``require_literal_separator`` is off, so ``src/*`` covers ``src/a/b.rs``);
* ``**`` must be a whole path component: ``**/`` matches zero or more leading
  directories, ``a/**/b`` also matches ``a/b``, and a trailing ``/**`` everything below;
* ``[abc]``, ``[a-z]`` and ``[!abc]`` are classes; ``]`` first in a class is literal;
  ``[*]`` is how a literal ``*`` is written (a backslash is an ordinary character);
* leading dots are not special.

Malformed patterns (``***``, ``a**``, an unclosed ``[``, an empty pattern) raise
:class:`GlobError` when compiled; the cold path compiles every glob once and stores the
tokens, so hooks only match. Standard library only, no regex engine.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    Glob = tuple[tuple[int, Any], ...]  # a compiled glob: its (kind, payload) tokens
    Class = tuple[bool, tuple[tuple[str, str], ...]]  # a class token's payload: (negated, ranges)

# Token kinds. A compiled glob is a tuple of (kind, payload) pairs.
LIT = 0  # payload: the literal text
ONE = 1  # ?
ANY = 2  # *
DIRS = 3  # **/ : "" or any text ending in "/"
ALL = 4  # trailing ** : anything
CLASS = 5  # payload: (negated, ((lo, hi), ...))


class GlobError(ValueError):
    """A glob that does not compile; the message says what is wrong and where."""


def compile_glob(pattern: str) -> Glob:
    """Compile ``pattern`` to tokens, or raise GlobError."""
    if not isinstance(pattern, str) or pattern == "":
        raise GlobError("empty glob")
    tokens: list[tuple[int, Any]] = []
    lit: list[str] = []
    i, n = 0, len(pattern)

    def flush() -> None:
        if lit:
            tokens.append((LIT, "".join(lit)))
            lit.clear()

    while i < n:
        c = pattern[i]
        if c == "*":
            run = 1
            while i + run < n and pattern[i + run] == "*":
                run += 1
            if run > 2:
                raise GlobError(f"{pattern!r}: wildcards are either * or ** (found {'*' * run} at {i})")
            if run == 2:
                at_start = i == 0 or pattern[i - 1] == "/"
                after = i + 2
                if not at_start or (after < n and pattern[after] != "/"):
                    raise GlobError(f"{pattern!r}: ** must be a whole path component (at {i})")
                flush()
                if after >= n:
                    tokens.append((ALL, None))
                    i = after
                else:
                    tokens.append((DIRS, None))
                    i = after + 1
                continue
            flush()
            tokens.append((ANY, None))
            i += 1
        elif c == "?":
            flush()
            tokens.append((ONE, None))
            i += 1
        elif c == "[":
            end, cls = _parse_class(pattern, i)
            flush()
            tokens.append((CLASS, cls))
            i = end
        else:
            lit.append(c)
            i += 1
    flush()
    return tuple(tokens)


def _parse_class(pattern: str, start: int) -> tuple[int, Class]:
    i = start + 1
    n = len(pattern)
    negated = False
    if i < n and pattern[i] == "!":
        negated = True
        i += 1
    ranges: list[tuple[str, str]] = []
    first = True
    while i < n:
        c = pattern[i]
        if c == "]" and not first:
            return i + 1, (negated, tuple(ranges))
        first = False
        if i + 2 < n and pattern[i + 1] == "-" and pattern[i + 2] != "]":
            lo, hi = c, pattern[i + 2]
            if lo > hi:
                raise GlobError(f"{pattern!r}: range {lo}-{hi} is reversed (at {i})")
            ranges.append((lo, hi))
            i += 3
        else:
            ranges.append((c, c))
            i += 1
    raise GlobError(f"{pattern!r}: unclosed [ (at {start})")


def matches(tokens: Glob, path: str) -> bool:
    """Whether the compiled glob matches the whole of ``path``."""
    return _match(tokens, 0, path, 0, {})


def _match(tokens: Glob, ti: int, s: str, si: int, memo: dict[tuple[int, int], bool]) -> bool:
    n = len(s)
    while ti < len(tokens):
        kind, payload = tokens[ti]
        if kind == LIT:
            if not s.startswith(payload, si):
                return False
            si += len(payload)
        elif kind == ONE:
            if si >= n:
                return False
            si += 1
        elif kind == CLASS:
            if si >= n or not _in_class(payload, s[si]):
                return False
            si += 1
        elif kind == ALL:
            return True
        else:
            key = (ti, si)
            if key in memo:
                return memo[key]
            if ti + 1 == len(tokens) and kind == ANY:
                return True
            found = False
            if kind == ANY:
                for j in range(si, n + 1):
                    if _match(tokens, ti + 1, s, j, memo):
                        found = True
                        break
            else:  # DIRS: zero directories, or up to and including any later "/"
                if _match(tokens, ti + 1, s, si, memo):
                    found = True
                else:
                    j = s.find("/", si)
                    while j >= 0:
                        if _match(tokens, ti + 1, s, j + 1, memo):
                            found = True
                            break
                        j = s.find("/", j + 1)
            memo[key] = found
            return found
        ti += 1
    return si == n


def _in_class(payload: Class, ch: str) -> bool:
    negated, ranges = payload
    hit = False
    for lo, hi in ranges:
        if lo <= ch <= hi:
            hit = True
            break
    return hit != negated


def match_any(compiled: Sequence[Glob], path: str) -> bool:
    """Whether any of several compiled globs matches ``path``."""
    for tokens in compiled:
        if matches(tokens, path):
            return True
    return False
