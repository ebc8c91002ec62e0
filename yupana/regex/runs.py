"""The required-run analysis: every match of an RE2 pattern is a run of at least ``k``
characters, each from the pattern's alphabet.

The second prefilter, for the patterns the literal one (:mod:`yupana.regex.literals`) cannot
narrow: ``[A-Za-z0-9+/]{40,}``, ``\\b[0-9a-f]{40}\\b``, ``[^\\x00-\\x7F]{20,}``, an IPv4
address. Any match is a contiguous substring of the text; every character of it comes from
some character node of the pattern, so from the union of their alphabets; and it is at least
as long as the pattern's shortest match. So a text with no run of ``k`` such characters
cannot match, and the regex (and ``re2`` itself) need not be touched.

The alphabet is the parser's over-approximation (:mod:`yupana.regex.syntax`: ASCII members,
and whether any non-ASCII character may be one, case folding included), so a wrong answer
can only admit more. The check runs on UTF-8 bytes (:func:`yupana.regex.prefilter.may_run`):
a 256-entry translation table marks the alphabet's bytes — every byte of a multi-byte
character when non-ASCII characters are members — and a run of ``k`` marks is searched. A
character becomes at least one marked byte, so a run of ``k`` characters is a run of at
least ``k`` marked bytes: the byte check admits every text the character check admits.
"""

from __future__ import annotations

from yupana.regex.syntax import Parser

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from yupana.regex.syntax import Node

MARK, GAP = 0x78, 0x20  # b"x" for a member byte, b" " otherwise
MIN_RUN = 3  # shorter required runs pass nearly every text: not worth a check
MAX_RUN = 4096  # a run requirement longer than this is capped (still sound: fewer is weaker)
MAX_ALPHABET = 123  # more ASCII members than this (every character but a few) excludes nearly nothing; [^\s"']{19,} still counts


def _walk(node: Node) -> tuple[frozenset[str], bool, int]:
    """(ASCII alphabet, non-ASCII possible, shortest match length) of one AST node."""
    kind = node[0]
    if kind == "chars":
        ascii_part, non = node[3]
        return ascii_part, non, 1
    if kind == "empty":
        return frozenset(), False, 0
    if kind == "cat" or kind == "alt":
        parts = [_walk(item) for item in node[1]]
        ascii_part = frozenset().union(*(p[0] for p in parts))
        non = any(p[1] for p in parts)
        lengths = [p[2] for p in parts]
        return ascii_part, non, (sum(lengths) if kind == "cat" else min(lengths))
    _, inner, lo, hi = node
    if hi == 0:
        return frozenset(), False, 0
    ascii_part, non, length = _walk(inner)
    return ascii_part, non, min(lo * length, MAX_RUN)


def required_run(pattern: str) -> tuple[bytes, int] | None:
    """(translation table, run length) for ``pattern``, or None when it would exclude too
    little to be worth checking. Raises what the parser raises for unmodelled syntax."""
    return required_run_of(Parser(pattern).parse())


def required_run_of(ast: Node) -> tuple[bytes, int] | None:
    """:func:`required_run` of an already parsed pattern."""
    ascii_part, non, length = _walk(ast)
    if length < MIN_RUN or len(ascii_part) > MAX_ALPHABET:
        return None
    table = bytearray([GAP]) * 256
    for c in ascii_part:
        table[ord(c)] = MARK
    if non:
        for b in range(128, 256):
            table[b] = MARK
    return bytes(table), min(length, MAX_RUN)
