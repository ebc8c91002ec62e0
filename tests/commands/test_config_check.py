"""``yupana config check``: the resolved result, every local control compiled as the hooks do.

Each broken control is named with its file, key and a fix, exit 1, in text and ``--json``;
``status`` shows the same findings as degraded (exit 3); a URL carrying ``user:password@``
is refused without echoing the password.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

RULE = ('[[yupana.policy.rules]]\nname = "no-unwrap"\nlanguage = "rust"\nquery = {query}\n'
        'match_type = "must-not-match"\npattern = {pattern}\n{extra}\n')
GOOD_RULE = {"query": "'(call_expression) @c'", "pattern": "'unwrap'", "extra": ""}

BROKEN = {
    "scope-glob": ('[yupana.policy.scopes.t]\nallow_paths = ["src/***"]\n', "yupana.policy.scopes.t.allow_paths.0"),
    "target-glob": ('[yupana.policy.scopes.t]\ndeny_targets = ["host:[abc"]\n', "yupana.policy.scopes.t.deny_targets.0"),
    "re2-pattern": (RULE.format(**dict(GOOD_RULE, pattern="'unwrap(?=\\()'")), "yupana.policy.rules.0.pattern"),
    "re2-gate": (RULE.format(**dict(GOOD_RULE, extra="gate = '(?<=x)y'")), "yupana.policy.rules.0.gate"),
    "query": (RULE.format(**dict(GOOD_RULE, query="'(call_expresion) @c'")), "yupana.policy.rules.0.query"),
    "applies-to-glob": (RULE.format(**dict(GOOD_RULE, extra="applies_to = ['src/**x']")),
                        "yupana.policy.rules.0.applies_to"),
    "wire-undefined-rule": ('[[yupana.policy.tripwires]]\nname = "w"\npaths = ["src/auth/**"]\nrule = "nope"\n'
                            'effect = "deny"\n', "yupana.policy.tripwires.0.rule"),
    "wire-throttle-no-backoff": ('[[yupana.policy.tripwires]]\nname = "w"\npaths = ["infra/**"]\neffect = "throttle"\n',
                                 "yupana.policy.tripwires.0.backoff_secs"),
    "wire-no-paths-no-rule": ('[[yupana.policy.tripwires]]\nname = "w"\neffect = "warn"\n', "yupana.policy.tripwires.0"),
    "wire-glob": ('[[yupana.policy.tripwires]]\nname = "w"\npaths = ["a/[b"]\neffect = "warn"\n',
                  "yupana.policy.tripwires.0.paths"),
    "use-daemon": ('[yupana.serve]\nuse_daemon = true\n', "yupana.serve.use_daemon"),
    "endpoint-scheme": ('[yupana.quipu]\nenabled = true\nendpoint = "htp://127.0.0.1:7878/query"\n',
                        "yupana.quipu.endpoint"),
}


def project(tmp_path: Path, text: str) -> Path:
    root = tmp_path / "repo"
    (root / ".bobbin").mkdir(parents=True, exist_ok=True)
    (root / ".bobbin" / "config.toml").write_text('[yupana.policy]\nmode = "enforce"\n' + text)
    return root


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_each_broken_control_is_named_with_file_key_and_fix(yupana, tmp_path, case):
    text, key = BROKEN[case]
    root = project(tmp_path, text)
    cfg = str(root / ".bobbin" / "config.toml")
    done = yupana("config", "check", cwd=root)
    assert done.returncode == 1, done.stdout.decode()[-1500:]
    out = done.stdout.decode()
    line = next((ln for ln in out.splitlines() if ln.startswith("error") and f"{cfg}: {key}" in ln), None)
    assert line, out[-2000:]
    assert "fix:" in out.split(line, 1)[1].splitlines()[1]
    report = json.loads(yupana("--json", "config", "check", cwd=root).stdout)
    assert report["ok"] is False and report["error"] is None
    assert [(f["file"], f["key"]) for f in report["findings"]] == [(cfg, key)]
    assert report["findings"][0]["problem"] and report["findings"][0]["fix"]


def test_a_clean_config_passes_and_shows_the_resolved_result(yupana, tmp_path, env):
    root = project(tmp_path, '[yupana.policy.scopes.t]\nallow_paths = ["src/**"]\n' + RULE.format(**GOOD_RULE))
    env["YUPANA_POLICY__DEADLINE_MS"] = "250"
    done = yupana("config", "check", cwd=root)
    out = done.stdout.decode()
    assert done.returncode == 0, out + done.stderr.decode()
    cfg = root / ".bobbin" / "config.toml"
    assert f'yupana.policy.mode = "enforce"  # {cfg}' in out
    assert 'yupana.policy.scopes.t.allow_paths = ["src/**"]  # ' + str(cfg) in out
    assert "yupana.policy.deadline_ms = 250  # environment variable YUPANA_POLICY__DEADLINE_MS" in out
    assert "yupana.quipu.batch_size = 200  # default" in out
    report = json.loads(yupana("--json", "config", "check", cwd=root).stdout)
    assert report["ok"] is True and report["findings"] == []
    assert report["config"]["policy"]["rules"][0]["pattern"] == "unwrap"
    assert report["origins"]["yupana.policy.rules.0.pattern"] == str(cfg)


def test_status_is_degraded_with_the_same_findings(yupana, tmp_path):
    root = project(tmp_path, BROKEN["scope-glob"][0] + BROKEN["re2-pattern"][0])
    checked = json.loads(yupana("--json", "config", "check", cwd=root).stdout)
    done = yupana("--json", "status", "--offline", cwd=root)
    status = json.loads(done.stdout)
    assert done.returncode == 3 and status["exit_code"] == 3
    assert status["config"]["controls"]["state"] == "degraded"
    assert status["config"]["controls"]["findings"] == checked["findings"] and len(checked["findings"]) == 2
    text = yupana("status", "--offline", cwd=root)
    assert text.returncode == 3
    assert "DEGRADED — 2 broken local controls" in text.stdout.decode()


def test_check_and_hook_give_the_same_reason(yupana, tmp_path):
    root = project(tmp_path, BROKEN["re2-pattern"][0])
    finding = json.loads(yupana("--json", "config", "check", cwd=root).stdout)["findings"][0]
    payload = {"session_id": "s", "cwd": str(root), "hook_event_name": "PreToolUse", "tool_name": "Edit",
               "tool_input": {"file_path": str(root / "src" / "lib.rs"), "old_string": "a",
                              "new_string": "fn f() { x.unwrap() }"}}
    hook = yupana("hook", "pre-edit", stdin=json.dumps(payload), cwd=root)
    assert hook.returncode == 0
    said = "pattern /unwrap(?=\\()/ does not compile as RE2"
    assert said in finding["problem"] and said in hook.stderr.decode()


SECRET = "s3cr3t-Pa55"


@pytest.mark.parametrize("where", ["file", "env"])
def test_userinfo_in_an_endpoint_is_refused_without_echoing_the_password(yupana, env, tmp_path, where):
    url = f"http://reader:{SECRET}@127.0.0.1:7878/query"
    if where == "file":
        root = project(tmp_path, f'[yupana.quipu]\nenabled = true\nendpoint = "{url}"\n')
    else:
        root = project(tmp_path, '[yupana.quipu]\nenabled = true\n')
        env["YUPANA_QUIPU__ENDPOINT"] = url
    seen = []
    done = yupana("config", "check", cwd=root)
    seen.append(done.stdout + done.stderr)
    assert done.returncode == 1
    err = done.stderr.decode()
    assert "yupana.quipu.endpoint = 'http://***@127.0.0.1:7878/query'" in err
    assert "credentials_env" in err and "auth" in err and "docs/endpoints.md" in err
    assert (str(root / ".bobbin" / "config.toml") if where == "file" else "YUPANA_QUIPU__ENDPOINT") in err
    report = yupana("--json", "config", "check", cwd=root)
    seen.append(report.stdout + report.stderr)
    assert json.loads(report.stdout)["error"]
    payload = {"session_id": "s", "cwd": str(root), "hook_event_name": "PreToolUse", "tool_name": "Edit",
               "tool_input": {"file_path": str(root / "src" / "lib.rs"), "old_string": "a", "new_string": "b"}}
    hook = yupana("hook", "pre-edit", stdin=json.dumps(payload), cwd=root)
    seen.append(hook.stdout + hook.stderr)
    assert b"configuration error" in hook.stderr
    status = yupana("--json", "status", "--offline", cwd=root)
    seen.append(status.stdout + status.stderr)
    assert status.returncode == 1
    for blob in seen:
        assert SECRET.encode() not in blob
    for path in env.state.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path



def test_a_rejected_regex_leaves_no_re2_log_line_on_the_hooks_stderr(yupana, tmp_path):
    root = project(tmp_path, BROKEN["re2-pattern"][0])
    payload = {"session_id": "s", "cwd": str(root), "hook_event_name": "PreToolUse", "tool_name": "Edit",
               "tool_input": {"file_path": str(root / "src" / "lib.rs"), "old_string": "a",
                              "new_string": "fn f() { x.unwrap() }"}}
    hook = yupana("hook", "pre-edit", stdin=json.dumps(payload), cwd=root)
    err = hook.stderr.decode()
    assert "does not compile as RE2" in err  # the finding, in yupana's own words
    assert "re2.cc" not in err and "Error parsing" not in err and "absl::" not in err, err  # issue 14 §1


def test_a_governed_regex_re2_refuses_fails_the_refresh_with_re2s_reason_and_no_log_line(yupana, tmp_path):
    """The refresh (cold path) compiles every governed regex once: RE2's own words go into the
    error, naming subject and property; RE2's C++ log line never reaches the terminal."""
    import shutil

    from conftest import REPO

    catalogue = tmp_path / "cat"
    shutil.copytree(REPO / "fixtures" / "catalogue", catalogue)
    rules = catalogue / "text-rules.ttl"
    rules.write_text(rules.read_text().replace('aegis:regex "LARKSPUR-GUARD-CANARY-7f3a9c"',
                                               'aegis:regex "LARKSPUR-(?<=x)GUARD"'))
    root = tmp_path / "p"
    (root / ".bobbin").mkdir(parents=True)
    (root / ".bobbin" / "config.toml").write_text(f'[yupana.quipu]\nenabled = true\nendpoint = "file:{catalogue}"\n')
    done = yupana("project", cwd=root)
    err = done.stderr.decode()
    assert done.returncode == 1
    assert "rule_liveness_canary: aegis:regex: RE2 refuses the regex 'LARKSPUR-(?<=x)GUARD': invalid perl operator" in err, err
    assert "re2.cc" not in err and "Error parsing" not in err and "E0000" not in err


def test_a_value_below_the_managed_floor_is_shown_as_lowered(yupana, env, tmp_path):
    managed = env.managed_config('[yupana.policy.scopes.t]\ndeny_paths = ["src/config.rs"]\n')
    project = tmp_path / "p"
    (project / ".bobbin").mkdir(parents=True)
    (project / ".bobbin" / "config.toml").write_text('[yupana.policy.scopes.t]\ndeny_paths = []\n')
    text = yupana("config", "check", cwd=project).stdout.decode()
    assert f"floor     {managed}" in text
    assert "lowered   ⚠ project" in text and "policy.scopes.t.deny_paths = [] is below its floor [\"src/config.rs\"]" in text
    assert 'yupana.policy.scopes.t.deny_paths = ["src/config.rs"]' in text
    out = json.loads(yupana("config", "check", "--json", cwd=project).stdout)
    assert out["lowered"] == [{"layer": "project", "file": str(project / ".bobbin" / "config.toml"),
                               "key": "policy.scopes.t.deny_paths", "value": [], "floor": ["src/config.rs"]}]
    assert out["managed"] == {"path": str(managed), "present": True}
