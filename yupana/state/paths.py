"""Where yupana keeps its state. Standard library only: hooks resolve these on every call.

Resolution, for every state file: an explicit ``YUPANA_*_PATH`` variable, else
``$XDG_STATE_HOME/yupana/<name>``, else ``$HOME/.local/state/yupana/<name>``, else None.

State that belongs to one store (the projection cache and its hot twin, refresh state,
back-off, lock and log, exposure answers) lives in that store's own directory,
``<state>/stores/<digest of the dataset identity>/`` (:func:`store_dir`, :mod:`yupana.state.dataset`), so any number of
projects and endpoints on one host each keep their own; :mod:`yupana.state.stores` resolves it.
"""

from __future__ import annotations

import os

_ENV_OVERRIDES = {
    "projection.json": "YUPANA_PROJECTION_CACHE_PATH",
    "metrics.jsonl": "YUPANA_METRICS_PATH",
    "verdicts.jsonl": "YUPANA_VERDICT_PATH",
    "throttles.jsonl": "YUPANA_THROTTLE_PATH",
    "landing.jsonl": "YUPANA_LANDING_PATH",
}


def state_dir() -> str | None:
    """The yupana state directory, or None when neither XDG_STATE_HOME nor HOME is set.

    A relative ``XDG_STATE_HOME`` is ignored, as the XDG Base Directory spec requires ("all paths
    set in these environment variables must be absolute; if an implementation encounters a
    relative path it should consider the path invalid and ignore it").
    """
    base = os.environ.get("XDG_STATE_HOME")
    if base and os.path.isabs(base):
        return os.path.join(base, "yupana")
    home = os.environ.get("HOME")
    if home:
        return os.path.join(home, ".local", "state", "yupana")
    return None


def state_file(name: str) -> str | None:
    """Path of a state file by name, honouring its ``YUPANA_*_PATH`` override."""
    env = _ENV_OVERRIDES.get(name)
    if env:
        explicit = os.environ.get(env)
        if explicit:
            return explicit
    base = state_dir()
    return os.path.join(base, name) if base else None


def legacy_projection_cache() -> str | None:
    """Where one cache per user used to live (``<state>/projection.json``): migrated on sight."""
    base = state_dir()
    return os.path.join(base, "projection.json") if base else None


def explicit_projection_cache() -> str | None:
    """``$YUPANA_PROJECTION_CACHE_PATH``, used verbatim (one cache for every endpoint)."""
    return os.environ.get("YUPANA_PROJECTION_CACHE_PATH") or None


def store_digest(endpoint_key: str) -> str:
    """The directory name of a store: a digest of its redacted endpoint identity."""
    from yupana.digests import sha1_hex

    return sha1_hex(endpoint_key)[:20]


def store_dir(endpoint_key: str, base: str | None = None) -> str | None:
    """``<state>/stores/<digest>``: the state of the store ``endpoint_key`` (a redacted cache key)."""
    base = base or state_dir()
    return os.path.join(base, "stores", store_digest(endpoint_key)) if base else None


def metrics_spool() -> str | None:
    return state_file("metrics.jsonl")


def landing_spool() -> str | None:
    """The landing certifications (``landing-*`` records): their own population, never the
    metrics spool's (docs/records.md "Landing certifications")."""
    return state_file("landing.jsonl")


def temp_dir() -> str:
    """The system temp directory, as tempfile.gettempdir() would pick it (without importing it)."""
    for env in ("TMPDIR", "TEMP", "TMP"):
        value = os.environ.get(env)
        if value and os.path.isdir(value):
            return value
    return "/tmp"


def user_config_file() -> str | None:
    home = os.environ.get("HOME")
    return os.path.join(home, ".config", "bobbin", "config.toml") if home else None


MANAGED_CONFIG = "/etc/bobbin/config.toml"


def managed_config_file() -> str:
    """The managed floor (docs/configuration.md, "The managed floor"): ``$YUPANA_MANAGED_CONFIG``
    (tests, unusual installs), else ``/etc/bobbin/config.toml``."""
    return os.environ.get("YUPANA_MANAGED_CONFIG") or MANAGED_CONFIG


def project_config_file(root: str) -> str:
    return os.path.join(root, ".bobbin", "config.toml")


def source_root() -> str:
    """The directory that holds queries/, shapes/ and fixtures/: the project checkout, or the
    copy a wheel carries in ``yupana/_data`` (see setup.py)."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    checkout = os.path.dirname(package)
    if os.path.isdir(os.path.join(checkout, "queries")):
        return checkout
    return os.path.join(package, "_data")
