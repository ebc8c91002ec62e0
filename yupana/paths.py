"""Where yupana keeps its state. Standard library only: hooks resolve these on every call.

Resolution, for every state file: an explicit ``YUPANA_*_PATH`` variable, else
``$XDG_STATE_HOME/yupana/<name>``, else ``$HOME/.local/state/yupana/<name>``, else None.
"""

from __future__ import annotations

import os

_ENV_OVERRIDES = {
    "projection.json": "YUPANA_PROJECTION_CACHE_PATH",
    "metrics.jsonl": "YUPANA_METRICS_PATH",
    "verdicts.jsonl": "YUPANA_VERDICT_PATH",
    "throttles.jsonl": "YUPANA_THROTTLE_PATH",
}


def state_dir() -> str | None:
    """The yupana state directory, or None when neither XDG_STATE_HOME nor HOME is set."""
    base = os.environ.get("XDG_STATE_HOME")
    if base:
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


def projection_cache() -> str | None:
    return state_file("projection.json")


def metrics_spool() -> str | None:
    return state_file("metrics.jsonl")


def beside_cache(name: str) -> str | None:
    """A file that lives next to the projection cache (hot snapshot, refresh state, lock)."""
    cache = projection_cache()
    return os.path.join(os.path.dirname(cache) or ".", name) if cache else None


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


def project_config_file(root: str) -> str:
    return os.path.join(root, ".bobbin", "config.toml")


def source_root() -> str:
    """The directory that holds queries/, shapes/ and fixtures/: the project checkout, or the
    copy a wheel carries in ``yupana/_data`` (see setup.py)."""
    package = os.path.dirname(os.path.abspath(__file__))
    checkout = os.path.dirname(package)
    if os.path.isdir(os.path.join(checkout, "queries")):
        return checkout
    return os.path.join(package, "_data")
