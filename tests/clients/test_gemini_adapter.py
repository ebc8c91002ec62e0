"""Gemini CLI through the real yupana CLI, without the client: the payloads the real Gemini CLI
0.61.0 sent (tests/clients/payloads/gemini-*.json, from shared/fixtures/clients-more) in, the
answer Gemini honours out — and ``yupana install|uninstall gemini`` on its settings files.

The end-to-end proof under the real binary is tests/clients/test_gemini.py.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "hooks"))
from guard_kit import Repo, text_rule, write_cache
from conftest import run_yupana

PAYLOADS = Path(__file__).resolve().parent / "payloads"
ENFORCE = """[yupana.policy]
mode = "enforce"
action_scope = "enforce"

[yupana.policy.scopes.t]
deny_paths = ["secrets/**"]
deny_targets = ["host:*.prod.example"]

[[yupana.policy.tripwires]]
name = "auth-boundary"
paths = ["src/auth/**"]
effect = "deny"
message = "auth code is owned by the security team"
"""


@pytest.fixture
def repo(tmp_path, env):
    env["BOBBIN_ROLE"] = "t"  # pre-bash reads its tenant from the environment only
    return Repo(tmp_path / "repo", env).config(ENFORCE)


def recorded(name: str, repo: Repo, **tool_input: object) -> dict:
    """A payload the real Gemini CLI sent, with its project and home placeholders filled in."""
    text = (PAYLOADS / f"gemini-adapter-{name}.json").read_text()
    data = json.loads(text.replace("<proj>", str(repo.root)).replace("<home>", str(repo.env.home)))
    data["tool_input"].update(tool_input)
    return data


def answer(env, payload: dict, *flags: str, event: str = "pre-edit") -> dict:
    """The hook's stdout as Gemini reads it (exit 0 always; empty stdout is ``{}``)."""
    done = run_yupana(["--tenant", "t", *flags, "hook", event], env, stdin=json.dumps(payload))
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout) if done.stdout else {}
    assert isinstance(out, dict)
    assert "continue" not in out and "permissionDecision" not in json.dumps(out)  # never stop the agent
    return out


# ── the hooks answer in Gemini's shape ───────────────────────────────────────────────────────


@pytest.mark.parametrize("flags", [(), ("--client", "gemini")])
def test_a_recorded_write_file_into_a_tripwire_is_denied_in_the_shape_gemini_reads(env, repo, flags):
    out = answer(env, recorded("write_file", repo), *flags)
    assert out["decision"] == "deny"
    assert out["reason"].startswith("yupana:") and "auth-boundary" in out["reason"]
    [guard] = env.records("guard")
    assert (guard["result"], guard["client"], guard["tool"]) == ("deny", "gemini", "write_file")


def test_a_recorded_replace_is_read_as_an_edit_of_its_file(env, repo):
    repo.file("README.md", "hello\n")
    assert answer(env, recorded("replace", repo)) == {}
    assert [(g["result"], g["client"]) for g in env.records("guard")] == [("allow", "gemini")]
    out = answer(env, recorded("replace", repo, file_path=str(repo.root / "secrets" / "a.env")))
    assert out["decision"] == "deny" and "the denied path `secrets/**`" in out["reason"]


GOVERNED = """[yupana.policy]
mode = "enforce"
exposure = "public"

[yupana.quipu]
enabled = true
endpoint = "http://127.0.0.1:9"
"""


@pytest.mark.parametrize("tool,fields", [("write_file", {"content": "let key = \"AKIA0123456789ABCDEF\";\n"}),
                                         ("replace", {"old_string": "hello", "new_string": "AKIA0123456789ABCDEF"})])
def test_a_content_rule_reads_the_text_a_gemini_edit_introduces(env, repo, tool, fields):
    """What Copilot missed with a Claude-shaped reading: the rule must see content / new_string."""
    write_cache(env, "http://127.0.0.1:9", text_rules=[text_rule("no-aws-key", r"AKIA[0-9A-Z]{16}")])
    repo.config(GOVERNED).file("README.md", "hello\n")
    out = answer(env, recorded(tool, repo, file_path=str(repo.root / "README.md"), **fields))
    assert out.get("decision") == "deny" and "no-aws-key" in out["reason"], out
    clean = {k: v.replace("AKIA0123456789ABCDEF", "nothing secret") for k, v in fields.items()}
    assert "decision" not in answer(env, recorded(tool, repo, file_path=str(repo.root / "README.md"), **clean))


def test_a_replace_with_an_empty_old_string_creates_the_file_and_is_checked_as_a_write(env, repo):
    payload = recorded("replace", repo, file_path=str(repo.root / "src" / "auth" / "new.rs"), old_string="",
                       new_string="pub fn f() {}\n")
    out = answer(env, payload)
    assert out["decision"] == "deny" and "auth-boundary" in out["reason"]


def test_a_recorded_run_shell_command_to_a_prod_host_is_denied_and_an_echo_of_it_is_not(env, repo):
    out = answer(env, recorded("run_shell_command", repo), event="pre-bash")
    assert out["decision"] == "deny" and "host `db1.prod.example`" in out["reason"]
    assert [r["client"] for r in env.records("pre_bash_invoked")] == ["gemini"]
    echo = recorded("run_shell_command", repo, command='echo "ssh deploy@db1.prod.example uptime"')
    assert answer(env, echo, event="pre-bash") == {}


def test_run_shell_command_is_judged_in_its_dir_path(env, repo):
    """``dir_path`` is where Gemini runs the command: a write there lands under that directory
    (here onto the guard's own configuration, which pre-bash refuses)."""
    payload = recorded("run_shell_command", repo, command="echo x > config.toml", dir_path=".bobbin")
    out = answer(env, payload, event="pre-bash")
    assert out.get("decision") == "deny" and "the guard's configuration" in out["reason"]
    elsewhere = recorded("run_shell_command", repo, command="echo x > config.toml", dir_path="src")
    (repo.root / "src").mkdir()
    assert answer(env, elsewhere, event="pre-bash") == {}


def test_explain_rehearses_a_recorded_gemini_payload_with_the_hook_it_would_run(env, repo, yupana):
    done = yupana("explain", "--json", stdin=json.dumps(recorded("run_shell_command", repo)), cwd=repo.root)
    report = json.loads(done.stdout)
    assert report["hook"] == "pre-bash" and "run_shell_command" in report["hook_from"], report
    assert json.loads(report["stdout"])["decision"] == "deny"
    done = yupana("explain", "--json", stdin=json.dumps(recorded("write_file", repo)), cwd=repo.root)
    assert json.loads(done.stdout)["hook"] == "pre-edit"


def test_an_after_tool_call_never_denies(env, repo):
    payload = dict(recorded("write_file", repo), hook_event_name="AfterTool",
                   tool_response={"llmContent": "ok", "returnDisplay": "ok"})
    out = answer(env, payload, event="post-edit")
    assert "decision" not in out
    assert [r["client"] for r in env.records("post_edit_invoked")] == ["gemini"]


def test_a_notice_is_a_system_message_for_the_user(env, repo):
    repo.config('[yupana.policy]\nmode = "advise"\nadvise_audience = "model"\n'
                '[yupana.policy.scopes.t]\ndeny_paths = ["secrets/**"]\n')
    out = answer(env, recorded("write_file", repo, file_path=str(repo.root / "secrets" / "a.env")))
    assert "decision" not in out and "enforce would deny" in out["systemMessage"]  # BeforeTool: no model channel


# ── yupana install / uninstall gemini ────────────────────────────────────────────────────────


def settings(path: Path) -> dict:
    return json.loads(path.read_text())


def ours(data: dict) -> list[tuple[str, str, int, str]]:
    return sorted((event, g["matcher"], h["timeout"], h["command"].split(" hook ", 1)[1].split(" 2>", 1)[0])
                  for event, groups in data["hooks"].items() for g in groups for h in g["hooks"]
                  if "yupana" in h["command"])


def test_install_writes_before_and_after_tool_hooks_in_milliseconds_through_the_wrapper(env, repo, yupana):
    done = yupana("install", "gemini", cwd=repo.root)
    assert done.returncode == 0, done.stderr
    data = settings(repo.root / ".gemini" / "settings.json")
    assert ours(data) == [("AfterTool", "write_file|replace", 5000, "post-edit --client gemini"),
                          ("BeforeTool", "run_shell_command", 5000, "pre-bash --client gemini"),
                          ("BeforeTool", "write_file|replace", 5000, "pre-edit --client gemini")]
    for groups in data["hooks"].values():
        for g in groups:
            command = g["hooks"][0]["command"]
            assert command.startswith("out=$(") and command.endswith("2>/dev/null) || exit 0; printf '%s' \"$out\"")
    again = yupana("install", "gemini", cwd=repo.root)
    assert again.returncode == 0 and b"no change" in again.stdout


def test_install_merges_into_existing_settings_and_uninstall_removes_only_ours(env, repo, yupana):
    path = repo.root / ".gemini" / "settings.json"
    path.parent.mkdir()
    theirs = {"matcher": "write_file", "hooks": [{"type": "command", "command": "/opt/lint.sh", "timeout": 900}]}
    before = {"security": {"auth": {"selectedType": "gemini-api-key"}}, "ui": {"theme": "x"},
              "hooks": {"BeforeTool": [theirs]}}
    path.write_text(json.dumps(before, indent=2))
    assert yupana("install", "gemini", cwd=repo.root).returncode == 0
    data = settings(path)
    assert data["security"] == before["security"] and data["ui"] == before["ui"]
    assert data["hooks"]["BeforeTool"][0] == theirs and len(ours(data)) == 3
    done = yupana("uninstall", "gemini", cwd=repo.root)
    assert done.returncode == 0, done.stderr
    assert settings(path) == before


def test_install_dry_run_writes_nothing_and_bad_settings_lose_nothing(env, repo, yupana):
    done = yupana("install", "gemini", "--dry-run", cwd=repo.root)
    assert done.returncode == 0 and b"+++" in done.stdout and b"\"timeout\": 5000" in done.stdout
    assert not (repo.root / ".gemini").exists()
    path = repo.root / ".gemini" / "settings.json"
    path.parent.mkdir()
    path.write_text('{"hooks": {"BeforeTool": {}}}')
    done = yupana("install", "gemini", cwd=repo.root)
    assert done.returncode == 1 and b"nothing was written" in done.stderr
    assert path.read_text() == '{"hooks": {"BeforeTool": {}}}'
    commented = '{\n  // Gemini reads comments; this writer does not\n  "ui": {}\n}\n'
    path.write_text(commented)
    done = yupana("install", "gemini", "--project", cwd=repo.root)
    assert done.returncode == 1 and str(path).encode() in done.stderr and path.read_text() == commented


def test_install_user_writes_the_users_settings_under_gemini_cli_home(env, repo, yupana, tmp_path):
    assert yupana("install", "gemini", "--user", cwd=repo.root).returncode == 0
    assert len(ours(settings(env.home / ".gemini" / "settings.json"))) == 3
    env["GEMINI_CLI_HOME"] = str(tmp_path / "ghome")
    assert yupana("install", "gemini", "--user", cwd=repo.root).returncode == 0
    assert len(ours(settings(tmp_path / "ghome" / ".gemini" / "settings.json"))) == 3
    assert not (repo.root / ".gemini").exists()


def test_install_into_a_folder_gemini_does_not_trust_says_what_skips_the_hooks(env, repo, yupana):
    done = yupana("install", "gemini", cwd=repo.root)
    assert done.returncode == 0
    assert b"does not trust" in done.stderr and b"--skip-trust" in done.stderr and b"TRUST_FOLDER" in done.stderr
    (repo.root / ".gemini" / "settings.json").unlink()
    trusted = env.home / ".gemini" / "trustedFolders.json"
    trusted.parent.mkdir()
    trusted.write_text(json.dumps({str(repo.root.parent): "TRUST_FOLDER"}))
    done = yupana("install", "gemini", cwd=repo.root)
    assert done.returncode == 0 and b"does not trust" not in done.stderr


# ── yupana status: the states in which Gemini skips our hooks silently ──────────────────────


def gemini_status(yupana, repo: Repo) -> tuple[int, dict]:
    done = yupana("status", "--json", "--offline", cwd=repo.root)
    return done.returncode, json.loads(done.stdout)["clients"]["gemini"]


def trust_file(env, rules: dict) -> None:
    path = env.home / ".gemini" / "trustedFolders.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(rules))


def test_status_says_a_project_registration_in_a_folder_not_yet_trusted_is_skipped_by_skip_trust(env, repo, yupana):
    assert yupana("install", "gemini", cwd=repo.root).returncode == 0
    answer(env, recorded("replace", repo), "--client", "gemini")  # it ran once: only the trust is wrong
    rc, gemini = gemini_status(yupana, repo)
    assert rc == 3 and gemini["state"] == "degraded"
    [problem] = [p for p in gemini["problems"] if p["degraded"]]
    assert "does not trust" in problem["problem"] and "--skip-trust" in problem["problem"]
    assert "TRUST_FOLDER" in problem["fix"] and "GEMINI_CLI_TRUST_WORKSPACE=true" in problem["fix"]
    assert "yupana install gemini --user" in problem["fix"]

    trust_file(env, {str(repo.root / "src"): "TRUST_PARENT"})  # TRUST_PARENT of a child trusts the repo
    rc, gemini = gemini_status(yupana, repo)
    assert rc == 0 and gemini["state"] == "ok", gemini["problems"]
    assert gemini["folder_trust"]["trusted"] is True


def test_status_says_a_folder_marked_do_not_trust_skips_every_hook_the_users_too(env, repo, yupana):
    assert yupana("install", "gemini", "--user", cwd=repo.root).returncode == 0
    answer(env, recorded("replace", repo), "--client", "gemini")
    rc, gemini = gemini_status(yupana, repo)
    assert rc == 0 and gemini["state"] == "ok", gemini["problems"]  # a user registration: --skip-trust runs it

    trust_file(env, {str(repo.root.parent): "TRUST_FOLDER", str(repo.root): "DO_NOT_TRUST"})  # the longest wins
    rc, gemini = gemini_status(yupana, repo)
    assert rc == 3 and gemini["state"] == "degraded"
    assert any("skips every hook, the user's too" in p["problem"] for p in gemini["problems"])
    env["GEMINI_CLI_TRUST_WORKSPACE"] = "true"  # what a headless run in this environment is told
    assert gemini_status(yupana, repo)[0] == 0


def test_status_says_hooks_switched_off_in_gemini_settings_are_a_silent_skip(env, repo, yupana):
    trust_file(env, {str(repo.root): "TRUST_FOLDER"})
    assert yupana("install", "gemini", "--user", cwd=repo.root).returncode == 0
    answer(env, recorded("replace", repo), "--client", "gemini")
    path = env.home / ".gemini" / "settings.json"
    data = json.loads(path.read_text())
    path.write_text(json.dumps(dict(data, hooksConfig={"enabled": False})))
    rc, gemini = gemini_status(yupana, repo)
    assert rc == 3 and any("hooksConfig.enabled is false" in p["problem"] for p in gemini["problems"])


def test_status_says_a_registration_without_the_wrapper_blocks_the_agent_when_yupana_fails(env, repo, yupana):
    trust_file(env, {str(repo.root): "TRUST_FOLDER"})
    path = repo.root / ".gemini" / "settings.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"hooks": {"BeforeTool": [{"matcher": "write_file|replace", "hooks": [
        {"type": "command", "command": "yupana hook pre-edit", "timeout": 5000}]}]}}))
    answer(env, recorded("replace", repo))
    rc, gemini = gemini_status(yupana, repo)
    assert rc == 3
    assert any("without the skew-proof wrapper" in p["problem"] and "blocks the tool" in p["problem"]
               for p in gemini["problems"] if p["degraded"])


# ── the agent cannot switch Gemini's hooks off ───────────────────────────────────────────────


@pytest.mark.parametrize("rel", [".gemini/settings.json", "home/.gemini/trustedFolders.json"])
def test_an_agents_write_to_geminis_hook_settings_or_folder_trust_is_refused(env, repo, rel):
    target = env.home / ".gemini" / "trustedFolders.json" if rel.startswith("home/") else repo.root / rel
    out = answer(env, recorded("write_file", repo, file_path=str(target), content='{"hooksConfig": {}}'))
    assert out["decision"] == "deny" and "refused" in out["reason"]
    shell = recorded("run_shell_command", repo, command=f"echo '{{}}' > {target}")
    out = answer(env, shell, event="pre-bash")
    assert out["decision"] == "deny" and "refused" in out["reason"]


def test_a_gemini_tool_yupana_does_not_read_is_a_loud_unknown_never_a_silent_allow(env, repo):
    """The matcher is a regex: an MCP tool whose name contains write_file reaches pre-edit."""
    payload = dict(recorded("write_file", repo), tool_name="mcp_fs_write_file")
    out = answer(env, payload)
    assert "decision" not in out and "mcp_fs_write_file" in out.get("systemMessage", "")
    assert env.records("fail_open")[-1]["fail_kind"] == "unknown_tool"
