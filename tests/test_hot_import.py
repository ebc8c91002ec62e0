"""The hot path's modules from one bundle (yupana/hot_import.py): the same decisions, never old code.

Each test runs the real hook as a process from its own copy of the package (the bundle lives in
the package's ``__pycache__``), so what it writes and reads is that copy's.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from yupana.hot_import import bundle_path

REPO = Path(__file__).resolve().parent.parent
CONFIG = """[yupana.policy]
mode = "enforce"

[yupana.policy.scopes.bench]
deny_paths = ["src/config.rs"]
"""


@pytest.fixture(scope="module")
def compiled_package(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("pkg")
    shutil.copytree(REPO / "yupana", root / "yupana", ignore=shutil.ignore_patterns("hot.*.bundle*"))
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(root / "yupana")], check=True)
    return root


@pytest.fixture
def package(compiled_package, tmp_path) -> Path:
    """A fresh copy of the compiled package, without a bundle (copied, so mtimes are kept)."""
    root = tmp_path / "code"
    shutil.copytree(compiled_package / "yupana", root / "yupana")
    return root


@pytest.fixture
def project(env, tmp_path) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / ".bobbin").mkdir()
    (root / ".bobbin" / "config.toml").write_text(CONFIG)
    return root


def _hook(env, package: Path, project: Path, path: str) -> subprocess.CompletedProcess:
    payload = {"session_id": "s", "cwd": str(project), "hook_event_name": "PreToolUse", "tool_name": "Edit",
               "tool_input": {"file_path": str(project / path), "old_string": "a", "new_string": "b"}}
    run_env = dict(env, PYTHONPATH=str(package), BOBBIN_ROLE="bench")
    return subprocess.run([sys.executable, "-S", "-m", "yupana", "hook", "pre-edit"], input=json.dumps(payload),
                          env=run_env, cwd=str(project), capture_output=True, text=True, timeout=60)


def _decision(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 0, done.stderr
    if not done.stdout.strip():
        return "allow"
    return json.loads(done.stdout)["hookSpecificOutput"]["permissionDecision"]


def _served(env, package: Path) -> list[str]:
    """The modules a hook's imports take from the bundle (installed as a hook installs it)."""
    code = ("from yupana import hot_import; hot_import.install(); import yupana.hooks.pre_edit; "
            "print(' '.join(sorted(hot_import._finder.served)) if hot_import._finder else '')")
    done = subprocess.run([sys.executable, "-S", "-c", code], env=dict(env, PYTHONPATH=str(package)),
                          cwd=str(package), capture_output=True, text=True, timeout=60, check=True)
    return done.stdout.split()


def test_a_hook_writes_the_bundle_and_the_next_hooks_read_their_modules_from_it(env, package, project):
    bundle = Path(bundle_path(str(package / "yupana")))
    assert _decision(_hook(env, package, project, "src/config.rs")) == "deny"
    assert bundle.is_file()
    assert "yupana.hooks.pre_edit" in _served(env, package)
    written = bundle.stat().st_mtime_ns
    assert _decision(_hook(env, package, project, "src/config.rs")) == "deny"
    assert _decision(_hook(env, package, project, "src/lib.rs")) == "allow"
    assert bundle.stat().st_mtime_ns == written  # nothing missed: not written again


def test_an_edited_module_is_never_served_from_an_older_bundle(env, package, project):
    env.pop("PYTHONDONTWRITEBYTECODE")  # Python writes the edited module's .pyc, as it does by default
    assert _decision(_hook(env, package, project, "src/config.rs")) == "deny"
    module = package / "yupana" / "hooks" / "pre_edit.py"
    module.write_text(module.read_text() + "\nimport os as _os\n_os.write(2, b'edited module ran\\n')\n")
    for _ in range(2):  # the edit is read, and the bundle written again holds it
        done = _hook(env, package, project, "src/config.rs")
        assert _decision(done) == "deny"
        assert "edited module ran" in done.stderr
    assert "yupana.hooks.pre_edit" in _served(env, package)


@pytest.mark.parametrize("damage", ["garbage", "truncated", "other-interpreter", "fifo", "directory"])
def test_a_damaged_bundle_changes_no_decision(env, package, project, damage):
    bundle = Path(bundle_path(str(package / "yupana")))
    assert _decision(_hook(env, package, project, "src/config.rs")) == "deny"
    good = bundle.read_bytes()
    bundle.unlink()
    if damage == "garbage":
        bundle.write_bytes(os.urandom(len(good)))
    elif damage == "truncated":
        bundle.write_bytes(good[: len(good) // 2])
    elif damage == "other-interpreter":
        bundle.write_bytes(good.replace(good[13:17], b"\x00\x00\r\n", 1))
    elif damage == "fifo":
        os.mkfifo(bundle)
    else:
        bundle.mkdir()
    assert _decision(_hook(env, package, project, "src/config.rs")) == "deny"
    assert _decision(_hook(env, package, project, "src/lib.rs")) == "allow"
    if damage in ("fifo", "directory"):  # something else holds the name: left alone
        assert not bundle.is_file()
    else:  # written again, and served
        assert "yupana.hooks.pre_edit" in _served(env, package)


def test_hooks_started_at_once_on_a_fresh_package_all_decide_and_leave_one_good_bundle(env, package, project):
    """Twelve hooks racing to write the first bundle: every one decides as it should, no
    temporary file is left, and the bundle they leave serves the next hook."""
    payload = {"session_id": "s", "cwd": str(project), "hook_event_name": "PreToolUse", "tool_name": "Edit",
               "tool_input": {"file_path": str(project / "src/config.rs"), "old_string": "a", "new_string": "b"}}
    run_env = dict(env, PYTHONPATH=str(package), BOBBIN_ROLE="bench")
    _hook(env, package, project, "src/lib.rs")  # resolve the configuration snapshot first
    Path(bundle_path(str(package / "yupana"))).unlink()
    procs = [subprocess.Popen([sys.executable, "-S", "-m", "yupana", "hook", "pre-edit"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=run_env, cwd=str(project), text=True)
             for _ in range(12)]
    outs = [p.communicate(json.dumps(payload), timeout=120) for p in procs]
    for proc, (out, err) in zip(procs, outs):
        assert proc.returncode == 0, err
        assert json.loads(out)["hookSpecificOutput"]["permissionDecision"] == "deny", (out, err)
    cache = Path(bundle_path(str(package / "yupana"))).parent
    assert not [p.name for p in cache.iterdir() if ".tmp" in p.name]
    assert "yupana.hooks.pre_edit" in _served(env, package)
