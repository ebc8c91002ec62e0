"""Shared fixtures: an isolated state/config environment and a runner for the real CLI."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("YUPANA_SHARED_FIXTURES", "/work/shared/fixtures"))
QUIPU_FIXTURES = SHARED / "quipu"
CODEX_FIXTURES = SHARED / "codex-apply-patch"

sys.path.insert(0, str(Path(__file__).resolve().parent))
pytest_plugins = ["servers.fixtures"] if (Path(__file__).parent / "servers" / "fixtures.py").exists() else []


class Env(dict):
    """Environment for a yupana subprocess with its own HOME, state and temp directories."""

    def __init__(self, base: Path) -> None:
        super().__init__(os.environ)
        for key in [k for k in self if k.startswith(("YUPANA_", "BOBBIN_", "SHANTY_", "QUIPU_"))]:
            del self[key]
        for key in ("NO_COLOR", "FORCE_COLOR", "COLUMNS"):  # the terminal tests set what they test
            self.pop(key, None)
        if self.get("TERM", "dumb") == "dumb":
            self["TERM"] = "xterm"
        self.base = base
        self.home = base / "home"
        self.state = base / "state"
        self.tmp = base / "tmp"
        for d in (self.home, self.state, self.tmp):
            d.mkdir(parents=True, exist_ok=True)
        self["HOME"] = str(self.home)
        self["XDG_STATE_HOME"] = str(self.state)
        self["TMPDIR"] = str(self.tmp)
        self["PYTHONDONTWRITEBYTECODE"] = "1"
        # the managed floor: a per-test file, absent until a test writes it (never the machine's /etc)
        self["YUPANA_MANAGED_CONFIG"] = str(base / "managed" / "config.toml")

    @property
    def cache_path(self) -> Path:
        """The projection cache of the one store this environment has state for (each store has
        its own directory, yupana/state/stores.py); a path that does not exist while there is none."""
        stores = sorted((self.state / "yupana" / "stores").glob("*/projection.json"))
        if len(stores) > 1:
            raise AssertionError(f"more than one store has a cache: {stores}; use cache_for(endpoint)")
        if stores:
            return stores[0]
        dirs = sorted((self.state / "yupana" / "stores").glob("*/"))
        return (dirs[0] if len(dirs) == 1 else self.state / "yupana" / "stores" / "none") / "projection.json"

    def cache_for(self, endpoint: str, **quipu) -> Path:
        """The projection cache of the store ``endpoint`` (a cache key: redacted, absolute file: paths)
        configured with the ``[yupana.quipu]`` keys ``quipu`` (default_graph, dialect, auth, …)."""
        from yupana.state import paths

        return Path(paths.store_dir(self.dataset_for(endpoint, **quipu), str(self.state / "yupana"))) / "projection.json"

    def dataset_for(self, endpoint: str, **quipu) -> str:
        """The dataset identity (yupana/state/dataset.py) of ``endpoint`` with the keys ``quipu``,
        as this environment's hooks compute it (its state directory's key)."""
        import os

        from yupana.state import dataset

        saved = os.environ.get("XDG_STATE_HOME")
        os.environ["XDG_STATE_HOME"] = str(self.state)
        try:
            return dataset.identity({"endpoint": endpoint, **quipu})
        finally:
            if saved is None:
                del os.environ["XDG_STATE_HOME"]
            else:
                os.environ["XDG_STATE_HOME"] = saved

    @property
    def legacy_cache_path(self) -> Path:
        return self.state / "yupana" / "projection.json"

    @property
    def spool_path(self) -> Path:
        return self.state / "yupana" / "metrics.jsonl"

    def records(self, kind: str | None = None) -> list[dict]:
        import json

        if not self.spool_path.exists():
            return []
        recs = [json.loads(line) for line in self.spool_path.read_text().splitlines() if line.strip()]
        return [r for r in recs if kind is None or r.get("kind") == kind]

    def managed_config(self, text: str) -> Path:
        """Write the managed floor ($YUPANA_MANAGED_CONFIG) of this environment."""
        path = Path(self["YUPANA_MANAGED_CONFIG"])
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path

    def user_config(self, text: str) -> Path:
        path = self.home / ".config" / "bobbin" / "config.toml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path


@pytest.fixture
def env(tmp_path: Path) -> Env:
    return Env(tmp_path)


def run_yupana(args: list[str], env: dict, stdin: bytes | str | None = None, cwd: str | Path | None = None,
               timeout: float = 60) -> subprocess.CompletedProcess:
    """Run the installed CLI exactly as a harness would (``python -m yupana``)."""
    if isinstance(stdin, str):
        stdin = stdin.encode()
    return subprocess.run([sys.executable, "-m", "yupana", *args], input=stdin, env=env, cwd=cwd,
                          capture_output=True, timeout=timeout)


@pytest.fixture
def yupana(env: Env):
    def run(*args: str, stdin: bytes | str | None = None, cwd: str | Path | None = None, timeout: float = 60):
        return run_yupana(list(args), env, stdin=stdin, cwd=cwd, timeout=timeout)

    return run
