"""The CI-map selector: which governed local commands cover an outgoing change.

The projection cache's ``ci_map`` (docs/cache-format.md) maps hosted CI jobs to local
commands, each scoped by path globs (the Rust ``glob::Pattern`` dialect of
:mod:`yupana.globs`, matched against repository-relative paths), under a coverage marker.
:func:`select` intersects those scopes with the changed paths and answers one of three
states, following the guard contract's "CI-map coverage" clause:

* ``selected`` — at least one command's scope matches. ``complete`` says whether the map
  claims to cover every hosted job. A *partial* map's matches are returned (they are known
  to apply), with ``complete: False``: the caller must not present them as the whole check
  set, and must not run them as if they were (``yupana ci-select --run`` refuses to).
* ``quiet`` — a *complete* map and no scope matches: nothing to run.
* ``unknown`` — no map at all (``ci_map`` null); a partial map with no match (partial
  knowledge never certifies that a push is unaffected); or an invalid map. Any invalid or
  empty scope list (or blank job, label or command) anywhere makes the whole answer
  UNKNOWN, even when another command would match: a map that is broken in one place is
  not trusted in any.

``cause`` is a stable label for the unknown cases (``no-map``, ``partial-no-match``,
``invalid-map``); ``reason`` is prose for an operator. Selected commands keep the map's
order (jobs as projected, each job's commands as linked) and are de-duplicated by command
text: a command that stands in for several jobs is listed — and run — once, naming every
job. Standard library only (the hot-path rule for ``yupana/evaluate``).
"""

from __future__ import annotations

from yupana import globs

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from typing import Any

    from yupana.globs import Glob

    LinkedCommand = tuple[str, str | None, list[str], list[Glob]]  # (command, iri, patterns, compiled)

SELECTED, QUIET, UNKNOWN = "selected", "quiet", "unknown"
NO_MAP, PARTIAL_NO_MATCH, INVALID_MAP = "no-map", "partial-no-match", "invalid-map"


class SelectedCommand:
    """One local command to run: its text, the jobs it stands in for, and why it was chosen.

    ``job``/``label``/``iri`` are those of the first job (in map order) that links it;
    ``jobs`` lists every such job. ``scopes`` are the globs that matched at least one
    changed path, ``paths`` the changed paths at least one of them matched (in change order).
    """

    __slots__ = ("command", "iri", "job", "label", "jobs", "scopes", "paths")

    def __init__(self, command: str, iri: str | None, job: str, label: str) -> None:
        self.command = command
        self.iri = iri
        self.job = job
        self.label = label
        self.jobs: list[dict[str, Any]] = []
        self.scopes: list[str] = []
        self.paths: list[str] = []

    def to_dict(self) -> dict[str, Any]:
        """The stable JSON form (``yupana ci-select --json``)."""
        return {"command": self.command, "iri": self.iri, "job": self.job, "label": self.label,
                "jobs": [dict(j) for j in self.jobs], "scopes": list(self.scopes), "paths": list(self.paths)}

    def __repr__(self) -> str:
        return f"SelectedCommand({self.command!r}, jobs={[j['job'] for j in self.jobs]!r})"


class Selection:
    """What :func:`select` answered (see the module docstring for the states)."""

    __slots__ = ("state", "complete", "commands", "reason", "cause", "changed")

    def __init__(self, state: str, reason: str, *, complete: bool | None = None,
                 commands: list[SelectedCommand] | None = None, cause: str | None = None,
                 changed: list[str] | None = None) -> None:
        self.state = state
        self.complete = complete
        self.commands = commands or []
        self.reason = reason
        self.cause = cause
        self.changed = changed or []

    @property
    def runnable(self) -> bool:
        """Whether running :attr:`commands` stands for the whole check set (selected, complete map)."""
        return self.state == SELECTED and self.complete is True

    def to_dict(self) -> dict[str, Any]:
        """The stable JSON form (``yupana ci-select --json``)."""
        return {"state": self.state, "complete": self.complete, "cause": self.cause, "reason": self.reason,
                "changed": list(self.changed), "commands": [c.to_dict() for c in self.commands]}

    def __repr__(self) -> str:
        return f"Selection({self.state!r}, complete={self.complete!r}, commands={self.commands!r})"


class _Invalid(ValueError):
    """The map is not usable; the message names where."""


def select(ci_map: dict[str, Any] | None, changed: list[str]) -> Selection:
    """Intersect the map's command scopes with ``changed`` (repository-relative paths).

    Never raises: a malformed map is an UNKNOWN selection naming what is wrong.
    """
    paths = normalise_paths(changed)
    if ci_map is None:
        return Selection(UNKNOWN, "no CI map is projected (the store holds no aegis:CiMap): it cannot be "
                         "said which checks this change needs", cause=NO_MAP, changed=paths)
    try:
        complete, jobs = _validated(ci_map)
    except _Invalid as exc:
        return Selection(UNKNOWN, f"the CI map is invalid ({exc}); nothing is selected from it",
                         cause=INVALID_MAP, changed=paths)
    chosen: dict[str, SelectedCommand] = {}
    for job, label, job_iri, commands in jobs:
        for text, iri, patterns, compiled in commands:
            hit_scopes = []
            hit_paths = []
            for pattern, tokens in zip(patterns, compiled):
                hits = [p for p in paths if globs.matches(tokens, p)]
                if hits:
                    hit_scopes.append(pattern)
                    hit_paths.extend(hits)
            if not hit_scopes:
                continue
            entry = chosen.get(text)
            if entry is None:
                entry = chosen[text] = SelectedCommand(text, iri, job, label)
            if not any(j["job"] == job and j["iri"] == job_iri for j in entry.jobs):
                entry.jobs.append({"job": job, "label": label, "iri": job_iri})
            _extend(entry.scopes, hit_scopes)
            _extend(entry.paths, hit_paths)
    selected = list(chosen.values())
    order = {p: i for i, p in enumerate(paths)}
    for entry in selected:
        entry.paths.sort(key=order.__getitem__)
    n_commands = sum(len(c) for _, _, _, c in jobs)
    coverage = "complete" if complete else "partial"
    if selected:
        reason = (f"{len(selected)} local command(s) of {n_commands} cover {len(paths)} changed path(s) "
                  f"(CI map {coverage})")
        if not complete:
            reason += ("; the map is partial, so these are what it knows apply, not the whole check set — "
                       "hosted CI decides the rest")
        return Selection(SELECTED, reason, complete=complete, commands=selected, changed=paths)
    if complete:
        what = "no changed paths" if not paths else f"none of the {len(paths)} changed path(s) is in any command's scope"
        return Selection(QUIET, f"the CI map is complete and {what}: nothing to run", complete=True, changed=paths)
    return Selection(UNKNOWN, f"the CI map is partial and no command's scope matches the {len(paths)} changed "
                     "path(s): partial knowledge cannot certify that the change is unaffected",
                     complete=False, cause=PARTIAL_NO_MATCH, changed=paths)


def normalise_paths(changed: list[str]) -> list[str]:
    """Repository-relative paths as globs see them: no leading ``./``, no blanks, no repeats."""
    out: list[str] = []
    seen: set[str] = set()
    for path in changed or ():
        if not isinstance(path, str):
            continue
        while path.startswith("./"):
            path = path[2:]
        if path and path not in seen:
            seen.add(path)
            out.append(path)
    return out


def _extend(target: list[str], values: list[str]) -> None:
    for value in values:
        if value not in target:
            target.append(value)


def _validated(ci_map: object) -> tuple[bool, list[tuple[str, str, str | None, list[LinkedCommand]]]]:
    """``(complete, [(job, label, iri, [(command, iri, patterns, compiled), ...]), ...])`` or _Invalid.

    Every job and command is checked before anything is matched, so one broken scope list
    makes the whole map UNKNOWN rather than quietly dropping the command it belongs to.
    """
    if not isinstance(ci_map, dict):
        raise _Invalid(f"ci_map is a {type(ci_map).__name__}, not an object")
    complete = ci_map.get("complete")
    if not isinstance(complete, bool):
        raise _Invalid(f"the coverage marker 'complete' is {complete!r}, not true or false")
    raw_jobs = ci_map.get("jobs")
    if not isinstance(raw_jobs, list) or not raw_jobs:
        raise _Invalid("the map names no jobs")
    jobs = []
    for i, raw in enumerate(raw_jobs):
        if not isinstance(raw, dict):
            raise _Invalid(f"jobs[{i}] is not an object")
        job = _text(raw.get("job"), f"jobs[{i}] has a blank or missing job name")
        label = _text(raw.get("label"), f"job {job!r} has a blank or missing label")
        raw_commands = raw.get("commands")
        if not isinstance(raw_commands, list) or not raw_commands:
            raise _Invalid(f"job {job!r} links no local command")
        commands = []
        for k, cmd in enumerate(raw_commands):
            if not isinstance(cmd, dict):
                raise _Invalid(f"job {job!r} commands[{k}] is not an object")
            text = _text(cmd.get("command"), f"job {job!r} commands[{k}] has a blank or missing command")
            commands.append((text, _iri(cmd.get("iri")), *_scopes(cmd.get("scopes"), job, text)))
        jobs.append((job, label, _iri(raw.get("iri")), commands))
    return complete, jobs


def _scopes(raw: object, job: str, command: str) -> tuple[list[str], list[Glob]]:
    where = f"job {job!r} command {command!r}"
    if not isinstance(raw, list) or not raw:
        raise _Invalid(f"{where} has an empty scope list")
    patterns: list[str] = []
    compiled: list[Glob] = []
    for pattern in raw:
        if not isinstance(pattern, str) or not pattern.strip():
            raise _Invalid(f"{where} has a blank scope")
        try:
            compiled.append(globs.compile_glob(pattern))
        except globs.GlobError as exc:
            raise _Invalid(f"{where} has a malformed scope glob: {exc}") from None
        patterns.append(pattern)
    return patterns, compiled


def _text(value: object, problem: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise _Invalid(problem)
    return value


def _iri(value: object) -> str | None:
    return value if isinstance(value, str) and value else None
