"""Where an edit changes a file: byte spans on the real file and on the proposed buffer.

A change is ``(old_start, old_end, new_start, new_end)`` in bytes (tree-sitter's unit):
``old[old_start:old_end]`` becomes ``new[new_start:new_end]``. Edit/MultiEdit anchors are
located on the real file (each ``old_string`` where it sits, trimmed to the bytes that
actually differ from its ``new_string``); the result is checked by rebuilding the proposed
buffer from the changes, and anything that does not rebuild exactly (anchors created by an
earlier replacement, overlapping anchors) — and every Write, patch and move — goes through
a line diff instead: common prefix and suffix, then lines unique to both sides as anchors
(the patience idea), then a byte-level trim inside each hunk.
"""

from __future__ import annotations

Change = tuple  # (old_start, old_end, new_start, new_end)


def changes(replacements: list[tuple[str, str]], replace_all: list[bool], old: bytes, new: bytes) -> list[Change]:
    """The changes that turn ``old`` into ``new`` (``replacements``: the edit's anchors, if any)."""
    found = _from_anchors(replacements, replace_all, old) if replacements else None
    if found is not None and _rebuild(old, found) == new:
        return _place(found)
    return diff(old, new)


def _from_anchors(replacements, replace_all, old: bytes) -> list[tuple[int, int, bytes]] | None:
    spans: list[tuple[int, int, bytes]] = []
    for n, (o, w) in enumerate(replacements):
        ob, nb = o.encode("utf-8"), w.encode("utf-8")
        if not ob:
            return None
        hits = []
        at = old.find(ob)
        while at >= 0:
            hits.append(at)
            at = old.find(ob, at + len(ob))
        every = replace_all[n] if n < len(replace_all) else False
        if not hits or (len(hits) > 1 and not every):
            return None
        pre, suf = _common(ob, nb)
        for at in hits:
            spans.append((at + pre, at + len(ob) - suf, nb[pre:len(nb) - suf]))
    spans.sort(key=lambda s: (s[0], s[1]))
    for a, b in zip(spans, spans[1:]):
        if b[0] < a[1]:
            return None
    return spans


def _common(a: bytes, b: bytes) -> tuple[int, int]:
    """Lengths of the common prefix and (non-overlapping) common suffix of two byte strings."""
    n = min(len(a), len(b))
    pre = 0
    while pre < n and a[pre] == b[pre]:
        pre += 1
    suf = 0
    while suf < n - pre and a[len(a) - 1 - suf] == b[len(b) - 1 - suf]:
        suf += 1
    return pre, suf


def _rebuild(old: bytes, spans: list[tuple[int, int, bytes]]) -> bytes:
    out, at = [], 0
    for s, e, text in spans:
        out.append(old[at:s])
        out.append(text)
        at = e
    out.append(old[at:])
    return b"".join(out)


def _place(spans: list[tuple[int, int, bytes]]) -> list[Change]:
    out, delta = [], 0
    for s, e, text in spans:
        out.append((s, e, s + delta, s + delta + len(text)))
        delta += len(text) - (e - s)
    return out


def diff(old: bytes, new: bytes) -> list[Change]:
    """Line diff of two buffers as byte-level changes (see the module docstring)."""
    if old == new:
        return []
    a = old.splitlines(keepends=True)
    b = new.splitlines(keepends=True)
    a_off = _offsets(a)
    b_off = _offsets(b)
    out: list[Change] = []
    for a0, a1, b0, b1 in _hunks(a, b, 0, len(a), 0, len(b), 0):
        os_, oe = a_off[a0], a_off[a1]
        ns, ne = b_off[b0], b_off[b1]
        pre, suf = _common(old[os_:oe], new[ns:ne])
        out.append((os_ + pre, oe - suf, ns + pre, ne - suf))
    return out


def _offsets(lines: list[bytes]) -> list[int]:
    out = [0]
    for line in lines:
        out.append(out[-1] + len(line))
    return out


def _hunks(a: list, b: list, a0: int, a1: int, b0: int, b1: int, depth: int) -> list[tuple[int, int, int, int]]:
    while a0 < a1 and b0 < b1 and a[a0] == b[b0]:
        a0 += 1
        b0 += 1
    while a0 < a1 and b0 < b1 and a[a1 - 1] == b[b1 - 1]:
        a1 -= 1
        b1 -= 1
    if a0 == a1 and b0 == b1:
        return []
    if a0 == a1 or b0 == b1 or depth > 8:
        return [(a0, a1, b0, b1)]
    anchors = _unique_anchors(a, b, a0, a1, b0, b1)
    if not anchors:
        return [(a0, a1, b0, b1)]
    out: list[tuple[int, int, int, int]] = []
    pa, pb = a0, b0
    for ia, ib in anchors:
        out += _hunks(a, b, pa, ia, pb, ib, depth + 1)
        pa, pb = ia + 1, ib + 1
    out += _hunks(a, b, pa, a1, pb, b1, depth + 1)
    return out


def _unique_anchors(a: list, b: list, a0: int, a1: int, b0: int, b1: int) -> list[tuple[int, int]]:
    """Lines occurring exactly once on each side, in an order both sides agree on (LIS)."""
    count_a: dict[bytes, int] = {}
    for i in range(a0, a1):
        count_a[a[i]] = count_a.get(a[i], 0) + 1
    count_b: dict[bytes, int] = {}
    pos_b: dict[bytes, int] = {}
    for j in range(b0, b1):
        line = b[j]
        count_b[line] = count_b.get(line, 0) + 1
        pos_b[line] = j
    pairs = [(i, pos_b[a[i]]) for i in range(a0, a1)
             if count_a[a[i]] == 1 and count_b.get(a[i]) == 1 and a[i].strip()]
    if not pairs:
        return []
    # Longest increasing subsequence on the b positions (patience sorting with back links).
    import bisect

    tails: list[int] = []
    tail_idx: list[int] = []
    back: list[int] = [-1] * len(pairs)
    for k, (_, jb) in enumerate(pairs):
        at = bisect.bisect_left(tails, jb)
        if at == len(tails):
            tails.append(jb)
            tail_idx.append(k)
        else:
            tails[at] = jb
            tail_idx[at] = k
        back[k] = tail_idx[at - 1] if at else -1
    seq = []
    k = tail_idx[-1]
    while k >= 0:
        seq.append(pairs[k])
        k = back[k]
    seq.reverse()
    return seq


def line_of(data: bytes, offset: int) -> int:
    """1-based line number of a byte offset."""
    return data.count(b"\n", 0, offset) + 1
