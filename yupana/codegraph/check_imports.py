"""The ``unresolved-import`` check: ``use`` trees and ``mod x;`` declarations an edit introduces.

A ``use`` head must be a dependency, ``std``/``core``/``alloc``, or something this crate
can name, and its ``crate::…`` segments must exist; a ``mod x;`` needs ``x.rs``,
``x/mod.rs`` or its ``#[path]`` on disk (or created by the same edit).
"""

from __future__ import annotations

import os

from yupana.codegraph import extract, resolve
from yupana.codegraph.check_context import CRATE_HEADS, IMPORT, CheckContext
from yupana.codegraph.extract import text

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from yupana.codegraph.check_context import Env, VerifyResult


class ImportChecks(CheckContext):
    """The import rules of :class:`~yupana.codegraph.checks.Checker`."""

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
            self.violation(result, IMPORT, path, line, f"`use {path}`: `{ext}` is not a dependency of this crate")
            return
        if head in CRATE_HEADS:
            missing = self.crate_path_missing(segs)
            if missing is None:
                return
            reason = self.unknown_reason("crate-path")
            if reason:
                self.unchecked(result, path, line, reason)
            elif not resolve.word_in(self.old, missing):
                self.violation(result, IMPORT, path, line,
                                f"`use {path}`: this crate defines nothing named `{missing}`")
            return
        if head in self.externs or resolve.always_known(head) or head in self.bound or self.crate_kinds([head]):
            return
        reason = self.unknown_reason("head") or self._renamed_lib(head)
        if reason:
            self.unchecked(result, path, line, reason)
        elif not resolve.word_in(self.old, head):
            self.violation(result, IMPORT, path, line, f"`use {path}`: `{head}` is neither a dependency in "
                            "Cargo.toml nor a module or item of this crate")

    def _renamed_lib(self, head: str) -> str | None:
        """A dependency whose library name may differ from its package name (redox_syscall → syscall)."""
        for dep in self.env.crate.deps:
            if head != dep and head in dep.split("_"):
                return f"may be the library name of dependency `{dep}`"
        return None

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
            self.violation(result, IMPORT, name, line, f"`mod {name};` has no file: neither {shown} exists")


def _shown(path: str, env: "Env") -> str:
    d = env.crate.dir
    return path[len(d) + 1:] if path.startswith(d + os.sep) else path
