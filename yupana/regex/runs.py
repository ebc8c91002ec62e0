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

The ends. When the pattern ends (after its zero-width assertions) in ``C{lo,…}`` with ``lo``
at least one and ``C`` a narrower class than the whole alphabet, every match also ends in
``lo`` characters of ``C`` preceded by at least ``k - lo`` of the alphabet (the rest of that
repetition included); when it starts so, every match starts with ``lo`` of ``C`` followed
by at least ``k - lo`` of the alphabet. The run is then ``(table, k, tail_table, tail_lo,
head_table, head_lo)``, each end's table marking ``C``'s bytes ``y`` (``None, 0``: no such
end). ``\\b[a-z]{2}[A-Za-z0-9]{8,16}[A-F]\\b`` needs a word of eleven that ends in ``A``-``F``,
which prose seldom has, where the run alone passes any eleven-letter word;
``\\b[0-9]{2,4}-[A-Z]{2,5}-\\w{3,9}\\b`` needs two digits before the rest of its run.
"""

from __future__ import annotations

from yupana.regex.syntax import Parser

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from yupana.regex.syntax import Node

    # (table, k), or with the narrower ends: (table, k, tail_table, tail_lo, head_table, head_lo)
    Run = tuple[bytes, int] | tuple[bytes, int, bytes | None, int, bytes | None, int]

MARK, GAP = 0x78, 0x20  # b"x" for a member byte, b" " otherwise
TAIL = 0x79  # b"y": a byte of the tail's class (its own table)
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


def required_run(pattern: str) -> Run | None:
    """(translation table, run length) for ``pattern``, or None when it would exclude too
    little to be worth checking. Raises what the parser raises for unmodelled syntax."""
    return required_run_of(Parser(pattern).parse())


def required_run_of(ast: Node) -> Run | None:
    """:func:`required_run` of an already parsed pattern: ``(table, k)``, or ``(table, k,
    tail_table, tail_lo, head_table, head_lo)`` when the pattern ends or starts with a narrower
    class (the module docstring; a missing end is ``(None, 0)``)."""
    ascii_part, non, length = _walk(ast)
    tail, head = _end(ast, ascii_part, non, -1), _end(ast, ascii_part, non, 0)
    if length < MIN_RUN or (len(ascii_part) > MAX_ALPHABET and tail is None and head is None):
        return None
    table = _table(ascii_part, non, MARK)
    k = min(length, MAX_RUN)
    if tail is None and head is None:
        return table, k
    tail_table, tail_lo = _end_table(tail, k)
    head_table, head_lo = _end_table(head, k)
    return table, k, tail_table, tail_lo, head_table, head_lo


def _end_table(end: tuple[frozenset[str], bool, int] | None, k: int) -> tuple[bytes | None, int]:
    """An end's (table marking its class ``y``, lo), or ``(None, 0)``: no such end."""
    return (None, 0) if end is None else (_table(end[0], end[1], TAIL), min(end[2], k))


def _table(ascii_part: frozenset[str], non: bool, mark: int) -> bytes:
    table = bytearray([GAP]) * 256
    for c in ascii_part:
        table[ord(c)] = mark
    if non:
        for b in range(128, 256):
            table[b] = mark
    return bytes(table)


def _end(ast: Node, ascii_part: frozenset[str], non: bool, at: int) -> tuple[frozenset[str], bool, int] | None:
    """(ASCII members, non-ASCII possible, lo) of the pattern's last (``at`` -1) or first (0)
    ``C{lo,…}``, when ``lo`` ≥ 1 and ``C`` excludes some of the alphabet; else None."""
    items = list(ast[1]) if ast[0] == "cat" else [ast]
    while items and items[at][0] == "empty":  # \b, ^, $: dropping a constraint only admits more
        items.pop(at)
    if not items:
        return None
    edge = items[at]
    if edge[0] == "chars":
        inner, lo = edge, 1
    elif edge[0] == "rep" and edge[1][0] == "chars" and edge[2] >= 1:
        inner, lo = edge[1], edge[2]
    else:
        return None
    end_ascii, end_non = inner[3]
    if (end_non and not non) or not end_ascii <= ascii_part:
        return None  # not within the alphabet: the parser's model is not what this assumes
    if end_non == non and end_ascii == ascii_part:
        return None  # no narrower than the run itself
    return end_ascii, end_non, lo
