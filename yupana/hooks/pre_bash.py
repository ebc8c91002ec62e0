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

``yupana explain`` runs this very code as a dry run (:attr:`PreBash.trace` set, as for
pre-edit in :mod:`yupana.hooks.guard_context`): each stage reports itself through
:meth:`PreBash.note`; no refresh or disk-flush worker is spawned and no disk sample is
rotated or queued (what would be is predicted and reported instead).
"""

from __future__ import annotations

import os
import time

from yupana import fastjson, globs, project_root, settings, shell

from yupana.state import spool
from yupana.evaluate import UNKNOWN, UNSATISFIED
from yupana.shell import actions as action
from yupana.edit import payload
from yupana.hooks import protocol

_MODES = {"off": 0, "advise": 1, "enforce": 2}
_UNSET = object()
RAN, SKIPPED = "ran", "skipped"  # stage states for a dry run's trace (with UNKNOWN: could not run)


def run(args) -> None:
    """Entry point (``yupana.cli`` dispatches here). Writes stdout once, at the end."""
    protocol.emit(PreBash(args).answer(protocol.read_stdin()))


class PreBash:
    """One pre-bash invocation: the command read, the decisions taken, the records written."""

    trace = None  # the explain seam: a dry run's trace (yupana explain); never set in a real hook

    def __init__(self, args) -> None:
        self.args = args
        self.outcome = protocol.Outcome()
        self.inv = None
        self.sid: str | None = None
        self.raw_command: str = ""
        self.reading: shell.Reading | None = None
        self.actions: list[action.Action] = []
        self.cfg: dict = {}
        self.mode = "off"
        self._gov = _UNSET

    def note(self, stage: str, state: str, why: str = "", **detail) -> None:
        """Tell a dry run's trace what a stage did (ran / skipped / unknown, and why). No-op in a real hook."""
        if self.trace is not None:
            self.trace.stage(self, stage, state, why, None, detail)

    # ── the order ──────────────────────────────────────────────────────────────────
    def answer(self, raw: bytes) -> str:
        """The whole invocation on ``raw``; returns the exact stdout ("" for a silent allow)."""
        try:
            self.run(raw)
        except Exception as exc:  # noqa: BLE001 - any fault is a loud allow, never a block
            self.crashed(exc)
        protocol.refused_state(self.outcome, hook="pre-bash", session_id=self.sid, cfg=self.cfg)
        return self.outcome.render(client=self.inv.client if self.inv else None,
                                   audience=protocol.advise_audience(self.cfg))

    def run(self, raw: bytes) -> None:
        inv = self.inv = payload.parse(raw)
        self.sid = inv.session_id if inv else None
        argv = _argv_command(raw) if inv is not None and inv.command is None and not inv.codex else None
        parsed = inv is not None and (inv.command is not None or argv is not None)
        fields: dict = {"parsed": parsed, "payload_bytes": len(raw), "session": self.sid,
                        "tool": inv.tool_name if inv else None, "client": inv.client if inv else None,
                        "project": project_root.project_key(inv.project.root) if inv else None}
        if not parsed:
            fields["payload_keys"] = ",".join(inv.raw_keys) if inv and inv.raw_keys else _keys(raw)
        spool.record("pre_bash_invoked", fields)
        if inv is None:
            protocol.unreadable_payload("pre-bash", raw)
        if not parsed:
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
        try:
            snap = settings.load(inv.project.root, getattr(self.args, "config", None))  # from cwd up
        except settings.ConfigError as exc:
            self.note("config", UNKNOWN, str(exc))
            self.degrade("config", f"policy guard failed open (configuration error: {exc}) — commands are UNGUARDED "
                         "until it is fixed; `yupana config check` shows the details", {"reason": str(exc)})
            return
        self.cfg = snap["config"]
        policy = self.cfg["policy"]
        self.mode = policy.get("mode", "off")
        self.note("config", RAN, snapshot=snap)
        self.action_scope(policy)
        quipu = self.cfg.get("quipu") or {}
        if self.mode == "off" or not quipu.get("enabled") or not quipu.get("endpoint"):
            return self.note("memory, disk", SKIPPED, "mode = off" if self.mode == "off" else
                             "the governed plane is not configured ([yupana.quipu] enabled = true and an endpoint)")
        self.memory()
        if policy.get("disk_advisory", True) and self.outcome.decision != protocol.DENY:
            self.disk(quipu)
        else:
            self.note("disk", SKIPPED, "disk_advisory = false" if not policy.get("disk_advisory", True) else
                      "the command is denied")

    def record_actions(self) -> None:
        resolved = [a for a in self.actions if a.class_ != action.UNKNOWN]
        if not resolved:
            reason = next((a.reason for a in self.actions if a.reason), None)
            spool.record("action", {"target_class": action.UNKNOWN, "reason": reason, "session": self.sid})
            return
        for a in resolved:
            spool.record("action", {"target_class": a.class_, "verb": a.verb, "target": a.target, "session": self.sid})

    # ── action scope ───────────────────────────────────────────────────────────────
    def action_scope(self, policy: dict) -> None:
        rung = min(_MODES.get(policy.get("action_scope", "off"), 0), _MODES.get(self.mode, 0))
        tenant = os.environ.get("BOBBIN_ROLE")
        if rung == 0 or not tenant:
            return self.note("action scope", SKIPPED, "no tenant ($BOBBIN_ROLE)" if rung else
                             f"action_scope = {policy.get('action_scope', 'off')} (mode {self.mode} is its ceiling)")
        scope = (policy.get("scopes") or {}).get(tenant)
        if not scope:  # a tenant with no scope entry is unconstrained
            return self.note("action scope", SKIPPED, f"tenant `{tenant}` has no scope entry: unconstrained")
        allow = list(scope.get("allow_targets") or ())
        deny = list(scope.get("deny_targets") or ())
        if not allow and not deny:
            return self.note("action scope", SKIPPED, f"tenant `{tenant}` declares no allow_targets / deny_targets")
        try:
            allow_c = [(g, globs.compile_glob(g)) for g in allow]
            deny_c = [(g, globs.compile_glob(g)) for g in deny]
        except globs.GlobError as exc:
            self.degrade("globs", f"policy guard failed open (malformed target glob in [yupana.policy.scopes.{tenant}]: "
                         f"{exc}) — the action scope is NOT enforced", {"reason": str(exc), "tenant": tenant})
            return self.note("action scope", UNKNOWN, f"malformed target glob: {exc}", tenant=tenant)
        enforce = rung == 2
        verdicts: list[tuple] = []
        for a in self.actions:
            if a.class_ == action.UNKNOWN:
                continue
            key = a.key
            hit = next((g for g, tokens in deny_c if globs.matches(tokens, key)), None)
            if hit is not None:
                rule, why = f"deny_targets:{hit}", f"deny_targets matches `{hit}`"
            elif allow_c and not any(globs.matches(tokens, key) for _, tokens in allow_c):
                rule, why = "allow_targets", f"it is not in allow_targets ({', '.join(allow)})"
            else:
                verdicts.append((a, None, "inside the scope"))
                continue
            verdicts.append((a, rule, why))
            spool.record("action_scope", {"class": a.class_, "target": a.target, "verb": a.verb, "rule": rule,
                                          "result": "deny" if enforce else "advise", "session": self.sid})
            if enforce:
                self.outcome.deny(
                    f"yupana: this command would act on {a.class_} `{a.target}` ({a.verb}), outside the action scope "
                    f"of tenant `{tenant}`: {why}. Act only on targets the scope allows, or ask the operator to widen "
                    f"[yupana.policy.scopes.{tenant}].")
            else:
                protocol.stderr(f"yupana (action scope, advise: enforce would deny): {a.class_}:{a.target} ({a.verb}) "
                                f"is outside the scope of tenant `{tenant}`: {why}")
        self.note("action scope", RAN, tenant=tenant, rung="enforce" if enforce else "advise", verdicts=verdicts,
                  allow=allow, deny=deny)

    # ── host memory ────────────────────────────────────────────────────────────────
    def memory(self) -> None:
        gov = self.gov()
        if gov is None:
            return self.note("memory", UNKNOWN, "no servable projection cache: governed command policy is NOT enforced")
        policies = gov.cache.get("memory_policies") or []
        if not policies:
            return self.note("memory", SKIPPED, "the projection holds no host-memory policy")
        from yupana.evaluate import memory

        reading = self.reading
        certain = reading is not None and reading.error is None
        evidence = [c.text() for c in reading.commands if c.argv] if certain else [self.raw_command]
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
            spool.record("memory_policy", {"rule": f.id, "result": result, "class": f.class_, **measured,
                                           "policy_freshness": gov.freshness, "policy_age_secs": gov.age_secs,
                                           "session": self.sid})
            if blocking:
                self.outcome.deny(f"yupana: {f.message}. {gov.note()}")
            else:
                label = "advise: enforce would deny" if f.blocking else "governed, not blocking"
                self.outcome.advise(f"yupana (host memory, {label}): {f.message}. {gov.note()}")
        self.note("memory", RAN, policies=policies, findings=found, evidence=evidence, certain=certain)

    # ── disk impact ────────────────────────────────────────────────────────────────
    def disk(self, quipu: dict) -> None:
        from yupana.evaluate import disk

        found = disk.recognise(self.reading) if self.reading else None
        if found is None:  # an unrelated command pays nothing more
            return self.note("disk", SKIPPED, "not a command known to create large artifacts")
        from yupana.state import disk_samples

        inv = self.inv
        repo_class, cwd_class = disk.classes(inv.cwd, payload.git_top(inv.cwd))
        sig = disk.signature(found[0], found[1], repo_class, cwd_class)
        fss = disk_samples.snapshot(inv.cwd)
        now = int(time.time())
        if self.sid and self.trace is not None:  # a dry run keeps no sample: what would close is read only
            closed, note = disk_samples.preview(self.sid, fss, now)
        elif self.sid:
            closed, note = disk_samples.rotate(self.sid, sig, fss, now)
        else:
            closed, note = [], "no session id: samples cannot be paired"
        if note:
            spool.record("disk_sample_dropped", {"signature": sig, "reason": note, "session": self.sid})
        if closed:
            self.queue(quipu, closed, now)
        gov = self.gov()
        if gov is None:
            spool.record("disk_guard_unknown", {"signature": sig, "session": self.sid,
                                                "reason": "no servable projection cache: the history is UNKNOWN"})
            return self.note("disk", UNKNOWN, "no servable projection cache: the history is UNKNOWN", signature=sig)
        findings, missing = disk.advise(gov.cache.get("disk_history"), sig, fss)
        if missing:
            spool.record("disk_guard_unknown", {"signature": sig, "reason": "; ".join(missing),
                                                "filesystems": len(fss), "session": self.sid})
        for f in findings:
            if f.outcome != UNSATISFIED:
                continue
            spool.record("disk_advisory", {"signature": sig, "fs": f.extra["key"].rsplit("|", 1)[1],
                                           "p90_bytes": f.extra["p90_bytes"], "free_bytes": f.extra["free_bytes"],
                                           "samples": f.extra["samples"], "policy_freshness": gov.freshness,
                                           "policy_age_secs": gov.age_secs, "session": self.sid})
            self.outcome.advise(f"yupana (disk advisory, governed, not blocking): {f.message}. {gov.note()}")
        self.note("disk", UNKNOWN if missing and not findings else RAN, "; ".join(missing), signature=sig,
                  findings=findings, closed=closed)

    def queue(self, quipu: dict, closed: list[dict], now: int) -> None:
        """Record closed samples locally and queue them for the store (never waits)."""
        from yupana.state import disk_samples

        endpoint = str(quipu.get("endpoint") or "")
        reason = None
        if not endpoint.startswith(("http://", "https://")):
            reason = "the configured store is local files: it has no write path"
        elif disk_samples.writes_disabled(self.sid):
            reason = "writes are disabled for this session after the store refused its credentials"
        elif self.trace is not None:
            reason = None  # a dry run queues nothing; it reports what would be queued
        else:
            reason = disk_samples.enqueue(endpoint, self.sid or "", closed)
        for s in closed:
            spool.record("disk_sample", {"signature": s["signature"], "fs": s["fs"], "delta_bytes": s["delta"],
                                         "secs": s["secs"], "queued": reason is None, "reason": reason,
                                         "session": self.sid})
        if reason is None and self.trace is None:
            disk_samples.start_flush(endpoint, self.inv.project.root, now, getattr(self.args, "config", None))

    # ── helpers ────────────────────────────────────────────────────────────────────
    def gov(self):
        """The servable projection cache (loaded once), or None — loudly."""
        if self._gov is not _UNSET:
            return self._gov
        self._gov = None
        from yupana.hooks import governed

        loaded = governed.load(self.cfg, int(time.time()), root=self.inv.project.root,
                               override=getattr(self.args, "config", None), record={"hook": "pre-bash", "session": self.sid}, dry=self.trace is not None)
        if loaded.cache is None:
            miss = loaded.miss
            reason = miss.reason if miss else "no servable projection cache"
            started = "; a refresh was started" if loaded.refresh_started else ""
            self.degrade("projection", f"policy guard failed open (no servable projection cache: {reason}{started}) — "
                         "governed command policy is NOT enforced", {"miss": miss.label if miss else None,
                                                                      "reason": reason})
            self.note("policy cache", UNKNOWN, f"no servable projection cache ({reason}{started})", governed=loaded)
            return None
        self._gov = loaded
        self.note("policy cache", RAN, governed=loaded)
        return loaded

    def degrade(self, kind: str, message: str, fields: dict | None = None) -> None:
        """A loud fail-open of ``kind``: stderr, a ``fail_open`` record, a once-per-session notice."""
        record = {"fail_kind": kind, "hook": "pre-bash", "session": self.sid, **(fields or {})}
        protocol.degrade(self.outcome, session_id=self.sid, kind=kind, record_kind="fail_open", message=message,
                         fields=record, notify=protocol.notify_on_fail_open(self.cfg))

    def crashed(self, exc: BaseException) -> None:
        """An internal error: discard whatever was decided and fail open loudly."""
        self.outcome = protocol.Outcome()
        try:
            self.degrade("internal", f"pre-bash guard failed open (internal error: {type(exc).__name__}: {exc}) — this "
                         "command was NOT checked", {"reason": f"{type(exc).__name__}: {exc}"})
        except Exception:  # noqa: BLE001
            pass


def _argv_command(raw: bytes) -> list[str] | None:
    """A Codex shell call's ``tool_input.command`` given as an argv list, or None."""
    try:
        data = fastjson.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return None
    tool_input = data.get("tool_input") if isinstance(data, dict) else None
    command = tool_input.get("command") if isinstance(tool_input, dict) else None
    if isinstance(command, list) and command and all(isinstance(w, str) for w in command):
        return command
    return None


def _keys(raw: bytes) -> str | None:
    """Top-level key names of a payload that parsed as JSON but could not be used."""
    try:
        data = fastjson.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return None
    return ",".join(str(k)[:64] for k in list(data)[:64]) if isinstance(data, dict) else None
