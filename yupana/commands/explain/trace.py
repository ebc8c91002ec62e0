"""The dry run behind ``yupana explain``: the real hook code, with its effects held back. Cold path.

A :class:`Trace` owns the rehearsal effects the hook runs with
(:class:`yupana.hooks.effects.RehearsalEffects`, :attr:`Trace.effects`): every stage calls
:meth:`Trace.stage` when it ran, was skipped or could not run, and the trace keeps, beside
each note, how far the findings and the outcome had got — so the report can say which
stage produced which finding and which stage made the decision, without a second
implementation of any of it. Through the same effects, spool records land in
``trace.records``, once-per-session notices create no marker (each is noted in
``trace.notices`` with whether a real hook would show it now), and no detached refresh,
exposure, disk-flush, index-build or watcher worker is started, no throttle back-off or
disk sample written: what would be is predicted instead.

:func:`rehearsal` adds what is the process's, not the hook's: everything the hook writes to
stderr is captured (file descriptor 2, so direct ``os.write(2, …)`` calls are caught too)
into ``trace.stderr``, and the environment a hook would see (``$BOBBIN_ROLE``) is set.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import contextlib
import os
import sys
import tempfile
import time
from collections.abc import Iterator

from yupana.hooks.effects import RehearsalEffects

if TYPE_CHECKING:
    from yupana.edit.model import FileEdit
    from yupana.hooks.runtime import HookRuntime


class Note:
    """One stage report: what the hook said, and where findings and outcome stood then."""

    __slots__ = ("stage", "state", "why", "file", "detail", "findings_at", "decision", "reasons_at",
                 "messages_at", "advisories_at", "context_at", "at")

    def __init__(self, stage: str, state: str, why: str, file: str | None, detail: dict[str, Any], owner: Any) -> None:
        self.stage = stage
        self.state = state
        self.why = why
        self.file = file
        self.detail = detail
        findings = getattr(owner, "findings", None)
        outcome = getattr(owner, "outcome", None)
        self.findings_at = len(findings) if isinstance(findings, list) else 0
        self.decision = outcome.decision if outcome is not None else None
        self.reasons_at = len(outcome.reasons) if outcome is not None else 0
        self.messages_at = len(outcome.messages) if outcome is not None else 0
        self.advisories_at = len(outcome.advisories) if outcome is not None else 0
        self.context_at = len(outcome.context) if outcome is not None else 0
        self.at = time.monotonic()


class Trace:
    """What a dry run collected: stage notes, would-be records, once-per-session notices, stderr."""

    def __init__(self) -> None:
        self.notes: list[Note] = []
        self.effects = RehearsalEffects(tracer=self)
        self.records: list[dict[str, Any]] = self.effects.records
        self.notices: list[dict[str, Any]] = self.effects.notices
        self.stderr = ""
        self.started = time.monotonic()
        self.finished = self.started

    def stage(self, owner: HookRuntime, stage: str, state: str, why: str, edit: FileEdit | None,
              detail: dict[str, Any]) -> None:
        """The hooks' stage notes (:meth:`yupana.hooks.runtime.HookRuntime.note`)."""
        file = getattr(edit, "rel", None) if edit is not None else None
        self.notes.append(Note(stage, state, why, file, detail, owner))

    def first(self, stage: str) -> Note | None:
        return next((n for n in self.notes if n.stage == stage), None)

    def records_of(self, kind: str) -> list[dict[str, Any]]:
        return [r for r in self.records if r.get("kind") == kind]


@contextlib.contextmanager
def rehearsal(trace: Trace, env: dict[str, str] | None = None) -> Iterator[Trace]:
    """Run the enclosed hook code dry (see the module docstring); ``env`` is set for its duration."""
    overrides = dict(env or {})
    saved_env = {k: os.environ.get(k) for k in overrides}
    os.environ.update(overrides)
    trace.started = time.monotonic()
    try:
        with _stderr_into(trace):
            yield trace
    finally:
        trace.finished = time.monotonic()
        for key, value in saved_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@contextlib.contextmanager
def _stderr_into(trace: Trace) -> Iterator[None]:
    """Everything written to file descriptor 2 meanwhile lands in ``trace.stderr``."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as spill:
        os.dup2(spill.fileno(), 2)
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            spill.seek(0)
            trace.stderr = spill.read().decode("utf-8", "replace")
