"""Issue 23 §3: the denial corpus keeps no secret, is private and per project, and the
similarity advisory can never change a decision — through the real hook."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys

import pytest
from guard_kit import Repo, Result, hook, text_rule, write_cache

ENDPOINT = "http://127.0.0.1:9"
TOKEN_A = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
TOKEN_B = "ghp_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"
RULE = "rule_no_github_tokens"


def _config(exposure: str = "public", extra: str = "") -> str:
    return (f'[yupana.policy]\nmode = "enforce"\nexposure = "{exposure}"\n'
            f'[yupana.policy.scopes.polecat-3]\ndeny_paths = ["src/secret.rs", "src/other.rs"]\n'
            f'[yupana.quipu]\nenabled = true\nendpoint = "{ENDPOINT}"\ndialect = "quipu"\n'
            f'projection_cache_ttl_secs = 7200\nrefresh_interval_secs = 3600\n{extra}')


def _client(token: str) -> str:
    return (f'let client = GitHubClient::connect(api_token = "{token}", retries = 3, timeout_secs = 30, '
            'user_agent = "widgets-sync", base_url = GITHUB_API_BASE);\n'
            'let repositories = client.fetch_repositories(ORGANISATION_NAME, per_page = 100)?;\n'
            'for repository in repositories { mirror_repository(&repository, &local_mirror_root)?; '
            'record_sync(&repository.full_name); }')


@pytest.fixture
def repos(tmp_path, env):
    write_cache(env, ENDPOINT, text_rules=[text_rule(RULE, r"ghp_[A-Za-z0-9]{36}", tier="block",
                                                     label="no GitHub tokens")])
    a = Repo(tmp_path / "team-a", env).config(_config("public"))
    b = Repo(tmp_path / "team-b", env, origin="git@github.com:acme/other.git").config(_config("internal"))
    return a, b


def _edit(repo: Repo, text: str, rel: str = "src/lib.rs", session: str = "sess-a") -> dict:
    return repo.payload(rel=rel, old_string="fn a() {}", new_string=text, session=session)


def _corpus(env):
    [corpus] = list(env.state.rglob("denials.jsonl"))
    return corpus


def test_a_denied_secret_is_masked_in_a_private_corpus(env, repos):
    a, _ = repos
    denied = hook(env, _edit(a, _client(TOKEN_A)))
    assert denied.denied and TOKEN_A in denied.reason  # the agent that wrote it is told what was caught
    corpus = _corpus(env)
    text = corpus.read_text()
    assert TOKEN_A not in text and TOKEN_A[:12] not in text
    [entry] = [json.loads(line) for line in text.splitlines()]
    assert entry["rule"] == RULE and "***" in entry["reason"] and "no GitHub tokens" in entry["reason"]
    assert stat.S_IMODE(corpus.stat().st_mode) == 0o600


def test_a_corpus_left_world_readable_is_made_private_and_loses_its_clear_entries(env, repos):
    a, _ = repos
    assert hook(env, _edit(a, _client(TOKEN_A))).denied
    corpus = _corpus(env)
    legacy = {"at": json.loads(corpus.read_text())["at"], "rule": RULE, "reason": f"introduces `{TOKEN_B}`",
              "model": "m", "k": "1", "w": "1"}  # as today's main wrote them: no project, the match in clear
    with corpus.open("a") as fh:
        fh.write(json.dumps(legacy) + "\n")
    corpus.chmod(0o644)
    assert hook(env, _edit(a, _client(TOKEN_A).replace("retries", "attempts"))).denied
    assert stat.S_IMODE(corpus.stat().st_mode) == 0o600 and TOKEN_B not in corpus.read_text()


def test_another_project_on_the_same_store_is_never_shown_this_projects_denials(env, repos):
    a, b = repos
    assert hook(env, _edit(a, _client(TOKEN_A))).denied
    # the same secret retried in project B (internal: its own rule only warns, quoting B's own edit)
    near = hook(env, _edit(b, _client(TOKEN_A), session="sess-b"), "--tenant", "polecat-3")
    assert not near.denied and "no GitHub tokens" in near.message
    assert "near (cosine" not in near.stdout
    assert not env.records("recurrence_advisory")


def test_a_near_duplicate_in_another_session_under_codex_is_never_quoted_the_secret(env, repos):
    a, _ = repos
    assert hook(env, _edit(a, _client(TOKEN_A))).denied
    added = "".join("+" + line + "\n" for line in _client(TOKEN_B).replace("30", "60").splitlines())
    patch = "*** Begin Patch\n*** Add File: src/client.rs\n" + added + "*** End Patch\n"
    again = hook(env, a.patch(patch, session="sess-other"))
    assert again.denied and "near (cosine" in again.reason and f"`{RULE}`" in again.reason
    assert TOKEN_A not in again.stdout
    assert "no GitHub tokens" not in again.reason.split("decides nothing")[0]  # another session's refusal: not quoted


def test_the_same_session_is_shown_its_own_masked_refusal(env, repos):
    a, _ = repos
    assert hook(env, _edit(a, _client(TOKEN_A))).denied
    again = hook(env, _edit(a, _client(TOKEN_B).replace("30", "60")))
    advisory = again.reason.split("decides nothing")[0]
    assert "near (cosine" in advisory and "no GitHub tokens" in advisory and "***" in advisory
    assert TOKEN_A not in again.stdout


def test_record_paths_off_keeps_no_path_of_any_file_of_a_codex_patch(env, repos):
    a, _ = repos
    body = "+pub fn rotate_signing_key(store: &mut KeyStore) -> Result<(), KeyError> { store.rotate_now(true) }\n"
    patch = ("*** Begin Patch\n*** Add File: src/secret.rs\n" + body + "*** Add File: src/other.rs\n" + body
             + "*** End Patch\n")
    denied = hook(env, a.patch(patch), "--tenant", "polecat-3")
    assert denied.denied and "src/other.rs" in denied.reason
    text = _corpus(env).read_text()
    assert "secret.rs" not in text and "other.rs" not in text and str(a.root) not in text


@pytest.mark.parametrize("reason", [None, 42, ["x"], {"a": 1}])
def test_a_malformed_corpus_line_never_turns_a_deny_paths_deny_into_an_allow(env, tmp_path, reason):
    repo = Repo(tmp_path / "repo", env).config(
        '[yupana.policy]\nmode = "enforce"\n[yupana.policy.scopes.polecat-3]\ndeny_paths = ["src/secret.rs"]\n')
    text = "pub fn rotate_signing_key(store: &mut KeyStore) -> Result<(), KeyError> { store.rotate_now(true) }"
    assert hook(env, _edit(repo, text, rel="src/secret.rs"), "--tenant", "polecat-3").denied
    corpus = _corpus(env)
    entry = json.loads(corpus.read_text())
    corpus.write_text(json.dumps({**entry, "reason": reason, "rule": reason}) + "\n")  # the only, nearest entry
    again = hook(env, _edit(repo, text, rel="src/secret.rs"), "--tenant", "polecat-3")
    assert again.denied and "the denied path `src/secret.rs`" in again.reason
    assert not [r for r in env.records("fail_open") if r.get("fail_kind") == "internal"]


def test_an_exception_in_the_advisory_never_discards_a_deny_paths_deny(env, tmp_path):
    repo = Repo(tmp_path / "repo", env).config(
        '[yupana.policy]\nmode = "enforce"\n[yupana.policy.scopes.polecat-3]\ndeny_paths = ["src/secret.rs"]\n')
    text = "pub fn rotate_signing_key(store: &mut KeyStore) -> Result<(), KeyError> { store.rotate_now(true) }"
    # the one fault no file can cause: the advisory itself raising (a bug), injected into the real CLI
    code = ("import sys\nfrom yupana.evaluate import recurrence\n"
            "def boom(*a, **k):\n    raise RuntimeError('advisory bug')\n"
            "recurrence.consult = boom\nfrom yupana.cli import main\n"
            "sys.argv = ['yupana', '--tenant', 'polecat-3', 'hook', 'pre-edit']\nmain()\n")
    done = subprocess.run([sys.executable, "-c", code], input=json.dumps(_edit(repo, text, rel="src/secret.rs")).encode(),
                          env=env, capture_output=True, timeout=60)
    result = Result(done)
    assert result.denied and "the denied path `src/secret.rs`" in result.reason
    assert "advisory bug" in result.stderr
    [failed] = [r for r in env.records("fail_open") if r.get("fail_kind") == "recurrence"]
    assert "advisory bug" in failed["reason"]
    assert env.records("guard")[-1]["result"] == "deny"


def test_the_corpus_is_created_private_even_under_a_permissive_umask(env, tmp_path):
    repo = Repo(tmp_path / "repo", env).config(
        '[yupana.policy]\nmode = "enforce"\n[yupana.policy.scopes.polecat-3]\ndeny_paths = ["src/secret.rs"]\n')
    text = "pub fn rotate_signing_key(store: &mut KeyStore) -> Result<(), KeyError> { store.rotate_now(true) }"
    old = os.umask(0)
    try:
        assert hook(env, _edit(repo, text, rel="src/secret.rs"), "--tenant", "polecat-3").denied
    finally:
        os.umask(old)
    assert stat.S_IMODE(_corpus(env).stat().st_mode) == 0o600


def test_no_state_file_keeps_the_denied_secret(env, repos):
    a, _ = repos
    assert hook(env, _edit(a, _client(TOKEN_A))).denied
    assert hook(env, a.patch("*** Begin Patch\n*** Add File: src/c.rs\n+" + _client(TOKEN_A).replace("\n", "\n+")
                             + "\n*** End Patch\n", session="sess-codex")).denied
    kept = [p for p in env.base.rglob("*") if p.is_file() and TOKEN_A.encode() in p.read_bytes()]
    assert kept == []
