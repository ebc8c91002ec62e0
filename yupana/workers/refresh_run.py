"""The projection steps of one refresh: project with the memo, gate, write, memo. Cold path.

:mod:`yupana.workers.refresher` runs them under the lock and records the outcome; this
module holds what happens in between, all under the refresh's one deadline:

1. :func:`project_and_gate` loads the memo of the last success (or of the last attempt
   the deadline cut) when it matches this refresh (:mod:`yupana.projection.memo`),
   projects — text rules incrementally (:mod:`yupana.projection.text_plane`), read, decoded
   and gated a chunk at a time (:mod:`yupana.projection.text_chunks`) — and runs the SHACL
   gate in chunks (:mod:`yupana.projection.gate_chunks`) over the rest with the kept rules'
   results, or takes the last results when the triples to validate are those the last
   refresh validated; then it lets the triples go, before the write needs the memory. A
   deadline cut anywhere in it leaves every rule finished in the memo (:func:`_cut_early`,
   :func:`_cut`);
2. :func:`save` writes the cache through ``cache.save_detailed``, with its compile and write
   timings when it takes them;
3. :func:`save_memo` leaves this refresh's memo for the next.

:class:`Run` collects what a refresh reports: the phases (server, transfer, decode,
compile, gate, write — None when not measured), what was kept, warnings, the gate report.
"""

from __future__ import annotations

from typing import Any

import gc
from collections.abc import Callable
from dataclasses import dataclass, field

from yupana.projection.gate_chunks import GateCut
from yupana.state import cache

#: Up to this many triples to validate are digested for the memo whatever the last refresh
#: validated (more only when the count matches the last): the steady state of a large
#: catalogue is a few thousand — policies, selectors, changed rules (~0.3 s for 450 000).
GATE_DIGEST_TRIPLES = 50_000



class Refused(Exception):
    """A refresh refused for a named reason (``kind``), with the gate report when it has one."""

    def __init__(self, kind: str, message: str, report: object | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.report = report


@dataclass
class Run:
    """What one refresh's projection steps found, filled as they go (see the module doc)."""

    deadline: Any
    projection: Any = None
    gate: Any = None
    phases: dict[str, float | None] = field(default_factory=dict)
    incremental: dict[str, Any] | None = None
    warnings: list[str] = field(default_factory=list)
    #: The memo key of this refresh and ``(count, digest)`` of the triples the gate validated.
    memo_key: dict[str, Any] | None = None
    validated: tuple[int, str] | None = None
    #: How far the text rules got (:class:`yupana.projection.text_chunks.Progress`), or None.
    progress: Any = None
    #: Seconds the last successful refresh spent deriving the hot twin and writing (refresh-state.json).
    last_write_secs: Any = None


#: Without a prior write to go by, the time a write is expected to take per text rule (the
#: hot twin's derivation and the JSON: ~3–5 s for 50 000 rules on a loaded 2-core machine).
WRITE_SECS_PER_RULE = 100e-6


def write_short(run: Run, body: dict[str, Any]) -> str:
    """Why the time left cannot hold the write ("" when it can, or when waiting would not help).

    The write is not cut once it starts (all would be lost), so a refresh leaves it the time
    the last write took (or :data:`WRITE_SECS_PER_RULE` a text rule); when less is left and
    this attempt gated rules of its own, it stops here: everything is in the memo, and the next
    attempt has only the write left to do. An attempt that gated none would gain nothing by
    stopping (the next would be the same): it writes."""
    progress = run.progress
    if progress is None or not progress.gated or run.deadline.expired():
        return ""
    last = run.last_write_secs
    if isinstance(last, (int, float)) and not isinstance(last, bool) and last >= 0:
        need, why = float(last), f"writing the cache took {float(last):.1f}s last time"
    else:
        rules = len(body.get("text_rules") or ())
        need = rules * WRITE_SECS_PER_RULE
        why = f"a write of {rules} text rules is expected to take {need:.1f}s"
    left = run.deadline.remaining()
    if left >= need:
        return ""
    return f"leaves {max(0.0, left):.1f}s before writing the cache, and {why}"


def deadline_for(quipu: dict[str, Any]) -> Any:
    """The one deadline of a refresh: ``refresh_deadline_secs`` from now."""
    from yupana.endpoint.base import Deadline

    return Deadline(float(quipu.get("refresh_deadline_secs") or 20.0))


def project_and_gate(run: Run, quipu: dict[str, Any], key: str, path: str, say: Callable[[str], None],
                     env: dict[str, Any] | None, shapes_dir: str | None) -> None:
    """Step 1 (see the module doc): fills ``run``; :class:`Refused` when the gate cannot run
    or the projection does not conform (the deadline and the store raise their own errors)."""
    from yupana.endpoint import open_endpoint
    from yupana.endpoint.base import DeadlineError
    from yupana.projection import gate, gate_chunks, memo, text_chunks
    from yupana.projection.refresh import project
    from yupana.redact import redact_url

    try:
        shapes = gate.shapes_digest(shapes_dir)
    except gate.GateError as exc:
        raise Refused("gate", f"the SHACL gate could not run: {exc}") from None
    say(f"opening {redact_url(quipu.get('endpoint') or '') or 'the bundled example catalogue'}")
    deadline = run.deadline
    endpoint = open_endpoint(quipu, allow_bundled=True, deadline=deadline)
    progress = run.progress = text_chunks.Progress(deadline=deadline, shapes_dir=shapes_dir)
    try:
        memo_key = memo.key_for(key, endpoint.dialect, quipu.get("default_graph"), shapes)
        prior, why_not = memo.load(memo.path_for(path), memo_key)
        say(f"projecting from {redact_url(endpoint.identity)} ({endpoint.dialect})")
        try:
            proj = project(endpoint, quipu, deadline, env=env, memo=prior, progress=progress)
        except DeadlineError as exc:
            raise _cut_early(run, path, exc, memo_key, prior) from None
        except gate.GateError as exc:
            raise Refused("gate", f"the SHACL gate could not run: {exc}") from None
    finally:
        endpoint.close()
    run.projection, run.memo_key = proj, memo_key
    progress.cut_at = "validating with the SHACL gate"
    run.phases.update(proj.phases)
    run.warnings.extend(proj.warnings)
    text = proj.text
    from_memo = len(text.kept) - len(text.gated)
    run.incremental = {"rules_kept": from_memo, "rules_read": len(text.read) + len(text.gated),
                       "full_reason": (why_not or text.full_reason or None) if not from_memo else None}
    if prior is not None and prior.discarded:
        run.incremental["memo_discarded"] = prior.discarded
        run.warnings.append(f"{prior.discarded} entr{'y' if prior.discarded == 1 else 'ies'} of projection.memo "
                            "failed their digest (edited or damaged) and were discarded: read from the store again")
    kept = [r for rule in text.kept.values() for r in gate_chunks.kept_results(rule[4])]
    same, validated = None, None
    last = prior.gate if prior is not None else None
    count = gate_chunks.count_triples(proj.subjects)
    if (last is not None and last[0] == count) or count <= GATE_DIGEST_TRIPLES:
        validated = (count, gate_chunks.triples_digest(proj.subjects))
        if last is not None and validated[1] == last[1]:
            same = gate_chunks.kept_results(last[2])
    say(f"validating {count} triples against the SHACL shapes" if same is None
        else f"the {count} triples to validate are those the last refresh validated")
    try:
        report = gate_chunks.validate(proj.subjects, shapes_dir, kept=kept, kept_subjects=from_memo,
                                      deadline=deadline, same=same)
    except gate.GateError as exc:
        raise Refused("gate", f"the SHACL gate could not run: {exc}") from None
    except gate_chunks.GateCut as cut:
        raise _cut(run, path, cut, kept) from None
    report.triples += progress.triples  # the text rules' chunks validated as they were read
    report.chunks += progress.chunks
    run.phases["gate"] = report.duration_s + progress.gate_s
    progress.cut_at = "writing the cache"
    run.gate, run.validated = report, validated
    proj.subjects = {}  # what is left to do needs none of the triples read: let them go before the write
    text.release()
    gc.collect()  # the gate's and the reads' garbage, before the write needs the room
    _trim()
    if not report.conforms:
        raise Refused("shapes", f"the projection does not conform to the SHACL shapes, cache not written — "
                                f"{report.summary()}\n{report.text}", report)


def _cut_early(run: Run, path: str, exc: Exception, key: dict[str, Any], prior: Any) -> Exception:
    """The deadline cut the projection (reading, decoding or gating the text rules, or a
    later plane): keep in the memo every rule decoded and validated so far
    (:func:`yupana.projection.text_chunks.cut_memo`), so the next attempt reads only the rest."""
    from yupana.endpoint.base import DeadlineError
    from yupana.projection import memo, text_chunks

    progress = run.progress
    if not progress.gated:  # nothing new to keep: the memo stays as it was
        progress.kept_in_memo = len(prior.rules) if prior is not None else 0
        return exc
    found = text_chunks.cut_memo(key, progress, prior, progress.atoms)
    if found is None or not found.rules:
        progress.kept_in_memo = 0
        return exc
    error = memo.save(memo.path_for(path), found)
    if error:
        run.warnings.append(error)
        progress.kept_in_memo = 0
        return exc
    progress.kept_in_memo = len(found.rules)
    return DeadlineError(f"{getattr(exc, 'message', exc)} ({progress.line()}); the {len(found.rules)} text rules "
                         "decoded and validated so far are kept for the next refresh, which goes on from there")


def _cut(run: Run, path: str, cut: GateCut, kept: list[Any]) -> Exception:
    """The deadline cut the gate: keep in the memo the rules whose chunks ran (decoded and
    validated: final), so that the next refresh reads and validates only the rest."""
    from yupana.endpoint.base import DeadlineError
    from yupana.projection import memo, text_plane

    proj = run.projection
    if run.memo_key is None:
        return cut
    done = [entry for entry in proj.cache["text_rules"] if entry["iri"] in cut.validated or entry["iri"] in proj.text.kept]
    found = text_plane.memo_of(run.memo_key, proj.text, done, proj.selectors, proj.edges, [*cut.results, *kept])
    if found is None or not done:
        return cut
    error = memo.save(memo.path_for(path), found)
    if error:
        run.warnings.append(error)
        return cut
    if run.progress is not None:
        run.progress.kept_in_memo = len(found.rules)
    return DeadlineError(f"{cut.message}; the {len(found.rules)} text rules decoded and validated so far are kept "
                         "for the next refresh, which goes on from there")


def _trim() -> None:
    """Hand the memory freed so far back to the system (glibc keeps freed heap otherwise), so
    that the write's large buffers do not come on top of it. Best effort, Linux only."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def save(run: Run, body: dict[str, Any], path: str) -> tuple[str | None, str | None]:
    """Step 2: ``cache.save_detailed(body, path)``, with its compile (the hot twin's derivation)
    and write timings as the run's phases."""
    timings: dict[str, float] = {}
    found = cache.save_detailed(body, path, timings=timings)
    run.phases.update(compile=timings.get("compile_s"), write=timings.get("write_s"))
    return found


def save_memo(run: Run, path: str) -> None:
    """Step 3: leave this refresh's memo beside the cache. The cache is written by now, so
    nothing here fails the refresh: a memo that cannot be made or written is a warning
    (the next refresh then keeps less)."""
    try:
        _save_memo(run, path)
    except Exception as exc:  # noqa: BLE001 - the refresh succeeded; the memo is only a shortcut
        run.warnings.append(f"the memo of this refresh was not written ({type(exc).__name__}: {exc}); "
                            "the next refresh reads every text rule")


def _save_memo(run: Run, path: str) -> None:
    from yupana.projection import gate_chunks, memo, text_plane

    proj, memo_key, validated = run.projection, run.memo_key, run.validated
    if proj is None or memo_key is None:
        return
    results = list(getattr(run.gate, "results", None) or [])
    found = text_plane.memo_of(memo_key, proj.text, proj.cache["text_rules"], proj.selectors, proj.edges, results)
    if found is None:
        memo.discard(memo.path_for(path))
        return
    if validated is not None:  # the results of the triples validated (the kept rules' are theirs)
        fresh = tuple(gate_chunks.as_row(r) for r in results if r.focus not in proj.text.kept)
        found.gate = (validated[0], validated[1], fresh)
    error = memo.save(memo.path_for(path), found)
    if error:
        run.warnings.append(error)
    elif run.progress is not None:
        run.progress.kept_in_memo = len(found.rules)
