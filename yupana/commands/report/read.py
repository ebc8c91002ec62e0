"""The spools ``yupana report`` reads: one or many hosts' ``metrics.jsonl``, as a log shipper
collects them. Cold path.

A source is a file or a directory. A file is read with its rotated ``<file>.old`` slot before
it (the spool rotates into one ``.old``); a directory is searched, recursively, for
``*.jsonl`` and ``*.jsonl.old`` files (the landing spool, ``landing*.jsonl``, holds another
population and is left out, docs/records.md). The same file named twice is read once.
Each file is read line by line (a 64 MiB spool is never one string): a line that is not a JSON
object with a string ``kind`` and an integer ``ts`` is *malformed* — skipped, counted and its
first line numbers kept, so the report says what it could not read. Nothing is written.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import json
import os

MAX_LINE_NUMBERS = 5  # first malformed line numbers kept per file


class ReportError(Exception):
    """A source cannot be read at all (missing, not a regular file or directory, unreadable)."""


class Source:
    """One spool file: where it is, which host it stands for, and what reading it found."""

    __slots__ = ("path", "host", "records", "malformed", "malformed_lines", "outside")

    def __init__(self, path: str, host: str) -> None:
        self.path = path
        self.host = host
        self.records = 0  # well-formed records read (in the window or not)
        self.malformed = 0
        self.malformed_lines: list[int] = []
        self.outside = 0  # well-formed records older than the window

    def as_json(self) -> dict[str, Any]:
        return {"path": self.path, "host": self.host, "records": self.records, "outside_window": self.outside,
                "malformed": self.malformed, "malformed_lines": self.malformed_lines}


def local_spool() -> list[str]:
    """This host's spool (``$YUPANA_METRICS_PATH``, else under the state directory), when there is one."""
    from yupana.state import paths

    path = paths.metrics_spool()
    return [path] if path else []


def sources(given: list[str]) -> list[Source]:
    """The spool files of ``given`` (files or directories), each once, ``.old`` before its file.

    Raises :class:`ReportError` naming the first path that does not exist or is neither a
    regular file nor a directory."""
    found: list[Source] = []
    seen: set[str] = set()

    def add(path: str, host: str) -> None:
        real = os.path.realpath(path)
        if real not in seen and os.path.isfile(path):
            seen.add(real)
            found.append(Source(path, host))

    for raw in given:
        if os.path.isdir(raw):
            files = _order(list(_spool_files(raw)))
            if not files:
                raise ReportError(f"{raw}: no *.jsonl spool file in this directory (nor below it)")
            for path in files:  # the host: the directory it was collected into, below the one given
                rel = os.path.relpath(os.path.dirname(path), raw)
                add(path, rel if rel != "." else os.path.normpath(raw))
        elif os.path.isfile(raw):
            base = raw[:-4] if raw.endswith(".old") else raw
            for path in (base + ".old", base):
                add(path, base)
        elif os.path.exists(raw):
            raise ReportError(f"{raw}: not a regular file or a directory")
        else:
            raise ReportError(f"{raw}: no such file or directory")
    return found


def _spool_files(top: str) -> Iterator[str]:
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames.sort()
        for name in filenames:
            if name.startswith("landing"):
                continue
            if name.endswith((".jsonl", ".jsonl.old")):
                yield os.path.join(dirpath, name)


def _order(paths: list[str]) -> list[str]:
    """``.old`` before its file (sorted() puts ``x.jsonl`` before ``x.jsonl.old``)."""
    return sorted(paths, key=lambda p: (p[:-4] if p.endswith(".old") else p, not p.endswith(".old")))


def records(source: Source, since: int | None) -> Iterator[dict[str, Any]]:
    """The well-formed records of ``source`` with ``ts >= since`` (all, when None), in file
    order; counts on ``source`` what was malformed and what fell outside the window."""
    try:
        fh = open(source.path, "rb")
    except OSError as exc:
        raise ReportError(f"{source.path}: {exc.strerror or exc}") from exc
    with fh:
        for number, raw in enumerate(fh, 1):
            if not raw.strip():
                continue
            rec = _parse(raw)
            if rec is None:
                source.malformed += 1
                if len(source.malformed_lines) < MAX_LINE_NUMBERS:
                    source.malformed_lines.append(number)
                continue
            source.records += 1
            if since is not None and rec["ts"] < since:
                source.outside += 1
                continue
            yield rec


def _parse(raw: bytes) -> dict[str, Any] | None:
    try:
        rec = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(rec, dict) or not isinstance(rec.get("kind"), str):
        return None
    ts = rec.get("ts")
    if isinstance(ts, bool) or not isinstance(ts, int):
        return None
    return rec
