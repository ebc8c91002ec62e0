"""Disk-impact samples on this machine: filesystem identity, free-space snapshots, the queue.

Hot path (pre-bash, only for commands :mod:`yupana.evaluate.disk` recognises), standard
library only. What happens for a recognised command:

1. :func:`snapshot` — the filesystems involved: those holding the working directory,
   ``$HOME``, the temp directory and ``/`` (each once), with their free bytes
   (``statvfs``: ``f_bavail * f_frsize``, the space an unprivileged user can still use)
   and an opaque identity from ``/proc/self/mountinfo``: ``root`` (mounted at ``/``),
   ``tmpfs``, or ``mount:<hash>`` (sha256 of mount point and device number, 16 hex
   digits). The mount point and device never leave this module.
2. :func:`rotate` — the session's open sample (``<state>/disk/session-<id>.json``) is
   closed: for each of its filesystems ``delta = free_before - free_now`` (positive
   consumes, negative frees). The new command's snapshot becomes the open sample. Claiming
   the file by rename means two hooks of one session never close the same sample twice.
3. :func:`enqueue` — closed samples go to ``<state>/disk/queue-<endpoint hash>.jsonl``
   (signature, filesystem identity, delta, time, session; no paths); :func:`start_flush`
   starts one detached ``yupana disk-flush`` (single-flight marker; none while the flush is
   backing off) that writes them to the store. The hook never waits on the network.

A session whose write was refused for credentials carries ``noauth-<session>``: its samples
are no longer queued (reads — the advisory — go on).
"""

from __future__ import annotations

import os
import time

from yupana.state import atomic, paths, statefile

from yupana.workers import detached

from yupana import fastjson, redact

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from typing import Any

MAX_OPEN_SECS = 24 * 3600  # an open sample older than this measures too much else: dropped
PENDING_SECS = 60
MOUNTINFO = "/proc/self/mountinfo"


class Fs:
    """One filesystem involved in a command: identity (opaque), a local path on it, free bytes,
    and the roles it plays (working directory, home, temp, root)."""

    __slots__ = ("identity", "path", "free", "roles")

    def __init__(self, identity: str, path: str, free: int, roles: list[str]) -> None:
        self.identity = identity
        self.path = path
        self.free = free
        self.roles = roles

    def __repr__(self) -> str:
        return f"Fs({self.identity!r}, free={self.free}, roles={self.roles!r})"


# ── filesystems ───────────────────────────────────────────────────────────────────────


def read_mounts(path: str = MOUNTINFO) -> list[tuple[str, str, str]]:
    """(mount point, major:minor, fstype) for each line of mountinfo, in order ([] if unreadable)."""
    try:  # the hardened reader: a FIFO or device put in its place cannot hang the hook
        text = statefile.read(path, statefile.SMALL_LIMIT).decode("utf-8", "replace")
    except OSError:
        return []
    out: list[tuple[str, str, str]] = []
    for line in text.split("\n"):
        fields = line.split(" ")
        if len(fields) < 10:
            continue
        try:
            sep = fields.index("-", 6)
        except ValueError:
            continue
        out.append((_unescape(fields[4]), fields[2], fields[sep + 1]))
    return out


def _unescape(field: str) -> str:
    """mountinfo escapes space, tab, newline and backslash as ``\\ooo``."""
    if "\\" not in field:
        return field
    out: list[str] = []
    i = 0
    while i < len(field):
        if field[i] == "\\" and i + 4 <= len(field) and field[i + 1:i + 4].isdigit():
            out.append(chr(int(field[i + 1:i + 4], 8)))
            i += 4
        else:
            out.append(field[i])
            i += 1
    return "".join(out)


def identity(path: str, mounts: list[tuple[str, str, str]]) -> str:
    """``root``, ``tmpfs`` or ``mount:<hash>`` for the mount that holds ``path`` (resolved)."""
    best: tuple[str, str, str] | None = None
    for entry in mounts:
        mp = entry[0]
        if path == mp or mp == "/" or path.startswith(mp + "/"):
            if best is None or len(mp) >= len(best[0]):
                best = entry  # the longest mount point; the later of equals (it is on top)
    if best is None:
        try:
            return "mount:" + _digest(f"dev\0{os.stat(path).st_dev}")
        except OSError:
            return "mount:" + _digest("unknown\0" + path)
    mp, dev, fstype = best
    if mp == "/":
        return "root"
    if fstype == "tmpfs":
        return "tmpfs"
    return "mount:" + _digest(f"{mp}\0{dev}")


def _digest(text: str) -> str:
    try:
        from _sha256 import sha256  # builtin: cheaper than hashlib's OpenSSL load
    except ImportError:  # pragma: no cover
        from hashlib import sha256

    return str(sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16])


def free_bytes(path: str) -> int | None:
    """Bytes still available to an unprivileged user on ``path``'s filesystem, or None."""
    try:
        st = os.statvfs(path)
    except OSError:
        return None
    return st.f_bavail * st.f_frsize


def snapshot(cwd: str) -> list[Fs]:
    """The filesystems a command in ``cwd`` may write to, each once, with free bytes."""
    candidates = [(cwd, "working directory"), (os.environ.get("HOME") or "", "home"),
                  (paths.temp_dir(), "temp"), ("/", "root")]
    mounts = read_mounts()
    found: dict[str, Fs] = {}
    for path, role in candidates:
        if not path:
            continue
        try:
            real = os.path.realpath(path)
        except (OSError, ValueError):
            continue
        ident = identity(real, mounts)
        if ident in found:
            found[ident].roles.append(role)
            continue
        free = free_bytes(real)
        if free is not None:
            found[ident] = Fs(ident, real, free, [role])
    return list(found.values())


# ── per-session open sample ───────────────────────────────────────────────────────────


def disk_dir() -> str | None:
    base = paths.state_dir()
    return os.path.join(base, "disk") if base else None


def _safe(text: str, limit: int = 64) -> str:
    return "".join(c for c in text if c.isascii() and (c.isalnum() or c in "_-"))[:limit]


def rotate(session: str, signature: str, fss: list[Fs], now: int) -> tuple[list[dict[str, Any]], str | None]:
    """Close the session's open sample and open one for this command.

    Returns (closed samples, a note when a sample was dropped or state could not be kept).
    A closed sample is ``{"signature", "fs", "delta", "at", "secs"}``.
    """
    base = disk_dir()
    sid = _safe(session)
    if not base or not sid:
        return [], "no session id or state directory: samples cannot be paired"
    state = os.path.join(base, f"session-{sid}.json")
    closed: list[dict[str, Any]] = []
    note = None
    claim = f"{state}.{os.getpid()}.{time.monotonic_ns()}"
    try:
        os.rename(state, claim)
    except FileNotFoundError:
        claim = ""
    except OSError as exc:
        return [], f"cannot claim the open sample: {exc.strerror}"
    if claim:
        try:
            try:
                prior = fastjson.loads(statefile.read(claim))
            finally:
                os.unlink(claim)
        except (OSError, ValueError, UnicodeDecodeError):
            prior = None
            note = "the open sample was unreadable and is dropped"
        if isinstance(prior, dict):
            closed, note = _close(prior, fss, now)
    opened = {"signature": signature, "at": now, "fs": [[f.identity, f.path, f.free] for f in fss]}
    try:
        atomic.write(state, fastjson.dumps(opened).encode("utf-8"))
    except OSError as exc:
        note = f"cannot keep the open sample: {exc.strerror}"
    return closed, note


def preview(session: str, fss: list[Fs], now: int) -> tuple[list[dict[str, Any]], str | None]:
    """What :func:`rotate` would close now, read without claiming or writing anything
    (``yupana explain``'s dry run)."""
    base = disk_dir()
    sid = _safe(session)
    if not base or not sid:
        return [], "no session id or state directory: samples cannot be paired"
    try:
        prior = fastjson.loads(statefile.read(os.path.join(base, f"session-{sid}.json")))
    except FileNotFoundError:
        return [], None
    except (OSError, ValueError, UnicodeDecodeError):
        return [], "the open sample was unreadable and is dropped"
    return _close(prior, fss, now) if isinstance(prior, dict) else ([], None)


def _close(prior: dict[str, Any], fss: list[Fs], now: int) -> tuple[list[dict[str, Any]], str | None]:
    at = prior.get("at")
    signature = prior.get("signature")
    if not isinstance(at, int) or not isinstance(signature, str) or not isinstance(prior.get("fs"), list):
        return [], "the open sample was malformed and is dropped"
    if now - at > MAX_OPEN_SECS:
        return [], f"the open sample was {now - at}s old (more than {MAX_OPEN_SECS}s) and is dropped"
    if now < at:
        return [], "the open sample is dated in the future (clock moved backwards) and is dropped"
    current = {f.identity: f.free for f in fss}
    out: list[dict[str, Any]] = []
    for entry in prior["fs"]:
        if not (isinstance(entry, list) and len(entry) == 3 and isinstance(entry[2], int)):
            continue
        ident, path, before = entry
        free = current.get(ident)
        if free is None:
            free = free_bytes(path)
        if free is None:
            continue
        out.append({"signature": signature, "fs": ident, "delta": before - free, "at": at, "secs": now - at})
    return out, None


# ── queue and the flush worker ────────────────────────────────────────────────────────


def queue_path(endpoint: str) -> str | None:
    base = disk_dir()
    if not base:
        return None
    return os.path.join(base, f"queue-{_digest('endpoint' + chr(0) + redact.redact_url(endpoint.rstrip('/')))}.jsonl")


def writes_disabled(session: str | None) -> bool:
    """Whether a credential failure disabled writes for ``session``."""
    base = disk_dir()
    sid = _safe(session or "")
    return bool(base and sid and os.path.exists(os.path.join(base, f"noauth-{sid}")))


def disable_writes(session: str, reason: str) -> None:
    """Mark ``session`` as refused by the store: no more samples are queued for it."""
    base = disk_dir()
    sid = _safe(session)
    if not base or not sid:
        return
    try:
        os.makedirs(base, exist_ok=True)
        with open(os.path.join(base, f"noauth-{sid}"), "w", encoding="utf-8") as fh:
            fh.write(reason[:500] + "\n")
    except OSError:
        pass


def enqueue(endpoint: str, session: str, samples: list[dict[str, Any]]) -> str | None:
    """Append samples to the endpoint's queue in one write. None, or why it failed."""
    target = queue_path(endpoint)
    if not target:
        return "no state directory for the disk queue"
    lines = []
    for s in samples:
        rec = {"signature": s["signature"], "fs": s["fs"], "delta": s["delta"], "at": s["at"],
               "session": session, "id": os.urandom(8).hex()}
        lines.append(fastjson.dumps(rec) + "\n")
    data = "".join(lines).encode("utf-8")
    try:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        fd = statefile.open_append(target, 0o600)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)
    except OSError as exc:
        return f"cannot append to the disk queue: {exc.strerror}"
    return None


def flush_state_path(endpoint: str) -> str | None:
    target = queue_path(endpoint)
    return target[: -len(".jsonl")] + ".state" if target else None


def start_flush(endpoint: str, root: str, now: int, config: str | None = None) -> bool:
    """Start one detached ``yupana disk-flush`` unless one is pending or it is backing off."""
    target = queue_path(endpoint)
    if not target:
        return False
    if not detached.retry_due(flush_state_path(endpoint), now):
        return False
    marker = target[: -len(".jsonl")] + ".pending"
    args = ["disk-flush", "--endpoint", redact.redact_url(endpoint), "--root", root, "--marker", marker]  # argv is public
    if config:
        args += ["--config", config]
    return detached.spawn_claimed(marker, args, now, PENDING_SECS)
