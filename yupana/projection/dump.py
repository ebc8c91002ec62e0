"""What the projection cache holds, for an operator auditing the catalogue. Cold path.

:func:`render` formats a cache (docs/cache-format.md) three ways:

* ``table`` — a header with the endpoint, digest, freshness and age (and, given
  ``block_tier``, whether block-tier text rules can block in this repository and why
  not: :mod:`yupana.block_tier`), then one section
  per plane with its count: rule names, tiers, effects, classes, verification points,
  patterns, globs and exemptions, then the "not projected" list and the notices. Wide
  values are cut with "…" at each column's cap; a table wider than the terminal is cut
  further or shown one record per row (:mod:`yupana.terminal`); piped, full
  width; ``--json`` has every value whole.
* ``json`` — the cache object plus ``freshness`` (``fresh``/``stale``), ``age_secs``
  and, given it, ``block_tier``, keys sorted, two-space indent (the stable schema of docs/cache-format.md);
  ``project --dump --json`` adds ``schema`` (``yupana.project.dump/1``) and ``yupana_version``.
* ``turtle`` — the projection as RDF in the aegis vocabulary
  (:mod:`yupana.projection.dump_turtle`): loading it into a store and projecting again
  gives the same catalogue.

A plane that is UNKNOWN (``null`` in the cache) is shown as UNKNOWN, never as empty.
"""

from __future__ import annotations

from typing import Any

import json
import time

from yupana import planes

FORMATS = ("table", "json", "turtle")


def render(cache: dict[str, Any], *, fmt: str, freshness: dict[str, Any], block_tier: dict[str, Any] | None = None,
           stamp: dict[str, Any] | None = None) -> str:
    """The dump of ``cache`` in ``fmt`` (``table``, ``json`` or ``turtle``).

    ``freshness`` is ``{"state": "fresh"|"stale", "age_secs": int, "endpoint": str,
    "ttl_secs": int}``: every rendering states it, because stale is never fresh.
    ``block_tier`` is :func:`yupana.block_tier.assess` for the project dumped from; ``stamp``
    the keys of the ``--json`` convention (docs/json.md), added to the JSON form."""
    if fmt == "json":
        return render_json(cache, freshness, block_tier, stamp)
    if fmt == "turtle":
        from yupana.projection.dump_turtle import render_turtle

        text = render_turtle(cache, freshness)
        return text if block_tier is None else f"# {_block_tier_line(block_tier)}\n" + text
    if fmt == "table":
        return render_table(cache, freshness, block_tier)
    raise ValueError(f"unknown dump format {fmt!r} (use one of {', '.join(FORMATS)})")


def render_json(cache: dict[str, Any], freshness: dict[str, Any], block_tier: dict[str, Any] | None = None,
                stamp: dict[str, Any] | None = None) -> str:
    out = dict(stamp or {})
    out.update(cache)
    out["freshness"] = freshness["state"]
    out["age_secs"] = freshness["age_secs"]
    if block_tier is not None:
        out["block_tier"] = block_tier
    inert = inert_policies(cache)
    if inert:  # the cache plus freshness, and a policy that never fires named, never silent
        out["inert_policies"] = inert
    return json.dumps(out, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


# ── table ────────────────────────────────────────────────────────────────────────────


def render_table(cache: dict[str, Any], freshness: dict[str, Any], block_tier: dict[str, Any] | None = None) -> str:
    lines = _header(cache, freshness)
    if block_tier is not None:
        lines.append(f"  {_block_tier_line(block_tier)}")
    for section in (*planes.renderers("table"), _unprojected, _notices):
        lines.append("")
        lines.extend(section(cache))  # type: ignore[arg-type]  # the plane registry's renderers are typed object
    from yupana import terminal

    return terminal.show(lines)


def _header(cache: dict[str, Any], freshness: dict[str, Any]) -> list[str]:
    state = freshness.get("state") or "stale"
    age = freshness.get("age_secs")
    written = cache.get("written_at")
    when = time.strftime("%Y-%m-%d %H:%M:%SZ", time.gmtime(written)) if isinstance(written, int) else "unknown"
    mark = "fresh" if state == "fresh" else "STALE"
    return [
        f"yupana projection  {cache.get('endpoint', '')}  ({cache.get('dialect', '?')})",
        f"  policy {mark}: cache age {age}s (served up to {freshness.get('ttl_secs')}s), confirmed {when}",
        f"  rule set digest {cache.get('digest', '')}",
    ]


def _section(title: str, entries: Any, note: str = "") -> list[str]:
    return [f"{title} ({len(entries)})" + (f" — {note}" if note else "")]


def inert_policies(cache: dict[str, Any]) -> list[dict[str, Any]]:
    """``{name, iri, language}`` of each structural policy no grammar of this build can parse:
    projected, but it never fires (shown as INERT, never silently)."""
    from yupana.codegraph.parse import has_grammar

    out = []
    for p in cache.get("policies") or []:
        rule = p.get("rule") or {}
        if not has_grammar(rule.get("language")):
            out.append({"name": rule.get("name"), "iri": p.get("iri"), "language": rule.get("language")})
    return out


def _structural(cache: dict[str, Any]) -> list[str]:
    from yupana.codegraph.parse import GRAMMARS, has_grammar

    policies = cache.get("policies") or []
    rows = []
    inert = inert_policies(cache)
    for p in policies:
        r = p.get("rule") or {}
        lang = r.get("language") if has_grammar(r.get("language")) else f"{r.get('language')} INERT"
        effect = p.get("effect") if p.get("stage") in (None, "enforce") else f"{p.get('effect')} ({p['stage']})"
        rows.append([r.get("name"), lang, r.get("match_type"), effect, r.get("class"),
                     r.get("verification_point"), _globs(r.get("applies_to")), r.get("pattern"),
                     r.get("gate"), r.get("query")])
    note = (f"{len(inert)} INERT: no grammar for their language in this build ({', '.join(GRAMMARS)}), "
            "they never fire") if inert else ""
    return _section("STRUCTURAL POLICIES", policies, note) + _table(
        ["NAME", "LANG", "MATCH", "EFFECT (STAGE)", "CLASS", "POINT", "APPLIES TO", "PATTERN", "GATE", "QUERY"],
        rows, [32, 16, 14, 16, 10, 12, 34, 34, 16, 40])


def _text_rules(cache: dict[str, Any]) -> list[str]:
    rules = cache.get("text_rules") or []
    names = {s["iri"]: s.get("name") for s in cache.get("exemption_selectors") or []}
    rows = []
    for r in rules:
        exempt = list(r.get("exempt_path_regexes") or [])
        exempt += [f"@{names.get(iri) or _tail(iri)}" for iri in r.get("exemption_selectors") or []]
        rows.append([r.get("name"), r.get("tier"), r.get("stage") or "enforce", r.get("class"), r.get("label"),
                     r.get("pattern"), ", ".join(exempt) or "-", precision(r)])
    return _section("TEXT RULES", rules) + _table(
        ["NAME", "TIER", "STAGE", "CLASS", "LABEL", "PATTERN", "EXEMPT (regex, @shared selector)",
         "PRECISION (own; a selector's allowlist: below)"], rows, [36, 5, 7, 20, 30, 40, 60, 60])


def precision(rule: dict[str, Any]) -> str:
    """A text rule's own precision properties in one cell (docs/vocabulary.md "Precision"):
    ``entropy>=3.5 of <secret>; keyword: password|secret; allow: /^x/, 'example'``; "-" for none."""
    parts = []
    if rule.get("min_entropy") is not None:
        group = rule.get("secret_group")
        parts.append(f"entropy>={rule['min_entropy']:g}" + (f" of <{group}>" if group else ""))
    elif rule.get("secret_group"):
        parts.append(f"secret <{rule['secret_group']}>")
    if rule.get("keywords"):
        parts.append("keyword: " + "|".join(rule["keywords"]))
    allow = allowlist(rule.get("allow_match_regexes"), rule.get("allow_stopwords"))
    if allow != "-":
        parts.append("allow: " + allow)
    return "; ".join(parts) or "-"


def allowlist(regexes: Any, stopwords: Any) -> str:
    """A content allowlist in one cell: ``/regex/`` and ``'stopword'`` items, "-" for none."""
    items = [f"/{x}/" for x in regexes or []] + [f"'{w}'" for w in stopwords or []]
    return ", ".join(items) or "-"


def _selectors(cache: dict[str, Any]) -> list[str]:
    selectors = cache.get("exemption_selectors") or []
    users: dict[str, int] = {}
    for r in cache.get("text_rules") or []:
        for iri in r.get("exemption_selectors") or []:
            users[iri] = users.get(iri, 0) + 1
    rows = [[s.get("name"), str(users.get(s["iri"], 0)), ", ".join(s.get("exempt_path_regexes") or []) or "-",
             allowlist(s.get("allow_match_regexes"), s.get("stopwords")), s.get("evidence_source")]
            for s in selectors]
    return _section("SHARED EXEMPTION SELECTORS", selectors) + _table(
        ["NAME", "RULES", "EXEMPT PATH REGEXES", "CONTENT ALLOWLIST (regex, stopword)", "WHAT THE PATHS ARE"],
        rows, [24, 5, 60, 60, 60])


def _grounded(cache: dict[str, Any]) -> list[str]:
    rules = cache.get("grounded_rules") or []
    rows = [[r.get("name"), r.get("match_type"), r.get("tier"), r.get("stage") or "enforce", r.get("label")]
            for r in rules]
    out = _section("GROUNDED RULES", rules) + _table(["NAME", "MATCH", "TIER", "STAGE", "LABEL"], rows,
                                                     [36, 16, 5, 7, 60])
    grounding = cache.get("grounding")
    if grounding is None:
        if rules:
            out.append("  grounding set: UNKNOWN — the grounded rules are not evaluated until a refresh reads it")
    else:
        ids = grounding.get("ids") or []
        out.append(f"  grounding set: {len(ids)} work-item id{'s' if len(ids) != 1 else ''}; prefixes "
                   + (", ".join(grounding.get("prefixes") or []) or "(none)"))
    return out


def _tripwires(cache: dict[str, Any]) -> list[str]:
    wires = cache.get("tripwires") or []
    rows = [[w.get("name"), w.get("effect") if w.get("stage") in (None, "enforce") else f"{w.get('effect')} ({w['stage']})",
             w.get("class"), w.get("verification_point"),
             _backoff(w.get("backoff")), _globs(w.get("paths")), w.get("message")] for w in wires]
    return _section("TRIPWIRES", wires) + _table(
        ["NAME", "EFFECT (STAGE)", "CLASS", "POINT", "BACK-OFF", "PATHS", "MESSAGE"], rows, [32, 17, 10, 12, 22, 50, 50])


def _memory(cache: dict[str, Any]) -> list[str]:
    policies = cache.get("memory_policies") or []
    rows = [[m.get("name"), f"{m.get('threshold_gib'):g} GiB" if isinstance(m.get("threshold_gib"), (int, float)) else "?",
             m.get("effect"), m.get("class"), m.get("verification_point"), m.get("command_regex")] for m in policies]
    return _section("HOST-MEMORY POLICIES", policies, "floor in GiB of MemAvailable") + _table(
        ["NAME", "FLOOR", "EFFECT", "CLASS", "POINT", "COMMAND REGEX"], rows, [32, 10, 6, 10, 12, 60])


def _ci_map(cache: dict[str, Any]) -> list[str]:
    ci = cache.get("ci_map")
    if ci is None:
        return ["CI MAP: none — UNKNOWN (a push is never certified unaffected without a map)"]
    jobs = ci.get("jobs") or []
    coverage = "complete" if ci.get("complete") else "partial"
    rows = [[j.get("job"), j.get("label"), c.get("command"), _globs(c.get("scopes"))]
            for j in jobs for c in j.get("commands") or []]
    return [f"CI MAP ({coverage}, {len(jobs)} job{'s' if len(jobs) != 1 else ''})"] + _table(
        ["JOB", "LABEL", "LOCAL COMMAND", "SCOPES"], rows, [20, 32, 48, 50])


def _exposure(cache: dict[str, Any]) -> list[str]:
    entries = cache.get("repo_exposure") or []
    rows = [[e.get("repo"), e.get("exposure"), e.get("comment")] for e in entries]
    return _section("REPOSITORY EXPOSURE", entries, "what the graph states; a block-tier text rule blocks only in a "
                    "public repository") + _table(["REPO", "EXPOSURE", "COMMENT"], rows, [36, 9, 80])


def _landing(cache: dict[str, Any]) -> list[str]:
    entries = cache.get("landing_policies") or []
    rows = [[e.get("repo"), _tail(e.get("policy") or ""), ", ".join(e.get("requires") or ()),
             "its own" if e.get("source") == "repository" else f"type {_tail(e.get('repository_type') or '')}",
             e.get("label")] for e in entries]
    return _section("LANDING POLICIES", entries, "what a push must show to be certified (yupana hook pre-push); a "
                    "repository not listed has none: UNKNOWN, never certified") + _table(
        ["REPO", "POLICY", "REQUIRES", "FROM", "LABEL"], rows, [36, 28, 44, 28, 60])


def _block_tier_line(found: dict[str, Any]) -> str:
    from yupana.block_tier import line

    return "block tier: " + line(found)


def _work_items(cache: dict[str, Any]) -> list[str]:
    scopes, parents = cache.get("work_item_scopes"), cache.get("work_item_parents")
    out = ["WORK ITEMS"]
    if scopes is None:
        out.append("  scopes (observed rung): UNKNOWN — not read (tracker not wired) or the read failed")
    else:
        out.append(f"  scopes (observed rung): {len(scopes)} item{'s' if len(scopes) != 1 else ''}")
        out += _table(["ITEM", "PATHS"], [[k, _globs(v)] for k, v in scopes.items()], [20, 90])
    if parents is None:
        out.append("  parents (derived rung): UNKNOWN — not read (tracker not wired) or the read failed")
    else:
        by_parent: dict[str, list[str]] = {}
        for child, parent in parents.items():
            by_parent.setdefault(parent, []).append(child)
        out.append(f"  parents (derived rung): {len(parents)} item{'s' if len(parents) != 1 else ''} under "
                   f"{len(by_parent)} parent{'s' if len(by_parent) != 1 else ''}")
        out += _table(["PARENT", "CHILDREN"], [[p, ", ".join(sorted(c))] for p, c in sorted(by_parent.items())], [20, 90])
    return out


def _disk(cache: dict[str, Any]) -> list[str]:
    history = cache.get("disk_history")
    if history is None:
        return ["DISK-IMPACT HISTORY: UNKNOWN — the read failed; the advisory stays silent and records why"]
    rows = []
    for key, stats in sorted(history.items()):
        signature, _, fs = key.rpartition("|")
        latest = stats.get("latest")
        when = time.strftime("%Y-%m-%d %H:%MZ", time.gmtime(latest)) if isinstance(latest, int) else "?"
        rows.append([signature, fs, str(stats.get("n")), _bytes(stats.get("p90")), when])
    return _section("DISK-IMPACT HISTORY", history, "last 100 samples per signature and filesystem") + _table(
        ["SIGNATURE", "FILESYSTEM", "N", "P90", "LATEST"], rows, [44, 20, 4, 10, 17])


def _unprojected(cache: dict[str, Any]) -> list[str]:
    entries = cache.get("unprojected") or []
    rows = [[_tail(u.get("iri", "")), u.get("reason")] for u in entries]
    return [f"NOT PROJECTED ({len(entries)}) — action-boundary policies no plane enforces"] + _table(
        ["POLICY", "WHY"], rows, [36, 110])


def _notices(cache: dict[str, Any]) -> list[str]:
    notices = cache.get("notices") or []
    return [f"NOTICES ({len(notices)})"] + [f"  - {n}" for n in notices]


# ── formatting helpers ───────────────────────────────────────────────────────────────


def _table(headers: list[str], rows: list[list[Any]], caps: list[int]) -> list[str]:
    """Each cell cut to its column's cap, then laid out to the terminal's width (piped: full
    width): aligned, cut further, or one record per row (:func:`yupana.terminal.table`)."""
    from yupana import terminal

    cells = [[_cut(_text(v), caps[i]) for i, v in enumerate(row)] for row in rows]
    return terminal.table(headers, cells, terminal.width())


def _text(value: Any) -> str:
    if value is None:
        return "-"
    return str(value).replace("\n", "\\n").replace("\t", " ")


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(1, width - 1)] + "…"


def _globs(globs: Any) -> str:
    return ", ".join(globs) if globs else "(all paths)"


def _tail(iri: str) -> str:
    return iri.rstrip("/").rsplit("/", 1)[-1].rsplit("#", 1)[-1]


def _backoff(backoff: Any) -> str:
    if not backoff:
        return "-"
    if backoff.get("kind") == "fixed":
        return f"{backoff.get('secs')}s fixed"
    if backoff.get("kind") == "exp":
        return f"exp(min(n/{backoff.get('d'):g}, {backoff.get('c'):g}))s"
    return str(backoff)


def _bytes(n: Any) -> str:
    if not isinstance(n, int):
        return "?"
    sign = "-" if n < 0 else "+"
    size = float(abs(n))
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if size < 1024 or unit == "TiB":
            return f"{sign}{size:.0f} {unit}" if unit == "B" else f"{sign}{size:.1f} {unit}"
        size /= 1024
    return f"{sign}{n} B"
