"""What introduced Rust text *names*: the references the verifier must resolve.

The rules :mod:`yupana.codegraph.scan` applies to each node of a proposed buffer that meets
the byte ranges the edit introduces: the identifiers in reference position (with their
role: a value or type, the head of a path, a ``crate::``/``self::``/``super::`` path, a
macro name), the calls (for arity), the ``use`` trees and the ``mod`` declarations.

Bindings and definitions are never candidates (patterns, parameters, closure parameters,
generics, item names, ``as`` aliases); neither are attributes, ``macro_rules!`` bodies,
lifetimes, labels, field names, or the tail of a path whose head is not this crate.
Arguments of the std expression macros (``println!``, ``assert_eq!``, ``vec!``…) are read
token by token; any other macro's arguments are opaque and reported as unchecked.
"""

from __future__ import annotations

from yupana.codegraph import resolve
from yupana.codegraph.extract import text

# parent type -> fields where an identifier child binds or defines a name ("*": any child).
BINDS: dict[str, object] = {
    "let_declaration": ("pattern",), "parameter": ("pattern",), "for_expression": ("pattern",),
    "let_condition": ("pattern",), "field_pattern": ("pattern", "name"), "const_parameter": ("name",),
    "type_parameter": ("name",), "use_as_clause": ("alias",), "type_binding": ("name",),
    "closure_parameters": "*", "match_pattern": "*", "tuple_pattern": "*", "slice_pattern": "*",
    "ref_pattern": "*", "mut_pattern": "*", "captured_pattern": "*", "or_pattern": "*",
    "reference_pattern": "*", "extern_crate_declaration": "*", "lifetime": "*", "label": "*",
    "visibility_modifier": "*", "attribute": "*", "meta_item": "*",
    "function_item": ("name",), "function_signature_item": ("name",), "struct_item": ("name",),
    "enum_item": ("name",), "union_item": ("name",), "trait_item": ("name",), "type_item": ("name",),
    "associated_type": ("name",), "const_item": ("name",), "static_item": ("name",),
    "mod_item": ("name",), "macro_definition": ("name",), "enum_variant": ("name",),
}


class Ref:
    """One name the introduced text uses. ``role``: value | head | crate-path | macro."""

    __slots__ = ("name", "role", "line", "path")

    def __init__(self, name: str, role: str, line: int, path: str = "") -> None:
        self.name = name
        self.role = role
        self.line = line
        self.path = path  # the whole path, for heads and crate paths

    def __repr__(self) -> str:
        return f"Ref({self.name!r}, {self.role!r}, line {self.line})"


class Candidates:
    __slots__ = ("refs", "calls", "uses", "mods", "opaque")

    def __init__(self) -> None:
        self.refs: list[Ref] = []
        self.calls: list = []  # call_expression nodes
        self.uses: list = []  # use_declaration nodes
        self.mods: list = []  # mod_item nodes without a body
        self.opaque: list[tuple[str, int]] = []  # (macro name, line) whose arguments are not read


def field_is(parent, node, fields) -> bool:
    if fields == "*":
        return True
    for f in fields:
        child = parent.child_by_field_name(f)
        if child is not None and child.id == node.id:
            return True
    return False


def token_tree_of(inv):
    for child in inv.named_children:
        if child.type == "token_tree":
            return child
    return None


def add_identifier(node, out: Candidates) -> None:
    parent = node.parent
    if parent is None:
        return
    ptype = parent.type
    fields = BINDS.get(ptype)
    if fields is not None and field_is(parent, node, fields):
        return
    if ptype == "tuple_struct_pattern":
        type_node = parent.child_by_field_name("type")
        if type_node is None or type_node.id != node.id:
            return
    line = node.start_point[0] + 1
    name = text(node)
    if ptype == "macro_invocation":
        out.refs.append(Ref(name, "macro", line))
        return
    if ptype in ("scoped_identifier", "scoped_type_identifier"):
        path_node = parent.child_by_field_name("path")
        if path_node is not None and path_node.id == node.id:
            outer = _outer_path(parent)
            role = "macro-head" if outer.parent is not None and outer.parent.type == "macro_invocation" else "head"
            out.refs.append(Ref(name, role, line, text(outer)))
            return
        head = _head(parent)
        outer = parent.parent
        is_outer = not (outer is not None and outer.type in ("scoped_identifier", "scoped_type_identifier")
                        and outer.child_by_field_name("path") is not None
                        and outer.child_by_field_name("path").id == parent.id)
        if head is not None and head.type in ("crate", "self", "super") and is_outer:
            out.refs.append(Ref(name, "crate-path", line, text(parent)))
        return
    out.refs.append(Ref(name, "value", line))


def _outer_path(node):
    while node.parent is not None and node.parent.type in ("scoped_identifier", "scoped_type_identifier"):
        p = node.parent
        path = p.child_by_field_name("path")
        if path is None or path.id != node.id:
            break
        node = p
    return node


def _head(node):
    """The first segment of a path node (None for a leading ``::``)."""
    while node is not None and node.type in ("scoped_identifier", "scoped_type_identifier"):
        node = node.child_by_field_name("path")
    return node


def add_macro_arguments(inv, tt, ranges: list[tuple[int, int]], out: Candidates) -> None:
    """Read the arguments of a std expression macro token by token (others are opaque)."""
    macro = inv.child_by_field_name("macro")
    name = text(macro).rsplit("::", 1)[-1] if macro is not None else ""
    if not _intersects(tt.start_byte, tt.end_byte, ranges):
        return
    tokens = _tokens(tt)
    if name not in resolve.EXPR_MACROS or any(t.type in resolve.BINDING_TOKENS for t in tokens):
        if any(t.type == "identifier" for t in tokens):
            out.opaque.append((name + "!", inv.start_point[0] + 1))
        return
    _read_tokens(tt, name in resolve.FORMAT_MACROS, ranges, out)


def _tokens(tt) -> list:
    found = []
    stack = [tt]
    while stack:
        node = stack.pop()
        for child in node.children:
            if child.type == "token_tree":
                stack.append(child)
            else:
                found.append(child)
    return found


def _read_tokens(tt, formatted: bool, ranges: list[tuple[int, int]], out: Candidates) -> None:
    children = tt.children
    skip_next_tree = False
    for i, tok in enumerate(children):
        kind = tok.type
        if kind == "token_tree":
            if skip_next_tree:
                skip_next_tree = False
                continue
            _read_tokens(tok, False, ranges, out)
            continue
        if kind == "!" and skip_next_tree:
            continue
        skip_next_tree = False
        if kind != "identifier" or not _intersects(tok.start_byte, tok.end_byte, ranges):
            continue
        prev = children[i - 1].type if i > 0 else ""
        nxt = children[i + 1].type if i + 1 < len(children) else ""
        if prev in (".", "::", "$", "'") or nxt == ":":
            continue
        if formatted and nxt == "=":
            continue
        line = tok.start_point[0] + 1
        name = text(tok)
        if nxt == "!":
            out.refs.append(Ref(name, "macro", line))
            out.opaque.append((name + "!", line))
            skip_next_tree = True
        elif nxt == "::":
            out.refs.append(Ref(name, "head", line, name))
        else:
            out.refs.append(Ref(name, "value", line))


def _intersects(a: int, b: int, ranges: list[tuple[int, int]]) -> bool:
    for s, e in ranges:
        if a < max(e, s + 1) and s < b:
            return True
    return False
