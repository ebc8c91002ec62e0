"""One walk over a (windowed) proposed buffer: its scope facts and what the edit names.

The verify path does not compile tree-sitter queries: on this machine each compiled query
costs ~1.7 ms plus ~0.2 ms per pattern (the Rust grammar is large), ~15 ms for the three
the index uses, while walking the nodes of a window costs ~0.6 µs each. The classification
rules are shared with :mod:`yupana.codegraph.extract` (symbols, uses, ``extern crate``)
and :mod:`yupana.codegraph.candidates` (which identifiers are references, bindings or
definitions; how std macro arguments are read), so the index and the verifier agree.
"""

from __future__ import annotations

from yupana.codegraph import candidates as cands
from yupana.codegraph import extract

DEF_KINDS = {
    "function_item": "fn", "function_signature_item": "fn", "struct_item": "struct", "enum_item": "enum",
    "union_item": "union", "trait_item": "trait", "type_item": "type", "associated_type": "type",
    "const_item": "const", "static_item": "static", "mod_item": "mod", "macro_definition": "macro",
    "enum_variant": "variant", "impl_item": "impl",
}
# parent type -> fields where an identifier binds a local name (patterns, parameters, generics)
_LOCAL = {k: v for k, v in cands._BINDS.items() if k in (
    "let_declaration", "parameter", "for_expression", "let_condition", "field_pattern", "const_parameter",
    "type_parameter", "closure_parameters", "match_pattern", "tuple_pattern", "slice_pattern", "ref_pattern",
    "mut_pattern", "captured_pattern", "or_pattern", "reference_pattern")}
_NAMES = ("identifier", "type_identifier", "shorthand_field_identifier")


def scan(tree, ranges: list[tuple[int, int]], deletions: list[int] = ()) -> tuple:
    """``(FileFacts, Candidates)`` of ``tree``; candidates only where they meet ``ranges``
    (calls also at ``deletions``)."""
    facts = extract.FileFacts()
    out = cands.Candidates()
    if tree.root_node.has_error:
        facts.flags |= extract.FLAG_PARSE_ERROR
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        t = node.type
        if t in ("attribute_item", "inner_attribute_item", "token_tree", "line_comment", "block_comment"):
            continue
        hit = _meets(node, ranges)
        if t == "macro_invocation":
            _invocation(node, facts, out, ranges, hit)
            continue
        if t == "use_declaration":
            extract._use(node, facts, 0)
            if hit:
                out.uses.append(node)
            continue
        if t == "extern_crate_declaration":
            extract._extern(node, facts)
            continue
        kind = DEF_KINDS.get(t)
        if kind is not None:
            extract._symbol(node, kind, node.child_by_field_name("name"), facts, 0, 0)
            if t == "macro_definition":
                continue
            if t == "mod_item" and hit and node.child_by_field_name("body") is None:
                out.mods.append(node)
        elif t == "call_expression" and (hit or _holds(node, deletions)):
            out.calls.append(node)
        elif t in _NAMES:
            if _is_local(node):
                facts.locals.add(extract.text(node))
            elif hit and t != "shorthand_field_identifier":
                cands._identifier(node, out)
            continue
        stack.extend(node.children)
    facts.bound |= facts.locals
    extract._attribute(facts)
    return facts, out


def _is_local(node) -> bool:
    parent = node.parent
    if parent is None:
        return False
    ptype = parent.type
    if ptype == "tuple_struct_pattern":
        type_node = parent.child_by_field_name("type")
        return type_node is None or type_node.id != node.id
    fields = _LOCAL.get(ptype)
    return fields is not None and cands._field_is(parent, node, fields)


def _invocation(node, facts, out, ranges: list[tuple[int, int]], hit: bool) -> None:
    """A macro call: its name is a candidate; item-level bodies are maybe names, other
    non-std macros may bind names; std expression macros have their arguments read."""
    macro = node.child_by_field_name("macro")
    name = extract.text(macro) if macro is not None else ""
    if name == "include" or name.endswith("::include"):
        facts.flags |= extract.FLAG_INCLUDE
    tt = cands._token_tree(node)
    parent = node.parent
    if tt is not None:
        if parent is not None and parent.type in ("source_file", "declaration_list"):
            facts.maybe |= extract._identifiers(tt)
        elif name not in extract._STD_EXPR and not name.endswith(extract._STD_SUFFIXES):
            idents = extract._identifiers(tt)
            facts.bound |= idents
            facts.macro_idents |= idents
    if not hit:
        return
    if macro is not None:
        if macro.type == "identifier":
            if _meets(macro, ranges):
                cands._identifier(macro, out)
        else:
            stack = [macro]
            while stack:
                n = stack.pop()
                if n.type in _NAMES and _meets(n, ranges):
                    cands._identifier(n, out)
                else:
                    stack.extend(n.children)
    if tt is not None:
        cands._macro(node, tt, ranges, out)


def _meets(node, ranges: list[tuple[int, int]]) -> bool:
    a, b = node.start_byte, node.end_byte
    for s, e in ranges:
        if a < max(e, s + 1) and s < b:
            return True
    return False


def _holds(node, points) -> bool:
    return any(node.start_byte < p < node.end_byte for p in points)
