"""What a pre-edit invocation knows and records, loaded lazily: the state behind the guard.

:class:`GuardContext` holds the invocation's outcome, findings and configuration, and the
things a stage may need, each loaded at most once and only when asked for: the governed
plane (:func:`yupana.hooks.governed.load`, loudly failing open when no cache is servable),
the tripwire set (broken wires named once per session), exposure, git top-levels, the
tracker plate, the throttle table; and the guard's own controls (:meth:`GuardContext.protect`,
the first path-only check). It also writes what the invocation leaves behind: the back-offs
of crossed throttle wires, the folded-in throttle advisory and the one ``guard`` record.
The order of the checks lives in :mod:`yupana.hooks.pre_edit`. Hot path.

The contract every hook shares — answer, crash, degrade, the stage notes, the governed cache
— is :class:`yupana.hooks.runtime.HookRuntime`'s; everything this module leaves behind goes
through the runtime's effects (:mod:`yupana.hooks.effects`), so ``yupana explain``'s dry
run predicts instead of makes: no refresh or exposure worker is spawned (the answer is the
one a real hook would get), no throttle back-off is written.
"""

from __future__ import annotations

import os
import time

from yupana import self_protection
from yupana.evaluate import UNKNOWN, UNSATISFIED, Finding, stage_of
from yupana.edit import payload
from yupana.hooks import protocol
from yupana.hooks.effects import Effects
from yupana.hooks.runtime import RAN, SKIPPED, HookRuntime

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from collections.abc import Callable

    from yupana.edit.model import FileEdit
    from yupana.evaluate.tripwires import Wire
    from typing import Any
    from yupana.hooks.registry import HookArgs

MAX_RECORDED_CONSTRAINTS = 200
# The checks of bounded, small cost, never cut by the deadline (issue 25 §3); 65536 is
# yupana.evaluate.text_rules.BOUNDED_CHARS (not imported here: a hook without text rules skips it).
BOUNDED_CHECKS = ("the guard's own controls, path scope, tripwires, and text rules and grounded predicates on "
                  "introduced text up to 65536 characters")


class GuardContext(HookRuntime):
    """State, lazy loaders and records of one pre-edit invocation."""

    hook = "pre-edit"
    unchecked = "this edit was NOT checked"
    gov_note = ": governed policy is NOT enforced (fail-open)"

    def __init__(self, args: HookArgs, t0: float, effects: Effects | None = None) -> None:
        super().__init__(args, t0, effects)
        self.mode = "?"
        self.modes: list[str] = []  # every configured project's mode (a Codex patch may span several)
        self.findings: list[Finding] = []
        self.deadline_at = 0.0
        self.blown = False
        self.unavailable = False
        self.governed_fields: dict[str, Any] | None = None
        self.governed_rank = -1  # how decisive the file behind governed_fields was (governed_stage)
        self.throttled = 0
        self._plate: tuple[str | None, str] | None = None  # the tracker plate: (work item, why none)
        self._tops: dict[str, str | None] = {}
        self._throttles: dict[tuple[str, str], dict[str, Any]] | None = None
        self._wires: list[Wire] | None = None
        self._throttle_done: set[tuple[str, str]] = set()
        self._scope_denied: set[str] = set()  # files the path scope already decided (blast radius skips them)
        self.protected: list[str] = []  # kinds of the guard's own controls this call would change
        self.refused: set[str] = set()  # paths refused as controls: their other checks are not run

    # ── lazily loaded ──────────────────────────────────────────────────────────────
    def policy_unavailable(self) -> None:
        self.findings.append(Finding("projection", "governed", "", outcome=UNKNOWN))
        self.unavailable = True  # no policy served: the guard record must not call it fresh

    def wire_set(self) -> list[Wire]:
        if self._wires is None:
            policy = self.cfg["policy"]
            local = policy.get("tripwires") or []
            gov = self.gov() if (self.cfg["quipu"].get("enabled") and self.cfg["quipu"].get("endpoint")) else None
            governed = (self.plane("tripwires") or []) if gov is not None else []
            if not local and not governed:
                self._wires = []  # no wire anywhere: nothing to load (nor the evaluator's module)
                return self._wires
            from yupana.evaluate import tripwires

            wires, broken = tripwires.load_local(local, {r.get("name") for r in policy.get("rules") or ()})
            if governed:
                more, bad = tripwires.load_governed(governed)
                wires += more
                broken += bad
            for name, entry in broken:
                self.degrade("tripwires", f"misconfigured {entry} — that wire is NOT enforced (failing open)",
                             {"entry": entry}, marker=f"tripwire-{name}")
            self._wires = wires
        return self._wires

    def exposure_for(self, edit: FileEdit) -> tuple[Callable[[], tuple[str, str | None, str]],
                                                     list[tuple[str, str | None, str, str]]]:
        """A once-per-edit exposure lookup (only called when a block-tier rule fired).

        ``exposure_of()`` answers ``(exposure, why, repo)``; ``asked`` then holds
        ``(exposure, why, repo, source)`` (:func:`yupana.exposure.resolve`)."""
        asked: list[tuple[str, str | None, str, str]] = []

        def exposure_of() -> tuple[str, str | None, str]:
            if not asked:
                from yupana import exposure

                top = self.top(edit)
                repo = payload.repo_name(top) if top else None
                why = "the file is in no git tree" if not top else "the repository has no origin remote"
                served = self._gov.cache if self._gov is not None else None
                table = served.get("_repo_exposure") if served is not None else None
                found, reason, source = exposure.resolve(
                    self.cfg["quipu"], table,
                    self.cfg["policy"].get("exposure"), repo, int(time.time()), root=self.root,
                    override=self.args.config, no_repo_reason=why, workers=self.effects.workers)
                asked.append((found, reason, repo or "unresolved", source))
            return asked[0][:3]

        return exposure_of, asked

    def known_exposure(self, edit: FileEdit) -> str:
        """The exposure a block-tier rule on ``edit`` would be judged under, from what is known
        now (the configuration, the served catalogue, the exposure cache): never starts a lookup
        (the input capture asks it for every call, not only when a rule fired)."""
        from yupana import exposure
        from yupana.hooks.effects import RehearsedWorkers

        top = self.top(edit)
        repo = payload.repo_name(top) if top else None
        served = self._gov.cache if self._gov is not None else None
        found, _, _ = exposure.resolve(self.cfg["quipu"], served.get("_repo_exposure") if served is not None else None,
                                       self.cfg["policy"].get("exposure"), repo, int(time.time()), root=self.root,
                                       override=self.args.config, no_repo_reason="", workers=RehearsedWorkers())
        return found

    def top(self, edit: FileEdit) -> str | None:
        if edit.path not in self._tops:
            self._tops[edit.path] = payload.git_top(edit.path)
        return self._tops[edit.path]

    def repo(self, edit: FileEdit) -> str:
        top = self.top(edit)
        return (payload.repo_name(top) if top else None) or "unresolved"

    def plate(self) -> tuple[str | None, str]:
        """The tracker plate, read once: ``(work item, why none)``."""
        if self._plate is None:
            if not (os.environ.get("SHANTY_ROOT") and os.environ.get("SHANTY_AGENT")):
                self._plate = (None, "no tracker plate (SHANTY_ROOT / SHANTY_AGENT unset)")
                return self._plate
            from yupana.evaluate import work_items

            self._plate = work_items.read_plate(int(time.time()))
            self.item = self._plate[0]
        return self._plate

    def plate_item(self) -> str | None:
        self.plate()
        return self.item

    def throttle_table(self) -> dict[tuple[str, str], dict[str, Any]]:
        if self._throttles is None:
            from yupana.state import paths

            target = paths.state_file("throttles.jsonl")
            if not target or not os.path.exists(target):
                self._throttles = {}  # nothing was ever throttled: no need to load the module
                return self._throttles
            from yupana.state import throttles

            self._throttles = throttles.load(int(time.time()), target)
        return self._throttles

    # ── deciding, and the deadline ─────────────────────────────────────────────────
    def protect(self, edit: FileEdit) -> bool:
        """The guard's own controls (:mod:`yupana.self_protection`): refused whatever the
        tenant's scope says, from any cwd, through any symlink; local, so no store is asked.
        True when the edit is refused."""
        level = self_protection.level(self.mode, self.cfg["policy"].get("self_protection"))
        if level == "off":
            self.note("self-protection", SKIPPED, "self_protection = off", edit)
            return False
        kind = self_protection.of_path(edit.path, edit.real_path, self.args.config) or \
            self_protection.hard_link_of(edit.real_path, edit.project.root, self.args.config)
        if kind is None:
            self.note("self-protection", RAN, "not one of the guard's own controls", edit)
            return False
        blocking = level == "enforce"
        text = self_protection.deny_text(kind) if blocking else self_protection.advise_text(kind)
        would = self_protection.level("enforce", self.cfg["policy"].get("self_protection")) == "enforce"
        self.findings.append(Finding(f"self-protection:{kind}", "self_protection", text, blocking=would,
                                     rel=edit.rel, extra={"protected": kind}))  # blocking: would deny under enforce
        if blocking:
            self.outcome.deny(text)
            self.refused.add(edit.path)
        else:
            self.outcome.advise(text)
        if kind not in self.protected:
            self.protected.append(kind)
        self.note("self-protection", RAN, f"{self_protection.WHAT[kind]}: {level}", edit, protected=kind)
        return blocking

    def would_deny(self) -> bool | None:
        """Under ``advise``, whether ``enforce`` would have refused this call: a finding that
        would block under enforce (``Finding.blocking``) is unsatisfied. Advise evaluates what
        enforce would (no check is shadowed by a notice), so the answer is the real hook's."""
        if self.mode != "advise":
            return None
        return any(f.outcome == UNSATISFIED and f.blocking and stage_of(f) == "enforce" for f in self.findings)

    def decide(self, found: list[Finding], plane: str, suffix: str = "", operator_suffix: str | None = None) -> bool:
        """Record ``found``; its violations deny (enforce + blocking) or notify. True if any."""
        self.findings += found
        # A governed rule in shadow is recorded (self.findings) and shown to nobody; one in advise only warns.
        bad = [f for f in found if f.outcome == UNSATISFIED and stage_of(f) != "shadow"]
        if not bad:
            return False
        lines: list[str] = []
        for f in bad:
            if f.message not in lines:
                lines.append(f.message)
        self.verdict(lines, any(f.blocking and stage_of(f) == "enforce" for f in bad), plane, suffix, operator_suffix)
        return True

    def verdict(self, lines: list[str], blocking: bool, plane: str, suffix: str = "",
                operator_suffix: str | None = None) -> None:
        """Deny (enforce + blocking) or advise. ``suffix`` ends what the model reads;
        ``operator_suffix`` (when given) ends the operator's text instead — the diagnostics the
        model must not read (why the cache is stale, where an exposure came from)."""
        body = "\n".join(lines) + suffix
        full = body if operator_suffix is None else "\n".join(lines) + operator_suffix
        if blocking and self.mode == "enforce":
            self.outcome.deny(f"yupana: {body}")
            if full != body:
                protocol.stderr(f"yupana: denied: {full}")
            return
        label = f"{plane}, advise: enforce would deny" if blocking else f"{plane}, not blocking"
        self.outcome.advise(f"yupana ({label}): {full}", model=f"yupana ({label}): {body}" if full != body else None)
    def budget(self, stage: str, edit: FileEdit | None = None) -> bool:
        """Whether ``stage`` (about to do its work) still has time; False, and the cut said,
        once ``deadline_ms`` has run out. Only stages whose cost grows with the tree or the
        buffer ask: the bounded checks (:data:`BOUNDED_CHECKS`) never do."""
        if self.blown:
            return False
        if time.monotonic() <= self.deadline_at:
            return True
        self.cut(stage, edit)
        return False

    def cut(self, stage: str, edit: FileEdit | None = None, during: bool = False) -> None:
        """The deadline cut the analysis at ``stage``: an UNKNOWN ``deadline`` constraint and a
        ``fail_open`` record on every invocation it happens to, the notice once per session."""
        if self.blown:
            return
        self.blown = True
        ms = self.cfg["policy"]["deadline_ms"]
        where = f"{'during' if during else 'before'} the {stage} check" + (f" of {edit.rel}" if edit else "")
        self.findings.append(Finding("deadline", "guard", "", outcome=UNKNOWN, extra={"stage": stage}))
        self.degrade("deadline", f"policy guard ran out of its {ms} ms deadline {where}; the remaining checks whose "
                     f"cost grows with the tree or the buffer are UNKNOWN — {BOUNDED_CHECKS} still ran to completion, "
                     "and a deny they reach stands", {"stage": stage, "deadline_ms": ms, "during": during})
        self.note("deadline", UNKNOWN, f"{ms} ms ran out {where}: the remaining checks whose cost grows with the "
                  f"tree or the buffer are UNKNOWN; {BOUNDED_CHECKS} still ran")

    # ── what it leaves behind ─────────────────────────────────────────────────────
    def record_throttle(self, edit: FileEdit, found: Finding) -> None:
        from yupana.state import throttles

        scope = self.top(edit) or self.parsed.cwd
        if (found.id, scope) in self._throttle_done:
            return
        self._throttle_done.add((found.id, scope))
        prior = self.throttle_table().get((found.id, scope))
        n = prior["n"] + 1 if prior else 1
        secs = throttles.backoff_secs(found.extra.get("backoff"), n)
        if secs is None:
            protocol.stderr(f"yupana: {found.id}: back-off formula gave no duration; no throttle recorded")
            return
        now = int(time.time())
        self.effects.throttle(found.id, scope, now + secs, n, now)  # a rehearsal reports it from the record
        self.effects.record("throttle", {"constraint_id": found.id, "scope": scope, "until": now + secs,
                                  "backoff_secs": secs, "n": n}, item=self.plate_item())

    def fold_throttles(self) -> None:
        """Active back-offs in this repository become an advisory (never onto a deny)."""
        table = self.throttle_table()
        if not table:
            return self.note("throttles", SKIPPED, "no back-off was ever recorded")
        inv = self.parsed
        scopes = {self.top(e) or inv.cwd for e in inv.edits} or {inv.cwd}
        from yupana.state import throttles

        now = int(time.time())
        active = [a for scope in sorted(scopes) for a in throttles.active_for(scope, now, table)]
        self.throttled = len(active)
        if not active or self.outcome.decision == protocol.DENY:
            return self.note("throttles", RAN, "none active in this repository" if not active else
                             "not folded onto a deny", active=active)
        shown = "; ".join(f"`{cid}` was crossed recently — back off for {_duration(until - now)} more"
                          for cid, until in active[:5])
        self.outcome.advise(f"yupana: back-off active in this repository: {shown}")
        self.note("throttles", RAN, "", active=active)

    def constraint(self, f: Finding) -> dict[str, Any]:
        stage = stage_of(f)  # a governed rule's rollout stage: a ceiling under the host's mode
        if f.outcome == UNSATISFIED and stage != "shadow":
            response = "blocked" if f.blocking and self.mode == "enforce" and stage == "enforce" else "warned"
        else:
            response = "logged" if f.outcome in (UNKNOWN, UNSATISFIED) else "no-action"
        out: dict[str, Any] = {"id": f.id, "plane": f.plane, "outcome": f.outcome, "response": response}
        if f.outcome == UNSATISFIED and (self.mode == "advise" or stage != "enforce"):
            out["would_deny"] = f.blocking  # which constraint enforce (host and rule) would have refused for
        if stage != "enforce":
            out["stage"] = stage
        if f.class_:
            out["class"] = f.class_
        if f.verification_point:
            out["verification_point"] = f.verification_point
        if f.extra.get("tier") in ("tree-sitter", "tree-sitter+graph"):
            out["tier"] = f.extra["tier"]
        if f.extra.get("freshness"):
            out["freshness"] = f.extra["freshness"]
        return out

    def finish(self) -> None:
        """The ``guard`` record: always, exactly once."""
        inv = self.inv
        edit = inv.edits[0] if inv and inv.edits else None
        fields: dict[str, Any] = {"result": self.outcome.decision, "mode": self.mode, "parsed": inv is not None,
                        "duration_ms": self.elapsed_ms(), "ext": os.path.splitext(edit.path)[1][1:] if edit else ""}
        if inv is not None:
            if inv.patch_call:
                fields["edits"] = len(inv.edits)
            if not inv.patch_call and (inv.problems or (edit and edit.problems)):
                fields["problems"] = (inv.problems + (edit.problems if edit else []))[:10]
        if self.findings:
            fields["constraints"] = [self.constraint(f) for f in self.findings[:MAX_RECORDED_CONSTRAINTS]]
            if len(self.findings) > MAX_RECORDED_CONSTRAINTS:
                fields["constraints_dropped"] = len(self.findings) - MAX_RECORDED_CONSTRAINTS
            fields["policy_freshness"] = "unavailable" if self.unavailable else "stale" if self.stale else "fresh"
            rule = "+".join(sorted({f.id for f in self.findings if f.outcome == UNSATISFIED and stage_of(f) != "shadow"}))
            fields["rule"] = rule or None
        if self.governed_fields:
            fields.update(self.governed_fields)
        record_paths = (self.cfg.get("metrics") or {}).get("record_paths", "off")
        if edit and record_paths in ("relative", "absolute"):
            fields["path"] = edit.rel if record_paths == "relative" else edit.path
        if self.throttled:
            fields["throttled"] = self.throttled
        if self.protected:
            fields["self_protection"] = self.protected
        fields.update(_attribution())
        self.invoked(fields, item=self.plate_item() if self.cfg else None)

    def judged_inputs(self) -> tuple[list[tuple[str, str, str]], str | None, list[tuple[str, str]], dict[str, Any]] | None:
        """Each file's repository-relative path, op and introduced text; the texts the violated
        rules caught (masked in the capture); the repository of the file that decided."""
        inv = self.inv
        if inv is None or not inv.edits:
            return None
        caught: list[tuple[str, str]] = []
        for f in self.findings:
            extra = f.extra or {}
            found = [extra.get("match"), *(v.get("text") for v in extra.get("violations") or () if isinstance(v, dict)),
                     *(extra.get("tokens") or ())]
            caught += [(f.id, t) for t in found if isinstance(t, str) and t]
        judged = self.governed_fields or {}
        exposure = judged.get("exposure")
        if exposure in (None, "n/a") and self._gov is not None and self._gov.cache is not None:
            exposure = self.known_exposure(inv.edits[0])  # what a block-tier rule would be judged under
        extra = {"repo": judged.get("repo") or self.repo(inv.edits[0]), "exposure": exposure,
                 "would_deny": self.would_deny()}  # under advise: what enforce would have answered
        return [(e.rel, e.op, e.introduced) for e in inv.edits], None, caught, extra

    def crash_subject(self) -> str:
        return "policy guard"

    def after_crash(self) -> None:
        """An internal error still writes the one ``guard`` record (an ``internal`` constraint)."""
        self.findings = [Finding("internal", "guard", "", outcome=UNKNOWN)]
        self.finish()


def _duration(secs: int) -> str:
    return f"{secs}s" if secs < 120 else (f"{secs // 60}m" if secs < 7200 else f"{secs // 3600}h{secs % 3600 // 60:02d}m")


def _attribution() -> dict[str, Any]:
    env = os.environ
    out: dict[str, Any] = {}
    chain = [p for p in (env.get("YUPANA_PRINCIPAL_CHAIN") or "").split(",") if p]
    executor = env.get("SHANTY_AGENT") or None
    if chain:
        out["principal_chain"] = chain
    if env.get("YUPANA_PLANNER"):
        out["planner"] = env["YUPANA_PLANNER"]
    if executor:
        out["executor"] = executor
    if chain and executor and chain[-1] != executor:
        out["attribution_conflict"] = True
    return out
