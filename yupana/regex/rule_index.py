"""An n-gram index over the rules' required literals: which rules can match this text,
found without looking at the others. Built on the cold path, read by hooks.

A rule whose literal prefilter (:mod:`yupana.regex.prefilter`) is ``(literals, ci)`` can
match only a text containing one of its literals (case-folded when ``ci``). Each literal is
filed under one of its trigrams — the one fewest other literals share — in the namespace
``c`` (case-sensitive) or ``f`` (case-folded); a literal shorter than a trigram is filed
whole, among the few ``short`` keys. A text is looked up by its own trigrams: every literal
it contains has all its trigrams in the text, the filed one included, so every rule whose
prefilter admits the text is among the rules returned. The caller then checks each returned
rule's full prefilters; rules with no literal prefilter are ``always`` returned.

Two ways to look up, chosen by cost: hash the text's trigrams into the table (cost grows with
the text, not with the catalogue), or, when the index is small next to the text (the bundled
catalogue against a 200 KB file), search each filed trigram in the text. Both return the same
set (tests/regex/test_rule_index.py).

Storage, read through memoryviews of the mapped hot twin (nothing is unmarshalled per key):
``table`` is an open-addressing array of native ``uint64`` slots, each ``fingerprint << 32 |
posting offset`` (0: empty); ``postings`` native ``uint32``: at an offset, a count then that
many rule ids. A trigram is hashed (a fixed multiplicative hash of its UTF-8 bytes: Python's
own ``hash`` is salted per process) to a first slot and a 32-bit fingerprint; probing runs to
the first empty slot and takes every slot with that fingerprint. Two keys may share a
fingerprint: that only adds a rule the full prefilter then turns away, never loses one.
"""

from __future__ import annotations

import marshal
import time

GRAM = 3
CASE, FOLD = "c", "f"
WINDOW = 256 * 1024  # characters of text turned into trigrams between deadline checks
_SEED = {CASE: 0x5BD1E995, FOLD: 0x27D4EB2F}
_MIX = 0x9E3779B97F4A7C15
_MASK64 = (1 << 64) - 1
_MASK32 = (1 << 32) - 1

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any


def _hash(ns: str, gram: str) -> int:
    h = int.from_bytes(gram.encode("utf-8", "surrogatepass"), "little") ^ _SEED[ns]
    return ((h ^ (h >> 64)) * _MIX) & _MASK64


def u32_array(values: list[int]) -> bytes:
    """``values`` as native ``uint32`` (what ``memoryview(...).cast("I")`` reads back)."""
    buf = bytearray(4 * len(values))
    view = memoryview(buf).cast("I")
    for i, v in enumerate(values):
        view[i] = v
    return bytes(buf)


def build(prefilters: list[Any]) -> tuple[dict[str, Any], dict[str, bytes]]:
    """(meta, sections) indexing rule ``i`` by ``prefilters[i]`` (None: always a candidate)."""
    always: list[int] = []
    filed: list[tuple[int, str, set[str]]] = []
    short: dict[str, set[int]] = {}
    shared: dict[tuple[str, str], int] = {}
    for i, pf in enumerate(prefilters):
        if pf is None:
            always.append(i)
            continue
        literals, ci = pf
        ns = FOLD if ci else CASE
        for lit in literals:
            if len(lit) < GRAM:
                short.setdefault(ns + lit, set()).add(i)
                continue
            grams = {lit[j:j + GRAM] for j in range(len(lit) - GRAM + 1)}
            filed.append((i, ns, grams))
            for gram in grams:
                shared[ns, gram] = shared.get((ns, gram), 0) + 1
    postings: dict[tuple[str, str], set[int]] = {}
    for i, ns, grams in filed:
        gram = min(grams, key=lambda g: (shared[ns, g], g))
        postings.setdefault((ns, gram), set()).add(i)
    bits = max(4, (2 * len(postings)).bit_length())
    size = 1 << bits
    table = [0] * size
    flat: list[int] = []
    keys: list[tuple[str, str, int]] = []
    for (ns, gram), ids in sorted(postings.items()):
        start = len(flat)
        flat.append(len(ids))
        flat.extend(sorted(ids))
        keys.append((ns, gram, start))
        h = _hash(ns, gram)
        slot = h >> (64 - bits)
        while table[slot]:
            slot = (slot + 1) & (size - 1)
        table[slot] = (((h & _MASK32) or 1) << 32) | start
    packed = bytearray(8 * size)
    view = memoryview(packed).cast("Q")
    for i, v in enumerate(table):
        view[i] = v
    meta = {"bits": bits, "keys": len(postings), "always": tuple(always), "rules": len(prefilters),
            "short": {k: tuple(sorted(v)) for k, v in short.items()},
            "namespaces": sorted({ns for ns, _ in postings} | {k[0] for k in short})}
    return meta, {"table": bytes(packed), "postings": u32_array(flat), "keys": marshal.dumps(keys)}


class Index:
    """The hot side: :meth:`candidates` → the ids of every rule that may match a text.

    ``section(name)`` gives a section (``table``, ``postings``, ``keys``) of the mapped hot
    twin as a buffer; the arrays are cast in place, so only the pages a lookup touches are read.
    """

    __slots__ = ("meta", "section")

    def __init__(self, meta: dict[str, Any], section: Callable[[str], Any]) -> None:
        self.meta = meta
        self.section = section

    def candidates(self, text: str, folded: Callable[[], str | None],
                   deadline_at: float | None = None) -> set[int] | None:
        """Ids of the rules that may match ``text`` (``always`` included); None when
        ``deadline_at`` (time.monotonic) passed first. ``folded()`` is ``text.casefold()``
        (None when the deadline cut the folding)."""
        out = set(self.meta["always"])
        if not text:
            return out
        hays: dict[str, str] = {}
        for ns in self.meta["namespaces"]:
            hay = text if ns == CASE else folded()
            if hay is None:
                return None
            hays[ns] = hay
        for key, ids in self.meta["short"].items():
            if key[1:] in hays[key[0]]:
                out.update(ids)
        if not self.meta["keys"]:
            return out
        # probing hashes each trigram of the text (~0.5 µs); scanning searches each filed
        # trigram in the text (C speed, ~0.2 ns a character): take the cheaper
        if self.meta["keys"] * (1 + len(text) // 5000) < len(text) // 2:
            found = self.scan(hays, deadline_at)
        else:
            found = self.probe(hays, deadline_at)
        if found is None:
            return None
        out |= found
        return out

    def _ids(self, postings: Any, start: int) -> Iterable[int]:
        return postings[start + 1:start + 1 + postings[start]]

    def probe(self, hays: dict[str, str], deadline_at: float | None) -> set[int] | None:
        """Hash the text's own trigrams into the table, a window at a time."""
        table = self.section("table").cast("Q")
        postings = self.section("postings").cast("I")
        shift = 64 - self.meta["bits"]
        mask = (1 << self.meta["bits"]) - 1
        seeds = _SEED
        out: set[int] = set()
        for ns, hay in hays.items():
            seed = seeds[ns]
            last = len(hay) - GRAM + 1
            for at in range(0, max(last, 0), WINDOW):
                if deadline_at is not None and time.monotonic() > deadline_at:
                    return None
                for gram in {hay[i:i + GRAM] for i in range(at, min(last, at + WINDOW))}:
                    h = int.from_bytes(gram.encode("utf-8", "surrogatepass"), "little") ^ seed
                    h = ((h ^ (h >> 64)) * _MIX) & _MASK64
                    slot = h >> shift
                    fp = (h & _MASK32) or 1
                    v = table[slot]
                    while v:
                        if v >> 32 == fp:
                            out.update(self._ids(postings, v & _MASK32))
                        slot = (slot + 1) & mask
                        v = table[slot]
        return out

    def scan(self, hays: dict[str, str], deadline_at: float | None) -> set[int] | None:
        """Search every filed trigram in the text (a small index next to a large text)."""
        postings = self.section("postings").cast("I")
        every = 1 if max(map(len, hays.values())) > WINDOW // 4 else 64  # a search of a big text is ~ms
        out: set[int] = set()
        for n, (ns, gram, start) in enumerate(marshal.loads(self.section("keys"))):
            if n % every == 0 and deadline_at is not None and time.monotonic() > deadline_at:
                return None
            if gram in hays[ns]:
                out.update(self._ids(postings, start))
        return out
