"""The human form of ``yupana explain``: the decision first, then one section per stage. Cold path.

Renders the object :func:`yupana.commands.explain.report.build` makes (the ``--json``
form), so the two can never disagree.
"""

from __future__ import annotations

from typing import Any

import json
import textwrap

WIDTH = 10
STATE = {"ran": "ran", "skipped": "skipped", "unknown": "UNKNOWN"}
CLIP = 160
MAX_WIRES = 10


def render(report: dict[str, Any]) -> str:
    """The whole text, newline-terminated."""
    lines: list[str] = []
    _head(report, lines)
    _invocation(report, lines)
    _stages(report, lines)
    _notices(report, lines)
    _records(report, lines)
    _withheld(report, lines)
    from yupana import terminal

    return terminal.show(lines)  # fits the terminal, coloured on one; piped, full width and plain


def _add(lines: list[str], label: str, text: str) -> None:
    lines.append(f"{label:<{WIDTH}}  {text}" if label else f"{'':<{WIDTH}}  {text}")


def _clip(text: str | None, limit: int = CLIP) -> str:
    text = (text or "").replace("\n", "⏎ ")
    return text if len(text) <= limit else text[: limit - 1] + "…"


# ── the answer ──────────────────────────────────────────────────────────────────────


def _head(report: dict[str, Any], lines: list[str]) -> None:
    lines.append(f"yupana explain: {report['hook']} (hook from {report['hook_from']}) — a dry run of the real hook; "
                 "nothing was written")
    lines.append("")
    decision = report["decision"].upper()
    by = report.get("decided_by")
    if by:
        where = f" by {by['stage']}" + (f" on {by['file']}" if by.get("file") else "")
        rules = f": {', '.join(by['constraints'])}" if by.get("constraints") else ""
        decision += where + rules
    elif report["decision"] == "allow":
        decision += " (empty stdout: the harness's own permission flow decides)"
    _add(lines, "DECISION", decision)
    stdout = report["stdout"]
    _add(lines, "stdout", stdout if stdout else "(empty)")
    _add(lines, "", f"exactly what `yupana hook {report['hook']}` would print; exit {report['exit_code']}")
    for line in report["stderr"]:
        _add(lines, "stderr", line)
    _policy(report["policy"], lines)
    _config(report, lines)


def _policy(policy: dict[str, Any], lines: list[str]) -> None:
    if policy["state"] in ("off", "not-loaded"):
        _add(lines, "policy", policy["why"])
        return
    state = policy["state"]
    head = {"fresh": "fresh", "stale": "STALE", "unavailable": "UNAVAILABLE (fail-open)"}.get(state, state)
    age = f"cache age {policy['age_secs']}s" if policy.get("age_secs") is not None else "no servable cache"
    text = f"{head}, {age} (ttl {policy['ttl_secs']}s, refresh every {policy['refresh_interval_secs']}s)"
    if not policy["consulted"]:
        text += " — not consulted by this invocation"
    _add(lines, "policy", text)
    if policy.get("miss"):
        _add(lines, "", f"miss `{policy['miss']['label']}`: {policy['miss']['reason']}")
    if policy.get("last_error"):
        _add(lines, "", f"last refresh failed: {policy['last_error']}")
    refresh = policy["refresh"]
    if refresh["due"]:
        _add(lines, "", "a refresh is due: " + ("a detached refresh would be started" if refresh["would_start"]
                                                else "none would start now (running, backing off, or not consulted)"))
    _add(lines, "", f"endpoint {policy['endpoint']}; cache {policy['cache_path']}")
    if policy.get("counts"):
        counts = ", ".join(f"{v} {k.replace('_', ' ')}" for k, v in policy["counts"].items())
        _add(lines, "", f"{policy.get('digest', '')} — {counts}")
    for inert in policy.get("inert_policies") or ():
        _add(lines, "", f"INERT structural policy {inert['name']} ({inert['language']}): no grammar in this build, "
                        "it never fires")


def _config(report: dict[str, Any], lines: list[str]) -> None:
    config = report["config"]
    if config["state"] != "resolved":
        _add(lines, "config", config.get("error") or config["state"])
        return
    s, mode = config["settings"], config["mode"]
    _add(lines, "config", f"mode {s['mode']} (from {mode.get('source', '?')}); deadline {s['deadline_ms']} ms; "
                          f"tenant {report['tenant'] or 'none'}")
    sources = config["sources"]
    _add(lines, "", "files: " + ("; ".join(f"{x['layer']} {x['path']}" for x in sources) if sources
                                 else "none (defaults only)"))
    for warning in config["warnings"]:
        _add(lines, "", f"warning: {warning}")


def _invocation(report: dict[str, Any], lines: list[str]) -> None:
    inv = report["invocation"]
    lines += ["", "Invocation"]
    if not inv["parsed"]:
        lines.append("  the payload was not read (not a JSON object)")
        return
    lines.append(f"  client {inv.get('client') or 'unknown (nothing in the payload tells)'}, tool {inv['tool']}, "
                 f"session {inv['session']}, cwd {inv['cwd']}")
    if inv.get("project"):
        lines.append(f"  project root {_project(inv['project'])}")
    if "command" in inv:
        lines.append(f"  command: {_clip(inv['command'])}")
        if inv.get("uncertain"):
            lines.append(f"  read with uncertainty: {inv['uncertain']}")
        for a in inv.get("actions") or ():
            lines.append(f"  action: {a['class']}:{a['target']} ({a['verb']})" if a["class"] != "unknown"
                         else f"  action: unknown — {a['reason']}")
    for e in inv.get("edits") or ():
        real = f" (really {e['real_rel']})" if e.get("real_rel") else ""
        where = " (outside the project root)" if e.get("outside_project") else ""
        lines.append(f"  {e['op']} {e['rel']}{real}{where}: {e['introduced_chars']} chars introduced"
                     + (f": {_clip(e['introduced'], 100)!r}" if e["introduced"] else ""))
        if e.get("project"):
            lines.append(f"    judged under project root {_project(e['project'])}")
        for p in e["problems"]:
            lines.append(f"    problem: {p}")
    for p in inv.get("problems") or ():
        lines.append(f"  problem: {p}")


def _project(project: dict[str, Any]) -> str:
    how = {"file": "the outermost .bobbin/config.toml above the file",
           "real": "the outermost .bobbin/config.toml above the file's real path (none above the path named)",
           "cwd": "the outermost .bobbin/config.toml above the cwd (none above the file, or no file)",
           "none": "no .bobbin/config.toml found: user configuration only"}.get(project["found"], project["found"])
    nested = project.get("nested") or ()
    tighter = f"; nested, tightening only: {', '.join(nested)}" if nested else ""
    return f"{project['root']} ({how}{tighter})"


# ── stages ──────────────────────────────────────────────────────────────────────────


def _stages(report: dict[str, Any], lines: list[str]) -> None:
    lines += ["", "Stages (in the hook's order)"]
    for s in report["stages"]:
        where = f" [{s['file']}]" if s.get("file") else ""
        why = f" — {s['why']}" if s.get("why") else ""
        lines.append(f"  {s['stage']:<17} {STATE.get(s['state'], s['state']):<8}{where}{why}")
        for f in s["findings"]:
            _finding(f, lines)
        _detail(s, lines)
        for kind, label in (("deny", "→ deny"), ("notify", "→ notice"), ("context", "→ to the model")):
            for text in (s.get("said") or {}).get(kind, ()):
                lines.extend(_wrap(f"{label}: {text}", "      "))
    missed = report.get("not_reached") or []
    if missed:
        lines.extend(_wrap("not reached (UNKNOWN: the deadline ran out first): "
                           + ", ".join(f"{m['stage']} [{m['file']}]" for m in missed), "  "))


def _finding(f: dict[str, Any], lines: list[str]) -> None:
    flags = [f["outcome"].upper() if f["outcome"] != "satisfied" else "satisfied", f["plane"]]
    if f.get("response"):
        flags.append(f["response"])
    if f["blocking"]:
        flags.append("blocking")
    for key in ("class", "verification_point", "tier", "freshness", "stage"):
        if f.get(key):
            flags.append(f"{key.replace('_', ' ')} {f[key]}")
    lines.append(f"      • {f['id']} ({', '.join(flags)})")
    prov = f["provenance"]
    lines.append(f"          from {_provenance(prov)}")
    matched = f.get("matched")
    if matched and (f["outcome"] != "satisfied" or f["id"].startswith("scope-declared:")):
        lines.append(f"          matched {_matched(matched)}")
    if f.get("error"):
        lines.append(f"          error: {f['error']}")
    if f.get("message") and f["outcome"] != "satisfied":
        lines.extend(_wrap(f"says: {f['message']}", "          "))


def _provenance(p: dict[str, Any]) -> str:
    if p.get("iri"):
        return f"{p['iri']} (governed, plane {p.get('plane')}; cache {p.get('cache')})"
    if p["kind"] == "guard":
        return f"the guard itself ({p['what']})"
    where = _origin(p)
    if p["kind"] == "local":
        entry = p.get("key", "")
        if "index" in p:
            entry += f" #{p['index']}"
        if p.get("name"):
            entry += f" name = {p['name']!r}"
        return f"{entry} in {where}"
    if p.get("plane") == "work_item_scopes":
        return f"the projection's work-item scopes (cache {p.get('cache')}); rung from {_origin(p['rung'])}"
    if p.get("plane") == "disk_history":
        return f"the projection's disk history `{p.get('key')}`"
    return json.dumps(p, sort_keys=True)


def _origin(o: dict[str, Any]) -> str:
    if o.get("layer") == "env":
        return f"${o['variable']}"
    if o.get("path"):
        return f"{o['layer']} {o['path']}"
    return "the built-in default"


def _matched(m: dict[str, Any]) -> str:
    if "text" in m:
        text = f"`{_clip(m['text'], 80)}` by /{m.get('pattern')}/ (tier {m.get('tier')})"
        if m.get("exemption"):
            text += f"; exemption /{_clip(m['exemption'], 80)}/ did not match {m.get('path')}"
        return text
    if "violations" in m:
        shown = "; ".join(f"{_clip(v['text'], 80)!r} (line {v['line']})" if v.get("text") else "nothing matching"
                          for v in m["violations"][:3])
        return f"{shown} among {m['captures']} capture(s)"
    if "tokens" in m:
        return "references " + ", ".join(f"`{t}`" for t in m["tokens"][:5])
    if "glob" in m:
        return f"path {m['path']} by glob `{m['glob']}`" + (f", rule `{m['rule']}`" if m.get("rule") else "")
    if "deny_paths" in m:
        return f"{' / '.join(m['path'])} by deny_paths `{m['deny_paths']}`"
    if "allow_paths" in m:
        if isinstance(m["allow_paths"], str):
            return f"{' / '.join(m['path'])}: allow_paths {m['allow_paths']}"
        admitted = ", ".join(f"{n} by `{g}`" if g else f"{n} by none" for n, g in (m.get("admitted_by") or {}).items())
        return f"allow_paths {m['allow_paths']}: {admitted}"
    return json.dumps(m, sort_keys=True, ensure_ascii=False)


def _detail(s: dict[str, Any], lines: list[str]) -> None:
    d = s.get("detail") or {}
    pad = "      "
    if s["stage"] == "governed" and d:
        lines.append(f"{pad}rules in the cache: " + ", ".join(f"{v} {k.replace('_', ' ')}" for k, v in d["rules"].items())
                     + f"; the literal prefilter admitted {len(d['prefilter_admitted'])}"
                     + (f" ({', '.join(d['prefilter_admitted'][:8])})" if d["prefilter_admitted"] else ""))
        for e in d["exemptions"]:
            verdict = (f"EXEMPTED (matched `{e.get('exempted_by')}`"
                       + (f"; the pattern would have matched {', '.join(repr(w) for w in e['would_match'])}"
                          if e.get("would_match") else "") + ")") if e["exempted"] else "not exempted"
            lines.append(f"{pad}exemption of {e['rule']} ({e.get('iri')}): /{_clip(e['regex'], 100)}/ on "
                         f"{e['path']} → {verdict}")
        if d.get("no_keyword"):
            lines.append(f"{pad}not run, no required keyword in the text: {', '.join(d['no_keyword'][:8])}")
        for a in d.get("allowed") or ():
            by = f"; by the {' and the '.join(a['by'])}" if a.get("by") else ""
            lines.append(f"{pad}allowed match of {a['rule']}: `{_clip(a['match'], 60)}` ({a['why']}{by})")
        exposure = d["exposure"]
        lines.append(f"{pad}exposure: " + (exposure if isinstance(exposure, str) else
                                           f"{exposure['exposure']} (repo {exposure['repo']}"
                                           + (f"; {exposure['reason']}" if exposure.get("reason") else "") + ")"))
    elif s["stage"] == "local rules":
        for r in d.get("rules") or ():
            lines.append(f"{pad}rule {r['name']} ({r['language']}, {r['match_type']}) from {_provenance(r['provenance'])}")
    elif s["stage"] == "structural" and d and s["state"] != "skipped":
        lines.append(f"{pad}{d['for']} for {d['language']}: {', '.join(str(a) for a in d.get('armed') or []) or 'none'}")
    elif s["stage"] in ("scope", "blast radius") and d:
        lines.append(f"{pad}tenant {d['tenant']}: {json.dumps(d['declared'], sort_keys=True)} from "
                     f"{_origin(d['provenance'])}")
    elif s["stage"] == "tripwires":
        wires = d.get("wires") or []
        if len(wires) > MAX_WIRES:
            lines.append(f"{pad}{len(wires)} wires (the first {MAX_WIRES} below; --json lists them all)")
        for w in wires[:MAX_WIRES]:
            prov = w["provenance"]
            lines.append(f"{pad}wire {w['name']} ({w['source']}, {w['effect']}, paths {w['paths']}"
                         + (f", rule {w['rule']}" if w.get("rule") else "") + ") from "
                         + (prov["iri"] if prov.get("iri") else _provenance(prov)))
    elif s["stage"] == "action scope" and d:
        lines.append(f"{pad}tenant {d['tenant']} ({d['rung']}): allow_targets {d['allow_targets']}, deny_targets "
                     f"{d['deny_targets']} from {_origin(d['provenance'])}")
        for a in d["actions"]:
            lines.append(f"{pad}{a['target']} ({a['verb']}): {a['result']}" + (f" — {a['why']}" if a["rule"] else ""))
    elif s["stage"] == "memory" and d:
        lines.append(f"{pad}policies {d['policies']} against {d['evidence']}"
                     + ("" if d["read_with_certainty"] else " (read with uncertainty: never blocks)"))
    elif s["stage"] == "throttles":
        for a in d.get("active") or ():
            lines.append(f"{pad}active back-off {a['constraint_id']} until {a['until']}")
    elif d:
        lines.append(f"{pad}{json.dumps(d, sort_keys=True, ensure_ascii=False)}")


def _wrap(text: str, pad: str) -> list[str]:
    out: list[str] = []
    for i, part in enumerate(text.split("\n")):
        first = pad if i == 0 else pad + "  "
        out += textwrap.wrap(part, width=110, initial_indent=first, subsequent_indent=pad + "  ",
                             break_long_words=False, break_on_hyphens=False) or [first]
    return out


# ── what it would have left behind ──────────────────────────────────────────────────


def _notices(report: dict[str, Any], lines: list[str]) -> None:
    if not report["notices"]:
        return
    lines += ["", "Once-per-session notices"]
    for n in report["notices"]:
        if n["marker"] is None:
            state = "shown every time (no session id)"
        elif n["already_shown"]:
            state = f"would be shown once per session — already shown in this session ({n['marker']}), so suppressed"
        else:
            state = f"would be shown once per session — first time in this session (marker {n['marker']})"
        lines.append(f"  {n['kind']}: {state}")


def _records(report: dict[str, Any], lines: list[str]) -> None:
    lines += ["", f"Records it would write to the spool ({len(report['records'])})"]
    for rec in report["records"]:
        body = {k: v for k, v in rec.items() if k not in ("kind", "ts")}
        lines.append(f"  {rec['kind']}: {_clip(json.dumps(body, ensure_ascii=False), 300)}")


def _withheld(report: dict[str, Any], lines: list[str]) -> None:
    effects = [e for e in report["withheld"] if e["effect"] != "spool"]
    if not effects:
        return
    lines += ["", "Not done (a real hook would have)"]
    for e in effects:
        lines.append(f"  {e['effect']}: {e['detail']}" + (f" — {e['path']}" if e.get("path") else ""))
