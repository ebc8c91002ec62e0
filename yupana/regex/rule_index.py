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
catalogue against a 200 KB file), search each literal in the text. Both return the same
set (tests/regex/test_rule_index.py).

Storage, read in byte ranges from the hot twin (nothing is unmarshalled per key):
``table`` is an open-addressing array of native ``uint64`` slots, each ``fingerprint << 32 |
posting offset`` (0: empty); ``postings`` native ``uint32``: at an offset, a count then that
many rule ids. A trigram is hashed (a fixed multiplicative hash of its UTF-8 bytes: Python's
own ``hash`` is salted per process) to a first slot and a 32-bit fingerprint; probing runs to
the first empty slot and takes every slot with that fingerprint. Two keys may share a
fingerprint: that only adds a rule the full prefilter then turns away, never loses one.
"""

from __future__ import annotations

import marshal
import sys
import time

GRAM = 3
CASE, FOLD = "c", "f"
KIND = "k"  # kind trigrams (yupana.regex.classgrams): searched in the text's kind string
WINDOW = 256 * 1024  # characters of text turned into trigrams between deadline checks
MAX_CHOICES = 12  # trigrams of one literal weighed when choosing where to file it
_SEED = {CASE: 0x5BD1E995, FOLD: 0x27D4EB2F, KIND: 0x165667B1}
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
    """``values`` as native ``uint32`` (what ``memoryview(...).cast("I")`` reads back). Cold."""
    from array import array

    packed = array("I", values)
    assert packed.itemsize == 4
    return packed.tobytes()


def build(prefilters: list[Any]) -> tuple[dict[str, Any], dict[str, bytes]]:
    """(meta, sections) indexing rule ``i`` by ``prefilters[i]`` (None: always a candidate). Cold."""
    from array import array
    from collections import Counter

    always: list[int] = []
    filed: list[tuple[int, list[str], str]] = []  # (rule, its literal's keys in order, ns + literal)
    short: dict[str, set[int]] = {}
    every: list[str] = []
    for i, pf in enumerate(prefilters):
        if pf is None:
            always.append(i)
            continue
        literals, ci = pf
        ns = ci if isinstance(ci, str) else FOLD if ci else CASE
        for lit in literals:
            if len(lit) < GRAM:
                short.setdefault(ns + lit, set()).add(i)
                continue
            step = max(1, (len(lit) - GRAM) // MAX_CHOICES + 1)  # a long literal offers a spread of its trigrams
            keys = sorted({ns + lit[j:j + GRAM] for j in range(0, len(lit) - GRAM + 1, step)})
            filed.append((i, keys, ns + lit))
            every += keys
    shared = Counter(every)  # how many literals share each key (counted in C, once)
    postings: dict[str, set[int]] = {}
    filed_under: list[tuple[str, str]] = []
    for i, keys, lit in filed:
        key = min(keys, key=shared.__getitem__)  # the first of the least shared (keys are sorted)
        postings.setdefault(key, set()).add(i)
        filed_under.append((lit, key))
    bits = max(4, (2 * len(postings)).bit_length())
    size = 1 << bits
    table = [0] * size
    flat: list[int] = []
    starts: dict[str, int] = {}
    for key, ids in sorted(postings.items()):
        start = starts[key] = len(flat)
        flat.append(len(ids))
        flat.extend(sorted(ids))
        h = _hash(key[0], key[1:])
        slot = h >> (64 - bits)
        while table[slot]:
            slot = (slot + 1) & (size - 1)
        table[slot] = (((h & _MASK32) or 1) << 32) | start
    packed = array("Q", table)
    assert packed.itemsize == 8
    # for the scan: every literal whole (a longer needle is searched faster than its trigram),
    # with the posting it is filed in
    literals = sorted({(lit[0], lit[1:], starts[key]) for lit, key in filed_under})
    meta: dict[str, Any] = {"bits": bits, "keys": len(postings), "literals": len(literals), "always": tuple(always),
            "rules": len(prefilters), "short": {k: tuple(sorted(v)) for k, v in short.items()},
            "namespaces": sorted({k[0] for k in postings} | {k[0] for k in short})}
    if KIND in meta["namespaces"]:
        from yupana.regex.classgrams import table as kinds

        meta["kinds"] = kinds()  # the byte → kind translation the hook applies to the text
    return meta, {"table": packed.tobytes(), "postings": u32_array(flat), "literals": marshal.dumps(literals)}


class Index:
    """The hot side: :meth:`candidates` → the ids of every rule that may match a text.

    ``span(name, start, end)`` reads bytes of a section (``table``, ``postings``, ``literals``) of
    the hot twin: the whole table (8 bytes a slot: 1 MB at 50,000 rules, ~40 µs), and of the
    postings only the few runs a text hits. ``check(name, offset, whole)`` (the hot twin's
    block checksums): the table is then read unchecked (``span(..., False)``) and each slot a
    probe reads is checked first — a lookup checks a few 4 KiB blocks, not the megabyte.
    ``check_bytes``: the size of what one ``check`` covers (a block), so a probe calls it once
    a block, not once a slot.
    """

    __slots__ = ("meta", "span", "check", "check_bytes")

    def __init__(self, meta: dict[str, Any], span: Callable[..., bytes],
                 check: Callable[[str, int, bytes], None] | None = None, check_bytes: int = 8) -> None:
        self.meta = meta
        self.span = span
        self.check = check
        self.check_bytes = max(8, check_bytes)

    def _posting(self, start: int) -> Iterable[int]:
        head = self.span("postings", 4 * start, 4 * start + 4)
        count = int.from_bytes(head, sys.byteorder)
        return memoryview(self.span("postings", 4 * start + 4, 4 * (start + 1 + count))).cast("I")

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
            if ns == KIND:  # one kind a UTF-8 byte (yupana.regex.classgrams), in C
                hays[ns] = text.encode("utf-8", "surrogatepass").translate(self.meta["kinds"]).decode("latin-1")
                continue
            hay = text if ns == CASE else folded()
            if hay is None:
                return None
            hays[ns] = hay
        for key, ids in self.meta["short"].items():
            if key[1:] in hays[key[0]]:
                out.update(ids)
        if not self.meta["keys"]:
            return out
        # probing turns the text into trigrams and hashes each (~150-350 ns a character, all
        # told); scanning searches each literal in the text (~100 ns + ~0.5 ns a character);
        # one RE2 set of every literal costs ~10 µs a literal to build, then ~10 ns a character
        # (and re2's import, ~3 ms, when no rule has run yet): the cheapest
        n, literals = len(text), self.meta["literals"]
        costs = {"probe": 250 * n, "scan": literals * (100 + n // 2),
                 "literal_set": 3_000_000 + literals * 10_000 + 10 * n * len(hays)}
        way = min(costs, key=costs.__getitem__)
        found = getattr(self, way)(hays, deadline_at)
        if found is None:
            return None
        out |= found
        return out

    def probe(self, hays: dict[str, str], deadline_at: float | None) -> set[int] | None:
        """Hash the text's own trigrams into the table, a window at a time."""
        check = self.check
        whole = self.span("table", 0, 8 << self.meta["bits"]) if check is None \
            else self.span("table", 0, 8 << self.meta["bits"], False)
        table = memoryview(whole).cast("Q")
        shift = 64 - self.meta["bits"]
        mask = (1 << self.meta["bits"]) - 1
        per_check = self.check_bytes // 8  # slots one check covers
        checked: set[int] = set()  # of slot // per_check
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
                    while True:
                        if check is not None and slot // per_check not in checked:
                            check("table", 8 * slot, whole)
                            checked.add(slot // per_check)
                        v = table[slot]
                        if not v:
                            break
                        if v >> 32 == fp:
                            out.update(self._posting(v & _MASK32))
                        slot = (slot + 1) & mask
        return out

    def literal_set(self, hays: dict[str, str], deadline_at: float | None) -> set[int] | None:
        """Every literal of a namespace in one RE2 set, matched once over the text (a large
        text): one pass in C, however many literals. The scan when RE2 refuses the set."""
        from yupana.regex.re2_binding import escape, search_set

        by_ns: dict[str, list[tuple[str, int]]] = {}
        for ns, literal, start in marshal.loads(self.span("literals", 0, 1 << 62)):
            by_ns.setdefault(ns, []).append((literal, start))
        out: set[int] = set()
        for ns, items in by_ns.items():
            if deadline_at is not None and time.monotonic() > deadline_at:
                return None
            try:
                hits = search_set([escape(literal) for literal, _ in items]).Match(hays[ns]) or ()
            except Exception:  # noqa: BLE001 - re2.error: a set RE2 will not build is searched literal by literal
                return self.scan(hays, deadline_at)
            for j in hits:
                out.update(self._posting(items[j][1]))
        return out

    def scan(self, hays: dict[str, str], deadline_at: float | None) -> set[int] | None:
        """Search every literal in the text (a small index next to a large text)."""
        every = 1 if max(map(len, hays.values())) > WINDOW // 4 else 64  # a search of a big text is ~ms
        out: set[int] = set()
        for n, (ns, literal, start) in enumerate(marshal.loads(self.span("literals", 0, 1 << 62))):
            if n % every == 0 and deadline_at is not None and time.monotonic() > deadline_at:
                return None
            if literal in hays[ns]:
                out.update(self._posting(start))
        return out
