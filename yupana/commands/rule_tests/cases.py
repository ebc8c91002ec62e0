"""Case files of ``yupana test``: ``*.test.toml``, each ``[[case]]`` one client input and what
the hooks must decide on it (docs/testing.md). Cold path.

A case is read strictly: an unknown key, a wrong type, a missing expectation or a tool this
format does not know is a :class:`CaseError` naming the file, the case and the key — the run
then stops before any case is judged (exit 2: the input is unusable), so a typo never turns
into a case that passes because it tests nothing.
"""

from __future__ import annotations

from typing import Any

import os

TOOLS = ("Edit", "Write", "MultiEdit", "apply_patch", "Bash")
EXPECT = ("allow", "notify", "deny")
MODES = ("off", "advise", "enforce")
HOOKS = ("pre-edit", "pre-bash", "post-edit")
SUFFIX = ".test.toml"
KEYS = ("name", "tool", "path", "text", "old", "new", "before", "command", "payload", "hook", "tenant", "mode",
        "cwd", "repo", "expect", "rules", "not_rules")


class CaseError(Exception):
    """A case file that cannot be used: the message names the file, the case and the key."""


class Case:
    """One ``[[case]]``: the input (shorthand fields or a raw ``payload``) and the expectation."""

    __slots__ = ("file", "index", "name", "tool", "path", "text", "old", "new", "before", "command", "payload",
                 "hook", "tenant", "mode", "cwd", "repo", "expect", "rules", "not_rules")

    def __init__(self, file: str, index: int, fields: dict[str, Any]) -> None:
        self.file = file
        self.index = index
        self.name: str = fields["name"]
        self.tool: str | None = fields.get("tool")
        self.path: str | None = fields.get("path")
        self.text: str | None = fields.get("text")
        self.old: str | None = fields.get("old")
        self.new: str | None = fields.get("new")
        self.before: str | None = fields.get("before")
        self.command: str | None = fields.get("command")
        self.payload: dict[str, Any] | None = fields.get("payload")
        self.hook: str | None = fields.get("hook")
        self.tenant: str | None = fields.get("tenant")
        self.mode: str = fields.get("mode") or "enforce"
        self.cwd: str | None = fields.get("cwd")
        self.repo: str | None = fields.get("repo")
        self.expect: str = fields["expect"]
        self.rules: list[str] = list(fields.get("rules") or [])
        self.not_rules: list[str] = list(fields.get("not_rules") or [])

    @property
    def where(self) -> str:
        return f"{self.file}: case {self.name!r}"


def expand(paths: list[str]) -> list[str]:
    """Each path as given; a directory becomes its ``*.test.toml`` files (recursively, sorted).
    CaseError for a path that does not exist, or a directory holding no case file."""
    out: list[str] = []
    for path in paths:
        if os.path.isdir(path):
            found = [os.path.join(d, n) for d, subdirs, names in sorted(os.walk(path)) for n in sorted(names)
                     if n.endswith(SUFFIX)]
            if not found:
                raise CaseError(f"{path}: no *{SUFFIX} case files in this directory")
            out += found
        elif os.path.exists(path):
            out.append(path)
        else:
            raise CaseError(f"{path}: no such case file or directory")
    return out


RDF_SUFFIXES = (".ttl", ".nt", ".n3", ".nq", ".trig", ".rdf", ".owl", ".xml", ".jsonld")


def split(catalogue: list[str] | None, cases: list[str]) -> tuple[list[str] | None, list[str]]:
    """(catalogue files, case paths): ``--catalogue``'s list takes every word up to the next flag,
    so the case paths written after it (``--catalogue data/*.ttl cases/``) are moved back — a
    ``*.test.toml`` file, or a directory that holds case files and no RDF file."""
    if not catalogue or cases:
        return catalogue, cases
    data = list(catalogue)
    moved: list[str] = []
    while data and _is_cases(data[-1]):
        moved.insert(0, data.pop())
    return data, moved


def _is_cases(path: str) -> bool:
    if not os.path.isdir(path):
        return path.endswith(SUFFIX)
    names = [n for _d, _s, files in os.walk(path) for n in files]
    return any(n.endswith(SUFFIX) for n in names) and not any(n.lower().endswith(RDF_SUFFIXES) for n in names)


def load(paths: list[str]) -> list[Case]:
    """Every case of the case files ``paths`` (directories expanded), in file order."""
    cases: list[Case] = []
    for path in expand(paths):
        cases += load_file(path)
    return cases


def load_file(path: str) -> list[Case]:
    import tomllib

    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except OSError as exc:
        raise CaseError(f"{path}: cannot read it: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise CaseError(f"{path}: not valid TOML: {exc}") from None
    extra = sorted(set(data) - {"case"})
    if extra:
        raise CaseError(f"{path}: unknown top-level key {extra[0]!r}: a case file holds only [[case]] tables")
    raw = data.get("case")
    if not isinstance(raw, list) or not raw:
        raise CaseError(f"{path}: no [[case]] tables: write at least one (docs/testing.md)")
    cases = []
    names: set[str] = set()
    for index, fields in enumerate(raw, 1):
        case = Case(path, index, check(path, index, fields))
        if case.name in names:
            raise CaseError(f"{path}: case {case.name!r} is named twice: names identify cases in every report")
        names.add(case.name)
        cases.append(case)
    return cases


def check(path: str, index: int, fields: Any) -> dict[str, Any]:
    """``fields`` of the ``index``-th case, checked (CaseError naming the key otherwise)."""
    if not isinstance(fields, dict):
        raise CaseError(f"{path}: case #{index} is not a table")
    name = fields.get("name")
    where = f"{path}: case {name!r}" if isinstance(name, str) and name else f"{path}: case #{index}"
    if not isinstance(name, str) or not name.strip():
        raise CaseError(f"{where}: `name` is missing: give every case a name (a string)")
    unknown = sorted(set(fields) - set(KEYS))
    if unknown:
        raise CaseError(f"{where}: unknown key {unknown[0]!r} (a case takes {', '.join(KEYS)})")
    for key in ("tool", "path", "text", "old", "new", "before", "command", "hook", "tenant", "mode", "cwd", "repo", "expect"):
        if key in fields and not isinstance(fields[key], str):
            raise CaseError(f"{where}: `{key}` must be a string, not {type(fields[key]).__name__}")
    for key in ("rules", "not_rules"):
        value = fields.get(key)
        if isinstance(value, str):
            fields[key] = [value]
        elif value is not None and (not isinstance(value, list) or not all(isinstance(v, str) and v for v in value)):
            raise CaseError(f"{where}: `{key}` must be a list of rule names or IRIs (strings)")
    _choice(where, fields, "expect", EXPECT, required=True)
    _choice(where, fields, "mode", MODES)
    _choice(where, fields, "hook", HOOKS)
    has_payload = "payload" in fields
    if has_payload == ("tool" in fields):
        raise CaseError(f"{where}: give either `tool` (the shorthand) or `payload` (a raw client payload table), "
                        "not " + ("both" if has_payload else "neither"))
    cwd = fields.get("cwd")
    if cwd is not None and (os.path.isabs(cwd) or os.path.normpath(cwd).split(os.sep)[0] == ".."):
        raise CaseError(f"{where}: `cwd` must be a directory inside the repository, relative to its root: {cwd!r}")
    if has_payload:
        if not isinstance(fields["payload"], dict):
            raise CaseError(f"{where}: `payload` must be a table (the client's hook payload)")
        import json

        try:
            json.dumps(fields["payload"])
        except (TypeError, ValueError) as exc:
            raise CaseError(f"{where}: `payload` holds a value JSON cannot carry (a TOML date or time?): {exc}") from None
        stray = [k for k in ("path", "text", "old", "new", "command") if k in fields]
        if stray:
            raise CaseError(f"{where}: `{stray[0]}` is shorthand: with a raw `payload` put it in the payload")
        return fields
    _choice(where, fields, "tool", TOOLS, required=True)
    _shorthand(where, fields)
    return fields


def _shorthand(where: str, fields: dict[str, Any]) -> None:
    tool = fields["tool"]
    if tool == "Bash":
        if "command" not in fields:
            raise CaseError(f"{where}: a Bash case needs `command`")
        stray = [k for k in ("path", "text", "old", "new", "before") if k in fields]
        if stray:
            raise CaseError(f"{where}: `{stray[0]}` does not apply to Bash (it takes `command`)")
        return
    if "command" in fields:
        raise CaseError(f"{where}: `command` is for Bash; {tool} takes `path` and `text` or `old`/`new`")
    if not fields.get("path"):
        raise CaseError(f"{where}: {tool} needs `path` (the file, relative to the repository root)")
    has_text, has_pair = "text" in fields, "old" in fields or "new" in fields
    if has_text == has_pair:
        raise CaseError(f"{where}: give either `text` (the introduced text) or `old` and `new`, "
                        + ("not both" if has_text else "one of them"))
    if has_pair and ("old" not in fields or "new" not in fields):
        raise CaseError(f"{where}: `old` and `new` go together (the text replaced and its replacement)")
    if tool == "Write" and has_pair:
        raise CaseError(f"{where}: Write replaces the whole file: give its content as `text`")


def _choice(where: str, fields: dict[str, Any], key: str, allowed: tuple[str, ...], required: bool = False) -> None:
    if key not in fields:
        if required:
            raise CaseError(f"{where}: `{key}` is missing ({' | '.join(allowed)})")
        return
    if fields[key] not in allowed:
        raise CaseError(f"{where}: `{key}` is {fields[key]!r}; it must be one of {', '.join(allowed)}")
