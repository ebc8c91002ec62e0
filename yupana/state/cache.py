"""The durable projection cache: ``projection.json`` plus its hot-path twin ``projection.hot``.

``projection.json`` is the canonical, documented cache (docs/cache-format.md): written
atomically after every successful refresh, readable by operators and other tools.
``projection.hot`` is derived from it on the cold path (marshal, with regex literal
prefilters and compiled globs) and keyed by the JSON file's inode, size and mtime (taken
from the very file written, before its rename) and by the derivation's version; a hook
uses it only when that key matches and otherwise parses the JSON itself (and rewrites the
twin). Both are replaced by rename, so a reader sees a whole old file or a whole new one,
never a mix, and a twin can never be served for a JSON file it was not derived from.

Serving rules, in the order they are checked (each failure is a named miss):
absent, unreadable, version, endpoint, future-dated, expired. ``age == ttl`` is still
servable; ``ttl == 0`` disables serving altogether. Standard library only.
"""

from __future__ import annotations

import marshal
import os

from yupana.state import atomic, paths, statefile, stores
# normalize_endpoint is part of this module's API (it is where caches compare endpoints).
from yupana.state.stores import normalize_endpoint as normalize_endpoint  # re-exported

from yupana import fastjson, globs, redact
from yupana.regex import prefilter as regex_prefilter

from yupana.planes import CACHE_VERSION, LIST_PLANES, OPTIONAL_PLANES

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from typing import Any

HOT_FORMAT = 3

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


def endpoint_key(configured: str, root: str | None = None) -> str:
    """The ``endpoint`` a cache for the configured ``[yupana.quipu] endpoint`` carries.

    ``http(s)://…`` without trailing ``/``; ``file:a,b`` with each location made absolute
    (relative ones against ``root``), so a hook and the refresher agree without walking
    directories; an empty endpoint is the bundled example catalogue (``yupana project``
    only). Cheap and standard-library only: hooks compute it on every call.
    """
    configured = redact.redact_url((configured or "").strip())
    if not configured:
        configured = "file:" + os.path.join(paths.source_root(), "fixtures", "catalogue")
    if configured.startswith("file:"):
        location = configured[len("file://"):] if configured.startswith("file://") else configured[len("file:"):]
        base = root or os.getcwd()
        parts = [p.strip() for p in location.split(",") if p.strip()]
        return "file:" + ",".join(os.path.normpath(os.path.join(base, os.path.expanduser(p))) for p in parts)
    return normalize_endpoint(configured)


def hot_path_for(path: str) -> str:
    base, _ = os.path.splitext(path)
    return base + ".hot"


def _hot_key(st: os.stat_result) -> tuple[Any, ...]:
    """What ties a hot twin to one exact projection.json (and to this derivation code)."""
    return (HOT_FORMAT, regex_prefilter.ALGORITHM, st.st_ino, st.st_size, st.st_mtime_ns)


# ── writing (cold path) ─────────────────────────────────────────────────────────────


def save(cache: dict[str, Any], path: str | None = None) -> str | None:
    """Write ``cache`` atomically, then its hot twin. Return None, or why it failed.

    A failed write leaves the previous files exactly as they were.
    """
    return save_detailed(cache, path)[0]


def save_detailed(cache: dict[str, Any], path: str | None = None) -> tuple[str | None, str | None]:
    """Like :func:`save`; returns ``(error, hot_error)``.

    ``error`` means projection.json was not replaced (the prior cache is untouched).
    ``hot_error`` means the JSON was written but its hot twin was not: hooks then parse the
    JSON (slower, still correct) and rewrite the twin themselves.
    """
    cache = dict(cache)
    cache["version"] = CACHE_VERSION
    cache["endpoint"] = normalize_endpoint(cache.get("endpoint", ""))
    target = path
    if not target:
        target = stores.cache_path(cache["endpoint"])
    if not target:
        return "no cache path: set YUPANA_PROJECTION_CACHE_PATH, XDG_STATE_HOME or HOME", None
    for key in ("source", "notices"):
        if cache.get(key):
            cache[key] = redact.redact_fields(cache[key])
    from yupana.state import cache_entries

    try:
        body = fastjson.dumps(cache).encode("utf-8")
        malformed = cache_entries.check(cache)
        if malformed:
            return f"refusing to write a malformed cache to {target}: {malformed}", None
        os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
        st = atomic.write(target, body, fsync=True)
    except (OSError, ValueError) as exc:
        return f"cannot write {target}: {getattr(exc, 'strerror', None) or exc}", None
    try:
        _write_twin(target, st, derive_hot(cache), _sha1(body))
    except (OSError, ValueError) as exc:
        _unlink(hot_path_for(target))
        return None, f"cannot write {hot_path_for(target)}: {getattr(exc, 'strerror', None) or exc}"
    return None, None


def _write_twin(target: str, st: os.stat_result, derived: dict[str, Any], json_sha1: str) -> None:
    twin = {"key": _hot_key(st), "json_sha1": json_sha1, "cache": derived}
    atomic.write(hot_path_for(target), marshal.dumps(twin))


def _sha1(data: bytes) -> str:
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


def derive_hot(cache: dict[str, Any]) -> dict[str, Any]:
    """Add what hooks would otherwise compute per call: regex prefilters and glob tokens.

    Derived keys start with an underscore and never appear in projection.json. A glob that
    does not compile keeps ``None`` tokens; the evaluators turn that into a loud fail-open.
    """
    out = dict(cache)
    rules = []
    for rule in cache.get("text_rules") or ():
        rule = dict(rule)
        rule["_prefilter"] = regex_prefilter.prefilter(rule.get("pattern") or "")
        rules.append(rule)
    out["text_rules"] = rules
    memory = []
    for pol in cache.get("memory_policies") or ():
        pol = dict(pol)
        pol["_prefilter"] = regex_prefilter.prefilter(pol.get("command_regex") or "")
        memory.append(pol)
    out["memory_policies"] = memory
    out["tripwires"] = [_with_globs(w, "paths") for w in cache.get("tripwires") or ()]
    policies = []
    for pol in cache.get("policies") or ():
        pol = dict(pol)
        pol["_applies_to"] = _compile_all((pol.get("rule") or {}).get("applies_to") or ())
        policies.append(pol)
    out["policies"] = policies
    # Hooks look a repository's exposure up by name: one small dict marshals ~4x faster than
    # the entries (the JSON keeps them; a hook never needs their IRI or comment).
    out["_repo_exposure"] = {e["repo"]: e.get("exposure") for e in cache.get("repo_exposure") or ()
                             if isinstance(e, dict) and isinstance(e.get("repo"), str)}
    out["repo_exposure"] = []
    return out


def _with_globs(entry: dict[str, Any], key: str) -> dict[str, Any]:
    entry = dict(entry)
    entry["_" + key] = _compile_all(entry.get(key) or ())
    return entry


def _compile_all(patterns: list[Any] | tuple[Any, ...]) -> list[Any] | None:
    try:
        return [globs.compile_glob(p) for p in patterns]
    except globs.GlobError:
        return None


# ── reading (hot path) ──────────────────────────────────────────────────────────────


def load_servable(path: str | None, endpoint: str, ttl: int, now: int, hot: bool = True) -> tuple[dict[str, Any] | None, Miss | None]:
    """The cache to serve for ``endpoint`` at ``now``, or the named reason there is none.

    With ``hot`` the result carries the derived keys of :func:`derive_hot`.
    """
    if not path:
        return None, Miss("absent", "no cache path could be resolved (set YUPANA_PROJECTION_CACHE_PATH, XDG_STATE_HOME or HOME)")
    cache, miss = read(path, hot=hot)
    if miss:
        return None, miss
    assert cache is not None
    found = cache.get("endpoint")
    if normalize_endpoint(str(found)) != normalize_endpoint(endpoint):
        return None, Miss("endpoint", f"the cache at {path} was written for {found!r}, not {endpoint!r}; refusing another deployment's policy")
    written = cache["written_at"]
    if written > now:
        return None, Miss("future-dated", f"the cache at {path} is dated {written - now}s in the future (clock moved backwards?)")
    age = now - written
    if ttl <= 0:
        return None, Miss("expired", f"cache serving is disabled (projection_cache_ttl_secs = 0); the cache is {age}s old")
    if age > ttl:
        return None, Miss("expired", f"the cache at {path} is {age}s old, past projection_cache_ttl_secs = {ttl}")
    return cache, None


def read(path: str, hot: bool = True) -> tuple[dict[str, Any] | None, Miss | None]:
    """Read and shape-check the cache file, preferring the hot twin when it matches.

    With ``hot``, a JSON read (no twin, or one for another file) is followed by rewriting
    the twin (best effort), so only the first hook after a foreign write pays for it.
    """
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None, Miss("absent", f"no projection cache at {path} (run `yupana project`)")
    except OSError as exc:
        return None, Miss("unreadable", f"cannot stat {path}: {exc.strerror}")
    if hot:
        try:
            twin = marshal.loads(statefile.read(hot_path_for(path), statefile.CACHE_LIMIT))
            if isinstance(twin, dict) and twin.get("key") == _hot_key(st):
                return _check_shape(twin["cache"], path, entries=False)  # checked when it was derived
        except (OSError, EOFError, ValueError, TypeError, KeyError):
            pass
    try:
        data = statefile.read(path, statefile.CACHE_LIMIT)
        cache = fastjson.loads(data)
    except statefile.Refused as exc:
        return None, Miss("unreadable", f"refusing to read {exc}")
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        return None, Miss("unreadable", f"cannot read {path}: {exc}")
    cache, miss = _check_shape(cache, path)
    if miss or not hot:
        return cache, miss
    assert cache is not None
    derived = derive_hot(cache)
    try:
        fst = os.stat(path)
        if fst.st_size == len(data) and fst.st_ino == st.st_ino and fst.st_mtime_ns == st.st_mtime_ns:
            _write_twin(path, fst, derived, _sha1(data))
    except (OSError, ValueError):
        pass
    return derived, None


def _check_shape(cache: object, path: str, entries: bool = True) -> tuple[dict[str, Any] | None, Miss | None]:
    if not isinstance(cache, dict):
        return None, Miss("unreadable", f"{path} does not hold a JSON object")
    version = cache.get("version")
    if version != CACHE_VERSION:
        return None, Miss("version", f"{path} has cache version {version!r}; this yupana reads version {CACHE_VERSION}")
    written = cache.get("written_at")
    if not isinstance(written, int) or isinstance(written, bool) or not isinstance(cache.get("endpoint"), str):
        return None, Miss("unreadable", f"{path} lacks a valid written_at or endpoint")
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
    if entries:
        from yupana.state import cache_entries

        malformed = cache_entries.check(cache)
        if malformed:
            return None, Miss("unreadable", f"{path}: malformed entry {malformed}; refusing the whole cache "
                                            "(run `yupana project` to rewrite it)")
    return cache, None
