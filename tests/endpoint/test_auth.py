"""Credentials: where secrets come from, and that they never show."""

from __future__ import annotations

import base64

import pytest

from yupana.endpoint.auth import Credentials, read_credentials, token_for_writes
from yupana.endpoint.base import EndpointError


def test_no_auth_means_no_credentials():
    assert read_credentials({"auth": "none"}, env={"YUPANA_SPARQL_SECRET": "x"}) is None
    assert read_credentials({}, env={}) is None


def test_basic_header_and_secret_hiding():
    creds = read_credentials({"auth": "basic", "auth_user": "reader"}, env={"YUPANA_SPARQL_SECRET": " pw-42 \n"})
    assert creds.header() == "Basic " + base64.b64encode(b"reader:pw-42").decode()
    assert "pw-42" not in repr(creds)
    encoded = creds.header().split(" ", 1)[1]
    assert creds.scrub(f"server said: pw-42 / {encoded}") == "server said: *** / ***"


def test_the_environment_wins_over_the_file(tmp_path):
    secret = tmp_path / "secret"
    secret.write_text("from-file\nsecond line ignored\n")
    table = {"auth": "bearer", "credentials_env": "STORE_TOKEN", "credentials_file": str(secret)}
    assert read_credentials(table, env={"STORE_TOKEN": "from-env"}).header() == "Bearer from-env"
    assert read_credentials(table, env={}).header() == "Bearer from-file"


def test_basic_without_a_user_is_refused():
    with pytest.raises(EndpointError) as err:
        read_credentials({"auth": "basic"}, env={"YUPANA_SPARQL_SECRET": "pw"})
    assert err.value.kind == "auth" and "auth_user" in err.value.message


def test_an_unreadable_credentials_file_is_named(tmp_path):
    with pytest.raises(EndpointError) as err:
        read_credentials({"auth": "bearer", "credentials_file": str(tmp_path / "nope")}, env={})
    assert err.value.kind == "auth" and "nope" in err.value.message


def test_write_token_sources_in_order(tmp_path):
    home = tmp_path / "home"
    (home / ".config" / "quipu").mkdir(parents=True)
    (home / ".config" / "quipu" / "token").write_text("home-token\n")
    named = tmp_path / "named-token"
    named.write_text("file-token\n")
    assert token_for_writes({"QUIPU_AUTH_TOKEN": "env-token", "QUIPU_AUTH_TOKEN_FILE": str(named),
                             "HOME": str(home)}) == "env-token"
    assert token_for_writes({"QUIPU_AUTH_TOKEN_FILE": str(named), "HOME": str(home)}) == "file-token"
    assert token_for_writes({"HOME": str(home)}) == "home-token"
    assert token_for_writes({"QUIPU_AUTH_TOKEN": "  ", "HOME": str(tmp_path)}) is None


def test_an_empty_token_file_is_no_token(tmp_path):
    empty = tmp_path / "empty"
    empty.write_text("\n")
    assert token_for_writes({"QUIPU_AUTH_TOKEN_FILE": str(empty), "HOME": str(tmp_path)}) is None


def test_credentials_repr_hides_the_secret():
    assert "top-secret" not in repr(Credentials("bearer", None, "top-secret"))
