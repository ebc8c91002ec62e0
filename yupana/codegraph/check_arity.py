"""The ``wrong-arity`` check: calls an edit introduces to a function the index knows exactly once.

A free function of this file or imported from this crate, or ``Type::f`` / ``Self::f``
with one definition, called with a different number of arguments (a method through
``Type::m`` counts its receiver). Silence whenever the definition is not unique or known.
"""

from __future__ import annotations

from yupana.codegraph import extract, window
from yupana.codegraph.check_context import ARITY, CRATE_HEADS, CheckContext
from yupana.codegraph.extract import ARITY as A_ARITY
from yupana.codegraph.extract import CONTAINER, KIND, LINE, NAME, text

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from tree_sitter import Node
    from yupana.codegraph.check_context import VerifyResult

_TYPE_KINDS = ("struct", "enum", "union", "trait", "type")


class ArityChecks(CheckContext):
    """The arity rule of :class:`~yupana.codegraph.checks.Checker`."""

    def check_calls(self, nodes: list, result: "VerifyResult") -> None:
        """Calls the edit introduces or changes: arity against a definition known exactly once."""
        for call in nodes:
            fn = call.child_by_field_name("function")
            if fn is not None and fn.type == "generic_function":
                fn = fn.child_by_field_name("function")
            args = call.child_by_field_name("arguments")
            if fn is None or args is None or args.has_error:
                continue
            given = sum(1 for c in args.named_children if c.type not in ("line_comment", "block_comment", "attribute_item"))
            if fn.type == "identifier":
                target = self._free_fn(text(fn))
            elif fn.type == "scoped_identifier":
                target = self._assoc_fn(fn, call)
            else:
                continue
            if target is None or target[1] == given or self._call_in_old(call):
                continue
            symbol, expected, where = target
            self.violation(result, ARITY, symbol, call.start_point[0] + 1,
                            f"`{symbol}` takes {expected} argument(s) but is called with {given} (defined at {where})")

    def own_defs(self, name: str) -> list:
        """This file's definitions named ``name`` as the buffer now has them: those parsed
        (the windows, or the whole buffer) and the index's for the rest of the file."""
        own = [s for s in self.facts.syms if s[NAME] == name]
        spans = self.env.windows
        if spans is not None:
            for s in self.env.file_syms:  # (idx, name, kind, container, trait, parent, start, end, line, end_line, arity)
                if s[1] == name and window.outside(spans, s[6], s[7]):
                    own.append(list(s[1:]))
        return own

    def _free_fn(self, name: str) -> tuple[str, int, str] | None:
        if name in self.locals or name in self.facts.maybe or name in self.facts.macro_idents:
            return None
        own = self.own_defs(name)
        if own:
            s = own[0]
            if len(own) == 1 and s[KIND] == "fn" and s[CONTAINER] is None and s[A_ARITY] >= 0:
                return name, s[A_ARITY], f"line {s[LINE]}"
            return None
        imports = {p for p, b, _ in self.uses if b == name}
        if len(imports) != 1:
            return None
        path = imports.pop()
        if path.split("::", 1)[0] not in CRATE_HEADS:
            return None
        real = path.rsplit("::", 1)[-1]
        rows = self._crate_defs(real)
        if rows is None:
            return None
        rows = [r for r in rows if r[3] == "fn" and r[4] is None]
        if len(rows) != 1 or rows[0][6] < 0:
            return None
        return real, rows[0][6], f"{rows[0][7]}:{rows[0][8]}"

    def _assoc_fn(self, fn: "Node", call: "Node") -> tuple[str, int, str] | None:
        path = fn.child_by_field_name("path")
        name_node = fn.child_by_field_name("name")
        if path is None or name_node is None:
            return None
        name = text(name_node)
        qual = extract.qualifier(path)
        head = _head_text(path)
        if head in CRATE_HEADS and (qual in CRATE_HEADS or qual[:1].islower()):
            rows = self._crate_defs(name)
            if rows is None or name in self.locals or "usex" in self.crate_kinds([name]).get(name, ()):
                return None  # (a name also imported from elsewhere may be a re-export of another crate's)
            rows = [r for r in rows if r[3] == "fn" and r[4] is None]
            if len(rows) != 1 or rows[0][6] < 0:
                return None
            return f"{text(fn)}", rows[0][6], f"{rows[0][7]}:{rows[0][8]}"
        if path.type not in ("identifier", "type_identifier", "generic_type") and head not in CRATE_HEADS:
            return None  # `std::io::Error::new`: a type reached through another crate's path
        if qual == "Self":
            qual = _enclosing_impl_type(call) or self._window_self(call.start_byte) or ""
        if (not qual or not qual[:1].isupper() or qual in self.locals or name in self.facts.maybe
                or name in self.facts.macro_idents):
            return None
        for p, b, _ in self.uses:
            if b == qual and p.split("::", 1)[0] not in CRATE_HEADS:
                return None  # a type imported from elsewhere (or a re-export we cannot follow)
        types = self._crate_defs(qual)
        fns = self._crate_defs(name)
        if types is None or fns is None:
            return None
        if len([r for r in types if r[3] in _TYPE_KINDS]) != 1:
            return None
        found = [r for r in fns if r[4] == qual and r[3] in ("fn", "method")]
        if len(found) != 1 or found[0][6] < 0:
            return None
        r = found[0]
        expected = r[6] + (1 if r[3] == "method" else 0)
        return f"{qual}::{name}", expected, f"{r[7]}:{r[8]}"

    def _window_self(self, pos: int) -> str | None:
        """``Self`` of a call in a window cut out of an impl (the impl header was not parsed)."""
        for s, e, self_type in self.env.self_types:
            if s <= pos < e:
                return self_type
        return None

    def _crate_defs(self, name: str) -> list[tuple] | None:
        """Definitions named ``name``: the crate's (this file's as the buffer now has them).
        None when the crate's answer cannot be complete (no index, or a macro may define it)."""
        ci = self.env.ci
        own = [(0, i, s[NAME], s[KIND], s[CONTAINER], s[3], s[A_ARITY], self.env.rel or "", s[LINE])
               for i, s in enumerate(self.own_defs(name))]
        if ci is None or not ci.complete:
            return None
        if "maybe" in self.crate_kinds([name]).get(name, ()):
            return None
        rows = [r for r in ci.symbols_named([name]) if r[7] != self.env.rel]
        return rows + own

    def _call_in_old(self, call: "Node") -> bool:
        if not self.old:
            return False
        flat = self._old_flat
        if flat is None:
            flat = self._old_flat = b"".join(self.old.split())
        return b"".join((call.text or b"").split()) in flat


def _head_text(path: "Node | None") -> str:
    while path is not None and path.type in ("scoped_identifier", "scoped_type_identifier"):
        path = path.child_by_field_name("path")
    return text(path) if path is not None else ""


def _enclosing_impl_type(node: "Node | None") -> str | None:
    while node is not None:
        if node.type == "impl_item":
            return extract.type_name(node.child_by_field_name("type"))
        node = node.parent
    return None
