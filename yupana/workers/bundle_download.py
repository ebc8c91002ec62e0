"""A bundle streamed to disk as it arrives, then verified from a read-only map. Cold path.

A bundle may be as large as :data:`MAX_BUNDLE_BYTES` and is, until verified, anybody's bytes:
it is never held whole in memory. :class:`Download` takes the answer chunk by chunk (the HTTP
transport's sink, or a ``file:`` bundle read in blocks):

* the first line must be ``yupana-bundle/1`` and the second a JSON header of at most
  :data:`HEADER_LIMIT` bytes naming a trusted key — otherwise the read stops at once
  (``format``, ``unknown-key``): garbage costs the bytes read up to there, nothing more;
* the rest goes to ``bundle.download`` beside the cache (mode 0600, under the refresh lock),
  written as ``MAGIC`` + payload — exactly the message the signature covers;
* past the cap the read stops (``format``).

:func:`verified_cache` maps that file read-only and verifies the signature over the map (no
copy), decodes it, checks it (:func:`yupana.projection.bundle.verify_signed`) and removes
the file. What a bundle costs in memory is then the map while it is verified and the decoded
cache, never several copies of the download.
"""

from __future__ import annotations

from typing import Any

import os

from yupana.projection.bundle import MAGIC, BundleError

MAX_BUNDLE_BYTES = 256 << 20
HEADER_LIMIT = 64 << 10
DOWNLOAD_NAME = "bundle.download"


class Download:
    """The sink a bundle's bytes are written to (see the module doc)."""

    def __init__(self, directory: str, trusted: dict[str, bytes], limit: int = MAX_BUNDLE_BYTES) -> None:
        self.path = os.path.join(directory, DOWNLOAD_NAME)
        self.trusted = trusted
        self.limit = limit
        self.size = 0
        self.header: dict[str, Any] | None = None
        self._head = bytearray()
        self._fd: int | None = None

    def __call__(self, chunk: bytes) -> None:
        self.size += len(chunk)
        if self.size > self.limit:
            raise BundleError("format", f"the bundle is larger than {self.limit} bytes (the cap); nothing installed")
        if self.header is not None:
            self._write(chunk)
            return
        self._head += chunk
        self._take_header()

    def _take_header(self) -> None:
        from yupana.projection import bundle

        head = self._head
        if not (head.startswith(MAGIC) if len(head) >= len(MAGIC) else MAGIC.startswith(head)):
            raise BundleError("format", "not a yupana bundle (it does not start with yupana-bundle/1)")
        end = head.find(b"\n", len(MAGIC))
        if end < 0:
            if len(head) > len(MAGIC) + HEADER_LIMIT:
                raise BundleError("format", f"the bundle header is longer than {HEADER_LIMIT} bytes")
            return
        header = bundle.header_line(bytes(head[len(MAGIC):end]))
        bundle.check_key(header, self.trusted)  # an unknown key is refused before its payload is read
        self.header = header
        rest = bytes(head[end + 1:])
        self._head = bytearray()
        self._write(MAGIC)
        self._write(rest)

    def _write(self, data: bytes) -> None:
        try:
            if self._fd is None:
                os.makedirs(os.path.dirname(self.path) or ".", exist_ok=True)
                self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
            view = memoryview(data)
            while view:
                view = view[os.write(self._fd, view):]
        except OSError as exc:
            raise BundleError("write", f"cannot write the download {self.path}: {exc.strerror or exc} (the state "
                                       "directory must be writable and have room for the bundle)") from None

    def read_file(self, path: str) -> None:
        """Take a ``file:`` bundle through the same checks, in blocks."""
        try:
            with open(path, "rb") as fh:
                while True:
                    block = fh.read(1 << 20)
                    if not block:
                        break
                    self(block)
        except OSError as exc:
            raise BundleError("fetch", f"cannot read the bundle {path}: {exc.strerror or exc}") from None

    def finish(self) -> None:
        """The whole answer was taken: BundleError(format) when it never held a header."""
        self.close()
        if self.header is None:
            if self._head and not MAGIC.startswith(bytes(self._head[:len(MAGIC)])):
                raise BundleError("format", "not a yupana bundle (it does not start with yupana-bundle/1)")
            raise BundleError("format", "the bundle ends before its header line (empty or truncated)")

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def discard(self) -> None:
        self.close()
        try:
            os.unlink(self.path)
        except OSError:
            pass


def verified_cache(download: Download) -> tuple[dict[str, Any], dict[str, Any]]:
    """(header, cache) of a finished download: the signature verified over a read-only map of the
    file, then decoded and checked (:func:`yupana.projection.bundle.verify_signed`). The file is
    removed whatever happens."""
    import mmap

    from yupana.projection import bundle

    if download.header is None:  # finish() refuses a download without one
        download.discard()
        raise BundleError("format", "the bundle ends before its header line (empty or truncated)")
    try:
        with open(download.path, "rb") as fh:
            with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
                return bundle.verify_signed(download.header, mapped, download.trusted)
    except OSError as exc:
        raise BundleError("write", f"cannot read back the download {download.path}: {exc.strerror or exc}") from None
    finally:
        download.discard()
