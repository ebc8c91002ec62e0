"""Deriving the hot twin from a projection cache: what hooks would otherwise compute per call,
laid out so a hook reads only what its edit needs. Cold path (and a hook's rare rebuild).

:func:`derive_hot` adds the derived keys (they start with ``_`` and never appear in
projection.json): each text rule's literal prefilter ``_prefilter`` and required run
``_run``; a memory policy's ``_prefilter``; compiled globs (``_paths`` of a tripwire,
``_applies_to`` of a structural policy); a structural policy's ``_needs`` (the prefilters of
its pattern and gate, :func:`yupana.evaluate.structural.decided_without_parsing`); the
grounding set's ``_needles`` (:func:`grounding_needles`); the repositories' exposure by name
(``_repo_exposure``). :func:`image` lays the result out in
sections (:mod:`yupana.state.hot_view`): every plane in its own, each text rule a record of
its own behind the literal index (:mod:`yupana.regex.rule_index`). A ``memo`` (pattern →
prefilters, from the twin being replaced) spares recomputing what has not changed.
"""

from __future__ import annotations

import marshal
import sys

from yupana import globs
from yupana.planes import BY_KEY
from yupana.regex import prefilter as regex_prefilter
from yupana.regex import rule_index
from yupana.state.hot_view import HOT_FORMAT, INDEX, MAGIC, PLANE, RULE_OFFSETS, RULES, HotFile, TextRules

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from typing import Any

    Memo = dict[str, tuple[Any, Any]]



def prefilters(pattern: str, memo: Memo | None = None) -> tuple[Any, Any]:
    """(literal prefilter, required run) of ``pattern``, from ``memo`` when it has them."""
    if memo is not None:
        found = memo.get(pattern)
        if found is not None:
            return found
    found = regex_prefilter.prefilters(pattern)
    if memo is not None:
        memo[pattern] = found
    return found


def derive_hot(cache: dict[str, Any], memo: Memo | None = None) -> dict[str, Any]:
    """``cache`` with the derived keys added (see the module docstring).

    A glob that does not compile keeps ``None`` tokens; the evaluators turn that into a loud
    fail-open.
    """
    out = dict(cache)
    rules = []
    for rule in cache.get("text_rules") or ():
        rule = dict(rule)
        rule["_prefilter"], rule["_run"] = prefilters(rule.get("pattern") or "", memo)
        rules.append(rule)
    out["text_rules"] = rules
    memory = []
    for pol in cache.get("memory_policies") or ():
        pol = dict(pol)
        pol["_prefilter"] = prefilters(pol.get("command_regex") or "", memo)[0]
        memory.append(pol)
    out["memory_policies"] = memory
    out["tripwires"] = [_with_globs(w, "paths") for w in cache.get("tripwires") or ()]
    policies = []
    for pol in cache.get("policies") or ():
        pol = dict(pol)
        rule = pol.get("rule") or {}
        pol["_applies_to"] = compile_all(rule.get("applies_to") or ())
        pol["_needs"] = {"pattern": prefilters(rule.get("pattern") or "", memo)[0],
                         "gate": prefilters(rule["gate"], memo)[0] if rule.get("gate") else None}
        policies.append(pol)
    out["policies"] = policies
    grounding = cache.get("grounding")
    if isinstance(grounding, dict):
        out["grounding"] = dict(grounding, _needles=grounding_needles(grounding))
    # Hooks look a repository's exposure up by name: one small dict marshals ~4x faster than
    # the entries (the JSON keeps them; a hook never needs their IRI or comment).
    out["_repo_exposure"] = {e["repo"]: e.get("exposure") for e in cache.get("repo_exposure") or ()
                             if isinstance(e, dict) and isinstance(e.get("repo"), str)}
    out["repo_exposure"] = []
    return out


def image(derived: dict[str, Any], header: dict[str, Any]) -> bytes:
    """The hot twin's bytes for ``derived`` (from :func:`derive_hot`); ``header`` says what it
    was derived from (``key``, ``json_sha1``)."""
    meta = {k: v for k, v in derived.items() if k not in BY_KEY and not k.startswith("_")}
    sections: dict[str, bytes] = {}
    for key, value in derived.items():
        if key != "text_rules" and (key in BY_KEY or key.startswith("_")):
            sections[PLANE + key] = marshal.dumps(value)
    rules = derived.get("text_rules") or []
    records = [marshal.dumps(rule) for rule in rules]
    offsets = [0]
    for record in records:
        offsets.append(offsets[-1] + len(record))
    sections[RULES] = b"".join(records)
    sections[RULE_OFFSETS] = rule_index.u32_array(offsets)
    index_meta, index_sections = rule_index.build([rule.get("_prefilter") for rule in rules])
    for name, data in index_sections.items():
        sections[INDEX + name] = data
    languages = sorted({str((p.get("rule") or {}).get("language") or "").lower()
                        for p in derived.get("policies") or ()
                        if (p.get("rule") or {}).get("verification_point") in (None, "PAG")})
    head = dict(header, format=HOT_FORMAT, algorithm=regex_prefilter.ALGORITHM, meta=meta,
                text_rules={"count": len(rules), "index": index_meta}, policy_languages=languages)
    return build(head, sections)


def build(header: dict[str, Any], sections: dict[str, bytes]) -> bytes:
    """The file's bytes: ``header`` plus the section table, then every section."""
    table = {}
    at = 0
    for name, data in sections.items():
        table[name] = (at, len(data))
        at += len(data)
    head = marshal.dumps(dict(header, byteorder=sys.byteorder, sections=table))
    return b"".join([MAGIC, len(head).to_bytes(4, "little"), head, *sections.values()])


def memo_of(file: HotFile) -> Memo:
    """The prefilters a twin already holds, by pattern (empty when derived by other code)."""
    memo: Memo = {}
    if file.header.get("format") != HOT_FORMAT or file.header.get("algorithm") != regex_prefilter.ALGORITHM:
        return memo
    for rule in TextRules(file):
        pattern = rule.get("pattern")
        if isinstance(pattern, str):
            memo[pattern] = (rule.get("_prefilter"), rule.get("_run"))
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
