"""An installed wheel (not only the checkout) carries the queries, shapes and example catalogue."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The project built as a wheel, once for this module."""
    dist = tmp_path_factory.mktemp("dist")
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(REPO)],
                           capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr
    return next(dist.glob("yupana-*.whl"))


def test_the_wheel_projects_the_bundled_catalogue_on_its_own(wheel, tmp_path, env):
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        zf.extractall(site)
    for rel in ("queries/", "shapes/", "fixtures/catalogue/"):
        assert any(n.startswith(f"yupana/_data/{rel}") for n in names), rel
    env["PYTHONPATH"] = str(site)
    done = subprocess.run([sys.executable, "-m", "yupana", "project", "--dump", "--json"], env=env,
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    dump = json.loads(done.stdout)
    assert str(site / "yupana" / "_data" / "fixtures" / "catalogue") in dump["endpoint"]
    assert len(dump["text_rules"]) >= 10 and len(dump["policies"]) >= 5


def test_the_yupana_command_imports_nothing_before_the_cli(wheel, tmp_path, env):
    """Operators register ``yupana hook …``: the command itself must not spend the hook's budget.

    pip's generated entry-point scripts (pip 23.x) import ``re`` (and with it ``enum``) before
    our code runs; bin/yupana is installed as the script instead.
    """
    with zipfile.ZipFile(wheel) as zf:
        scripts = [n for n in zf.namelist() if n.endswith(".data/scripts/yupana")]
        assert scripts, "the wheel installs no yupana command"
        script = tmp_path / "yupana"
        script.write_bytes(zf.read(scripts[0]))
        zf.extractall(tmp_path / "site")
    env["PYTHONPATH"] = str(tmp_path / "site")
    done = subprocess.run([sys.executable, "-S", "-X", "importtime", str(script), "hook", "pre-edit"],
                          input=b"{}", env=env, capture_output=True, timeout=60)
    assert done.returncode == 0 and done.stdout == b"", done.stderr[-2000:]
    before_cli = []
    for line in done.stderr.decode().splitlines():
        if line.startswith("import time:") and "|" in line:
            name = line.rsplit("|", 1)[1].strip()
            if name == "yupana":
                break
            before_cli.append(name)
    assert not {"re", "enum", "typing", "pathlib"} & set(before_cli), before_cli


def test_a_hook_through_the_command_answers_whole_and_leaves_without_the_interpreters_teardown(wheel, tmp_path, env):
    """The harness waits for the hook's process to end: once a hook has answered and written its
    records it leaves without freeing every module (~2-3 ms of a small pre-edit,
    benchmarks/scale.py). Its answer, exit status and record are whole; any other command
    exits the ordinary way (an ``atexit`` handler, put in by ``sitecustomize``, says which ran)."""
    with zipfile.ZipFile(wheel) as zf:
        script = tmp_path / "yupana"
        script.write_bytes(zf.read(next(n for n in zf.namelist() if n.endswith(".data/scripts/yupana"))))
        zf.extractall(tmp_path / "site")
    custom = tmp_path / "custom"
    custom.mkdir()
    marker = tmp_path / "teardown-ran"
    (custom / "sitecustomize.py").write_text(
        f"import atexit\natexit.register(lambda: open({str(marker)!r}, 'a').write('ran\\n'))\n")
    env["PYTHONPATH"] = f"{tmp_path / 'site'}{os.pathsep}{custom}"
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / ".bobbin").mkdir()
    (root / ".bobbin" / "config.toml").write_text('[yupana.policy]\nmode = "enforce"\n')
    payload = {"session_id": "s", "cwd": str(root), "hook_event_name": "PreToolUse", "tool_name": "Edit",
               "tool_input": {"file_path": str(root / ".bobbin" / "config.toml"), "old_string": "enforce",
                              "new_string": "off"}, "tool_use_id": "t"}

    done = subprocess.run([sys.executable, str(script), "hook", "pre-edit"], input=json.dumps(payload).encode(),
                          env=env, cwd=root, capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    answer = json.loads(done.stdout)
    assert answer["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert env.records("guard")[-1]["result"] == "deny"
    assert not marker.exists(), "the hook ran the interpreter's teardown"

    version = subprocess.run([sys.executable, str(script), "--version"], env=env, capture_output=True, timeout=60)
    assert version.returncode == 0 and version.stdout.strip()
    assert marker.read_text() == "ran\n", "an ordinary command skipped its exit handlers"
