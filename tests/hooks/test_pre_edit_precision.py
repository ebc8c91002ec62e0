"""Text rules as precise as a secret scanner, through the real hook (issue 25 §5): a minimum
entropy of the match or of a named group, required keywords, content allowlists."""

from __future__ import annotations

import json
import time

import pytest
from guard_kit import Repo, hook, text_rule, write_cache

ENDPOINT = "http://127.0.0.1:9"
AWS = r"AKIA[0-9A-Z]{16}"
GENERIC = r"(?i)(?:secret|password)\s*=\s*['\"](?P<secret>[^'\"]{8,})['\"]"


def _config() -> str:
    return (f'[yupana.policy]\nmode = "enforce"\n[yupana.quipu]\nenabled = true\nendpoint = "{ENDPOINT}"\n'
            'dialect = "quipu"\nprojection_cache_ttl_secs = 7200\nrefresh_interval_secs = 300\n')


def _public(env) -> None:
    path = env.cache_for(ENDPOINT).parent / "exposure.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    entry = {"exposure": "public", "at": int(time.time())}
    path.write_text(json.dumps({"version": 1, "entries": {f"{ENDPOINT}|widgets": entry}}))


def _repo(tmp_path, env, *rules) -> Repo:
    repo = Repo(tmp_path / "repo", env).config(_config())
    write_cache(env, ENDPOINT, text_rules=list(rules))
    _public(env)
    return repo



@pytest.fixture
def scanner(tmp_path, env):
    aws = dict(text_rule("aws_key", AWS), min_entropy=3.0, stopwords=["example"],
               allow_match_regex="X{8,}")
    generic = dict(text_rule("generic_secret", GENERIC), min_entropy=3.5, secret_group="secret",
                   keywords=["password", "secret"])
    return _repo(tmp_path, env, aws, generic)


def test_a_high_entropy_key_is_denied(env, scanner):
    result = hook(env, scanner.payload(rel="src/app.py", old_string="x = 1", new_string="k = 'AKIAJ4ZQ7GHR2MPLW9TY'"))
    assert result.denied and "AKIAJ4ZQ7GHR2MPLW9TY" in result.reason


@pytest.mark.parametrize("text", [
    "k = 'AKIAAAAAAAAAAAAAAAAA'",  # entropy below the floor
    "k = 'AKIAXXXXXXXXXXXXXXXX'",  # a placeholder the allowlist regex names
    "k = 'AKIAIOSFODNN7EXAMPLE'",  # a stopword
])
def test_a_placeholder_key_is_allowed(env, scanner, text):
    result = hook(env, scanner.payload(rel="src/app.py", old_string="x = 1", new_string=text))
    assert not result.denied and result.allowed_silently, result.out


def test_the_entropy_of_the_named_group_decides_not_the_whole_match(env, scanner):
    low = hook(env, scanner.payload(rel="src/app.py", old_string="x = 1", new_string='password = "aaaaaaaaaaaa"'))
    assert not low.denied
    high = hook(env, scanner.payload(rel="src/app.py", old_string="x = 1", new_string='password = "q8V!zR2#mK9$wL4p"'))
    assert high.denied and "q8V!zR2#mK9$wL4p" in high.reason


def test_a_rule_whose_keywords_are_absent_is_not_run(env, tmp_path):
    repo = _repo(tmp_path, env, dict(text_rule("todo", r"\bTODO\b"), keywords=["fixme"]))
    assert not hook(env, repo.payload(rel="src/app.py", old_string="x = 1", new_string="# TODO later")).denied
    assert hook(env, repo.payload(rel="src/app.py", old_string="x = 1", new_string="# TODO FixMe later")).denied


def test_a_rule_without_precision_properties_fires_as_before(env, tmp_path):
    repo = _repo(tmp_path, env, text_rule("aws_key", AWS))
    result = hook(env, repo.payload(rel="src/app.py", old_string="x = 1", new_string="k = 'AKIAXXXXXXXXXXXXXXXX'"))
    assert result.denied and "AKIAXXXXXXXXXXXXXXXX" in result.reason
