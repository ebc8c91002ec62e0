"""The denied-edit recurrence advisory through the real hook (issue 13 §1)."""

from __future__ import annotations

import pytest
from guard_kit import Repo, hook

from yupana.evaluate import recurrence

CONFIG = ('[yupana.policy]\nmode = "enforce"\n'
          '[yupana.policy.scopes.polecat-3]\ndeny_paths = ["src/secret.rs"]\n')
DENIED = "pub fn rotate_signing_key(store: &mut KeyStore) -> Result<(), KeyError> { store.rotate_now(true) }"
NEAR = "pub fn rotate_signing_keys(store: &mut KeyStore) -> Result<(), KeyError> { store.rotate_now(false) }"
UNRELATED = "impl Display for Widget { fn fmt(&self, f: &mut Formatter) -> fmt::Result { write!(f, \"w\") } }"


@pytest.fixture
def repo(tmp_path, env):
    return Repo(tmp_path / "repo", env)


def _edit(repo, rel: str, text: str, session: str = "sess-1"):
    return repo.payload(rel=rel, old_string="fn a() {}", new_string=text, session=session)


def _corpus(env) -> list:
    return list(env.state.rglob("denials.jsonl"))


def test_a_near_duplicate_of_a_denied_edit_gets_the_prior_verdict_as_context(env, repo):
    repo.config(CONFIG)
    first = hook(env, _edit(repo, "src/secret.rs", DENIED), "--tenant", "polecat-3")
    assert first.denied and "near (cosine" not in first.reason
    [corpus] = _corpus(env)
    assert "secret.rs" not in corpus.read_text()  # record_paths = off: no path in the corpus
    again = hook(env, _edit(repo, "src/secret.rs", NEAR), "--tenant", "polecat-3")
    assert again.denied
    assert again.reason.startswith("yupana: this edit is near (cosine")  # before the refusal's own text
    assert "denied before by `scope-declared:polecat-3`" in again.reason and "decides nothing" in again.reason
    allowed = hook(env, _edit(repo, "src/lib.rs", NEAR), "--tenant", "polecat-3")
    assert not allowed.denied and "near (cosine" in allowed.message  # a plain notice on an allow
    [*_, sealed] = env.records("recurrence_advisory")
    assert sealed["model"] == recurrence.MODEL_ID and sealed["threshold"] == recurrence.THRESHOLD
    assert recurrence.THRESHOLD <= sealed["cosine"] <= 1.0 and sealed["decision"] != "deny"
    assert sealed["corpus"]["entries"] == 2 and sealed["corpus"]["newest_at"]


def test_an_unrelated_edit_gets_no_advisory(env, repo):
    repo.config(CONFIG)
    assert hook(env, _edit(repo, "src/secret.rs", DENIED), "--tenant", "polecat-3").denied
    other = hook(env, _edit(repo, "src/lib.rs", UNRELATED), "--tenant", "polecat-3")
    assert other.allowed_silently and not env.records("recurrence_advisory")


def test_paths_are_kept_only_under_record_paths(env, repo):
    repo.config(CONFIG + '[yupana.metrics]\nrecord_paths = "relative"\n')
    assert hook(env, _edit(repo, "src/secret.rs", DENIED), "--tenant", "polecat-3").denied
    assert '"path":"src/secret.rs"' in _corpus(env)[0].read_text().replace(" ", "")
    allowed = hook(env, _edit(repo, "src/lib.rs", NEAR), "--tenant", "polecat-3")
    assert "an edit to src/secret.rs denied before" in allowed.message


def test_explain_shows_the_advisory_when_it_fires_and_appends_nothing(env, repo):
    from guard_kit import run_yupana

    repo.config(CONFIG)
    assert hook(env, _edit(repo, "src/secret.rs", DENIED), "--tenant", "polecat-3").denied
    before = _corpus(env)[0].read_text()
    out = run_yupana(["--tenant", "polecat-3", "explain"], env,
                     stdin=__import__("json").dumps(_edit(repo, "src/secret.rs", NEAR))).stdout.decode()
    assert "recurrence" in out and "near a prior denial" in out and recurrence.MODEL_ID in out
    assert _corpus(env)[0].read_text() == before  # a dry run never appends
