"""``yupana disk-flush`` (internal): write queued disk-impact samples to the store.

Started detached by the pre-bash hook (:func:`yupana.state.disk_samples.start_flush`) after it
queued closed samples; safe to run by hand (``yupana disk-flush --endpoint URL``). Under an
flock it drains ``queue-<endpoint hash>.jsonl`` batch by batch:

* **quipu** — ``POST /knot`` with the Turtle of each batch and ``Authorization: Bearer
  <token>`` (``$QUIPU_AUTH_TOKEN``, ``$QUIPU_AUTH_TOKEN_FILE`` or ``~/.config/quipu/token``);
* **SPARQL 1.1 stores** — ``INSERT DATA`` through the transport's ``update()`` (the
  configured ``update_endpoint`` and credentials; ``GRAPH <default_graph>`` when one is
  set). The transport is reused rather than SPARQLWrapper so that writes get the same
  deadlines, credentials handling (secrets scrubbed from errors) and error kinds as reads.

The write itself is the endpoint's (:meth:`yupana.endpoint.Endpoint.write_disk_observations`):
each observation is ``aegis:diskobs_<id>`` with exactly the four properties of
``aegis:CommandDiskImpactObservationShape``; a queued line that would not conform (a path, a
blank) is dropped and recorded here, never written.

Failures keep their reasons in the spool: a transport failure is ``disk_write_failed``
(the unwritten samples stay queued; further flushes back off for ``refresh_backoff_secs``);
a refused credential (401/403) is ``quipu_auth_failure`` per session, those sessions' writes
are disabled (marker files; the hook stops queueing for them) and their samples dropped.
"""

from __future__ import annotations

from typing import Any

import argparse
import os
import re
import time
from collections.abc import Callable

from yupana.state import atomic

from yupana.workers import detached

DEADLINE_SECS = 10.0
BATCH = 200
MAX_QUEUED = 10000

_SIGNATURE = re.compile(r"^[^\s|:/]+:[^\s|:/]*\|repo:[^\s|:/]+\|cwd:[^\s|:/]+$")
_FS = re.compile(r"^(root|tmpfs|mount:[0-9a-f]{8,64})$")
_ID = re.compile(r"^[0-9a-f]{8,64}$")


# the global flags (cli.GLOBAL_HELP) this command honours; any other is refused
GLOBAL_FLAGS: tuple[str, ...] = ("--config",)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--endpoint", required=True, help="the store whose queue to drain ([yupana.quipu] endpoint)")
    parser.add_argument("--root", default=None, help="project root whose configuration to resolve (default: cwd)")
    parser.add_argument("--marker", default=None, help="single-flight marker to remove when done")


def run(args: argparse.Namespace) -> int:
    try:
        flush(args.endpoint, args.root or os.getcwd(), getattr(args, "config", None))
    finally:
        if args.marker:
            detached.release(args.marker)  # the single-flight marker the hook created
    return 0


class Flushed:
    """What one flush did: samples written, dropped, and the failure (if any)."""

    def __init__(self) -> None:
        self.written = 0
        self.dropped = 0
        self.failure: str | None = None
        self.auth_failed = False


def flush(endpoint: str, root: str, override: str | None = None) -> Flushed:
    """Drain the endpoint's queue into the store; never raises."""
    from yupana.state import disk_samples, spool

    done = Flushed()
    queue = disk_samples.queue_path(endpoint)
    if not queue:
        return done
    os.makedirs(os.path.dirname(queue), exist_ok=True)
    lock = detached.try_lock(queue[: -len(".jsonl")] + ".lock")
    if lock is None:
        return done  # another flush is draining this queue
    with lock:
        try:
            _drain(endpoint, root, override, queue, done)
        except Exception as exc:  # noqa: BLE001 - a worker must not die silently
            done.failure = f"{type(exc).__name__}: {exc}"
            spool.record("disk_write_failed", {"reason": done.failure, "kept": True})
    return done


def _drain(endpoint: str, root: str, override: str | None, queue: str, done: Flushed) -> None:
    from yupana.state import disk_samples, spool

    draining = queue[: -len(".jsonl")] + ".draining.jsonl"
    lines = _gather(queue, draining, done)
    if not lines:
        return
    writer, backoff, why = _open_writer(endpoint, root, override)
    if writer is None:
        _fail(endpoint, done, why or "the store cannot be written", backoff, len(lines))
        return
    try:
        for _ in range(20):  # new samples may arrive while we write; bounded
            pending = [s for s in lines if not disk_samples.writes_disabled(s["session"])]
            done.dropped += len(lines) - len(pending)
            while pending:
                batch = pending[:BATCH]
                try:
                    writer.write(batch)
                except Exception as exc:  # noqa: BLE001 - EndpointError or a transport bug
                    from yupana.endpoint import AuthError

                    if isinstance(exc, AuthError):
                        _refused(exc, pending, done)
                        _unlink(draining)
                        return
                    _rewrite(draining, pending)
                    _fail(endpoint, done, _reason(exc), backoff, len(pending))
                    return
                done.written += len(batch)
                pending = pending[BATCH:]
            _unlink(draining)
            lines = _gather(queue, draining, done)
            if not lines:
                break
        if done.written:
            spool.record("disk_written", {"samples": done.written})
        _clear_backoff(endpoint)
    finally:
        writer.close()


def _gather(queue: str, draining: str, done: Flushed) -> list[dict[str, Any]]:
    """Move newly queued samples into the draining file (capped at MAX_QUEUED, newest kept)
    and return everything waiting, oldest first. A store that stays down cannot make the
    queue grow without bound: every flush attempt gathers and caps it."""
    from yupana.state import spool

    lines = _read(draining, done)
    claimed = f"{queue}.{os.getpid()}"
    try:
        os.rename(queue, claimed)
    except FileNotFoundError:
        claimed = ""
    if claimed:
        lines += _read(claimed, done)
    if len(lines) > MAX_QUEUED:
        over = len(lines) - MAX_QUEUED
        done.dropped += over
        lines = lines[over:]
        spool.record("disk_write_failed", {"reason": f"the disk queue overflowed {MAX_QUEUED} samples; the oldest "
                                           "were dropped", "samples": over, "kept": False})
    if lines:
        _rewrite(draining, lines)
    else:
        _unlink(draining)
    if claimed:
        _unlink(claimed)
    return lines


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


class Writer:
    """The store's write of one batch, and its close."""

    def __init__(self, write: Callable[[list[dict[str, object]]], None], close: Callable[[], None]) -> None:
        self.write = write
        self.close = close


def _open_writer(endpoint: str, root: str, override: str | None) -> tuple[Writer | None, int, str | None]:
    """(the writer, back-off seconds, why not)."""
    try:
        from yupana import config

        quipu = config.resolve(root, override)["config"]["quipu"]
    except Exception as exc:  # noqa: BLE001
        return None, 60, f"configuration error: {exc}"
    backoff = int(quipu.get("refresh_backoff_secs") or 60)
    from yupana.state.cache import normalize_endpoint

    if normalize_endpoint(str(quipu.get("endpoint") or "")) != normalize_endpoint(endpoint):  # as the hook saw it
        return None, backoff, "the configured endpoint is no longer the one these samples were queued for"
    try:
        from yupana.endpoint import WRITE, Deadline, open_endpoint

        ep = open_endpoint(quipu, deadline=Deadline(DEADLINE_SECS))
    except Exception as exc:  # noqa: BLE001
        return None, backoff, f"cannot open the store: {_reason(exc)}"
    if not ep.can(WRITE):
        ep.close()
        return None, backoff, f"the store ({ep.dialect}) has no write path"
    graph = quipu.get("default_graph")

    def write(batch: list[dict[str, object]]) -> None:
        ep.write_disk_observations(batch, graph, Deadline(DEADLINE_SECS))
    return Writer(write, ep.close), backoff, None


def _read(path: str, done: Flushed) -> list[dict[str, Any]]:
    """Valid queued samples of ``path`` ([] when absent); malformed ones are dropped and recorded."""
    import json

    from yupana.state import spool

    out: list[dict[str, Any]] = []
    bad = 0
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                try:
                    s = json.loads(line)
                except ValueError:
                    bad += 1
                    continue
                if _conforms(s):
                    out.append(s)
                else:
                    bad += 1
    except OSError:
        return []
    if bad:
        done.dropped += bad
        spool.record("disk_write_failed", {"reason": "queued samples that are malformed or do not fit "
                                           "CommandDiskImpactObservationShape were dropped",
                                           "samples": bad, "kept": False})
    return out


def _conforms(s: object) -> bool:
    return (isinstance(s, dict) and isinstance(s.get("signature"), str) and bool(_SIGNATURE.match(s["signature"]))
            and isinstance(s.get("fs"), str) and bool(_FS.match(s["fs"]))
            and type(s.get("delta")) is int and type(s.get("at")) is int and s["at"] >= 0
            and isinstance(s.get("id"), str) and bool(_ID.match(s["id"])) and isinstance(s.get("session"), str))


def _refused(exc: Exception, pending: list[dict[str, Any]], done: Flushed) -> None:
    from yupana.state import disk_samples, spool

    reason = _reason(exc)
    done.auth_failed = True
    done.failure = reason
    done.dropped += len(pending)
    for session in sorted({s["session"] for s in pending}):
        disk_samples.disable_writes(session, reason)
        spool.record("quipu_auth_failure", {"reason": reason, "session": session or None, "writes_disabled": True})
    spool.record("disk_write_failed", {"reason": reason, "samples": len(pending), "kept": False})


def _fail(endpoint: str, done: Flushed, reason: str, backoff: int, kept: int) -> None:
    import json

    from yupana.state import disk_samples, spool

    done.failure = reason
    spool.record("disk_write_failed", {"reason": reason, "samples": kept, "kept": True, "retry_in_secs": backoff})
    state = disk_samples.flush_state_path(endpoint)
    if state:
        from yupana.redact import redact_text

        atomic.write_quietly(state, json.dumps({"retry_after": int(time.time()) + backoff,
                                                "last_error": redact_text(reason)}).encode())


def _clear_backoff(endpoint: str) -> None:
    from yupana.state import disk_samples

    state = disk_samples.flush_state_path(endpoint)
    if state:
        try:
            os.unlink(state)
        except OSError:
            pass


def _rewrite(path: str, samples: list[dict[str, Any]]) -> None:
    import json

    atomic.write(path, "".join(json.dumps(s) + "\n" for s in samples).encode("utf-8"))


def _reason(exc: Exception) -> str:
    from yupana.endpoint import EndpointError

    if isinstance(exc, EndpointError):
        return f"{exc.kind}: {exc.message or exc}"
    return f"{type(exc).__name__}: {exc}"
