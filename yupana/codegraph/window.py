"""Parse only the parts of a proposed buffer an edit touches.

A 7,000-line file costs ~55 ms to parse; the function an edit changes costs well under one.
With the index's symbol spans of the file as it is on disk, every change is widened to the
innermost item that contains it whole (a method, a function, a struct…) or, for a change
between items, to the gap between the surrounding top-level items. Those windows, mapped
onto the proposed buffer, are the only bytes tree-sitter reads (``Parser.included_ranges``:
node offsets and lines stay those of the whole buffer). The rest of the file is known from
the index: its definitions, bindings and imports.
"""

from __future__ import annotations

from yupana.codegraph import parse

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from tree_sitter import Tree

WINDOW_ABOVE = 2048  # smaller buffers are simply parsed whole
MAX_SHARE = 0.6  # windows covering more than this share of the file: parse it whole

# symbols_of() tuple: (idx, name, kind, container, trait, parent, start, end, line, end_line, arity)
_KIND, _PARENT, _START, _END = 2, 5, 6, 7


def windows(syms: list[tuple], changes: list[tuple], size: int) -> list[tuple[int, int, str | None]]:
    """Merged ``(start, end, Self type)`` windows on the old buffer covering every change;
    the Self type is the impl's when the window is an item inside one (else None)."""
    top = sorted((s[_START], s[_END]) for s in syms if s[_PARENT] < 0)
    out: list[tuple[int, int, str | None]] = []
    for os_, oe, _, _ in changes:
        best: tuple[int, int, str | None] | None = None
        for sym in syms:
            if sym[_KIND] == "variant" or not (sym[_START] <= os_ and oe <= sym[_END]):
                continue
            if best is None or sym[_END] - sym[_START] < best[1] - best[0]:
                parent = syms[sym[_PARENT]] if sym[_PARENT] >= 0 else None
                self_type = parent[1] if parent is not None and parent[_KIND] == "impl" else None
                best = (sym[_START], sym[_END], self_type)
        if best is None:  # between top-level items: the whole gap
            lo = max((e for _, e in top if e <= os_), default=0)
            hi = min((s for s, _ in top if s >= oe), default=size)
            best = (lo, hi, None)
        out.append(best)
    out.sort()
    merged: list[tuple[int, int, str | None]] = []
    for s, e, t in out:
        if merged and s <= merged[-1][1]:
            prev = merged[-1]
            merged[-1] = (prev[0], max(e, prev[1]), prev[2] if prev[2] == t else None)
        else:
            merged.append((s, e, t))
    return merged


def to_new(pos: int, changes: list[tuple], *, end: bool = False) -> int:
    """Where old offset ``pos`` (a window boundary, outside every change) lands in the new
    buffer; text inserted exactly at ``pos`` falls inside a window ending there (``end``)
    and inside one starting there (not ``end``)."""
    delta = 0
    for os_, oe, ns, ne in changes:
        if oe < pos or (oe == pos and (end or os_ < oe)):
            delta += (ne - ns) - (oe - os_)
    return pos + delta


def parse_windows(new: bytes, spans: list[tuple[int, int]]) -> "Tree":
    """A tree of ``new`` that covers only ``spans`` (byte offsets and points are absolute)."""
    ts = parse.api()
    ranges = []
    for s, e in spans:
        ranges.append(ts.Range(_point(new, s), _point(new, e), s, e))
    p = ts.Parser(parse.language())
    p.included_ranges = ranges
    return parse.run(p, new)


def _point(data: bytes, offset: int) -> tuple[int, int]:
    row = data.count(b"\n", 0, offset)
    return row, offset - (data.rfind(b"\n", 0, offset) + 1)


def outside(spans: list[tuple], start: int, end: int) -> bool:
    """Whether ``[start, end)`` lies wholly outside every span."""
    for s, e, *_ in spans:
        if start < e and s < end:
            return False
    return True
