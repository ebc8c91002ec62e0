"""The action scope: may this tenant act on the targets a command resolves to? Hot path.

The command half of the capability scope (the path half is :mod:`yupana.evaluate.scope`).
Effective rung = the lower of ``[yupana.policy] action_scope`` and ``mode``
(:func:`yupana.evaluate.rung`); the tenant comes from ``$BOBBIN_ROLE`` only (the caller
reads it). ``allow_targets`` / ``deny_targets`` globs of ``[yupana.policy.scopes.<tenant>]``
are matched against each resolved action's ``class:target``: deny beats allow, an empty
allow list permits any target, and only resolved actions are judged — an abstention
(``unknown``) is never a violation. This module decides; the hook records and says.
"""

from __future__ import annotations

from yupana import globs
from yupana.evaluate import LADDER, rung
from yupana.shell.targets import UNKNOWN as UNRESOLVED

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from typing import Any
    from yupana.shell.targets import Action
    Verdict = tuple[Action, str | None, str]  # (action, the rule it breaks or None, why)


class Armed:
    """The scope that applies to this command: the rung, the tenant and its target globs."""

    __slots__ = ("enforce", "tenant", "allow", "deny")

    def __init__(self, enforce: bool, tenant: str, allow: list[str], deny: list[str]) -> None:
        self.enforce = enforce
        self.tenant = tenant
        self.allow = allow
        self.deny = deny


def arm(policy: dict[str, Any], mode: str, tenant: str | None) -> Armed | str:
    """The :class:`Armed` scope for ``tenant`` under ``policy``, or why none applies (a sentence)."""
    setting = policy.get("action_scope", "off")
    level = LADDER.get(rung(setting, mode), 0)
    if level == 0 or not tenant:
        return "no tenant ($BOBBIN_ROLE)" if level else f"action_scope = {setting} (mode {mode} is its ceiling)"
    scope = (policy.get("scopes") or {}).get(tenant)
    if not scope:  # a tenant with no scope entry is unconstrained
        return f"tenant `{tenant}` has no scope entry: unconstrained"
    allow = list(scope.get("allow_targets") or ())
    deny = list(scope.get("deny_targets") or ())
    if not allow and not deny:
        return f"tenant `{tenant}` declares no allow_targets / deny_targets"
    return Armed(level == 2, tenant, allow, deny)


def judge(armed: Armed, actions: list[Action]) -> list[Verdict]:
    """``[(action, rule, why)]`` for every resolved action; ``rule`` None: inside the scope.
    Raises :class:`yupana.globs.GlobError` on a malformed target glob (nothing is judged)."""
    allow_c = [(g, globs.compile_glob(g)) for g in armed.allow]
    deny_c = [(g, globs.compile_glob(g)) for g in armed.deny]
    verdicts: list[Verdict] = []
    for a in actions:
        if a.class_ == UNRESOLVED:
            continue
        key = a.key
        hit = next((g for g, tokens in deny_c if globs.matches(tokens, key)), None)
        if hit is not None:
            verdicts.append((a, f"deny_targets:{hit}", f"the denied target `{hit}` matches it"))
        elif allow_c and not any(globs.matches(tokens, key) for _, tokens in allow_c):
            verdicts.append((a, "allow_targets", f"it is not among the allowed targets ({', '.join(armed.allow)})"))
        else:
            verdicts.append((a, None, "inside the scope"))
    return verdicts


def deny_reason(a: Action, tenant: str, why: str) -> str:
    """The deny envelope's reason, written for the model."""
    return (f"yupana: this command would act on {a.class_} `{a.target}` ({a.verb}), outside the action scope "
            f"of tenant `{tenant}`: {why}. Act only on targets the scope allows, or ask the operator to widen "
            "the scope.")


def advise_line(a: Action, tenant: str, why: str) -> str:
    """The stderr line of an advise-rung violation."""
    return (f"yupana (action scope, advise: enforce would deny): {a.class_}:{a.target} ({a.verb}) "
            f"is outside the scope of tenant `{tenant}`: {why}")
