"""Signed rule-set bundles: one validated projection, signed once, served to a fleet. Cold path.

A bundle is one file any static HTTP server, object store or CDN can serve (docs/bundles.md)::

    yupana-bundle/1\\n
    {"confirmed_at": …, "digest": "sha256:…", "endpoint": "…", "key_id": "ed25519:…", "signature": "…"}\\n
    <payload: the cache object as JSON, ``written_at`` = the time the store confirmed it>

The ed25519 signature covers ``yupana-bundle/1\\n`` + the payload bytes. The header repeats
the payload's digest, endpoint and confirmation time (and names the key) for readers; a
verifier trusts only the payload and refuses a header that disagrees with it. The key id is
``ed25519:`` + the first 16 hex digits of the SHA-256 of the raw 32-byte public key, so a
host needs no separate id table: it lists the public keys it trusts (several, for rotation).

``cryptography`` is imported inside the functions that sign or verify: never on a hook.
"""

from __future__ import annotations

from typing import Any

import base64
import hashlib
import json

from yupana.projection.bundle_error import BundleError as BundleError  # raised here and by the content check

MAGIC = b"yupana-bundle/1\n"
KEY_PREFIX = "ed25519:"


def key_id(raw_public: bytes) -> str:
    """The key id of a raw 32-byte ed25519 public key."""
    return KEY_PREFIX + hashlib.sha256(raw_public).hexdigest()[:16]


def public_key_text(raw_public: bytes) -> str:
    """The form ``trusted_keys`` takes: ``ed25519:<base64 of the raw public key>``."""
    return KEY_PREFIX + base64.b64encode(raw_public).decode("ascii")


def generate_private_pem(*, der: bool = False) -> tuple[bytes, bytes]:
    """A new key pair: (PKCS#8 private key — PEM, or DER with ``der`` — raw public key)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    key = Ed25519PrivateKey.generate()
    encoding = serialization.Encoding.DER if der else serialization.Encoding.PEM
    pem = key.private_bytes(encoding, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    return pem, _raw_public(key.public_key())


def public_of(private_key: Any) -> bytes:
    """The raw 32-byte public key of an ed25519 private key."""
    return _raw_public(private_key.public_key())


def load_private(path: str) -> Any:
    """The ed25519 private key in the PKCS#8 file ``path`` (PEM, or DER as a ``.pk8`` file
    holds it); BundleError(key) otherwise."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    try:
        with open(path, "rb") as fh:
            data = fh.read()
        if data.lstrip().startswith(b"-----BEGIN"):
            key = serialization.load_pem_private_key(data, password=None)
        else:
            key = serialization.load_der_private_key(data, password=None)
    except (OSError, ValueError, TypeError) as exc:
        raise BundleError("key", f"cannot read the signing key {path}: {getattr(exc, 'strerror', None) or exc}") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise BundleError("key", f"the signing key {path} is not an ed25519 key")
    return key


def trusted_public_keys(entries: list[str], base_dir: str) -> dict[str, bytes]:
    """key id -> raw public key, for each ``trusted_keys`` entry: ``ed25519:<base64>`` inline, or
    the path (relative to ``base_dir``) of a PEM public key. BundleError(key) names a bad entry."""
    import os

    out: dict[str, bytes] = {}
    for entry in entries:
        entry = entry.strip()
        if entry.startswith(KEY_PREFIX):
            try:
                raw = base64.b64decode(entry[len(KEY_PREFIX):], validate=True)
            except ValueError:
                raw = b""
            if len(raw) != 32:
                raise BundleError("key", f"trusted key {entry[:24]}… is not ed25519:<base64 of 32 bytes>")
        else:
            from cryptography.hazmat.primitives import serialization
            from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

            path = os.path.join(base_dir, os.path.expanduser(entry))
            try:
                with open(path, "rb") as fh:
                    key = serialization.load_pem_public_key(fh.read())
            except (OSError, ValueError) as exc:
                raise BundleError("key", f"cannot read trusted key {path}: {getattr(exc, 'strerror', None) or exc}") from None
            if not isinstance(key, Ed25519PublicKey):
                raise BundleError("key", f"trusted key {path} is not an ed25519 public key")
            raw = _raw_public(key)
        out[key_id(raw)] = raw
    return out


def build(cache: dict[str, Any], private_key: Any) -> bytes:
    """The signed bundle of ``cache`` (a servable cache object, ``written_at`` included)."""
    payload = json.dumps(cache, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    raw = _raw_public(private_key.public_key())
    header = {"key_id": key_id(raw), "digest": cache.get("digest"), "endpoint": cache.get("endpoint"),
              "confirmed_at": cache.get("written_at"),
              "signature": base64.b64encode(private_key.sign(MAGIC + payload)).decode("ascii")}
    return MAGIC + json.dumps(header, sort_keys=True, separators=(",", ":")).encode("utf-8") + b"\n" + payload


def header_of(data: bytes) -> dict[str, Any]:
    """The header of a bundle (unverified); BundleError(format) when it is not one."""
    if not data.startswith(MAGIC):
        raise BundleError("format", "not a yupana bundle (it does not start with yupana-bundle/1)")
    end = data.find(b"\n", len(MAGIC))
    return header_line(data[len(MAGIC):end] if end >= 0 else None)


def header_line(line: bytes | None) -> dict[str, Any]:
    """The header of a bundle from its second line (None: there is none); BundleError(format)."""
    try:
        header = json.loads(line) if line is not None else None
    except ValueError:
        header = None
    if not isinstance(header, dict) or not isinstance(header.get("signature"), str):
        raise BundleError("format", "the bundle header is not a JSON object with a signature")
    return header


def check_key(header: dict[str, Any], trusted: dict[str, bytes]) -> str:
    """The header's key id when it is among ``trusted``; BundleError(unknown-key) otherwise."""
    kid = header.get("key_id")
    if not isinstance(kid, str) or kid not in trusted:
        raise BundleError("unknown-key", f"signed by {kid!r}, which is not among the {len(trusted)} trusted key(s) "
                                         "([yupana.bundle] trusted_keys)")
    return kid


def verify(data: bytes, trusted: dict[str, bytes]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(header, cache) of a bundle whose signature one of ``trusted`` verifies; BundleError otherwise.

    Checks, in order: the format, the key id is trusted, the signature over the payload, the
    payload is a cache object, the header agrees with it, its content is what a refresh would
    have written (:mod:`yupana.projection.bundle_content`: ``content``, ``compile``), and its
    digest is its rules' digest.
    Endpoint and age are the caller's (:func:`check_servable`).
    """
    header = header_of(data)
    check_key(header, trusted)
    return verify_signed(header, MAGIC + data[len(MAGIC):].partition(b"\n")[2], trusted)


def verify_signed(header: dict[str, Any], message: Any, trusted: dict[str, bytes]) -> tuple[dict[str, Any], dict[str, Any]]:
    """:func:`verify` given the header and the signed message, ``MAGIC`` + the payload, as any
    buffer (bytes, or the read-only map of a downloaded bundle: never copied before it verifies)."""
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    kid = check_key(header, trusted)
    try:
        signature = base64.b64decode(header["signature"], validate=True)
        Ed25519PublicKey.from_public_bytes(trusted[kid]).verify(signature, message)
    except (InvalidSignature, ValueError):
        raise BundleError("signature", f"the signature does not verify with {kid}: the bundle was altered "
                                       "after signing (or signed by another key)") from None
    try:
        with memoryview(message) as whole, whole[len(MAGIC):] as payload:
            text = str(payload, "utf-8")
        cache = json.loads(text)
    except (ValueError, RecursionError):  # not UTF-8, not JSON, or nested past the parser's depth
        cache = None
    text = ""
    if not isinstance(cache, dict) or not isinstance(cache.get("written_at"), int):
        raise BundleError("format", "the signed payload is not a cache object with written_at")
    for name, value in (("digest", cache.get("digest")), ("endpoint", cache.get("endpoint")),
                        ("confirmed_at", cache.get("written_at"))):
        if header.get(name) != value:
            raise BundleError("tampered", f"the header's {name} {header.get(name)!r} is not the signed {value!r}")
    from yupana.projection import bundle_content
    from yupana.projection.digest import rule_set_digest

    bundle_content.check(cache)  # as the refresh checks what it projected: shapes, then compile steps
    if rule_set_digest(cache) != cache.get("digest"):
        raise BundleError("tampered", "the signed digest is not the digest of the signed rules")
    return header, cache


def check_servable(cache: dict[str, Any], endpoint: str, ttl: int, now: int) -> None:
    """The cache rules (docs/cache-format.md) applied to a bundle: its endpoint must be the one this
    host is configured for, it must not be future-dated, and its age (from the time the store
    confirmed it) must not exceed the TTL (``age == ttl`` is servable)."""
    from yupana.state import cache as cache_mod

    found = cache_mod.normalize_endpoint(str(cache.get("endpoint") or ""))
    if found != endpoint:
        raise BundleError("endpoint", f"the bundle is for {found!r}, this host is configured for {endpoint!r}")
    confirmed = int(cache["written_at"])
    if confirmed > now:
        raise BundleError("future-dated", f"the bundle was confirmed at {confirmed}, after now ({now})")
    if now - confirmed > ttl:
        raise BundleError("expired", f"the bundle was confirmed {now - confirmed}s ago, past "
                                     f"projection_cache_ttl_secs = {ttl}")


def _raw_public(public_key: Any) -> bytes:
    from cryptography.hazmat.primitives import serialization

    return bytes(public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw))
