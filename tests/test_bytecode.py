import importlib.util
import os
import subprocess
import sys

from yupana import bytecode


def test_compiles_missing_and_stale_bytecode_even_when_writing_is_disabled(tmp_path, monkeypatch):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "a.py").write_text("X = 1\n")
    (pkg / "sub" / "b.py").write_text("Y = 2\n")
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    assert bytecode.ensure_compiled(str(pkg)) == 2
    compiled = importlib.util.cache_from_source(str(pkg / "a.py"))
    assert os.path.exists(compiled)
    assert bytecode.ensure_compiled(str(pkg)) == 0  # up to date: nothing to do
    (pkg / "a.py").write_text("X = 3\n")
    os.utime(pkg / "a.py", ns=(os.stat(compiled).st_mtime_ns + 10**9,) * 2)
    assert bytecode.ensure_compiled(str(pkg)) == 1


def test_a_cold_command_leaves_the_hot_path_compiled(env, tmp_path):
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    done = subprocess.run([sys.executable, "-m", "yupana", "config", "check"], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    import yupana.hooks.pre_edit as hot

    assert os.path.exists(importlib.util.cache_from_source(hot.__file__))
