"""Configuration for the hot path, in well under a millisecond, without pydantic.

The configuration is resolved by :mod:`yupana.config.resolver` (standard library only, on
the schema table of :mod:`yupana.config.schema`) and kept as a *snapshot* keyed by a
fingerprint of everything it was resolved from: the user and project config files (path,
inode, size, mtime, or their absence), the ``YUPANA_*__*`` environment and the resolver and
schema themselves. A hook stats those files, loads the snapshot (marshal) and compares
fingerprints. On a miss (an operator edited a file, or a fresh state directory) the hook
resolves in process — ``tomllib`` and a small validator, a few milliseconds — and rewrites
the snapshot atomically; every later hook hits again. No hook ever waits on another process
for its configuration.

Errors are snapshotted too, so a broken config costs one resolution, not one per edit.
"""

from __future__ import annotations

import marshal
import os

from yupana import digests, redact
# Part of this module's API: hooks catch settings.ConfigError.
from yupana.config.error import TOP_LEVEL_ENV, ConfigError as ConfigError  # ConfigError: re-exported
from yupana.state import paths

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from typing import Any

    Fingerprint = tuple[Any, ...]  # what fingerprint() answers

_HERE = os.path.dirname(os.path.abspath(__file__))
# What a resolution depends on besides the files: the schema and the resolver.
# What a snapshot holds beyond the resolution: 2 added [yupana.quipu] masked_digest (state/dataset.py);
# 3 named snapshots by an int hash and added "key" (the project they are of) and "digests" (yupana.digests).
SNAPSHOT_FORMAT = 3
_MODEL_FILES = tuple(os.path.join(_HERE, "config", f) for f in ("schema.py", "validate.py", "resolver.py", "lattice.py",
                                                                "error.py"))




def _stat_key(path: str | None) -> tuple[Any, ...]:
    if not path:
        return (None,)
    try:
        st = os.stat(path)
    except OSError:
        return (path, None)
    return (path, st.st_ino, st.st_size, st.st_mtime_ns)


def fingerprint(root: str, override: str | None = None, nested: tuple[str, ...] = ()) -> tuple[Any, ...]:
    """Everything a resolved configuration depends on, cheap to compute."""
    files: tuple[tuple[Any, ...], ...]
    if override:
        files = (_stat_key(paths.managed_config_file()), _stat_key(override))
    else:
        files = (_stat_key(paths.managed_config_file()), _stat_key(paths.user_config_file()),
                 _stat_key(paths.project_config_file(root)), *(_stat_key(paths.project_config_file(d)) for d in nested))
    env = sorted(f"{k}={v}" for k, v in os.environ.items()
                 if k.startswith("YUPANA_") and ("__" in k or k in TOP_LEVEL_ENV))
    # a digest, not the values: a variable may hold a URL with a password (refused, but never stored)
    base = paths.state_dir()
    key = _stat_key(os.path.join(base, "dataset.key") if base else None)  # masked_digest is keyed with it
    return (files, digests.sha1_hex("\0".join(env)) if env else None, tuple(_stat_key(p) for p in _MODEL_FILES),
            SNAPSHOT_FORMAT, key)


def _snapshot_key(root: str, override: str | None, nested: tuple[str, ...]) -> str:
    return f"{os.path.abspath(root)}\0{override or ''}" + "".join(f"\0{d}" for d in nested)


def snapshot_path(root: str, override: str | None = None, nested: tuple[str, ...] = ()) -> str | None:
    base = paths.state_dir()
    if not base:
        return None
    # Named without a hashing module (~0.2 ms a hook to load one): CPython hashes an int as its
    # value modulo the prime 2**61 - 1, the same in every process (a str's hash is salted). Two
    # projects that collide share a file, never a snapshot: each holds its project's key.
    raw = _snapshot_key(root, override, nested).encode("utf-8", "surrogateescape")
    return os.path.join(base, "config", format(hash(int.from_bytes(raw, "little")), "016x") + ".snap")


def load(root: str, override: str | None = None, nested: tuple[str, ...] = ()) -> dict[str, Any]:
    """The resolved snapshot for ``root``: ``{"config", "sources", "provenance", "warnings",
    "lowered", "managed"}`` (``nested``: the nested project directories whose files apply, outermost first).

    Raises ConfigError when the configuration is invalid or cannot be resolved.
    """
    fp = fingerprint(root, override, nested)
    snap_path = snapshot_path(root, override, nested)
    prior = None
    if snap_path:
        try:
            from yupana.state import statefile

            snap = marshal.loads(statefile.read(snap_path, statefile.SNAPSHOT_LIMIT))  # not load(fh): piecemeal
            if snap.get("key") != _snapshot_key(root, override, nested):
                snap = {}  # another project's, whose name collides: never ours to read or compare
            if snap.get("fingerprint") == fp:
                return _unwrap(snap)
            prior = snap.get("resolved")
        except (OSError, EOFError, ValueError, TypeError, AttributeError):
            pass
    fresh = resolve_and_store(root, override, fp, nested)
    resolved = _unwrap(fresh)
    if isinstance(prior, dict) and fresh.get("resolved"):
        changed = control_changes(prior, resolved, root)
        if changed:  # for this invocation only (never stored): the hook records them
            resolved = {**resolved, "control_changed": changed}
    return resolved


def control_changes(before: dict[str, Any], after: dict[str, Any], root: str) -> list[dict[str, Any]]:
    """One ``control_changed`` entry (docs/records.md) per config file whose bytes differ between
    two resolutions of the same project, each saying whether the effective policy got looser."""
    old, new = before.get("digests") or {}, after.get("digests") or {}
    files = [p for p in dict.fromkeys([*old, *new]) if old.get(p) != new.get(p)]
    if not files:
        return []
    from yupana.config import lattice as config_lattice

    try:
        loosened = config_lattice.looser(before["config"], after["config"])
    except Exception:  # noqa: BLE001 - an old snapshot of another shape: the change is still said
        loosened = ["(unknown: the prior configuration could not be compared)"]
    return [{"file": os.path.abspath(p), "old_digest": old.get(p), "new_digest": new.get(p),
             "looser": bool(loosened), "loosened": loosened, "project": root} for p in files]


def _unwrap(snap: dict[str, Any]) -> dict[str, Any]:
    if snap.get("error"):
        raise ConfigError(snap["error"])
    digests.remember(snap.get("digests"))
    resolved: dict[str, Any] = snap["resolved"]
    return resolved


def resolve_and_store(root: str, override: str | None, fp: Fingerprint,
                      nested: tuple[str, ...] = ()) -> dict[str, Any]:
    """Resolve in process and write the snapshot; the snapshot dict (``resolved`` or ``error``).

    ``fp`` is the fingerprint taken before any file was read (see :func:`write_snapshot`).
    """
    from yupana.config import resolver as config_resolve

    resolved, error = None, None
    try:
        resolved = config_resolve.resolve(root, override, nested)
    except ConfigError as exc:
        error = str(exc)
    except Exception as exc:  # noqa: BLE001 - the snapshot must record, not crash
        error = f"config resolution failed: {type(exc).__name__}: {exc}"
    import marshal

    snap: dict[str, Any] = marshal.loads(write_snapshot(root, override, fp, resolved, error, nested))  # what a later hit reads
    return snap


def redacted(resolved: dict[str, Any] | None) -> dict[str, Any] | None:
    """``resolved`` as a snapshot keeps it: every URL key (the endpoints, the bundle URL — a
    presigned URL's signature is a credential) without credentials, warnings too.

    Hooks need only the endpoint's identity (:func:`yupana.state.cache.endpoint_key`, the
    workers' ``--endpoint``); every worker that talks to the store resolves the
    configuration itself, with the configured URL.
    """
    if not resolved:
        return resolved
    from yupana.config.schema import URL_KEYS  # resolution loaded it: no cost on a hook's hit

    out = dict(resolved)
    config = dict(out.get("config") or {})
    quipu = config.get("quipu")
    if isinstance(quipu, dict) and isinstance(quipu.get("endpoint"), str):  # the dataset identity's hash of what
        from yupana.state import dataset  # redaction masks

        config["quipu"] = {**quipu, dataset.MASKED_FIELD: dataset.masked_digest(quipu["endpoint"])}
    for section, key in URL_KEYS:
        table = config.get(section)
        if isinstance(table, dict) and isinstance(table.get(key), str):
            config[section] = {**table, key: redact.redact_url(table[key])}
    out["config"] = config
    out["warnings"] = redact.redact_fields(out.get("warnings") or [])
    return out


def _digests(resolved: dict[str, Any] | None, root: str) -> dict[str, str]:
    """The digests a hook of this project computes (:mod:`yupana.digests`): of its root (its
    key in records) and of its store's dataset identity (the store's directory)."""
    texts = [os.path.abspath(root)]
    quipu = ((resolved or {}).get("config") or {}).get("quipu")
    if isinstance(quipu, dict):
        from yupana.state import dataset

        texts.append(dataset.identity(quipu, root))
    return digests.of(texts)


def write_snapshot(root: str, override: str | None, fp: Fingerprint, resolved: dict[str, Any] | None,
                   error: str | None, nested: tuple[str, ...] = ()) -> bytes:
    """Write (best effort, atomically) and return the marshalled snapshot.

    ``fp`` must be the fingerprint taken *before* the files were read, so an edit made
    during resolution invalidates the snapshot instead of hiding behind it.
    """
    safe = redacted(resolved)
    snap = {"fingerprint": fp, "resolved": safe, "error": redact.redact_text(error) if error else error,
            "key": _snapshot_key(root, override, nested), "digests": _digests(safe, root)}
    data = marshal.dumps(snap)
    target = snapshot_path(root, override, nested)
    if target:
        from yupana.state import atomic

        atomic.write_quietly(target, data, mode=0o600)  # the owner's alone; a hook that cannot keep it resolves again
        try:  # the name this project's snapshot had before format 3 (a SHA-1 of its key): no orphan left behind
            os.unlink(os.path.join(os.path.dirname(target), digests.sha1_hex(_snapshot_key(root, override, nested))[:20] + ".snap"))
        except OSError:
            pass
    return data
