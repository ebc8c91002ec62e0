"""A host's refresh from a signed rule-set bundle instead of the store. Cold path.

:func:`fetch` GETs ``[yupana.bundle] url`` with the validators of the bundle installed last
(``If-None-Match`` with its ETag, ``If-Modified-Since`` with its Last-Modified: a plain
``python -m http.server`` honours the second, most object stores and CDNs the first). A 304
costs one small request and re-confirms nothing by itself: the installed cache keeps its own
``written_at`` (the time the store confirmed it), so it is still refused past the TTL. A 200
is streamed to disk (:mod:`yupana.workers.bundle_download`: never held whole, garbage stopped
at its first line), verified (:func:`yupana.projection.bundle.verify_signed`: a trusted key,
the signature, the header agreeing with the signed payload, the content a refresh would have
written) and checked as the cache rules demand (endpoint, future date, age against
``projection_cache_ttl_secs``, never older than the newest installed: :func:`forward_only`)
before the refresher installs it through the one save path. Anything else is a
:class:`BundleError` with its kind; the caller records it and the prior cache keeps serving.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from dataclasses import dataclass

from yupana.projection.bundle import BundleError

from yupana.workers.bundle_download import MAX_BUNDLE_BYTES as MAX_BUNDLE_BYTES, Download


@dataclass
class Fetched:
    """What one fetch found: ``download`` None means 304 (the installed bundle is current)."""

    download: Download | None
    etag: str | None
    last_modified: str | None
    size: int


def fetch(url: str, quipu: dict[str, Any], prior: dict[str, Any], download: Download, *,
          deadline_secs: float) -> Fetched:
    """GET the bundle at ``url`` into ``download`` (streamed to disk, :mod:`bundle_download`;
    ``prior``: refresh-state's ``bundle`` record of the installed one, for the validators)."""
    if url.startswith("file:"):
        download.read_file(url[len("file:"):])
        download.finish()
        return Fetched(download, None, None, download.size)
    # The store's own HTTP transport: the same time limits, no proxies, no redirects, and the one
    # place httpx failures are translated (yupana.endpoint.errors), here into the bundle's kinds.
    from yupana.endpoint import Deadline, DeadlineError, EndpointError, HTTPStatus, StoreTimeout, TooLarge
    from yupana.endpoint.http import Http

    headers = {"Accept": "application/octet-stream"}
    if prior.get("etag"):
        headers["If-None-Match"] = prior["etag"]
    if prior.get("last_modified"):
        headers["If-Modified-Since"] = prior["last_modified"]
    timeout = min(float(quipu.get("request_timeout_secs") or 2.0) * 5, max(0.1, deadline_secs))
    http = Http(connect_timeout=float(quipu.get("connect_timeout_secs") or 2.0), request_timeout=timeout)
    try:
        response = http.get(url, what="the bundle", deadline=Deadline(max(0.1, deadline_secs)), headers=headers,
                            sink=download)
    except (StoreTimeout, DeadlineError) as exc:
        raise BundleError("timeout", f"fetching the bundle timed out: {exc.message}") from None
    except TooLarge:
        raise BundleError("format", f"the bundle is larger than {MAX_BUNDLE_BYTES} bytes") from None
    except HTTPStatus as exc:
        raise BundleError("http", f"the bundle server answered: {exc.message}") from None
    except EndpointError as exc:
        raise BundleError("connect", f"cannot fetch the bundle: {exc.message}") from None
    finally:
        http.close()
        download.close()
    if response.status == 304:
        return Fetched(None, prior.get("etag"), prior.get("last_modified"), 0)
    if response.status != 200:
        raise BundleError("http", f"the bundle server answered HTTP {response.status}")
    download.finish()
    return Fetched(download, response.headers.get("etag"), response.headers.get("last-modified"), download.size)


def trusted_keys(bundle_cfg: dict[str, Any], root: str) -> dict[str, bytes]:
    """key id -> raw public key of ``[yupana.bundle] trusted_keys`` (BundleError when there is none)."""
    from yupana.projection import bundle

    if not bundle_cfg.get("trusted_keys"):
        raise BundleError("unknown-key", "no trusted key is configured ([yupana.bundle] trusted_keys): "
                                         "a bundle is never installed unverified")
    return bundle.trusted_public_keys(list(bundle_cfg["trusted_keys"]), root)


def verified(fetched: Fetched, endpoint: str, ttl: int, now: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """(header, cache) of a downloaded bundle, verified and checked (BundleError otherwise)."""
    from yupana.projection import bundle
    from yupana.workers.bundle_download import verified_cache

    if fetched.download is None:
        raise BundleError("format", "nothing was downloaded")
    header, cache = verified_cache(fetched.download)
    bundle.check_servable(cache, endpoint, ttl, now)
    return header, cache


def body(url: str, bundle_cfg: dict[str, Any], root: str, quipu: dict[str, Any], key: str, path: str, state: dict[str, Any], now: int,
         say: Callable[[str], None], outcome: Any) -> dict[str, Any] | None:
    """The verified cache a bundle host installs, or None on a 304 for a bundle still within its TTL
    (``outcome`` then says ``not-modified``). Raises BundleError; fills ``outcome.bundle``."""
    from yupana.redact import redact_url
    from yupana.state import cache as cache_mod

    from yupana.projection import bundle

    ttl = int(quipu.get("projection_cache_ttl_secs", 3600))
    installed, miss = cache_mod.read_json(path)
    prior = dict(state.get("bundle") or {})
    current = (miss is None and installed is not None and installed.get("digest") == prior.get("digest")
               and installed.get("written_at") == prior.get("confirmed_at"))
    validators = prior if current else {}  # never a 304 for a bundle this host no longer holds
    shown = redact_url(url) if "://" in url else url
    download = Download(os.path.dirname(path) or ".", trusted_keys(bundle_cfg, root))
    say(f"fetching the rule-set bundle {shown}")
    try:
        fetched = fetch(url, quipu, validators, download,
                        deadline_secs=float(quipu.get("refresh_deadline_secs") or 20.0))
    except BaseException:
        download.discard()
        raise
    if fetched.download is None:
        if not current or installed is None:
            raise BundleError("unsolicited-304", "the bundle server answered 304 Not Modified to a request that named "
                                                 "no bundle (no bundle is installed here to be current): nothing to "
                                                 "install; check the server or CDN configuration")
        bundle.check_servable(installed, key, ttl, now)  # a 304 extends nothing: past its TTL it is refused
        outcome.status = "not-modified"
        outcome.written_at, outcome.digest = installed["written_at"], installed.get("digest")
        outcome.dialect, outcome.counts = installed.get("dialect"), dict(installed.get("counts") or {})
        outcome.bundle = dict(prior, checked_at=now)
        say(f"bundle not modified (HTTP 304): {prior.get('digest')}, confirmed {now - installed['written_at']}s ago")
        return None
    header, cache = verified(fetched, key, ttl, now)
    # refresh-state.json gone (deleted, unreadable) but a cache installed: it is the floor
    floor = installed.get("written_at") if not state and miss is None and installed is not None else None
    highest = forward_only(prior, header, shown, floor if isinstance(floor, int) else None)
    outcome.bundle = {"source": shown, "etag": fetched.etag, "last_modified": fetched.last_modified,
                      "key_id": header.get("key_id"), "digest": header.get("digest"),
                      "confirmed_at": header.get("confirmed_at"), "checked_at": now, "bytes": fetched.size,
                      "highest_confirmed_at": highest}
    say(f"bundle verified ({header.get('key_id')}, {fetched.size} bytes)")
    return cache


def highest_seen(prior: dict[str, Any]) -> int | None:
    """The newest confirmation time of any bundle this host installed (refresh-state's ``bundle``
    record keeps it across failures and 304s), or None before the first."""
    seen = [v for v in (prior.get("highest_confirmed_at"), prior.get("confirmed_at"))
            if isinstance(v, int) and not isinstance(v, bool)]
    return max(seen) if seen else None


def forward_only(prior: dict[str, Any], header: dict[str, Any], shown: str, floor: int | None = None) -> int:
    """The new high-water mark for a verified bundle confirmed at ``header["confirmed_at"]``;
    BundleError(rollback) — and a ``bundle_rollback`` record — when a bundle confirmed later was
    installed here before. A genuine older bundle served again (a replay, a stale mirror, a CDN
    rolled back) would silently drop every rule added since, saying "fresh"; a publisher that
    means to go back rebuilds, and the rebuilt bundle is confirmed now. ``floor``: the installed
    cache's confirmation when refresh-state.json (and the mark in it) was lost."""
    confirmed = int(header["confirmed_at"])
    seen = [v for v in (highest_seen(prior), floor) if v is not None]
    highest = max(seen) if seen else None
    if highest is None or confirmed >= highest:
        return max(confirmed, highest or confirmed)
    from yupana.state import spool

    spool.record("bundle_rollback", {"source": shown, "offered_confirmed_at": confirmed,
                                     "offered_digest": header.get("digest"), "highest_confirmed_at": highest,
                                     "installed_digest": prior.get("digest")})
    raise BundleError("rollback", f"the bundle was confirmed at {confirmed}, {highest - confirmed}s before the newest "
                                  f"one this host installed (confirmed at {highest}, {prior.get('digest')}): an older "
                                  "bundle is never installed over a newer one; the publisher rebuilds to go back")
