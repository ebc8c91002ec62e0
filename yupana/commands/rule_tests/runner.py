"""Judging the cases: each one's payload through the real hook, rehearsed as ``yupana explain``
rehearses it (:func:`yupana.commands.explain.explain`: the hook's own runtime with
:class:`~yupana.hooks.effects.RehearsalEffects`), and the decision and findings compared with
the case's expectation. There is no second evaluator here. Cold path.

A rule *fired* in a case when the hook recorded a finding for it that was not satisfied (a
match, an UNKNOWN, a tripwire crossed); ``rules`` and ``not_rules`` are compared with those.
A rule is named by its IRI, its compact ``aegis:`` form, the IRI's local name, or the name the
catalogue gives it (``aegis:name``, a structural rule's name).
"""

from __future__ import annotations

from typing import Any

import json
import os

from yupana import planes
from yupana.commands.rule_tests import payloads
from yupana.commands.rule_tests.cases import Case, CaseError
from yupana.commands.rule_tests.sandbox import Sandbox


class Rule:
    """One governed rule of the catalogue under test, and every name a case may call it by."""

    __slots__ = ("iri", "plane", "name", "names")

    def __init__(self, plane: str, entry: dict[str, Any]) -> None:
        self.plane = plane
        self.iri = str(entry.get("iri") or "")
        inner = entry.get("rule")
        inner = inner if isinstance(inner, dict) else {}
        self.name = str(entry.get("name") or inner.get("name") or _local(self.iri))
        self.names = {self.iri, self.name, _local(self.iri), compact(self.iri)} - {""}


def governed_rules(cache: dict[str, Any]) -> list[Rule]:
    """Every entry of the cache's governed planes (:data:`yupana.planes.GOVERNED_PLANES`)."""
    return [Rule(key, e) for key in planes.GOVERNED_PLANES for e in cache.get(key) or () if isinstance(e, dict)]


def compact(iri: str) -> str:
    return "aegis:" + iri[len(planes.AEGIS):] if iri.startswith(planes.AEGIS) else iri


def _local(iri: str) -> str:
    return iri.rstrip("/").rsplit("/", 1)[-1].rsplit("#", 1)[-1] if iri else ""


class Result:
    """One case judged: what the hook did, what was expected, and why it failed (if it did)."""

    def __init__(self, case: Case, hook: str, decision: str, fired: list[dict[str, Any]], failures: list[str],
                 stdout: str, stderr: list[str]) -> None:
        self.case = case
        self.hook = hook
        self.decision = decision
        self.fired = fired
        self.failures = failures
        self.stdout = stdout
        self.stderr = stderr

    @property
    def passed(self) -> bool:
        return not self.failures

    def as_dict(self) -> dict[str, Any]:
        c = self.case
        return {"name": c.name, "file": c.file, "index": c.index, "passed": self.passed, "hook": self.hook,
                "mode": c.mode, "tenant": c.tenant, "expect": c.expect, "decision": self.decision,
                "rules": c.rules, "not_rules": c.not_rules, "fired": self.fired, "failures": self.failures,
                "stdout": self.stdout, "stderr": self.stderr}


def run_case(case: Case, sandbox: Sandbox, rules: list[Rule]) -> Result:
    """Run ``case`` in a fresh project of ``sandbox`` (which must be active) and judge it."""
    from yupana.commands import explain
    from yupana.hooks import registry

    root = sandbox.case_root(case.mode, case.repo)
    cwd = os.path.normpath(os.path.join(root, case.cwd or "."))
    os.makedirs(cwd, exist_ok=True)
    before = payloads.file_before(case)
    if before is not None and case.path and not os.path.isabs(case.path):
        target = os.path.normpath(os.path.join(cwd, case.path))
        if os.path.commonpath([target, root]) != root:
            raise CaseError(f"{case.where}: `path` {case.path!r} leaves the repository; the file it names would be "
                            "written outside the sandbox (give a path inside the repository, or an absolute one "
                            "without `before`/`old`)")
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "w", encoding="utf-8") as fh:
            fh.write(before)
    payload = payloads.build(case, cwd, f"yupana-test-{os.path.basename(root)}")
    hook, hook_from = (case.hook, "the case's `hook`") if case.hook else registry.infer(payload)
    os.chdir(cwd)
    raw = json.dumps(payload).encode("utf-8", "surrogatepass")
    try:
        report = explain.explain(raw, hook, hook_from, case.tenant, None)
    except Exception as exc:  # named with its case; the command reports it as internal (exit 3)
        raise RuntimeError(f"{case.where}: the rehearsal of {hook} failed: {type(exc).__name__}: {exc}") from exc
    fired = fired_rules(report, rules)
    return Result(case, hook, str(report["decision"]), fired, judge(case, str(report["decision"]), fired, rules),
                  str(report.get("stdout") or ""), list(report.get("stderr") or []))


def fired_rules(report: dict[str, Any], rules: list[Rule]) -> list[dict[str, Any]]:
    """The findings of the explain ``report`` that were not satisfied, each with the rule's IRI."""
    by_iri = {r.iri: r for r in rules}
    out: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()
    for stage in report.get("stages") or ():
        for f in stage.get("findings") or ():
            if f.get("outcome") == "satisfied":
                continue
            iri = str((f.get("provenance") or {}).get("iri") or "")
            key = (str(f.get("id")), iri)
            if key in seen:
                continue
            seen.add(key)
            rule = by_iri.get(iri)
            out.append({"id": f.get("id"), "iri": iri or None, "rule": rule.name if rule else None,
                        "plane": f.get("plane"), "outcome": f.get("outcome"), "response": f.get("response"),
                        "stage": stage.get("stage"), "file": f.get("file")})
    return out


def names_of(fired: dict[str, Any], rules: list[Rule]) -> set[str]:
    """Every name a case may use for the rule behind the finding ``fired``."""
    iri = fired.get("iri") or ""
    names = {str(fired.get("id") or ""), iri, compact(iri), _local(iri)}
    ident = str(fired.get("id") or "")
    if "#" in ident:  # a grounded rule's finding: <rule name>#<what it found>
        names.add(ident.split("#", 1)[0])
    for rule in rules:
        if rule.iri and rule.iri == iri:
            names |= rule.names
    return names - {""}


def judge(case: Case, decision: str, fired: list[dict[str, Any]], rules: list[Rule]) -> list[str]:
    """Why ``case`` failed (empty: it passed)."""
    failures: list[str] = []
    if decision != case.expect:
        why = ", ".join(sorted({str(f.get("rule") or f.get("id")) for f in fired})) or "no rule fired"
        failures.append(f"expected {case.expect}, the hook decided {decision} ({why})")
    named = set().union(*(names_of(f, rules) for f in fired)) if fired else set()
    for wanted in case.rules:
        if wanted not in named:
            failures.append(f"rule {wanted!r} did not fire" + _unknown(wanted, rules))
    for unwanted in case.not_rules:
        if unwanted in named:
            failures.append(f"rule {unwanted!r} fired (listed in not_rules)")
    return failures


def _unknown(name: str, rules: list[Rule]) -> str:
    if any(name in r.names for r in rules):
        return ""
    return " — and the catalogue has no governed rule by that name or IRI"


def coverage(rules: list[Rule], results: list[Result]) -> list[Rule]:
    """The governed rules no case made fire."""
    fired = {f.get("iri") for r in results for f in r.fired}
    return [r for r in rules if r.iri not in fired]
