"""The verifier's resolution rules: names, ``use`` trees, ``mod`` files and call arity.

One :class:`Checker` per verified buffer. Every rule abstains (``unchecked``, or silence for
arity) when the answer could come from somewhere the index cannot see; a violation is only
reported for something introduced by the edit and absent from the file before it.
"""

from __future__ import annotations

import os

from yupana.codegraph import extract, resolve, window
from yupana.codegraph.extract import ARITY as A_ARITY
from yupana.codegraph.extract import CONTAINER, KIND, LINE, NAME, text

IDENT, ARITY, IMPORT = "identifier-does-not-exist", "wrong-arity", "unresolved-import"
_TYPE_KINDS = ("struct", "enum", "union", "trait", "type")
_CRATE_HEADS = ("crate", "self", "super")
_FLAGS = ("#include", "#macro_use", "#glob")


class Checker:
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

    # ── lookups ─────────────────────────────────────────────────────────────────────

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
            external = [p for p, b, _ in self.uses if b == "*" and p.split("::", 1)[0] not in _CRATE_HEADS]
            if external:
                return f"may come from the glob import `{external[0]}::*`"
            return None
        if role == "crate-path":
            if self.crate_flag("#glob"):
                return "the crate re-exports glob imports of other crates; a path through them is not followed"
            return None
        globs = [p for p, b, _ in self.uses if b == "*"]
        external = [p for p in globs if p.split("::", 1)[0] not in _CRATE_HEADS]
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

    def _violation(self, result: "VerifyResult", kind: str, symbol: str, line: int, message: str) -> None:
        for v in result.violations:
            if v["kind"] == kind and v["symbol"] == symbol and v["line"] == line:
                return
        result.violations.append({"kind": kind, "symbol": symbol, "line": line, "message": message})

    # ── identifiers ─────────────────────────────────────────────────────────────────

    def check_refs(self, refs: list, result: "VerifyResult") -> None:
        """Names the edit uses: bound here, known, in the crate — else unchecked or a violation."""
        pending: dict[tuple[str, str], object] = {}
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
                self._violation(result, IDENT, r.path or name, r.line, message)

    def _crate_ref(self, r: "Ref", result: "VerifyResult") -> None:
        missing = self._crate_path_missing(segments(r.path))
        if missing is None:
            return
        reason = self.unknown_reason("crate-path")
        if reason:
            self.unchecked(result, r.path, r.line, reason)
        elif not resolve.word_in(self.old, missing):
            self._violation(result, IDENT, r.path, r.line, f"`{r.path}`: this crate defines nothing named `{missing}`")

    def _crate_path_missing(self, segs: list[str]) -> str | None:
        """The first segment after ``crate``/``self``/``super`` that this crate cannot have;
        None when every segment exists, or the path leaves what the index can follow (a
        name imported from another crate, an extern crate, a macro-made name)."""
        rest = [s for s in segs[1:] if s and s not in ("self", "super", "crate", "*")]
        for i, seg in enumerate(rest):
            if i == 0:
                if seg in self.externs:
                    return None
                if any(b == seg and p.split("::", 1)[0] not in _CRATE_HEADS for p, b, _ in self.uses):
                    return None
                if seg in self.bound:
                    continue
            kinds = self.crate_kinds([seg]).get(seg)
            if not kinds:
                return seg
            if kinds & {"usex", "maybe"}:
                return None  # possibly another crate's item re-exported, or a macro's: not indexed
        return None

    # ── use trees ───────────────────────────────────────────────────────────────────

    def check_uses(self, nodes: list, result: "VerifyResult") -> None:
        """``use`` trees the edit introduces."""
        for node in nodes:
            arg = node.child_by_field_name("argument")
            if arg is None:
                continue
            line = node.start_point[0] + 1
            for path, _bound in extract.use_paths(arg, ""):
                self._use(path, line, result)

    def _use(self, path: str, line: int, result: "VerifyResult") -> None:
        segs = path.split("::")
        head = segs[0]
        if head == "" and self.env.crate.edition == "2015":
            segs = ["crate"] + segs[1:]  # 2015: `::x` is the crate root
            head = "crate"
        if head == "":
            ext = segs[1] if len(segs) > 1 else ""
            if ext in self.externs or not self.env.crate.has_manifest or resolve.word_in(self.old, ext):
                return
            self._violation(result, IMPORT, path, line, f"`use {path}`: `{ext}` is not a dependency of this crate")
            return
        if head in _CRATE_HEADS:
            missing = self._crate_path_missing(segs)
            if missing is None:
                return
            reason = self.unknown_reason("crate-path")
            if reason:
                self.unchecked(result, path, line, reason)
            elif not resolve.word_in(self.old, missing):
                self._violation(result, IMPORT, path, line,
                                f"`use {path}`: this crate defines nothing named `{missing}`")
            return
        if head in self.externs or resolve.always_known(head) or head in self.bound or self.crate_kinds([head]):
            return
        reason = self.unknown_reason("head") or self._renamed_lib(head)
        if reason:
            self.unchecked(result, path, line, reason)
        elif not resolve.word_in(self.old, head):
            self._violation(result, IMPORT, path, line, f"`use {path}`: `{head}` is neither a dependency in "
                            "Cargo.toml nor a module or item of this crate")

    def _renamed_lib(self, head: str) -> str | None:
        """A dependency whose library name may differ from its package name (redox_syscall → syscall)."""
        for dep in self.env.crate.deps:
            if head != dep and head in dep.split("_"):
                return f"may be the library name of dependency `{dep}`"
        return None

    # ── mod declarations ────────────────────────────────────────────────────────────

    def check_mods(self, nodes: list, result: "VerifyResult") -> None:
        """``mod x;`` declarations the edit introduces: the file must exist."""
        env = self.env
        for node in nodes:
            name_node = node.child_by_field_name("name")
            if name_node is None:
                continue
            name = text(name_node)
            line = node.start_point[0] + 1
            attrs, always = extract.path_attrs(node)
            inline = extract.inline_parents(node)
            if attrs and inline:
                self.unchecked(result, f"mod {name}", line, "#[path] inside an inline module is not resolved")
                continue
            wanted = [os.path.normpath(os.path.join(os.path.dirname(env.path), a)) for a in attrs]
            if not always:  # no unconditional #[path]: the default files are candidates too
                if env.rel is not None:
                    base = os.path.join(env.crate.dir, resolve.module_dir(env.rel, env.crate.roots))
                else:
                    base = os.path.join(os.path.dirname(env.path), resolve.module_dir(os.path.basename(env.path)))
                d = os.path.join(base, inline) if inline else base
                wanted += [os.path.join(d, name + ".rs"), os.path.join(d, name, "mod.rs")]
            if any(os.path.isfile(w) or w in env.created for w in wanted):
                continue
            if self.old is not None and resolve.word_in(self.old, name) and b"mod " + name.encode() in self.old:
                continue
            shown = " nor ".join(_shown(w, env) for w in wanted)
            self._violation(result, IMPORT, name, line, f"`mod {name};` has no file: neither {shown} exists")

    # ── call arity ──────────────────────────────────────────────────────────────────

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
            self._violation(result, ARITY, symbol, call.start_point[0] + 1,
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
        if path.split("::", 1)[0] not in _CRATE_HEADS:
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
        if head in _CRATE_HEADS and (qual in _CRATE_HEADS or qual[:1].islower()):
            rows = self._crate_defs(name)
            if rows is None or name in self.locals or "usex" in self.crate_kinds([name]).get(name, ()):
                return None  # (a name also imported from elsewhere may be a re-export of another crate's)
            rows = [r for r in rows if r[3] == "fn" and r[4] is None]
            if len(rows) != 1 or rows[0][6] < 0:
                return None
            return f"{text(fn)}", rows[0][6], f"{rows[0][7]}:{rows[0][8]}"
        if path.type not in ("identifier", "type_identifier", "generic_type") and head not in _CRATE_HEADS:
            return None  # `std::io::Error::new`: a type reached through another crate's path
        if qual == "Self":
            qual = _enclosing_impl_type(call) or self._window_self(call.start_byte)
        if (not qual or not qual[:1].isupper() or qual in self.locals or name in self.facts.maybe
                or name in self.facts.macro_idents):
            return None
        for p, b, _ in self.uses:
            if b == qual and p.split("::", 1)[0] not in _CRATE_HEADS:
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
        if self._old_flat is None:
            self._old_flat = b"".join(self.old.split())
        return b"".join(call.text.split()) in self._old_flat


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


def _ident_message(name: str, role: str, path: str) -> str:
    if role == "macro":
        return f"macro `{name}!` is not defined in this crate, imported, or a std macro"
    if role == "crate-path":
        return f"`{path}`: this crate defines nothing named `{name}`"
    if role in ("head", "macro-head"):
        return f"`{path}`: `{name}` is neither a dependency in Cargo.toml nor a module, type or import in scope"
    return f"`{name}` is not defined in this file, this crate or its dependencies"


def _shown(path: str, env: "Env") -> str:
    d = env.crate.dir
    return path[len(d) + 1:] if path.startswith(d + os.sep) else path
