"""Helpers for the pre-bash tests: run the real hook, write configs, caches and meminfo files."""

from __future__ import annotations

import json
import time
from pathlib import Path

from conftest import Env, run_yupana

from yupana.state import cache

CLOSED_ENDPOINT = "http://127.0.0.1:9"  # discard port: nothing listens, nothing is ever asked in these tests


def hook(env: Env, command: str | list | None, *, cwd: str | Path | None = None, session: str | None = "sess-1",
         role: str | None = None, extra_env: dict | None = None, payload: dict | bytes | None = None):
    """Run ``python -m yupana hook pre-bash`` as a harness would; returns the CompletedProcess."""
    if payload is None:
        payload = {"session_id": session, "cwd": str(cwd or env.base), "hook_event_name": "PreToolUse",
                   "tool_name": "Bash", "tool_input": {"command": command}}
        if session is None:
            del payload["session_id"]
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    run_env = dict(env)
    if role:
        run_env["BOBBIN_ROLE"] = role
    run_env.update(extra_env or {})
    proc = run_yupana(["hook", "pre-bash"], run_env, stdin=data, cwd=str(cwd or env.base))
    assert proc.returncode == 0, proc.stderr.decode()
    return proc


def output(proc) -> dict:
    """The hook's stdout as JSON ({} for a silent allow)."""
    text = proc.stdout.decode()
    return json.loads(text) if text.strip() else {}


def configure(env: Env, *, mode: str = "advise", action_scope: str = "off", scopes: str = "",
              governed: bool = True, endpoint: str = CLOSED_ENDPOINT, extra: str = "") -> None:
    quipu = f'[yupana.quipu]\nenabled = true\nendpoint = "{endpoint}"\n' if governed else ""
    env.user_config(f'[yupana.policy]\nmode = "{mode}"\naction_scope = "{action_scope}"\n{extra}\n{scopes}\n{quipu}')


def write_cache(env: Env, *, memory_policies: list | None = None, disk_history: dict | None = None,
                endpoint: str = CLOSED_ENDPOINT, age_secs: int = 0) -> None:
    data = {"written_at": int(time.time()) - age_secs, "endpoint": endpoint, "dialect": "quipu",
            "digest": "sha256:test", "counts": {}, "policies": [], "text_rules": [], "exemption_selectors": [],
            "grounded_rules": [], "grounding": None, "work_item_scopes": None, "work_item_parents": None,
            "tripwires": [], "memory_policies": memory_policies or [], "ci_map": None,
            "disk_history": disk_history, "unprojected": [], "notices": []}
    data["dataset"] = env.dataset_for(endpoint)  # the identity of a plain [yupana.quipu] endpoint
    assert cache.save(data, str(env.cache_for(endpoint))) is None


def memory_policy(name: str = "build-memory-floor", regex: str = r"^cargo\s+(build|test)\b", gib: float = 8.0,
                  cls: str | None = "hard", effect: str = "deny", message: str | None = None) -> dict:
    return {"iri": f"http://aegis.gastown.local/ontology/policy_{name}", "name": name, "command_regex": regex,
            "threshold_gib": gib, "calibration_basis": "MemAvailable GiB", "effect": effect, "class": cls,
            "verification_point": "PAG", "message": message}


def meminfo(env: Env, available_gib: float | None, total_gib: float | None = 16.0, free_gib: float = 12.0) -> dict:
    """A fake /proc/meminfo; returns the env override pointing the hook at it."""
    lines = []
    if total_gib is not None:
        lines.append(f"MemTotal:       {int(total_gib * 1048576)} kB")
    lines.append(f"MemFree:        {int(free_gib * 1048576)} kB")
    if available_gib is not None:
        lines.append(f"MemAvailable:   {int(available_gib * 1048576)} kB")
    lines.append("Buffers:          123456 kB")
    path = env.base / "meminfo"
    path.write_text("\n".join(lines) + "\n")
    return {"YUPANA_MEMINFO_PATH": str(path)}
