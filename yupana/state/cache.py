"""The durable projection cache: ``projection.json`` plus its hot-path twin ``projection.hot``.

``projection.json`` is the canonical, documented cache (docs/cache-format.md): written
atomically after every successful refresh, readable by operators and other tools.
``projection.hot`` is derived from it on the cold path (:mod:`yupana.state.hot_derive`:
regex prefilters, compiled globs, the text rules' literal index, every plane in a section
of its own) and keyed by the JSON file's inode, size and mtime (taken from the very file
written, before its rename) and by the derivation's version; a hook maps it and reads only
the sections it needs (:class:`yupana.state.hot_view.HotCache`) when that key matches, and
otherwise parses the JSON itself (and rewrites the twin). Both are replaced by rename, so a
reader sees a whole old file or a whole new one, never a mix, and a twin can never be served
for a JSON file it was not derived from.

Serving rules, in the order they are checked (each failure is a named miss):
absent, unreadable, version, endpoint, future-dated, expired — and, for a hook, rebuilding:
no usable twin and a JSON too large to derive one inside a hook's budget (a detached worker
derives it: ``yupana refresh-worker --twin-only``). ``age == ttl`` is still
servable; ``ttl == 0`` disables serving altogether. Standard library only.
"""

from __future__ import annotations

import os
import time

from yupana.state import statefile, stores
# normalize_endpoint and endpoint_key are part of this module's API (it is where caches compare endpoints).
from yupana.state.stores import normalize_endpoint as normalize_endpoint  # re-exported
from yupana.state.dataset import endpoint_key as endpoint_key  # re-exported

from yupana import fastjson, redact
from yupana.regex import prefilter as regex_prefilter
from yupana.state import hot_view
from yupana.state.hot_view import HOT_FORMAT, HotCache, HotFile

from yupana.planes import CACHE_VERSION, LIST_PLANES, OPTIONAL_PLANES

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from typing import Any

    Served = dict[str, Any] | HotCache

LIST_FIELDS = LIST_PLANES
OPTIONAL_FIELDS = OPTIONAL_PLANES


class Miss:
    """Why a cache could not be served. ``label`` is stable (spool, status); ``reason`` is prose."""

    __slots__ = ("label", "reason")

    def __init__(self, label: str, reason: str) -> None:
        self.label = label
        self.reason = reason

    def __repr__(self) -> str:
        return f"Miss({self.label!r}, {self.reason!r})"


def hot_path_for(path: str) -> str:
    base, _ = os.path.splitext(path)
    return base + ".hot"


INLINE_DERIVE_BYTES = 1 << 20  # ~2,000 rules: a hook derives a missing twin itself up to this (~0.1-0.2 s, once)
REBUILDING = "rebuilding"  # the miss label of a twin left to the worker


def hot_key(st: os.stat_result) -> tuple[Any, ...]:
    """What ties a hot twin to one exact projection.json (and to this derivation code)."""
    return (HOT_FORMAT, regex_prefilter.ALGORITHM, st.st_ino, st.st_size, st.st_mtime_ns)


# ── writing (cold path) ─────────────────────────────────────────────────────────────


def save(cache: dict[str, Any], path: str | None = None) -> str | None:
    """Write ``cache`` atomically, then its hot twin. Return None, or why it failed.

    A failed write leaves the previous files exactly as they were.
    """
    return save_detailed(cache, path)[0]


def save_detailed(cache: dict[str, Any], path: str | None = None,
                  timings: dict[str, float] | None = None) -> tuple[str | None, str | None]:
    """Like :func:`save`; returns ``(error, hot_error)``.

    ``error`` means projection.json was not replaced (the prior cache is untouched).
    ``hot_error`` means the JSON was written but its hot twin was not: hooks then parse the
    JSON (slower, still correct) and rewrite the twin themselves. ``timings`` receives
    ``compile_s`` (deriving the twin: prefilters, globs, the rule index — unchanged patterns
    taken from the twin being replaced) and ``write_s`` (serialising and writing both files).
    """
    started = time.monotonic()
    cache = dict(cache)
    cache["version"] = CACHE_VERSION
    cache["endpoint"] = normalize_endpoint(cache.get("endpoint", ""))
    if not isinstance(cache.get("dataset"), str):  # a body that names no dataset: its endpoint's plain one
        from yupana.state import dataset

        cache["dataset"] = dataset.identity({"endpoint": cache["endpoint"]})
    target = path
    if not target:
        target = stores.cache_path(cache.get("dataset") or cache["endpoint"])
    if not target:
        return "no cache path: set YUPANA_PROJECTION_CACHE_PATH, XDG_STATE_HOME or HOME", None
    for key in ("source", "notices"):
        if cache.get(key):
            cache[key] = redact.redact_fields(cache[key])
    from yupana.state import atomic, cache_entries, hot_derive

    try:
        malformed = cache_entries.check(cache)
        if malformed:
            return f"refusing to write a malformed cache to {target}: {malformed}", None
        from yupana.state.cache_body import JsonBody

        body = JsonBody(cache)
        body.check()  # what cannot be serialised fails here, before any file is touched
        os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
        st = atomic.write(target, body.chunks(), fsync=True)
    except (OSError, ValueError) as exc:
        return f"cannot write {target}: {getattr(exc, 'strerror', None) or exc}", None
    hot_error = None
    compiled = 0.0
    try:
        compile_started = time.monotonic()
        prior = _prior_twin(target)
        twin = hot_derive.image(cache, {"key": hot_key(st), "json_sha1": body.sha1()}, digests=body.digests,
                                prior=prior)
        if prior is not None:
            prior.close()
        compiled = time.monotonic() - compile_started
        atomic.write(hot_path_for(target), twin)
    except (OSError, ValueError) as exc:
        _unlink(hot_path_for(target))
        hot_error = f"cannot write {hot_path_for(target)}: {getattr(exc, 'strerror', None) or exc}"
    if timings is not None:
        timings["compile_s"] = compiled
        timings["write_s"] = time.monotonic() - started - compiled
    return None, hot_error


def _prior_twin(target: str) -> HotFile | None:
    """The twin about to be replaced (its unchanged planes are copied, its prefilters reused),
    or None when there is none this code can read."""
    try:
        return hot_view.open_file(hot_path_for(target), statefile.CACHE_LIMIT)
    except (OSError, ValueError):
        return None


def _new_sha1() -> Any:
    try:
        from _sha1 import sha1  # the builtin module: hashlib would load OpenSSL (~3 ms per hook)
    except ImportError:  # pragma: no cover - interpreters built without it
        from hashlib import sha1
    return sha1()


def derive_hot(cache: dict[str, Any]) -> dict[str, Any]:
    """The cache with the hot path's derived keys (:func:`yupana.state.hot_derive.derive_hot`)."""
    from yupana.state import hot_derive

    return hot_derive.derive_hot(cache)


def sha1_hex(data: bytes) -> str:
    try:
        from _sha1 import sha1  # the builtin module: hashlib would load OpenSSL (~3 ms per hook)
    except ImportError:  # pragma: no cover - interpreters built without it
        from hashlib import sha1
    return str(sha1(data).hexdigest())


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


# ── reading (hot path) ──────────────────────────────────────────────────────────────


def load_servable(path: str | None, endpoint: str, ttl: int, now: int, *,
                  dataset: str, dialect: str | None = None) -> tuple[HotCache | None, Miss | None]:
    """The cache a hook is served for ``endpoint`` at ``now`` (the twin: the derived keys of
    :func:`derive_hot`, sections read on demand), or the named reason there is none."""
    if not path:
        return None, _no_path()
    cache, miss = read(path)
    return _servable(cache, miss, path, endpoint, ttl, now, dataset, dialect)


def load_servable_json(path: str | None, endpoint: str, ttl: int, now: int, *,
                       dataset: str, dialect: str | None = None) -> tuple[dict[str, Any] | None, Miss | None]:
    """:func:`load_servable` for the cold commands: the JSON's dict, nothing derived."""
    if not path:
        return None, _no_path()
    cache, miss = read_json(path)
    return _servable(cache, miss, path, endpoint, ttl, now, dataset, dialect)


def served_json(quipu: dict[str, Any], root: str, now: int) -> tuple[str | None, str | None, str | None,
                                                                     dict[str, Any] | None, Miss | None]:
    """The cache of the configured store as a cold command sees it, never refreshed or written:
    ``(off_reason, key, path, cache, miss)``; ``off_reason`` says why the governed plane is off
    (then the rest is None)."""
    endpoint = (quipu.get("endpoint") or "").strip()
    if not quipu["enabled"] or not endpoint:
        why = "[yupana.quipu] enabled is false" if not quipu["enabled"] else "[yupana.quipu] endpoint is not set"
        return why, None, None, None, None
    from yupana.state import dataset

    key = endpoint_key(endpoint, root)
    ident = dataset.identity(quipu, root)
    path = stores.cache_path(ident)
    body, miss = load_servable_json(path, key, int(quipu["projection_cache_ttl_secs"]), now, dataset=ident,
                                    dialect=quipu.get("dialect"))
    return None, key, path, body, miss


def _no_path() -> Miss:
    return Miss("absent", "no cache path could be resolved (set YUPANA_PROJECTION_CACHE_PATH, XDG_STATE_HOME or HOME)")


def _servable(cache: Any, miss: Miss | None, path: str, endpoint: str, ttl: int, now: int,
              dataset: str, dialect: str | None) -> tuple[Any, Miss | None]:
    """The serving rules after the read: endpoint, dataset, future-dated, expired (in that order)."""
    if miss:
        return None, miss
    assert cache is not None
    found = cache.get("endpoint")
    if normalize_endpoint(str(found)) != normalize_endpoint(endpoint):
        return None, Miss("endpoint", f"the cache at {path} was written for {found!r}, not {endpoint!r}; refusing another deployment's policy")
    miss = dataset_miss(cache.get("dataset"), dataset, path, dialect, cache.get("dialect"))
    if miss:
        return None, miss
    written = cache["written_at"]
    if written > now:
        return None, Miss("future-dated", f"the cache at {path} is dated {written - now}s in the future (clock moved backwards?)")
    age = now - written
    if ttl <= 0:
        return None, Miss("expired", f"cache serving is disabled (projection_cache_ttl_secs = 0); the cache is {age}s old")
    if age > ttl:
        return None, Miss("expired", f"the cache at {path} is {age}s old, past projection_cache_ttl_secs = {ttl}")
    return cache, None


def dataset_miss(found: object, dataset: str, path: str, dialect: str | None = None,
                 read_with: object = None) -> Miss | None:
    """The ``dataset`` miss when a cache's dataset identity (yupana/state/dataset.py) is not ``dataset``,
    or it was read with another dialect than the configured ``dialect`` (None: detected, any)."""
    if found == dataset:
        if dialect and read_with != dialect:
            return Miss("dataset", f"the cache at {path} was read with dialect {read_with!r}, not the configured "
                                   f"{dialect!r}; refusing another dataset's policy")
        return None
    if not isinstance(found, str):
        return Miss("dataset", f"the cache at {path} does not say which dataset it holds (written by an older "
                               f"yupana); it cannot be proven to be {dataset!r}, so it is not served (run "
                               "`yupana project`)")
    return Miss("dataset", f"the cache at {path} holds the dataset {found!r}, not {dataset!r} (another default_graph, "
                           "dialect, auth identity or credential in the URL); refusing another dataset's policy")


def _stat(path: str) -> tuple[os.stat_result | None, Miss | None]:
    try:
        return os.stat(path), None
    except FileNotFoundError:
        return None, Miss("absent", f"no projection cache at {path} (run `yupana project`)")
    except OSError as exc:
        return None, Miss("unreadable", f"cannot stat {path}: {exc.strerror}")


def read(path: str, *, derive_any: bool = False) -> tuple[HotCache | None, Miss | None]:
    """The cache as a hook reads it: the hot twin when it matches ``path``; otherwise the JSON,
    shape-checked and derived here, and the twin rewritten (best effort), so only the first
    hook after a foreign write (or an upgrade) pays for it — when the JSON is at most
    :data:`INLINE_DERIVE_BYTES`; a larger one is the ``rebuilding`` miss (deriving 50,000
    rules takes seconds, past any hook's budget) unless ``derive_any`` (the twin worker)."""
    st, miss = _stat(path)
    if st is None:
        return None, miss
    try:
        twin = hot_view.open_file(hot_path_for(path), statefile.CACHE_LIMIT)
        if twin.header.get("key") == hot_key(st) and _same_catalogue(path, twin):
            return _check_meta(HotCache(twin), path)  # its planes were checked when it was derived
        twin.close()
    except (OSError, ValueError, KeyError, TypeError):  # absent, refused, empty, Corrupt
        pass
    if st.st_size > INLINE_DERIVE_BYTES and not derive_any:
        return None, Miss(REBUILDING, f"the hot twin of {path} is missing or out of date and the catalogue "
                                      f"({st.st_size // 1024} KiB) is too large to derive inside a hook")
    data, checked, miss = _read_checked(path)
    if checked is None or data is None:
        return None, miss
    from yupana.state import atomic, hot_derive

    image = b"".join(hot_derive.image(checked, {"key": hot_key(st), "json_sha1": sha1_hex(data)}))
    try:
        fst = os.stat(path)
        if fst.st_size == len(data) and fst.st_ino == st.st_ino and fst.st_mtime_ns == st.st_mtime_ns:
            atomic.write(hot_path_for(path), image)  # the twin of the very file just read
    except (OSError, ValueError):
        pass
    return HotCache(HotFile(data=image)), None


HEAD_BYTES = 4096  # where projection.json names its rule-set digest (it follows version, endpoint, dialect)
_DIGEST = b'"digest":"'


def _same_catalogue(path: str, twin: HotFile) -> bool:
    """Whether the rule-set digest in the head of the JSON at ``path`` is the one the twin's
    header carries: a twin derived from another catalogue and given this JSON's key is not
    served (one ``pread``; a JSON that names no digest in its head cannot be told apart
    cheaply and is taken at its key)."""
    try:
        fd = statefile.open_regular(path, statefile.CACHE_LIMIT)
        try:
            head = os.pread(fd, HEAD_BYTES, 0)
        finally:
            os.close(fd)
    except (OSError, ValueError):
        return False
    at = head.find(_DIGEST)
    end = head.find(b'"', at + len(_DIGEST)) if at >= 0 else -1
    if end < 0:
        return True
    want = (twin.header.get("meta") or {}).get("digest")
    return isinstance(want, str) and head[at + len(_DIGEST):end] == want.encode("utf-8", "surrogatepass")


def read_json(path: str) -> tuple[dict[str, Any] | None, Miss | None]:
    """``projection.json`` shape-checked, nothing derived (the cold commands)."""
    st, miss = _stat(path)
    if st is None:
        return None, miss
    _, checked, miss = _read_checked(path)
    return checked, miss


def plane_digests(path: str | None) -> dict[str, str]:
    """Each plane's digest in the cache at ``path`` (SHA-256 of its JSON as written, hex): from
    its hot twin's header when that twin is this JSON's, else computed from the JSON (a twin a
    hook derived carries none); {} when there is no readable cache. Cold path."""
    if not path:
        return {}
    try:
        st = os.stat(path)
        twin = hot_view.open_file(hot_path_for(path), statefile.CACHE_LIMIT)
        try:
            found = twin.header.get("plane_digests") if twin.header.get("key") == hot_key(st) else None
        finally:
            twin.close()
        if found:
            return dict(found)
    except (OSError, ValueError, KeyError, TypeError):  # absent, refused, empty, Corrupt
        pass
    cache, _ = read_json(path)
    if cache is None:
        return {}
    from yupana.planes import BY_KEY
    from yupana.state.cache_body import JsonBody

    return {key: digest for key, digest in JsonBody(cache).plane_digests().items() if key in BY_KEY}


def _read_checked(path: str) -> tuple[bytes | None, dict[str, Any] | None, Miss | None]:
    try:
        data = statefile.read(path, statefile.CACHE_LIMIT)
        cache = fastjson.loads(data)
    except statefile.Refused as exc:
        return None, None, Miss("unreadable", f"refusing to read {exc}")
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        return None, None, Miss("unreadable", f"cannot read {path}: {exc}")
    checked, miss = _check_shape(cache, path)
    return data, checked, miss


def _check_meta(cache: HotCache, path: str) -> tuple[HotCache | None, Miss | None]:
    """The bookkeeping a served twin must carry (its planes were checked when it was derived)."""
    miss = _meta_miss(cache, path)
    return (None, miss) if miss else (cache, None)


def _meta_miss(cache: dict[str, Any] | HotCache, path: str) -> Miss | None:
    """Why ``cache``'s version, ``written_at`` or ``endpoint`` cannot be served, or None."""
    version = cache.get("version")
    if version != CACHE_VERSION:
        return Miss("version", f"{path} has cache version {version!r}; this yupana reads version {CACHE_VERSION}")
    written = cache.get("written_at")
    if not isinstance(written, int) or isinstance(written, bool) or not isinstance(cache.get("endpoint"), str):
        return Miss("unreadable", f"{path} lacks a valid written_at or endpoint")
    return None


def _check_shape(cache: object, path: str) -> tuple[dict[str, Any] | None, Miss | None]:
    if not isinstance(cache, dict):
        return None, Miss("unreadable", f"{path} does not hold a JSON object")
    miss = _meta_miss(cache, path)
    if miss:
        return None, miss
    for key in LIST_FIELDS:
        value = cache.get(key)
        if value is None:
            cache[key] = []
        elif not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
            return None, Miss("unreadable", f"{path}: {key} is not a list of objects")
    for key in OPTIONAL_FIELDS:
        if not isinstance(cache.get(key), (dict, type(None))):
            return None, Miss("unreadable", f"{path}: {key} is neither an object nor null")
        cache.setdefault(key, None)
    from yupana.state import cache_entries

    malformed = cache_entries.check(cache)
    if malformed:
        return None, Miss("unreadable", f"{path}: malformed entry {malformed}; refusing the whole cache "
                                        "(run `yupana project` to rewrite it)")
    return cache, None
