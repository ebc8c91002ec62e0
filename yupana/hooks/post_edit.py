"""``yupana hook post-edit``: tell the agent when an edit landed outside its work item's ground.

The work-item scope rung at ``advise`` never blocks, and a pre-edit ``systemMessage``
reaches only the operator. So once the edit has landed, this hook tells the *model*
(PostToolUse ``additionalContext``, the channel that reaches it without blocking) that it
stepped outside the observed ground of its tracked work item — and what the cached graph
knows about the path: which work items' observed scopes include it (the inverted
``work_item_scopes``) and, when the cache carries ``work_item_status``, how each turned out.

Silent whenever it cannot speak honestly: rung off, no plate (or a stale one), no servable
cache, no observed scope for the item, or an edit inside the ground. An unknown scope is
UNKNOWN, not a deviation. Never network: the cache is all it reads. Each notice is a
``scope_notice`` record (``item``, ``rule``, ``point: "PAA"``), and every invocation ends in
one ``post_edit_invoked`` record (:meth:`HookRuntime.invoked`): ``result`` ``notice`` or
``silent``, the ``reason`` it stayed silent (:data:`SILENT`), ``duration_ms`` — so ``yupana
status`` and ``yupana metrics`` count post-edit as they count pre-edit and pre-bash.

``yupana explain`` runs :class:`PostEdit` with rehearsal effects (a dry run,
:mod:`yupana.hooks.effects`): each step reports why it spoke or stayed silent, and no
refresh is spawned.
"""

from __future__ import annotations

import time

from yupana import settings

from yupana.evaluate import UNKNOWN
from yupana.hooks import protocol
from yupana.hooks.runtime import NOT_CONFIGURED, RAN, SKIPPED, HookRuntime

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from typing import Any


MAX_NEIGHBOURS = 5

#: Why an invocation stayed silent: the ``reason`` of its ``post_edit_invoked`` record.
SILENT = ("unparsed", "no-file", "config-error", "rung-off", "no-plate", "not-configured", "no-cache", "no-scope",
          "inside-ground", "internal")


class PostEdit(HookRuntime):
    """One post-edit invocation: a notice to the model, or silence."""

    hook = "post-edit"
    event = "PostToolUse"
    notices = 0  # notices given to the model by this invocation

    def crashed(self, exc: BaseException) -> None:
        """A post-edit notice is never worth a failure: one stderr line, silence, and the record."""
        protocol.stderr(f"yupana: post-edit notice skipped ({type(exc).__name__}: {exc})")
        self.outcome = protocol.Outcome()
        self.notices = 0
        self.finish("internal")

    def run(self, raw: bytes) -> None:
        self.finish(self.notify())

    def finish(self, silent: str | None) -> None:
        """The ``post_edit_invoked`` record: always, exactly once, last (docs/records.md)."""
        fields: dict[str, Any] = {"result": "notice" if self.notices else "silent", "parsed": self.inv is not None,
                                  "duration_ms": self.elapsed_ms()}
        if self.notices:
            fields["notices"] = self.notices
        else:
            fields["reason"] = silent
        self.invoked(fields, item=self.item)

    def silent(self, reason: str, stage: str, state: str, why: str) -> str:
        self.note(stage, state, why)
        return reason

    def notify(self) -> str | None:
        """The notices, in order; the reason (:data:`SILENT`) when there was none to give."""
        inv = self.inv
        if inv is None or not inv.edits:
            return self.silent("unparsed" if inv is None else "no-file", "parse", UNKNOWN if inv is None else SKIPPED,
                               "not a JSON object: silent" if inv is None else "no file in the tool call: silent")
        root = self.root = inv.project.root  # the first file's project (yupana.project_root), like pre-edit
        try:
            snap = settings.load(root, self.args.config, inv.project.nested)
        except settings.ConfigError as exc:
            protocol.stderr(f"yupana: post-edit notice skipped (configuration error: {exc})")
            return self.silent("config-error", "config", UNKNOWN, str(exc))
        cfg = snap["config"]  # not self.cfg: the notice follows no advise_audience / notify_on_fail_open
        self.note("config", RAN, snapshot=snap)
        self.config_records(snap, root)
        from yupana.evaluate import work_items

        policy = cfg["policy"]
        self.mode = policy["mode"]  # arms the runtime's tamper evidence (watch_controls) and the record's would_deny
        if work_items.effective_rung(policy.get("work_item_scope", "off"), policy["mode"]) == "off":
            return self.silent("rung-off", "work-item notice", SKIPPED, f"work_item_scope = "
                               f"{policy.get('work_item_scope', 'off')} (mode {policy['mode']} is its ceiling)")
        now = int(time.time())
        item, why = work_items.read_plate(now)
        quipu = cfg["quipu"]
        if not item:
            return self.silent("no-plate", "work-item notice", SKIPPED, why)
        self.item = item
        if not quipu.get("enabled") or not quipu.get("endpoint"):
            return self.silent("not-configured", "work-item notice", SKIPPED, NOT_CONFIGURED)
        from yupana.hooks import governed

        gov = governed.load(cfg, now, root=root, override=self.args.config,
                            record={"hook": "post-edit", "session": inv.session_id}, effects=self.effects)
        self._gov = gov  # a twin that fails a checksum below is the named miss, not an internal error
        self.served(gov)
        self.note("policy cache", RAN if gov.cache is not None else UNKNOWN, "", governed=gov)
        if gov.cache is None:
            return self.silent("no-cache", "work-item notice", SKIPPED, "no servable projection cache: silent")
        scopes = gov.cache.get("work_item_scopes")
        if not isinstance(scopes, dict) or not scopes.get(item):
            return self.silent("no-scope", "work-item notice", SKIPPED, f"work item `{item}` has no observed scope: silent")
        ground = scopes[item]
        status = gov.cache.get("work_item_status")
        record_paths = (cfg.get("metrics") or {}).get("record_paths", "off")
        for edit in inv.edits:
            if edit.rel in ground or edit.real_rel in ground:
                self.note("work-item notice", RAN, f"inside the observed ground of `{item}`: silent", edit)
                continue
            self.note("work-item notice", RAN, f"outside the observed ground of `{item}`", edit, item=item)
            self.outcome.add_context(section(edit.rel, item, ground, scopes, status if isinstance(status, dict) else None)
                                     + " " + gov.note())
            fields = {"rule": f"scope-observed:{item}", "point": "PAA", "session": inv.session_id,
                      "tool": inv.tool_name}
            if record_paths in ("relative", "absolute"):
                fields["path"] = edit.rel if record_paths == "relative" else edit.path
            self.effects.record("scope_notice", fields, item=item)
            self.notices += 1
        return None if self.notices else "inside-ground"


def section(rel: str, item: str, ground: list[str], scopes: dict[str, Any], status: dict[str, Any] | None) -> str:
    """The model-facing notice for one out-of-ground edit."""
    shown = ", ".join(ground[:3]) + (", …" if len(ground) > 3 else "")
    text = (f"yupana: your edit to {rel} landed outside the observed ground of work item `{item}` "
            f"(the {len(ground)} path(s) its commits touched: {shown}). Nothing was blocked. ")
    neighbours = [other for other, paths in scopes.items() if other != item and isinstance(paths, list) and rel in paths]
    if neighbours:
        listed = ", ".join(f"`{n}`" + (f" ({status[n]})" if status and isinstance(status.get(n), str) else "")
                           for n in sorted(neighbours)[:MAX_NEIGHBOURS])
        more = f" and {len(neighbours) - MAX_NEIGHBOURS} more" if len(neighbours) > MAX_NEIGHBOURS else ""
        text += f"The graph knows {rel} from work item(s) {listed}{more}, whose commits touched it before. "
    else:
        text += f"No tracked work item's commits have touched {rel} before. "
    text += ("If this change belongs to another work item, track it there; otherwise bring the work back to "
             f"`{item}`'s ground.")
    return text
