"""Configuration for the hot path, in well under a millisecond, without pydantic.

:mod:`yupana.config` (pydantic-settings) is the one settings model. Resolving it costs
~300 ms, so its result is kept as a *snapshot* keyed by a fingerprint of everything it was
resolved from: the user and project config files (path, inode, size, mtime, or their
absence), the ``YUPANA_*`` environment and the settings model itself. A hook stats those
files, loads the snapshot (marshal) and compares fingerprints. On a miss (an operator
edited a file) the hook runs ``python -m yupana config snapshot`` once, which validates
with the real model and rewrites the snapshot; every later hook hits again.

Errors are snapshotted too, so a broken config costs one resolution, not one per edit.
"""

from __future__ import annotations

import marshal
import os
import sys

from yupana import paths, redact

RESOLVE_TIMEOUT_SECS = 4.0
_MODEL_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "config.py")


class ConfigError(Exception):
    """The configuration could not be resolved; the message names the file and key."""


def _stat_key(path: str | None) -> tuple:
    if not path:
        return (None,)
    try:
        st = os.stat(path)
    except OSError:
        return (path, None)
    return (path, st.st_ino, st.st_size, st.st_mtime_ns)


def fingerprint(root: str, override: str | None = None) -> tuple:
    """Everything a resolved configuration depends on, cheap to compute."""
    if override:
        files = (_stat_key(override),)
    else:
        files = (_stat_key(paths.user_config_file()), _stat_key(paths.project_config_file(root)))
    # Stored in the snapshot: a credential in a YUPANA_QUIPU__ENDPOINT URL is kept out of it.
    env = tuple(sorted((k, redact.redact_text(v)) for k, v in os.environ.items() if k.startswith("YUPANA_") and "__" in k))
    return (files, env, _stat_key(_MODEL_FILE))


def snapshot_path(root: str, override: str | None = None) -> str | None:
    base = paths.state_dir()
    if not base:
        return None
    try:
        from _sha1 import sha1  # the builtin module: hashlib would load OpenSSL (~3 ms per hook)
    except ImportError:  # pragma: no cover - interpreters built without it
        from hashlib import sha1

    key = sha1(f"{os.path.abspath(root)}\0{override or ''}".encode()).hexdigest()[:20]
    return os.path.join(base, "config", key + ".snap")


def load(root: str, override: str | None = None) -> dict:
    """The resolved snapshot for ``root``: ``{"config", "sources", "provenance", "warnings"}``.

    Raises ConfigError when the configuration is invalid or cannot be resolved.
    """
    fp = fingerprint(root, override)
    snap_path = snapshot_path(root, override)
    if snap_path:
        try:
            with open(snap_path, "rb") as fh:
                snap = marshal.loads(fh.read())  # load(fh) reads piecemeal: much slower
            if snap.get("fingerprint") == fp:
                return _unwrap(snap)
        except (OSError, EOFError, ValueError, TypeError, AttributeError):
            pass
    return _unwrap(_resolve_out_of_process(root, override))


def _unwrap(snap: dict) -> dict:
    if snap.get("error"):
        raise ConfigError(snap["error"])
    return snap["resolved"]


def _resolve_out_of_process(root: str, override: str | None) -> dict:
    import subprocess

    argv = [sys.executable, "-m", "yupana", "config", "snapshot", "--root", root]
    if override:
        argv += ["--config", override]
    try:
        done = subprocess.run(argv, capture_output=True, timeout=RESOLVE_TIMEOUT_SECS, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise ConfigError(f"resolving the configuration took longer than {RESOLVE_TIMEOUT_SECS:g}s") from None
    except OSError as exc:
        raise ConfigError(f"cannot run the config resolver: {exc}") from None
    try:
        snap = marshal.loads(done.stdout)
    except (EOFError, ValueError, TypeError):
        snap = None
    if not isinstance(snap, dict):
        tail = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no output"]
        raise ConfigError(f"config resolver failed (exit {done.returncode}): {tail[0]}")
    return snap


def redacted(resolved: dict | None) -> dict | None:
    """``resolved`` as a snapshot keeps it: endpoint URLs without credentials, warnings too.

    Hooks need only the endpoint's identity (:func:`yupana.cache.endpoint_key`, the
    workers' ``--endpoint``); every worker that talks to the store resolves the
    configuration itself, with the configured URL.
    """
    if not resolved:
        return resolved
    out = dict(resolved)
    config = dict(out.get("config") or {})
    quipu = dict(config.get("quipu") or {})
    for key in ("endpoint", "update_endpoint"):
        if isinstance(quipu.get(key), str):
            quipu[key] = redact.redact_url(quipu[key])
    config["quipu"] = quipu
    out["config"] = config
    out["warnings"] = redact.redact_fields(out.get("warnings") or [])
    return out


def write_snapshot(root: str, override: str | None, fp: tuple, resolved: dict | None, error: str | None) -> bytes:
    """Write (best effort, atomically) and return the marshalled snapshot. Cold path.

    ``fp`` must be the fingerprint taken *before* the files were read, so an edit made
    during resolution invalidates the snapshot instead of hiding behind it.
    """
    snap = {"fingerprint": fp, "resolved": redacted(resolved), "error": redact.redact_text(error) if error else error}
    data = marshal.dumps(snap)
    target = snapshot_path(root, override)
    if target:
        from yupana import atomic

        atomic.write_quietly(target, data)  # a hook that cannot keep it resolves again next time
    return data
