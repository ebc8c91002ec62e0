"""Landing certification records: the signed form, the spool they live in, and their verification.

A certification is one JSON object per line of the landing spool (``landing.jsonl``:
``$YUPANA_LANDING_PATH``, else beside ``metrics.jsonl``; docs/records.md) — its own population:
``guard`` records measure edit evaluations, ``landing-*`` records push evaluations, and
neither file ever holds the other's. The record's ``kind`` is its outcome:
``landing-certified``, ``landing-refused`` or ``landing-unknown``.

Signing (ed25519, the key of ``[yupana.quipu] signing_key_path``, resolved against the
project root; the same key format and key id as signed bundles,
:mod:`yupana.projection.bundle`): the signature covers ``yupana-landing/1\\n`` followed by
the record without its ``signature`` field, as JSON with sorted keys, no whitespace and
UTF-8 text (:func:`canonical`). A signed record says ``signed: true`` and carries ``key_id``
and ``signature`` (base64). Without a usable key the record is written with ``signed:
false`` and ``unsigned_reason`` — it never claims a signature. The record is redacted
before it is signed, so what is signed is exactly what is written.

:func:`verify` checks, in order: the format (a JSON object of a ``landing-*`` kind and this
format), that it claims a signature (``unsigned``), that the key is trusted
(``unknown-key``), the signature over every field (``signature``: a changed byte, or another
key), and that the kind follows from the requirements the record lists (``inconsistent``:
a record may not call itself certified when what it shows is not).

``cryptography`` is imported only by the functions that sign, read a key or verify.
"""

from __future__ import annotations

from typing import Any

import base64
import json
import os

FORMAT = "yupana-landing/1"
MAGIC = (FORMAT + "\n").encode("ascii")
KEYGEN_HINT = "`yupana landing keygen` creates it"


class Refusal(Exception):
    """A record that does not verify: a stable ``kind`` and a sentence."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


class SigningKey:
    """The configured signing key: ``path`` (resolved), ``present`` (the file exists), and once
    :meth:`load` ran, ``private``/``key_id`` or ``error``."""

    __slots__ = ("path", "configured", "present", "private", "key_id", "error")

    def __init__(self, path: str | None, configured: str | None) -> None:
        self.path = path
        self.configured = configured
        self.present = bool(path) and os.path.isfile(path or "")
        self.private: Any = None
        self.key_id: str | None = None
        self.error: str | None = None

    def load(self) -> bool:
        """Read the key (imports cryptography); False with :attr:`error` when it cannot be used."""
        if self.private is not None:
            return True
        if not self.present or not self.path:
            self.error = f"no signing key at {self.path or '(unset)'} ([yupana.quipu] signing_key_path; {KEYGEN_HINT})"
            return False
        from yupana.projection import bundle

        try:
            self.private = bundle.load_private(self.path)
        except bundle.BundleError as exc:
            self.error = exc.message
            return False
        self.key_id = bundle.key_id(bundle.public_of(self.private))
        return True


def signing_key(cfg: dict[str, Any], root: str) -> SigningKey:
    """``[yupana.quipu] signing_key_path`` resolved against the project ``root`` (``~`` expanded)."""
    configured = str((cfg.get("quipu") or {}).get("signing_key_path") or "").strip() or None
    path = os.path.join(root, os.path.expanduser(configured)) if configured else None
    return SigningKey(os.path.normpath(path) if path else None, configured)


def canonical(record: dict[str, Any]) -> bytes:
    """The bytes a signature covers: the format line, then the record without ``signature``."""
    body = {k: v for k, v in record.items() if k != "signature"}
    return MAGIC + json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def line(record: dict[str, Any]) -> bytes:
    """The spool line of ``record`` (sorted keys, compact, newline-terminated)."""
    return json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8") + b"\n"


def redacted(record: dict[str, Any]) -> dict[str, Any]:
    """``record`` with every credential removed, as the metrics spool redacts its lines."""
    from yupana.redact import redact_text

    text = json.dumps(record, sort_keys=True, ensure_ascii=False)
    cleaned = redact_text(text)
    if cleaned == text:
        return record
    try:
        found = json.loads(cleaned)
    except ValueError:
        return record
    return found if isinstance(found, dict) else record


def seal(record: dict[str, Any], key: SigningKey) -> dict[str, Any]:
    """``record`` redacted, then signed with ``key`` — or marked unsigned, with the reason."""
    out = redacted(dict(record))
    out.pop("signature", None)
    if not key.load():
        out.pop("key_id", None)
        out.update(signed=False, unsigned_reason=key.error)
        return out
    out.update(signed=True, key_id=key.key_id)
    out.pop("unsigned_reason", None)
    out["signature"] = base64.b64encode(key.private.sign(canonical(out))).decode("ascii")
    return out


def read(path: str | None = None, max_bytes: int = 64 * 1024 * 1024) -> list[dict[str, Any]]:
    """The landing records of ``path`` (default: the landing spool), oldest first; torn or
    foreign lines are skipped."""
    from yupana.state import paths, spool

    target = path or paths.landing_spool()
    return [r for r in spool.read_tail(target, max_bytes) if str(r.get("kind", "")).startswith("landing-")] if target else []


def trusted_keys(entries: list[str], base_dir: str, key: SigningKey | None) -> dict[str, bytes]:
    """key id -> raw public key: each ``--key`` entry (``ed25519:<base64>`` or a PEM public key
    file), and the configured signing key's own public key when it is present and no entry is
    given. Refusal(key) names an entry that cannot be read."""
    from yupana.projection import bundle

    try:
        found = bundle.trusted_public_keys(entries, base_dir) if entries else {}
    except bundle.BundleError as exc:
        raise Refusal("key", exc.message) from None
    if not entries and key is not None and key.present:
        if not key.load():
            raise Refusal("key", key.error or "the signing key cannot be read")
        found[str(key.key_id)] = bundle.public_of(key.private)
    return found


def verify(record: object, trusted: dict[str, bytes]) -> str:
    """The key id that signed ``record``; Refusal (see the module docstring) otherwise."""
    from yupana.evaluate.landing import OUTCOME_OF_KIND, consistent

    if not isinstance(record, dict):
        raise Refusal("format", f"not a landing record: a JSON {type(record).__name__}, not an object")
    kind = record.get("kind")
    if kind not in OUTCOME_OF_KIND:
        raise Refusal("format", f"not a landing record: kind {kind!r} is not landing-certified, landing-refused or "
                                "landing-unknown")
    if record.get("format") != FORMAT:
        raise Refusal("format", f"format {record.get('format')!r} is not {FORMAT}")
    if record.get("signed") is not True:
        why = record.get("unsigned_reason")
        raise Refusal("unsigned", "the record is unsigned (it says so" + (f": {why}" if why else "") + "); there is "
                                  "no signature to verify")
    kid = record.get("key_id")
    if kid not in trusted:
        raise Refusal("unknown-key", f"signed by {kid!r}, which is not among the {len(trusted)} trusted key(s)")
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    try:
        signature = base64.b64decode(str(record.get("signature") or ""), validate=True)
        Ed25519PublicKey.from_public_bytes(trusted[str(kid)]).verify(signature, canonical(record))
    except (InvalidSignature, ValueError):
        raise Refusal("signature", f"the signature does not verify with {kid}: the record was changed after it was "
                                   "signed (or signed by another key)") from None
    problem = consistent(str(kind), record)
    if problem:
        raise Refusal("inconsistent", f"signed, but {problem}")
    return str(kid)
