"""The one error a bundle is refused with (:mod:`yupana.projection.bundle`, its content checks in
:mod:`yupana.projection.bundle_content`): a module of its own so the checks need not import the reader."""

from __future__ import annotations


class BundleError(Exception):
    """A bundle refused, with a stable ``kind``: format, unknown-key, signature, tampered, content,
    compile, endpoint, expired, future-dated, rollback, unsolicited-304, key (a key that cannot be
    read); the fetch adds connect, timeout, http."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
