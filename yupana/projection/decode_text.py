"""Text rules and their shared exemption selectors, strictly. Cold path.

Text rule (interop §1.2, docs/vocabulary.md): the name is the IRI after its last ``/``;
``aegis:regex`` (exactly 1, RE2), ``aegis:enforcementTier`` (exactly 1, ``block``|``warn``),
``rdfs:label`` (1..n), ``aegis:identifierClass`` (0..n), ``rdfs:comment`` (0..n, the
rationale), ``aegis:exemptPathRegex`` (0..n, each RE2), ``aegis:exemptionSelector``
(0..n links) and ``aegis:rolloutStage`` (0..1, ``shadow``|``advise``|``enforce``: the
entry's ``stage``, absent when not stated = enforce), and the optional precision properties of
:mod:`yupana.projection.decode_precision` (minimum entropy, secret group, required keywords, content allowlists). Repeated labels, classes and rationales are kept as lists and merged with an
em-dash for the single-string fields the Rust original has.

Exemptions are *alternatives*: the rule's own regexes (sorted) then each linked selector's
(selectors by IRI), de-duplicated, combined into ``(?:a)|(?:b)|…`` — a path that any of
them matches is exempt. A single regex is kept as written, so the rule-set digest matches
the Rust original's for the common case.

Exemption selector: an ``aegis:Selector`` with ``aegis:name`` (1), ``aegis:evidenceSource``
(1, prose), ``aegis:exemptPathRegex`` (0..n, each a non-empty RE2 regex) and a shared content
allowlist (``aegis:allowMatchRegex``, ``aegis:allowStopword``) — at least one of them — read once per
refresh; links on a selector are not followed. A link that is not an IRI, names nothing,
names something that is not a Selector, or a selector with a missing, empty or refused
regex fails the projection — it never becomes an exemption for every file.
"""

from __future__ import annotations

from typing import Any

from yupana.projection.decode_precision import rule_precision, selector_allowlist
from yupana.projection.errors import ProjectionError
from yupana.projection.subject import Subject, merged, name_from_iri, regex
from yupana.projection.vocab import RDFS_COMMENT, RDFS_LABEL, ROLLOUT_STAGES, TEXT_TIERS, A

LINK = A("exemptionSelector")
EXEMPT = A("exemptPathRegex")
STAGE = A("rolloutStage")


def selector_links(rules: dict[str, Subject]) -> list[str]:
    """Every exemption selector IRI the rules link to, sorted (links must be IRIs)."""
    found: set[str] = set()
    for rule in rules.values():
        found.update(rule.links(LINK))
    return sorted(found)


def decode(rules: dict[str, Subject], selectors: dict[str, Subject],
           kept: dict[str, dict[str, Any]] | None = None) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``(text_rules, exemption_selectors)`` for the cache, each sorted by IRI.

    ``kept``: entries of rules not read this refresh (an incremental refresh keeps them
    because neither their triples nor their selectors changed); they take part in the
    selector links and the unique-name check exactly as decoded rules do."""
    kept = kept or {}
    linked_from: dict[str, list[str]] = {}
    for iri in sorted([*rules, *kept]):
        links = rules[iri].links(LINK) if iri in rules else kept[iri]["exemption_selectors"]
        for sel in links:
            linked_from.setdefault(sel, []).append(iri)
    decoded_selectors = {iri: decode_selector(selectors.get(iri) or Subject(iri), rules, linked_from[iri])
                         for iri in sorted(linked_from)}
    text_rules = [decode_rule(rules[iri], decoded_selectors) if iri in rules else kept[iri]
                  for iri in sorted([*rules, *kept])]
    named: dict[str, str] = {}
    for entry in text_rules:
        other = named.setdefault(entry["name"], entry["iri"])
        if other != entry["iri"]:
            raise ProjectionError(entry["iri"], "(subject IRI)", f"its name {entry['name']!r} (the IRI after its last "
                                  f"'/') is also the name of <{other}>; text rule names must be unique")
    return text_rules, [decoded_selectors[iri] for iri in sorted(decoded_selectors)]


def decode_selector(selector: Subject, rules: dict[str, Subject], linked_from: list[str]) -> dict[str, Any]:
    """One linked exemption selector. Link errors name the (first) linking rule."""
    rule = rules.get(linked_from[0]) or Subject(linked_from[0])
    if not selector.predicates():
        raise rule.error(LINK, f"names <{selector.iri}>, about which the store holds nothing; "
                         "an exemption link must name a governed aegis:Selector")
    if not selector.is_a(A("Selector")):
        raise rule.error(LINK, f"names <{selector.iri}>, which is not typed aegis:Selector")
    try:
        name = selector.string(A("name"))
        evidence = selector.string(A("evidenceSource"))
        regexes = [regex(selector, EXEMPT, r) for r in selector.strings(EXEMPT)]
        allowlist = selector_allowlist(selector)
        if not regexes and not allowlist:
            raise selector.error(EXEMPT, "is missing; an exemption selector needs at least one aegis:exemptPathRegex "
                                 "(or a content allowlist: aegis:allowMatchRegex, aegis:allowStopword)")
    except ProjectionError as exc:
        shown = ", ".join(f"<{r}>" for r in linked_from)
        raise ProjectionError(exc.subject, exc.property,
                              f"{exc.message} (exemption selector linked from {shown})") from None
    return {"iri": selector.iri, "name": name, "evidence_source": evidence, "exempt_path_regexes": regexes,
            **allowlist}


def decode_rule(rule: Subject, selectors: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """One text rule as the Rust original's fields plus ``iri`` and the exemption sources."""
    name = name_from_iri(rule)
    pattern = regex(rule, A("regex"), rule.string(A("regex")))
    tier = rule.enum(A("enforcementTier"), TEXT_TIERS, required=True)
    stage = rule.enum(STAGE, ROLLOUT_STAGES)
    labels = rule.strings(RDFS_LABEL, min_count=1)
    classes = rule.strings(A("identifierClass"))
    rationales = rule.strings(RDFS_COMMENT)
    local = [regex(rule, EXEMPT, r) for r in rule.strings(EXEMPT)]
    links = rule.links(LINK)
    alternatives: list[str] = []
    for r in local + [r for sel in links for r in selectors[sel]["exempt_path_regexes"]]:
        if r not in alternatives:
            alternatives.append(r)
    exempt = combine(alternatives)
    if exempt is not None:
        regex(rule, EXEMPT, exempt)
    entry = {
        "iri": rule.iri,
        "name": name,
        "label": merged(labels),
        "labels": labels,
        "pattern": pattern,
        "tier": tier,
        "class": merged(classes),
        "exempt_path_regex": exempt,
        "exempt_path_regexes": local,
        "exemption_selectors": links,
        "rationale": merged(rationales),
        "rationales": rationales,
    }
    if stage is not None:  # absent = enforce; kept out of the entry so an unstaged rule's digest is unchanged
        entry["stage"] = stage
    entry.update(rule_precision(rule, pattern, [selectors[sel] for sel in links]))
    return entry


def combine(alternatives: list[str]) -> str | None:
    """One regex matching whatever any alternative matches (None for none)."""
    if not alternatives:
        return None
    if len(alternatives) == 1:
        return alternatives[0]
    return "|".join(f"(?:{a})" for a in alternatives)
