"""A catalogue source read into a cache object, as strictly as a refresh reads one. Cold path.

``yupana diff OLD NEW`` takes two sources, each one argument (docs/diff.md "Sources"):

* RDF files: a file, a directory (its RDF files, recursively), a comma-separated list, a
  quoted glob (``'data/*.ttl'``, expanded here: the shell would split it over both sides), or
  ``file:<location>``. Loaded into the embedded store, then projected, decoded and gated
  exactly as a refresh of a ``file:`` endpoint is (:func:`yupana.projection.refresh.project`,
  the SHACL gate with the decoders' compile steps): a malformed governed item is refused with
  its subject and property;
* an endpoint URL (``http(s)://…``): projected and gated the same way; the configured
  ``[yupana.quipu]`` credentials and dialect are used only when it is the configured endpoint;
* a signed bundle file (its first bytes are ``yupana-bundle/1``): verified with ``--trust``
  keys or ``[yupana.bundle] trusted_keys``, its content checked as a host checks it;
* a cache file (``projection.json``, a JSON object): read with the cache reader's shape
  checks, then checked as a bundle's content is (shapes, every regex and glob compiled);
* ``@store``: the configured endpoint; ``@cache``: this host's cache of it.

Every failure is a :class:`SourceError` with a ``kind`` and a message saying what to fix.
"""

from __future__ import annotations

from typing import Any

import glob
import os
from dataclasses import dataclass, field

#: Bytes a bundle or cache file may have (the cache reader's own limit applies to caches).
BUNDLE_LIMIT = 256 * 1024 * 1024
_GLOB_CHARS = ("*", "?", "[")


class SourceError(Exception):
    """A source that cannot be read: ``kind`` (input, config, connect, …, shapes, decode,
    signature, content, compile, cache) and what to do about it."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


@dataclass
class Options:
    """What reading a source may need beyond its text."""

    root: str
    config_override: str | None = None
    shapes_dir: str | None = None
    trust: list[str] = field(default_factory=list)
    #: The dialect of an endpoint URL that is not the configured one (None: detected).
    dialect: str | None = None
    _config: dict[str, Any] | None = None

    def config(self) -> dict[str, Any]:
        """The resolved configuration (read once, only by a source that needs it)."""
        if self._config is None:
            from yupana import config

            try:
                self._config = config.resolve(self.root, self.config_override)["config"]
            except config.ConfigError as exc:
                raise SourceError("config", str(exc)) from None
        return self._config


@dataclass
class Source:
    """One side of a diff: what was asked (``spec``), how it was read (``kind``: files,
    endpoint, bundle, cache) and the cache object it gave."""

    spec: str
    kind: str
    cache: dict[str, Any]
    location: str = ""
    files: list[str] = field(default_factory=list)

    def describe(self) -> dict[str, Any]:
        """The source as ``--json`` shows it."""
        from yupana.redact import redact_url

        written = self.cache.get("written_at")
        return {"spec": redact_url(self.spec) if "://" in self.spec else self.spec, "kind": self.kind,
                "location": redact_url(self.location) if "://" in self.location else self.location,
                "digest": self.cache.get("digest"), "endpoint": redact_url(str(self.cache.get("endpoint") or "")),
                "written_at": written if isinstance(written, int) else None,
                "counts": dict(self.cache.get("counts") or {})}


def read(spec: str, options: Options) -> Source:
    """The cache object of source ``spec`` (see the module doc); SourceError otherwise."""
    spec = spec.strip()
    if not spec:
        raise SourceError("input", "an empty source: give RDF files, an endpoint URL, a bundle or a cache file")
    if spec == "@store":
        return _store(spec, options)
    if spec == "@cache":
        return _host_cache(spec, options)
    if spec.startswith(("http://", "https://")):
        return _endpoint(spec, spec, options)
    if spec.startswith("file:"):
        location = spec[len("file://"):] if spec.startswith("file://") else spec[len("file:"):]
        return _rdf(spec, rdf_files(location), options)
    if "," not in spec and os.path.isfile(spec):
        head = _head(spec)
        from yupana.projection import bundle

        if head.startswith(bundle.MAGIC.partition(b"/")[0] + b"/"):  # any bundle version: the reader names one it cannot read
            return _bundle(spec, options)
        if head.lstrip()[:1] == b"{":
            return _cache_file(spec, spec)
    return _rdf(spec, rdf_files(spec), options)


def rdf_files(location: str, base: str | None = None) -> list[str]:
    """The RDF files of a location: files, directories, comma-separated, quoted globs; a
    relative part is taken relative to ``base`` (default: the working directory)."""
    from yupana.endpoint.embedded import RDF_EXTENSIONS, files_of

    found: list[str] = []
    for part in (p.strip() for p in location.split(",")):
        if not part:
            continue
        if base is not None:
            part = os.path.join(base, os.path.expanduser(part))
        if any(c in part for c in _GLOB_CHARS) and not os.path.exists(part):
            matched = sorted(glob.glob(part, recursive=True))
            if not matched:
                raise SourceError("input", f"{part}: the pattern matches no file")
            found += [m for m in matched if os.path.isdir(m) or os.path.splitext(m)[1] in RDF_EXTENSIONS]
            continue
        if not os.path.exists(part):
            raise SourceError("input", f"{part}: no such file or directory (a source is RDF files, a directory, "
                                       "an endpoint URL, a bundle, a cache file, @store or @cache)")
        found.append(part)
    files = files_of(",".join(found))
    if not files:
        raise SourceError("input", f"{location}: no RDF files there (.ttl, .nt, .n3, .nq, .trig, .rdf)")
    return files


def _head(path: str) -> bytes:
    try:
        with open(path, "rb") as fh:
            return fh.read(64)
    except OSError as exc:
        raise SourceError("input", f"{path}: {exc.strerror or exc}") from None


def _rdf(spec: str, files: list[str], options: Options) -> Source:
    from yupana.endpoint.embedded import EmbeddedStore
    from yupana.endpoint.errors import EndpointError

    try:
        endpoint = EmbeddedStore(files, "file:" + ",".join(os.path.abspath(f) for f in files))
    except EndpointError as exc:
        raise SourceError("input", exc.message) from None
    source = _projected(spec, "files", endpoint, {}, options)
    source.location = endpoint.identity
    source.files = [os.path.abspath(f) for f in files]
    return source


def _endpoint(spec: str, url: str, options: Options) -> Source:
    from yupana.endpoint import open_endpoint
    from yupana.endpoint.errors import EndpointError
    from yupana.state import cache as cache_mod

    configured = options.config()["quipu"]
    quipu = dict(configured)
    same = cache_mod.normalize_endpoint(url) == cache_mod.normalize_endpoint((configured.get("endpoint") or "").strip())
    if not same:  # the configured credentials and dialect belong to the configured store only
        quipu.update(auth="none", auth_user=None, dialect=options.dialect, default_graph=None)
    quipu["endpoint"] = url
    deadline = _deadline(quipu)
    try:
        endpoint = open_endpoint(quipu, deadline=deadline)
    except EndpointError as exc:
        message = exc.message if same else _as_source(exc.message)
        raise SourceError(exc.kind, message) from None
    try:
        source = _projected(spec, "endpoint", endpoint, quipu, options, deadline)
    except SourceError as exc:
        raise SourceError(exc.kind, exc.message if same else _as_source(exc.message)) from None
    source.location = url
    return source


def _as_source(message: str) -> str:
    """A transport's message about a URL given as a source, not configured: its fixes are
    the URL and ``--dialect``, not the configuration keys it names."""
    return (message.replace("set [yupana.quipu] dialect", "pass --dialect sparql11|quipu")
            .replace("[yupana.quipu] endpoint = ", "").replace("[yupana.quipu] endpoint", "the URL"))


def _store(spec: str, options: Options) -> Source:
    configured = (options.config()["quipu"].get("endpoint") or "").strip()
    if not configured:
        raise SourceError("config", "@store: no endpoint is configured ([yupana.quipu] endpoint)")
    if configured.startswith("file:"):
        location = configured[len("file://"):] if configured.startswith("file://") else configured[len("file:"):]
        return _rdf(spec, rdf_files(location, options.root), options)  # relative to the project root, as configured
    return _endpoint(spec, configured, options)


def _host_cache(spec: str, options: Options) -> Source:
    from yupana.state import dataset
    from yupana.workers import refresher

    quipu = options.config()["quipu"]
    path = refresher.cache_path_for((quipu.get("endpoint") or "").strip(), dataset.identity(quipu, options.root))
    if not path or not os.path.exists(path):
        raise SourceError("cache", f"@cache: this host has no cache for the configured store ({path or 'none'}); "
                                   "run `yupana project` first")
    return _cache_file(spec, path)


def _projected(spec: str, kind: str, endpoint: Any, quipu: dict[str, Any], options: Options,
               deadline: Any = None) -> Source:
    """Project, decode and gate ``endpoint`` as a refresh does; close it."""
    from yupana.endpoint.errors import EndpointError
    from yupana.projection import gate, gate_chunks
    from yupana.projection.errors import ProjectionError
    from yupana.projection.refresh import project

    deadline = deadline or _deadline(quipu)
    try:
        proj = project(endpoint, quipu, deadline, env={})
    except ProjectionError as exc:
        raise SourceError("decode", f"{spec}: {exc}") from None
    except EndpointError as exc:  # its message names the store
        raise SourceError(exc.kind, exc.message) from None
    finally:
        endpoint.close()
    try:
        report = gate_chunks.validate(proj.subjects, options.shapes_dir, deadline=deadline)
    except gate.GateError as exc:
        raise SourceError("shapes", f"the SHACL gate could not run: {exc}") from None
    except EndpointError as exc:  # the deadline cut the gate
        raise SourceError(exc.kind, f"{spec}: {exc.message}") from None  # (the message names no store)
    if not report.conforms:
        raise SourceError("shapes", f"{spec} does not conform to the SHACL shapes (a refresh would refuse it) — "
                                    f"{report.summary()}\n{report.text}")
    return Source(spec, kind, proj.cache)


def _deadline(quipu: dict[str, Any]) -> Any:
    from yupana.endpoint.base import Deadline

    return Deadline(float(quipu.get("refresh_deadline_secs") or 60.0))


def _bundle(path: str, options: Options) -> Source:
    from yupana.projection import bundle

    try:
        if options.trust:
            trusted = bundle.trusted_public_keys(options.trust, os.getcwd())
        else:
            entries = list(options.config()["bundle"].get("trusted_keys") or [])
            if not entries:
                raise SourceError("key", f"{path} is a signed bundle and no key to verify it is given: pass "
                                         "--trust ed25519:<base64> (or a PEM public key file), or set "
                                         "[yupana.bundle] trusted_keys")
            trusted = bundle.trusted_public_keys(entries, options.root)
        if os.path.getsize(path) > BUNDLE_LIMIT:
            raise SourceError("input", f"{path} is larger than {BUNDLE_LIMIT} bytes")
        with open(path, "rb") as fh:
            data = fh.read()
        _, cache = bundle.verify(data, trusted)
    except bundle.BundleError as exc:
        raise SourceError(exc.kind, f"{path}: {exc.message}") from None
    except OSError as exc:
        raise SourceError("input", f"{path}: {exc.strerror or exc}") from None
    return Source(path, "bundle", cache, location=os.path.abspath(path))


def _cache_file(spec: str, path: str) -> Source:
    from yupana.projection import bundle, bundle_content
    from yupana.state import cache as cache_mod

    found, miss = cache_mod.read_json(path)
    if found is None:
        reason = miss.reason if miss is not None else "unreadable"
        raise SourceError("cache", f"{path} is not a usable projection cache: {reason}")
    try:
        bundle_content.check(found)  # what a host checks of a cache it did not project itself
    except bundle.BundleError as exc:
        raise SourceError(exc.kind, f"{path}: {exc.message}") from None
    return Source(spec, "cache", found, location=os.path.abspath(path))
