"""``yupana replay``'s text view: the same document ``--json`` prints, for a person. Cold path."""

from __future__ import annotations

from typing import Any

from yupana.commands.replay.flips import GROUPS, KINDS

TITLES = {"newly_denied": "newly denied", "no_longer_denied": "no longer denied",
          "newly_notified": "newly notified", "no_longer_notified": "no longer notified"}
TOP = 10


def render(doc: dict[str, Any]) -> str:
    live, cand = doc["live"], doc["candidate"]
    lines = [f"yupana replay: {doc['inputs']} captured input(s) from {len({s['host'] for s in doc['sources']})} "
             f"host(s), judged as {doc['mode']} would decide them",
             f"  live:      {live['spec']} ({live['kind']}, {live.get('digest') or 'no digest'})",
             f"  candidate: {cand['spec']} ({cand['kind']}, {cand.get('digest') or 'no digest'})", ""]
    if not doc["total"]:
        lines.append(f"no flip: {doc['judged']} input(s) judged, every decision the same")
    for kind in KINDS:
        count = doc["counts"][kind]
        if not count:
            continue
        lines.append(f"{TITLES[kind]}: {count}")
        for group in GROUPS:
            table = doc["groups"][kind][group]
            shown = ", ".join(f"{name} {n}" for name, n in list(table.items())[:TOP])
            lines.append(f"  by {group}: {shown}")
        for ex in doc["examples"][kind]:
            where = ", ".join(ex.get("paths") or []) or "$ " + str(ex.get("command") or "")
            lines.append(f"  e.g. {ex.get('tool')} {where} [{ex.get('host')}, {ex.get('tenant') or 'no tenant'}]: "
                         f"{ex['live']} -> {ex['candidate']} ({', '.join(ex['rules'])})")
            if ex.get("text"):
                lines.append(f"       {ex['text']!r}")
        lines.append("")
    nj = doc["not_judged"]
    lines.append(f"not judged: {nj['not_captured']} call(s) the spools recorded without a captured input, "
                 f"{nj['masked']} input(s) captured masked (rerun on masked text, where the rules no longer see what they "
                 "caught), "
                 f"{nj['unreadable']} unreadable capture(s)")
    if doc["truncated_inputs"]:
        lines.append(f"judged on a truncated text: {doc['truncated_inputs']} input(s)")
    rec = doc.get("recorded") or {}
    if rec.get("compared"):
        lines.append(f"replayed as recorded: {rec['compared'] - rec['differed']} of {rec['compared']} input(s) whose "
                     "capture says what enforce answered under the live rule set")
        for ex in rec["examples"]:
            where = ", ".join(ex.get("paths") or []) or "$ " + str(ex.get("command") or "")
            lines.append(f"  differed: {ex.get('tool')} {where}: recorded {ex['recorded']}, replayed {ex['live']} "
                         "(the replay does not see the host's own configuration, the file's prior content, "
                         "throttles or the tracker)")
    for ex in doc["masked_flips"]:
        lines.append(f"  masked: {ex.get('tool')} {', '.join(ex.get('paths') or [])}: {ex['live']} -> "
                     f"{ex['candidate']} ({TITLES[ex['kind']]}?)")
    return "\n".join(lines) + "\n"
