"""The one error a bundle is refused with (:mod:`yupana.projection.bundle`), apart so that the
content check (:mod:`yupana.projection.bundle_content`) raises it without importing the
bundle reader that loads it: no import circle."""

from __future__ import annotations


class BundleError(Exception):
    """A bundle refused, with a stable ``kind``: format, unknown-key, signature, tampered, content,
    compile, endpoint, expired, future-dated, rollback, unsolicited-304, key (a key that cannot be
    read); the fetch adds connect, timeout, http."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
