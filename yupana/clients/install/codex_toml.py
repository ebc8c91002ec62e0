"""A minimal, checked edit of Codex's config.toml: only the ``[hooks.state."<key>"]`` tables.

Codex records hook trust as ``[hooks.state."<key>"] trusted_hash = "sha256:…"``. This module
sets, renames and removes exactly those tables and leaves every other byte of the file as
it was — comments, order, formatting. Each edit is checked: the new text must parse, and
parse to the old document with only the intended change; otherwise :class:`TomlEditError`
says what to add by hand, and nothing is written.
"""

from __future__ import annotations

from typing import Any

import copy
import re
import tomllib

_HEADER = re.compile(r"^[ \t]*\[(?!\[)")
_ARRAY_HEADER = re.compile(r"^[ \t]*\[\[")  # ends the table before it, as a [table] header does


class TomlEditError(Exception):
    """The edit could not be made safely; the file is untouched."""


def quote(value: str) -> str:
    """A TOML basic string."""
    out = ['"']
    for ch in value:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def table_header(key: str) -> str:
    return f"[hooks.state.{quote(key)}]"


def state_tables(doc: dict[str, Any]) -> dict[str, Any]:
    hooks = doc.get("hooks")
    state = hooks.get("state") if isinstance(hooks, dict) else None
    return state if isinstance(state, dict) else {}


def _header_path(line: str) -> tuple[Any, ...] | None:
    """The key path of a ``[table]`` header line, read by tomllib itself; None for other lines."""
    if not _HEADER.match(line):
        return None
    try:
        doc = tomllib.loads(line.strip() + "\n")
    except tomllib.TOMLDecodeError:
        return None
    path = []
    while isinstance(doc, dict) and len(doc) == 1:
        (name, doc), = doc.items()
        path.append(name)
    return tuple(path)


def _tables(lines: list[str]) -> list[tuple[tuple[Any, ...] | None, int, int]]:
    """(header path, first line, end line exclusive) of every table; the root has path None."""
    starts: list[tuple[tuple[Any, ...] | None, int]] = [(None, 0)]
    state = None  # the multi-line string ('"""' or "'''") open at the start of this line
    for i, line in enumerate(lines):
        if state is None:  # a line inside a multi-line string is never a header
            path = ("[[array of tables]]",) if _ARRAY_HEADER.match(line) else _header_path(line)
            if path is not None and i:
                starts.append((path, i))
            elif path is not None:
                starts[0] = (path, 0)
        state = _scan(line, state)
    return [(p, s, starts[k + 1][1] if k + 1 < len(starts) else len(lines)) for k, (p, s) in enumerate(starts)]


def _scan(line: str, state: str | None) -> str | None:
    """The multi-line string still open at the end of ``line``, given the one open at its start.

    The line is read as TOML reads it — basic and literal strings, one- and multi-line,
    escapes, comments — so a ``'''`` inside ``"…"`` or after ``#`` opens nothing."""
    i, n = 0, len(line)
    while i < n:
        if state is not None:
            end = _close(line, i, state)
            if end < 0:
                return state
            i, state = end, None
            continue
        ch = line[i]
        if ch == "#":
            return None
        if line.startswith(('"""', "'''"), i):
            state = line[i:i + 3]
            i += 3
        elif ch in ('"', "'"):
            end = _close(line, i + 1, ch)
            if end < 0:
                return None  # an unterminated one-line string: tomllib refuses the file anyway
            i = end
        else:
            i += 1
    return state


def _close(line: str, i: int, delim: str) -> int:
    """The index just past the ``delim`` that closes a string begun before ``i``, else -1."""
    escapes = delim[0] == '"'
    while i < len(line):
        if escapes and line[i] == "\\":
            i += 2
        elif line.startswith(delim, i):
            end = i + len(delim)
            while len(delim) == 3 and end - i < 5 and line.startswith(delim[0], end):
                end += 1  # up to two more quotes of its kind belong to a multi-line string's content
            return end
        else:
            i += 1
    return -1


def edit(text: str, set_hashes: dict[str, str], remove: set[str] | None = None,
         rename: dict[str, str] | None = None) -> str:
    """Return ``text`` with trust set for ``set_hashes`` keys, ``remove`` keys' tables gone,
    and ``rename`` (old key -> new key) tables moved; TomlEditError when unsafe."""
    remove = set(remove or ())
    rename = dict(rename or {})
    try:
        before = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise TomlEditError(f"config.toml does not parse ({exc})") from None
    lines = text.splitlines(keepends=True)
    done: set[str] = set()
    drop: set[int] = set()
    replace: dict[int, str] = {}
    insert_after: dict[int, str] = {}
    for path, start, end in _tables(lines):
        if not path or len(path) != 3 or path[:2] != ("hooks", "state"):
            continue
        key = path[2]
        if key in remove:
            drop.update(range(start, _trim_end(lines, start, end)))
        elif key in rename:
            replace[start] = table_header(rename[key]) + "\n"
        elif key in set_hashes:
            done.add(key)
            line = f"trusted_hash = {quote(set_hashes[key])}\n"
            for i in range(start + 1, end):
                if re.match(r"^[ \t]*trusted_hash[ \t]*=", lines[i]):
                    replace[i] = line
                    break
            else:
                insert_after[start] = line
    out = []
    for i, line in enumerate(lines):
        if i in drop:
            continue
        out.append(replace.get(i, line))
        if i in insert_after:
            if not out[-1].endswith("\n"):
                out[-1] += "\n"
            out.append(insert_after[i])
    result = "".join(out)
    if drop and result.endswith("\n\n") and not text.endswith("\n\n"):
        result = result.rstrip("\n") + "\n"  # the blank line we put before our tables goes with them
    added = [k for k in set_hashes if k not in done]
    if added:
        if result and not result.endswith("\n"):
            result += "\n"
        if result.strip():
            result += "\n"
        result += "\n".join(f"{table_header(k)}\ntrusted_hash = {quote(set_hashes[k])}\n" for k in added)
    _check(before, result, set_hashes, remove, rename)
    return result


def _trim_end(lines: list[str], start: int, end: int) -> int:
    """A removed table takes its own lines and the blank lines after it, not the next table's comments."""
    last = end
    while last > start + 1 and lines[last - 1].lstrip().startswith("#"):
        last -= 1
    return last


def _check(before: dict[str, Any], result: str, set_hashes: dict[str, Any], remove: set[Any], rename: dict[str, Any]) -> None:
    manual = "\n".join(f"{table_header(k)}\ntrusted_hash = {quote(v)}" for k, v in set_hashes.items())
    try:
        after = tomllib.loads(result)
    except tomllib.TOMLDecodeError as exc:
        raise TomlEditError(f"config.toml keeps hooks.state in a form this edit cannot change safely ({exc}); "
                            f"add by hand:\n{manual}") from None
    expected = copy.deepcopy(before)
    state = expected.setdefault("hooks", {}).setdefault("state", {}) if (set_hashes or rename) else state_tables(expected)
    for key in remove:
        state.pop(key, None)
    moved = {new: state.pop(old) for old, new in rename.items() if old in state}
    state.update(moved)
    for key, value in set_hashes.items():
        state.setdefault(key, {})["trusted_hash"] = value
    if _prune(after) != _prune(expected):
        raise TomlEditError("config.toml would change beyond the hooks.state tables; nothing was written. "
                            f"Add by hand:\n{manual}")


def _prune(doc: dict[str, Any]) -> dict[str, Any]:
    """Empty hooks / hooks.state tables are equivalent to absent ones."""
    doc = copy.deepcopy(doc)
    hooks = doc.get("hooks")
    if isinstance(hooks, dict):
        if hooks.get("state") == {}:
            del hooks["state"]
        if not hooks:
            del doc["hooks"]
    return doc
