"""``yupana hook pre-bash``: the action surface, host memory and disk impact of a command. Hot path.

Order, for every Bash (or Codex shell) tool call:

1. parse the payload; a ``pre_bash_invoked`` record always (``parsed``, ``payload_bytes``,
   and ``payload_keys`` — top-level key names only — when there is no command to read);
2. read the command (:mod:`yupana.shell`) and resolve it (:mod:`yupana.shell.actions`);
   an ``action`` record for every resolved action, or one ``target_class: "unknown"``
   record with the reason — whatever the configuration says;
3. configuration snapshot — an error fails open loudly (kind ``config``);
4. **action scope** — effective rung = the lower of ``[yupana.policy] action_scope`` and
   ``mode``; tenant from ``$BOBBIN_ROLE`` only; ``allow_targets``/``deny_targets`` globs of
   ``[yupana.policy.scopes.<tenant>]`` matched against ``class:target``; deny beats allow,
   an empty allow list permits any target; only resolved actions are checked (an
   abstention is never a violation). ``advise``: stderr + an ``action_scope`` record;
   ``enforce``: the deny envelope with a reason written for the model;
5. with ``mode`` not ``off`` and the governed plane configured (``quipu.enabled``, an
   endpoint): **host-memory policies** from the projection cache — a violation advises, or
   denies under ``enforce`` when the policy is hard; a missing or expired cache, an
   unreadable memory signal or a floor above MemTotal fail open loudly;
6. the **disk-impact advisory** (also needs ``disk_advisory``, default true), only for a
   command :mod:`yupana.evaluate.disk` recognises and that is not being denied: free-space
   snapshot, the session's previous sample closed and queued for the store (detached
   ``yupana disk-flush``), and a never-blocking notice when the p90 of this command's
   history exceeds 80% of the headroom; no history is a silent ``disk_guard_unknown``.

Unrelated commands pay for none of step 6: no statvfs, no state file, no store. Nothing
reaches stdout until the end, in one write; the hook never exits 2 and never waits on the
network; an internal error discards the partial outcome and fails open loudly.

``yupana explain`` runs this very code as a dry run (:class:`PreBash` with rehearsal effects,
:mod:`yupana.hooks.effects`): each stage reports itself through :meth:`PreBash.note`; no
refresh or disk-flush worker is spawned and no disk sample is rotated or queued (what would
be is predicted and reported instead).
"""

from __future__ import annotations

import os
import time

from yupana import self_protection, settings, shell

from yupana.evaluate import UNKNOWN, UNSATISFIED
from yupana.shell import actions as action
from yupana.edit import payload
from yupana.hooks import protocol
from yupana.hooks.effects import Effects
from yupana.hooks.runtime import RAN, SKIPPED, NOT_CONFIGURED, HookRuntime

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from typing import Any

    from yupana.hooks.registry import HookArgs


class PreBash(HookRuntime):
    """One pre-bash invocation: the command read, the decisions taken, the records written."""

    hook = "pre-bash"
    unchecked = "this command was NOT checked"
    unguarded = "governed command policy is NOT enforced"

    def __init__(self, args: HookArgs, t0: float, effects: Effects | None = None) -> None:
        super().__init__(args, t0, effects)
        self.raw_command: str = ""
        self.reading: shell.Reading | None = None
        self.actions: list[action.Action] = []

    # ── the order ──────────────────────────────────────────────────────────────────
    def run(self, raw: bytes) -> None:
        inv = self.inv
        argv = inv.argv if inv is not None and inv.command is None and not inv.patch_call else None
        parsed = inv is not None and (inv.command is not None or argv is not None)
        fields: dict[str, Any] = {"parsed": parsed, "payload_bytes": len(raw)}
        if not parsed:
            fields["payload_keys"] = ",".join(inv.raw_keys) if inv else None
        snap, config_error = None, ""
        if inv is not None and parsed:  # before the record: the snapshot knows the project's key (yupana.digests)
            try:
                snap = settings.load(inv.project.root, self.args.config, inv.project.nested)  # from cwd up
            except settings.ConfigError as exc:
                config_error = str(exc)
        self.invoked(fields)
        if inv is None or not parsed:
            return self.note("parse", UNKNOWN, "not a JSON object: allowed silently" if inv is None else
                             "no command in the payload (tool_input.command): allowed silently")
        self.note("parse", RAN)
        if argv is not None:
            self.raw_command = " ".join(argv)
            self.reading = shell.read_argv(argv)
        else:
            self.raw_command = inv.command or ""
            self.reading = shell.read(self.raw_command)
        self.actions = action.resolve_reading(self.reading)
        self.record_actions()
        self.note("resolution", RAN, reading=self.reading, actions=self.actions)
        self.root = inv.project.root
        if snap is None:
            self.note("config", UNKNOWN, config_error)
            self.degrade("config", f"policy guard failed open (configuration error: {config_error}) — commands are "
                         "UNGUARDED until it is fixed; `yupana config check` shows the details", {"reason": config_error})
            return
        self.cfg = snap["config"]
        policy = self.cfg["policy"]
        self.mode = policy.get("mode", "off")
        self.note("config", RAN, snapshot=snap)
        self.config_records(snap, self.root)
        self.protect(policy)
        self.action_scope(policy)
        quipu = self.cfg.get("quipu") or {}
        if self.mode == "off" or not quipu.get("enabled") or not quipu.get("endpoint"):
            return self.note("memory, disk", SKIPPED, "mode = off" if self.mode == "off" else NOT_CONFIGURED)
        self.memory()
        if policy.get("disk_advisory", True) and self.outcome.decision != protocol.DENY:
            self.disk(quipu)
        else:
            self.note("disk", SKIPPED, "disk_advisory = false" if not policy.get("disk_advisory", True) else
                      "the command is denied")

    def judged_inputs(self) -> tuple[list[tuple[str, str, str]], str | None, list[tuple[str, str]], dict[str, Any]] | None:
        """The command as the hook read it, and the directory it runs in relative to the project
        root (a client keeps an agent's ``cd``; none at the root) (:meth:`HookRuntime.capture_inputs`)."""
        if not self.raw_command:
            return None
        top = payload.git_top(self.root) if self.root else None
        cwd, root = self.parsed.cwd, self.root.rstrip("/")
        inside = bool(root) and cwd.startswith(root + "/")
        return [], self.raw_command, [], {"repo": payload.repo_name(top) if top else None,
                                          "cwd": cwd[len(root) + 1:] if inside else None}

    def advised(self, would: bool) -> bool | None:
        """A decision record's ``would_deny`` under ``advise`` (whether ``enforce`` would have
        refused the command for it); None — the field omitted — under any other mode."""
        return would if self.mode == "advise" else None

    def record_actions(self) -> None:
        resolved = [a for a in self.actions if a.class_ != action.UNKNOWN]
        if not resolved:
            reason = next((a.reason for a in self.actions if a.reason), None)
            self.effects.record("action", {"target_class": action.UNKNOWN, "reason": reason, "session": self.sid})
            return
        for a in resolved:
            self.effects.record("action", {"target_class": a.class_, "verb": a.verb, "target": a.target,
                                           "session": self.sid})

    # ── the guard's own controls ───────────────────────────────────────────────────
    def protect(self, policy: dict[str, Any]) -> None:
        """Writes to the guard's own controls, and git runs around its hooks, read from the
        command's syntax alone (:mod:`yupana.shell.writes`): refused under enforce, advised under advise."""
        level = self_protection.level(self.mode, policy.get("self_protection"))
        if level == "off" or self.reading is None:
            return self.note("self-protection", SKIPPED, "self_protection = off" if level == "off" else "no command")
        found = controls_written(self.reading, self.parsed.cwd, os.environ.get("HOME"), self.args.config)
        would = self.advised(self_protection.level("enforce", policy.get("self_protection")) == "enforce")
        for kind, route in found:
            enforce = level == "enforce"
            self.effects.record("self_protection", {"protected": kind, "route": route, "would_deny": would,
                                                    "result": "deny" if enforce else "advise", "session": self.sid})
            if enforce:
                self.outcome.deny(self_protection.deny_text(kind, "this command"))
            else:
                self.outcome.advise(self_protection.advise_text(kind, "this command"))
        self.note("self-protection", RAN, "", level=level, protected=found)

    # ── action scope ───────────────────────────────────────────────────────────────
    def action_scope(self, policy: dict[str, Any]) -> None:
        from yupana import globs
        from yupana.evaluate import action_scope

        armed = action_scope.arm(policy, self.mode, os.environ.get("BOBBIN_ROLE"))
        if isinstance(armed, str):
            return self.note("action scope", SKIPPED, armed)
        tenant = armed.tenant
        try:
            verdicts = action_scope.judge(armed, self.actions)
        except globs.GlobError as exc:
            self.degrade("globs", f"policy guard failed open (malformed target glob in [yupana.policy.scopes.{tenant}]: "
                         f"{exc}) — the action scope is NOT enforced", {"reason": str(exc), "tenant": tenant})
            return self.note("action scope", UNKNOWN, f"malformed target glob: {exc}", tenant=tenant)
        from yupana.evaluate import rung

        would = self.advised(rung(policy.get("action_scope", "off"), "enforce") == "enforce")
        for a, rule, why in verdicts:
            if rule is None:
                continue
            self.effects.record("action_scope", {"class": a.class_, "target": a.target, "verb": a.verb, "rule": rule,
                                                 "result": "deny" if armed.enforce else "advise", "would_deny": would,
                                                 "session": self.sid})
            if armed.enforce:
                self.outcome.deny(action_scope.deny_reason(a, tenant, why))
            else:
                protocol.stderr(action_scope.advise_line(a, tenant, why))
        self.note("action scope", RAN, tenant=tenant, rung="enforce" if armed.enforce else "advise",
                  verdicts=verdicts, allow=armed.allow, deny=armed.deny)

    # ── host memory ────────────────────────────────────────────────────────────────
    def memory(self) -> None:
        gov = self.gov()
        if gov is None:
            return self.note("memory", UNKNOWN, "no servable projection cache: governed command policy is NOT enforced")
        policies = self.plane("memory_policies") or []
        if self.gov() is None:  # the twin failed its checksum reading them: the loud miss was made
            return self.note("memory", *self.gov_why)
        if not policies:
            return self.note("memory", SKIPPED, "the projection holds no host-memory policy")
        from yupana.evaluate import memory

        reading = self.reading if self.reading is not None and self.reading.error is None else None
        certain = reading is not None
        evidence = [c.text() for c in reading.commands if c.argv] if reading is not None else [self.raw_command]
        found = memory.evaluate(policies, evidence, certain=certain)
        for f in found:
            measured = {k: f.extra.get(k) for k in ("available_gib", "total_gib", "threshold_gib")}
            if f.outcome == UNKNOWN:
                fail = f.extra.get("fail", "memory")
                self.degrade(fail, f"host-memory policy `{f.id}` failed open ({f.message}) — the command is allowed "
                             "UNGUARDED by it", {"rule": f.id, "reason": f.message, **measured})
                continue
            if f.outcome != UNSATISFIED:
                continue
            blocking = f.blocking and self.mode == "enforce"
            result = "deny" if blocking else ("advise" if f.blocking else "notify")
            self.effects.record("memory_policy", {"rule": f.id, "result": result, "class": f.class_, **measured,
                                           "policy_freshness": gov.freshness, "policy_age_secs": gov.age_secs,
                                           "digest": self.rule_set(), "would_deny": self.advised(f.blocking),
                                           "session": self.sid})
            if blocking:
                self.outcome.deny(f"yupana: {f.message}. {gov.model_note()}")
                if gov.model_note() != gov.note():
                    protocol.stderr(f"yupana: denied: {f.message}. {gov.note()}")
            else:
                label = "advise: enforce would deny" if f.blocking else "governed, not blocking"
                self.outcome.advise(f"yupana (host memory, {label}): {f.message}. {gov.note()}",
                                    model=f"yupana (host memory, {label}): {f.message}. {gov.model_note()}")
        self.note("memory", RAN, policies=policies, findings=found, evidence=evidence, certain=certain)

    # ── disk impact ────────────────────────────────────────────────────────────────
    def disk(self, quipu: dict[str, Any]) -> None:
        from yupana.evaluate import disk

        found = disk.recognise(self.reading) if self.reading else None
        if found is None:  # an unrelated command pays nothing more
            return self.note("disk", SKIPPED, "not a command known to create large artifacts")
        from yupana.state import disk_samples

        inv = self.parsed
        repo_class, cwd_class = disk.classes(inv.cwd, payload.git_top(inv.cwd))
        sig = disk.signature(found[0], found[1], repo_class, cwd_class)
        fss = disk_samples.snapshot(inv.cwd)
        now = int(time.time())
        if self.sid:  # a rehearsal keeps no sample: what would close is read only
            closed, note = self.effects.disk_sample(self.sid, sig, fss, now)
        else:
            closed, note = [], "no session id: samples cannot be paired"
        if note:
            self.effects.record("disk_sample_dropped", {"signature": sig, "reason": note, "session": self.sid})
        if closed:
            self.queue(quipu, closed, now)
        gov = self.gov()
        if gov is None:
            self.effects.record("disk_guard_unknown", {"signature": sig, "session": self.sid,
                                                "reason": "no servable projection cache: the history is UNKNOWN"})
            return self.note("disk", UNKNOWN, "no servable projection cache: the history is UNKNOWN", signature=sig)
        findings, missing = disk.advise(self.plane("disk_history"), sig, fss)
        if missing:
            self.effects.record("disk_guard_unknown", {"signature": sig, "reason": "; ".join(missing),
                                                "filesystems": len(fss), "digest": self.rule_set(),
                                                "session": self.sid})
        for f in findings:
            if f.outcome != UNSATISFIED:
                continue
            self.effects.record("disk_advisory", {"signature": sig, "fs": f.extra["key"].rsplit("|", 1)[1],
                                           "p90_bytes": f.extra["p90_bytes"], "free_bytes": f.extra["free_bytes"],
                                           "samples": f.extra["samples"], "policy_freshness": gov.freshness,
                                           "policy_age_secs": gov.age_secs, "digest": self.rule_set(),
                                           "would_deny": self.advised(False), "session": self.sid})
            self.outcome.advise(f"yupana (disk advisory, governed, not blocking): {f.message}. {gov.note()}",
                                model=f"yupana (disk advisory, governed, not blocking): {f.message}. "
                                      f"{gov.model_note()}")
        self.note("disk", UNKNOWN if missing and not findings else RAN, "; ".join(missing), signature=sig,
                  findings=findings, closed=closed)

    def queue(self, quipu: dict[str, Any], closed: list[dict[str, Any]], now: int) -> None:
        """Record closed samples locally and queue them for the store (never waits)."""
        from yupana.state import disk_samples

        endpoint = str(quipu.get("endpoint") or "")
        reason = None
        if not endpoint.startswith(("http://", "https://")):
            reason = "the configured store is local files: it has no write path"
        elif disk_samples.writes_disabled(self.sid):
            reason = "writes are disabled for this session after the store refused its credentials"
        else:  # a rehearsal queues nothing; it reports what would be queued
            reason = self.effects.disk_enqueue(endpoint, self.sid or "", closed)
        for s in closed:
            self.effects.record("disk_sample", {"signature": s["signature"], "fs": s["fs"], "delta_bytes": s["delta"],
                                         "secs": s["secs"], "queued": reason is None, "reason": reason,
                                         "session": self.sid})
        if reason is None:
            self.effects.workers.disk_flush(endpoint, self.parsed.project.root, now, self.args.config)


def controls_written(reading: shell.Reading, cwd: str, home: str | None, override: str | None = None) -> list[tuple[str, str]]:
    """``(kind, route)`` of every guard control ``reading`` would change (:mod:`yupana.self_protection`
    kinds; ``no_verify`` only where yupana's git hook is installed), de-duplicated, in order."""
    from yupana.shell import writes as shell_writes

    found: list[tuple[str, str]] = []
    for w in shell_writes.writes(reading, cwd, home):
        if w.git == shell_writes.NO_VERIFY:
            kind = self_protection.NO_VERIFY if self_protection.git_hook_installed(w.path) else None
        elif w.git == shell_writes.HOOKS_PATH:
            kind = self_protection.HOOKS_PATH
        else:
            kind = self_protection.of_path(w.path, override=override)
            if kind is None and w.whole:
                kind = self_protection.holds(w.path, override)
            if kind is None and w.whole and any(c in os.path.basename(w.path) for c in "*?[{"):
                kind = self_protection.holds_by_name(os.path.dirname(w.path))  # `rm -rf .git/*`
        if kind is not None and (kind, w.route) not in found:
            found.append((kind, w.route))
    return found
