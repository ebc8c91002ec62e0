"""SHA-1 hex digests of the texts state is named by: a store's directory (its dataset
identity), a project's key in records (its root). Hot path.

A hook would load the SHA-1 module (~0.2 ms, a C extension) for two short digests that never
change for a project, so the configuration snapshot (:mod:`yupana.settings`) carries them,
worked out when it was written, and a hook that reads it :func:`remember`\\ s them first: a
digest asked for again is looked up, not computed. Anything else is computed as before.
"""

from __future__ import annotations

_known: dict[str, str] = {}


def sha1_hex(text: str) -> str:
    """The SHA-1 of ``text`` (UTF-8, surrogates kept) in hex."""
    known = _known.get(text)
    if known is not None:
        return known
    try:
        from _sha1 import sha1  # the builtin module: hashlib would load OpenSSL (~3 ms per hook)
    except ImportError:  # pragma: no cover - interpreters built without it
        from hashlib import sha1
    hexed: str = sha1(text.encode("utf-8", "surrogateescape")).hexdigest()
    return hexed


def of(texts: list[str]) -> dict[str, str]:
    """``{text: sha1_hex(text)}``: what a snapshot carries."""
    return {text: sha1_hex(text) for text in texts}


def remember(known: object) -> None:
    """Take ``{text: digest}`` (from a snapshot) as known; anything not a str→str map is ignored."""
    if isinstance(known, dict):
        _known.update((k, v) for k, v in known.items() if isinstance(k, str) and isinstance(v, str))
