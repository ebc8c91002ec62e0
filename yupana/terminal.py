"""The width a cold command's tables may take: ``$COLUMNS`` when set, else the terminal's width
when stdout is one, else None (piped: full width, nothing cut). Standard library only."""

from __future__ import annotations

import os
import sys


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


def fit(widths: list[int], limit: int | None, indent: int = 2, gap: int = 2, floor: int = 6) -> list[int]:
    """Column widths cut so one row fits ``limit`` columns: the widest column gives first, none below ``floor``."""
    if limit is None:
        return widths
    out = list(widths)
    while indent + sum(out) + gap * (len(out) - 1) > limit:
        widest = max(range(len(out)), key=lambda i: out[i])
        if out[widest] <= floor:
            break
        out[widest] -= 1
    return out


def wrap(lines: list[str], limit: int | None) -> list[str]:
    """Prose lines longer than ``limit`` wrapped at words: a ``label : value`` line continues under
    its value, any other two columns further in."""
    if limit is None:
        return lines
    import textwrap

    out: list[str] = []
    for line in lines:
        if len(line) <= limit:
            out.append(line)
            continue
        indent = " " * (len(line) - len(line.lstrip()) + 2)
        label = line.find(" : ")  # "tenant      : value": continue under the value
        if 0 < label < 24:
            indent = " " * (label + 3)
        out += textwrap.wrap(line, limit, subsequent_indent=indent, break_on_hyphens=False) or [line]
    return out
