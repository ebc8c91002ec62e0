"""An installed wheel (not only the checkout) carries the queries, shapes and example catalogue."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def test_the_wheel_projects_the_bundled_catalogue_on_its_own(tmp_path, env):
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q",
                            "-w", str(tmp_path / "dist"), str(REPO)], capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr
    wheel = next((tmp_path / "dist").glob("yupana-*.whl"))
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
