"""Facts of one Rust file at the tree-sitter tier: symbols, reference edges, bindings, uses, mods.

Everything here is syntactic. A reference is a *name* (plus the path segment or receiver
that qualifies it), never a resolved target: resolution by name is done by the callers and
is an approximation they label as such. The walk itself is :func:`yupana.codegraph.scan.walk`
(one walk for the index and the verifier); this module holds the facts and the helpers that
read items, ``use`` trees, ``mod`` attributes and types.
"""

from __future__ import annotations


TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from tree_sitter import Node

# Bump whenever what scan.file_facts() records changes: stored facts of another version are re-derived.
VERSION = 8

# Symbol tuple layout (also the store's column order).
NAME, KIND, CONTAINER, TRAIT, PARENT, START, END, LINE, END_LINE, ARITY = range(10)

FLAG_INCLUDE = 1  # include!(…): code this index cannot see
FLAG_MACRO_USE = 2  # #[macro_use] extern crate: macros this index cannot list
FLAG_PARSE_ERROR = 4  # the file does not parse cleanly

def text(node: "Node") -> str:
    """The node's text, with a raw identifier's ``r#`` dropped."""
    t = (node.text or b"").decode("utf-8", "replace")  # None only for a tree without its source
    return t[2:] if t.startswith("r#") else t


def type_name(node: "Node | None") -> str | None:
    """The base name of a type node (``Foo`` of ``a::Foo<T>``, ``&Foo``, ``Foo<T>``)."""
    while node is not None:
        kind = node.type
        if kind in ("type_identifier", "identifier", "primitive_type"):
            return text(node)
        if kind in ("generic_type", "reference_type", "pointer_type", "array_type"):
            node = node.child_by_field_name("type") or node.child_by_field_name("element")
        elif kind in ("scoped_type_identifier", "scoped_identifier"):
            node = node.child_by_field_name("name")
        else:
            return None
    return None


def qualifier(path: "Node | None") -> str:
    """The last segment of a path that qualifies a name (``B`` of ``a::B::c``; ``::`` for ``::c``)."""
    if path is None:
        return "::"
    kind = path.type
    if kind in ("scoped_identifier", "scoped_type_identifier"):
        name = path.child_by_field_name("name")
        return text(name) if name is not None else "::"
    if kind == "generic_type":
        return type_name(path) or "?"
    if kind == "bracketed_type":
        inner = path.named_children[0] if path.named_child_count else None
        if inner is not None and inner.type == "qualified_type":
            alias = inner.child_by_field_name("alias")
            return type_name(alias) or "?" if alias is not None else type_name(inner.child_by_field_name("type")) or "?"
        return type_name(inner) or "?"
    return text(path)


class FileFacts:
    """What one file contributes to the index (tuples, so the store can write them as rows)."""

    __slots__ = ("syms", "refs", "maybe", "uses", "bound", "locals", "mods", "flags", "externs", "macro_idents")

    def __init__(self) -> None:
        self.syms: list[list] = []  # see NAME … ARITY
        self.refs: set[tuple[str, str | None, int]] = set()  # (name, qualifier, symbol index or -1)
        self.maybe: set[str] = set()  # names a macro may define
        self.uses: list[tuple[str, str, int]] = []  # (path, bound name or "*", line)
        self.bound: set[str] = set()  # every name bound anywhere in the file
        self.locals: set[str] = set()  # names bound by patterns, parameters, generics, aliases
        self.macro_idents: set[str] = set()  # identifiers in statement-level macro arguments
        self.mods: list[tuple[str, int, str | None, str]] = []  # (name, line, #[path], inline parents "a/b")
        self.flags = 0
        self.externs: list[str] = []  # extern crate names (as bound)

    def info(self) -> dict:
        """The per-file record the verifier reads (bound names, uses, mods, flags)."""
        return {"bound": sorted(self.bound), "uses": self.uses, "mods": self.mods,
                "flags": self.flags, "externs": self.externs}


STD_EXPR = frozenset("""println print eprintln eprint format format_args write writeln panic assert assert_eq
assert_ne debug_assert debug_assert_eq debug_assert_ne vec dbg todo unimplemented unreachable matches""".split())
STD_SUFFIXES = tuple("::" + m for m in STD_EXPR)


def identifiers_under(node, skip: list | None = None) -> set[str]:
    """Every identifier under ``node`` (a token tree: macro arguments and bodies), except
    under the ``skip`` nodes. A walk, not a query: token trees are small, queries are not free."""
    found = set()
    skipped = {n.id for n in skip} if skip else ()
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type == "identifier":
            found.add(text(n))
        elif n.id not in skipped:
            stack.extend(n.children)
    return found


def add_symbol(item, kind: str, name_node, facts: FileFacts, line_base: int, shift: int) -> None:
    name = text(name_node) if kind != "impl" else "?"  # an impl is named by its type, below
    trait = None
    arity = -2
    if kind == "impl":
        name = type_name(item.child_by_field_name("type")) or "?"
        trait_node = item.child_by_field_name("trait")
        trait = type_name(trait_node) if trait_node is not None else None
    elif kind == "fn":
        arity, has_self = _arity(item.child_by_field_name("parameters"))
        if has_self:
            kind = "method"
    elif kind == "mod":
        if item.child_by_field_name("body") is None:
            facts.mods.append((name, line_base + item.start_point[0] + 1, path_attr(item), inline_parents(item)))
    elif kind == "macro":
        body_names = set()
        for child in item.named_children:
            if child.type == "macro_rule":
                right = child.child_by_field_name("right")
                if right is not None:
                    body_names |= identifiers_under(right)
        facts.maybe |= body_names
    start = _leading_start(item)
    if kind != "impl":
        facts.bound.add(name)
    facts.syms.append([name, kind, None, trait, -1, start + shift, item.end_byte + shift,
                       line_base + item.start_point[0] + 1, line_base + item.end_point[0] + 1, arity])


def _arity(params) -> tuple[int, bool]:
    """(number of non-self parameters, or -1 when variadic; whether there is a self parameter)."""
    if params is None:
        return 0, False
    count, has_self = 0, False
    for child in params.named_children:
        kind = child.type
        if kind == "self_parameter":
            has_self = True
        elif kind == "variadic_parameter":
            return -1, has_self
        elif kind == "parameter":
            count += 1
        elif kind not in ("attribute_item", "line_comment", "block_comment"):
            count += 1  # a bare type in a signature (`fn f(u8)` in old traits)
    return count, has_self


def _leading_start(item) -> int:
    """Start of ``item`` including the attributes and doc comments written just above it."""
    start = item.start_byte
    prev = item.prev_named_sibling
    while prev is not None and (prev.type == "attribute_item" or
                                (prev.type in ("line_comment", "block_comment") and _is_doc(prev))):
        start = prev.start_byte
        prev = prev.prev_named_sibling
    return start


def _is_doc(comment) -> bool:
    head = comment.text[:3]
    return head in (b"///", b"//!", b"/**", b"/*!")


def path_attrs(item: "Node") -> tuple[list[str], bool]:
    """``#[path = "…"]`` and ``#[cfg_attr(…, path = "…")]`` values above a ``mod`` declaration,
    and whether one of them is unconditional (then the default file is never used)."""
    found: list[str] = []
    always = False
    prev = item.prev_named_sibling
    while prev is not None and prev.type == "attribute_item":
        raw = (prev.text or b"").decode("utf-8", "replace")
        body = raw[2:-1].strip() if raw.startswith("#[") else ""
        conditional = body.startswith("cfg_attr")
        at = body.find("path")
        while at >= 0:
            rest = body[at + 4:].lstrip()
            if rest.startswith("=") and (at == 0 or not (body[at - 1].isalnum() or body[at - 1] == "_")):
                value = rest[1:].lstrip()
                if value.startswith('"') and '"' in value[1:]:
                    found.append(value[1:value.index('"', 1)])
                    always = always or not conditional
            at = body.find("path", at + 4)
        prev = prev.prev_named_sibling
    return found, always


def path_attr(item: "Node") -> str | None:
    """The unconditional ``#[path = "…"]`` above a ``mod`` declaration, if any."""
    found, always = path_attrs(item)
    return found[0] if found and always else None


def inline_parents(item: "Node") -> str:
    """``a/b`` when a ``mod`` declaration sits inside ``mod a { mod b { … } }``."""
    names = []
    node = item.parent
    while node is not None:
        if node.type == "mod_item":
            n = node.child_by_field_name("name")
            if n is not None:
                names.append(text(n))
        node = node.parent
    return "/".join(reversed(names))


def add_use(node, facts: FileFacts, line_base: int) -> None:
    line = line_base + node.start_point[0] + 1
    arg = node.child_by_field_name("argument")
    if arg is not None:
        for path, bound in use_paths(arg, ""):
            facts.uses.append((path, bound, line))
            if bound != "*":
                facts.bound.add(bound)


def use_paths(node: "Node", prefix: str) -> list[tuple[str, str]]:
    """Expand a use tree into ``(path, bound name)``; globs give ``(path, "*")``."""
    kind = node.type
    join = (lambda p: prefix + "::" + p) if prefix else (lambda p: p)
    if kind in ("identifier", "self", "crate", "super", "metavariable"):
        t = text(node)
        if t == "self" and prefix:
            return [(prefix, prefix.rsplit("::", 1)[-1])]
        return [(join(t), t)]
    if kind == "scoped_identifier":
        full = join(_path_text(node))
        return [(full, full.rsplit("::", 1)[-1])]
    if kind == "use_as_clause":
        path = node.child_by_field_name("path")
        alias = node.child_by_field_name("alias")
        full = join(_path_text(path)) if path is not None else prefix
        return [(full, text(alias) if alias is not None else full.rsplit("::", 1)[-1])]
    if kind == "use_wildcard":
        inner = node.named_children[0] if node.named_child_count else None
        return [(join(_path_text(inner)) if inner is not None else prefix, "*")]
    if kind == "scoped_use_list":
        path = node.child_by_field_name("path")
        lst = node.child_by_field_name("list")
        sub = join(_path_text(path)) if path is not None else prefix
        return use_paths(lst, sub) if lst is not None else []
    if kind == "use_list":
        out = []
        for child in node.named_children:
            if child.type not in ("line_comment", "block_comment"):
                out += use_paths(child, prefix)
        return out
    return []


def _path_text(node) -> str:
    """``a::b::c`` for a path node (leading ``::`` kept as an empty first segment)."""
    if node is None:
        return ""
    if node.type in ("scoped_identifier", "scoped_type_identifier"):
        path = node.child_by_field_name("path")
        name = node.child_by_field_name("name")
        head = _path_text(path) if path is not None else ""
        return head + "::" + (text(name) if name is not None else "")
    return text(node)


def add_extern_crate(node, facts: FileFacts) -> None:
    name = node.child_by_field_name("name")
    alias = node.child_by_field_name("alias")
    bound = text(alias if alias is not None else name) if name is not None else None
    if bound:
        facts.externs.append(bound)
        facts.bound.add(bound)
    prev = node.prev_named_sibling
    while prev is not None and prev.type == "attribute_item":
        if b"macro_use" in (prev.text or b""):
            facts.flags |= FLAG_MACRO_USE
        prev = prev.prev_named_sibling


def attribute_references(facts: FileFacts) -> None:
    """Order symbols, link parents and containers, and attribute each reference to the
    innermost enclosing symbol (variants give theirs to the enum)."""
    syms = facts.syms
    syms.sort(key=lambda s: (s[START], -s[END]))
    stack: list[int] = []
    for i, s in enumerate(syms):
        while stack and syms[stack[-1]][END] <= s[START]:
            stack.pop()
        s[PARENT] = stack[-1] if stack else -1
        stack.append(i)
    for s in syms:
        p = s[PARENT]
        while p >= 0 and syms[p][KIND] not in ("impl", "trait", "mod", "enum"):
            p = syms[p][PARENT]
        if p >= 0:
            owner = syms[p]
            if owner[KIND] == "impl":
                s[CONTAINER], s[TRAIT] = owner[NAME], owner[TRAIT]
            elif owner[KIND] in ("trait", "enum"):
                s[CONTAINER] = owner[NAME]
    starts = [s[START] for s in syms]
    import bisect

    out: set[tuple[str, str | None, int]] = set()
    for name, qual, pos in facts.refs:
        i = bisect.bisect_right(starts, pos) - 1
        while i >= 0 and syms[i][END] <= pos:
            i = syms[i][PARENT]
        while i >= 0 and syms[i][KIND] == "variant":
            i = syms[i][PARENT]
        if qual == "Self" and i >= 0:
            owner = syms[i][CONTAINER] if syms[i][KIND] != "impl" else syms[i][NAME]
            qual = owner or qual
        if i >= 0 and syms[i][NAME] == name and qual is None and syms[i][KIND] != "impl":
            continue  # recursion is not a dependency (an impl naming its type is one)
        out.add((name, qual, i))
    facts.refs = out
