"""Character-class trigrams: the index key of a pattern with no literal of three characters.

``\\b[A-Z2-7]{6,13}[-_.][0-9]{4}\\b`` has no required literal the trigram index
(:mod:`yupana.regex.rule_index`) can file it under, so it used to be handed to the regex stage
on every edit. But every match contains an upper-case letter or digit followed by a ``-``, ``_``
or ``.`` and a digit: a trigram over a small alphabet of character *kinds*. Each ASCII byte has
one kind (:data:`KIND_OF`: ``0`` digit, ``a`` lower-case, ``A`` upper-case, ``_``, ``=``,
``:``, ``/``, ``-``, ``.``, `` `` whitespace, ``!`` other punctuation, ``\\x01`` control;
non-ASCII bytes ``~``), so a text has one *kind string* (its UTF-8 bytes translated, one
kind a byte), and a pattern has required kind literals: the required literals
(:mod:`yupana.regex.literals`) of the pattern with each character class replaced by the set of
its members' kinds. Whenever the pattern matches, one of them is a substring of the text's
kind string; filed in the index namespace ``k`` like any literal.

Soundness: a class that may match a non-ASCII character (``.``, ``[^"]``, a letter under
``(?i)`` that folds to KELVIN SIGN or LONG S) is *unknown* here, so a required kind literal
spans only ASCII characters of a match, which are consecutive bytes of its UTF-8 encoding,
each translated to its kind. Cold path (the analysis); the hot side needs only
:func:`kinds_of`, which is in :mod:`yupana.regex.rule_index`.
"""

from __future__ import annotations

from yupana.regex.literals import MAX_EXACT, _Analysis, _minimal, _req

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from yupana.regex.syntax import Node

GRAM = 3
_FOLDS_OUT = frozenset("kKsS")  # ASCII letters whose (?i) fold orbit holds a non-ASCII character
# Kinds that ordinary prose rarely puts inside a trigram: a kind literal holding one is worth
# more than a short literal; one made of letters, spaces and punctuation only is not.
_PROSE = frozenset("aA .!:-")
_RARE_IN_PROSE = ("0", "_", "=", "/", "\x01", "aA", "AA", "-A", "_A", "0A")


def kind(c: str) -> str:
    """The kind of one ASCII character (see the module docstring)."""
    if "0" <= c <= "9":
        return "0"
    if "a" <= c <= "z":
        return "a"
    if "A" <= c <= "Z":
        return "A"
    if c in "_=:/-.":
        return c
    if c in " \t\n\v\f\r":
        return " "
    if c < " " or c == "\x7f":
        return "\x01"
    return "!"


def table() -> bytes:
    """The 256-byte translation of a UTF-8 byte to its kind (``~`` for a non-ASCII byte)."""
    return bytes(ord(kind(chr(b))) if b < 0x80 else ord("~") for b in range(256))


def _to_kinds(node: Node) -> Node:
    """``node`` with every character class replaced by the set of its members' kinds."""
    tag = node[0]
    if tag == "chars":
        members, ci, (ascii_part, non) = node[1], node[2], node[3]
        if members is not None:
            if any(c >= "\x80" for c in members):
                return ("chars", None, False, node[3])
            if ci:
                if members & _FOLDS_OUT:
                    return ("chars", None, False, node[3])
                members = members | frozenset(c.swapcase() for c in members)
        else:
            if non:
                return ("chars", None, False, node[3])
            members = ascii_part
        return ("chars", frozenset(kind(c) for c in members), False, node[3])
    if tag == "empty":
        return node
    if tag == "alt":
        return (tag, [_to_kinds(item) for item in node[1]])
    if tag == "cat":  # flattened, so a repetition's copied ends join their neighbours
        items: list[Node] = []
        for item in node[1]:
            done = _to_kinds(item)
            items += done[1] if done[0] == "cat" else [done]
        return ("cat", items)
    inner, lo, hi = _to_kinds(node[1]), node[2], node[3]
    if inner[0] == "chars" and lo >= 2:
        # x{lo,hi} is x x x{lo-4,hi-4} x x (fewer copies in front when lo < 4): the copies at either end join the exact strings of
        # the pattern around it, so `\w{3,9}[A-F]` requires one of `00A`, `0aA`, …, not one character
        b = min(2, lo)
        a = min(2, lo - b)
        middle = ("rep", inner, lo - a - b, None if hi is None else hi - a - b)
        return ("cat", [inner] * a + ([middle] if middle[3] != 0 else []) + [inner] * b)
    return (tag, inner, lo, hi)


class _KindAnalysis(_Analysis):
    """The literal analysis, with one more rule that pays over a kind alphabet: ``x{lo,hi}``
    requires ``x{k}`` for every ``k <= lo``, so its required literals may be the ``k``-th power
    of ``x``'s exact strings (the largest that stays within :data:`MAX_EXACT`): ``[0-9A-Z]{23}``
    requires one of ``000``, ``00A``, …, ``AAA``."""

    __slots__ = ()

    def _rep(self, node: Node, lo: int, hi: int | None) -> tuple[frozenset[str] | None, frozenset[str] | None]:
        exact, req = super()._rep(node, lo, hi)
        if exact is not None or lo < 2:
            return exact, req
        inner, _ = self.info(node)
        if inner is None or "" in inner:
            return exact, req
        power = inner
        for _ in range(lo - 1):
            grown = frozenset(a + b for a in power for b in inner)
            if len(grown) > MAX_EXACT:
                break
            power = grown
        if req is None or min(map(len, power)) > min(map(len, req)):
            return None, _minimal(power)
        return exact, req

    def best(self, candidates: list[frozenset[str]]) -> frozenset[str] | None:
        """Sets of trigrams or longer first, with the most literals that prose rarely has,
        then the longest shortest literal, then the fewest literals."""
        if not candidates:
            return None
        return max(candidates, key=lambda req: (min(map(len, req)) >= GRAM, rare_share(tuple(req)),
                                                min(map(len, req)), -len(req)))


def kind_key_of(ast: Node) -> tuple[str, ...] | None:
    """The kind trigrams to file a pattern under: every match's kind string contains one of
    them (each required kind literal contains one: chosen to cover them all, trigrams that
    prose rarely has first); None when the pattern has no required kind literal of 3 or more."""
    exact, req = _KindAnalysis(False).info(_to_kinds(ast))
    found = _req(exact, req)
    if not found or any(len(lit) < GRAM for lit in found):
        return None
    left = set(found)
    chosen: set[str] = set()
    while left:
        grams = {lit[i:i + GRAM] for lit in left for i in range(len(lit) - GRAM + 1)}
        best = max(sorted(grams), key=lambda g: (sum(g in lit for lit in left) * (4 if rare_share((g,)) else 1 if g.strip("aA ") == "" else 2)))
        chosen.add(best)
        left = {lit for lit in left if best not in lit}
    return tuple(sorted(chosen))


def prose_common(gram: str) -> bool:
    """Whether ordinary prose has the kind trigram ``gram`` all the time (letters, spaces,
    punctuation, and no upper-case letter after a letter)."""
    return not rare_share((gram,)) and set(gram) <= _PROSE


def rare_share(literals: tuple[str, ...]) -> float:
    """The share of ``literals`` holding a kind that ordinary prose rarely has there (a digit,
    ``_``, ``=``, ``/``, a control character, an upper-case letter after a letter, digit, ``-``
    or ``_``): 1.0 means a text of prose has none of them."""
    if not literals:
        return 0.0
    return sum(any(mark in lit for mark in _RARE_IN_PROSE) for lit in literals) / len(literals)
