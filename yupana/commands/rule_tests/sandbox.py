"""Where ``yupana test`` runs its cases: a private state directory holding the candidate
catalogue's cache, projected by a real refresh (so gated exactly as one: strict decode, SHACL
shapes, the decoders' compile steps), and one project directory per case. Cold path.

The sandbox is a fresh temporary directory; while it is active, ``HOME``, ``XDG_STATE_HOME``,
``TMPDIR`` and the managed floor point into it, and the ``YUPANA_*`` overrides, ``BOBBIN_ROLE``
and ``SHANTY_*`` of the caller are hidden, so a case is judged by the catalogue under test and
the case's own mode and tenant — never by the machine's configuration, spool or caches.

Sources (docs/testing.md "Sources"):

* ``--catalogue FILE…`` — RDF files or directories, loaded by the embedded store (``file:``);
* ``--bundle FILE`` — a signed rule-set bundle, verified and installed as a bundle host does;
* neither — the store the project's configuration names (its ``[yupana.quipu]`` table).
"""

from __future__ import annotations

from typing import Any

import contextlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator

# far beyond any test run: a case is never judged STALE or expired because the run was slow
# (and a bundle confirmed long ago is tested for its rules, not its age)
NEVER_STALE_SECS = 10 ** 9
HIDDEN_PREFIXES = ("YUPANA_", "BOBBIN_", "SHANTY_")
QUIPU_KEYS = ("endpoint", "dialect", "default_graph", "connect_timeout_secs", "request_timeout_secs",
              "refresh_deadline_secs", "batch_size", "max_rows", "auth", "auth_user", "credentials_env",
              "credentials_file")


class SourceError(Exception):
    """The catalogue cannot be tested: unreadable, refused by the gate, or not configured.
    ``results`` holds the gate's results when the shapes or compile checks refused it."""

    def __init__(self, message: str, results: list[Any] | None = None) -> None:
        super().__init__(message)
        self.results = results or []


class Source:
    """What to project: the ``[yupana.quipu]`` keys, the ``[yupana.bundle]`` keys, and a label."""

    def __init__(self, label: str, quipu: dict[str, Any], bundle: dict[str, Any] | None = None,
                 keep_env: tuple[str, ...] = ()) -> None:
        self.label = label
        self.quipu = quipu
        self.bundle = bundle or {}
        self.keep_env = keep_env


def catalogue_source(files: list[str]) -> Source:
    missing = [f for f in files if not os.path.exists(f)]
    if missing:
        raise SourceError(f"{missing[0]}: no such catalogue file or directory")
    paths = [os.path.abspath(f) for f in files]
    bad = [p for p in paths if "," in p]
    if bad:
        raise SourceError(f"{bad[0]}: a catalogue path may not hold ',' (the embedded store's separator); "
                          "rename it or pass its directory")
    return Source("catalogue " + ", ".join(files), {"endpoint": "file:" + ",".join(paths)})


def bundle_source(path: str, trusted: list[str], root: str, override: str | None) -> Source:
    """A bundle file, trusted by ``--trusted-key`` entries, else the configured ``trusted_keys``."""
    if not os.path.isfile(path):
        raise SourceError(f"{path}: no such bundle file")
    keys = [_absolute_key(k, os.getcwd()) for k in trusted]
    if not keys:
        bundle_cfg = _configured(root, override).get("bundle") or {}
        keys = [_absolute_key(k, root) for k in bundle_cfg.get("trusted_keys") or []]
    if not keys:
        raise SourceError("no trusted key for the bundle: pass --trusted-key ed25519:… (or a PEM public key file), "
                          "or set [yupana.bundle] trusted_keys; a bundle is never tested unverified")
    endpoint = _bundle_endpoint(path)
    return Source(f"bundle {path}", {"endpoint": endpoint},
                  {"url": "file:" + os.path.abspath(path), "trusted_keys": keys})


def store_source(root: str, override: str | None) -> Source:
    """The configured store: the project's ``[yupana.quipu]`` table (credentials kept)."""
    cfg = _configured(root, override)
    quipu = dict(cfg.get("quipu") or {})
    endpoint = str(quipu.get("endpoint") or "").strip()
    if not endpoint:
        raise SourceError("no catalogue to test: pass --catalogue FILE… or --bundle FILE, or configure a store "
                          "([yupana.quipu] endpoint)")
    from yupana.state import cache

    if endpoint.startswith("file:"):
        quipu["endpoint"] = cache.endpoint_key(endpoint, root)  # relative paths: against the project root
    if quipu.get("credentials_file"):
        quipu["credentials_file"] = os.path.join(root, os.path.expanduser(str(quipu["credentials_file"])))
    kept = {k: quipu[k] for k in QUIPU_KEYS if quipu.get(k) is not None}
    from yupana.redact import redact_url

    return Source(f"store {redact_url(kept['endpoint'])}", kept, keep_env=(str(quipu.get("credentials_env") or ""),))


def _configured(root: str, override: str | None) -> dict[str, Any]:
    from yupana import config

    try:
        resolved: dict[str, Any] = config.resolve(root, override)["config"]
    except config.ConfigError as exc:
        raise SourceError(f"the configuration does not resolve: {exc}") from None
    return resolved


def _absolute_key(entry: str, base: str) -> str:
    entry = entry.strip()
    return entry if entry.startswith("ed25519:") else os.path.join(base, os.path.expanduser(entry))


def _bundle_endpoint(path: str) -> str:
    """The endpoint a bundle's header names (the sandbox's store is that one, as a host's must be)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(64 << 10)
    except OSError as exc:
        raise SourceError(f"{path}: cannot read the bundle: {exc.strerror or exc}") from None
    lines = head.split(b"\n", 2)
    try:
        header = json.loads(lines[1]) if len(lines) > 2 and lines[0] == b"yupana-bundle/1" else None
    except ValueError:
        header = None
    if not isinstance(header, dict) or not isinstance(header.get("endpoint"), str):
        raise SourceError(f"{path}: not a yupana bundle (no yupana-bundle/1 header naming its endpoint)")
    return str(header["endpoint"])


class Sandbox:
    """A temporary directory with the catalogue's cache in its state, and a project per case."""

    def __init__(self, source: Source) -> None:
        self.source = source
        self.dir = tempfile.mkdtemp(prefix="yupana-test-")
        self.state = os.path.join(self.dir, "state")
        self.home = os.path.join(self.dir, "home")
        self.tmp = os.path.join(self.dir, "tmp")
        for d in (self.state, self.home, self.tmp):
            os.makedirs(d)
        self.cache: dict[str, Any] = {}
        self.cache_path = ""
        self.digest: str | None = None
        self._cases = 0

    def environment(self) -> dict[str, str]:
        keep = set(self.source.keep_env)
        env = {k: v for k, v in os.environ.items() if not k.startswith(HIDDEN_PREFIXES) or k in keep}
        env.update(HOME=self.home, XDG_STATE_HOME=self.state, TMPDIR=self.tmp,
                   YUPANA_MANAGED_CONFIG=os.path.join(self.dir, "managed", "config.toml"))
        return env

    def config_text(self, mode: str) -> str:
        quipu = dict(self.source.quipu, enabled=True, projection_cache_ttl_secs=NEVER_STALE_SECS,
                     refresh_interval_secs=NEVER_STALE_SECS)
        lines = ["[yupana.quipu]"] + [f"{k} = {_toml(v)}" for k, v in quipu.items()]
        if self.source.bundle:
            lines += ["", "[yupana.bundle]"] + [f"{k} = {_toml(v)}" for k, v in self.source.bundle.items()]
        lines += ["", "[yupana.policy]", f"mode = {_toml(mode)}", ""]
        return "\n".join(lines)

    def project(self, name: str, mode: str) -> str:
        """A fresh project root ``name`` under the sandbox, configured for ``mode``."""
        root = os.path.join(self.dir, "projects", name)
        os.makedirs(os.path.join(root, ".bobbin"))
        with open(os.path.join(root, ".bobbin", "config.toml"), "w", encoding="utf-8") as fh:
            fh.write(self.config_text(mode))
        return root

    def case_root(self, mode: str, repo: str | None = None) -> str:
        """A fresh project for one case; with ``repo``, a git repository whose origin is named
        ``repo`` (the name the catalogue's repository-exposure entries use)."""
        self._cases += 1
        root = self.project(f"case-{self._cases:04d}", mode)
        if repo:
            os.makedirs(os.path.join(root, ".git"))
            with open(os.path.join(root, ".git", "config"), "w", encoding="utf-8") as fh:
                fh.write(f'[remote "origin"]\n\turl = https://example.invalid/{repo}.git\n')
        return root

    def refresh(self, shapes_dir: str | None) -> None:
        """Project the source into the sandbox's state (a real refresh: gated). SourceError on refusal."""
        from yupana.workers import refresher

        root = self.project("refresh", "enforce")
        outcome = refresher.refresh_now(root, shapes_dir=shapes_dir, accept_empty=True)
        if not outcome.ok:
            results = list(getattr(outcome.gate, "results", None) or []) if outcome.error_kind == "shapes" else []
            raise SourceError(f"the catalogue was refused ({outcome.error_kind}): {outcome.error}", results)
        self.cache_path = outcome.cache_path or ""
        from yupana.state import cache as cache_mod

        body, miss = cache_mod.read_json(self.cache_path)
        if body is None:
            raise SourceError(f"the refresh wrote no readable cache ({miss})")
        self.cache = body
        self.digest = body.get("digest")

    def remove(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)


@contextlib.contextmanager
def active(sandbox: Sandbox) -> Iterator[Sandbox]:
    """The sandbox's environment for the enclosed code (restored afterwards, as is the cwd)."""
    saved = dict(os.environ)
    cwd = os.getcwd()
    os.environ.clear()
    os.environ.update(sandbox.environment())
    try:
        yield sandbox
    finally:
        os.chdir(cwd)
        os.environ.clear()
        os.environ.update(saved)


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return json.dumps(str(value), ensure_ascii=False)  # a JSON string is a TOML basic string
