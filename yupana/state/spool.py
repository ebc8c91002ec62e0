"""The metrics spool: one JSON record per line in metrics.jsonl, beside the projection cache.

Every record carries ``kind`` and ``ts`` (unix seconds) and, when known, ``agent``
($SHANTY_AGENT), ``tenant`` ($BOBBIN_ROLE) and ``item`` (the tracked work item); absent
values are omitted, never blank. Appends use O_APPEND so concurrent hooks interleave
whole lines. Past 64 MiB the file is renamed to ``metrics.jsonl.old`` (one slot).

Writing is fail-silent by design: a full disk or a read-only state directory must never
change a guard outcome. The failure is still counted: :func:`last_error` tells callers
(``yupana status``) that records are being lost.

A hook writes through its effects (:mod:`yupana.hooks.effects`): live, :func:`record`;
rehearsed (``yupana explain``), :func:`entry` alone, kept in a list so the dry run can
report what a hook *would* write.
"""

from __future__ import annotations

import os
import time

from yupana import fastjson, redact

from yupana.state import paths, statefile

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from typing import Any

ROTATE_BYTES = 64 * 1024 * 1024

_last_error: str | None = None


def last_error() -> str | None:
    """The reason the most recent append in this process failed, or None."""
    return _last_error


def entry(kind: str, fields: dict[str, Any] | None = None, *, item: str | None = None) -> dict[str, Any]:
    """The record of ``kind`` as it would be written (``kind``, ``ts``, attribution, the fields
    that are not None)."""
    rec: dict[str, Any] = {"kind": kind, "ts": int(time.time())}
    agent = os.environ.get("SHANTY_AGENT")
    if agent:
        rec["agent"] = agent
    tenant = os.environ.get("BOBBIN_ROLE")
    if tenant:
        rec["tenant"] = tenant
    if item:
        rec["item"] = item
    if fields:
        for key, value in fields.items():
            if value is not None:
                rec[key] = value
    return rec


def record(kind: str, fields: dict[str, Any] | None = None, *, item: str | None = None,
           path: str | None = None) -> bool:
    """Append one record of ``kind``; return False (never raise) when it could not be written."""
    global _last_error
    rec = entry(kind, fields, item=item)
    try:
        target = path or paths.metrics_spool()
        if not target:
            _last_error = "no metrics path: set YUPANA_METRICS_PATH, XDG_STATE_HOME or HOME"
            return False
        # A lone surrogate (from a "\ud800" escape in a payload) cannot be UTF-8; inside a JSON
        # string, backslashreplace turns it back into the same JSON escape.
        line = (redact.redact_text(fastjson.dumps(rec)) + "\n").encode("utf-8", "backslashreplace")
        return append(target, line)
    except Exception as exc:  # noqa: BLE001 - the spool must never raise into a hook
        _last_error = f"{type(exc).__name__}: {exc}"
        return False


def append(target: str, line: bytes) -> bool:
    """Append one whole line (bytes, newline included) to the spool file ``target`` as
    :func:`record` does — O_APPEND, the 64 MiB rotation, a regular file only — for a caller
    whose line must be written byte for byte (a signed landing certification); False, never
    an exception, when it could not be (:func:`last_error` says why)."""
    global _last_error
    try:
        try:
            if os.stat(target).st_size > ROTATE_BYTES:
                os.replace(target, target + ".old")
        except FileNotFoundError:
            parent = os.path.dirname(target)
            if parent:
                os.makedirs(parent, exist_ok=True)
        fd = statefile.open_append(target)  # never a FIFO that blocks, never /dev/null that swallows
        try:
            written = os.write(fd, line)
        finally:
            os.close(fd)
        if written != len(line):
            _last_error = f"short write to {target} ({written} of {len(line)} bytes)"
            return False
        return True
    except OSError as exc:
        _last_error = f"{target}: {exc.strerror or exc}"
        return False


def read_tail(path: str | None = None, max_bytes: int = 4 * 1024 * 1024) -> list[dict[str, Any]]:
    """The last records of the spool (whole lines within the final ``max_bytes``), oldest first.

    Unparseable lines (a torn tail after a crash, a foreign writer) are skipped.
    """
    target = path or paths.metrics_spool()
    if not target:
        return []
    try:
        size = os.stat(target).st_size
        data = statefile.read(target, max_bytes, tail=max_bytes)  # a regular file, its last max_bytes
    except OSError:
        return []
    start = max(0, size - max_bytes)
    if start:
        cut = data.find(b"\n")
        data = data[cut + 1 :] if cut >= 0 else b""
    out: list[dict[str, Any]] = []
    for raw in data.splitlines():
        try:
            rec = fastjson.loads(raw)
        except (ValueError, UnicodeDecodeError):
            continue
        if isinstance(rec, dict):
            out.append(rec)
    return out
