"""Deriving the hot twin from a projection cache: what hooks would otherwise compute per call,
laid out so a hook reads only what its edit needs. Cold path (and a hook's rare rebuild).

:func:`derive_hot` adds the derived keys (they start with ``_`` and never appear in
projection.json): each text rule's literal prefilter ``_prefilter`` and required run
``_run``; a memory policy's ``_prefilter``; compiled globs (``_paths`` of a tripwire,
``_applies_to`` of a structural policy); a structural policy's ``_needs`` (the prefilters of
its pattern and gate, :func:`yupana.evaluate.structural.decided_without_parsing`); the
grounding set's ``_needles`` (:func:`grounding_needles`); the repositories' exposure by name
(``_repo_exposure``). :func:`image` lays the result out in sections
(:mod:`yupana.state.hot_view`): every plane in its own, each text rule a record of its own
behind the literal index (:mod:`yupana.regex.rule_index`).

A refresh rarely changes every plane. Given the digest of each plane's JSON and the twin
being replaced (``prior``), :func:`image` copies the sections of every plane whose digest the
prior twin recorded unchanged, byte for byte, and derives only the others — with the prior
twin's prefilters for every pattern it already analysed (``memo``).
"""

from __future__ import annotations

import marshal
import sys

from yupana import globs
from yupana.planes import BY_KEY, PLANES
from yupana.regex import prefilter as regex_prefilter
from yupana.regex import rule_index
from yupana.state.hot_view import (BLOCK, HOT_FORMAT, INDEX, MAGIC, PLANE, RULE_OFFSETS, RULES, Corrupt, HotFile,
                                   TextRules, seed)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    Memo = dict[str, tuple[Any, Any, Any]]

# The header fields a plane's sections come with (copied with them when reused).
_EXTRAS = {"text_rules": ("text_rules",), "policies": ("policy_languages",)}


def prefilters(pattern: str, memo: Memo | None = None, *, remember: bool = True) -> tuple[Any, Any, Any]:
    """(literal prefilter, required run, kind trigrams) of ``pattern``, from ``memo`` when it
    has them (and added to it, unless not ``remember``)."""
    if memo is not None:
        found = memo.get(pattern)
        if found is not None:
            return found
    found = regex_prefilter.analyse(pattern)
    if memo is not None and remember:
        memo[pattern] = found
    return found


def derive_plane(key: str, value: Any, memo: Memo | None = None, *, lazy: bool = False) -> dict[str, Any]:
    """The derived top-level keys of plane ``key`` holding ``value`` (``repo_exposure`` also
    gives ``_repo_exposure``). A glob that does not compile keeps ``None`` tokens; the
    evaluators turn that into a loud fail-open. ``lazy``: the text rules as an iterator, each
    derived as it is taken (the twin's writer marshals them one by one; the new patterns'
    prefilters are not added to ``memo``, which would keep 50,000 of them alive)."""
    if key == "text_rules":
        rules = (_text_rule(rule, memo, not lazy) for rule in value or ())
        return {key: rules if lazy else list(rules)}
    if key == "memory_policies":
        memory = []
        for pol in value or ():
            pol = dict(pol)
            pol["_prefilter"] = prefilters(pol.get("command_regex") or "", memo)[0]
            memory.append(pol)
        return {key: memory}
    if key == "tripwires":
        return {key: [_with_globs(w, "paths") for w in value or ()]}
    if key == "policies":
        policies = []
        for pol in value or ():
            pol = dict(pol)
            rule = pol.get("rule") or {}
            pol["_applies_to"] = compile_all(rule.get("applies_to") or ())
            pol["_needs"] = {"pattern": prefilters(rule.get("pattern") or "", memo)[0],
                             "gate": prefilters(rule["gate"], memo)[0] if rule.get("gate") else None}
            policies.append(pol)
        return {key: policies}
    if key == "grounding" and isinstance(value, dict):
        return {key: dict(value, _needles=grounding_needles(value))}
    if key == "repo_exposure":
        # Hooks look a repository's exposure up by name: one small dict marshals ~4x faster
        # than the entries (the JSON keeps them; a hook never needs their IRI or comment).
        return {key: [], "_repo_exposure": {e["repo"]: e.get("exposure") for e in value or ()
                                            if isinstance(e, dict) and isinstance(e.get("repo"), str)}}
    return {key: value}


def derive_hot(cache: dict[str, Any], memo: Memo | None = None) -> dict[str, Any]:
    """``cache`` with the derived keys added (see the module docstring)."""
    out = dict(cache)
    for key in _planes_of(cache):
        out.update(derive_plane(key, _value(cache, key), memo))
    return out


def _planes_of(cache: dict[str, Any]) -> list[str]:
    """The planes a twin of ``cache`` holds: every list plane (empty when absent), the
    object planes ``cache`` has."""
    return [p.key for p in PLANES if p.shape == "list" or p.key in cache]


def _value(cache: dict[str, Any], key: str) -> Any:
    value = cache.get(key)
    return (value or []) if BY_KEY[key].shape == "list" else value


def image(cache: dict[str, Any], header: dict[str, Any], *, digests: dict[str, str] | None = None,
          prior: HotFile | None = None) -> list[bytes]:
    """The hot twin of ``cache`` as the chunks of one file; ``header`` says what it was derived
    from (``key``, ``json_sha1``). ``digests`` (each plane's JSON digest) and ``prior`` (the
    twin being replaced): a plane whose digest ``prior`` recorded is copied from it."""
    digests = digests or {}
    usable = prior is not None and prior.header.get("format") == HOT_FORMAT \
        and prior.header.get("algorithm") == regex_prefilter.ALGORITHM
    before: dict[str, str] = prior.header.get("plane_digests") or {} if usable and prior is not None else {}
    memo: list[Memo] = []  # built from the prior twin on first need

    def memo_once() -> Memo:
        if not memo:
            memo.append(memo_of(prior) if usable and prior is not None else {})
        return memo[0]

    sections: dict[str, bytes] = {}
    extras: dict[str, Any] = {}
    for key in _planes_of(cache):
        digest = digests.get(key)
        if digest is not None and before.get(key) == digest and prior is not None and _reuse(prior, key, sections,
                                                                                               extras):
            continue
        derived = derive_plane(key, _value(cache, key), memo_once(), lazy=True)
        if key == "text_rules":
            _text_rule_sections(derived[key], sections, extras)
        else:
            _plane_sections(key, derived, sections, extras)
    for key in (k for k in cache if k.startswith("_")):  # already derived (a twin rebuilt from another)
        sections[PLANE + key] = marshal.dumps(cache[key])
    meta = {k: v for k, v in cache.items() if k not in BY_KEY and not k.startswith("_")}
    head = dict(header, format=HOT_FORMAT, algorithm=regex_prefilter.ALGORITHM, meta=meta,
                plane_digests={k: v for k, v in digests.items() if k in BY_KEY}, **extras)
    return build(head, sections)


def _plane_sections(key: str, derived: dict[str, Any], sections: dict[str, bytes], extras: dict[str, Any]) -> None:
    for name, value in derived.items():
        sections[PLANE + name] = marshal.dumps(value)
    if key == "policies":
        extras["policy_languages"] = sorted({
            str((p.get("rule") or {}).get("language") or "").lower() for p in derived[key]
            if (p.get("rule") or {}).get("verification_point") in (None, "PAG")})


def _text_rule(rule: dict[str, Any], memo: Memo | None, remember: bool) -> dict[str, Any]:
    rule = dict(rule)
    rule["_prefilter"], rule["_run"], rule["_kinds"] = prefilters(rule.get("pattern") or "", memo, remember=remember)
    return rule


def index_key(rule: dict[str, Any]) -> Any:
    """What the index files ``rule`` under, the most selective first: its pattern's literal
    prefilter when every literal is a trigram or longer; else its required keywords
    (case-folded; the rule cannot fire on a text without one, docs/vocabulary.md), so a
    keyword-anchored generic rule is not run on every edit; else its kind trigrams
    (:mod:`yupana.regex.classgrams`, namespace ``k``) unless its literals are of two characters
    and prose has most of the trigrams; else its short literals; else nothing (always a candidate)."""
    found = rule.get("_prefilter")
    if found is not None and all(len(lit) >= rule_index.GRAM for lit in found[0]):
        return found
    keywords = rule.get("keywords")
    if keywords:
        return tuple(sorted({str(k).casefold() for k in keywords}, key=lambda x: (-len(x), x))), True
    kinds = rule.get("_kinds")
    if not kinds:
        return found
    from yupana.regex.classgrams import prose_common, rare_share

    by_kind = tuple(kinds), rule_index.KIND
    if found is None or (not any(map(prose_common, kinds))
                         and (rare_share(by_kind[0]) >= 0.5 or all(len(lit) == 1 for lit in found[0]))):
        return by_kind
    return found


def _text_rule_sections(rules: Iterable[dict[str, Any]], sections: dict[str, Any], extras: dict[str, Any]) -> None:
    """The derived text rules marshalled as they come (one record each, behind their offsets
    and the literal index): 50,000 derived rules are never all alive at once."""
    records: list[bytes] = []
    offsets = [0]
    filters = []
    for rule in rules:
        record = marshal.dumps(rule)
        records.append(record)
        offsets.append(offsets[-1] + len(record))
        filters.append(index_key(rule))
    sections[RULES] = records
    sections[RULE_OFFSETS] = rule_index.u32_array(offsets)
    index_meta, index_sections = rule_index.build(filters)
    for name, data in index_sections.items():
        sections[INDEX + name] = data
    extras["text_rules"] = {"count": len(filters), "index": index_meta}


def _reuse(prior: HotFile, key: str, sections: dict[str, bytes], extras: dict[str, Any]) -> bool:
    """Copy plane ``key``'s sections and header fields from ``prior``; False when it lacks one."""
    names = [n for n in prior.header["sections"] if _owner(n) == key]
    fields = _EXTRAS.get(key, ())
    if not names or any(f not in prior.header for f in fields):
        return False
    try:
        copied = {name: prior.raw(name) for name in names}  # each checked against its checksums
    except Corrupt:
        return False  # a damaged prior twin is derived again, never copied
    sections.update(copied)
    for field in fields:
        extras[field] = prior.header[field]
    return True


def _owner(section: str) -> str:
    """The plane a section belongs to (``_repo_exposure`` is ``repo_exposure``'s)."""
    if section.startswith("text_rules:"):
        return "text_rules"
    name = section[len(PLANE):] if section.startswith(PLANE) else section
    return "repo_exposure" if name == "_repo_exposure" else name


def build(header: dict[str, Any], sections: dict[str, Any]) -> list[bytes]:
    """The file's chunks: ``header`` plus the section table and the checksum table, then every
    section (bytes, or a list of the chunks it is made of: the text rules' records are never
    joined in memory), then each section's block checksums (:mod:`yupana.state.hot_view`)."""
    from binascii import crc32

    table = {}
    chunks: list[bytes] = []
    at = 0
    for name, data in sections.items():
        parts = data if isinstance(data, list) else [data]
        size = sum(len(part) for part in parts)
        table[name] = (at, size)
        at += size
        chunks.extend(parts)
    checks = {}
    for name, data in sections.items():
        sums = block_checksums(data if isinstance(data, list) else [data], seed(header, name), crc32)
        checks[name] = (at, len(sums) // 4)
        at += len(sums)
        chunks.append(sums)
    head = marshal.dumps(dict(header, byteorder=sys.byteorder, sections=table, checks=checks))
    return [MAGIC, len(head).to_bytes(4, "little"), crc32(head).to_bytes(4, "little"), head, *chunks]


def block_checksums(parts: list[bytes], start: int, crc32: Any) -> bytes:
    """The CRC-32 (from ``start``) of every :data:`BLOCK` bytes of ``parts`` joined, as native
    ``uint32`` — computed across the parts' boundaries without joining them."""
    sums: list[int] = []
    crc, filled = start, 0
    for part in parts:
        view = memoryview(part)
        while view:
            take = view[:BLOCK - filled]
            crc = crc32(take, crc)
            filled += len(take)
            view = view[len(take):]
            if filled == BLOCK:
                sums.append(crc)
                crc, filled = start, 0
    if filled:
        sums.append(crc)
    return rule_index.u32_array(sums)


def memo_of(file: HotFile) -> Memo:
    """The prefilters a twin already holds, by pattern (empty when derived by other code)."""
    memo: Memo = {}
    if file.header.get("format") != HOT_FORMAT or file.header.get("algorithm") != regex_prefilter.ALGORITHM:
        return memo
    try:
        for rule in TextRules(file).each():
            pattern = rule.get("pattern")
            if isinstance(pattern, str):
                memo[pattern] = (rule.get("_prefilter"), rule.get("_run"), rule.get("_kinds"))
    except (Corrupt, KeyError, TypeError):
        return {}  # a damaged prior twin lends nothing: every pattern is analysed again
    return memo


def grounding_needles(grounding: dict[str, Any]) -> list[str]:
    """What a text must contain for any of its tokens to ground or to be an unresolvable
    reference (:func:`yupana.evaluate.grounded.may_reference`): ``P-`` for every prefix (those
    of the set, and the head of every dashed id, which each such id contains), and every id
    without a dash whole."""
    ids = [i for i in grounding.get("ids") or () if isinstance(i, str)]
    heads = {i.rsplit("-", 1)[0] for i in ids if "-" in i} | {p for p in grounding.get("prefixes") or ()
                                                              if isinstance(p, str)}
    return sorted({h + "-" for h in heads} | {i for i in ids if "-" not in i})


def _with_globs(entry: dict[str, Any], key: str) -> dict[str, Any]:
    entry = dict(entry)
    entry["_" + key] = compile_all(entry.get(key) or ())
    return entry


def compile_all(patterns: list[Any] | tuple[Any, ...]) -> list[Any] | None:
    try:
        return [globs.compile_glob(p) for p in patterns]
    except globs.GlobError:
        return None
