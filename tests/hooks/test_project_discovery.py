"""An agent anywhere is governed by the project its file is in (issue 9 §1), through the real CLI.

The same deny/allow matrix — a ``deny_paths`` file, a tripwire path, a legitimate in-scope
edit, an out-of-scope edit, a text rule and its exemption — from the repository root, two
levels down, ``/`` and another repository, under the project config and under the user
config alone; a monorepo whose project root is below the git top (one path for every
plane); a Codex patch across two projects; pre-bash, post-edit and the cold commands from a
subdirectory.
"""

from __future__ import annotations

import json
import subprocess
import time

import pytest
from guard_kit import Repo, hook, text_rule, write_cache

ENDPOINT = "http://127.0.0.1:9"
TENANT = "polecat-3"
GOVERNED = f"""
[yupana.policy]
mode = "enforce"
[yupana.quipu]
enabled = true
endpoint = "{ENDPOINT}"
dialect = "quipu"
projection_cache_ttl_secs = 7200
refresh_interval_secs = 3600
"""
POLICY = GOVERNED + f"""
[yupana.policy.scopes.{TENANT}]
allow_paths = ["src/**"]
deny_paths = ["src/config.rs"]
[[yupana.policy.tripwires]]
name = "auth-boundary"
paths = ["src/auth/**"]
effect = "deny"
"""
TODO = text_rule("todo", r"\bTODO\b", tier="warn", exempt="^src/fixtures/")

# case -> (file, introduced text, expected verdict, a phrase the output must carry)
CASES = {
    "deny_paths file": ("src/config.rs", "x", "deny", "the denied path `src/config.rs`"),
    "tripwire path": ("src/auth/login.rs", "x", "deny", "tripwire `auth-boundary`"),
    "in-scope edit": ("src/lib.rs", "x", "allow", ""),
    "out-of-scope edit": ("docs/guide.md", "x", "deny", "the allowed paths are `src/**`"),
    "text rule applies": ("src/net.rs", "// TODO", "notify", "`todo`"),
    "text-rule exemption": ("src/fixtures/hosts.rs", "// TODO", "allow", ""),
}


def _verdict(result) -> str:
    return "deny" if result.denied else ("allow" if result.allowed_silently else "notify")


def _said(result) -> str:
    return result.reason or result.message


@pytest.fixture
def world(tmp_path, env):
    """The governed repository (with src/deep), another repository, and a fresh cache."""
    repo = Repo(tmp_path / "repo", env)
    (repo.root / "src" / "deep").mkdir(parents=True)
    other = Repo(tmp_path / "other", env, origin=None)
    write_cache(env, ENDPOINT, text_rules=[TODO])
    return repo, other


def _cwds(repo, other) -> dict:
    return {"repo root": repo.root, "two levels down": repo.root / "src" / "deep", "/": "/",
            "another repository": other.root}


def _matrix(env, repo, other) -> dict:
    seen = {}
    for where, cwd in _cwds(repo, other).items():
        for case, (rel, text, _, _) in CASES.items():
            payload = repo.payload(rel=rel, old_string="old", new_string=text)
            payload["cwd"] = str(cwd)
            result = hook(env, payload, "--tenant", TENANT, cwd=cwd)
            verdict = _verdict(result)
            phrase = CASES[case][3]
            seen[(where, case)] = verdict if phrase in _said(result) else f"{verdict} ({_said(result)[:120]!r})"
    return seen


@pytest.mark.parametrize("layer", ["project", "user"])
def test_the_same_matrix_from_every_cwd(env, world, layer):
    repo, other = world
    if layer == "project":
        repo.config(POLICY)
    else:
        env.user_config(POLICY)  # no project file: the file's git top is the base of relative paths
    seen = _matrix(env, repo, other)
    expected = {(where, case): verdict for where in _cwds(repo, other) for case, (_, _, verdict, _) in CASES.items()}
    assert seen == expected


def test_the_before_stop_smoke_scenario(tmp_path, env):
    """/work/shared/hooks/before-stop §1b: deny src/config.rs from the repo root and from src/deep."""
    root = tmp_path / "repo"
    (root / ".bobbin").mkdir(parents=True)
    (root / "src" / "deep").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / ".bobbin" / "config.toml").write_text(
        '[yupana.policy]\nmode = "enforce"\n[yupana.policy.scopes.smoke]\nallow_paths = ["src/**"]\n'
        'deny_paths = ["src/config.rs"]\n')
    env["BOBBIN_ROLE"] = "smoke"
    for cwd in (root, root / "src" / "deep"):
        payload = {"session_id": "smoke", "cwd": str(cwd), "hook_event_name": "PreToolUse", "tool_name": "Edit",
                   "tool_input": {"file_path": str(root / "src" / "config.rs"), "old_string": "a", "new_string": "b"}}
        result = hook(env, payload, cwd=cwd)
        assert result.denied, (cwd, result)


def test_a_governed_cwd_cannot_disarm_the_files_own_project(env, world):
    """The walk starts at the file: a permissive project at the cwd does not govern another project's file."""
    repo, other = world
    repo.config(POLICY)
    other.config('[yupana.policy]\nmode = "off"\n')
    payload = repo.payload(rel="src/config.rs")
    payload["cwd"] = str(other.root)
    assert hook(env, payload, "--tenant", TENANT, cwd=other.root).denied


def test_a_file_outside_every_project_is_judged_under_the_cwds_project(env, world, tmp_path):
    """No config above the file: the session's project governs it, and it is outside every allow scope."""
    repo, _ = world
    repo.config(POLICY)
    elsewhere = tmp_path / "elsewhere" / "src" / "lib.rs"
    payload = repo.payload(rel=None, file_path=str(elsewhere))
    payload["cwd"] = str(repo.root / "src" / "deep")
    result = hook(env, payload, "--tenant", TENANT, cwd=repo.root / "src" / "deep")
    assert result.denied and "lies outside the project root" in result.reason
    repo.config(POLICY.replace('allow_paths = ["src/**"]', 'allow_paths = ["**"]'))
    assert hook(env, payload, "--tenant", TENANT, cwd=repo.root).denied  # even `**` admits only the project


MONO = GOVERNED + f"""
[yupana.policy.scopes.{TENANT}]
allow_paths = ["src/**", "fixtures/**"]
"""


def test_a_project_below_the_git_top_matches_every_plane_against_one_path(env, tmp_path):
    """git top mono/, project mono/svc/: scope, governed tripwire and text-rule exemption all see
    svc-relative paths (the exemption was judged against the git-top-relative path before)."""
    mono = Repo(tmp_path / "mono", env)
    svc = mono.root / "svc"
    (svc / ".bobbin").mkdir(parents=True)
    (svc / "src").mkdir()
    (svc / ".bobbin" / "config.toml").write_text(MONO)
    write_cache(env, ENDPOINT, text_rules=[text_rule("todo", r"\bTODO\b", tier="warn", exempt="^fixtures/")],
                tripwires=[{"iri": "urn:w", "name": "gov-wire", "paths": ["src/secret/**"], "effect": "deny",
                            "class": "hard", "verification_point": "PAG", "backoff": None, "message": None}])

    def run(rel: str, text: str = "x", cwd=svc / "src"):
        payload = mono.payload(rel=f"svc/{rel}", old_string="old", new_string=text)
        payload["cwd"] = str(cwd)
        return hook(env, payload, "--tenant", TENANT, cwd=cwd)

    for cwd in (svc, svc / "src", mono.root):
        assert run("fixtures/hosts.rs", "// TODO", cwd).allowed_silently, cwd  # exempt: ^fixtures/ relative to svc/
    assert run("src/lib.rs").allowed_silently
    assert "`todo`" in run("src/net.rs", "// TODO").message
    wire = run("src/secret/key.rs")
    assert wire.denied and "tripwire `gov-wire`" in wire.reason
    assert run("docs/a.md").denied


def test_record_paths_relative_is_relative_to_the_project_root(env, world):
    repo, _ = world
    repo.config(POLICY + '[yupana.metrics]\nrecord_paths = "relative"\n')
    payload = repo.payload(rel="src/lib.rs")
    payload["cwd"] = str(repo.root / "src" / "deep")
    assert hook(env, payload, "--tenant", TENANT, cwd=repo.root / "src" / "deep").allowed_silently
    assert env.records("guard")[-1]["path"] == "src/lib.rs"


PATCH = """*** Begin Patch
*** Update File: {a}
@@
-old
+new
*** Update File: {b}
@@
-old
+new
*** End Patch
"""


def test_a_codex_patch_across_two_projects_is_judged_under_each(env, tmp_path):
    """repo A (enforce, deny src/config.rs) and repo B (advise, deny lib/secret.rs): each file under its own."""
    a = Repo(tmp_path / "a", env).config(
        f'[yupana.policy]\nmode = "enforce"\n[yupana.policy.scopes.{TENANT}]\ndeny_paths = ["src/config.rs"]\n')
    b = Repo(tmp_path / "b", env).config(
        f'[yupana.policy]\nmode = "enforce"\n[yupana.policy.scopes.{TENANT}]\ndeny_paths = ["lib/secret.rs"]\n')
    for repo, rel in ((a, "src/config.rs"), (a, "src/ok.rs"), (b, "lib/secret.rs"), (b, "lib/ok.rs")):
        repo.file(rel, "old\n")

    def run(first, second):
        patch = PATCH.format(a=first, b=second)
        return hook(env, a.patch(patch), "--tenant", TENANT, cwd=a.root)

    assert run(a.root / "src/ok.rs", b.root / "lib/ok.rs").allowed_silently
    denied = run(a.root / "src/ok.rs", b.root / "lib/secret.rs")  # B's own deny_paths, matched B-relative
    assert denied.denied and "lib/secret.rs" in denied.reason and "the denied path `lib/secret.rs`" in denied.reason
    assert run(b.root / "lib/ok.rs", a.root / "src/config.rs").denied
    b.config(f'[yupana.policy]\nmode = "advise"\n[yupana.policy.scopes.{TENANT}]\ndeny_paths = ["lib/secret.rs"]\n')
    advised = run(a.root / "src/ok.rs", b.root / "lib/secret.rs")  # B's mode decides B's file
    assert not advised.denied and "enforce would deny" in advised.message
    assert env.records("guard")[-1]["mode"] == "enforce"  # the strongest mode the patch was judged under


# ── pre-bash, post-edit and the cold commands from a subdirectory ──────────────────────


def _bash(env, cwd, command: str) -> subprocess.CompletedProcess:
    from conftest import run_yupana

    payload = {"session_id": "s", "cwd": str(cwd), "hook_event_name": "PreToolUse", "tool_name": "Bash",
               "tool_input": {"command": command}}
    done = run_yupana(["hook", "pre-bash"], {**env, "BOBBIN_ROLE": TENANT}, stdin=json.dumps(payload), cwd=cwd)
    assert done.returncode == 0, done.stderr
    return done


def test_pre_bash_action_scope_from_a_subdirectory(env, world):
    repo, _ = world
    repo.config(f'[yupana.policy]\nmode = "enforce"\naction_scope = "enforce"\n[yupana.policy.scopes.{TENANT}]\n'
                'allow_targets = ["host:build-*"]\n')
    deep = repo.root / "src" / "deep"
    denied = _bash(env, deep, "ssh prod.example.com uptime").stdout.decode()
    assert '"permissionDecision":"deny"' in denied.replace(" ", "") and "prod.example.com" in denied
    assert _bash(env, deep, "ssh build-7.example.com make").stdout == b""


def test_post_edit_from_a_subdirectory(env, world, tmp_path):
    repo, _ = world
    repo.config(f'[yupana.policy]\nmode = "advise"\nwork_item_scope = "advise"\n'
                f'[yupana.quipu]\nenabled = true\nendpoint = "{ENDPOINT}"\ndialect = "quipu"\n')
    write_cache(env, ENDPOINT, work_item_scopes={"yup-1": ["src/a.rs"]})
    crew = tmp_path / "shanty" / "crew" / "agent-7"
    crew.mkdir(parents=True)
    (crew / "plate.json").write_text(json.dumps({"item": "yup-1", "at": int(time.time()), "session": None}))
    env.update(SHANTY_ROOT=str(tmp_path / "shanty"), SHANTY_AGENT="agent-7")
    deep = repo.root / "src" / "deep"
    for rel, speaks in (("src/a.rs", False), ("src/z.rs", True)):
        payload = repo.payload(rel=rel)
        payload.update(cwd=str(deep), hook_event_name="PostToolUse")
        result = hook(env, payload, event="post-edit", cwd=deep)
        assert bool(result.context) is speaks, (rel, result)
    assert "your edit to src/z.rs landed outside the observed ground" in result.context


def test_cold_commands_from_a_subdirectory_see_the_project(env, world, yupana):
    repo, _ = world
    repo.config(POLICY)
    deep = repo.root / "src" / "deep"
    status = yupana("status", "--json", "--offline", cwd=deep)
    report = json.loads(status.stdout)
    assert report["root"] == str(repo.root) and report["policy"]["mode"] == "enforce", status.stderr
    check = yupana("config", "check", cwd=deep).stdout.decode()
    assert str(repo.root / ".bobbin" / "config.toml") in check and "mode      enforce (from project)" in check
    payload = repo.payload(rel="src/config.rs")
    payload["cwd"] = str(deep)
    explained = yupana("explain", "--json", "--tenant", TENANT, stdin=json.dumps(payload), cwd=deep)
    report = json.loads(explained.stdout)
    assert report["decision"] == "deny" and report["invocation"]["project"] == {"root": str(repo.root),
                                                                                 "found": "file"}


def test_ci_select_from_inside_a_subproject_uses_its_config_and_its_paths(env, tmp_path, yupana):
    """git top mono/, project mono/svc/: the map's `src/**` scope sees svc/src/new.py as src/new.py."""
    from catalogue_kit import PREFIXES
    from commands.test_ci_select import GIT_IDENTITY, LINT_TEXT, UNIT_TEXT, ci_catalogue

    env.update(GIT_IDENTITY, CI_LOG=str(tmp_path / "ci.log"))
    cat = tmp_path / "cat"
    cat.mkdir()
    (cat / "catalogue.ttl").write_text(PREFIXES + ci_catalogue())
    mono, svc = tmp_path / "mono", tmp_path / "mono" / "svc"
    (svc / ".bobbin").mkdir(parents=True)
    (svc / ".bobbin" / "config.toml").write_text(f'[yupana.quipu]\nenabled = true\nendpoint = "file:{cat}"\n')
    (svc / "README.md").write_text("# svc\n")

    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(mono), *args], env=env, check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    git("add", "-A")
    git("commit", "-q", "-m", "base")
    git("checkout", "-q", "-b", "feature")
    (svc / "src").mkdir()
    (svc / "src" / "new.py").write_text("x = 1\n")
    projected = yupana("project", cwd=svc / "src")
    assert projected.returncode == 0, projected.stderr.decode()
    selected = yupana("ci-select", "--json", cwd=svc / "src")
    report = json.loads(selected.stdout)
    assert report["root"] == str(svc) and report["state"] == "selected", report
    assert [c["command"] for c in report["commands"]] == [LINT_TEXT, UNIT_TEXT]
    assert report["commands"][1]["paths"] == ["src/new.py"]
