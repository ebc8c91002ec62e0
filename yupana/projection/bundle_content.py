"""A bundle's signed cache object, checked as a projection is before it is installed. Cold path.

A signature says who made a bundle, not that this host can use it: the publisher may run
another yupana, another RE2, or sign a payload it never projected. So a verified payload is
checked exactly as the refresh checks what its decoders produced, before anything is written:

* its shape is the cache's (:mod:`yupana.planes`: the list planes are lists of objects, the
  optional planes objects or null, the cache version this yupana reads), every plane entry
  has its documented fields (:func:`yupana.state.cache_entries.check`, the reader's own check)
  and ``counts`` is what the refresh computes from the planes — otherwise ``content``, naming
  the entry and the field;
* every governed regex compiles in this host's RE2 and every governed glob in the glob dialect
  (the decoders' own compile steps, :func:`yupana.projection.subject.re2_problem` and
  :func:`~yupana.projection.subject.glob_problem`) — otherwise ``compile``, naming the entry,
  the field and RE2's reason.

Both raise :class:`~yupana.projection.bundle.BundleError`; the refresher records it as a
failed refresh (``bundle-content`` / ``bundle-compile``) and the prior cache keeps serving.
"""

from __future__ import annotations

from typing import Any

from collections.abc import Callable, Iterator

from yupana.projection.bundle_error import BundleError


def check(cache: dict[str, Any]) -> None:
    """BundleError(content | compile) for the first thing the refresh would not have written."""
    _shape(cache)
    from yupana.projection.subject import glob_problem, re2_problem

    for where, field, value, problem in _compiled_values(cache, re2_problem, glob_problem):
        if not isinstance(value, str):
            raise BundleError("content", f"{where}: `{field}` holds {_short(value)}, not a string")
        found = problem(value)
        if found:
            raise BundleError("compile", f"{where}: `{field}`: {found} (the refresh refuses it on this host; "
                                         "the publisher must fix the rule and rebuild the bundle)")


def _shape(cache: dict[str, Any]) -> None:
    from yupana.planes import CACHE_VERSION, LIST_PLANES, OPTIONAL_PLANES
    from yupana.state import cache_entries

    version = cache.get("version", CACHE_VERSION)
    if version != CACHE_VERSION:
        raise BundleError("content", f"the signed cache has version {version!r}; this yupana reads version "
                                     f"{CACHE_VERSION} (publisher and hosts must run compatible yupana versions)")
    if not isinstance(cache.get("endpoint"), str):
        raise BundleError("content", "the signed cache has no endpoint (a string naming its store)")
    for key in LIST_PLANES:
        value = cache.get(key)
        if value is not None and (not isinstance(value, list) or not all(isinstance(v, dict) for v in value)):
            raise BundleError("content", f"the signed cache's `{key}` is {_short(value)}, not a list of objects")
    for key in OPTIONAL_PLANES:
        if not isinstance(cache.get(key), (dict, type(None))):
            raise BundleError("content", f"the signed cache's `{key}` is {_short(cache.get(key))}, "
                                         "neither an object nor null")
    malformed = cache_entries.check(cache)
    if malformed:
        raise BundleError("content", f"malformed entry {malformed}")
    _counts(cache)


def _counts(cache: dict[str, Any]) -> None:
    """``counts`` is what the refresh computes from the planes (the empty-catalogue guard and
    ``status`` read it: a count that overstates its plane would hide an emptied one)."""
    from yupana.planes import PLANES, count

    counts = cache.get("counts")
    if not isinstance(counts, dict):
        raise BundleError("content", f"the signed cache's `counts` is {_short(counts)}, not an object")
    for plane in PLANES:
        if plane.key not in counts and plane.key not in cache:
            continue  # a plane the publisher's yupana does not have
        found = count(plane.key, cache.get(plane.key))
        if counts.get(plane.key) != found:
            raise BundleError("content", f"the signed cache's counts say {plane.key} = {counts.get(plane.key)!r}, "
                                         f"but the plane holds {found!r}")


Problem = Callable[[str], "str | None"]


def _compiled_values(cache: dict[str, Any], regex: Problem, glob: Problem) -> Iterator[tuple[str, str, Any, Problem]]:
    """(where, field, value, the decoder's compile step) for every value a decoder compiles."""
    for i, rule in enumerate(cache.get("text_rules") or ()):
        where = _where("text_rules", i, rule)
        yield where, "pattern", rule.get("pattern"), regex
        if rule.get("exempt_path_regex") is not None:
            yield where, "exempt_path_regex", rule["exempt_path_regex"], regex
        for value in rule.get("exempt_path_regexes") or ():
            yield where, "exempt_path_regexes", value, regex
    for i, selector in enumerate(cache.get("exemption_selectors") or ()):
        for value in selector.get("exempt_path_regexes") or ():
            yield _where("exemption_selectors", i, selector), "exempt_path_regexes", value, regex
    for i, policy in enumerate(cache.get("policies") or ()):
        rule, where = policy["rule"], _where("policies", i, policy["rule"])
        yield where, "rule.pattern", rule.get("pattern"), regex
        if rule.get("gate") is not None:
            yield where, "rule.gate", rule["gate"], regex
        for value in rule.get("applies_to") or ():
            yield where, "rule.applies_to", value, glob
    for i, wire in enumerate(cache.get("tripwires") or ()):
        for value in wire.get("paths") or ():
            yield _where("tripwires", i, wire), "paths", value, glob
    for i, memory in enumerate(cache.get("memory_policies") or ()):
        yield _where("memory_policies", i, memory), "command_regex", memory.get("command_regex"), regex
    yield from _ci_scopes(cache.get("ci_map"), glob)


def _ci_scopes(ci_map: Any, glob: Problem) -> Iterator[tuple[str, str, Any, Problem]]:
    if ci_map is None:
        return
    jobs = ci_map.get("jobs")
    if not isinstance(jobs, list):
        raise BundleError("content", f"the signed cache's `ci_map.jobs` is {_short(jobs)}, not a list")
    for j, job in enumerate(jobs):
        commands = job.get("commands") if isinstance(job, dict) else None
        if not isinstance(commands, list) or not all(isinstance(c, dict) for c in commands):
            raise BundleError("content", f"ci_map.jobs[{j}]: `commands` is {_short(commands)}, not a list of objects")
        for c, command in enumerate(commands):
            scopes = command.get("scopes")
            if not isinstance(scopes, list):
                raise BundleError("content", f"ci_map.jobs[{j}].commands[{c}]: `scopes` is {_short(scopes)}, not a list")
            for value in scopes:
                yield f"ci_map.jobs[{j}].commands[{c}]", "scopes", value, glob


def _where(plane: str, index: int, entry: dict[str, Any]) -> str:
    name = entry.get("name") if isinstance(entry.get("name"), str) else entry.get("iri")
    return f"{plane}[{index}]" + (f" ({name})" if isinstance(name, str) else "")


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
