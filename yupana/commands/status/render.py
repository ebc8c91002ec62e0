"""The human form of ``yupana status``: one aligned ``label : value`` line per fact. Cold path.

Renders the object :func:`yupana.commands.status.gather` builds (the ``--json`` form), so
the two can never disagree. Loud states get a ⚠ line of their own, never a silent field.
"""

from __future__ import annotations

from typing import Any

import time

from yupana.commands.status.health import HOOK_RECORDS

WIDTH = 12
WARN = "⚠"


def render(report: dict[str, Any]) -> str:
    """The whole text, newline-terminated."""
    lines: list[str] = []
    add = _adder(lines)
    _policy(report, add)
    _local_controls(report, add)
    _rule_set(report, add)
    _block_tier(report, add)
    signed = report["signed_rule_set"]
    detail = (f" {signed['version']}, key {signed['key_id']}, confirmed {signed['age_secs']}s ago, from {signed['source']}"
              if signed.get("version") else "")
    last = f"; last refresh failed ({signed['last_error_kind']}: {signed['last_error']})" if signed.get("last_error_kind") else ""
    add("signed rules", f"{signed['state']}{detail} — {signed['note']}{last}")
    _landing(report, add)
    if report.get("tamper"):
        from yupana.commands.status import tamper

        tamper.render(report["tamper"], add, WARN)
    if report.get("rollout"):
        from yupana.commands.status import rollout

        rollout.render(report["rollout"], add)
    _hooks(report, add)
    _clients(report, add)
    from yupana import terminal

    return terminal.show(lines)  # fits the terminal, coloured on one; piped, full width and plain


def _landing(report: dict[str, Any], add: Any) -> None:
    landing = report.get("landing")
    if not landing:
        return
    hook = landing["git_hook"]
    where = (f"git pre-push hook installed at {hook['path']}" if hook["ours"] else
             f"git pre-push hook NOT installed ({hook['path'] or hook['error']})")
    add("landing", f"{landing['effective']} (landing = {landing['setting']}, mode = {landing['mode']} is the ceiling); "
                   f"{where}")
    key = landing["signing_key"]
    if key["key_id"]:
        add("signing key", f"{key['key_id']} at {key['path']}")
    elif key["present"]:
        add("signing key", f"{WARN} {key['path']} cannot be used: {key['error']}")
    else:
        add("signing key", f"absent ({key['path'] or 'signing_key_path unset'}): certifications are written UNSIGNED "
                           "— `yupana landing keygen` creates it")
    last = landing["last"]
    if last is None:
        add("last landing", f"none for this project ({landing['spool']['records']} certification(s) in "
                            f"{landing['spool']['path']})")
    else:
        counts = ", ".join(f"{k.removeprefix('landing-')} {v}" for k, v in sorted(landing["counts"].items()))
        signed = f"signed {last['key_id']}" if last["signed"] else "UNSIGNED"
        add("last landing", f"{last['outcome'].upper()} {_ago(last['age_secs'] or 0)} ago: repo `{last['repo']}` "
                            f"{last['ref'] or ''} {(last['sha'] or '')[:12]} ({signed}) — {last['reason']}")
        add("", f"this project: {counts} (landing spool; never counted with the hooks' records)")
    for note in landing["notes"]:
        add("", f"{WARN} {note}")


def _adder(lines: list[str]) -> Any:
    def add(label: str, text: str) -> None:
        lines.append(f"{label:<{WIDTH}}: {text}" if label else f"{'':<{WIDTH}}  {text}")

    return add


# ── policy ──────────────────────────────────────────────────────────────────────────


def _policy(report: dict[str, Any], add: Any) -> None:
    policy, prov = report["policy"], report["policy_mode_provenance"]
    tenant = report["tenant"]
    add("tenant", f"{tenant} (from {report['tenant_source']})" if tenant
        else "none (pass --tenant or set $BOBBIN_ROLE): no declared scope can apply")
    add("policy", f"mode={policy['mode']}  scope={_scope_text(policy)}")
    if policy["enforcing_without_scope"]:
        if not tenant:
            what = "no tenant is named (--tenant / $BOBBIN_ROLE), so no declared scope applies,"
        elif not policy["scope_configured"]:
            what = f"tenant `{tenant}` has no declared scope"
        else:
            what = f"tenant `{tenant}` has a scope entry that constrains no path (no allow/deny paths, no ceilings)"
        add("", f"{WARN} enforcing without scope: mode=enforce, but {what} and work_item_scope is off — "
                "no path scope is enforced (enforcing_without_scope)")
    add("mode from", _mode_source(report))
    if prov.get("lowered_by_project"):
        add("", f"{WARN} the project config LOWERED the user's mode ({prov.get('user_mode')} → {prov['effective']}): "
                "exit 4")
    wi, act = policy["work_item_scope"], policy["action_scope"]
    add("rungs", f"work_item_scope={_rung(wi)}  action_scope={_rung(act)}  (mode={policy['mode']} is the ceiling)")
    if policy.get("self_protection"):
        add("protect", f"self_protection={_rung(policy['self_protection'])}: the guard's own controls "
                       "(docs/self-protection.md) are refused to agents under enforce, advised under advise")
    scope = policy["scope"]
    if scope is not None:
        add("targets", f"allow={scope['allow_targets']} deny={scope['deny_targets']} (pre-bash action scope, "
                       "for the tenant in $BOBBIN_ROLE)")
    add("guard", f"deadline {policy['deadline_ms']} ms; {policy['local_rules']} local rule(s); "
                 f"{policy['local_tripwires']} local tripwire(s); verify {'on' if policy['verify'] else 'off'}")
    sources = report["config"]["sources"]
    add("config", "; ".join(f"{s['layer']} {s['path']}" for s in sources) if sources
        else "defaults only (no config file found)")
    _floor(report["config"], add)
    for warning in report["config"]["warnings"]:
        add("warning", warning)
    if not policy["notify_on_fail_open"]:
        read = ("fail-open notices go to stderr and the spool only, not to the user's pane"
                if policy["notify_on_fail_open_read"] else
                "meant to keep fail-open notices out of the user's pane (stderr and spool only), but this version "
                "does not read it: the notices still appear")
        add("fail-open", f"notify_on_fail_open = false — {read}")


def _local_controls(report: dict[str, Any], add: Any) -> None:
    controls = report["config"]["controls"]
    if controls["state"] == "ok":
        add("controls", "ok — every local control compiles")
    else:
        count = len(controls["findings"])
        add("controls", f"{WARN} DEGRADED — {count} broken local control{'s' if count != 1 else ''} the hooks cannot "
                        "run as written (exit 3; `yupana config check` for the fixes)")
        for found in controls["findings"]:
            add("", f"{found['file']}: {found['key']}: {found['problem']}")
    for note in controls["notes"]:
        add("note", note)


def _scope_text(policy: dict[str, Any]) -> str:
    scope = policy["scope"]
    if scope is None:
        return "none"
    sym = "—" if scope["max_impacted_symbols"] is None else scope["max_impacted_symbols"]
    files = "—" if scope["max_impacted_files"] is None else scope["max_impacted_files"]
    label = "configured" if policy["scope_constrains_paths"] else "configured but EMPTY"
    return f"{label} (allow={scope['allow_paths']} deny={scope['deny_paths']} sym≤{sym} files≤{files})"


def _floor(config: dict[str, Any], add: Any) -> None:
    """The managed floor in use, and every value a layer tried below it (⚠, exit 4)."""
    managed = config.get("managed") or {}
    if managed.get("present"):
        add("floor", f"managed {managed['path']}")
        if managed.get("writable"):
            add("", f"{WARN} the managed floor is WRITABLE by this user ({', '.join(managed['writable_paths'])}): "
                    "an agent running as it can rewrite the floor; make it root-owned, mode 0644: exit 4")
    else:
        add("floor", f"none (no managed file at {managed.get('path') or '?'})")
    if managed.get("bypassed"):
        add("", f"{WARN} the machine's managed floor {managed['bypassed']} is NOT in use: $YUPANA_MANAGED_CONFIG names "
                "another file (meant for tests and unusual installs; remove it from the hooks' environment): exit 4")
    for low in config.get("lowered") or ():
        add("", f"{WARN} {low['layer']} {low['file']} tried {low['key']} = {_shown(low['value'])}, below its floor "
                f"{_shown(low['floor'])}: ignored, the floor stands — exit 4")


def _shown(value: object) -> str:
    import json

    return json.dumps(value, ensure_ascii=False)


def _mode_source(report: dict[str, Any]) -> str:
    prov = report["policy_mode_provenance"]
    source = prov["source"]
    paths = {s["layer"]: s["path"] for s in report["config"]["sources"]}
    text = {"default": "the default (no file sets it)", "env": "the environment (YUPANA_POLICY__MODE)",
            "managed": f"the managed floor {paths.get('managed', '')}"}.get(
        source, f"{source} file {paths.get(source, '')}".rstrip())
    if prov.get("user_mode") and source != "user":
        text += f" (user file: {prov['user_mode']})"
    return text


def _rung(rung: dict[str, Any]) -> str:
    if rung["setting"] == rung["effective"]:
        return str(rung["setting"])
    return f"{rung['setting']}→{rung['effective']}"


# ── rule set ────────────────────────────────────────────────────────────────────────


def _block_tier(report: dict[str, Any], add: Any) -> None:
    from yupana.block_tier import line

    found = report["rule_set"].get("block_tier")
    if found:
        add("block tier", ("" if found["can_block"] or not found["block_rules"] else f"{WARN} ") + line(found))



def _rule_set(report: dict[str, Any], add: Any) -> None:
    rs = report["rule_set"]
    state = rs["state"]
    inert = " (mode=off: the hooks do not evaluate it)" if report["policy"]["mode"] == "off" else ""
    if state == "off":
        add("rule set", f"off — the governed plane is not configured ({rs['off_reason']}); "
                        f"{rs['local']} local rule(s) apply")
        return
    if state == "degraded":
        miss = rs["miss"] or {}
        add("rule set", f"{WARN} DEGRADED — no servable cache ({miss.get('label', 'absent')}): the guard fails open on "
                        f"governed policy{inert}")
        add("", miss.get("reason", ""))
    else:
        head = {"loaded": "loaded", "empty": "empty — the store holds no governed rules",
                "stale": f"{WARN} STALE — serving last-known policy"}[state]
        add("rule set", f"{head}{inert}")
        add("planes", _counts(rs["counts"]))
        if rs.get("inert_policies"):
            inert = rs["inert_policies"]
            add("inert", f"{WARN} {len(inert)} structural polic{'y' if len(inert) == 1 else 'ies'} never fire "
                         f"(no grammar for their language in this build): "
                         + ", ".join(f"{p['name']} ({p['language']})" for p in inert))
        add("digest", f"{rs['digest']}  (verification: {rs['verification']})")
    age = rs["cache_age_secs"]
    miss = (rs["miss"] or {}).get("label")
    freshness = rs["freshness"] or ("none" if miss in (None, "absent") else f"refused ({miss})")
    shown_age = f", age {age}s" if age is not None else ""
    add("cache", f"{freshness}{shown_age} (refresh every {rs['refresh_interval_secs']}s, "
                 f"refused past ttl {rs['ttl_secs']}s) — {rs['cache_path']}")
    _twin(rs.get("twin"), add)
    add("endpoint", rs["endpoint"])
    add("store", _live(rs["live"]))
    if rs["live"]["checked"] and rs["live"]["ok"] and state in ("degraded", "stale"):
        add("", "the store answers: `yupana project` refreshes the cache now")
    _refresher(rs["refresh"], add)


def _twin(twin: dict[str, Any] | None, add: Any) -> None:
    """The hot twin against the JSON (yupana/state/twin_check.py)."""
    if twin is None:
        return
    state = twin["state"]
    if state == "matches":
        add("twin", f"matches projection.json ({twin['sections']} sections, every checksum good)")
    elif state in ("absent", "out-of-date"):
        add("twin", f"{state} — the next hook derives it from projection.json")
    else:
        what = ("DAMAGED — a hook that reads the damaged part fails open loudly and removes it"
                if state == "damaged" else "MISMATCH — it holds another catalogue than projection.json, and "
                "hooks serve it")
        add("twin", f"{WARN} {what}; delete {twin['path']} (the next hook derives it from the JSON)")
    for problem in twin["problems"][:5] if state not in ("absent", "out-of-date") else ():
        add("", problem)


def _counts(counts: dict[str, Any]) -> str:
    from yupana import planes

    return ", ".join(f"{p.status_words} {'UNKNOWN' if counts[p.status] is None else counts[p.status]}"
                     for p in planes.PLANES if p.status is not None and p.status_words is not None)


def _live(live: dict[str, Any]) -> str:
    if not live["checked"]:
        return f"not asked ({live['why']})"
    if live["ok"]:
        return f"answered in {live['duration_ms']} ms (asked because {live['why']})"
    if live["error_kind"] in ("deadline", "timeout"):
        return (f"{WARN} did NOT answer within {live['budget_secs']:g}s (asked because {live['why']}): "
                f"{live['error_kind']}: {live['error']}")
    return f"{WARN} did NOT answer (asked because {live['why']}): {live['error_kind']}: {live['error']}"


def _refresher(info: dict[str, Any] | None, add: Any) -> None:
    if info is None:
        add("refresher", "no attempt on record for this endpoint (`yupana project` refreshes now)")
        return
    if info.get("running"):
        add("refresher", f"a refresh is running now ({info['running']})")
    if info.get("lock_problem"):
        add("refresher", f"{WARN} the refresh lock is unusable: {info['lock_problem']}")
    if info.get("never_attempted"):
        return
    age = info["last_attempt_age_secs"]
    when = f"{_ago(age)} ago" if age is not None else "at an unknown time"
    if info["consecutive_failures"]:
        add("refresher", f"last attempt {when} FAILED ({info['last_error_kind']}: {info['last_error']}); "
                         f"{info['consecutive_failures']} failure(s) in a row")
        if info["backoff_remaining_secs"]:
            add("", f"back-off: hooks start no refresh for {info['backoff_remaining_secs']}s more; "
                    "`yupana project` retries now")
        else:
            add("", "back-off over: the next hook starts a refresh")
        return
    took = f" in {info['duration_secs']}s" if info.get("duration_secs") is not None else ""
    add("refresher", f"last attempt {when} succeeded{took}")


# ── hooks ───────────────────────────────────────────────────────────────────────────


def _hooks(report: dict[str, Any], add: Any) -> None:
    hooks = report["hooks"]
    window = _span(hooks["window_secs"])
    add("hooks", f"per hook: its last {hooks['last_n']} invocations; counts over the last {window}")
    now = report["now"]
    for hook in HOOK_RECORDS:
        add(f"  {hook}", _hook_line(hooks[hook], window, now, report["policy"]["mode"]))
    other = hooks["unattributed"]
    if other["fail_open"] or other["served_from_cache"]:
        add("", f"plus {other['fail_open']} fail_open and {other['served_from_cache']} served_from_cache record(s) "
                "tied to no hook invocation (older records)")
    spool = report["spool"]
    if not spool["path"]:
        add("spool", f"{WARN} no spool path (set YUPANA_METRICS_PATH, XDG_STATE_HOME or HOME): nothing is recorded")
        return
    read = (f"{spool['records']} record(s)" if spool["read_all"]
            else f"the last {spool['records']} record(s) of {spool['bytes']} bytes")
    add("spool", f"{spool['path']} — {read}" if spool["exists"] else f"{spool['path']} — does not exist yet")
    if spool["write_error"]:
        add("", f"{WARN} records cannot be written ({spool['write_error']}): hook invocations go unrecorded")


def _clients(report: dict[str, Any], add: Any) -> None:
    clients = report.get("clients")
    if not clients:
        return
    add("clients", f"{WARN} DEGRADED: a client's hooks do not run (exit 3)" if clients["state"] == "degraded"
        else "yupana's hooks in each coding client found here, and when this project last saw them run")
    for name in clients.get("names") or ():  # every row of the client registry, in its order
        entry = clients[name]
        label = f"  {entry['install'].rsplit(' ', 1)[-1]}"  # the `yupana install` word: claude, codex, …
        if entry["state"] == "not-found":
            add(label, "not found on this machine")
            continue
        if not entry["registered"]:
            add(label, f"found ({', '.join(entry['found_by'])}); yupana hooks NOT registered (`{entry['install']}`)")
        else:
            head = f"{WARN} DEGRADED (exit 3)" if entry["state"] == "degraded" else "ok"
            add(label, f"{head}; registered: {', '.join(entry['registered'])}; {_last_seen(entry['last_seen'], report['now'])}")
        for reg in entry["registrations"]:
            for hook in reg["hooks"]:
                trust = f", trust {hook['trust']}" if "trust" in hook else ""
                wrapper = "wrapped" if hook["wrapped"] else "NOT wrapped"
                add("", f"{hook['event']}: {reg['scope']} {reg['path']} ({hook['file_event']} `{hook['matcher']}`, "
                        f"timeout {hook['timeout'] if hook['timeout'] is not None else 'client default'}, "
                        f"{wrapper}{trust})")
        for problem in entry["problems"]:
            mark = WARN if problem["degraded"] else "note:"
            add("", f"{mark} {problem['problem']} — fix: {problem['fix']}")
    if clients["unattributed_records"]:
        add("", f"{clients['unattributed_records']} older invocation record(s) name no client/project "
                "(written before yupana recorded them)")


def _last_seen(seen: dict[str, Any], now: int) -> str:
    if seen["at"] is None:
        return "never seen in this project"
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seen["at"]))
    hooks = ", ".join(f"{h} {_ago(now - t)} ago" for h, t in seen["by_hook"].items() if t is not None)
    rec = seen.get("record") or {}
    what = f"; last: {rec['hook']} {rec.get('tool') or '?'} → {rec['result']}" if rec else ""
    return f"last seen {_ago(seen['age_secs'])} ago ({stamp}; {hooks}{what})"


def _hook_line(h: dict[str, Any], window: str, now: int, mode: str) -> str:
    count = f"{'≥' if not h['window_complete'] else ''}{h['invocations_in_window']} in {window}"
    last = h["last_invocation_at"]
    if last is None:
        return f"{count} — never recorded (not registered, or not run yet)"
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(last))
    parts = [f"{count}, last {_ago(h['last_invocation_age_secs'])} ago ({stamp})"]
    if not h["invocations_in_window"] and mode != "off":
        parts[0] += f" {WARN} silent for the whole window: has the hook stopped running?"
    n = h["sampled"]
    if h["duration_ms"]:
        parts.append(f"p50 {h['duration_ms']['p50']} ms, p95 {h['duration_ms']['p95']} ms")
    elif not h["duration_recorded"]:
        parts.append("duration not recorded by this hook")
    kinds = ", ".join(f"{k} {v}" for k, v in sorted(h["fail_open_kinds"].items()))
    parts.append(f"failed open {h['fail_open']}/{n} ({_pct(h['fail_open_rate'])}{': ' + kinds if kinds else ''}), "
                 f"served stale {h['served_from_cache']}/{n} ({_pct(h['served_from_cache_rate'])})")
    parts.append(", ".join(f"{k} {v}" for k, v in sorted(h["results"].items())))
    return "; ".join(parts)


def _pct(rate: float | None) -> str:
    return "—" if rate is None else f"{rate * 100:.0f}%"


def _ago(secs: int) -> str:
    """12s, 5m, 3h, 2d (rounded down)."""
    secs = max(0, int(secs))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if secs >= size:
            return f"{secs // size}{unit}"
    return f"{secs}s"


def _span(secs: int) -> str:
    """A window length, exact: 24h, 7d, 90m, 45s."""
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if secs % size == 0 and secs // size >= (2 if unit == "d" else 1):
            return f"{secs // size}{unit}"
    return f"{secs}s"
