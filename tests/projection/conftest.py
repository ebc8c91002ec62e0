"""Fixtures for projection tests: small Turtle catalogues in the embedded store."""

from __future__ import annotations

from pathlib import Path

import pytest

from yupana.endpoint.base import Deadline
from yupana.projection.refresh import Projection, project

from .helpers import Recording, write_ttl


@pytest.fixture
def store(tmp_path: Path):
    """Factory: ``store(turtle, cls=Recording)`` -> an embedded store over that Turtle."""

    def make(body: str, cls=Recording):
        path = write_ttl(tmp_path, body)
        return cls([str(path)], f"file:{path}")

    return make


@pytest.fixture
def projected(store):
    """Factory: ``projected(turtle, env=None, **quipu)`` -> Projection of that Turtle."""

    def run(body: str, env: dict | None = None, cls=Recording, **quipu) -> Projection:
        return project(store(body, cls), quipu, Deadline(30), env=env or {})

    return run
