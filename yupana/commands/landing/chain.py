"""The landing spool as a chain: each certification names its place and the one before it.

Every ``landing-*`` record the hook writes carries ``seq`` (1, 2, 3, … along the spool) and
``prev`` (``sha256:<hex>`` of the previous landing record's spool line, :func:`digest`; null
for the first). Both are fields like any other, so the signature covers them: a record cannot
be moved, and the chain cannot be mended around a deleted refusal or a copied certification
without the key. :func:`append` reads the last record and appends the next one under an
exclusive lock on the spool file, so concurrent pushes never take the same ``seq``.

:func:`check` walks a spool's records in order and names every break: a record missing
(``seq`` jumps), one repeated (``seq`` again), one edited or replaced (``prev`` differs), or a
record without ``seq`` after the chain began. A spool's first record links to the last one of
its rotated ``.old`` file when that is there. A removed *newest* record leaves no gap; the
newest ``seq`` seen elsewhere (``yupana status``, a CI log) is what shows it.
"""

from __future__ import annotations

from typing import Any

import fcntl
import hashlib
import os


def digest(record: dict[str, Any]) -> str:
    """``sha256:<hex>`` of the record's spool line (its canonical JSON, without the newline)."""
    from yupana.commands.landing import certificate

    return "sha256:" + hashlib.sha256(certificate.line(record).rstrip(b"\n")).hexdigest()


def link(before: dict[str, Any] | None) -> tuple[int, str | None]:
    """(seq, prev) of the record that follows ``before`` (None: the spool holds none)."""
    if before is None:
        return 1, None
    seq = before.get("seq")
    return (seq + 1 if isinstance(seq, int) and not isinstance(seq, bool) else 1), digest(before)


def append(record: dict[str, Any], seal: Any, target: str) -> tuple[dict[str, Any], str | None]:
    """Chain ``record`` to the spool ``target``, seal it (``seal(record) -> sealed``) and append
    it, all under the spool's lock; (the record as sealed, None or why it was not written)."""
    from yupana.commands.landing import certificate
    from yupana.state import spool, statefile

    try:
        os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
        while True:
            fd = _locked(target, statefile.open_append)
            if os.fstat(fd).st_size <= spool.ROTATE_BYTES:
                break
            try:  # rotated under the lock: a writer waiting on the old file reopens the new one
                os.replace(target, target + ".old")
            finally:
                os.close(fd)
    except OSError as exc:
        sealed = seal(dict(record, seq=None, prev=None))
        return sealed, f"{target}: {exc.strerror or exc}"
    try:
        seq, prev = link(last(target))
        sealed = seal(dict(record, seq=seq, prev=prev))
        line = certificate.line(sealed)
        written = os.write(fd, line)
        if written != len(line):
            return sealed, f"short write to {target} ({written} of {len(line)} bytes)"
        return sealed, None
    except OSError as exc:
        return seal(dict(record, seq=None, prev=None)), f"{target}: {exc.strerror or exc}"
    finally:
        os.close(fd)  # releases the lock


def _locked(target: str, opener: Any) -> int:
    """An append descriptor of ``target`` holding its exclusive lock (the file ``target`` names
    now: reopened when another writer rotated it while we waited)."""
    while True:
        fd = int(opener(target))
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            same = os.fstat(fd).st_ino == os.stat(target).st_ino
        except FileNotFoundError:
            same = False
        if same:
            return fd
        os.close(fd)


def last(target: str) -> dict[str, Any] | None:
    """The newest landing record of the spool ``target``, else of its rotated ``.old``."""
    from yupana.commands.landing import certificate

    for path in (target, target + ".old"):
        records = certificate.read(path, max_bytes=1024 * 1024)
        if records:
            return records[-1]
    return None


def check(records: list[dict[str, Any]], before: dict[str, Any] | None) -> list[str]:
    """Every break in the chain of ``records`` (a spool's landing records, oldest first);
    ``before`` is the record preceding the first (the rotated file's last), if any."""
    problems: list[str] = []
    prior = before
    started = False
    for record in records:
        seq = record.get("seq")
        if not isinstance(seq, int) or isinstance(seq, bool):
            if started:
                problems.append(f"a record without a sequence number (ts {record.get('ts')}) follows seq "
                                f"{prior.get('seq') if prior else '?'}: it was put there, not written by the hook")
            prior = record
            continue
        want_seq, want_prev = link(prior)
        was = prior.get("seq") if prior else None
        if not started and prior is None and seq > 1:
            problems.append(f"the spool begins at seq {seq}: the {seq - 1} record(s) before it are missing")
        elif seq == want_seq and record.get("prev") != want_prev:
            problems.append(f"seq {seq} does not follow the record before it (its prev digest differs): a record "
                            "was replaced, edited or removed there")
        elif seq != want_seq and isinstance(was, int):
            if seq == was:
                problems.append(f"seq {seq} appears again: a record was duplicated")
            elif seq > want_seq:
                problems.append(f"seq {was} is followed by seq {seq}: {seq - want_seq} record(s) missing (deleted)")
            else:
                problems.append(f"seq {was} is followed by seq {seq}: records were reordered or copied in")
        elif seq != want_seq:
            problems.append(f"seq {seq} follows a record without one: the records before it are missing")
        started = True
        prior = record
    return problems
