"""``yupana hook pre-edit``: the guard contract for edits, top to bottom. Hot path.

Decision order (the guard contract; interop reference §5.3):

1. parse the payload — unparseable, or no file: allow (``guard`` record ``parsed:false`` /
   ``ext:""``);
2. resolve the configuration snapshot — an error fails open (kind ``config``);
   ``mode = "off"`` stops here: the guard is inert. The deadline is known now: it counts
   from the hook's start (reading and decoding the payload spend it), leaving out only the
   time this resolution took. Codex
   ``apply_patch`` problems are an UNKNOWN constraint and a fail-open advisory;
3. the decisive, path-only checks, for every file of the call, never cut by the deadline
   (a deny they reach stands, and rides with whatever else is found): the active throttle
   records are loaded; the declared path scope (deny beats allow; without one, the
   work-item ladder); the path-only tripwires, local and governed;
4. the other stages, file by file: what grows with the tree or the buffer bounded by
   ``deadline_ms``; the governed text rules and grounded predicates on introduced text of at
   most :data:`yupana.evaluate.text_rules.BOUNDED_CHARS` whole, even once it ran out (issue
   25 §3: a bounded check is never cut by CPU contention) — local
   ``[[yupana.policy.rules]]`` (compile errors fail open, ``rules``; a violation decides the
   edit and short-circuits the governed plane, verify and blast radius, unless it is a
   non-blocking one under enforce); the governed plane (the servable cache, or a loud
   fail-open ``projection``; text rules, structural, grounded; one message with the
   freshness note; a ``governed`` record); the verify arm (``verify = true``, ``.rs``);
   blast radius when a ceiling is set; then the tripwires conditioned on a local rule.

Tripwires: one decision per edit, every tripped wire its own constraint, throttles recorded
as expiring back-offs even when a sibling wire denies. Then, for every invocation: active
throttle advisories are folded in (no mode gate; never onto a deny) and one ``guard`` record
is written. The deadline is checked before each expensive stage and inside them (text rules
between rules and 256 KB windows, tree-sitter through the parser's progress callback and
bounded query windows, the codegraph's own loops); a cut leaves the rest UNKNOWN: a
``deadline`` constraint and a ``fail_open`` record naming the stage that was cut, on every
invocation, and a notice once per session. Nothing reaches stdout until the end, in one
write; an internal error discards the partial outcome and fails open loudly.

``yupana explain`` runs this very code as a dry run (:class:`Guard` with rehearsal effects,
:mod:`yupana.hooks.effects`): every stage tells the trace whether it ran, was skipped or
could not run, and why; nothing is written, marked or spawned.
"""

from __future__ import annotations

import os
import time

from yupana import settings

from yupana.evaluate import SATISFIED, UNKNOWN, UNSATISFIED, Finding, strongest
from yupana.edit import payload
from yupana.hooks import protocol
from yupana.hooks.governed_stage import GovernedStage
from yupana.hooks.runtime import RAN, SKIPPED

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from typing import Any

    from yupana.edit.model import FileEdit, Invocation
    from yupana.project_root import Project


def by_project(inv: Invocation) -> list[tuple[Project, list[FileEdit]]]:
    """``[(project, edits)]`` in first-seen order: the files of a tool call grouped by the
    project each is judged under (one group unless a patch spans projects)."""
    groups: dict[tuple[str, ...], tuple[Project, list[FileEdit]]] = {}
    for edit in inv.edits:  # a nested config under the project judges its subtree's files (tighter)
        groups.setdefault((edit.project.root, *edit.project.nested), (edit.project, []))[1].append(edit)
    return list(groups.values()) or [(inv.project, [])]


class Guard(GovernedStage):
    """One pre-edit invocation, checked in the contract's order (state and records: the base)."""

    # ── the order ──────────────────────────────────────────────────────────────────
    def run(self, raw: bytes) -> None:
        inv = self.inv
        if inv is None or (not inv.edits and not (inv.patch_call and inv.problems)):
            self.note("parse", UNKNOWN if inv is None else SKIPPED,
                      "not a JSON object: allowed silently" if inv is None else "no file in the tool call: allowed")
            return self.finish()
        groups = by_project(inv)
        resolving = time.monotonic()
        configured = [(project, edits, snap) for project, edits in groups
                      if (snap := self.load_config(project, len(groups) > 1)) is not None]
        if configured:  # deadline_ms counts from the hook's start (reading and decoding the payload
            # spend it), leaving out only the configuration's resolution, which it depends on
            resolved = time.monotonic() - resolving
            self.deadline_at = self.t0 + resolved + configured[0][2]["config"]["policy"]["deadline_ms"] / 1000.0
        patched = False
        for project, edits, snap in configured:
            self.configure(project, snap)
            if self.mode == "off":
                self.note("checks", SKIPPED, "mode = off: the guard is inert, nothing is evaluated")
                continue
            if inv.patch_call and not patched:
                patched = True
                self.patch_problems()
            self.throttle_table()  # active back-offs: loaded before any analysis, folded in below
            for edit in edits:  # the decisive, path-only checks first, for every file, never cut
                self.path_checks(edit)
            for edit in edits:  # every file: a blown deadline still leaves each its bounded checks
                self.check_edit(edit)
        if configured:
            self.fold_throttles()
        if len(self.modes) > 1:  # the record names the strongest mode the patch was judged under
            self.mode = strongest(self.modes)
        if configured and self.mode != "off" and inv.edits:
            self.recurrence()
        self.finish()

    def recurrence(self) -> None:
        """Issue 13 §1: a prior denial near this edit is context, never a decision. Issue 23 §3:
        nothing it does can change one — it reads and returns, the outcome is touched only by
        adding its one message, and any fault in it is its own loud ``recurrence`` fail-open
        that leaves the decision as it was (a ``deny_paths`` deny stands)."""
        edit = self.parsed.edits[0]
        try:
            self.consult_corpus(edit)
        except Exception as exc:  # noqa: BLE001 - the advisory is context: its fault never reaches the decision
            error = f"{type(exc).__name__}: {exc}"
            self.degrade("recurrence", f"the recurrence advisory failed ({error}); the decision stands as it "
                         "was made — only the similarity context is missing", {"reason": error})
            self.note("recurrence", UNKNOWN, f"the advisory failed: {error}", edit)

    def consult_corpus(self, edit: FileEdit) -> None:
        from yupana import project_root
        from yupana.state import dataset, stores

        corpus = stores.beside(dataset.identity(self.cfg["quipu"], self.root), stores.DENIALS_FILE)
        if self.outcome.decision != "deny" and not _nonempty(corpus):
            # nothing to compare with and nothing to keep: no embedding, nor its modules
            return self.note("recurrence", SKIPPED, "no prior denial near this edit (the corpus is empty)", edit)
        from yupana.evaluate import recurrence

        bad = [f for f in self.findings if f.outcome == UNSATISFIED]
        edits = self.parsed.edits
        advice = recurrence.consult(
            self.outcome.decision, list(self.outcome.reasons), [e.introduced for e in edits], corpus=corpus,
            now=int(time.time()), denied_by="+".join(sorted({f.id for f in bad})),
            record_paths=(self.cfg.get("metrics") or {}).get("record_paths", "off"),
            paths=recurrence.edit_paths(edits) + [self.root], rel=edit.rel, path=edit.path,
            project=project_root.project_key(self.root), session=self.sid, matched=recurrence.matched_texts(bad))
        if advice.message:
            if self.outcome.decision == protocol.DENY:
                self.outcome.reasons.insert(0, advice.message)  # before the refusal's own text
            else:
                self.outcome.advise(advice.message)
        if advice.sealed:
            self.effects.record("recurrence_advisory", advice.sealed)
        if advice.entry and corpus:
            self.effects.denial(corpus, advice.entry)
        self.note("recurrence", RAN if advice.sealed else SKIPPED, "near a prior denial" if advice.sealed else
                  "no prior denial near this edit", edit, **({"advisory": advice.sealed} if advice.sealed else {}))

    def load_config(self, project: Project, several: bool) -> dict[str, Any] | None:
        """The configuration snapshot of ``project`` (the one its files are judged under), or
        None on a configuration error — loudly: those files are unguarded."""
        try:
            return settings.load(project.root, self.args.config, project.nested)
        except settings.ConfigError as exc:
            where = f" (project {project.root})" if several else ""
            self.note("config", UNKNOWN, str(exc), project=project)
            self.degrade("config", f"policy guard failed open (configuration error{where}: {exc}) — edits are "
                         "UNGUARDED until it is fixed; `yupana config check` shows the details", {"reason": str(exc)})
            return None

    def configure(self, project: Project, snap: dict[str, Any]) -> None:
        """Judge the next files under ``project``'s configuration (a patch may span several)."""
        self.cfg = snap["config"]
        self.root = project.root
        self._gov, self._gov_asked, self._wires, self.gov_why = None, False, None, (SKIPPED, "")  # per project
        self.mode = self.cfg["policy"]["mode"]  # this project's: it decides this project's files
        self.modes.append(self.mode)
        self.note("config", RAN, snapshot=snap, project=project)
        self.config_records(snap, project.root)

    def path_checks(self, edit: FileEdit) -> None:
        """What only the path decides — the guard's own controls, declared path scope (else the
        work-item ladder) and path-only tripwires. Never gated by ``deadline_ms``: a deny they reach stands.
        A refused control is decided: its other checks are not run (their reasons would only name it)."""
        if self.protect(edit):
            return
        self.path_scope(edit)
        self.tripwires(edit, set(), set(), rule_wires=False)

    def check_edit(self, edit: FileEdit) -> None:
        """The other stages for one file: those whose cost grows with the tree or the buffer
        within the deadline; the governed plane's bounded checks (text rules and grounded
        predicates on a bounded text) whole, even once the deadline is blown."""
        fired: set[str] = set()
        evaluated: set[str] = set()
        if edit.path in self.refused:
            return self.note("checks", SKIPPED, "one of the guard's own controls: refused", edit)
        if self.blown or not self.local_rules(edit, fired, evaluated):
            self.governed(edit)  # past the deadline: only what is bounded runs (governed_stage)
            for stage in (self.verify, self.blast_radius):
                if self.blown:
                    return
                stage(edit)
        else:
            for name in ("governed", "verify", "blast radius"):
                self.note(name, SKIPPED, "a local rule decided the edit", edit)
        if not self.blown:
            self.tripwires(edit, fired, evaluated, rule_wires=True)

    # ── stages ─────────────────────────────────────────────────────────────────────
    def patch_problems(self) -> None:
        """A patch call: whatever kept the patch from being read exactly is UNKNOWN, and said."""
        reasons = list(self.parsed.problems)
        for edit in self.parsed.edits:
            if edit.op in (payload.UPDATE, payload.MOVE, payload.DELETE):
                payload.proposed_buffer(edit)  # notes missing / ambiguous anchors in edit.problems
            reasons += [p if edit.rel in p else f"{edit.rel}: {p}" for p in edit.problems]
        if not reasons:
            return self.note("patch", RAN, "the patch was read exactly")
        self.findings.append(Finding("apply_patch", "patch", "; ".join(reasons), outcome=UNKNOWN))
        shown = "; ".join(reasons[:3]) + (f"; and {len(reasons) - 3} more" if len(reasons) > 3 else "")
        message = f"apply_patch not fully evaluated ({shown}) — those parts of the patch are UNGUARDED (failing open)"
        self.degrade("patch", message, {"reasons": reasons[:20], "tool_use_id": self.parsed.tool_use_id}, once=False,
                     model=f"yupana: apply_patch could not be read exactly ({shown}); send a patch whose context "
                           "matches the files")
        self.note("patch", UNKNOWN, message)

    def local_rules(self, edit: FileEdit, fired: set[str], evaluated: set[str]) -> bool:
        rules = [r for r in self.cfg["policy"].get("rules") or () if r.get("verification_point") != "PAA"]
        if not rules or not edit.introduced:
            self.note("local rules", SKIPPED, "no introduced text" if rules else "no [[yupana.policy.rules]] for this "
                      "gate (PAA rules run after the edit)", edit)
            return False
        if not self.budget("local rules", edit):
            return False
        found = self.structural([{"rule": r, "effect": "deny", "iri": None} for r in rules], edit, "rules",
                                "local rules")
        found = self.split_errors(found, "rules", "local rule")
        fired.update(f.id for f in found if f.outcome == UNSATISFIED)
        evaluated.update(f.id for f in found if f.outcome in (SATISFIED, UNSATISFIED))
        spoke = self.decide(found, "local rules")
        # A deny short-circuits the governed plane, verify and scope; a notice does not (under
        # enforce it must not shadow a hard check that would deny, and advise evaluates what
        # enforce would, so that the guard record's would_deny is enforce's answer).
        decided = spoke and self.outcome.decision == protocol.DENY
        self.note("local rules", RAN, "", edit, rules=rules)
        return decided

    def verify(self, edit: FileEdit) -> None:
        if not self.cfg["policy"].get("verify") or not edit.introduced or not edit.path.endswith(".rs"):
            why = ("verify = false" if not self.cfg["policy"].get("verify") else
                   "no introduced text" if not edit.introduced else "not a .rs file")
            return self.note("verify", SKIPPED, why, edit)
        if not self.budget("verify", edit):
            return
        try:
            from yupana.codegraph import parse, verify

            parse.bind_deadline(self.deadline_at)
            created = [e.path for e in self.parsed.edits if e.op in (payload.ADD, payload.MOVE)]
            result = verify.verify_edit(edit, edit.project.root, self.deadline_at, created=created,
                                        workers=self.effects.workers)
        except TimeoutError:  # parse.Cancelled: tree-sitter stopped at the deadline
            result = None
        except Exception as exc:  # noqa: BLE001 - no opinion, said out loud
            result = None
            protocol.stderr(f"yupana: verify arm unavailable ({type(exc).__name__}: {exc})")
        if result is None:
            self.findings.append(Finding("verify", "verify", "", outcome=UNKNOWN, rel=edit.rel))
            if time.monotonic() > self.deadline_at:
                self.cut("verify", edit, during=True)
            return self.note("verify", UNKNOWN, "no opinion: no buffer to verify, the deadline ran out, or the "
                             "verifier is unavailable", edit)
        if result.unparseable is not None:  # broken syntax is no evidence: UNKNOWN, never a block
            self.findings.append(Finding("verify", "verify", "", outcome=UNKNOWN, rel=edit.rel,
                                         extra={"unparseable": result.unparseable}))
            self.degrade("verify_unparseable", f"the edit to {edit.rel} does not parse at line {result.unparseable}; "
                         "buffer verification is UNKNOWN for it (failing open)",
                         {"line": result.unparseable})
            return self.note("verify", UNKNOWN, f"the edited buffer does not parse (line {result.unparseable})", edit)
        problems = [f"line {v.get('line')}: {v.get('message')}" for v in result.violations]
        more = f"; and {len(problems) - 5} more" if len(problems) > 5 else ""
        message = (f"edit to {edit.rel} fails buffer verification (tree-sitter tier): " + "; ".join(problems[:5])
                   + more + ". Fix these references before writing the edit.") if problems else ""
        self.decide([Finding("verify", "verify", message, blocking=True, rel=edit.rel,
                             outcome=UNSATISFIED if problems else SATISFIED)], "verify")
        self.note("verify", RAN, "", edit)

    def declared_scope(self) -> tuple[str | None, dict[str, Any] | None]:
        tenant = self.args.tenant
        return tenant, (self.cfg["policy"].get("scopes") or {}).get(tenant) if tenant else None

    def path_scope(self, edit: FileEdit) -> None:
        """The path half of the capability scope (deny beats allow); without one, the ladder."""
        from yupana import globs
        from yupana.evaluate import scope

        tenant, declared = self.declared_scope()
        if declared is None or tenant is None:  # (a declared scope is always a tenant's)
            self.note("scope", SKIPPED, f"tenant `{tenant}` declares no scope" if tenant else
                      "no tenant (--tenant, else $BOBBIN_ROLE)", edit)
            return self.ladder(edit)
        try:
            found = scope.check_paths(tenant, declared, edit.rel, edit.real_rel)
        except globs.GlobError as exc:
            self.findings.append(Finding(f"scope-declared:{tenant}", "scope", "", outcome=UNKNOWN, rel=edit.rel))
            self.degrade("globs", f"capability scope for tenant `{tenant}` has a malformed glob ({exc}) — path scope "
                         "is NOT enforced (failing open); fix [yupana.policy.scopes]", {"reason": str(exc)})
            return self.note("scope", UNKNOWN, f"malformed glob: {exc}", edit, tenant=tenant, declared=declared)
        if self.decide([found], "scope"):
            self._scope_denied.add(edit.rel)
        self.note("scope", RAN, "", edit, tenant=tenant, declared=declared)

    def blast_radius(self, edit: FileEdit) -> None:
        """Blast-radius ceilings (tree-sitter tier), within what is left of the deadline."""
        from yupana.evaluate import scope

        tenant, declared = self.declared_scope()
        if declared is None or tenant is None or edit.rel in self._scope_denied or not scope.has_ceiling(declared):
            return self.note("blast radius", SKIPPED, "no declared scope" if declared is None else
                             "the path scope decided the edit" if edit.rel in self._scope_denied else
                             "no max_impacted_symbols / max_impacted_files ceiling", edit)
        if not self.budget("blast radius", edit):
            return
        try:
            from yupana.codegraph import parse

            parse.bind_deadline(self.deadline_at)
            found = scope.check_blast(tenant, declared, edit, edit.project.root, self.cfg["policy"]["max_hops"],
                                      self.deadline_at, workers=self.effects.workers)
        except Exception as exc:  # noqa: BLE001 - unmeasured, not clean
            found = Finding(f"blast:{tenant}", "scope", f"blast radius of the edit to {edit.rel} was UNMEASURED "
                            f"({type(exc).__name__}: {exc})", outcome=UNKNOWN, rel=edit.rel, extra={"unmeasured": "error"})
        if found.outcome != UNKNOWN:
            self.decide([found], "scope")
            return self.note("blast radius", RAN, "", edit, tenant=tenant, declared=declared)
        self.findings.append(found)
        if found.extra.get("unmeasured") == "deadline":
            self.cut("blast radius", edit, during=True)
            return self.note("blast radius", UNKNOWN, found.message, edit, tenant=tenant, declared=declared)
        protocol.stderr(f"yupana: {found.message}")
        if self.effects.first_time(self.sid, f"unmeasured-{found.extra.get('unmeasured')}-{edit.rel}"):
            self.outcome.notify(f"yupana: {found.message}")
        self.note("blast radius", UNKNOWN, found.message, edit, tenant=tenant, declared=declared)

    def ladder(self, edit: FileEdit) -> None:
        from yupana.evaluate import work_items

        policy = self.cfg["policy"]
        rung = work_items.effective_rung(policy.get("work_item_scope", "off"), self.mode)
        if rung == "off":
            return self.note("work-item ladder", SKIPPED, f"work_item_scope = {policy.get('work_item_scope', 'off')} "
                             f"(mode {self.mode} is its ceiling)", edit)
        item = self.plate_item()
        why = "" if item else self.plate()[1]
        gov = self.gov()
        cache = gov.cache if gov else None
        if gov is None and item and not why:
            why = "the governed plane is not available ([yupana.quipu] enabled + endpoint, and a servable cache)"
        scopes, parents = (cache.get("work_item_scopes"), cache.get("work_item_parents")) if cache else (None, None)
        found = work_items.evaluate(rung, item, scopes, parents,
                                    edit.rel, self.args.tenant, why)
        assert found is not None  # None only for the rung "off" (returned above)
        prov = found.extra.get("provenance")
        if found.outcome == UNKNOWN:
            self.findings.append(found)
            result = "notify" if self.args.tenant else "allow"
            if self.args.tenant and self.effects.first_time(self.sid, "unknown-scope"):
                self.outcome.advise(f"yupana: {found.message}", model="yupana: the work item's scope is unknown, so "
                                    "this edit was not checked against it; keep to the item's ground")
        else:  # a known scope: read from the served cache
            assert gov is not None
            if found.outcome == UNSATISFIED and prov == "observed" and self.mode == "advise":
                # advise caps the rung; under enforce the rung is the setting's (the would_deny)
                found.blocking = work_items.effective_rung(policy.get("work_item_scope", "off"), "enforce") == "enforce"
            label = "work-item scope" if prov == "observed" else "derived work-item scope"
            spoke = self.decide([found], label, suffix=" " + gov.model_note(), operator_suffix=" " + gov.note())
            result = "allow" if not spoke else ("deny" if found.blocking and self.mode == "enforce" else "advise")
        self.effects.record("scope", {"provenance": prov, "parent": found.extra.get("parent"), "rule": found.id,
                               "result": result, "session": self.sid}, item=item)
        self.note("work-item ladder", UNKNOWN if found.outcome == UNKNOWN else RAN,
                  found.extra.get("reason") or "", edit, rung=rung, item=item)

    def tripwires(self, edit: FileEdit, fired: set[str], evaluated: set[str], rule_wires: bool) -> None:
        """Path-only wires (``rule_wires`` False: first, never deadline-gated), or the wires
        conditioned on a local rule (after the rules ran)."""
        stage = "rule tripwires" if rule_wires else "tripwires"
        wires = [w for w in self.wire_set() if bool(w.rule) == rule_wires]
        if not wires:
            return self.note(stage, SKIPPED, "no rule-conditioned tripwire" if rule_wires else
                             "no well-formed path-only tripwire, local or governed", edit)
        from yupana.evaluate import tripwires

        found = tripwires.evaluate(wires, edit.rel, edit.real_rel, fired, evaluated)
        if not found:
            return self.note(stage, RAN, f"none of {len(wires)} wire(s) covers this path", edit, wires=wires)
        gov = self._gov
        for f in found:  # local config is authoritative (fresh); governed wires carry the cache's freshness
            f.extra["freshness"] = gov.freshness if gov and f.extra.get("wire_source") == "governed" else "fresh"
        governed = any(f.extra.get("wire_source") == "governed" for f in found)
        self.decide(found, "tripwire", suffix=" " + gov.note() if governed and gov else "")
        for f in found:
            if f.outcome != UNSATISFIED or f.extra.get("stage") == "shadow":  # shadow: the guard record's only
                continue
            effect = f.extra.get("effect")
            armed = f.blocking and f.extra.get("stage") != "advise"
            result = "deny" if armed and self.mode == "enforce" else ("advise" if f.blocking else "notify")
            self.effects.record("tripwire", {"name": f.id.split(":", 1)[1], "effect": effect, "source": f.extra.get("wire_source"),
                                      "iri": f.source if f.source != "config" else None, "result": result,
                                      "session": self.sid}, item=self.plate_item())
            if effect == "throttle":
                self.record_throttle(edit, f)
        self.note(stage, RAN, "", edit, wires=wires)


def _nonempty(path: str | None) -> bool:
    try:
        return bool(path) and os.stat(path).st_size > 0  # type: ignore[arg-type]
    except OSError:
        return False
