"""The governed plane's stage of ``yupana hook pre-edit``: text rules, structural policies
(governed, and the local rules' structural evaluation), grounded predicates. Hot path.

:class:`GovernedStage` is the part of :class:`yupana.hooks.pre_edit.Guard` that judges the
introduced text of one file against the servable cache (:meth:`GovernedStage.governed`)
and runs structural policies through the codegraph evaluator
(:meth:`GovernedStage.structural`, also what local ``[[yupana.policy.rules]]`` use). Text
rules and grounded predicates on introduced text of at most
:data:`yupana.evaluate.text_rules.BOUNDED_CHARS` are checks of bounded cost: they run whole,
whatever the deadline says, even after it cut another stage (issue 25 §3). Beyond that bound
they take ``deadline_at`` and stop between windows; structural policies are bounded by the
deadline, tree-sitter work through :func:`yupana.codegraph.parse.bind_deadline`.
A cut is :meth:`GuardContext.cut` with the stage's own name (``text rules``,
``structural`` / ``local rules``, ``grounded rules``); what was found before it stands.
The order of the stages lives in :mod:`yupana.hooks.pre_edit`.
"""

from __future__ import annotations

from yupana.evaluate import SATISFIED, UNKNOWN, UNSATISFIED, Finding, stage_of
from yupana.hooks import protocol
from yupana.hooks.guard_context import GuardContext
from yupana.hooks.runtime import RAN, SKIPPED

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from typing import Any

    from yupana.edit.model import FileEdit


class GovernedStage(GuardContext):
    """The governed plane and structural policies of one pre-edit invocation."""

    def governed(self, edit: FileEdit) -> None:
        from yupana.state.hot_view import Corrupt

        try:
            self._governed(edit)
        except Corrupt as exc:  # the twin failed a checksum: the loud miss, the other planes stand
            self.twin_damaged(exc)
            self.note("governed", *self.gov_why, edit)

    def _governed(self, edit: FileEdit) -> None:
        if not edit.introduced:
            return self.note("governed", SKIPPED, "no introduced text (a pure deletion)", edit)
        gov = self.gov()
        if gov is None:
            return self.note("governed", self.gov_why[0], self.gov_why[1], edit)
        from yupana.evaluate import text_rules

        # Text rules and grounded predicates on a bounded text cost what the text and the index
        # cost, not what the clock says: they run whole even past the deadline (issue 25 §3).
        whole = text_rules.bounded(edit.introduced)
        if not whole and not self.budget("governed", edit):
            return
        until = None if whole else self.deadline_at
        cache = gov.cache
        assert cache is not None  # gov() answers only a served cache
        text_rel = edit.rel  # the one repo-relative path (project root) every plane matches
        exposure_of, asked = self.exposure_for(edit)
        notes = self.effects.scratch({"path": text_rel})  # None live: only a dry run reports what was admitted
        text = text_rules.evaluate(cache.get("text_rules") or [], edit.introduced, text_rel, exposure_of, until, notes)
        if any(f.extra.get("deadline") for f in text):
            self.cut("text rules", edit, during=True)  # what was found before the cut still stands
        policies = [p for p in cache.get("policies") or () if (p.get("rule") or {}).get("verification_point") != "PAA"]
        shape = self.structural(policies, edit, "projection-rules") if policies and not self.blown else []
        ground = []
        if cache.get("grounded_rules") and (whole or self.budget("grounded rules", edit)):
            from yupana.evaluate import grounded

            ground = grounded.evaluate(cache["grounded_rules"], cache.get("grounding"), edit.introduced, edit.rel,
                                       until)
            if any(f.extra.get("deadline") for f in ground):
                self.cut("grounded rules", edit, during=True)
        text = self.split_errors(text, "projection-rules", "governed text rule")
        shape = self.split_errors(shape, "projection-rules", "governed structural policy")
        _stage_by_source(shape, policies)
        _stage_by_source(ground, cache.get("grounded_rules") or [])
        found = text + shape + ground
        self.findings += found
        # A shadow rule is recorded (self.findings: the guard record's constraints) and shown to nobody.
        lines = [f"edit to {edit.rel} {line}" for line in text_rules.summarize(
            [f for f in text if stage_of(f) != "shadow"])]
        lines += [f.message + (" (rollout stage advise, so only a warning)" if f.blocking and stage_of(f) == "advise"
                               else "") for f in shape if f.outcome == UNSATISFIED and stage_of(f) != "shadow"]
        for f in ground:
            line = f.message if f.outcome == UNKNOWN else f"edit to {edit.rel} {f.message}"
            if f.blocking and stage_of(f) == "advise":
                line += " (rollout stage advise, so only a warning)"
            if f.outcome != SATISFIED and not f.extra.get("deadline") and line not in lines and stage_of(f) != "shadow":
                lines.append(line)
        if not lines:
            return self.note("governed", RAN, self.past_deadline(whole), edit, text=notes, exposure=asked)
        blocking = any(f.blocking and f.outcome == UNSATISFIED and stage_of(f) == "enforce" for f in found)
        source = f" (exposure: {asked[0][1]})" if asked and asked[0][1] else ""
        self.verdict(lines, blocking, "governed", suffix=" " + gov.model_note(),
                     operator_suffix=" " + gov.note() + source)
        exposure, repo = (asked[0][0], asked[0][2]) if asked else ("n/a", self.repo(edit))
        # One guard record per tool call: a patch across repositories records the values of the file
        # that decided it (a blocking finding over a warning, a judged exposure over none; first wins a tie).
        rank = (2 if blocking else 0) + (exposure != "n/a")
        if self.governed_fields is None or rank > self.governed_rank:
            self.governed_fields, self.governed_rank = {"exposure": exposure, "repo": repo}, rank
        judged: dict[str, str | None] = {"exposure_source": asked[0][3]} if asked else {}
        if asked and exposure == "unknown":
            judged["exposure_reason"] = asked[0][1]
        self.effects.record("governed", {
            "rules": sorted({f.id for f in text + ground if f.outcome != SATISFIED and stage_of(f) != "shadow"}),
            "mode": self.mode, "structural": sum(1 for f in shape if f.outcome == UNSATISFIED and stage_of(f) != "shadow"),
            "blocking": blocking and self.mode == "enforce", "exposure": exposure, "repo": repo, **judged,
            "policy_source": "cache", "policy_age_secs": gov.age_secs, "policy_freshness": gov.freshness,
            "digest": self.rule_set(), "would_deny": blocking if self.mode == "advise" else None,
            "session": self.sid}, item=self.plate_item())
        self.note("governed", RAN, self.past_deadline(whole), edit, text=notes, exposure=asked)

    def past_deadline(self, whole: bool) -> str:
        """What a dry run says of a governed stage the deadline cut around its bounded checks."""
        if not (self.blown and whole):
            return ""
        from yupana.evaluate.text_rules import BOUNDED_CHARS

        return (f"the deadline ran out, yet its text rules and grounded predicates ran whole (introduced text of at "
                f"most {BOUNDED_CHARS} characters is a bounded check); what grows with the tree was cut")

    def structural(self, policies: list[dict[str, Any]], edit: FileEdit, kind: str,
                   stage: str = "structural") -> list[Finding]:
        """Structural policies (governed or local) for this file's language, through the
        codegraph evaluator — imported only when some policy is for this language."""
        from yupana.codegraph.parse import language_for_path

        lang = language_for_path(edit.rel or edit.path)
        armed = [p for p in policies if lang and str((p.get("rule") or {}).get("language") or "").lower() == lang]
        if not armed:
            self.note("structural", SKIPPED, f"no structural rule for this file's language ({lang or 'none known'})",
                      edit, kind=kind, language=lang)
            return []
        if not self.budget(stage, edit):
            return []
        try:
            from yupana.codegraph import parse
            from yupana.evaluate import structural

            parse.bind_deadline(self.deadline_at)
            found = structural.evaluate(armed, edit, self.mode)
        except Exception as exc:  # noqa: BLE001 - one broken plane must not disarm the others
            why = f"structural checks could not run ({type(exc).__name__}: {exc})"
            self.note("structural", UNKNOWN, why, edit, kind=kind, language=lang, armed=armed)
            names = [str((p.get("rule") or {}).get("name")) for p in armed]
            return [Finding(n, "structural", why, outcome=UNKNOWN, rel=edit.rel, extra={"error": why}) for n in names]
        if any(f.extra.get("deadline") for f in found):
            self.cut(stage, edit, during=True)
        unknown = [f for f in found if f.outcome == UNKNOWN and not f.extra.get("error") and not f.extra.get("deadline")]
        self.note("structural", RAN, "", edit, kind=kind, language=lang, armed=armed)
        if unknown:
            what = f"{len(unknown)} {lang} structural polic{'y' if len(unknown) == 1 else 'ies'}"
            protocol.stderr(f"yupana: {what} not evaluated on {edit.rel}: {unknown[0].message}")
            if self.effects.first_time(self.sid, f"structural-unknown-{kind}-{lang}"):
                self.outcome.notify(f"yupana: {what} could not be evaluated (UNKNOWN, not clean): "
                                    f"{unknown[0].message}")
        return found

    def split_errors(self, found: list[Finding], kind: str, what: str) -> list[Finding]:
        """Compile errors fail open loudly (once per session); the other findings stand."""
        errors = [f for f in found if f.extra.get("error")]
        if errors:
            names = ", ".join(sorted({f"`{f.id}`" for f in errors}))
            self.degrade(kind, f"policy guard failed open for {what}(s) {names} — they did not compile and are NOT "
                         f"enforced: {errors[0].extra['error']}", {"rules": sorted({f.id for f in errors})})
            self.findings += [Finding(f.id, f.plane, "", outcome=UNKNOWN, source=f.source) for f in errors]
        return [f for f in found if not f.extra.get("error")]


def _stage_by_source(found: list[Finding], entries: list[dict[str, Any]]) -> None:
    """Tag each finding of a governed structural policy or grounded predicate with its entry's
    rollout stage below enforce (``extra["stage"]``, as text rules' findings carry theirs)."""
    stages = {p.get("iri"): p["stage"] for p in entries if p.get("stage") in ("shadow", "advise")}
    if stages:
        for f in found:
            if f.source in stages:
                f.extra["stage"] = stages[f.source]
