"""One state directory per store, and the migration of the one-per-user cache. Standard library only.

Two projects on one host may use two endpoints; each endpoint's durable state must survive
the other's refreshes. So everything about one store lives in its own directory::

    $XDG_STATE_HOME/yupana/stores/<digest>/     (digest: yupana.state.paths.store_digest)
        endpoint              the dataset identity, one line (for operators)
        projection.json       the projection cache (docs/cache-format.md)
        projection.hot        its hot-path twin
        refresh-state.json    the last attempt and the back-off
        refresh.lock          single flight
        refresh.log           the detached worker's log
        exposure.json         exposure answers (and exposure.pending.* markers)

The directory is keyed by the dataset identity (:func:`yupana.state.dataset.identity`: the cache
key of the endpoint — redacted, no trailing ``/``, ``file:`` locations absolute — its default
graph, auth identity and a keyed hash of what redaction masked), so a hook and the refresher
agree without I/O, and two datasets of one endpoint never share a cache. An older yupana's
directory, keyed by the endpoint alone, is adopted only when proven (:mod:`yupana.state.adopt`).

``$YUPANA_PROJECTION_CACHE_PATH`` keeps meaning what the contract says: that exact file is
the cache, for whichever endpoint is configured (a cache for another endpoint is refused
with the ``endpoint`` miss), and its companions live beside it, as before.

Migration: a ``projection.json`` left directly in the state directory by an older yupana
is moved into the directory of the endpoint it names (its ``endpoint`` field), with the
``refresh-state.json`` and ``exposure.json`` beside it; nothing is deleted. One that cannot
be read is renamed ``projection.json.unmigrated`` so the operator still has it.
"""

from __future__ import annotations

import os

from yupana.state import paths, statefile

NAME_FILE = "endpoint"
DENIALS_FILE = "denials.jsonl"  # the recurrence corpus (yupana.state.denials), named here so a hook
# can see that it is empty without loading its reader
_looked: str | None = None  # the legacy path already looked at in this process


def cache_path(endpoint_key: str) -> str | None:
    """The projection cache for the store ``endpoint_key`` (None: no state directory)."""
    explicit = paths.explicit_projection_cache()
    if explicit:
        return explicit
    migrate_legacy()
    directory = paths.store_dir(endpoint_key)
    return os.path.join(directory, "projection.json") if directory else None


def beside(endpoint_key: str, name: str) -> str | None:
    """A file of the store ``endpoint_key``, next to its projection cache."""
    cache = cache_path(endpoint_key)
    return os.path.join(os.path.dirname(cache) or ".", name) if cache else None


def name_store(directory: str, endpoint_key: str) -> None:
    """Write the ``endpoint`` file naming the store a directory belongs to (best effort)."""
    if os.path.basename(directory) != paths.store_digest(endpoint_key):
        return  # an explicit cache path: not a store directory of ours
    target = os.path.join(directory, NAME_FILE)
    body = (endpoint_key + "\n").encode("utf-8", "surrogateescape")
    try:
        if statefile.read(target, 1 << 16) == body:
            return
    except OSError:
        pass
    from yupana.state import atomic

    atomic.write_quietly(target, body)


def migrate_legacy() -> list[str]:
    """Move a legacy ``<state>/projection.json`` into its store's directory; what was done, in words."""
    global _looked
    legacy = paths.legacy_projection_cache()
    if not legacy or legacy == _looked or paths.explicit_projection_cache():
        return []
    _looked = legacy
    if not os.path.lexists(legacy):
        return []
    done = _migrate(legacy)
    from yupana.state import spool

    spool.record("state_migrated", {"legacy": legacy, "moves": done})
    return done


def _migrate(legacy: str) -> list[str]:
    base = os.path.dirname(legacy)
    key, ident = _endpoint_of(legacy, CACHE_LIMIT, "dataset")
    if key is None:
        return [_move(legacy, legacy + ".unmigrated", "the legacy cache names no readable endpoint; kept as")]
    # a cache that names its dataset goes to that dataset's directory; an older one to its endpoint's,
    # where the refresher adopts it only if it is proven to hold the dataset (yupana/state/adopt.py)
    store = ident or key
    directory = paths.store_dir(store, base)
    assert directory is not None
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError as exc:
        return [f"cannot migrate {legacy}: {exc.strerror or exc}"]
    name_store(directory, store)
    done = [_move(legacy, os.path.join(directory, "projection.json"), f"migrated the cache for {store} to")]
    hot = os.path.join(base, "projection.hot")
    if os.path.lexists(hot):  # keyed by inode, size and mtime: a moved twin stays valid
        done.append(_move(hot, os.path.join(directory, "projection.hot"), "moved its hot twin to"))
    for name in ("refresh-state.json", "exposure.json"):
        source = os.path.join(base, name)
        if not os.path.lexists(source):
            continue
        # beside the cache, unless refresh state names another endpoint (then that endpoint's directory)
        owner = _endpoint_of(source, SMALL_LIMIT)[0] if name == "refresh-state.json" else key
        target_dir = paths.store_dir(store if owner in (key, None) else owner, base)
        assert target_dir is not None
        try:
            os.makedirs(target_dir, exist_ok=True)
        except OSError:
            continue
        done.append(_move(source, os.path.join(target_dir, name), f"moved {name} to"))
    return done


CACHE_LIMIT = 256 << 20
SMALL_LIMIT = 1 << 20


def normalize_endpoint(endpoint: str) -> str:
    """An endpoint as a cache and its state files carry it: no trailing ``/``, no credentials
    (:func:`yupana.redact.redact_url`), so no state file ever holds a URL's secret."""
    from yupana import redact

    return redact.redact_url(endpoint.rstrip("/"))


def _endpoint_of(path: str, limit: int, also: str = "") -> tuple[str | None, str | None]:
    """The ``endpoint`` a state file names (normalised), and its field ``also`` when that is a string."""
    from yupana import fastjson

    try:
        body = fastjson.loads(statefile.read(path, limit))
    except (OSError, ValueError, UnicodeDecodeError, RecursionError):
        return None, None
    if not isinstance(body, dict):
        return None, None
    found, other = body.get("endpoint"), body.get(also) if also else None
    return (normalize_endpoint(found) if isinstance(found, str) and found else None,
            other if isinstance(other, str) and other else None)


def _move(source: str, target: str, what: str) -> str:
    """Move without ever replacing: a target that exists keeps it, the source becomes ``*.legacy``."""
    try:
        os.link(source, target)
    except FileExistsError:
        try:
            if os.path.samefile(source, target):  # another hook migrated it a moment ago
                os.unlink(source)
                return f"{what} {target}"
        except OSError:
            return f"{what} {target}"
        target = target + ".legacy"
        try:
            os.replace(source, target)
        except OSError as exc:
            return f"cannot move {source}: {exc.strerror or exc}"
        return f"{what} {target} (the store already had a newer one)"
    except OSError:
        try:
            os.replace(source, target)  # a filesystem without hard links
        except OSError as exc:
            return f"cannot move {source}: {exc.strerror or exc}"
        return f"{what} {target}"
    try:
        os.unlink(source)
    except OSError:
        pass
    return f"{what} {target}"
