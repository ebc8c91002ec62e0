"""Shared kit for the hook tests: a real repository, real config files, the real CLI.

``Repo`` is a git repository in tmp_path (``git init`` + an ``origin`` remote) with a
``.bobbin/config.toml``; ``hook()`` runs ``python -m yupana hook <event>`` exactly as a
harness does and checks the output discipline every time: exit 0, and stdout either empty
or exactly one JSON object.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from conftest import run_yupana

AEGIS = "http://aegis.gastown.local/ontology/"


class Result:
    """What the harness would see."""

    def __init__(self, done: subprocess.CompletedProcess) -> None:
        self.rc = done.returncode
        self.stdout = done.stdout.decode()
        self.stderr = done.stderr.decode()
        assert self.rc == 0, f"hook exited {self.rc}: {self.stderr}"
        self.out = json.loads(self.stdout) if self.stdout else None
        assert self.out is None or isinstance(self.out, dict), self.stdout
        specific = (self.out or {}).get("hookSpecificOutput") or {}
        assert specific.get("permissionDecision") in (None, "deny"), "the guard never grants permission"

    @property
    def allowed_silently(self) -> bool:
        return self.stdout == ""

    @property
    def denied(self) -> bool:
        specific = (self.out or {}).get("hookSpecificOutput") or {}
        return specific.get("permissionDecision") == "deny"

    @property
    def reason(self) -> str:
        return ((self.out or {}).get("hookSpecificOutput") or {}).get("permissionDecisionReason", "")

    @property
    def message(self) -> str:
        return (self.out or {}).get("systemMessage", "")

    @property
    def context(self) -> str:
        return ((self.out or {}).get("hookSpecificOutput") or {}).get("additionalContext", "")

    def __repr__(self) -> str:
        return f"Result(rc={self.rc}, stdout={self.stdout!r}, stderr={self.stderr[-400:]!r})"


class Repo:
    """A real repository with a project config, files and payloads naming them."""

    def __init__(self, root: Path, env, origin: str | None = "git@github.com:acme/widgets.git") -> None:
        self.root = root
        self.env = env
        root.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "init", "-q", str(root)], check=True)
        if origin:
            subprocess.run(["git", "-C", str(root), "remote", "add", "origin", origin], check=True)
        (root / ".bobbin").mkdir(exist_ok=True)

    def config(self, text: str) -> "Repo":
        (self.root / ".bobbin" / "config.toml").write_text(text)
        return self

    def file(self, rel: str, text: str) -> Path:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path

    def payload(self, tool: str = "Edit", rel: str = "src/lib.rs", *, session: str = "sess-1", **tool_input) -> dict:
        key = "notebook_path" if tool == "NotebookEdit" else "file_path"
        ti = {key: str(self.root / rel)} if rel is not None else {}
        if tool == "Edit":
            ti.setdefault("old_string", "old")
            ti.setdefault("new_string", "new")
        ti.update(tool_input)
        return {"session_id": session, "transcript_path": "/tmp/t.jsonl", "cwd": str(self.root),
                "permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": tool,
                "tool_input": ti, "tool_use_id": "toolu_1"}

    def patch(self, patch: str, *, session: str = "sess-1") -> dict:
        return {"session_id": session, "cwd": str(self.root), "hook_event_name": "PreToolUse",
                "tool_name": "apply_patch", "tool_input": {"command": patch}, "tool_use_id": "call_7"}


def hook(env, payload: dict | bytes | str, *flags: str, event: str = "pre-edit", cwd=None) -> Result:
    """Run the real hook with ``payload`` on stdin."""
    stdin = payload if isinstance(payload, (bytes, str)) else json.dumps(payload)
    return Result(run_yupana([*flags, "hook", event], env, stdin=stdin, cwd=cwd))


def write_cache(env, endpoint: str, *, age: int = 0, path=None, **planes) -> dict:
    """A projection cache in docs/cache-format.md shape, written with the real writer."""
    from yupana.state import cache

    body = {"version": 1, "written_at": int(time.time()) - age, "endpoint": endpoint, "dialect": "quipu",
            "digest": "sha256:test", "counts": {}, "policies": [], "text_rules": [], "exemption_selectors": [],
            "grounded_rules": [], "grounding": None, "work_item_scopes": None, "work_item_parents": None,
            "tripwires": [], "memory_policies": [], "ci_map": None, "disk_history": None, "unprojected": [],
            "notices": []}
    body.update(planes)
    body.setdefault("dataset", env.dataset_for(endpoint))  # the identity of a plain [yupana.quipu] endpoint
    assert cache.save(body, str(path or env.cache_for(endpoint))) is None  # path: a copied file
    return body


def text_rule(name: str, pattern: str, tier: str = "block", exempt: str | None = None, label: str | None = None,
              rationale: str | None = None) -> dict:
    return {"iri": AEGIS + name, "name": name, "label": label or name, "labels": [label or name], "pattern": pattern,
            "tier": tier, "class": None, "exempt_path_regex": exempt, "exempt_path_regexes": [exempt] if exempt else [],
            "exemption_selectors": [], "rationale": rationale, "rationales": [rationale] if rationale else []}


def python() -> str:
    return sys.executable
