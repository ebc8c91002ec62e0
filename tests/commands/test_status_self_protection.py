"""`yupana status` shows the protected set's level (issue 22 §2): as set and as effective, the mode its ceiling."""

from __future__ import annotations

import json

import pytest


@pytest.mark.parametrize("mode, setting, effective", [("enforce", None, "enforce"), ("advise", None, "advise"),
                                                       ("enforce", "advise", "advise"), ("off", "enforce", "off")])
def test_status_shows_self_protection_as_set_and_effective(env, yupana, tmp_path, mode, setting, effective):
    (tmp_path / "repo" / ".bobbin").mkdir(parents=True)
    extra = f'self_protection = "{setting}"\n' if setting else ""
    (tmp_path / "repo" / ".bobbin" / "config.toml").write_text(f'[yupana.policy]\nmode = "{mode}"\n{extra}')
    done = yupana("status", "--offline", "--json", cwd=tmp_path / "repo")
    report = json.loads(done.stdout)
    assert report["policy"]["self_protection"] == {"setting": setting or "enforce", "effective": effective}
    text = yupana("status", "--offline", cwd=tmp_path / "repo").stdout.decode()
    shown = (setting or "enforce") if (setting or "enforce") == effective else f"{setting or 'enforce'}→{effective}"
    assert f"self_protection={shown}:" in text
