"""Structural policies (Selector + Predicate) at the tree-sitter tier: one code path for the
governed catalogue (cache ``policies`` entries) and local ``[[yupana.policy.rules]]``.

A policy entry is ``{"iri", "rule": {name, language, query, match_type, pattern, gate,
applies_to, message, class, verification_point, …}, "effect", …}`` (docs/cache-format.md);
the hook wraps each local rule the same way. The rule semantics are the Rust original's
(interop §1.1):

* only PAG rules run here (``verification_point`` absent or ``"PAG"``);
* language-gated by the file's extension (Rust, Python, TypeScript, TSX, JavaScript, Go);
  a rule for a language with no grammar never matches — not an error, but shown as inert
  by ``project --dump``, ``status`` and ``explain``;
* ``applies_to`` globs (the cache's precompiled ``_applies_to`` tokens when present) on the
  session-relative path; empty means every path of the language;
* the Selector's ``.scm`` query runs on the **introduced text only**; the gate keeps the
  captures whose text it matches; then ``must-match`` (each kept capture must match),
  ``must-not-match`` (none may) or ``must-exist`` (at least one must);
* before any of that, the literals the pattern and gate require (derived on the cold path)
  decide what they can (:func:`decided_without_parsing`): a small edit without ``unwrap`` in it
  never loads tree-sitter for a no-unwrap policy;
* blocking is class first (:func:`yupana.evaluate.policy_blocks`); the hook applies the mode.

A query, pattern, gate or glob that does not compile gives that policy an UNKNOWN finding
carrying ``extra["error"]`` (naming the policy and what failed); the hook turns it into the
loud fail-open ``projection-rules`` (governed) or ``rules`` (local). Other policies still run.
When the deadline bound by the hook (:func:`yupana.codegraph.parse.bind_deadline`) runs out
inside a parse or a query, that policy and the rest are UNKNOWN with ``extra["deadline"]``.
tree-sitter is imported only when a rule applies to the file's language.
"""

from __future__ import annotations

from yupana import globs
from yupana.evaluate import SATISFIED, UNKNOWN, UNSATISFIED, Finding, policy_blocks
from yupana.regex.prefilter import may_match

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any  # a compiled re2 pattern (google-re2 ships no types)

    Policy = dict[str, Any]  # a cache ``policies`` entry (or a local rule wrapped as one)

    from tree_sitter import Node, Query, Tree
    from yupana.edit.payload import FileEdit

PLANE = "structural"
TIER = "tree-sitter"
MAX_SHOWN = 3
MATCH_TYPES = ("must-match", "must-not-match", "must-exist")
JUDGE_STRIDE = 128  # captures judged between deadline checks (~0.3 ms of work)

_regex: dict[str, Any] = {}


class RuleError(ValueError):
    """A structural rule that cannot run as written (what failed is in the message)."""


def _compile_regex(pattern: str, what: str) -> Any:
    found = _regex.get(pattern)
    if found is not None:
        return found
    from yupana.regex import re2_binding

    try:
        compiled = re2_binding.compile(pattern)
    except Exception as exc:  # noqa: BLE001 - re2.error, TypeError: all mean "does not compile"
        detail = exc.args[0] if exc.args else type(exc).__name__
        if isinstance(detail, bytes):
            detail = detail.decode("utf-8", "replace")
        raise RuleError(f"{what} /{pattern}/ does not compile as RE2 ({detail})") from None
    _regex[pattern] = compiled
    return compiled


def _applies(policy: Policy, rule: dict[str, Any], rel: str) -> bool:
    """appliesTo: empty = every path; raises RuleError for a glob that does not compile."""
    if "_applies_to" in policy:
        compiled = policy["_applies_to"]
        if compiled is None:
            raise RuleError(f"an appliesTo glob of {rule.get('applies_to')!r} does not compile")
    else:
        try:
            compiled = [globs.compile_glob(g) for g in rule.get("applies_to") or ()]
        except globs.GlobError as exc:
            raise RuleError(f"appliesTo glob does not compile ({exc})") from None
    return not compiled or globs.match_any(compiled, rel)


def evaluate(policies: list[Policy], edit: "FileEdit", mode: str) -> list[Finding]:
    """Findings for every structural policy that applies to ``edit`` (a payload FileEdit)."""
    if mode == "off" or not policies:
        return []
    text = edit.introduced or ""
    rel = edit.rel
    from yupana.codegraph.parse import has_grammar, language_for_path, rule_applies_to_language

    language = language_for_path(rel)
    trees: dict[str, Tree] = {}
    out: list[Finding] = []
    for i, policy in enumerate(policies):
        rule = policy.get("rule") or {}
        name = str(rule.get("name") or policy.get("iri") or "unnamed-structural-rule")
        vp = rule.get("verification_point")
        lang = rule.get("language")
        if (vp not in (None, "PAG") or not isinstance(lang, str) or not rule_applies_to_language(lang, rel)
                or not has_grammar(lang)):
            continue
        source = policy.get("iri") or "config"
        try:
            if not _applies(policy, rule, rel):
                continue
            if not text:
                continue
            decided = decided_without_parsing(policy, text)
            if decided is not None:
                if decided:
                    out.append(Finding(name, PLANE, "", outcome=SATISFIED, blocking=policy_blocks(
                        rule.get("class"), policy.get("effect")), class_=rule.get("class"), verification_point=vp,
                        source=source, rel=rel, extra={"tier": TIER, "prefiltered": True}))
                else:
                    bad = [{"text": "", "line": 0}]
                    out.append(Finding(name, PLANE, _message(name, rule, rel, bad), outcome=UNSATISFIED,
                                       blocking=policy_blocks(rule.get("class"), policy.get("effect")),
                                       class_=rule.get("class"), verification_point=vp, source=source, rel=rel,
                                       extra={"tier": TIER, "violations": bad, "prefiltered": True}))
                continue
            query, match_type, pattern, gate = _compile_rule(rule)
            tree = trees.get(lang)
            if tree is None:
                from yupana.codegraph import parse

                tree = trees[lang] = parse.parse(text.encode("utf-8"), lang=lang)
            found = _judge(query, match_type, pattern, gate, tree)
        except TimeoutError:  # parse.Cancelled: the bound deadline ran out inside tree-sitter
            out += _not_evaluated(policies[i:], language, rel)
            return out
        except RuleError as exc:
            why = f"structural rule `{name}`: {exc}"
            out.append(Finding(name, PLANE, why, outcome=UNKNOWN, class_=rule.get("class"), verification_point=vp,
                               source=source, rel=rel, extra={"error": why, "tier": TIER}))
            continue
        kept, bad = found
        blocking = policy_blocks(rule.get("class"), policy.get("effect"))
        extra = {"tier": TIER, "captures": kept, "violations": bad[:20]}
        if not bad:
            out.append(Finding(name, PLANE, "", outcome=SATISFIED, blocking=blocking, class_=rule.get("class"),
                               verification_point=vp, source=source, rel=rel, extra=extra))
            continue
        out.append(Finding(name, PLANE, _message(name, rule, rel, bad), outcome=UNSATISFIED, blocking=blocking,
                           class_=rule.get("class"), verification_point=vp, source=source, rel=rel, extra=extra))
    return out


def decided_without_parsing(policy: Policy, text: str) -> bool | None:
    """True (satisfied) or False (violated) when the policy's outcome on ``text`` follows from
    its regexes' required literals alone; None when only the query can tell.

    Every capture is a substring of the introduced text, so a literal the text lacks is in no
    capture: ``must-not-match`` needs its pattern (and gate) to match some capture, so without
    their literals it is satisfied; ``must-match`` judges only captures the gate keeps, so
    without the gate's literals it is satisfied; ``must-exist`` needs its pattern to match some
    capture, so without the pattern's literals it is violated. ``_needs`` (the prefilters of
    pattern and gate) is derived on the cold path (:func:`yupana.state.hot_derive.derive_hot`);
    a policy without it (local rules) is always parsed.
    """
    needs = policy.get("_needs")
    if not needs:
        return None
    rule = policy.get("rule") or {}
    match_type = rule.get("match_type")
    pattern, gate = needs.get("pattern"), needs.get("gate")
    gate_absent = bool(rule.get("gate")) and gate is not None and not may_match(gate, text)
    if match_type == "must-not-match":
        if gate_absent or (pattern is not None and not may_match(pattern, text)):
            return True
    elif match_type == "must-match":
        if gate_absent:
            return True
    elif match_type == "must-exist":
        if pattern is not None and not may_match(pattern, text):
            return False
    return None


def _not_evaluated(policies: list[Policy], language: str | None, rel: str) -> list[Finding]:
    """UNKNOWN (``extra["deadline"]``) for each policy of ``language`` the deadline cut off."""
    out = []
    for policy in policies:
        rule = policy.get("rule") or {}
        if rule.get("verification_point") not in (None, "PAG") or not _gated(rule.get("language"), rel):
            continue
        name = str(rule.get("name") or policy.get("iri") or "unnamed-structural-rule")
        out.append(Finding(name, PLANE, f"structural policy `{name}` not evaluated on {rel} before the deadline",
                           outcome=UNKNOWN, class_=rule.get("class"), source=policy.get("iri") or "config",
                           rel=rel, extra={"deadline": True, "tier": TIER}))
    return out


def _gated(rule_language: str | None, rel: str) -> bool:
    from yupana.codegraph.parse import rule_applies_to_language

    return rule_applies_to_language(rule_language, rel)


def _compile_rule(rule: dict[str, Any]) -> tuple[Query, str, Any, Any]:
    """(query, match type, pattern, gate or None), compiled; raises RuleError."""
    match_type = rule.get("match_type")
    if match_type not in MATCH_TYPES:
        raise RuleError(f"match type {match_type!r} is not one of {', '.join(MATCH_TYPES)}")
    query = _compile_query(rule)
    pattern = _compile_regex(rule.get("pattern") or "", "pattern")
    gate = rule.get("gate")
    return query, match_type, pattern, (_compile_regex(gate, "gate") if gate else None)


def _compile_query(rule: dict[str, Any]) -> "Query":
    from yupana.codegraph import parse

    source = rule.get("query")
    if not isinstance(source, str) or not source.strip():
        raise RuleError("the selector query is empty")
    try:
        return parse.query(source, rule.get("language") or "rust")
    except parse.QueryError as exc:
        raise RuleError(f"selector query {source!r} does not compile ({exc})") from None


def problems(rule: dict[str, Any]) -> list[tuple[str, str]]:
    """(key, what is wrong) for each part of ``rule`` that :func:`evaluate` could not compile.

    The very compile steps a hook takes (``yupana config check`` asks this, so check and hook
    cannot disagree); the query only for a language this build has a grammar for.
    """
    from yupana.codegraph.parse import has_grammar

    steps: list[tuple[str, Callable[[], object]]] = [
        ("applies_to", lambda: _applies({}, rule, "")),
        ("pattern", lambda: _compile_regex(rule.get("pattern") or "", "pattern"))]
    if rule.get("gate"):
        steps.append(("gate", lambda: _compile_regex(rule["gate"], "gate")))
    if rule.get("match_type") not in MATCH_TYPES:
        steps.append(("match_type", lambda: _compile_rule(rule)))
    elif has_grammar(rule.get("language")):
        steps.append(("query", lambda: _compile_query(rule)))
    found = []
    for key, step in steps:
        try:
            step()
        except RuleError as exc:
            found.append((key, str(exc)))
    return found


def _judge(query: "Query", match_type: str, pattern: Any, gate: Any, tree: "Tree") -> tuple[int, list[dict[str, Any]]]:
    """(captures kept after the gate, violations ``{text, line}``) of one rule on the introduced text."""
    from yupana.codegraph import parse

    nodes: dict[int, Node] = {}
    for found in parse.captures(query, tree.root_node).values():
        for node in found:
            nodes.setdefault(node.id, node)
    ordered = sorted(nodes.values(), key=lambda n: (n.start_byte, n.end_byte))
    kept = []
    for i, node in enumerate(ordered):
        if not i % JUDGE_STRIDE:
            parse.check_deadline()  # thousands of captures (a comment per line of a huge edit)
        snippet = (node.text or b"").decode("utf-8", "replace")
        if gate is None or gate.search(snippet):
            kept.append((snippet, node.start_point[0] + 1))
    if match_type == "must-exist":
        if any(pattern.search(t) for t, _ in kept):
            return len(kept), []
        return len(kept), [{"text": "", "line": 0}]
    want = match_type == "must-match"
    bad = [{"text": t, "line": line} for t, line in kept if bool(pattern.search(t)) != want]
    return len(kept), bad


def _message(name: str, rule: dict[str, Any], rel: str, bad: list[dict[str, Any]]) -> str:
    match_type = rule.get("match_type")
    pattern = rule.get("pattern")
    query = rule.get("query")
    gate = rule.get("gate")
    scope = f"`{query}` captures" + (f" matching /{gate}/" if gate else "")
    if match_type == "must-exist":
        what = f"the introduced text has no {scope} matching /{pattern}/"
    else:
        verb = "does not match" if match_type == "must-match" else "matches"
        shown = "; ".join(f"{_clip(b['text'])!r} (line {b['line']} of the introduced text) {verb} /{pattern}/"
                          for b in bad[:MAX_SHOWN])
        more = f"; and {len(bad) - MAX_SHOWN} more" if len(bad) > MAX_SHOWN else ""
        what = f"{shown}{more}"
    tail = f" {rule['message']}" if rule.get("message") else ""
    return (f"edit to {rel} violates structural policy `{name}` ({match_type}, {scope}, tree-sitter tier): "
            f"{what}.{tail}")


def _clip(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 1] + "…"
