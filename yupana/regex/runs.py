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

Pivots. A top-level item ``C{lo,…}`` of the pattern (``lo`` at least one, ``C`` a narrower
class than the whole alphabet) that starts after items whose shortest matches add up to
``before`` pins every match further: it holds ``lo`` characters of ``C`` at some place ``p``,
and the ``k`` characters from ``p - before`` on are all of the alphabet (the items before it,
then the repetition and the items after it). The run is then ``(table, k, pivots)``, each pivot
``(pivot_table, lo, before)``, its table marking ``C``'s bytes ``y``; at most
:data:`MAX_PIVOTS`, the narrowest classes first. The last item is the tail (``before = k -
lo``), the first the head (``before = 0``): ``\\b[a-z]{2}[A-Za-z0-9]{8,16}[A-F]\\b`` needs a word
of eleven that ends in ``A``-``F``, which prose seldom has, where the run alone passes any
eleven-letter word; ``\\b[0-9]{2,4}-[A-Z]{2,5}-\\w{3,9}\\b`` needs two digits before the rest of
its run; ``\\b\\w{2,12}[-_.]\\w{6,17}\\b`` a ``-``, ``_`` or ``.`` with two word characters before
it and six after, which the end of a sentence is not.
"""

from __future__ import annotations

from yupana.regex.syntax import Parser

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from yupana.regex.syntax import Node

    Pivot = tuple[bytes, int, int]  # (table marking the pivot's class y, lo, before)
    Run = tuple[bytes, int] | tuple[bytes, int, tuple[Pivot, ...]]

MARK, GAP = 0x78, 0x20  # b"x" for a member byte, b" " otherwise
PIVOT = 0x79  # b"y": a byte of a pivot's class (its own table)
MAX_PIVOTS = 3  # pivots kept a run, the narrowest classes first
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
    pivots)`` when some top-level item is of a narrower class (the module docstring)."""
    ascii_part, non, length = _walk(ast)
    pivots = _pivots(ast, ascii_part, non, min(length, MAX_RUN))
    if length < MIN_RUN or (len(ascii_part) > MAX_ALPHABET and not pivots):
        return None
    table = _table(ascii_part, non, MARK)
    k = min(length, MAX_RUN)
    return (table, k, pivots) if pivots else (table, k)


def _table(ascii_part: frozenset[str], non: bool, mark: int) -> bytes:
    table = bytearray([GAP]) * 256
    for c in ascii_part:
        table[ord(c)] = mark
    if non:
        for b in range(128, 256):
            table[b] = mark
    return bytes(table)


def _pivots(ast: Node, ascii_part: frozenset[str], non: bool, k: int) -> tuple[Pivot, ...]:
    """The pattern's pivots (at most :data:`MAX_PIVOTS`, narrowest first): each top-level
    ``C{lo,…}`` with ``lo`` ≥ 1 and ``C`` narrower than the alphabet, as ``(table, lo, before)``."""
    items = list(ast[1]) if ast[0] == "cat" else [ast]
    found: list[tuple[bool, int, int, Pivot]] = []
    before = 0
    for n, item in enumerate(items):
        if item[0] == "chars":
            inner, lo = item, 1
        elif item[0] == "rep" and item[1][0] == "chars" and item[2] >= 1:
            inner, lo = item[1], item[2]
        else:
            before += _walk(item)[2]  # \b, ^, $ add nothing; a group its shortest match
            continue
        members, members_non = inner[3]
        narrower = members <= ascii_part and (non or not members_non) and (members_non, members) != (non, ascii_part)
        if narrower and before + lo <= k:  # else not within the alphabet as modelled, or past a capped run
            found.append((members_non, len(members), n, (_table(members, members_non, PIVOT), lo, before)))
        before += lo
    return tuple(pivot for *_, pivot in sorted(found)[:MAX_PIVOTS])
