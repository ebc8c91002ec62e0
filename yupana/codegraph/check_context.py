"""What every verify check resolves against: the buffer's facts, the old file, the crate's index.

:class:`CheckContext` holds one verified buffer's resolution context and the answers the
check kinds share: what the crate's index knows of a name, why an unresolved name may still
exist (then it is ``unchecked``, never a violation), whether a ``crate::`` path leads
somewhere, and how results are recorded (once each). The check kinds themselves live in
:mod:`~yupana.codegraph.check_identifiers`, :mod:`~yupana.codegraph.check_imports` and
:mod:`~yupana.codegraph.check_arity`; :mod:`~yupana.codegraph.checks` joins them.
"""

from __future__ import annotations

import os

from yupana.codegraph import extract, resolve

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from collections.abc import Iterable

TIER = "tree_sitter"  # what verify's results name as the tier that checked them


class VerifyResult:
    """The verdict. ``ok`` is True when there is no violation (``unchecked`` may still list gaps)."""

    __slots__ = ("violations", "unchecked", "tier", "notes", "complete", "unparseable")

    def __init__(self) -> None:
        self.violations: list[dict] = []  # {kind, symbol, line, message}
        self.unchecked: list[dict] = []  # {symbol, line, reason}
        self.tier = TIER
        self.notes: list[str] = []
        self.complete = True  # False: the crate index was not up to date, or the deadline cut a rule
        self.unparseable: int | None = None  # 1-based line of a parse error in the introduced region

    @property
    def ok(self) -> bool:
        """No violation (``unchecked`` may still list what could not be decided)."""
        return not self.violations

    def as_json(self) -> dict:
        """``{ok, tier, violations, unchecked}``, the ``yupana verify --json`` shape."""
        return {"ok": self.ok, "tier": self.tier, "violations": self.violations, "unchecked": self.unchecked}

    def __repr__(self) -> str:
        return f"VerifyResult(violations={self.violations!r}, unchecked={len(self.unchecked)})"


class Env:
    """Where names may come from besides the buffer: the crate, its index, the old file."""

    __slots__ = ("path", "rel", "crate", "ci", "old_info", "created", "windows", "file_syms", "self_types")

    def __init__(self, path: str, crate, ci=None, rel: str | None = None, old_info: dict | None = None,
                 created: frozenset = frozenset()) -> None:
        self.path = os.path.abspath(path)
        self.crate = crate  # codegraph.crate.Crate
        self.ci = ci  # CrateIndex or None
        self.rel = rel  # crate-relative path of the file
        self.old_info = old_info or {}
        self.created = created  # absolute paths the same tool call creates
        self.windows: list[tuple[int, int, str | None]] | None = None  # old-buffer spans parsed anew (None: all)
        self.file_syms: list[tuple] = []  # the index's symbols of the old file (outside the windows)
        self.self_types: list[tuple[int, int, str | None]] = []  # (new start, new end, impl type) of windows in an impl


IDENT, ARITY, IMPORT = "identifier-does-not-exist", "wrong-arity", "unresolved-import"
CRATE_HEADS = ("crate", "self", "super")  # path heads that stay inside this crate
_FLAGS = ("#include", "#macro_use", "#glob")


class CheckContext:
    """Resolution context for one buffer: the buffer's facts, the old file, the crate."""

    def __init__(self, env, facts, old: bytes | None) -> None:
        self.env = env
        self.facts = facts
        self.old = old
        info = env.old_info
        self.bound = facts.bound | facts.maybe | set(info.get("bound", ()))
        self.locals = facts.locals
        self.uses = list(facts.uses) + [tuple(u) for u in info.get("uses", ())]
        self.flags = facts.flags | info.get("flags", 0)
        crate = env.crate
        self.externs = set(crate.deps) | resolve.WELL_KNOWN_CRATES | set(facts.externs) | set(info.get("externs", ()))
        if crate.name:
            self.externs.add(crate.name)
        self._known: dict[str, set[str]] = {}
        self._asked: set[str] = set()
        self._seen_unchecked: set[tuple[str, str]] = set()
        self._old_flat: bytes | None = None

    def crate_kinds(self, names: "Iterable[str]") -> dict[str, set[str]]:
        """``{name: kinds}`` the crate's index knows (cached per checker)."""
        ci = self.env.ci
        ask = {n for n in names if n not in self._asked}
        if ci is not None and ask:
            ask |= set(_FLAGS) - self._asked
            self._known.update(ci.names_known(ask))
            self._asked |= ask
        return {n: self._known[n] for n in names if n in self._known}

    def crate_flag(self, flag: str) -> bool:
        """Whether some file of the crate carries this marker (``#include``, ``#glob``…)."""
        self.crate_kinds([flag])
        return flag in self._known

    def unknown_reason(self, role: str) -> str | None:
        """Why an unresolved name may still exist (then it is unchecked), or None."""
        ci = self.env.ci
        if ci is None:
            return "no symbol index for this crate"
        if not ci.complete:
            return "the crate's symbol index is still being built"
        if self.flags & extract.FLAG_INCLUDE or self.crate_flag("#include"):
            return "the crate includes code this index cannot see (include!)"
        if role == "macro":
            if self.flags & extract.FLAG_MACRO_USE or self.crate_flag("#macro_use"):
                return "macros of #[macro_use] extern crates are not listed"
            external = [p for p, b, _ in self.uses if b == "*" and p.split("::", 1)[0] not in CRATE_HEADS]
            if external:
                return f"may come from the glob import `{external[0]}::*`"
            return None
        if role == "crate-path":
            if self.crate_flag("#glob"):
                return "the crate re-exports glob imports of other crates; a path through them is not followed"
            return None
        globs = [p for p, b, _ in self.uses if b == "*"]
        external = [p for p in globs if p.split("::", 1)[0] not in CRATE_HEADS]
        if external:
            return f"may come from the glob import `{external[0]}::*`"
        if globs and self.crate_flag("#glob"):
            return f"may come through `{globs[0]}::*` from a glob import elsewhere in the crate"
        if role in ("head", "macro-head") and not self.env.crate.has_manifest:
            return "no Cargo.toml: this crate's dependencies are unknown"
        return None

    def unchecked(self, result: "VerifyResult", symbol: str, line: int, reason: str) -> None:
        """Record (once per symbol and reason) something that could not be decided."""
        key = (symbol, reason)
        if key not in self._seen_unchecked:
            self._seen_unchecked.add(key)
            result.unchecked.append({"symbol": symbol, "line": line, "reason": reason})

    def violation(self, result: "VerifyResult", kind: str, symbol: str, line: int, message: str) -> None:
        """Record a violation (once per kind, symbol and line)."""
        for v in result.violations:
            if v["kind"] == kind and v["symbol"] == symbol and v["line"] == line:
                return
        result.violations.append({"kind": kind, "symbol": symbol, "line": line, "message": message})

    def crate_path_missing(self, segs: list[str]) -> str | None:
        """The first segment after ``crate``/``self``/``super`` that this crate cannot have;
        None when every segment exists, or the path leaves what the index can follow (a
        name imported from another crate, an extern crate, a macro-made name)."""
        rest = [s for s in segs[1:] if s and s not in ("self", "super", "crate", "*")]
        for i, seg in enumerate(rest):
            if i == 0:
                if seg in self.externs:
                    return None
                if any(b == seg and p.split("::", 1)[0] not in CRATE_HEADS for p, b, _ in self.uses):
                    return None
                if seg in self.bound:
                    continue
            kinds = self.crate_kinds([seg]).get(seg)
            if not kinds:
                return seg
            if kinds & {"usex", "maybe"}:
                return None  # possibly another crate's item re-exported, or a macro's: not indexed
        return None


def segments(path: str) -> list[str]:
    """``crate::a::B::<T>::c`` → ``["crate", "a", "B", "c"]`` (generic arguments dropped)."""
    out, depth = [], 0
    for ch in path:
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth = max(depth - 1, 0)
        elif depth == 0 and not ch.isspace():
            out.append(ch)
    return [s for s in "".join(out).split("::") if s]
