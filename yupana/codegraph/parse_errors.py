"""Which parse errors an edit introduced: those the new buffer has that the old one did not.

tree-sitter recovers from broken syntax by inventing structure, so names found in a buffer
that does not parse are not evidence (docs/structural-checks.md, "Buffer verification"). A
break can sit outside the bytes an edit changed — a stray ``}`` makes the file's own closing
brace the error, an unterminated ``/*`` swallows the rest of the file — and still be the
edit's doing. So the errors of the new tree are counted against the old tree's over the same
region (the same item windows, or the whole file): more in the new one means the edit broke
the buffer, and the verdict is UNKNOWN (allow, loudly), never a deny. Errors the file already
had are not the edit's business.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from collections.abc import Callable

    from tree_sitter import Node, Tree


def error_nodes(tree: Tree) -> list[Node]:
    """Every ERROR or MISSING node of ``tree``, in document order (only subtrees that hold one
    are walked)."""
    out: list[Node] = []
    if not tree.root_node.has_error:
        return out
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.is_error or node.is_missing:
            out.append(node)
            continue  # what an ERROR node holds is the same break
        if node.has_error:
            stack.extend(reversed(node.children))
    return out


def introduced_line(new_tree: Tree, old_tree: Callable[[], Tree | None], moved: Callable[[int], int]) -> int | None:
    """The 1-based line of the first parse error the edit introduced, or None when the new tree
    has no more errors than the old one. ``old_tree()`` parses the old buffer over the same
    region (None: there was no old buffer: every error is new); ``moved(offset)`` maps an
    old offset to the new buffer (to point at an error the old buffer did not have)."""
    new = error_nodes(new_tree)
    if not new:
        return None
    before = old_tree()
    old = error_nodes(before) if before is not None else []
    if len(new) <= len(old):
        return None
    seen = {moved(n.start_byte) for n in old}
    first = next((n for n in new if n.start_byte not in seen), new[0])
    return int(first.start_point[0]) + 1
