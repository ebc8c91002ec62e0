"""The advise readout's arithmetic: spool records into hook invocations, invocations into groups.
Cold path, plain data (docs/report.md).

An :class:`Invocation` is one hook call, read from its per-invocation record (``guard``,
``pre_bash_invoked``, ``post_edit_invoked``) with what the same file says about it around
that record: its ``fail_open`` and ``served_from_cache`` records (both name ``hook`` and
``session``) and pre-bash's decision records (``action_scope``, ``memory_policy``,
``self_protection``, ``disk_advisory``). pre-edit and post-edit write their invocation record
last, so what precedes it in the same session belongs to it; pre-bash writes its record first,
so what follows belongs to that session's latest pre-bash call — the attribution ``yupana
status`` uses. A degradation nothing claims is counted as *unattributed*, never dropped. Calls are counted as
they complete (:class:`Tally`), so memory does not grow with the spools.

Each invocation's rule hits say, per rule, whether it would have denied under enforce
(``would_deny``: the guard record's per-constraint flag, pre-bash's decision records' flag),
was denied, or warned. A rule at rollout stage ``shadow`` (its constraint's ``stage``) was
shown to nobody: its hits are kept apart (:meth:`Tally.shadow_rows`: per rule, the calls it
fired on and would have denied) and count in no group's figures. Grouping by ``rule`` counts an invocation under each rule it hit (one
with none under ``(no rule)``); by ``tenant``, ``repo`` or ``client`` under its one value.
"""

from __future__ import annotations

from typing import Any

NONE = "(none)"
NO_RULE = "(no rule)"
GROUPINGS = ("rule", "tenant", "repo", "client")
INVOCATION_HOOKS = {"guard": "pre-edit", "pre_bash_invoked": "pre-bash", "post_edit_invoked": "post-edit"}
BASH_DECISIONS = ("action_scope", "memory_policy", "self_protection", "disk_advisory")


class Hit:
    """One rule an invocation found unsatisfied, and what that meant."""

    __slots__ = ("rule", "would_deny", "denied")

    def __init__(self, rule: str, would_deny: bool | None, denied: bool) -> None:
        self.rule = rule
        self.would_deny = would_deny  # None: not recorded (enforce, or older traffic)
        self.denied = denied


class Invocation:
    """One hook call as its records tell it."""

    __slots__ = ("hook", "client", "tenant", "repo", "result", "would_deny", "hits", "shadow", "fail_kinds",
                 "served_from_cache", "digest", "advise")

    def __init__(self, hook: str, rec: dict[str, Any]) -> None:
        self.hook = hook
        self.client = _text(rec.get("client"))
        self.tenant = _text(rec.get("tenant"))
        repo = rec.get("repo")
        project = rec.get("project")
        self.repo = (repo if isinstance(repo, str) and repo and repo != "unresolved" else
                     f"project:{project}" if isinstance(project, str) and project else NONE)
        self.result = _text(rec.get("result"))
        would = rec.get("would_deny")
        self.would_deny: bool | None = would if isinstance(would, bool) else None
        self.advise = rec.get("mode") == "advise" or self.would_deny is not None
        self.hits: list[Hit] = []
        self.shadow: list[Hit] = []  # shadow-stage rules' hits: recorded, shown to nobody, counted apart
        self.fail_kinds: list[str] = []
        self.served_from_cache = False
        digest = rec.get("digest")
        self.digest = digest if isinstance(digest, str) and digest else None
        if hook == "pre-edit":
            self.hits = _guard_hits(rec, self.result == "deny")
            self.shadow = _guard_hits(rec, False, shadow=True)

    def degraded(self, rec: dict[str, Any]) -> None:
        if rec.get("kind") == "served_from_cache":
            self.served_from_cache = True
        else:
            self.fail_kinds.append(_text(rec.get("fail_kind")))
        digest = rec.get("digest")
        if self.digest is None and isinstance(digest, str) and digest:
            self.digest = digest

    def decided(self, rec: dict[str, Any]) -> None:
        """A pre-bash decision record (or post-edit's ``scope_notice``) of this invocation."""
        kind = rec.get("kind")
        if kind == "scope_notice":  # post-edit's notice: the edit has landed, nothing is ever refused
            self.hits.append(Hit(_text(rec.get("rule")), False, False))
            return
        rule = f"self-protection:{rec.get('protected')}" if kind == "self_protection" else \
            f"disk:{rec.get('signature')}" if kind == "disk_advisory" else _text(rec.get("rule"))
        result = rec.get("result")
        would = rec.get("would_deny")
        would = would if isinstance(would, bool) else None
        self.hits.append(Hit(rule, would, result == "deny"))
        if would is not None:
            self.advise = True
            self.would_deny = bool(self.would_deny) or would
        if result == "deny" or self.result == "deny":
            self.result = "deny"
        else:
            self.result = "notify"
        digest = rec.get("digest")
        if self.digest is None and isinstance(digest, str) and digest:
            self.digest = digest

    def keys(self, by: str) -> list[str]:
        if by == "rule":
            return sorted({h.rule for h in self.hits}) or [NO_RULE]
        return [{"tenant": self.tenant, "repo": self.repo, "client": self.client}[by]]

    def hits_for(self, key: str, by: str) -> list[Hit]:
        return [h for h in self.hits if h.rule == key] if by == "rule" else self.hits


def _guard_hits(rec: dict[str, Any], denied: bool, *, shadow: bool = False) -> list[Hit]:
    """The rules a ``guard`` record found unsatisfied: its constraints (each with its own
    would_deny and response), else its ``rule`` join (older records: the record's would_deny
    is a rule's only when it names one rule; a denial is each named rule's). ``shadow``: only
    the constraints of rules at rollout stage ``shadow`` (else: every other one)."""
    constraints = rec.get("constraints")
    if isinstance(constraints, list) and constraints:
        hits = []
        for c in constraints:
            if not isinstance(c, dict) or c.get("outcome") != "unsatisfied" or not isinstance(c.get("id"), str):
                continue
            if (c.get("stage") == "shadow") != shadow:
                continue
            would = c.get("would_deny")
            hits.append(Hit(c["id"], would if isinstance(would, bool) else None, c.get("response") == "blocked"))
        return hits
    if shadow:
        return []
    rule = rec.get("rule")
    names = [r for r in rule.split("+") if r] if isinstance(rule, str) else []
    would = rec.get("would_deny")
    one = would if isinstance(would, bool) and len(names) == 1 else None
    return [Hit(name, one, denied) for name in names]


def _text(value: object) -> str:
    return value if isinstance(value, str) and value else NONE


class Figures:
    """One group's running figures (docs/report.md, "What is counted"), added to one call at a time."""

    __slots__ = ("invocations", "hooks", "advise", "would_deny", "denied", "warned", "unrecorded", "fail_open",
                 "fail_kinds", "served_from_cache", "digests")

    def __init__(self) -> None:
        self.invocations = self.advise = self.would_deny = self.denied = self.warned = self.unrecorded = 0
        self.fail_open = self.served_from_cache = 0
        self.hooks: dict[str, int] = {}
        self.fail_kinds: dict[str, int] = {}
        self.digests: dict[str, int] = {}

    def add(self, inv: Invocation, hits: list[Hit], per_rule: bool) -> None:
        """Count ``inv`` with ``hits`` (the ones that count for this group). ``per_rule``: the hits
        are one rule's, and would-deny, denied and warned are that rule's; otherwise they are the
        call's (its record's ``would_deny`` and ``result`` count too)."""
        self.invocations += 1
        self.hooks[inv.hook] = self.hooks.get(inv.hook, 0) + 1
        self.advise += inv.advise
        would_deny = any(h.would_deny for h in hits) or (not per_rule and inv.would_deny is True)
        denied = any(h.denied for h in hits) or (not per_rule and inv.result == "deny")
        self.would_deny += would_deny
        self.denied += denied
        if hits and not would_deny and not denied:  # a notice, and only a notice
            if inv.advise and any(h.would_deny is None for h in hits):
                self.unrecorded += 1  # an advise-mode notice whose would_deny was not recorded (older traffic)
            else:
                self.warned += 1
        if inv.fail_kinds:
            self.fail_open += 1
            for kind in sorted(set(inv.fail_kinds)):
                self.fail_kinds[kind] = self.fail_kinds.get(kind, 0) + 1
        self.served_from_cache += inv.served_from_cache
        if inv.digest:
            self.digests[inv.digest] = self.digests.get(inv.digest, 0) + 1

    def as_json(self) -> dict[str, Any]:
        n = self.invocations
        return {"invocations": n, "hooks": self.hooks, "advise": self.advise, "would_deny": self.would_deny,
                "denied": self.denied, "warned": self.warned, "would_deny_unrecorded": self.unrecorded,
                "fail_open": self.fail_open, "fail_open_rate": _rate(self.fail_open, n), "fail_kinds": self.fail_kinds,
                "served_from_cache": self.served_from_cache,
                "served_from_cache_rate": _rate(self.served_from_cache, n), "digests": self.digests}


class Tally:
    """The figures of every call read, in total and per group of ``by``, counted as each call is
    complete (memory grows with the groups and the open sessions, not with the spools), and the
    degradations nothing claimed."""

    def __init__(self, by: str) -> None:
        self.by = by
        self.total = Figures()
        self.groups: dict[str, Figures] = {}
        self.unattributed: dict[str, int] = {}  # "fail_open:<kind>" / "served_from_cache" -> count
        self.shadow: dict[str, list[int]] = {}  # shadow rule -> [calls it fired on, calls it would have denied]

    def read(self, records: Any) -> None:
        """Fold one file's records (in file order) into calls, each counted once complete: a
        pre-edit or post-edit call at its record (what belongs to it came before), a pre-bash call
        when its session's next pre-bash call begins or the file ends."""
        pending: dict[tuple[str, str], list[dict[str, Any]]] = {}  # (hook, session) -> records awaiting it
        opened: dict[str, Invocation] = {}  # session -> its latest pre-bash invocation
        for rec in records:
            kind = rec["kind"]
            session = rec.get("session")
            session = session if isinstance(session, str) else repr(session)
            hook = INVOCATION_HOOKS.get(kind)
            if hook is not None:
                inv = Invocation(hook, rec)
                if hook == "pre-bash":
                    previous = opened.pop(session, None)
                    if previous is not None:
                        self.count(previous)
                    opened[session] = inv
                    continue
                for held in pending.pop((hook, session), ()):
                    (inv.decided if held["kind"] == "scope_notice" else inv.degraded)(held)
                self.count(inv)
            elif kind in ("fail_open", "served_from_cache"):
                hook_of = rec.get("hook")
                if hook_of == "pre-bash" and session in opened:
                    opened[session].degraded(rec)
                elif hook_of in ("pre-edit", "post-edit"):
                    pending.setdefault((hook_of, session), []).append(rec)
                else:
                    self._lost(rec)
            elif kind in BASH_DECISIONS and session in opened:
                opened[session].decided(rec)
            elif kind == "scope_notice":
                pending.setdefault(("post-edit", session), []).append(rec)
        for inv in opened.values():
            self.count(inv)
        for waiting in pending.values():
            for lost in waiting:
                if lost["kind"] != "scope_notice":
                    self._lost(lost)

    def count(self, inv: Invocation) -> None:
        for rule in sorted({h.rule for h in inv.shadow}):
            counts = self.shadow.setdefault(rule, [0, 0])
            counts[0] += 1
            counts[1] += any(h.would_deny for h in inv.shadow if h.rule == rule)
        self.total.add(inv, inv.hits, per_rule=False)
        for key in inv.keys(self.by):
            self.groups.setdefault(key, Figures()).add(inv, inv.hits_for(key, self.by), per_rule=self.by == "rule")

    def rows(self) -> list[dict[str, Any]]:
        """``[{key, **figures}]``, the most would-denies first, then the most calls."""
        rows = [{"key": key, **figures.as_json()} for key, figures in self.groups.items()]
        rows.sort(key=lambda r: (-r["would_deny"], -r["invocations"], r["key"]))
        return rows

    def shadow_rows(self) -> list[dict[str, Any]]:
        """``[{rule, fired, would_deny}]`` of every shadow-stage rule seen, the most would-denies first."""
        ordered = sorted(self.shadow.items(), key=lambda kv: (-kv[1][1], -kv[1][0], kv[0]))
        return [{"rule": rule, "fired": n[0], "would_deny": n[1]} for rule, n in ordered]

    def _lost(self, rec: dict[str, Any]) -> None:
        key = "served_from_cache" if rec["kind"] == "served_from_cache" else f"fail_open:{_text(rec.get('fail_kind'))}"
        self.unattributed[key] = self.unattributed.get(key, 0) + 1


def _rate(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None
