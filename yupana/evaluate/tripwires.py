"""Tripwires: boundaries with declared effects (local ``[[yupana.policy.tripwires]]`` and governed).

A wire trips when the edit's session-relative path matches one of its globs — a path-only
wire on any edit, a pure deletion included; a rule-conditioned wire only when the named
``[[yupana.policy.rules]]`` rule fired on this edit inside the boundary (without introduced
text or a grammar there is no evidence, and the wire does not trip: UNKNOWN).

Effects, class first (governed wires may carry a class): ``deny`` blocks under enforce and
advises under advise; ``warn`` notifies and never blocks; ``throttle`` never blocks and
records an expiring back-off (see :mod:`yupana.state.throttles`) — even when a sibling wire
denies. Every tripped wire is its own constraint evaluation (point PAG, tree-sitter tier;
local wires are fresh, governed ones carry the cache's freshness).

A misconfigured wire — malformed glob, a rule no rules entry defines, a throttle without
back-off, no paths and no rule, an unknown effect — is never silently inert: :func:`load_local`
and :func:`load_governed` return it as *broken* (named), and the hook fails open loudly.
Governed wires at verification point ``PAA`` are skipped at this gate.
"""

from __future__ import annotations

from yupana import globs
from yupana.evaluate import UNKNOWN, Finding, policy_blocks

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from typing import Any
    from yupana.globs import Glob

EFFECTS = ("deny", "warn", "throttle")


class Wire:
    """One well-formed wire, ready to match."""

    __slots__ = ("name", "globs", "patterns", "rule", "effect", "class_", "message", "backoff", "source", "iri",
                 "stage")

    def __init__(self, name: str, compiled: list[Glob], patterns: list[str], rule: str | None, effect: str,
                 class_: str | None, message: str | None, backoff: dict[str, Any] | None, source: str,
                 iri: str | None, stage: str | None = None) -> None:
        self.name = name
        self.globs = compiled
        self.patterns = patterns
        self.rule = rule
        self.effect = effect
        self.class_ = class_
        self.message = message
        self.backoff = backoff
        self.source = source
        self.iri = iri
        self.stage = stage if stage in ("shadow", "advise") else None  # a governed wire's rollout stage

    @property
    def constraint_id(self) -> str:
        return f"tripwire:{self.name}"


def load_local(entries: list[dict[str, Any]], rule_names: set[str]) -> tuple[list[Wire], list[tuple[str, str]]]:
    """Well-formed local wires, and (name, what is wrong) for each broken one."""
    wires: list[Wire] = []
    broken: list[tuple[str, str]] = []
    for i, entry in enumerate(entries or ()):
        name = str(entry.get("name") or f"tripwires[{i}]")
        patterns = list(entry.get("paths") or ())
        rule = entry.get("rule") or None
        effect = entry.get("effect") or ""
        problem = None
        compiled: list[Glob] = []
        try:
            compiled = [globs.compile_glob(p) for p in patterns]
        except globs.GlobError as exc:
            problem = f"malformed glob ({exc})"
        if problem is None:
            if not patterns and not rule:
                problem = "it has no paths and no rule"
            elif rule and rule not in rule_names:
                problem = f"rule `{rule}` is not defined by any [[yupana.policy.rules]] entry"
            elif effect not in EFFECTS:
                problem = f"effect {effect!r} is not one of deny, warn, throttle"
            elif effect == "throttle" and not (isinstance(entry.get("backoff_secs"), int) and entry["backoff_secs"] > 0):
                problem = "a throttle wire needs backoff_secs (a positive number of seconds)"
        if problem:
            broken.append((name, f"tripwire `{name}`: {problem}"))
            continue
        backoff = {"kind": "fixed", "secs": entry["backoff_secs"]} if effect == "throttle" else None
        wires.append(Wire(name, compiled, patterns, rule, effect, None, entry.get("message"), backoff, "local", None))
    return wires, broken


def load_governed(entries: list[dict[str, Any]]) -> tuple[list[Wire], list[tuple[str, str]]]:
    """Governed wires from the cache (``_paths`` precompiled), skipping PAA wires."""
    wires: list[Wire] = []
    broken: list[tuple[str, str]] = []
    for entry in entries or ():
        if entry.get("verification_point") == "PAA":
            continue
        name = str(entry.get("name") or entry.get("iri") or "?")
        effect = entry.get("effect") or "warn"
        compiled = entry.get("_paths")
        if compiled is None:
            try:
                compiled = [globs.compile_glob(p) for p in entry.get("paths") or ()]
            except globs.GlobError as exc:
                broken.append((name, f"governed tripwire `{name}` ({entry.get('iri')}): malformed glob ({exc})"))
                continue
        if not compiled:
            broken.append((name, f"governed tripwire `{name}` ({entry.get('iri')}): no aegis:appliesTo globs"))
        elif effect not in EFFECTS:
            broken.append((name, f"governed tripwire `{name}` ({entry.get('iri')}): effect {effect!r} cannot be enforced here"))
        elif effect == "throttle" and not isinstance(entry.get("backoff"), dict):
            broken.append((name, f"governed tripwire `{name}` ({entry.get('iri')}): throttle without a compiled back-off"))
        else:
            wires.append(Wire(name, list(compiled), list(entry.get("paths") or ()), None, effect, entry.get("class"),
                              entry.get("message"), entry.get("backoff"), "governed", entry.get("iri"),
                              entry.get("stage")))
    return wires, broken


def evaluate(wires: list[Wire], rel: str, real_rel: str | None, fired: set[str], evaluated: set[str]) -> list[Finding]:
    """One finding per wire this edit crosses (its path, or its symlink-resolved path).

    ``fired`` names the local rules that fired on this edit and ``evaluated`` those that
    ran at all: a rule-conditioned wire whose rule could not run here (no introduced text,
    no grammar) is UNKNOWN inside its boundary rather than silently untripped.
    """
    names = (rel,) if real_rel is None or real_rel == rel else (rel, real_rel)
    out: list[Finding] = []
    for wire in wires:
        if wire.globs and not any(globs.match_any(wire.globs, name) for name in names):
            continue
        verdict = "(throttle: the crossing is recorded as a back-off)" if wire.effect == "throttle" else f"({wire.effect})"
        if wire.rule:
            if wire.rule not in evaluated:
                out.append(Finding(wire.constraint_id, "tripwire",
                                   f"tripwire `{wire.name}` not evaluated: rule `{wire.rule}` could not run on "
                                   f"{rel} (no introduced text or no grammar)", outcome=UNKNOWN, rel=rel,
                                   verification_point="PAG", source=wire.iri or "config", extra=_extra(wire)))
                continue
            if wire.rule not in fired:
                continue
            verdict = f"(rule `{wire.rule}` fired inside the boundary; {verdict[1:-1]})"
        blocking = wire.effect == "deny" and policy_blocks(wire.class_, wire.effect)
        text = f"edit to {rel} crosses tripwire `{wire.name}` {verdict}"
        if wire.message:
            text += f": {wire.message}"
        if blocking and wire.stage == "advise":
            text += " (rollout stage advise, so only a warning)"
        out.append(Finding(wire.constraint_id, "tripwire", text, blocking=blocking, class_=wire.class_,
                           verification_point="PAG", source=wire.iri or "config", rel=rel, extra=_extra(wire)))
    return out


def _extra(wire: Wire) -> dict[str, Any]:
    return {"effect": wire.effect, "backoff": wire.backoff, "wire_source": wire.source, "tier": "tree-sitter",
            "stage": wire.stage}
