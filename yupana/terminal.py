"""What a cold command's text output may look like on this stdout: its width, its tables, its
colour. Standard library only (why not rich: docs/architecture.md, "Terminal output").

* :func:`width` — ``$COLUMNS`` when set, else the terminal's width when stdout is one, else
  None (piped: full width, nothing cut, nothing wrapped).
* :func:`table` — aligned columns that fit that width: the first column (the name) is kept
  whole; the others are cut with "…" while they stay readable; past that each row becomes a
  record (its name, then ``header: value`` pairs packed into wrapped lines). A prose last
  column (``wrap_last``) continues under itself instead of being cut.
* :func:`wrap` — prose lines wrapped at words; a ``label: value`` line (the label within the
  first 24 columns) continues under its value.
* :func:`paint` — state words coloured (⚠, UNKNOWN, STALE, FAILED … red; fresh, conforms,
  ALLOW green; section headings bold) only when stdout is a terminal and ``$NO_COLOR`` is
  unset or empty (``$FORCE_COLOR`` forces it, e.g. for ``less -R``; ``TERM=dumb`` disables it).
* :func:`show` — all of it: wrapped, painted, one newline-terminated string.
"""

from __future__ import annotations

import os
import sys

INDENT = 2
GAP = 2
FLOOR = 10  # a cut column narrower than this is no longer worth reading: the table becomes records
PROSE_FLOOR = 30  # a wrapped last column narrower than this reads worse than records

RED, GREEN, BOLD, RESET = "\x1b[31m", "\x1b[32m", "\x1b[1m", "\x1b[0m"
_BAD = ("⚠", "DOES NOT CONFORM", "UNKNOWN", "STALE", "FAILED", "DEGRADED", "INERT", "CANNOT", "EMPTY",
        "LOWERED", "UNAVAILABLE", "EXPIRED", "NOT", "DENY", "ERROR")
_GOOD = ("fresh", "conforms", "ALLOW")


def width() -> int | None:
    """Columns available on stdout, or None when there is no limit (stdout is not a terminal)."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    try:
        if sys.stdout.isatty():
            return os.get_terminal_size(sys.stdout.fileno()).columns or None
    except (OSError, ValueError, AttributeError):
        pass
    return None


def colour() -> bool:
    """Whether stdout gets colour: a terminal, ``$NO_COLOR`` unset or empty (no-color.org),
    ``TERM`` not ``dumb``; ``$FORCE_COLOR`` (non-empty) forces it, below ``$NO_COLOR``."""
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    if os.environ.get("TERM") == "dumb":
        return False
    try:
        return bool(sys.stdout.isatty())
    except (ValueError, AttributeError):
        return False


def show(lines: list[str]) -> str:
    """``lines`` as printed: wrapped to the width, painted when colour is on, newline-terminated."""
    out = wrap(lines, width())
    if colour():
        out = paint(out)
    return "\n".join(out) + "\n"


def fit(widths: list[int], limit: int | None, indent: int = INDENT, gap: int = GAP, floor: int = FLOOR) -> list[int]:
    """Column widths cut so one row fits ``limit``: the widest column but the first gives first,
    none below ``floor`` (nor below its own width). The result may still be too wide."""
    if limit is None:
        return widths
    out = list(widths)
    while indent + sum(out) + gap * (len(out) - 1) > limit:
        movable = [i for i in range(1, len(out)) if out[i] > floor]
        if not movable:
            break
        widest = max(movable, key=lambda i: out[i])
        out[widest] -= 1
    return out


def table(headers: list[str], rows: list[list[str]], limit: int | None, *, wrap_last: bool = False) -> list[str]:
    """``rows`` under ``headers`` as lines that fit ``limit`` columns (None: full width), indented by two."""
    if not rows:
        return [" " * INDENT + "(none)"]
    widths = [max(len(headers[i]), *(len(r[i]) for r in rows)) for i in range(len(headers))]
    if limit is None or _span(widths) <= limit:
        return _aligned(headers, rows, widths)
    if wrap_last:
        start = _span(widths[:-1]) + GAP
        if limit - start >= PROSE_FLOOR:
            return _aligned(headers, rows, widths, last=limit - start)
    fitted = fit(widths, limit)
    if _span(fitted) <= limit:
        return _aligned([_cut(h, fitted[i]) for i, h in enumerate(headers)],
                        [[_cut(c, fitted[i]) for i, c in enumerate(r)] for r in rows], fitted)
    return _records(headers, rows, limit)


def wrap(lines: list[str], limit: int | None) -> list[str]:
    """Prose lines longer than ``limit`` wrapped at words: a ``label: value`` line (its colon within
    the first 24 columns) continues under its value, any other two columns further in."""
    if limit is None:
        return lines
    import textwrap

    out: list[str] = []
    for line in lines:
        if len(line) <= limit:
            out.append(line)
            continue
        indent = " " * (len(line) - len(line.lstrip()) + 2)
        label = line.find(": ")  # "tenant      : value", "signed rules: value": continue under the value
        if 0 < label < 24 and ":" not in line[:label] and line[:label].strip():
            indent = " " * (label + 2)
        out += textwrap.wrap(line, limit, subsequent_indent=indent, break_on_hyphens=False) or [line]
    return out


def paint(lines: list[str]) -> list[str]:
    """State words in colour, section headings (an upper-case line at column 0) in bold."""
    import re

    bad = re.compile(r"⚠|\b(?:" + "|".join(w for w in _BAD if w != "⚠") + r")\b")
    good = re.compile(r"\b(?:" + "|".join(_GOOD) + r")\b")
    heading = re.compile(r"^[A-Z][A-Z0-9 /-]{2,}(?: \(|$| —)")
    out = []
    for line in lines:
        if heading.match(line):
            out.append(f"{BOLD}{line}{RESET}")
            continue
        line = bad.sub(lambda m: f"{RED}{m.group(0)}{RESET}", line)
        out.append(good.sub(lambda m: f"{GREEN}{m.group(0)}{RESET}", line))
    return out


def _span(widths: list[int]) -> int:
    return INDENT + sum(widths) + GAP * (len(widths) - 1)


def _aligned(headers: list[str], rows: list[list[str]], widths: list[int], last: int | None = None) -> list[str]:
    """One line per row (the last column unpadded); ``last``: the last cell wrapped at that width."""
    import textwrap

    lines = []
    pad = " " * (_span(widths[:-1]) + GAP)
    for row in [headers] + rows:
        head = "".join(c.ljust(widths[i]) + " " * GAP for i, c in enumerate(row[:-1]))
        tail = [row[-1]] if last is None else (textwrap.wrap(row[-1], last, break_on_hyphens=False) or [""])
        lines.append((" " * INDENT + head + tail[0]).rstrip())
        lines += [pad + more for more in tail[1:]]
    return lines


def _records(headers: list[str], rows: list[list[str]], limit: int) -> list[str]:
    """Each row as its first cell, then ``header: value`` pairs packed into lines of ``limit``."""
    import textwrap

    indent = " " * (INDENT + 4)
    lines: list[str] = []
    for row in rows:
        lines.append(" " * INDENT + row[0])
        current = ""
        for header, value in zip(headers[1:], row[1:]):
            pair = f"{header.lower()}: {value}"
            if current and len(indent) + len(current) + 3 + len(pair) <= limit:
                current += " · " + pair
                continue
            if current:
                lines.append(indent + current)
            current = pair
            if len(indent) + len(pair) > limit:  # one pair wider than the terminal: wrapped on its own
                wrapped = textwrap.wrap(pair, limit - len(indent), break_on_hyphens=False) or [pair]
                lines += [indent + w for w in wrapped[:-1]]
                current = wrapped[-1]
        if current:
            lines.append(indent + current)
    return lines


def _cut(text: str, cells: int) -> str:
    return text if len(text) <= cells else text[: max(1, cells - 1)] + "…"
