"""``yupana diff``'s two human forms: the terminal table and the Markdown a CI job posts. Cold path."""

from __future__ import annotations

from typing import Any

import json

from yupana.commands.diff.compare import Change, Diff, FieldChange, gist

MARKDOWN_CELL = 200  # characters of one value in a Markdown cell (a review comment, not a dump)
MARKDOWN_BUDGET = 60_000  # characters of the whole summary: GitHub refuses a comment over 65,536
CUT_NOTE = "_… and {n} more rows, left out to keep this comment postable: `yupana diff --json` lists every change._"


def summary_line(diff: Diff) -> str:
    s = diff.summary()
    line = f"{s['added']} added, {s['removed']} removed, {s['changed']} changed"
    if s["tiers_raised"] or s["tiers_lowered"]:
        line += f"; tiers: {s['tiers_raised']} raised, {s['tiers_lowered']} lowered"
    if s["exemptions_widened"] or s["exemptions_narrowed"]:
        line += f"; exemptions: {s['exemptions_widened']} widened, {s['exemptions_narrowed']} narrowed"
    return line


def text(diff: Diff, old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """The terminal report (lines for :func:`yupana.terminal.show`)."""
    from yupana import terminal

    limit = terminal.width()
    lines = [f"old: {_side(old)}", f"new: {_side(new)}", ""]
    if not diff.changes:
        return [*lines, "no change: both sources hold the same rules"]
    lines.append(f"SUMMARY — {summary_line(diff)}")
    for word, heading in (("added", "ADDED"), ("removed", "REMOVED")):
        found = [c for c in diff.changes if c.change == word]
        if found:
            rows = [[c.name, c.kind, (c.tier[1] if word == "added" else c.tier[0]) or "—",
                     _listed(gist(c), _plain), c.iri] for c in found]
            lines += ["", f"{heading} ({len(found)})",
                      *terminal.table(["name", "kind", "tier", "what", "iri"], rows, limit)]
    changed = [c for c in diff.changes if c.change == "changed"]
    if changed:
        rows = []
        for c in changed:
            for i, row in enumerate(_changed_rows(c, _plain)):
                rows.append([c.name if i == 0 else "", c.kind if i == 0 else "", *row])
        lines += ["", f"CHANGED ({len(changed)})", *terminal.table(["name", "kind", "field", "old", "new"], rows, limit)]
    return lines


def markdown(diff: Diff, old: dict[str, Any], new: dict[str, Any], budget: int = MARKDOWN_BUDGET) -> str:
    """A Markdown summary for a review comment (GitHub-flavoured tables), at most ``budget``
    characters: the rows past it are counted, not shown (a review comment has a size limit)."""
    out = ["## yupana diff", "", f"- **old**: {_md(_side(old))}", f"- **new**: {_md(_side(new))}", ""]
    if not diff.changes:
        return "\n".join([*out, "**No change**: both sources hold the same rules.", ""])
    out += [f"**{summary_line(diff)}**", ""]
    sections: list[tuple[str, list[str], list[str]]] = []
    for word, heading in (("added", "Added"), ("removed", "Removed")):
        found = [c for c in diff.changes if c.change == word]
        if found:
            sections.append((f"### {heading} ({len(found)})", ["| kind | name | tier | what | IRI |", "|---|---|---|---|---|"],
                             [f"| {c.kind} | {_code(c.name)} | {(c.tier[1] if word == 'added' else c.tier[0]) or '—'} "
                              f"| {_listed(gist(c), _code)} | {_code(c.iri)} |" for c in found]))
    changed = [c for c in diff.changes if c.change == "changed"]
    if changed:
        cells: list[str] = []
        for c in changed:
            for i, row in enumerate(_changed_rows(c, _code)):
                head = [c.kind, _code(c.name)] if i == 0 else ["", ""]
                cells.append("| " + " | ".join([*head, *row]) + " |")
        sections.append((f"### Changed ({len(changed)})", ["| kind | name | field | old | new |", "|---|---|---|---|---|"],
                         cells))
    used = sum(len(line) + 1 for line in out) + len(CUT_NOTE) + 40
    left_out = 0
    for heading, header, rows in sections:
        if left_out or used + len(heading) + sum(len(h) + 1 for h in header) + 4 > budget:
            left_out += len(rows)
            continue
        out += [heading, "", *header]
        used += len(heading) + sum(len(h) + 1 for h in header) + 4
        for n, line in enumerate(rows):
            if used + len(line) + 1 > budget:
                left_out += len(rows) - n
                break
            out.append(line)
            used += len(line) + 1
        out.append("")
    if left_out:
        out += [CUT_NOTE.format(n=left_out), ""]
    return "\n".join(out)


def _changed_rows(c: Change, show: Any) -> list[list[str]]:
    """[field, old, new] rows of one changed entry: its fields, then its tier and exemption moves."""
    move = c.tier_move
    rows = [_field_row(f, show) for f in c.fields if not (move and f.field == "tier")]  # said by the move below
    if move:
        rows.append([f"tier ({move})", c.tier[0] or "—", c.tier[1] or "—"])
    if c.exemptions:
        rows.append([f"exemptions ({c.exemptions})", "; ".join(f"− {show(r)}" for r in c.exemptions_removed) or "—",
                     "; ".join(f"+ {show(r)}" for r in c.exemptions_added) or "—"])
    return rows


def _field_row(f: FieldChange, show: Any) -> list[str]:
    if f.added is not None:
        removed = "; ".join(f"− {show(r)}" for r in f.removed or ()) or "—"
        added = "; ".join(f"+ {show(a)}" for a in f.added) or "—"
        if not f.added and not f.removed:  # the same items, in another order or repeated
            return [f.field, show(f.old), show(f.new)]
        return [f.field, removed, added]
    return [f.field, show(f.old), show(f.new)]


def _listed(value: Any, show: Any) -> str:
    """A list of strings as its items, one shown after another; anything else as one value."""
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return ", ".join(show(v) for v in value) or "—"
    return str(show(value))


def _plain(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, str):
        return value.replace("\n", "⏎")
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _code(value: Any) -> str:
    """``value`` as an inline code span that survives a GFM table cell."""
    if value is None:
        return "—"
    shown = _plain(value)
    if len(shown) > MARKDOWN_CELL:
        shown = shown[:MARKDOWN_CELL - 1] + "…"
    shown = shown.replace("|", "\\|")
    fence = "``" if "`" in shown else "`"
    pad = " " if shown.startswith("`") or shown.endswith("`") else ""
    return f"{fence}{pad}{shown}{pad}{fence}"


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("<", "&lt;")


def _side(doc: dict[str, Any]) -> str:
    """One line about one side: what it is, its digest and counts of its rule planes."""
    counts = doc.get("counts") or {}
    rules = sum(int(counts.get(k) or 0) for k in ("policies", "text_rules", "grounded_rules", "tripwires",
                                                   "memory_policies"))
    where = doc.get("spec") or ""
    digest = str(doc.get("digest") or "")
    return f"{where} ({doc.get('kind')}, {rules} rules, {digest[:19] + '…' if len(digest) > 19 else digest})"
