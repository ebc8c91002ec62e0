"""The one walk over a parsed Rust file: what the index stores, and what an edit names.

Used two ways: :func:`walk` in index mode gives a file's facts (symbols, reference edges,
bindings, uses, mods, flags — :func:`file_facts`); :func:`scan` in
verify mode gives a (windowed) proposed buffer's scope facts plus the candidates the edit
introduces (:mod:`yupana.codegraph.candidates`).

No tree-sitter queries: on this machine each compiled query costs ~1.7 ms plus ~0.2 ms per
pattern (the Rust grammar is large) — ~15 ms for the patterns an index needs, paid by
every hook that parses a file — while visiting a node from Python costs ~0.6 µs.

Item-level macro invocations whose body parses as Rust items (``cfg_rt! { mod x; }``) are
parsed again and walked as if written in place (index mode; ``cfg_if!`` groups one by one);
bodies that are not items, and ``macro_rules!`` bodies, contribute *maybe* names.
"""

from __future__ import annotations

from yupana.codegraph import candidates as cands
from yupana.codegraph import extract, parse
from yupana.codegraph.extract import text

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from collections.abc import Sequence

    from tree_sitter import Node, Tree

DEF_KINDS = {
    "function_item": "fn", "function_signature_item": "fn", "struct_item": "struct", "enum_item": "enum",
    "union_item": "union", "trait_item": "trait", "type_item": "type", "associated_type": "type",
    "const_item": "const", "static_item": "static", "mod_item": "mod", "macro_definition": "macro",
    "enum_variant": "variant", "impl_item": "impl",
}
# parent type -> fields where an identifier binds a local name (patterns, parameters, generics)
_LOCAL = {k: v for k, v in cands.BINDS.items() if k in (
    "let_declaration", "parameter", "for_expression", "let_condition", "field_pattern", "const_parameter",
    "type_parameter", "closure_parameters", "match_pattern", "tuple_pattern", "slice_pattern", "ref_pattern",
    "mut_pattern", "captured_pattern", "or_pattern", "reference_pattern")}
_NAMES = ("identifier", "type_identifier", "shorthand_field_identifier", "field_identifier")
_SKIP = ("attribute_item", "inner_attribute_item", "line_comment", "block_comment")
_SKIP_REF_PARENTS = {"lifetime", "type_binding", "label", "visibility_modifier", "attribute", "meta_item"}
_ITEM_PARENTS = ("source_file", "declaration_list")
MAX_DEPTH = 4  # macro bodies parsed again inside macro bodies, at most
WALK_STRIDE = 512  # nodes visited between deadline checks (~0.3 ms)


class _Mode:
    """What a walk collects: reference edges (index) or candidates in ``ranges`` (verify)."""

    __slots__ = ("refs", "reparse", "out", "ranges", "deletions")

    def __init__(self, refs: bool, reparse: bool, out=None, ranges=(), deletions=()) -> None:
        self.refs = refs
        self.reparse = reparse
        self.out = out
        self.ranges = ranges
        self.deletions = deletions


def walk(root: "Node", facts: extract.FileFacts, shift: int = 0, line_base: int = 0, depth: int = 0,
         mode: _Mode | None = None) -> None:
    """Index mode (default): collect ``root``'s facts into ``facts``; ``shift``/``line_base``
    place a re-parsed macro body in its file."""
    mode = mode or _Mode(refs=True, reparse=True)
    stack = [root]
    visited = 0
    while stack:
        node = stack.pop()
        visited += 1
        if not visited % WALK_STRIDE:
            parse.check_deadline()  # a hook's bound deadline: a huge buffer's walk stops (Cancelled)
        t = node.type
        if t in _SKIP:
            continue
        hit = mode.out is not None and _meets(node, mode.ranges)
        if t == "macro_invocation":
            _invocation(node, facts, shift, line_base, depth, mode, hit)
            continue
        if t == "token_tree":
            continue
        if t == "use_declaration":
            extract.add_use(node, facts, line_base)
            if hit:
                mode.out.uses.append(node)
            if not mode.refs:
                continue
        elif t == "extern_crate_declaration":
            extract.add_extern_crate(node, facts)
            continue
        kind = DEF_KINDS.get(t)
        if kind is not None:
            extract.add_symbol(node, kind, node.child_by_field_name("name"), facts, line_base, shift)
            if t == "macro_definition":
                if mode.refs:
                    _token_refs(node, facts, shift, skip_first=True)
                continue
            if hit and t == "mod_item" and node.child_by_field_name("body") is None:
                mode.out.mods.append(node)
        elif t == "call_expression" and mode.out is not None and (hit or _holds(node, mode.deletions)):
            mode.out.calls.append(node)
        elif t in _NAMES:
            _name(node, t, facts, shift, mode, hit)
            continue
        stack.extend(node.children)


def scan(tree: "Tree", ranges: list[tuple[int, int]], deletions: Sequence[int] = ()) -> tuple:
    """Verify mode: ``(FileFacts, Candidates)`` of ``tree``; candidates only where they
    meet ``ranges`` (calls also at ``deletions``); macro bodies are not parsed again."""
    facts = extract.FileFacts()
    out = cands.Candidates()
    if tree.root_node.has_error:
        facts.flags |= extract.FLAG_PARSE_ERROR
    walk(tree.root_node, facts, mode=_Mode(refs=False, reparse=False, out=out, ranges=ranges, deletions=deletions))
    facts.bound |= facts.locals
    extract.attribute_references(facts)
    return facts, out


def _name(node, t: str, facts, shift: int, mode: _Mode, hit: bool) -> None:
    """An identifier: a definition's name (nothing), a binding (local) or a reference."""
    parent = node.parent
    if parent is None:
        return
    ptype = parent.type
    if ptype in DEF_KINDS:
        name = parent.child_by_field_name("name")
        if name is not None and name.id == node.id:
            return
    if _is_local(node, parent, ptype):
        facts.locals.add(text(node))
        return
    if mode.out is not None:
        if hit and t in ("identifier", "type_identifier"):
            cands.add_identifier(node, mode.out)
        return
    if ptype in _SKIP_REF_PARENTS or ptype == "extern_crate_declaration":
        return
    qual = None
    if t == "field_identifier":
        if ptype != "field_expression":
            return  # a field's declaration or initializer, not a use
        qual = "."
    elif ptype in ("scoped_identifier", "scoped_type_identifier"):
        name = parent.child_by_field_name("name")
        if name is not None and name.id == node.id:
            qual = extract.qualifier(parent.child_by_field_name("path"))
    elif ptype == "macro_invocation":
        qual = "!"
    elif ptype == "use_as_clause":
        alias = parent.child_by_field_name("alias")
        if alias is not None and alias.id == node.id:
            return
    facts.refs.add((text(node), qual, node.start_byte + shift))


def _is_local(node, parent, ptype: str) -> bool:
    if node.type == "field_identifier":
        return False  # `Point { x: px }`: x names a field, px is the binding
    if ptype == "tuple_struct_pattern":
        type_node = parent.child_by_field_name("type")
        return type_node is None or type_node.id != node.id
    fields = _LOCAL.get(ptype)
    return fields is not None and cands.field_is(parent, node, fields)


def _invocation(node, facts, shift: int, line_base: int, depth: int, mode: _Mode, hit: bool) -> None:
    macro = node.child_by_field_name("macro")
    name = text(macro) if macro is not None else ""
    if name == "include" or name.endswith("::include"):
        facts.flags |= extract.FLAG_INCLUDE
    if macro is not None:
        if mode.out is not None:
            if hit:
                _macro_name_candidates(macro, mode)
        elif macro.type == "identifier":
            facts.refs.add((name, "!", macro.start_byte + shift))
        else:
            walk(macro, facts, shift, line_base, depth, mode)
    tt = cands.token_tree_of(node)
    if tt is None:
        return
    parent = node.parent
    if parent is not None and parent.type in _ITEM_PARENTS:
        if not (mode.reparse and depth < MAX_DEPTH and _reparse_items(tt, facts, shift, line_base, depth, mode)):
            facts.maybe |= extract.identifiers_under(tt)
            if mode.refs:
                _token_refs(tt, facts, shift)
    else:
        if name not in extract.STD_EXPR and not name.endswith(extract.STD_SUFFIXES):
            idents = extract.identifiers_under(tt)  # a statement macro may bind names (pin!, select!…)
            facts.bound |= idents
            facts.macro_idents |= idents
        if mode.refs:
            _token_refs(tt, facts, shift)
    if hit:
        cands.add_macro_arguments(node, tt, mode.ranges, mode.out)


def _macro_name_candidates(macro, mode: _Mode) -> None:
    stack = [macro]
    while stack:
        n = stack.pop()
        if n.type in ("identifier", "type_identifier"):
            if _meets(n, mode.ranges):
                cands.add_identifier(n, mode.out)
        else:
            stack.extend(n.children)


def _reparse_items(tt, facts, shift: int, line_base: int, depth: int, mode: _Mode) -> bool:
    """Walk a macro body that parses as items (or each braced group of one that does not)."""
    if _reparse(tt, facts, shift, line_base, depth, mode):
        return True
    groups = [c for c in tt.named_children if c.type == "token_tree" and c.text[:1] == b"{"]
    if not groups:
        return False
    for group in groups:
        if not _reparse(group, facts, shift, line_base, depth, mode):
            facts.maybe |= extract.identifiers_under(group)
            _token_refs(group, facts, shift)
    facts.maybe |= extract.identifiers_under(tt, groups)
    return True


def _reparse(tt, facts, shift: int, line_base: int, depth: int, mode: _Mode) -> bool:
    sub = parse.parse(tt.text[1:-1])
    root = sub.root_node
    if root.has_error or not root.named_child_count:
        return False
    walk(root, facts, shift + tt.start_byte + 1, line_base + tt.start_point[0], depth + 1, mode)
    return True


def _token_refs(node, facts, shift: int, skip_first: bool = False) -> None:
    """References inside token trees (macro arguments and bodies): names, ``.m`` after a dot.
    ``skip_first``: ``node`` is a ``macro_rules!`` definition, whose own name is no reference."""
    own = node.child_by_field_name("name") if skip_first else None
    stack = list(node.children)
    while stack:
        n = stack.pop()
        if n.type == "identifier":
            if own is not None and n.id == own.id:
                continue
            prev = n.prev_sibling
            qual = "." if prev is not None and prev.type == "." else None
            facts.refs.add((text(n), qual, n.start_byte + shift))
        else:
            stack.extend(n.children)


def _meets(node, ranges) -> bool:
    a, b = node.start_byte, node.end_byte
    for s, e in ranges:
        if a < max(e, s + 1) and s < b:
            return True
    return False


def _holds(node, points) -> bool:
    return any(node.start_byte < p < node.end_byte for p in points)


def file_facts(source: bytes, tree: "Tree | None" = None) -> "extract.FileFacts":
    """All facts of one Rust source file (what the index stores for it)."""
    if tree is None:
        tree = parse.parse(source)
    facts = extract.FileFacts()
    if tree.root_node.has_error:
        facts.flags |= extract.FLAG_PARSE_ERROR
    walk(tree.root_node, facts)
    facts.bound |= facts.locals
    extract.attribute_references(facts)
    return facts
