"""The one hook runtime every hook builds on. Hot path, standard library only.

A hook is a subclass of :class:`HookRuntime` named by a row of :mod:`yupana.hooks.registry`;
it implements :meth:`HookRuntime.run` — the order of its checks, on the payload parsed once
— and the runtime supplies the rest of the contract, once for all hooks:

* :meth:`HookRuntime.answer`: parse, run, fail open on any internal error
  (:meth:`HookRuntime.crashed`: the partial outcome discarded, one loud ``internal``
  degradation), refused state files said, and the exact stdout rendered once;
* :meth:`HookRuntime.degrade`: a loud fail-open — stderr, a ``fail_open`` record, a notice
  once per session per marker (every time when not ``once``);
* :meth:`HookRuntime.invoked`: the hook's one per-invocation record (its registry row's
  ``record`` kind), carrying what every such record carries; :meth:`HookRuntime.elapsed_ms`
  its latency;
* :meth:`HookRuntime.note`: the dry run's stage notes (:data:`RAN`, :data:`SKIPPED`, or
  ``UNKNOWN``: could not run);
* :meth:`HookRuntime.gov`: the governed plane's servable cache, loaded at most once, and
  loudly absent when it should be there;
* the mode ladder: :func:`yupana.evaluate.rung`;
* :meth:`HookRuntime.watch_controls`: after every run, tamper evidence for the guard's
  controls (:mod:`yupana.hooks.control_watch`), told to the operator, never to the model.

Everything the hook does to the world goes through :attr:`HookRuntime.effects`
(:mod:`yupana.hooks.effects`): live in a real hook, a rehearsal in ``yupana explain``.
"""

from __future__ import annotations

import os
import time

from yupana import clients, project_root
from yupana.evaluate import UNKNOWN
from yupana.edit import payload
from yupana.hooks import protocol, registry
from yupana.hooks.effects import LIVE, Effects

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:  # annotations only: the governed module loads when a hook asks for the cache
    from yupana.hooks import governed as governed_mod
    from typing import Any
    from yupana.hooks.registry import HookArgs
    from yupana.edit.model import FileEdit

RAN, SKIPPED = "ran", "skipped"  # stage states for a dry run's trace (with UNKNOWN: could not run)
NOT_CONFIGURED = "the governed plane is not configured ([yupana.quipu] enabled = true and an endpoint)"


class HookRuntime:
    """One hook invocation: its payload, configuration, outcome and effects."""

    hook = "?"  # the registry name (records, messages)
    event = "PreToolUse"  # the hook event its output answers
    unchecked = "this tool call was NOT checked"  # what an internal error leaves unchecked
    unguarded = "governed policy is NOT enforced"  # what a missing policy cache leaves unguarded
    gov_note = ""  # appended to the policy-cache note when no cache is servable

    def __init__(self, args: HookArgs, t0: float, effects: Effects | None = None) -> None:
        self.args = args
        self.t0 = t0
        self.effects = effects if effects is not None else LIVE
        self.outcome = protocol.Outcome()
        self.inv: payload.Invocation | None = None  # the payload, once parsed (None: not a JSON object)
        self.cfg: dict[str, Any] = {}
        self.mode = "off"
        self.root = ""  # the project root whose configuration is loaded (yupana.project_root)
        self.item: str | None = None  # the tracked work item, once read
        self.stale = False
        self.gov_why = (SKIPPED, "")  # why gov() served nothing: (state, reason)
        self._gov: governed_mod.Governed | None = None  # what gov() served
        self._gov_asked = False  # gov() has run (for this configuration)
        self.digests: list[str] = []  # the rule-set digest of every catalogue served to this invocation

    @classmethod
    def main(cls, args: HookArgs) -> None:
        """The hook process (``yupana.cli`` dispatches here): stdin in, stdout once, at the end."""
        hook = cls(args, time.monotonic())
        protocol.emit(hook.answer(protocol.read_stdin()))

    @property
    def sid(self) -> str | None:
        return self.inv.session_id if self.inv is not None else None

    @property
    def parsed(self) -> payload.Invocation:
        """The parsed payload, for the checks that run once it parsed (``run`` stops before them
        when it did not)."""
        assert self.inv is not None, "the payload did not parse"  # run() returned before any check
        return self.inv

    def elapsed_ms(self) -> float:
        """Wall time of this invocation's own work so far, in ms to 0.1 (``duration_ms``)."""
        return round((time.monotonic() - self.t0) * 1000, 1)

    def invoked(self, fields: dict[str, Any], item: str | None = None) -> None:
        """The one record this hook writes per invocation (``guard``, ``pre_bash_invoked``,
        ``post_edit_invoked``: the registry row's ``record``), ``fields`` plus what every such
        record carries when the payload parsed — its ``session``, ``tool``, ``tool_use_id`` and
        ``client``, and the ``project`` key of the root the files were judged under — so that
        ``yupana status`` and ``yupana metrics`` read every hook's invocations alike — and the
        ``digest`` of the rule set it decided with (:meth:`rule_set`), when a catalogue was served."""
        inv = self.inv
        if inv is not None:
            fields = {**fields, "session": inv.session_id, "tool": inv.tool_name, "tool_use_id": inv.tool_use_id,
                      "client": inv.client, "project": project_root.project_key(self.root or inv.project.root)}
        if self.digests:
            fields["digest"] = self.rule_set()
        would = self.would_deny()
        if would is not None:
            fields["would_deny"] = would
        kind = registry.get(self.hook).record
        assert kind is not None, f"{self.hook} has no per-invocation record in the registry"
        self.effects.record(kind, fields, item=item)

    def served(self, gov: governed_mod.Governed) -> None:
        """Remember the rule-set digest of the catalogue ``gov`` serves (:meth:`rule_set`)."""
        digest = gov.cache.get("digest") if gov.cache is not None else None
        if isinstance(digest, str) and digest and digest not in self.digests:
            self.digests.append(digest)

    def rule_set(self) -> str | None:
        """The digest of the rule set this invocation decided with (the served cache's
        ``digest``, docs/records.md): None when no catalogue was served; the ``+``-join, sorted,
        when a Codex patch spanning projects was judged under several."""
        return "+".join(sorted(self.digests)) if self.digests else None

    def would_deny(self) -> bool | None:
        """Under ``advise``: whether ``enforce`` would have refused this call (None under any other
        mode: the field is omitted). Each hook says how it knows (default: it never refuses)."""
        return False if self.mode == "advise" else None

    def note(self, stage: str, state: str, why: str = "", edit: FileEdit | None = None, **detail: Any) -> None:
        """Tell a dry run's trace that ``stage`` ran, was skipped or could not run (UNKNOWN),
        and why; ``detail`` is what the report shows beside it. Nothing, live."""
        self.effects.stage(self, stage, state, why, edit, detail)

    # ── the contract ───────────────────────────────────────────────────────────────
    def answer(self, raw: bytes) -> str:
        """The whole invocation on ``raw``; returns the exact stdout ("" for a silent allow)."""
        try:
            self.inv = payload.parse(raw, getattr(self.args, "client", None))  # the one parse of the payload
            if self.inv is None:
                protocol.unreadable_payload(self.hook, raw)
            self.run(raw)
            if self.inv is not None and self.inv.unknown_tool is not None:
                self.unknown_tool(self.inv.unknown_tool)
        except Exception as exc:  # noqa: BLE001 - any fault is a loud allow, never a block
            self.crashed(exc)
        self.watch_controls()
        self.capture_inputs()
        protocol.refused_state(self.outcome, self.effects, hook=self.hook, session_id=self.sid, cfg=self.cfg)
        return self.outcome.render(self.event, client=self.inv.client if self.inv else None,
                                   audience=protocol.advise_audience(self.cfg))

    def watch_controls(self) -> None:
        """Tamper evidence: a ``control_changed`` record for each control file that changed since
        the last hook of this project (:mod:`yupana.hooks.control_watch`); told to the operator
        (stderr, spool, ``status``), never to the model. Never changes the answer."""
        if not self.root or self.mode in ("off", "?"):
            return
        try:
            from yupana.hooks import control_watch

            found, target, files = control_watch.watch(self.root, project_root.project_key(self.root))
            for change in found:
                self.effects.record("control_changed", change, item=self.item)
                if change["looser"]:
                    protocol.stderr(f"yupana: a control of the guard got looser: {change['file']}: "
                                    f"{'; '.join(change['loosened'])}")
            if target and files is not None:
                self.effects.controls_seen(target, files)
        except Exception as exc:  # noqa: BLE001 - evidence must never cost the answer
            protocol.stderr(f"yupana: tamper evidence could not run ({type(exc).__name__}: {exc})")

    def capture_inputs(self) -> None:
        """``[yupana.metrics] record_inputs`` = ``masked`` | ``full``: keep what this call was judged
        on, bounded (``masked``: without what the rules caught), for ``yupana replay``
        (:mod:`yupana.state.inputs`); never changes the answer."""
        inv = self.inv
        capture = (self.cfg.get("metrics") or {}).get("record_inputs") if inv is not None else None
        if inv is None or self.mode in ("off", "?") or capture not in ("masked", "full"):
            return
        try:
            judged = self.judged_inputs()
            if judged is None:
                return
            edits, command, caught, extra = judged
            if capture == "full":
                caught = []
            from yupana.state import inputs

            fields = {"hook": self.hook, "session": inv.session_id, "tool_use_id": inv.tool_use_id,
                      "client": inv.client, "tool": inv.tool_name, "tenant": os.environ.get("BOBBIN_ROLE") or None,
                      "agent": os.environ.get("SHANTY_AGENT") or None,
                      "project": project_root.project_key(self.root or inv.project.root), **extra,
                      "mode": self.mode, "decision": self.outcome.decision, "digest": self.rule_set()}
            self.effects.capture(inputs.entry(fields, edits, command, caught))
        except Exception as exc:  # noqa: BLE001 - the capture must never cost the answer
            protocol.stderr(f"yupana: the input capture failed ({type(exc).__name__}: {exc})")

    def judged_inputs(self) -> tuple[list[tuple[str, str, str]], str | None, list[tuple[str, str]], dict[str, Any]] | None:
        """What :meth:`capture_inputs` keeps: ``(edits as (path, op, introduced), command, (rule id,
        caught text) to mask, more fields: repo, exposure)``; None: this hook captures nothing (the default)."""
        return None

    def run(self, raw: bytes) -> None:
        """The hook's checks, in its contract's order (``self.inv`` is the parsed payload)."""
        raise NotImplementedError

    def unknown_tool(self, tool: str) -> None:
        """A known client's tool its registry row does not list: nothing was read, so nothing was
        checked — a loud UNKNOWN (``fail_open`` record, notice), never a silent allow."""
        row = clients.get(self.parsed.client)
        label = row.label if row is not None else "the (unrecognised) client's"
        docs = (f"; {row.docs} lists the tools yupana reads" if row is not None else
                "; register with `yupana install <client>` so the client is known (docs/clients/registry.md)")
        message = (f"{self.hook}: {label} tool {tool!r} is not one yupana reads — this tool call was NOT checked "
                   f"(failing open){docs}")
        self.note("parse", UNKNOWN, message)
        self.degrade("unknown_tool", message, {"client": self.parsed.client, "tool": tool[:80]},
                     marker=f"unknown_tool-{tool[:40]}")

    def crashed(self, exc: BaseException) -> None:
        """An internal error: discard whatever was decided and fail open loudly."""
        self.outcome = protocol.Outcome()
        error = f"{type(exc).__name__}: {exc}"
        try:
            if type(exc).__name__ == "Corrupt" and self._gov is not None:  # hot_view.Corrupt, unimported
                self.twin_damaged(exc)  # a damaged twin read where no stage caught it: still the named miss
                self.after_crash()
                return
            self.degrade("internal", f"{self.crash_subject()} failed open (internal error: {error}) — "
                         f"{self.unchecked}", {"reason": error})
            self.after_crash()
        except Exception:  # noqa: BLE001
            pass

    def crash_subject(self) -> str:
        return f"{self.hook} guard"

    def after_crash(self) -> None:
        """What still has to be written after an internal error (pre-edit: its record)."""

    def degrade(self, kind: str, message: str, fields: dict[str, Any] | None = None, once: bool = True,
                marker: str | None = None, model: str | None = None) -> None:
        """A loud fail-open of ``kind``: stderr, a ``fail_open`` record, a notice (once per
        session per ``marker``, default ``kind``; every time when not ``once``). ``model``: what
        the model reads of it on a client that shows it notices (default ``protocol.MODEL_NOTICE``)."""
        record = {"fail_kind": kind, "hook": self.hook, "session": self.sid, "digest": self.rule_set(),
                  **(fields or {})}
        pane = protocol.notify_on_fail_open(self.cfg)
        record.setdefault("client", self.inv.client if self.inv is not None else None)  # who sent the call
        protocol.degrade(self.outcome, self.effects, session_id=self.sid, kind=marker or kind,
                         record_kind="fail_open", message=message, fields=record, notify=once and pane,
                         item=self.item, model=model)
        if not once:
            if pane:
                self.outcome.notify(f"yupana: {message}", model)
            elif self.silent_client():
                self.outcome.add_context(model or protocol.MODEL_NOTICE)  # the details: stderr, spool

    def silent_client(self) -> bool:
        """The client shows the user no notice (its row's ``shows_user``: Codex): the model is told."""
        row = clients.get(self.inv.client if self.inv is not None else None)
        return row is not None and not row.shows_user

    # ── the configuration's own record ─────────────────────────────────────────────
    def config_records(self, snap: dict[str, Any], root: str) -> None:
        """What resolving ``root``'s configuration found about the guard's own controls, on the
        operator's channels (stderr, the spool), never the model's: each value a layer tried
        below its floor (``config_lowered``, once per session per layer, file, key and value),
        and each config file that changed since the last resolution (``control_changed``)."""
        for low in snap.get("lowered") or ():
            marker = "config-lowered-" + _short(f"{low['layer']}\0{low['file']}\0{low['key']}\0{low['value']!r}")
            if not self.effects.first_time(self.sid, marker):
                continue
            protocol.stderr(f"yupana: {low['file']} ({low['layer']}) sets {low['key']} = {low['value']!r}, below its "
                            f"floor {low['floor']!r}: ignored, the floor stands")
            self.effects.record("config_lowered", {**low, "hook": self.hook, "session": self.sid,
                                                   "project": project_root.project_key(root)})
        for change in snap.get("control_changed") or ():
            if change["looser"]:
                protocol.stderr(f"yupana: {change['file']} changed and loosened the guard's policy "
                                f"({', '.join(change['loosened'])})")
            self.effects.record("control_changed", {**change, "hook": self.hook, "session": self.sid})

    # ── the governed plane ─────────────────────────────────────────────────────────
    def gov(self) -> governed_mod.Governed | None:
        """The governed plane's servable cache (loaded once), or None — loudly when it should exist."""
        if self._gov_asked:
            return self._gov
        self._gov_asked = True
        quipu = self.cfg.get("quipu") or {}
        if self.mode == "off" or not quipu.get("enabled") or not quipu.get("endpoint"):
            self.gov_why = (SKIPPED, NOT_CONFIGURED)
            self.note("policy cache", *self.gov_why)
            return None
        from yupana.hooks import governed

        loaded = governed.load(self.cfg, int(time.time()), root=self.root, override=self.args.config,
                               record={"hook": self.hook, "session": self.sid}, effects=self.effects)
        if loaded.cache is None:
            miss = loaded.miss
            reason = miss.reason if miss else "no servable projection cache"
            rebuilding = miss is not None and miss.label == "rebuilding"
            started = ("; a worker is deriving it" if rebuilding else "; a refresh was started") \
                if loaded.refresh_started else ""
            self.policy_unavailable()
            self.degrade("projection", f"policy guard failed open (no servable projection cache: {reason}{started}) — "
                         f"{self.unguarded}", {"miss": miss.label if miss else None, "reason": reason})
            self.gov_why = (UNKNOWN, f"no servable projection cache ({reason}{started}){self.gov_note}")
            self.note("policy cache", *self.gov_why, governed=loaded)
            return None
        self.stale = self.stale or loaded.freshness != "fresh"
        self._gov = loaded
        self.served(loaded)
        self.note("policy cache", RAN, "", governed=loaded)
        return loaded

    def plane(self, key: str) -> Any:
        """Plane ``key`` of the served cache (None when none is served), or None after the loud
        ``unreadable`` miss when the hot twin fails a checksum reading it (:meth:`twin_damaged`)."""
        from yupana.state.hot_view import Corrupt

        gov = self.gov()
        if gov is None or gov.cache is None:
            return None
        try:
            return gov.cache.get(key)
        except Corrupt as exc:
            self.twin_damaged(exc)
            return None

    def twin_damaged(self, exc: BaseException) -> None:
        """The served cache's hot twin failed a checksum mid-read (:class:`yupana.state.hot_view.Corrupt`):
        the loud ``unreadable`` miss for the rest of this invocation — never a decision from damaged
        bytes — and a rebuild: the twin is removed, so the next hook derives it from the JSON (a
        detached worker does, for a catalogue too large to derive inside a hook)."""
        gov, self._gov = self._gov, None
        path = gov.path if gov is not None else None
        rebuilding = ""
        if gov is not None and gov.cache is not None and path:
            if self.effects.workers.discard_twin(path, gov.cache):
                self.effects.workers.refresh(path, self.root, self.args.config, twin_only=True)
                rebuilding = "; a worker is deriving it again"
            else:
                rebuilding = "; the next hook derives it again"
        reason = f"the hot twin of {path} is damaged ({exc})"
        self.policy_unavailable()
        self.degrade("projection", f"policy guard failed open (no servable projection cache: {reason}{rebuilding}) "
                     f"— {self.unguarded}", {"miss": "unreadable", "reason": reason})
        self.gov_why = (UNKNOWN, f"no servable projection cache ({reason}{rebuilding}){self.gov_note}")

    def policy_unavailable(self) -> None:
        """No policy is served to this invocation (pre-edit: an UNKNOWN constraint)."""


def _short(text: str) -> str:
    from yupana.digests import sha1_hex

    return sha1_hex(text)[:16]
