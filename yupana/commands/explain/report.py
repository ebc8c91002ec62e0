"""The ``yupana explain`` report: a dry run's trace turned into one JSON-ready object. Cold path.

The schema (``schema_version`` 1) is documented in docs/explain.md; :mod:`explain_render`
renders the same object as text, so the two can never disagree.
"""

from __future__ import annotations

from typing import Any

import json

from yupana import planes
from yupana.commands.explain.provenance import Context, allowed_by
from yupana.commands.explain.trace import Trace

SCHEMA_VERSION = 1
INTRODUCED_SHOWN = 400  # characters of introduced text quoted per file
PER_FILE_STAGES = ("scope", "tripwires", "local rules", "governed", "verify", "blast radius", "rule tripwires")
SETTINGS = {"mode": ("policy", "mode"), "deadline_ms": ("policy", "deadline_ms"), "verify": ("policy", "verify"),
            "work_item_scope": ("policy", "work_item_scope"), "action_scope": ("policy", "action_scope"),
            "disk_advisory": ("policy", "disk_advisory"), "quipu.enabled": ("quipu", "enabled"),
            "quipu.endpoint": ("quipu", "endpoint")}


def build(hook: str, hook_from: str, owner: Any, trace: Trace, stdout: str, inv: Any, *, tenant: str | None,
          probe: Any = None) -> dict[str, Any]:
    """The report for one dry run of ``hook`` (``owner``: the Guard / PreBash object, or None)."""
    config_note = trace.first("config")
    snapshot = config_note.detail.get("snapshot") if config_note is not None and config_note.state == "ran" else None
    gov_note = trace.first("policy cache")
    gov = gov_note.detail.get("governed") if gov_note is not None else probe
    ctx = Context(snapshot, gov.cache if gov is not None else None, gov.path if gov is not None else None,
                  inv.edits if inv is not None else [])
    decision = owner.outcome.decision if owner is not None else ("notify" if stdout else "allow")
    stages = _stages(trace, owner, ctx)
    report = {
        "schema_version": SCHEMA_VERSION,
        "hook": hook,
        "hook_from": hook_from,
        "decision": decision,
        "decided_by": _decided_by(stages, decision),
        "stdout": stdout,
        "stdout_json": json.loads(stdout) if stdout else None,
        "exit_code": 0,
        "stderr": trace.stderr.splitlines(),
        "tenant": tenant,
        "invocation": _invocation(hook, inv, owner),
        "config": _config(config_note, snapshot, ctx),
        "policy": _policy(gov, consulted=gov_note is not None, snapshot=snapshot),
        "stages": stages,
        "not_reached": _not_reached(hook, inv, stages),
        "notices": [dict(n, already_shown=n["marker"] is not None and not n["shown"]) for n in trace.notices],
        "records": trace.records,
        "withheld": _withheld(trace, gov if gov_note is not None else None, stages),
        "duration_ms": round((trace.finished - trace.started) * 1000, 1),
    }
    return report


# ── stages ──────────────────────────────────────────────────────────────────────────


def _stages(trace: Trace, owner: Any, ctx: Context) -> list[dict[str, Any]]:
    findings = getattr(owner, "findings", None) or []
    outcome = getattr(owner, "outcome", None)
    crashed = any(r.get("fail_kind") == "internal" for r in trace.records_of("fail_open"))
    out: list[dict[str, Any]] = []
    at: dict[str, Any] = {"findings": 0, "reasons": 0, "messages": 0, "advisories": 0, "context": 0, "t": trace.started,
          "decision": "allow"}
    for n in trace.notes:
        stage: dict[str, Any] = {"stage": n.stage, "state": n.state, "why": n.why or None, "file": n.file,
                       "ms": round((n.at - at["t"]) * 1000, 2)}
        found = n.detail.get("findings") if isinstance(n.detail.get("findings"), list) else None
        if found is None and not crashed:
            found = findings[at["findings"]:n.findings_at]
        stage["findings"] = [finding(f, ctx, owner, trace) for f in found or ()]
        if outcome is not None and not crashed:
            said = {"deny": outcome.reasons[at["reasons"]:n.reasons_at],
                    "notify": (outcome.messages[at["messages"]:n.messages_at]
                               + outcome.advisories[at["advisories"]:n.advisories_at]),
                    "context": [c for c in outcome.context[at["context"]:n.context_at]
                                if c not in outcome.messages[at["messages"]:n.messages_at]]}
            stage["said"] = {k: v for k, v in said.items() if v}
        if n.decision is not None:
            stage["decision_after"] = n.decision
        detail = _detail(n, ctx)
        if detail:
            stage["detail"] = detail
        out.append(stage)
        at = {"findings": max(at["findings"], n.findings_at), "reasons": n.reasons_at, "messages": n.messages_at,
              "advisories": n.advisories_at, "context": n.context_at, "t": n.at,
              "decision": n.decision or at["decision"]}
    return out


def _not_reached(hook: str, inv: Any, stages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """After a blown deadline, the per-file pre-edit checks that never ran (UNKNOWN). Every one
    of these stages reports itself on every path it takes, so a missing one was not reached."""
    if hook != "pre-edit" or inv is None or not any(s["stage"] == "deadline" for s in stages):
        return []
    seen = {(s["stage"], s["file"]) for s in stages}
    return [{"stage": name, "file": e.rel} for e in inv.edits for name in PER_FILE_STAGES if (name, e.rel) not in seen]


def finding(f: Any, ctx: Context, owner: Any, trace: Trace) -> dict[str, Any]:
    """One constraint evaluation, with the response the guard recorded, provenance and what matched."""
    out: dict[str, Any] = {"id": f.id, "plane": f.plane, "outcome": f.outcome, "blocking": bool(f.blocking),
                 "file": f.rel, "message": f.message or None}
    if hasattr(owner, "constraint"):  # pre-edit: exactly the guard record's constraint entry
        recorded = owner.constraint(f)
        out["response"] = recorded["response"]
        for key in ("class", "verification_point", "tier", "freshness", "stage"):
            if recorded.get(key):
                out[key] = recorded[key]
    else:
        if f.class_:
            out["class"] = f.class_
        if f.verification_point:
            out["verification_point"] = f.verification_point
        rec = next((r for r in trace.records_of("memory_policy") if r.get("rule") == f.id), None)
        if rec is not None:
            out["response"] = {"deny": "blocked", "advise": "warned", "notify": "warned"}.get(str(rec.get("result")), "logged")
    if f.extra and f.extra.get("error"):
        out["error"] = f.extra["error"]
    out["provenance"] = ctx.provenance(f)
    matched = ctx.matched(f)
    if matched:
        out["matched"] = matched
    return out


def _decided_by(stages: list[dict[str, Any]], decision: str) -> dict[str, Any] | None:
    """The first stage after which the outcome stood at the final decision, and the constraints
    of that stage that made it (for a deny: the ones that blocked)."""
    if decision == "allow":
        return None
    for s in stages:
        if s.get("decision_after") == decision:
            ids = {f["id"] for f in s["findings"] if f["outcome"] == "unsatisfied"
                   and (decision != "deny" or f.get("response", "blocked") == "blocked")}
            ids |= {a["rule"] for a in (s.get("detail") or {}).get("actions") or () if a.get("rule")}
            return {"stage": s["stage"], "file": s["file"], "constraints": sorted(ids)}
    return None


def _detail(n: Any, ctx: Context) -> dict[str, Any]:
    d = n.detail
    stage = n.stage
    if stage in ("config", "policy cache", "resolution"):
        return {}
    if stage == "local rules":
        return {"rules": [{"name": r.get("name"), "language": r.get("language"), "match_type": r.get("match_type"),
                           "provenance": ctx.local_entry("rules", str(r.get("name")))} for r in d.get("rules") or ()]}
    if stage == "structural":
        armed = [(p.get("rule") or {}).get("name") or p.get("iri") for p in d.get("armed") or ()]
        return {"for": "local rules" if d.get("kind") == "rules" else "governed policies", "language": d.get("language"),
                "armed": armed}
    if stage == "governed":
        text = d.get("text") or {}
        asked = d.get("exposure") or []
        exposure = ({"exposure": asked[0][0], "reason": asked[0][1], "repo": asked[0][2], "source": asked[0][3]}
                    if asked else "not asked: no block-tier text rule fired")
        counts = {p.key: len(ctx.cache.get(p.key) or ()) for p in planes.PLANES if p.stage == "governed"}
        return {"rules": counts, "prefilter_admitted": text.get("admitted", []), "checked_path": text.get("path"),
                "exemptions": text.get("exemptions", []), "no_keyword": text.get("no_keyword", []),
                "allowed": [allowed_by(a, ctx.cache) for a in text.get("allowed", [])], "exposure": exposure}
    if stage in ("scope", "blast radius"):
        tenant = d.get("tenant")
        if tenant is None:
            return {}
        return {"tenant": tenant, "declared": _plain(d.get("declared")),
                "provenance": {"key": f"[yupana.policy.scopes.{tenant}]", **ctx.origin("policy", "scopes", tenant)}}
    if stage == "tripwires":
        return {"wires": [_wire(w, ctx) for w in d.get("wires") or ()]}
    if stage == "throttles":
        return {"active": [{"constraint_id": cid, "until": until} for cid, until in d.get("active") or ()]}
    if stage == "action scope":
        verdicts = [{"target": a.key, "verb": a.verb, "rule": rule, "why": why,
                     "result": "inside" if rule is None else ("deny" if d.get("rung") == "enforce" else "advise")}
                    for a, rule, why in d.get("verdicts") or ()]
        if "tenant" not in d:
            return {}
        return {"tenant": d["tenant"], "rung": d.get("rung"), "allow_targets": d.get("allow"),
                "deny_targets": d.get("deny"), "actions": verdicts,
                "provenance": {"key": f"[yupana.policy.scopes.{d['tenant']}]", **ctx.origin("policy", "scopes", d["tenant"])}}
    if stage == "memory":
        return {"evidence": d.get("evidence"), "read_with_certainty": d.get("certain"),
                "policies": [p.get("name") or p.get("iri") for p in d.get("policies") or ()]}
    if stage == "disk":
        return {k: _plain(d[k]) for k in ("signature", "closed") if d.get(k) is not None}
    return {k: _plain(v) for k, v in d.items() if k not in ("governed", "snapshot", "findings")}


def _wire(w: Any, ctx: Context) -> dict[str, Any]:
    out = {"name": w.name, "source": w.source, "effect": w.effect, "paths": list(w.patterns)}
    if w.rule:
        out["rule"] = w.rule
    if w.class_:
        out["class"] = w.class_
    out["provenance"] = ({"kind": "governed", "iri": w.iri, "plane": "tripwire", "cache": ctx.cache_path}
                         if w.source == "governed"
                         else ctx.local_entry("tripwires", w.name))
    return out


def _plain(value: Any) -> Any:
    """JSON-safe copy: containers recursively, anything else that is not a scalar as text."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items() if not str(k).startswith("_")}
    if isinstance(value, (list, tuple, set)):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


# ── the other sections ──────────────────────────────────────────────────────────────


def _project(project: Any) -> dict[str, Any]:
    """``{"root", "found"}``, and ``nested`` (outermost first) when nested configs apply."""
    out: dict[str, Any] = {"root": project.root, "found": project.found}
    if project.nested:
        out["nested"] = list(project.nested)
    return out


def _invocation(hook: str, inv: Any, owner: Any) -> dict[str, Any]:
    if inv is None:
        return {"parsed": False}
    out: dict[str, Any] = {"parsed": True, "client": inv.client, "tool": inv.tool_name, "event": inv.event, "session": inv.session_id,
                 "tool_use_id": inv.tool_use_id, "cwd": inv.cwd, "problems": list(inv.problems)}
    if inv.project is not None:
        out["project"] = _project(inv.project)
    if hook == "pre-bash":
        reading = getattr(owner, "reading", None)
        out["command"] = getattr(owner, "raw_command", None) or inv.command
        out["commands"] = [c.text() for c in reading.commands if c.argv] if reading is not None else []
        out["uncertain"] = reading.uncertain if reading is not None else None
        out["actions"] = [{"class": a.class_, "verb": a.verb, "target": a.target, "reason": a.reason}
                          for a in getattr(owner, "actions", None) or ()]
        return out
    out["patch"] = inv.patch_call
    out["edits"] = []
    for e in inv.edits:
        edit = {"path": e.path, "rel": e.rel, "op": e.op, "introduced_chars": len(e.introduced),
                "introduced": e.introduced[:INTRODUCED_SHOWN], "problems": list(e.problems)}
        if e.real_rel != e.rel:
            edit["real_rel"] = e.real_rel
        if e.project is not None and e.project.root != inv.project.root:
            edit["project"] = _project(e.project)
        if e.outside:
            edit["outside_project"] = True
        out["edits"].append(edit)
    return out


def _config(note: Any, snapshot: dict[str, Any] | None, ctx: Context) -> dict[str, Any]:
    if note is None:
        return {"state": "not reached"}
    if snapshot is None:
        return {"state": "error", "error": note.why}
    cfg = snapshot["config"]
    settings = {name: (cfg.get(keys[0]) or {}).get(keys[1]) for name, keys in SETTINGS.items()}
    origins = {name: ctx.origin(*keys) for name, keys in SETTINGS.items()}
    return {"state": "resolved", "sources": snapshot.get("sources") or [], "mode": snapshot.get("provenance") or {},
            "settings": settings, "origins": origins, "warnings": snapshot.get("warnings") or []}


def _policy(gov: Any, *, consulted: bool, snapshot: dict[str, Any] | None) -> dict[str, Any]:
    if gov is None and snapshot is None:  # the configuration was never read: configured or not is unknown
        return {"consulted": False, "state": "not-loaded",
                "why": "the configuration did not resolve (see above), so whether a governed plane is configured is not known"}
    if gov is None:
        quipu = ((snapshot or {}).get("config") or {}).get("quipu") or {}
        configured = bool(quipu.get("enabled") and quipu.get("endpoint"))
        return {"consulted": False, "state": "not-loaded" if configured else "off",
                "why": "this invocation did not reach the governed plane" if configured
                else "the governed plane is not configured ([yupana.quipu] enabled = true and an endpoint)"}
    out: dict[str, Any] = {"consulted": consulted, "state": gov.freshness or "unavailable", "note": gov.note(),
                 "age_secs": gov.age_secs, "ttl_secs": gov.ttl_secs, "refresh_interval_secs": gov.interval_secs,
                 "endpoint": gov.endpoint, "cache_path": gov.path, "last_error": gov.last_error,
                 "refresh": {"due": gov.due, "would_start": gov.refresh_started,
                             "backoff_until": gov.backoff_until}}
    if gov.miss is not None:
        out["miss"] = {"label": gov.miss.label, "reason": gov.miss.reason}
    if gov.cache is not None:
        for key in ("written_at", "digest", "source", "dialect"):
            if gov.cache.get(key) is not None:
                out[key] = gov.cache[key]
        out["counts"] = {p.key: len(gov.cache.get(p.key) or ()) for p in planes.PLANES if p.governed}
        from yupana.projection.dump import inert_policies

        out["inert_policies"] = inert_policies(gov.cache)
    return out


def _withheld(trace: Trace, gov: Any, stages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Effects a real hook would have made, which the dry run predicted instead."""
    out: list[dict[str, Any]] = []
    if trace.records:
        out.append({"effect": "spool", "detail": f"{len(trace.records)} record(s) appended to metrics.jsonl "
                                                 "(listed under records)"})
    for n in trace.notices:
        if n["shown"] and n["marker"]:
            out.append({"effect": "marker", "path": n["marker"], "detail": f"once-per-session marker for `{n['kind']}`"})
    if gov is not None and gov.refresh_started:
        out.append({"effect": "refresh-worker", "detail": "one detached `yupana refresh-worker` started "
                                                          "(the cache is due and no refresh holds the lock)"})
    for s in stages:
        exposure = (s.get("detail") or {}).get("exposure") if s["stage"] == "governed" else None
        if isinstance(exposure, dict) and "looking it up in the background" in (exposure.get("reason") or ""):
            out.append({"effect": "exposure-worker", "detail": f"one detached `yupana exposure-worker` for repo "
                                                               f"`{exposure['repo']}`"})
    for rec in trace.records_of("throttle"):
        out.append({"effect": "throttle", "detail": f"back-off for `{rec.get('constraint_id')}` in {rec.get('scope')} "
                                                    f"until {rec.get('until')} written to throttles.jsonl"})
    queued = [r for r in trace.records_of("disk_sample") if r.get("queued")]
    if queued:
        out.append({"effect": "disk-flush", "detail": f"{len(queued)} closed disk sample(s) queued and one detached "
                                                      "`yupana disk-flush` started (unless one is pending)"})
    if any(s["stage"] == "disk" and (s.get("detail") or {}).get("signature") for s in stages):
        out.append({"effect": "disk-sample", "detail": "this command's free-space sample kept open for the session"})
    return out
