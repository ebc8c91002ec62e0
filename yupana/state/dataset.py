"""The identity of the dataset a store serves: everything that selects a cache's data. Stdlib only.

One URL is not one dataset. Two projects on one host may read one Oxigraph with
``default_graph = "urn:team-a"`` and ``"urn:team-b"``, or one endpoint with ``?apikey=A`` and
``?apikey=B``; each must get its own rules. So a store's state directory
(:func:`yupana.state.paths.store_dir`) and the ``dataset`` field of its cache are keyed on
:func:`identity`, which holds, in this order and separated by `` | ``:

* the cache key of the endpoint (:func:`endpoint_key`: redacted, no
  trailing ``/``, ``file:`` locations absolute);
* ``default_graph=`` the configured default graph (``-`` when none);
* ``auth=`` who the store is asked as: ``none``, ``basic:<auth_user>`` or ``bearer``, with where
  the secret is read from (``env:<credentials_env>``, ``file:<credentials_file>``) — never the
  secret;
* ``masked=`` a keyed hash of the endpoint as configured when redaction masked anything in it
  (userinfo, credential-like parameter values), ``-`` otherwise. The literal ``***`` of a
  redacted URL would make ``?apikey=A`` and ``?apikey=B`` one dataset; the plain value must not
  reach a state file. The key (:func:`host_key`) is 32 random bytes made once per state
  directory (``dataset.key``, mode 0600), so the hash cannot be tried against guessed secrets
  without it.

The dialect is not part of it: it is how the store is spoken to, and one URL answers one
dialect. A cache records the dialect it was read with (``dialect``), and when one is configured
a cache read with another is refused like another dataset's (:func:`yupana.state.cache.dataset_miss`).

A hook sees only the redacted configuration (the settings snapshot); the snapshot therefore
carries the hash, computed when the configuration was resolved with the real URL, as
``[yupana.quipu]`` ``masked_digest`` (:func:`masked_digest`), and :func:`identity` takes it
from there.
"""

from __future__ import annotations

import os

from yupana import redact
from yupana.state import paths
from yupana.state.stores import normalize_endpoint

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from typing import Any

KEY_NAME = "dataset.key"
KEY_BYTES = 32
MASKED_FIELD = "masked_digest"  # the snapshot's [yupana.quipu] key holding masked_digest()
SEPARATOR = " | "


def identity(quipu: dict[str, Any], root: str | None = None) -> str:
    """The dataset identity of the store ``quipu`` (a ``[yupana.quipu]`` table) names."""
    configured = (quipu.get("endpoint") or "").strip()
    key = endpoint_key(configured, root)
    masked = quipu.get(MASKED_FIELD)
    if not isinstance(masked, str):
        masked = masked_digest(configured)
    graph = quipu.get("default_graph") or "-"
    return SEPARATOR.join((key, f"default_graph={graph}", f"auth={_auth(quipu)}", f"masked={masked or '-'}"))


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


def endpoint_of(ident: str) -> str:
    """The endpoint cache key an identity starts with."""
    return ident.split(SEPARATOR, 1)[0]


def masked_digest(url: str) -> str:
    """A keyed hash (hex) of ``url`` when redaction would mask anything in it, else ``""``.

    An already-redacted URL (its masked values are ``***``) has no hash of its own: ``"?"``,
    which never equals a real one, so a configuration seen only redacted never shares a store.
    """
    url = (url or "").strip().rstrip("/")
    if not url or url.startswith("file:") or redact.redact_url(url) == url:
        return "?" if redact.MASK in url else ""
    return _keyed(url.encode("utf-8", "surrogateescape"))


def host_key() -> bytes | None:
    """This state directory's secret (made on first use, mode 0600), or None when none can be kept."""
    base = paths.state_dir()
    explicit = paths.explicit_projection_cache()
    if not base and explicit:
        base = os.path.dirname(os.path.abspath(explicit))
    if not base:
        return None
    path = os.path.join(base, KEY_NAME)
    from yupana.state import statefile

    for _ in range(2):
        try:
            found = statefile.read(path, 4096)
            if len(found) == KEY_BYTES:
                return found
            return None  # not ours: never overwritten (an operator's file), no key
        except FileNotFoundError:
            pass
        except OSError:
            return None
        try:
            os.makedirs(base, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        except FileExistsError:
            continue  # another process made it a moment ago: read theirs
        except OSError:
            return None
        secret = os.urandom(KEY_BYTES)
        try:
            os.write(fd, secret)
        finally:
            os.close(fd)
        return secret
    return None


def _keyed(data: bytes) -> str:
    try:
        from _blake2 import blake2b  # the extension module: hashlib would load OpenSSL (~3 ms per hook)
    except ImportError:  # pragma: no cover - interpreters built without it
        from hashlib import blake2b
    key = host_key()
    if key is None:  # no state directory to keep a key in: unkeyed, still never the literal ***
        return "u" + blake2b(data, digest_size=16, person=b"yupana-dataset").hexdigest()
    return "k" + blake2b(data, digest_size=16, key=key, person=b"yupana-dataset").hexdigest()


def _auth(quipu: dict[str, Any]) -> str:
    scheme = str(quipu.get("auth") or "none").lower()
    if scheme == "none":
        return "none"
    who = f"basic:{quipu.get('auth_user') or ''}" if scheme == "basic" else scheme
    source = f"env:{quipu.get('credentials_env') or 'YUPANA_SPARQL_SECRET'}"
    if quipu.get("credentials_file"):
        source += f",file:{quipu.get('credentials_file')}"
    return f"{who}@{source}"
