"""The projection cache as Turtle in the aegis vocabulary (``project --dump --format turtle``).

The output round-trips: load it into a store, project it again, and the catalogue is the
same (every plane entry, the digest, the grounding set, scopes and parents, the CI map
and the disk-history figures). The cache does not keep everything the store held, so:

* atoms the cache does not identify (a structural or memory policy's selector,
  predicate and operating point; the CI map node; work items, commits and entities) get
  IRIs minted under the subject (``<policy>/selector``) or under :data:`DUMP_NS`;
* every text rule is typed ``aegis:TextRule`` (the cache does not record its subclass);
* the disk history keeps ``n``, ``p90`` and the latest time per key, not the samples: it
  is written as ``n`` observations that reproduce exactly those figures, and says so;
* "not projected" policies and notices are comments (they are not catalogue);
* an UNKNOWN plane (``null``) writes nothing, with a comment: RDF cannot say "unknown".
"""

from __future__ import annotations

from typing import Any

import hashlib
from decimal import Decimal
from urllib.parse import quote

from yupana import planes
from yupana.planes import AEGIS

DUMP_NS = AEGIS + "yupana-dump/"
GROUNDING_QUERY = "SELECT ?id WHERE { ?w a aegis:WorkItem ; aegis:identifier ?id }"

_PN_LOCAL_OK = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")


def render_turtle(cache: dict[str, Any], freshness: dict[str, Any]) -> str:
    out = _Writer()
    out.comment(f"yupana projection of {cache.get('endpoint', '')} ({cache.get('dialect', '?')})")
    out.comment(f"rule set digest {cache.get('digest', '')}; written_at {cache.get('written_at')}")
    out.comment(f"policy {freshness.get('state')}: cache age {freshness.get('age_secs')}s")
    out.comment("Loading this into a store and projecting it again gives the same catalogue; IRIs under")
    out.comment(f"{DUMP_NS} and <policy>/selector|predicate|operating-point are minted by the dump.")
    out.raw("@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .")
    out.raw("@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .")
    out.raw(f"@prefix aegis: <{AEGIS}> .")
    for section in (*planes.renderers("turtle"), _unprojected):
        section(cache, out)
    return out.text()


# ── planes ───────────────────────────────────────────────────────────────────────────


def _structural(cache: dict[str, Any], out: "_Writer") -> None:
    out.heading("structural policies", cache.get("policies"))
    for p in cache.get("policies") or []:
        r = p["rule"]
        sel, pred = p["iri"] + "/selector", p["iri"] + "/predicate"
        out.subject(p["iri"], "aegis:Policy", [
            ("rdfs:label", r["name"]), ("aegis:boundary", "action"), ("aegis:selector", _Iri(sel)),
            ("aegis:predicate", _Iri(pred)), *[("aegis:appliesTo", g) for g in r.get("applies_to") or []],
            ("aegis:effect", p.get("effect")), ("aegis:constraintClass", r.get("class")),
            ("aegis:verificationPoint", r.get("verification_point")), ("aegis:hostedAtLayer", p.get("hosted_at_layer")),
            ("aegis:latencyBudgetMs", _Typed(p.get("latency_budget_ms"), "xsd:integer")),
            ("aegis:backoffFormula", r.get("backoff_formula")), ("aegis:rolloutStage", p.get("stage")),
        ])
        out.subject(sel, "aegis:Selector", [("aegis:name", r["name"]), ("aegis:evidenceSource", r["query"]),
                                            ("aegis:language", r["language"]), ("aegis:tier", "tree-sitter")])
        out.subject(pred, "aegis:Predicate", [("aegis:name", r["name"]), ("aegis:evidenceSource", r["pattern"]),
                                              ("aegis:matchType", r["match_type"]), ("aegis:gate", r.get("gate"))])


def _text_rules(cache: dict[str, Any], out: "_Writer") -> None:
    out.heading("text rules (each typed aegis:TextRule: the cache does not keep the subclass)", cache.get("text_rules"))
    for r in cache.get("text_rules") or []:
        out.subject(r["iri"], "aegis:TextRule", [
            *[("rdfs:label", label) for label in r.get("labels") or []],
            ("aegis:regex", r["pattern"]), ("aegis:enforcementTier", r["tier"]),
            ("aegis:rolloutStage", r.get("stage")), ("aegis:identifierClass", r.get("class")),
            *[("aegis:exemptPathRegex", x) for x in r.get("exempt_path_regexes") or []],
            *[("aegis:exemptionSelector", _Iri(s)) for s in r.get("exemption_selectors") or []],
            *[("rdfs:comment", c) for c in r.get("rationales") or []],
            ("aegis:minEntropy", _Typed(r.get("min_entropy"), "xsd:decimal")), ("aegis:secretGroup", r.get("secret_group")),
            *[("aegis:requiredKeyword", k) for k in r.get("keywords") or []],
            *[("aegis:allowMatchRegex", x) for x in r.get("allow_match_regexes") or []],
            *[("aegis:allowStopword", w) for w in r.get("allow_stopwords") or []],
        ])


def _selectors(cache: dict[str, Any], out: "_Writer") -> None:
    out.heading("shared exemption selectors", cache.get("exemption_selectors"))
    for s in cache.get("exemption_selectors") or []:
        out.subject(s["iri"], "aegis:Selector", [
            ("aegis:name", s["name"]), ("aegis:evidenceSource", s["evidence_source"]),
            *[("aegis:exemptPathRegex", x) for x in s.get("exempt_path_regexes") or []],
            *[("aegis:allowMatchRegex", x) for x in s.get("allow_match_regexes") or []],
            *[("aegis:allowStopword", w) for w in s.get("stopwords") or []],
        ])


def _grounded(cache: dict[str, Any], out: "_Writer") -> None:
    out.heading("grounded predicates", cache.get("grounded_rules"))
    for g in cache.get("grounded_rules") or []:
        out.subject(g["iri"], "aegis:Predicate", [
            ("aegis:name", g["name"]), ("rdfs:label", g.get("label")), ("aegis:evidenceSource", "graph:work-item-id-set"),
            ("aegis:candidateSource", "token"), ("aegis:groundingQuery", GROUNDING_QUERY),
            ("aegis:matchType", g["match_type"]), ("aegis:enforcementTier", g.get("tier")),
            ("aegis:rolloutStage", g.get("stage")), ("rdfs:comment", g.get("rationale")),
        ])
    grounding, scopes, parents = cache.get("grounding"), cache.get("work_item_scopes"), cache.get("work_item_parents")
    ids = set((grounding or {}).get("ids") or [])
    out.heading("work items (the grounding set), scopes and parents", None if grounding is None else grounding["ids"])
    if grounding is None:
        out.comment("grounding set UNKNOWN in this cache: no work items written")
    named = sorted(ids | set(scopes or {}) | {x for pair in (parents or {}).items() for x in pair})
    for item in named:
        out.subject(_item(item), "aegis:WorkItem" if item in ids else None, [("aegis:identifier", item)])
    if scopes is None:
        out.comment("work-item scopes UNKNOWN (or not read: tracker not wired): none written")
    for n, (item, paths) in enumerate(sorted((scopes or {}).items())):
        commit = f"{DUMP_NS}commit_{n}"
        out.subject(commit, None, [("aegis:implements", _Iri(_item(item))),
                                   *[("aegis:modifies", _Iri(_entity(p))) for p in paths]])
    for path in sorted({p for paths in (scopes or {}).values() for p in paths}):
        out.subject(_entity(path), None, [("aegis:filePath", path)])
    if parents is None:
        out.comment("work-item parents UNKNOWN (or not read: tracker not wired): none written")
    for child, parent in sorted((parents or {}).items()):
        out.subject(_item(parent), None, [("aegis:contains", _Iri(_item(child)))])
    status = cache.get("work_item_status")
    if status is None:
        out.comment("work-item status UNKNOWN (or not read: tracker not wired): none written")
    for item, value in sorted((status or {}).items()):
        out.subject(_item(item), None, [("aegis:identifier", item), ("aegis:status", value)])


def _tripwires(cache: dict[str, Any], out: "_Writer") -> None:
    out.heading("governed tripwires", cache.get("tripwires"))
    for w in cache.get("tripwires") or []:
        out.subject(w["iri"], "aegis:Policy", [
            ("rdfs:label", w["name"]), ("aegis:boundary", "action"), *[("aegis:appliesTo", g) for g in w["paths"]],
            ("aegis:effect", w["effect"]), ("aegis:constraintClass", w.get("class")),
            ("aegis:verificationPoint", w.get("verification_point")), ("aegis:hostedAtLayer", w.get("hosted_at_layer")),
            ("aegis:backoffFormula", w.get("backoff_formula")), ("rdfs:comment", w.get("message")),
            ("aegis:rolloutStage", w.get("stage")),
        ])


def _memory(cache: dict[str, Any], out: "_Writer") -> None:
    out.heading("host-memory policies", cache.get("memory_policies"))
    for m in cache.get("memory_policies") or []:
        sel, pred, point = m["iri"] + "/selector", m["iri"] + "/predicate", m["iri"] + "/operating-point"
        out.subject(m["iri"], "aegis:Policy", [
            ("rdfs:label", m["name"]), ("aegis:boundary", "action"), ("aegis:selector", _Iri(sel)),
            ("aegis:predicate", _Iri(pred)), ("aegis:operatingPoint", _Iri(point)), ("aegis:effect", m["effect"]),
            ("aegis:constraintClass", m.get("class")), ("aegis:verificationPoint", m.get("verification_point")),
            ("rdfs:comment", m.get("message")),
        ])
        out.subject(sel, "aegis:Selector", [("aegis:name", "shell-command-line"), ("aegis:evidenceSource", "argv"),
                                            ("aegis:language", "shell"), ("aegis:tier", "live")])
        out.subject(pred, "aegis:Predicate", [("aegis:name", m["name"]), ("aegis:evidenceSource", m["command_regex"]),
                                              ("aegis:matchType", "must-not-match")])
        out.subject(point, "aegis:OperatingPoint", [
            ("aegis:kind", "deterministic_threshold"), ("aegis:threshold", _Typed(_decimal(m["threshold_gib"]), "xsd:decimal")),
            ("aegis:calibrationBasis", m["calibration_basis"]),
        ])


def _ci_map(cache: dict[str, Any], out: "_Writer") -> None:
    ci = cache.get("ci_map")
    out.heading("CI map", None if ci is None else ci.get("jobs"))
    if ci is None:
        out.comment("no CI map in this cache (UNKNOWN): none written")
        return
    jobs = ci.get("jobs") or []
    out.subject(DUMP_NS + "cimap", "aegis:CiMap", [("aegis:coverage", "complete" if ci.get("complete") else "partial"),
                                                   *[("aegis:ciJob", _Iri(j["iri"])) for j in jobs]])
    commands: dict[str, dict[str, Any]] = {}
    for job in jobs:
        out.subject(job["iri"], "aegis:CiJob", [("aegis:name", job["job"]), ("rdfs:label", job["label"]),
                                                *[("aegis:localCommand", _Iri(c["iri"])) for c in job["commands"]]])
        for command in job["commands"]:
            commands.setdefault(command["iri"], command)
    for iri, command in sorted(commands.items()):
        out.subject(iri, "aegis:LocalCommand", [("aegis:command", command["command"]),
                                                *[("aegis:appliesTo", g) for g in command["scopes"]]])


def _exposure(cache: dict[str, Any], out: "_Writer") -> None:
    entries = cache.get("repo_exposure") or []
    out.heading("repository exposure", entries)
    for e in entries:
        out.subject(e["iri"], None, [("aegis:exposure", e["exposure"]), ("rdfs:comment", e.get("comment"))])


def _landing(cache: dict[str, Any], out: "_Writer") -> None:
    entries = cache.get("landing_policies") or []
    out.heading("landing policies", entries)
    policies: dict[str, dict[str, Any]] = {}
    types: dict[str, str] = {}
    for e in entries:
        if e.get("source") == "repository-type" and e.get("repository_type"):
            out.subject(e["iri"], None, [("aegis:repositoryType", _Iri(e["repository_type"]))])
            types[e["repository_type"]] = e["policy"]
        else:
            out.subject(e["iri"], None, [("aegis:landingPolicy", _Iri(e["policy"]))])
        policies.setdefault(e["policy"], e)
    for iri, policy in sorted(types.items()):
        out.subject(iri, "aegis:RepositoryType", [("aegis:landingPolicy", _Iri(policy))])
    for iri, e in sorted(policies.items()):
        out.subject(iri, "aegis:LandingPolicy", [("rdfs:label", e["label"]), *[("aegis:requires", r) for r in e["requires"]]])


def _disk(cache: dict[str, Any], out: "_Writer") -> None:
    history = cache.get("disk_history")
    out.heading("disk-impact history", history)
    if history is None:
        out.comment("disk history UNKNOWN in this cache: no observations written")
        return
    if history:
        out.comment("The cache keeps n, p90 and the latest time per key, not the samples: each key is written")
        out.comment("as n observations (deltaBytes = p90, the newest at the latest time) reproducing those figures.")
    for key, stats in sorted(history.items()):
        signature, _, fs = key.rpartition("|")
        tag = hashlib.sha256(key.encode("utf-8")).hexdigest()[:12]
        for i in range(int(stats["n"])):
            out.subject(f"{DUMP_NS}diskobs_{tag}_{i}", "aegis:CommandDiskImpactObservation", [
                ("aegis:commandSignature", signature), ("aegis:filesystemIdentity", fs),
                ("aegis:deltaBytes", _Typed(stats["p90"], "xsd:integer")),
                ("aegis:observedAt", _Typed(max(0, int(stats["latest"]) - i), "xsd:integer")),
            ])


def _unprojected(cache: dict[str, Any], out: "_Writer") -> None:
    entries = cache.get("unprojected") or []
    notices = cache.get("notices") or []
    if entries:
        out.heading("not projected (comments only: no plane at the action seam enforces these)", entries)
        for u in entries:
            out.comment(f"{u.get('iri')}: {u.get('reason')}")
    if notices:
        out.heading("notices", notices)
        for n in notices:
            out.comment(n)


# ── Turtle writing ───────────────────────────────────────────────────────────────────


class _Iri(str):
    """An object that is an IRI, not a string literal."""


class _Typed:
    """A typed literal (``value`` None means: write nothing)."""

    def __init__(self, value: Any, datatype: str) -> None:
        self.value = value
        self.datatype = datatype


class _Writer:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def raw(self, line: str) -> None:
        self.lines.append(line)

    def comment(self, text: str) -> None:
        for line in str(text).splitlines() or [""]:
            self.lines.append(f"# {line}".rstrip())

    def heading(self, title: str, entries: Any) -> None:
        count = "UNKNOWN" if entries is None else str(len(entries))
        self.lines += ["", f"# ── {title} ({count}) " + "─" * max(3, 70 - len(title) - len(count))]

    def subject(self, iri: str, rdf_type: str | None, pairs: list[tuple[str, object]]) -> None:
        body = [f"a {rdf_type}"] if rdf_type else []
        body += [f"{pred} {_term(value)}" for pred, value in pairs if _present(value)]
        if not body:
            return
        self.lines.append(f"\n{_iri(iri)} " + " ;\n    ".join(body) + " .")

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


def _present(value: Any) -> bool:
    return value is not None and not (isinstance(value, _Typed) and value.value is None)


def _term(value: Any) -> str:
    if isinstance(value, _Iri):
        return _iri(value)
    if isinstance(value, _Typed):
        return f"{_string(str(value.value))}^^{value.datatype}"
    return _string(str(value))


def _iri(iri: str) -> str:
    if iri.startswith(AEGIS):
        local = iri[len(AEGIS):]
        if local and local[0] not in "-" and set(local) <= _PN_LOCAL_OK:
            return "aegis:" + local
    escaped = "".join(c if c not in '<>"{}|^`\\ ' and ord(c) > 0x20 else f"%{ord(c):02X}" for c in iri)
    return f"<{escaped}>"


def _string(text: str) -> str:
    escaped = (text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
               .replace("\t", "\\t"))
    return f'"{escaped}"'


def _decimal(value: Any) -> str:
    text = format(Decimal(repr(float(value))), "f")
    return text if "." in text else text + ".0"


def _item(identifier: str) -> str:
    return DUMP_NS + "workitem_" + quote(identifier, safe="")


def _entity(path: str) -> str:
    return DUMP_NS + "entity_" + quote(path, safe="")
