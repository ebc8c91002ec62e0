"""The analysis behind :mod:`yupana.regex.prefilter`: the literals every match must contain.

:mod:`yupana.regex.syntax` parses the RE2 pattern into a tiny AST; this module computes,
for each node, the finite set of strings it can match (when small) and a set of literals
one of which every match contains. Anything not modelled raises :class:`Unsupported` and
the caller gets no prefilter. No :mod:`re` (hooks may import this when they derive
prefilters themselves). See :mod:`yupana.regex.prefilter` for the guarantee and the case rules.
"""

from __future__ import annotations

from yupana.regex.syntax import MAX_CLASS, Parser
from yupana.regex.syntax import MAX_DEPTH as MAX_DEPTH, Unsupported as Unsupported  # part of this API

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from yupana.regex.syntax import Node

MAX_EXACT = 64  # largest finite set of strings a sub-pattern may expand to
MAX_LEN = 256  # longest string kept in such a set (bounds the cold-path work)
MAX_LITERALS = 64  # a prefilter with more alternatives than this is not worth keeping
MAX_WEAK = 4  # nor one of more single characters than this (a digit class passes nearly anything)


# For each node: (exact, req). ``exact`` is the finite set of strings the node can match
# (None when unknown or larger than MAX_EXACT); ``req`` is a set of literals one of which
# every match of the node contains (None: no such guarantee). When ``exact`` is known,
# ``req`` is left to :func:`_req` to derive only if a caller needs it (most never do).

_EMPTY = frozenset(("",))


class _Analysis:
    """Walks the AST bottom-up, giving each node its (exact strings, required literals)."""

    __slots__ = ("fold",)

    def __init__(self, fold: bool) -> None:
        self.fold = fold

    def info(self, node: Node) -> tuple[frozenset[str] | None, frozenset[str] | None]:
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

    def _chars(self, chars: frozenset[str] | None, ci: bool) -> frozenset[str] | None:
        if chars is None or len(chars) > MAX_CLASS:
            return None
        if ci and any(not c.isascii() for c in chars):
            return None  # RE2's fold orbit of a non-ASCII character may not match casefold
        if self.fold:
            return frozenset(c.casefold() for c in chars)
        return chars

    def _cat(self, items: list[Node]) -> tuple[frozenset[str] | None, frozenset[str] | None]:
        candidates: list[frozenset[str]] = []
        run: frozenset[str] = _EMPTY
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
        return None, self.best(candidates)

    def best(self, candidates: list[frozenset[str]]) -> frozenset[str] | None:
        """Of the literal sets one of which a concatenation requires, the one to keep."""
        return _best(candidates)

    def _alt(self, branches: list[Node]) -> tuple[frozenset[str] | None, frozenset[str] | None]:
        exact: set[str] | None = set()
        req: set[str] | None = set()
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

    def _rep(self, node: Node, lo: int, hi: int | None) -> tuple[frozenset[str] | None, frozenset[str] | None]:
        exact, req = self.info(node)
        if exact is not None and hi is not None:
            total: set[str] = set()
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


def _longest(strings: frozenset[str]) -> int:
    return max(map(len, strings)) if strings else 0


def _req(exact: frozenset[str] | None, req: frozenset[str] | None) -> frozenset[str] | None:
    """A node's required literals, whether given or derived from its exact strings."""
    return _req_of(exact) if exact is not None else req


def _req_of(exact: frozenset[str] | None) -> frozenset[str] | None:
    if exact is None or "" in exact:
        return None
    return _minimal(exact)


def _minimal(literals: set[str] | frozenset[str]) -> frozenset[str]:
    """Drop literals that contain another one: when the longer occurs, so does the shorter."""
    if len(literals) <= 1:
        return frozenset(literals)
    ordered = sorted(literals, key=len)
    kept: list[str] = []
    for lit in ordered:
        if not any(k in lit for k in kept):
            kept.append(lit)
    return frozenset(kept)


def _add(candidates: list[frozenset[str]], req: frozenset[str] | None) -> None:
    if req:
        candidates.append(req)


def _score(req: frozenset[str]) -> tuple[int, int]:
    return (min(len(x) for x in req), -len(req))


def _best(candidates: list[frozenset[str]]) -> frozenset[str] | None:
    return max(candidates, key=_score) if candidates else None


def required_literals(pattern: str) -> tuple[frozenset[str] | None, bool]:
    """(literals one of which every match of ``pattern`` contains, or None; whether they are
    case-folded). Raises :class:`Unsupported` for syntax this analysis does not model."""
    parser = Parser(pattern)
    return required_literals_of(parser.parse(), parser.any_ci), parser.any_ci


def required_literals_of(ast: Node, any_ci: bool) -> frozenset[str] | None:
    """:func:`required_literals` of an already parsed pattern."""
    exact, req = _Analysis(any_ci).info(ast)
    return _req(exact, req)
