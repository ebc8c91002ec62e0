"""The ``identifier-does-not-exist`` check: names an edit uses that resolve to nothing.

A name in reference position must be bound in the file, known to the crate's index, a
primitive, prelude name, std macro or dependency; a ``crate::``/``self::``/``super::`` path
must name segments the crate has. Anything the index cannot see goes to ``unchecked``.
"""

from __future__ import annotations

from yupana.codegraph import resolve
from yupana.codegraph.check_context import IDENT, CheckContext, segments

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from yupana.codegraph.candidates import Ref
    from yupana.codegraph.check_context import VerifyResult


class IdentifierChecks(CheckContext):
    """The identifier rule of :class:`~yupana.codegraph.checks.Checker`."""

    def check_refs(self, refs: list[Ref], result: "VerifyResult") -> None:
        """Names the edit uses: bound here, known, in the crate — else unchecked or a violation."""
        pending: dict[tuple[str, str], Ref] = {}
        for r in refs:
            name = r.name
            if r.role == "crate-path":
                self._crate_ref(r, result)
                continue
            if r.role == "macro":
                if name in resolve.STD_MACROS or name in self.bound:
                    continue
            elif resolve.always_known(name) or name in self.bound or name in self.externs:
                continue
            pending.setdefault((name, r.role), r)
        known = self.crate_kinds({n for n, _ in pending})
        scoped = not any(b == "*" for _, b, _ in self.uses)
        for (name, role), r in pending.items():
            kinds = known.get(name, set())
            if role == "macro":
                if kinds & {"macro", "maybe", "use", "usex"}:
                    continue
            elif scoped and role in ("value", "head"):
                # No glob import: a name must be bound in this file (2018 paths), whatever
                # other modules of the crate define — unless a macro may make it.
                if "maybe" in kinds:
                    continue
            elif kinds:
                continue
            reason = self.unknown_reason(role)
            if reason:
                self.unchecked(result, f"{name}!" if role == "macro" else name, r.line, reason)
            elif not resolve.word_in(self.old, name):
                message = _ident_message(name, role, r.path)
                if kinds - {"flag"}:
                    message = f"`{name}` is defined elsewhere in this crate but not imported into this file"
                self.violation(result, IDENT, r.path or name, r.line, message)

    def _crate_ref(self, r: "Ref", result: "VerifyResult") -> None:
        missing = self.crate_path_missing(segments(r.path))
        if missing is None:
            return
        reason = self.unknown_reason("crate-path")
        if reason:
            self.unchecked(result, r.path, r.line, reason)
        elif not resolve.word_in(self.old, missing):
            self.violation(result, IDENT, r.path, r.line, f"`{r.path}`: this crate defines nothing named `{missing}`")


def _ident_message(name: str, role: str, path: str) -> str:
    if role == "macro":
        return f"macro `{name}!` is not defined in this crate, imported, or a std macro"
    if role == "crate-path":
        return f"`{path}`: this crate defines nothing named `{name}`"
    if role in ("head", "macro-head"):
        return f"`{path}`: `{name}` is neither a dependency in Cargo.toml nor a module, type or import in scope"
    return f"`{name}` is not defined in this file, this crate or its dependencies"
