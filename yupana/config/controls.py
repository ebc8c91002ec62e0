"""The local controls compiled as the hooks would compile them: what ``yupana config check`` reports.

A configuration can be valid (every key of the right type) and still hold a control that
no hook can run: a malformed glob, a regex RE2 refuses, a tree-sitter query that does not
compile, a broken tripwire, a key nothing reads. The hooks find those one at a time, each as
a once-per-session fail-open. This module asks the hooks' own compile steps — the glob
compiler of :mod:`yupana.globs` (scopes: ``scope.check_paths`` and pre-bash's target
scope), :func:`yupana.evaluate.structural.problems` (RE2 patterns and gates, ``applies_to``,
the tree-sitter query), :func:`yupana.evaluate.tripwires.load_local` (the tripwire set), and
the endpoint check the refresh makes — so check and hook cannot disagree. Cold path.

A finding is ``{"file", "key", "value", "problem", "fix"}``: ``file`` is the file (or
environment variable, or ``default``) the key's value came from, ``key`` is dotted as in
the configuration errors (``yupana.policy.rules.0.pattern``).
"""

from __future__ import annotations

from typing import Any

import os

SCOPE_GLOB_KEYS = ("allow_paths", "deny_paths", "allow_targets", "deny_targets")
GLOB_FIX = ("write it in the glob dialect of docs/globs.md: `*` and `?` within one path component, `**` only as a "
            "whole component (`src/**`, `**/*.rs`), `[abc]` / `[!a-z]` classes closed with `]`")
RE2_FIX = ("RE2 has no look-around, backreferences or possessive quantifiers; rewrite the expression in RE2 "
           "syntax (https://github.com/google/re2/wiki/Syntax)")


def check(root: str, override: str | None = None, nested: tuple[str, ...] = ()) -> dict[str, Any]:
    """``{"resolved", "findings", "notes", "layers"}`` for the configuration of ``root`` (with the
    ``nested`` config layers below it, outermost first). Raises ConfigError."""
    from yupana.config import resolver as config_resolve

    resolved, read = config_resolve.resolve_layers(root, override, nested)
    findings, notes = controls(resolved["config"], lambda loc: config_resolve.origin(loc, read))
    return {"resolved": resolved, "findings": findings, "notes": notes, "layers": read}


def controls(cfg: dict[str, Any], origin: Any) -> tuple[list[dict[str, Any]], list[str]]:
    """(findings, notes) for a resolved ``config``; ``origin(loc)`` names where a key came from."""
    findings: list[dict[str, Any]] = []
    notes: list[str] = []

    def add(loc: tuple[Any, ...], value: object, problem: str, fix: str) -> None:
        where = origin(loc)
        if where == "default" and len(loc) > 3:  # a key the entry left out: the entry's file
            where = origin(loc[:3])
        findings.append({"file": where, "key": "yupana." + ".".join(str(p) for p in loc),
                         "value": value, "problem": problem, "fix": fix})

    with _quiet_stderr():  # RE2 logs each refused pattern on fd 2; the finding says it better
        _scopes(cfg["policy"], add)
        _rules(cfg["policy"], add, notes, origin)
        _tripwires(cfg["policy"], add)
    _endpoints(cfg["quipu"], add)
    if cfg["serve"].get("use_daemon"):
        add(("serve", "use_daemon"), True, "yupana has no resident daemon: nothing reads use_daemon, so setting it "
            "changes nothing (the structural index is persistent on disk instead, docs/structural-checks.md)",
            "remove the key, or set it to false")
    return findings, notes


def _scopes(policy: dict[str, Any], add: Any) -> None:
    from yupana import globs

    for tenant, scope in (policy.get("scopes") or {}).items():
        for key in SCOPE_GLOB_KEYS:
            for i, pattern in enumerate(scope.get(key) or ()):
                try:
                    globs.compile_glob(pattern)
                except globs.GlobError as exc:
                    add(("policy", "scopes", tenant, key, i), pattern, f"malformed glob ({exc}): the hook fails open "
                        f"on the {'action' if key.endswith('targets') else 'path'} scope of tenant `{tenant}`",
                        GLOB_FIX)


def _rules(policy: dict[str, Any], add: Any, notes: list[str], origin: Any) -> None:
    from yupana.codegraph.parse import GRAMMARS, has_grammar
    from yupana.evaluate import structural

    for i, rule in enumerate(policy.get("rules") or ()):
        name = rule.get("name") or f"rules[{i}]"
        for key, problem in structural.problems(rule):
            fix = {"applies_to": GLOB_FIX, "pattern": RE2_FIX, "gate": RE2_FIX,
                   "query": "fix the tree-sitter query (.scm) for the grammar of `language`; the node names are the "
                            "grammar's (tree-sitter-rust's node-types.json)",
                   "match_type": "use must-match, must-not-match or must-exist"}[key]
            add(("policy", "rules", i, key), rule.get(key),
                f"rule `{name}`: {problem}: the hook fails open on this rule (`rules`)", fix)
        if not has_grammar(rule.get("language")):
            notes.append(f"{origin(('policy', 'rules', i, 'language'))}: yupana.policy.rules.{i}.language = "
                         f"{rule.get('language')!r}: rule `{name}` never runs (this build parses "
                         f"{', '.join(GRAMMARS)} only)")


def _tripwires(policy: dict[str, Any], add: Any) -> None:
    from yupana.evaluate import tripwires

    names = {r.get("name") for r in policy.get("rules") or ()}
    for i, entry in enumerate(policy.get("tripwires") or ()):
        _, broken = tripwires.load_local([entry], names)
        for _, problem in broken:
            key, fix = _wire_fix(entry, names)
            add(("policy", "tripwires", i) + ((key,) if key else ()), entry.get(key) if key else None,
                f"{problem}: the hook fails open on this wire", fix)


def _wire_fix(entry: dict[str, Any], rule_names: set[Any]) -> tuple[str | None, str]:
    """The key of a broken wire to look at, and how to fix it (load_local says what is wrong)."""
    from yupana import globs

    for pattern in entry.get("paths") or ():
        try:
            globs.compile_glob(pattern)
        except globs.GlobError:
            return "paths", GLOB_FIX
    if not entry.get("paths") and not entry.get("rule"):
        return None, "give the wire `paths` (globs), a `rule` (a [[yupana.policy.rules]] name), or both"
    if entry.get("rule") and entry["rule"] not in rule_names:
        shown = ", ".join(f"`{n}`" for n in sorted(n for n in rule_names if n)) or "none are defined"
        return "rule", f"name a [[yupana.policy.rules]] entry ({shown}), or drop `rule` for a path-only wire"
    if entry.get("effect") != "throttle":
        return "effect", "set effect to deny, warn or throttle"
    return "backoff_secs", "set backoff_secs to a positive number of seconds"


def _endpoints(quipu: dict[str, Any], add: Any) -> None:
    from yupana.endpoint import EndpointError, check_location

    for key in ("endpoint", "update_endpoint"):
        value = (quipu.get(key) or "").strip()
        if not value or value.startswith("file:"):  # the embedded store: its files are read by the refresh
            continue
        try:
            check_location(value, f"[yupana.quipu] {key}")
        except EndpointError as exc:
            add(("quipu", key), value, f"{exc.message}: every refresh would fail ({exc.kind})",
                "use http://host:port/… or https://… (a SPARQL 1.1 query URL, or quipu's base URL), or "
                "file:<path> for the embedded store (docs/endpoints.md)")


class _quiet_stderr:
    """fd 2 on /dev/null for the block (RE2's C++ logging cannot be switched off per call)."""

    def __enter__(self) -> None:
        import sys

        sys.stderr.flush()
        self.saved = os.dup(2)
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 2)
        os.close(null)

    def __exit__(self, *exc: object) -> None:
        os.dup2(self.saved, 2)
        os.close(self.saved)
