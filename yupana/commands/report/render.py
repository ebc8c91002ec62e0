"""``yupana report``'s text view of the report document (:func:`yupana.commands.report.document`).
Cold path; the table fits the terminal (:mod:`yupana.terminal`)."""

from __future__ import annotations

from typing import Any

import time

from yupana import terminal

HEADERS = ["calls", "would deny", "denied", "warned", "failed open", "stale cache", "fail kinds"]


def render(doc: dict[str, Any]) -> str:
    total = doc["totals"]
    since = doc["since"]
    when = ("all records" if since is None else
            f"since {time.strftime('%Y-%m-%d %H:%M:%SZ', time.gmtime(since))} ({_age(doc['window_secs'])})")
    files = len(doc["sources"])
    lines = [f"Advise readout: {when}, {files} spool file(s) from {doc['hosts']} host(s)", ""]
    if doc["malformed"]:
        lines.append(f"  ⚠ {doc['malformed']} malformed line(s) skipped (see stderr)")
    lines += [
        f"  invocations:        {total['invocations']}  ({_hooks(total['hooks'])})",
        f"  under advise:       {total['advise']}",
        f"  would deny:         {total['would_deny']}  (advise: enforce would have refused)",
        f"  denied:             {total['denied']}",
        f"  warned:             {total['warned']}  (a notice enforce would also only have given)",
    ]
    if total["would_deny_unrecorded"]:
        lines.append(f"  not told apart:     {total['would_deny_unrecorded']}  (advise notices from records "
                     "without would_deny: an older yupana)")
    lines += [
        f"  failed open:        {total['fail_open']}  ({_pct(total['fail_open_rate'])}){_kinds(total['fail_kinds'])}",
        f"  served from cache:  {total['served_from_cache']}  ({_pct(total['served_from_cache_rate'])}, stale policy)",
    ]
    if total["digests"]:
        lines.append("  rule sets:          " + ", ".join(f"{d} ({n})" for d, n in _top(total["digests"])))
    if doc["unattributed"]:
        lines.append("  unattributed:       " + ", ".join(f"{k} {n}" for k, n in doc["unattributed"].items()))
    lines += ["", f"By {doc['by']}:"]
    rows = [[g["key"], str(g["invocations"]), str(g["would_deny"]), str(g["denied"]), str(g["warned"]),
             f"{g['fail_open']} ({_pct(g['fail_open_rate'])})",
             f"{g['served_from_cache']} ({_pct(g['served_from_cache_rate'])})",
             ", ".join(f"{k} {n}" for k, n in _top(g["fail_kinds"])) or "-"] for g in doc["groups"]]
    lines += terminal.table([doc["by"], *HEADERS], rows, terminal.width(), wrap_last=True)
    if doc.get("shadow"):
        lines += ["", "Shadow rules (rollout stage shadow: evaluated and recorded, shown to nobody):"]
        lines += terminal.table(["rule", "fired on", "would deny"],
                                [[r["rule"], str(r["fired"]), str(r["would_deny"])] for r in doc["shadow"]],
                                terminal.width())
    return terminal.show(lines)


def _hooks(hooks: dict[str, int]) -> str:
    return ", ".join(f"{hook} {n}" for hook, n in sorted(hooks.items())) or "none"


def _kinds(kinds: dict[str, int]) -> str:
    return (": " + ", ".join(f"{k} {n}" for k, n in _top(kinds))) if kinds else ""


def _top(counts: dict[str, int]) -> list[tuple[str, int]]:
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))


def _pct(rate: float | None) -> str:
    return "-" if rate is None else f"{rate * 100:.1f}%"


def _age(secs: int | None) -> str:
    if secs is None:
        return "all"
    for unit, size in (("w", 7 * 86400), ("d", 86400), ("h", 3600), ("m", 60)):
        if secs % size == 0:
            return f"{secs // size}{unit}"
    return f"{secs}s"
