"""RE2 syntax, parsed into the tiny AST that :mod:`yupana.regex.literals` analyses.

A small, conservative parser: it models literals, classes (Perl, POSIX, ranges, escapes),
groups and flags (only ``i`` changes which strings match), alternation, concatenation and
repetition, and raises :class:`Unsupported` for anything else, so the caller gets no
prefilter rather than a wrong one. Standard library only, no :mod:`re` (hooks may import it
when they derive prefilters themselves).

The AST (plain tuples, cheap to build and to walk)::

    ("chars", frozenset[str] | None, ci, alphabet)  one character from a set (None: unknown /
                                          too big); ``alphabet`` over-approximates that set as
                                          (ASCII members, whether any non-ASCII character is one)
    ("empty",)                            matches the empty string (anchors, \\b, empty group)
    ("cat", [nodes]) ("alt", [nodes]) ("rep", node, lo, hi | None)
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from typing import Any

    Node = tuple[Any, ...]  # one AST node (the module docstring's shapes)
    Alphabet = tuple[frozenset[str], bool]  # (ASCII members, non-ASCII possible)

MAX_CLASS = 16  # largest character class expanded into single-character literals
MAX_DEPTH = 200  # nesting of groups beyond which we give up (None)

_DIGITS = "0123456789"
_UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_LOWER = "abcdefghijklmnopqrstuvwxyz"
_PUNCT = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"
_POSIX = {
    "alnum": _DIGITS + _UPPER + _LOWER,
    "alpha": _UPPER + _LOWER,
    "ascii": "".join(chr(i) for i in range(128)),
    "blank": " \t",
    "cntrl": "".join(chr(i) for i in range(32)) + "\x7f",
    "digit": _DIGITS,
    "graph": "".join(chr(i) for i in range(33, 127)),
    "lower": _LOWER,
    "print": "".join(chr(i) for i in range(32, 127)),
    "punct": _PUNCT,
    "space": " \t\n\v\f\r",
    "upper": _UPPER,
    "word": _DIGITS + _UPPER + _LOWER + "_",
    "xdigit": _DIGITS + "ABCDEFabcdef",
}
_PERL = {"d": _DIGITS, "s": " \t\n\f\r", "w": _DIGITS + _UPPER + _LOWER + "_"}
_SIMPLE_ESCAPES = {"a": "\a", "f": "\f", "t": "\t", "n": "\n", "r": "\r", "v": "\v"}
_ZERO_WIDTH_ESCAPES = "AbBz"
_HEX = "0123456789abcdefABCDEF"
_ALL_ASCII = frozenset(chr(i) for i in range(128))
_LETTERS = frozenset(_UPPER + _LOWER)
ANY: Alphabet = (_ALL_ASCII, True)  # the alphabet of ``.``, ``\C``, ``\pL``: every character


def fold_alphabet(alphabet: Alphabet, ci: bool) -> Alphabet:
    """``alphabet`` as a case-insensitive match sees it: both cases of every ASCII letter, and
    non-ASCII possible whenever a letter is (RE2's fold orbits: K and KELVIN SIGN, S and LONG
    S, …); a non-ASCII member may fold to any ASCII letter. Over-approximate, never under."""
    ascii_part, non = alphabet
    if not ci:
        return alphabet
    letters = ascii_part & _LETTERS
    if non:
        return ascii_part | _LETTERS, True
    if letters:
        return ascii_part | frozenset(c.swapcase() for c in letters), True
    return alphabet


_ONE: dict[str, Alphabet] = {}  # the alphabet of each single character seen


def _alphabet_of(chars: frozenset[str]) -> Alphabet:
    if len(chars) == 1:
        c = next(iter(chars))
        found = _ONE.get(c)
        if found is None:
            found = _ONE[c] = (chars, False) if c < "\x80" else (frozenset(), True)
        return found
    return frozenset(c for c in chars if c < "\x80"), any(c >= "\x80" for c in chars)


class Unsupported(Exception):
    """The pattern uses something this analysis does not model; no prefilter."""


class Parser:
    """One pattern's parser: :meth:`parse` returns the AST; ``any_ci`` says whether any part
    of it is case-insensitive (then the analysis folds case)."""

    __slots__ = ("s", "i", "n", "ci", "any_ci", "depth")

    def __init__(self, pattern: str) -> None:
        self.s = pattern
        self.i = 0
        self.n = len(pattern)
        self.ci = False
        self.any_ci = False
        self.depth = 0

    def parse(self) -> Node:
        """The AST of the whole pattern; :class:`Unsupported` for what is not modelled."""
        node = self._alternation()
        if self.i != self.n:  # an unbalanced ')'
            raise Unsupported("unbalanced parenthesis")
        return node

    def _alternation(self) -> Node:
        branches = [self._concat()]
        while self.i < self.n and self.s[self.i] == "|":
            self.i += 1
            branches.append(self._concat())
        return branches[0] if len(branches) == 1 else ("alt", branches)

    def _concat(self) -> Node:
        items: list[Node] = []
        s = self.s
        while self.i < self.n:
            c = s[self.i]
            if c == "|" or c == ")":
                break
            if c == "(":
                atom = self._group()
                if atom is None:  # a bare flag group like (?i): changes flags, matches nothing
                    continue
            elif c == "[":
                atom = self._class()
            elif c == "\\":
                if self.s.startswith("\\Q", self.i):
                    items.extend(self._quoted())
                    continue
                atom = self._escape()
            elif c == ".":
                self.i += 1
                atom = ("chars", None, self.ci, ANY)
            elif c == "^" or c == "$":
                self.i += 1
                atom = ("empty",)
            elif c in "*+?":
                raise Unsupported("repetition without an argument")
            else:
                self.i += 1
                atom = self._char(c)
            items.append(self._repeats(atom))
        if not items:
            return ("empty",)
        return items[0] if len(items) == 1 else ("cat", items)

    def _char(self, c: str) -> Node:
        if self.ci:
            self.any_ci = True
        chars = frozenset((c,))
        return ("chars", chars, self.ci, fold_alphabet(_alphabet_of(chars), self.ci))

    def _repeats(self, atom: Node) -> Node:
        s = self.s
        while self.i < self.n:
            c = s[self.i]
            if c in "*+?":
                self.i += 1
                lo, hi = {"*": (0, None), "+": (1, None), "?": (0, 1)}[c]
            elif c == "{":
                parsed = self._braces()
                if parsed is None:  # RE2 reads a '{' that is not a repetition as a literal
                    break
                lo, hi = parsed
            else:
                break
            if self.i < self.n and s[self.i] == "?":  # non-greedy: same language
                self.i += 1
            atom = ("rep", atom, lo, hi)
        return atom

    def _braces(self) -> tuple[int, int | None] | None:
        s, j = self.s, self.i + 1
        start = j
        while j < self.n and s[j] in _DIGITS:
            j += 1
        if j == start or j >= self.n:
            return None
        lo = int(s[start:j])
        hi: int | None = lo
        if s[j] == ",":
            j += 1
            start = j
            while j < self.n and s[j] in _DIGITS:
                j += 1
            hi = int(s[start:j]) if j > start else None
        if j >= self.n or s[j] != "}":
            return None
        if lo > 1000 or (hi is not None and (hi > 1000 or hi < lo)):
            raise Unsupported("repetition size")
        self.i = j + 1
        return lo, hi

    def _group(self) -> Node | None:
        s = self.s
        self.i += 1
        saved_ci = self.ci
        if s.startswith("?", self.i):
            self.i += 1
            if s.startswith("P<", self.i) or s.startswith("<", self.i):
                end = s.find(">", self.i)
                if end < 0:
                    raise Unsupported("unterminated group name")
                self.i = end + 1
            else:
                ci, closed = self._flags()
                if closed:  # (?flags) — applies to the rest of the enclosing group
                    self.ci = ci
                    if ci:
                        self.any_ci = True
                    return None
                self.ci = ci
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise Unsupported("nesting too deep")
        node = self._alternation()
        self.depth -= 1
        if self.i >= self.n or s[self.i] != ")":
            raise Unsupported("missing )")
        self.i += 1
        self.ci = saved_ci
        return node

    def _flags(self) -> tuple[bool, bool]:
        """Parse ``flags)`` or ``flags:`` after ``(?``; return (case-insensitive, closed)."""
        s = self.s
        ci = self.ci
        negate = False
        while self.i < self.n:
            c = s[self.i]
            self.i += 1
            if c == ")" or c == ":":
                return ci, c == ")"
            if c == "-":
                if negate:
                    raise Unsupported("double negation in flags")
                negate = True
            elif c == "i":
                ci = not negate
            elif c in "msU":
                pass  # do not change which strings can match
            else:
                raise Unsupported(f"flag {c!r}")
        raise Unsupported("unterminated flags")

    def _quoted(self) -> list[Node]:
        """``\\Q…\\E``: literal characters (to the end of the pattern when \\E is missing)."""
        start = self.i + 2
        end = self.s.find("\\E", start)
        if end < 0:
            end = self.n
        self.i = min(self.n, end + 2)
        out = [self._char(c) for c in self.s[start:end]]
        if out:  # a repetition after \E applies to the last quoted character only
            out[-1] = self._repeats(out[-1])
        return out

    def _escape(self) -> Node:
        """An escape outside a class: returns an AST node."""
        s = self.s
        if self.i + 1 >= self.n:
            raise Unsupported("trailing backslash")
        c = s[self.i + 1]
        if c in _ZERO_WIDTH_ESCAPES:
            self.i += 2
            return ("empty",)
        if c == "C":
            self.i += 2
            return ("chars", None, self.ci, ANY)
        chars, alphabet = self._escape_chars()
        if chars is None:
            return ("chars", None, self.ci, fold_alphabet(alphabet, self.ci))
        if len(chars) == 1:
            return self._char(next(iter(chars)))
        return self._set(chars, negated=False, alphabet=alphabet)

    def _escape_chars(self) -> tuple[frozenset[str] | None, Alphabet]:
        """Consume an escape that denotes characters; return them (None: too many / unknown)
        and their alphabet (ASCII members, non-ASCII possible)."""
        s = self.s
        c = s[self.i + 1]
        if c in _SIMPLE_ESCAPES:
            self.i += 2
            chars = frozenset(_SIMPLE_ESCAPES[c])
            return chars, _alphabet_of(chars)
        if c in _PERL:
            self.i += 2
            chars = frozenset(_PERL[c])
            return chars, _alphabet_of(chars)
        if c in "DSW":
            self.i += 2
            return None, (_ALL_ASCII - frozenset(_PERL[c.lower()]), True)
        if c in "pP":
            self.i += 2
            if self.i < self.n and s[self.i] == "{":
                end = s.find("}", self.i)
                if end < 0:
                    raise Unsupported("unterminated \\p{")
                self.i = end + 1
            else:
                self.i += 1
            return None, ANY  # Unicode classes are large; never literals
        if c == "x":
            chars = frozenset((self._hex(),))
            return chars, _alphabet_of(chars)
        if c in _DIGITS:
            raise Unsupported("octal escape")
        if c.isascii() and not c.isalnum():
            self.i += 2
            chars = frozenset((c,))
            return chars, _alphabet_of(chars)
        raise Unsupported(f"escape \\{c}")

    def _hex(self) -> str:
        s = self.s
        j = self.i + 2
        if j < self.n and s[j] == "{":
            end = s.find("}", j)
            digits = s[j + 1 : end] if end > 0 else ""
            if not digits or any(d not in _HEX for d in digits) or len(digits) > 8:
                raise Unsupported("bad \\x{…}")
            self.i = end + 1
        else:
            digits = s[j : j + 2]
            if len(digits) != 2 or any(d not in _HEX for d in digits):
                raise Unsupported("bad \\x")
            self.i = j + 2
        code = int(digits, 16)
        if code > 0x10FFFF:
            raise Unsupported("code point out of range")
        return chr(code)

    def _class(self) -> Node:
        s = self.s
        self.i += 1
        negated = s.startswith("^", self.i)
        if negated:
            self.i += 1
        chars: set[str] | None = set()
        ascii_part: set[str] = set()  # the alphabet, tracked beside ``chars`` (which may give up)
        non = False  # some non-ASCII character is a member
        all_non = False  # every non-ASCII character is (a range from <= U+0080 to U+10FFFF)
        first = True
        while True:
            if self.i >= self.n:
                raise Unsupported("missing ]")
            c = s[self.i]
            if c == "]" and not first:
                self.i += 1
                break
            first = False
            if c == "[" and s.startswith("[:", self.i):
                end = s.find(":]", self.i + 2)
                name = s[self.i + 2 : end] if end > 0 else ""
                neg = name.startswith("^")
                members = _POSIX.get(name[1:] if neg else name)
                if members is None:
                    raise Unsupported("unknown POSIX class")
                self.i = end + 2
                if neg:
                    ascii_part |= _ALL_ASCII - frozenset(members)
                    non = True
                else:
                    ascii_part.update(members)
                if neg or chars is None:
                    chars = None
                else:
                    chars.update(members)
                continue
            lo, lo_alphabet = self._class_atom()
            if lo is not None and len(lo) == 1 and s.startswith("-", self.i) and not s.startswith("-]", self.i):
                self.i += 1
                hi, _ = self._class_atom()
                if hi is None or len(hi) != 1:
                    raise Unsupported("bad range")
                a, b = ord(next(iter(lo))), ord(next(iter(hi)))
                if b < a:
                    raise Unsupported("bad range")
                ascii_part.update(chr(k) for k in range(a, min(b, 127) + 1))
                non = non or b >= 128
                all_non = all_non or (a <= 128 and b >= 0x10FFFF)
                if chars is not None:
                    if b - a > 4 * MAX_CLASS:
                        chars = None
                    else:
                        chars.update(chr(k) for k in range(a, b + 1))
                continue
            ascii_part |= lo_alphabet[0]
            non = non or lo_alphabet[1]
            if lo is None or chars is None:
                chars = None
            else:
                chars.update(lo)
        alphabet = (frozenset(_ALL_ASCII - ascii_part), not all_non) if negated else (frozenset(ascii_part), non)
        return self._set(frozenset(chars) if chars is not None else None, negated, alphabet)

    def _class_atom(self) -> tuple[frozenset[str] | None, Alphabet]:
        """One member of a class: a character, or a Perl/Unicode class (None: big/unknown), with
        its alphabet."""
        s = self.s
        c = s[self.i]
        if c != "\\":
            self.i += 1
            chars = frozenset((c,))
            return chars, _alphabet_of(chars)
        if self.i + 1 >= self.n:
            raise Unsupported("trailing backslash")
        if s[self.i + 1] in "QEAbBzC":
            raise Unsupported("escape not allowed in a class")
        return self._escape_chars()

    def _set(self, chars: frozenset[str] | None, negated: bool, alphabet: Alphabet) -> Node:
        if negated or chars is None:
            return ("chars", None, self.ci, fold_alphabet(alphabet, self.ci))
        # RE2 rewrites a two-character class like [Kk] into a case-folded literal, which
        # then matches the whole fold orbit (KELVIN SIGN) once an alternation merges it into
        # a class: ``a|[kK]`` matches "\u212a". Such a class is case-insensitive here too.
        ci = self.ci or (len(chars) == 2 and any(c.isascii() and c.isalpha() and c.swapcase() in chars
                                                  for c in chars))
        if ci:
            self.any_ci = True
        return ("chars", chars, ci, fold_alphabet(alphabet, ci))
