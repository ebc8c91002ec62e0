"""The dry run behind ``yupana explain``: the real hook code, with its effects held back. Cold path.

A :class:`Trace` is what the hooks' explain seam talks to (``Guard.trace`` /
``PreBash.trace`` / ``post_edit.answer(trace=…)``): every stage calls
:meth:`Trace.stage` when it ran, was skipped or could not run, and the trace keeps, beside
each note, how far the findings and the outcome had got — so the report can say which
stage produced which finding and which stage made the decision, without a second
implementation of any of it.

:func:`rehearsal` makes the run dry for the whole process, for as long as it lasts:

* spool records are captured into ``trace.records`` (:func:`yupana.state.spool.capture`);
* once-per-session notices create no marker: each is noted in ``trace.notices`` with
  whether a real hook would show it now (:func:`yupana.hooks.protocol.rehearse`);
* the codegraph starts neither its after-edit watcher nor a background index build
  (:data:`yupana.codegraph.background.DRY_RUN`; a build it would start is still said);
* everything the hook writes to stderr is captured (file descriptor 2, so direct
  ``os.write(2, …)`` calls are caught too) into ``trace.stderr``.

The hook objects themselves, seeing a trace, predict rather than make the rest: no detached
refresh, exposure or disk-flush worker, no throttle back-off, no disk sample.
"""

from __future__ import annotations

from typing import Any

import contextlib
import os
import sys
import tempfile
import time
from collections.abc import Iterator

from yupana.state import spool
from yupana.hooks import protocol


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
        self.records: list[dict[str, Any]] = []
        self.notices: list[dict[str, Any]] = []
        self.stderr = ""
        self.started = time.monotonic()
        self.finished = self.started

    def stage(self, owner: Any, stage: str, state: str, why: str, edit: Any, detail: dict[str, Any]) -> None:
        """The hooks' explain seam (see :meth:`yupana.hooks.guard_context.GuardContext.note`)."""
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
    background = _codegraph_background()
    was_dry = background.DRY_RUN if background is not None else False
    if background is not None:
        background.DRY_RUN = True
    previous_sink = spool.capture(trace.records)
    previous_notices = protocol.rehearse(trace.notices)
    trace.started = time.monotonic()
    try:
        with _stderr_into(trace):
            yield trace
    finally:
        trace.finished = time.monotonic()
        protocol.rehearse(previous_notices)
        spool.capture(previous_sink)
        if background is not None:
            background.DRY_RUN = was_dry
        for key, value in saved_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _codegraph_background() -> Any:
    try:
        from yupana.codegraph import background
    except ImportError:  # a build without the structural tier: nothing to hold back
        return None
    return background


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
