"""The hot path imports only the standard library's cheap core, google-re2 when a rule runs, and ours.

Each hook runs under ``-X importtime`` with ``-S`` (no site step, the package on
PYTHONPATH) so that nothing a development install's site hooks pre-import can hide an
import the hook itself makes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
COLD = ("rdflib", "pyshacl", "httpx", "SPARQLWrapper", "pydantic", "pydantic_settings", "typer", "rich",
        "diskcache", "sqlite3", "tree_sitter", "tree_sitter_rust", "tree_sitter_python", "tree_sitter_typescript",
        "tree_sitter_javascript", "tree_sitter_go", "pyoxigraph", "urllib", "http", "email")
COSTLY = ("json", "re", "re2", "typing", "dataclasses", "pathlib", "tempfile", "subprocess", "tomllib",
          "argparse", "enum", "shlex", "hashlib", "logging")


def _imports(env: dict, event: str, payload: dict, *flags: str) -> list[str]:
    bare = dict(env, PYTHONPATH=os.pathsep.join([str(REPO), sysconfig.get_paths()["purelib"]]))
    done = subprocess.run([sys.executable, "-S", "-X", "importtime", "-m", "yupana", *flags, "hook", event],
                          input=json.dumps(payload).encode(), env=bare, capture_output=True)
    assert done.returncode == 0, done.stderr[-2000:]
    names = []
    for line in done.stderr.decode().splitlines():
        if line.startswith("import time:") and "|" in line:
            name = line.rsplit("|", 1)[1].strip()
            if name != "imported package":
                names.append(name)
    return names


def _roots(names: list[str]) -> set[str]:
    return {n.split(".")[0] for n in names}


def _payload(root: Path, event: str = "PreToolUse") -> dict:
    return {"session_id": "s", "cwd": str(root), "hook_event_name": event, "tool_name": "Edit",
            "tool_input": {"file_path": str(root / "src" / "lib.rs"), "old_string": "a", "new_string": "b = 1"}}


@pytest.mark.parametrize("event", ["pre-edit", "post-edit"])
def test_hooks_import_no_cold_module(env, tmp_path, event):
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    hook_event = "PreToolUse" if event == "pre-edit" else "PostToolUse"
    first = _imports(env, event, _payload(root, hook_event))
    assert not _roots(first) & set(COLD), sorted(_roots(first) & set(COLD))
    # the first call after a config change resolves the snapshot in a child process (once);
    # every later call must not pay for anything costly
    second = _imports(env, event, _payload(root, hook_event))
    assert not _roots(second) & set(COLD + COSTLY), sorted(_roots(second) & set(COLD + COSTLY))


def _armed_repo(env, tmp_path, extra: str = "") -> Path:
    """A repository under enforce with a tenant scope (and ``extra`` config), served a warm
    cache of one text rule from a store on loopback."""
    sys.path.insert(0, str(Path(__file__).parent / "hooks"))
    from guard_kit import text_rule, write_cache

    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / ".bobbin").mkdir()
    (root / ".bobbin" / "config.toml").write_text(
        '[yupana.policy]\nmode = "enforce"\n[yupana.policy.scopes.t]\nallow_paths = ["src/**"]\n' + extra +
        '[yupana.quipu]\nenabled = true\nendpoint = "http://127.0.0.1:9"\ndialect = "quipu"\n')
    write_cache(env, "http://127.0.0.1:9", text_rules=[text_rule("hosts", r"\b[a-z0-9-]+\.corp\.example\b")])
    return root


def test_armed_pre_edit_imports_re2_only_when_a_rule_runs(env, tmp_path):
    root = _armed_repo(env, tmp_path, '[[yupana.policy.tripwires]]\nname = "w"\npaths = ["src/auth/**"]\neffect = "deny"\n')
    _imports(env, "pre-edit", _payload(root), "--tenant", "t")  # resolve the snapshot
    clean = _imports(env, "pre-edit", _payload(root), "--tenant", "t")
    assert not _roots(clean) & set(COLD + COSTLY), sorted(_roots(clean) & set(COLD + COSTLY))
    assert "yupana.regex.re2_binding" not in clean
    payload = _payload(root)
    payload["tool_input"]["new_string"] = "host = 'db1.corp.example'"
    fired = _imports(env, "pre-edit", payload, "--tenant", "t")
    # RE2 through its extension, loaded by re2_binding itself: the wrapper package `re2` is never imported
    assert "yupana.regex.re2_binding" in fired
    assert not _roots(fired) & set(COLD + COSTLY), sorted(_roots(fired) & set(COLD + COSTLY))


@pytest.mark.parametrize("event", ["pre-edit", "pre-bash", "post-edit"])
def test_a_hook_with_a_warm_snapshot_loads_no_sha1_module(env, tmp_path, event):
    """A hook's two digests — its project's key in records and its store's directory — come
    with the configuration snapshot (yupana/digests.py): the SHA-1 extension (~0.2 ms to load)
    only on the call that resolves the configuration."""
    root = _armed_repo(env, tmp_path)
    payload = _payload(root, "PostToolUse" if event == "post-edit" else "PreToolUse")
    if event == "pre-bash":
        payload.update(tool_name="Bash", tool_input={"command": "ls -la && git status"})
    first = _imports(env, event, payload, "--tenant", "t")
    assert "_sha1" in first  # the snapshot is resolved: the digests are worked out once
    warm = _imports(env, event, payload, "--tenant", "t")
    assert "_sha1" not in warm and "hashlib" not in warm
