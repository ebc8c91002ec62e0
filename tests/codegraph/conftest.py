"""Fixtures for the codegraph tests: a real crate in a throwaway repository, an isolated index."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parent / "data"
REGISTRY = Path(os.environ.get("YUPANA_CARGO_REGISTRY", "/usr/share/cargo/registry"))


@pytest.fixture(autouse=True)
def isolated_index(tmp_path, monkeypatch):
    """Every test gets its own index directory and a clean per-process index cache."""
    from yupana.codegraph import index

    monkeypatch.setenv("YUPANA_CODEGRAPH_DIR", str(tmp_path / "codegraph"))
    monkeypatch.setenv("YUPANA_CODEGRAPH_WATCH", "0")  # no after-edit refreshers (test_index enables one)
    index.forget()
    yield tmp_path / "codegraph"
    index.forget()


@pytest.fixture
def heck(tmp_path) -> Path:
    """heck 0.4.0 (real crate, MIT) as a git repository root."""
    root = tmp_path / "heck"
    shutil.copytree(DATA / "heck", root)
    (root / ".git").mkdir()
    return root


def file_edit(root: Path, rel: str, old: str | None = None, new: str | None = None, *, content: str | None = None,
              edits: list[tuple[str, str]] | None = None, tool: str | None = None):
    """A payload FileEdit exactly as the hook would read it (Edit, MultiEdit or Write)."""
    from yupana.edit import payload

    path = str(root / rel)
    if content is not None:
        tool_input = {"file_path": path, "content": content}
        tool = tool or "Write"
    elif edits is not None:
        tool_input = {"file_path": path, "edits": [{"old_string": o, "new_string": n} for o, n in edits]}
        tool = tool or "MultiEdit"
    else:
        tool_input = {"file_path": path, "old_string": old, "new_string": new}
        tool = tool or "Edit"
    raw = json.dumps({"session_id": "t", "cwd": str(root), "hook_event_name": "PreToolUse",
                      "tool_name": tool, "tool_input": tool_input})
    inv = payload.parse(raw.encode())
    assert inv is not None and inv.edits, inv
    return inv.edits[0]


def build(root: Path, crate_dir: Path | None = None):
    from yupana.codegraph import background, index

    ci = background.build(str(root), str(crate_dir or root))
    index.forget()
    return ci
