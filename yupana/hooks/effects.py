"""Everything a hook does to the world, behind one object. Hot path, standard library only.

A hook decides from its inputs (the payload, the configuration snapshot, the servable
cache, the state files it reads); what it *leaves behind* goes through the
:class:`Effects` its runtime (:mod:`yupana.hooks.runtime`) was given:

* spool records (:meth:`Effects.record`), once-per-session markers (:meth:`Effects.first_time`),
  the opt-in input capture (:meth:`Effects.capture`);
* state writes: throttle back-offs, the session's open disk sample, the disk queue, the
  denial corpus (:meth:`Effects.throttle`, :meth:`Effects.disk_sample`,
  :meth:`Effects.disk_enqueue`, :meth:`Effects.denial`);
* detached workers and their single-flight claims — refresh, exposure lookup, disk flush,
  the index builder and the after-edit watcher — through :attr:`Effects.workers`
  (a :class:`Workers`: the only part handed below the hooks, to the codegraph and the
  exposure lookup; it carries no trace and no records);
* the dry run's trace: :meth:`Effects.stage` (a stage ran, was skipped or could not run) and
  :meth:`Effects.scratch` (a place an evaluator may note what it looked at).

:class:`LiveEffects` makes them. :class:`RehearsalEffects` (``yupana explain``) makes none:
records are collected, markers only looked at, workers predicted — each answer the one a
live hook would get, so the decision is the same (``tests/hooks/test_effects.py``). The
evaluators (:mod:`yupana.evaluate`) never receive an Effects: nothing they decide can
depend on whether the run is rehearsed.
"""

from __future__ import annotations

import os

from yupana.state import spool
from yupana.hooks import protocol

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from typing import Any, Protocol

    from yupana.codegraph.index import CrateIndex
    from yupana.edit.model import FileEdit
    from yupana.state.disk_samples import Fs
    from yupana.state.hot_view import HotCache

    class Tracer(Protocol):
        """Who hears a rehearsal's stage notes (``yupana explain``'s trace)."""

        def stage(self, owner: Any, stage: str, state: str, why: str, edit: FileEdit | None,
                  detail: dict[str, Any]) -> None: ...


class Workers:
    """Detached work a hook starts but never waits for (live: started)."""

    __slots__ = ()

    def refresh(self, cache_path: str, root: str, override: str | None, *, twin_only: bool = False) -> bool:
        """One ``yupana refresh-worker`` unless a refresh holds the lock; True when started
        (``twin_only``: one that only derives the hot twin)."""
        from yupana.hooks import governed

        return governed.start_refresh(cache_path, root, override, twin_only=twin_only)

    def discard_twin(self, cache_path: str, served: HotCache) -> bool:
        """Remove the damaged hot twin ``served`` came from (the next hook derives it again);
        True when the catalogue is too large for a hook to derive it (a worker must)."""
        from yupana.state import twin_check

        return twin_check.discard_twin(cache_path, served)

    def exposure_lookup(self, endpoint: str, repo: str, root: str, override: str | None) -> bool:
        """One ``yupana exposure-worker`` for ``repo`` unless one is pending; True when started."""
        from yupana import exposure

        return exposure.start_lookup(endpoint, repo, root=root, override=override)

    def disk_flush(self, endpoint: str, root: str, now: int, override: str | None) -> None:
        """One detached ``yupana disk-flush`` unless one is pending."""
        from yupana.state import disk_samples

        disk_samples.start_flush(endpoint, root, now, override)

    def watch_edit(self, ci: CrateIndex, path: str) -> bool:
        """The after-edit refresher of ``path``'s crate index."""
        from yupana.codegraph import background

        return background.watch_edit(ci, path)

    def index_build(self, ci: CrateIndex) -> bool:
        """One background build of ``ci``'s crate (False when backed off or busy)."""
        from yupana.codegraph import background

        return background.spawn_builder(ci)


class RehearsedWorkers(Workers):
    """Nothing is started or claimed; each answers whether a live hook would start it now."""

    __slots__ = ()

    def refresh(self, cache_path: str, root: str, override: str | None, *, twin_only: bool = False) -> bool:
        from yupana.hooks import governed

        return governed.refresh_lock_free(cache_path)

    def discard_twin(self, cache_path: str, served: HotCache) -> bool:
        from yupana.state import twin_check

        return twin_check.discard_twin(cache_path, served, remove=False)

    def exposure_lookup(self, endpoint: str, repo: str, root: str, override: str | None) -> bool:
        from yupana import exposure

        return exposure.lookup_claimable(endpoint, repo)

    def disk_flush(self, endpoint: str, root: str, now: int, override: str | None) -> None:
        return None

    def watch_edit(self, ci: CrateIndex, path: str) -> bool:
        return False

    def index_build(self, ci: CrateIndex) -> bool:
        from yupana.codegraph import background

        return not background.builder_backed_off(ci)


class Effects:
    """The live effects: what a real hook does (see the module docstring)."""

    rehearsal = False

    def __init__(self) -> None:
        self.workers: Workers = Workers()

    # ── the dry run's trace: nothing, live ─────────────────────────────────────────
    def stage(self, owner: Any, stage: str, state: str, why: str, edit: FileEdit | None,
              detail: dict[str, Any]) -> None:
        """A stage ran, was skipped or could not run (UNKNOWN), and why."""

    def scratch(self, seed: dict[str, Any]) -> dict[str, Any] | None:
        """A dict an evaluator may fill with what it looked at (None live: nothing is noted)."""
        return None

    # ── records and markers ────────────────────────────────────────────────────────
    def record(self, kind: str, fields: dict[str, Any] | None = None, *, item: str | None = None) -> None:
        spool.record(kind, fields, item=item)

    def first_time(self, session_id: str | None, kind: str) -> bool:
        """True the first time ``kind`` is raised in this session (:func:`protocol.first_time`)."""
        return protocol.first_time(session_id, kind)

    def capture(self, rec: dict[str, Any]) -> None:
        """Keep one evaluated input (``[yupana.metrics] record_inputs``, :mod:`yupana.state.inputs`)."""
        from yupana.state import inputs

        if not inputs.append(rec):
            protocol.stderr(f"yupana: the input capture was not written: {inputs.last_error()}")

    # ── state writes ───────────────────────────────────────────────────────────────
    def throttle(self, constraint_id: str, scope: str, until: int, n: int, now: int) -> None:
        from yupana.state import throttles

        throttles.record(constraint_id, scope, until, n, now=now)

    def disk_sample(self, session: str, signature: str, fss: list[Fs],
                    now: int) -> tuple[list[dict[str, Any]], str | None]:
        """Close the session's open sample and open this command's: ``(closed, note)``."""
        from yupana.state import disk_samples

        return disk_samples.rotate(session, signature, fss, now)

    def disk_enqueue(self, endpoint: str, session: str, closed: list[dict[str, Any]]) -> str | None:
        """Queue closed samples for the store; the reason they were not, or None."""
        from yupana.state import disk_samples

        return disk_samples.enqueue(endpoint, session, closed)

    def denial(self, corpus: str, entry: dict[str, Any]) -> None:
        """Add a denied edit to the recurrence corpus."""
        from yupana.state import denials

        denials.append(corpus, entry)

    def controls_seen(self, target: str, files: dict[str, dict[str, Any]]) -> None:
        """Keep the control files' fingerprints this hook saw (:mod:`yupana.hooks.control_watch`)."""
        from yupana.state import controls_seen

        error = controls_seen.write(target, files)
        if error:
            protocol.stderr(f"yupana: tamper evidence: {error}")


LiveEffects = Effects
LIVE = Effects()


class RehearsalEffects(Effects):
    """``yupana explain``'s dry run: records collected in :attr:`records`, notices in
    :attr:`notices` (``{"kind", "marker", "shown"}``), stage notes told to ``tracer``."""

    rehearsal = True

    def __init__(self, tracer: Tracer | None = None) -> None:
        self.workers = RehearsedWorkers()
        self.tracer = tracer
        self.records: list[dict[str, Any]] = []
        self.notices: list[dict[str, Any]] = []
        self.captured: list[dict[str, Any]] = []

    def stage(self, owner: Any, stage: str, state: str, why: str, edit: FileEdit | None,
              detail: dict[str, Any]) -> None:
        if self.tracer is not None:
            self.tracer.stage(owner, stage, state, why, edit, detail)

    def scratch(self, seed: dict[str, Any]) -> dict[str, Any] | None:
        return seed

    def record(self, kind: str, fields: dict[str, Any] | None = None, *, item: str | None = None) -> None:
        self.records.append(spool.entry(kind, fields, item=item))

    def capture(self, rec: dict[str, Any]) -> None:
        self.captured.append(rec)  # what a live hook would keep; nothing is written

    def first_time(self, session_id: str | None, kind: str) -> bool:
        marker = protocol.marker_path(session_id, kind)
        shown = marker is None or not os.path.exists(marker)
        self.notices.append({"kind": kind, "marker": marker, "shown": shown})
        return shown

    def throttle(self, constraint_id: str, scope: str, until: int, n: int, now: int) -> None:
        return None  # the dry run reports the back-off from the throttle record

    def disk_sample(self, session: str, signature: str, fss: list[Fs],
                    now: int) -> tuple[list[dict[str, Any]], str | None]:
        from yupana.state import disk_samples

        return disk_samples.preview(session, fss, now)  # what would close, read only

    def disk_enqueue(self, endpoint: str, session: str, closed: list[dict[str, Any]]) -> str | None:
        return None  # nothing is queued; the report says what would be

    def denial(self, corpus: str, entry: dict[str, Any]) -> None:
        return None

    def controls_seen(self, target: str, files: dict[str, dict[str, Any]]) -> None:
        return None  # a rehearsal leaves the next live hook the same baseline
