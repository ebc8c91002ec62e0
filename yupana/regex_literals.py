"""The analysis behind :mod:`yupana.regex_prefilter`: parse RE2 syntax, find required literals.

A small, conservative parser of RE2 syntax builds a tiny AST; the analysis computes, for
each node, the finite set of strings it can match (when small) and a set of literals one
of which every match contains. Anything not modelled raises :class:`Unsupported` and the
caller gets no prefilter. No :mod:`re` (hooks may import this when they derive prefilters
themselves). See :mod:`yupana.regex_prefilter` for the guarantee and the case rules.
"""

from __future__ import annotations

MAX_EXACT = 64  # largest finite set of strings a sub-pattern may expand to
MAX_LEN = 256  # longest string kept in such a set (bounds the cold-path work)
MAX_CLASS = 16  # largest character class expanded into single-character literals
MAX_LITERALS = 64  # a prefilter with more alternatives than this is not worth keeping
MAX_WEAK = 4  # nor one of more single characters than this (a digit class passes nearly anything)
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


class Unsupported(Exception):
    """The pattern uses something this analysis does not model; no prefilter."""


# ── AST ─────────────────────────────────────────────────────────────────────────────────
# ("chars", frozenset[str] | None, ci)  one character from a set (None: unknown / too big)
# ("empty",)                            matches the empty string (anchors, \b, empty group)
# ("cat", [nodes]) ("alt", [nodes]) ("rep", node, lo, hi | None)


class _Parser:
    __slots__ = ("s", "i", "n", "ci", "any_ci", "depth")

    def __init__(self, pattern: str) -> None:
        self.s = pattern
        self.i = 0
        self.n = len(pattern)
        self.ci = False
        self.any_ci = False
        self.depth = 0

    def parse(self) -> tuple:
        node = self._alternation()
        if self.i != self.n:  # an unbalanced ')'
            raise Unsupported("unbalanced parenthesis")
        return node

    def _alternation(self) -> tuple:
        branches = [self._concat()]
        while self.i < self.n and self.s[self.i] == "|":
            self.i += 1
            branches.append(self._concat())
        return branches[0] if len(branches) == 1 else ("alt", branches)

    def _concat(self) -> tuple:
        items: list[tuple] = []
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
                atom = ("chars", None, self.ci)
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

    def _char(self, c: str) -> tuple:
        if self.ci:
            self.any_ci = True
        return ("chars", frozenset((c,)), self.ci)

    def _repeats(self, atom: tuple) -> tuple:
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

    def _group(self) -> tuple | None:
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

    def _quoted(self) -> list[tuple]:
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

    def _escape(self) -> tuple:
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
            return ("chars", None, self.ci)
        chars = self._escape_chars()
        if chars is None:
            return ("chars", None, self.ci)
        if len(chars) == 1:
            return self._char(next(iter(chars)))
        return self._set(chars, negated=False)

    def _escape_chars(self) -> frozenset | None:
        """Consume an escape that denotes characters; return them (None: too many / unknown)."""
        s = self.s
        c = s[self.i + 1]
        if c in _SIMPLE_ESCAPES:
            self.i += 2
            return frozenset(_SIMPLE_ESCAPES[c])
        if c in _PERL:
            self.i += 2
            return frozenset(_PERL[c])
        if c in "DSW":
            self.i += 2
            return None
        if c in "pP":
            self.i += 2
            if self.i < self.n and s[self.i] == "{":
                end = s.find("}", self.i)
                if end < 0:
                    raise Unsupported("unterminated \\p{")
                self.i = end + 1
            else:
                self.i += 1
            return None  # Unicode classes are large; never literals
        if c == "x":
            return frozenset((self._hex(),))
        if c in _DIGITS:
            raise Unsupported("octal escape")
        if c.isascii() and not c.isalnum():
            self.i += 2
            return frozenset((c,))
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

    def _class(self) -> tuple:
        s = self.s
        self.i += 1
        negated = s.startswith("^", self.i)
        if negated:
            self.i += 1
        chars: set[str] | None = set()
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
                if neg or chars is None:
                    chars = None
                else:
                    chars.update(members)
                continue
            lo = self._class_atom()
            if lo is not None and len(lo) == 1 and s.startswith("-", self.i) and not s.startswith("-]", self.i):
                self.i += 1
                hi = self._class_atom()
                if hi is None or len(hi) != 1:
                    raise Unsupported("bad range")
                a, b = ord(next(iter(lo))), ord(next(iter(hi)))
                if b < a:
                    raise Unsupported("bad range")
                if chars is not None:
                    if b - a > 4 * MAX_CLASS:
                        chars = None
                    else:
                        chars.update(chr(k) for k in range(a, b + 1))
                continue
            if lo is None or chars is None:
                chars = None
            else:
                chars.update(lo)
        return self._set(frozenset(chars) if chars is not None else None, negated)

    def _class_atom(self) -> frozenset | None:
        """One member of a class: a character, or a Perl/Unicode class (None: big/unknown)."""
        s = self.s
        c = s[self.i]
        if c != "\\":
            self.i += 1
            return frozenset((c,))
        if self.i + 1 >= self.n:
            raise Unsupported("trailing backslash")
        if s[self.i + 1] in "QEAbBzC":
            raise Unsupported("escape not allowed in a class")
        return self._escape_chars()

    def _set(self, chars: frozenset | None, negated: bool) -> tuple:
        if negated or chars is None:
            return ("chars", None, self.ci)
        # RE2 rewrites a two-character class like [Kk] into a case-folded literal, which
        # then matches the whole fold orbit (KELVIN SIGN) once an alternation merges it into
        # a class: ``a|[kK]`` matches "\u212a". Such a class is case-insensitive here too.
        ci = self.ci or (len(chars) == 2 and any(c.isascii() and c.isalpha() and c.swapcase() in chars
                                                  for c in chars))
        if ci:
            self.any_ci = True
        return ("chars", chars, ci)


# ── analysis ────────────────────────────────────────────────────────────────────────────
# For each node: (exact, req). ``exact`` is the finite set of strings the node can match
# (None when unknown or larger than MAX_EXACT); ``req`` is a set of literals one of which
# every match of the node contains (None: no such guarantee). When ``exact`` is known,
# ``req`` is left to :func:`_req` to derive only if a caller needs it (most never do).

_EMPTY = frozenset(("",))


class _Analysis:
    __slots__ = ("fold",)

    def __init__(self, fold: bool) -> None:
        self.fold = fold

    def info(self, node: tuple) -> tuple[frozenset | None, frozenset | None]:
        kind = node[0]
        if kind == "chars":
            return self._chars(node[1], node[2]), None
        if kind == "empty":
            return _EMPTY, None
        if kind == "cat":
            return self._cat(node[1])
        if kind == "alt":
            return self._alt(node[1])
        return self._rep(node[1], node[2], node[3])

    def _chars(self, chars: frozenset | None, ci: bool) -> frozenset | None:
        if chars is None or len(chars) > MAX_CLASS:
            return None
        if ci and any(not c.isascii() for c in chars):
            return None  # RE2's fold orbit of a non-ASCII character may not match casefold
        if self.fold:
            return frozenset(c.casefold() for c in chars)
        return chars

    def _cat(self, items: list[tuple]) -> tuple[frozenset | None, frozenset | None]:
        candidates: list[frozenset] = []
        run: frozenset = _EMPTY
        run_len = 0
        whole_exact = True
        for item in items:
            exact, req = self.info(item)
            if exact is None:
                whole_exact = False
                _add(candidates, _req_of(run))
                run, run_len = _EMPTY, 0
                _add(candidates, req)
                continue
            if len(exact) == 1 and "" in exact:
                continue  # an anchor or \b: matches nothing, keeps the run going
            longest = _longest(exact)
            if len(run) * len(exact) > MAX_EXACT or run_len + longest > MAX_LEN:
                whole_exact = False
                _add(candidates, _req_of(run))
                run, run_len = exact, longest
                continue
            run = frozenset([a + b for a in run for b in exact]) if len(run) > 1 or len(exact) > 1 else \
                frozenset((next(iter(run)) + next(iter(exact)),))
            run_len += longest
        if whole_exact:
            return run, None
        _add(candidates, _req_of(run))
        return None, _best(candidates)

    def _alt(self, branches: list[tuple]) -> tuple[frozenset | None, frozenset | None]:
        exact: set | None = set()
        req: set | None = set()
        for branch in branches:
            e, r = self.info(branch)
            if exact is not None:
                if e is None or len(exact) + len(e) > MAX_EXACT:
                    exact = None
                else:
                    exact |= e
            if req is not None:
                r = _req(e, r)
                req = None if r is None else req | r
        if exact is not None:
            return frozenset(exact), None
        return None, (_minimal(req) if req is not None else None)

    def _rep(self, node: tuple, lo: int, hi: int | None) -> tuple[frozenset | None, frozenset | None]:
        exact, req = self.info(node)
        if exact is not None and hi is not None:
            total: set = set()
            power = _EMPTY
            longest = _longest(exact)
            for k in range(hi + 1):
                if k >= lo:
                    total |= power
                    if len(total) > MAX_EXACT:
                        break
                if k == hi:
                    return frozenset(total), None
                if (k + 1) * longest > MAX_LEN:
                    break
                power = frozenset([a + b for a in power for b in exact])
                if len(power) > MAX_EXACT:
                    break
        return None, (_req(exact, req) if lo >= 1 else None)


def _longest(strings: frozenset) -> int:
    return max(map(len, strings)) if strings else 0


def _req(exact: frozenset | None, req: frozenset | None) -> frozenset | None:
    """A node's required literals, whether given or derived from its exact strings."""
    return _req_of(exact) if exact is not None else req


def _req_of(exact: frozenset | None) -> frozenset | None:
    if exact is None or "" in exact:
        return None
    return _minimal(exact)


def _minimal(literals: set | frozenset) -> frozenset:
    """Drop literals that contain another one: when the longer occurs, so does the shorter."""
    if len(literals) <= 1:
        return frozenset(literals)
    ordered = sorted(literals, key=len)
    kept: list[str] = []
    for lit in ordered:
        if not any(k in lit for k in kept):
            kept.append(lit)
    return frozenset(kept)


def _add(candidates: list[frozenset], req: frozenset | None) -> None:
    if req:
        candidates.append(req)


def _score(req: frozenset) -> tuple[int, int]:
    return (min(len(x) for x in req), -len(req))


def _best(candidates: list[frozenset]) -> frozenset | None:
    return max(candidates, key=_score) if candidates else None


def required_literals(pattern: str) -> tuple[frozenset | None, bool]:
    """(literals one of which every match of ``pattern`` contains, or None; whether they are
    case-folded). Raises :class:`Unsupported` for syntax this analysis does not model."""
    parser = _Parser(pattern)
    ast = parser.parse()
    exact, req = _Analysis(parser.any_ci).info(ast)
    return _req(exact, req), parser.any_ci
