"""``yupana test`` against the configured store (a real Oxigraph) and against a signed bundle:
the same cases, the same decisions as against the files; the host's own configuration, cache and
spool play no part."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import REPO, Env, run_yupana
from tests.commands.test_rule_tests import CASES, as_json, write

CATALOGUE_FILES = sorted((REPO / "fixtures" / "catalogue").glob("*.ttl"))


def configure(root: Path, text: str) -> None:
    write(root / ".bobbin" / "config.toml", text)


def test_the_configured_store_is_tested_fresh_and_the_hosts_settings_play_no_part(yupana, env, tmp_path,
                                                                                    oxigraph_server):
    url = oxigraph_server(*CATALOGUE_FILES)
    root = tmp_path / "store-ci"
    # the host's own mode, scopes and a local tripwire: none of them may decide a case
    configure(root, f'[yupana.quipu]\nenabled = true\nendpoint = {json.dumps(url)}\n'
                    '[yupana.policy]\nmode = "off"\n'
                    '[[yupana.policy.tripwires]]\nname = "local-src"\npaths = ["src/**"]\neffect = "deny"\n')
    cases = write(root / "tests" / "policy.test.toml", CASES)
    done = yupana("test", cases, "--json", cwd=root)
    doc = as_json(done)
    assert done.returncode == 0, [c["failures"] for c in doc["cases"]]
    assert doc["source"].startswith("store http://127.0.0.1:") and doc["counts"]["passed"] == 8
    files = as_json(yupana("test", "--catalogue", *map(str, CATALOGUE_FILES), cases, "--json"))
    assert doc["digest"] == files["digest"]  # the same rule set through the server as from the files
    assert [c["decision"] for c in doc["cases"]] == [c["decision"] for c in files["cases"]]
    assert not (env.state / "yupana" / "stores").exists()  # the host's cache was neither read nor written


def test_a_store_that_cannot_be_reached_is_unusable_input(yupana, tmp_path):
    from servers.oxigraph import free_port

    root = tmp_path / "down"
    configure(root, f'[yupana.quipu]\nenabled = true\nendpoint = "http://127.0.0.1:{free_port()}/query"\n'
                    'connect_timeout_secs = 0.5\nrefresh_deadline_secs = 3\n')
    done = yupana("test", write(root / "a.test.toml", CASES), cwd=root)
    assert done.returncode == 2 and b"the catalogue was refused (connect)" in done.stderr, done.stderr


@pytest.fixture
def signed(tmp_path):
    """A bundle of the bundled catalogue, signed by a fresh key: (bundle path, public key line)."""
    publisher = Env(tmp_path / "publisher")
    key = tmp_path / "key.pem"
    made = run_yupana(["bundle", "keygen", "--out", str(key), "--json"], publisher)
    assert made.returncode == 0, made.stderr
    pub = tmp_path / "pub"
    configure(pub, f'[yupana.quipu]\nenabled = true\nendpoint = "file:{REPO / "fixtures" / "catalogue"}"\n'
                   f'[yupana.bundle]\nsigning_key_path = {json.dumps(str(key))}\n')
    out = tmp_path / "rules.bundle"
    built = run_yupana(["bundle", "build", "--out", str(out)], publisher, cwd=pub)
    assert built.returncode == 0, built.stderr
    return str(out), json.loads(made.stdout)["public_key"]


def test_a_signed_bundle_is_verified_then_its_rules_tested(yupana, tmp_path, signed):
    bundle, public = signed
    cases = write(tmp_path / "cases" / "a.test.toml", CASES)
    done = yupana("test", "--bundle", bundle, "--trusted-key", public, cases, "--json")
    doc = as_json(done)
    assert done.returncode == 0, [c["failures"] for c in doc["cases"]]
    assert doc["source"] == f"bundle {bundle}" and doc["counts"]["passed"] == 8
    untrusted = yupana("test", "--bundle", bundle, cases)
    assert untrusted.returncode == 2 and b"no trusted key for the bundle" in untrusted.stderr
    other = yupana("test", "--bundle", bundle, "--trusted-key", "ed25519:" + "A" * 43 + "=", cases)
    assert other.returncode == 2 and b"bundle-unknown-key" in other.stderr, other.stderr
    tampered = Path(bundle).read_bytes().replace(b"rule_no_aws_access_keys", b"rule_no_aws_access_keyz")
    forged = write(tmp_path / "forged.bundle", tampered.decode())
    done = yupana("test", "--bundle", forged, "--trusted-key", public, cases)
    assert done.returncode == 2 and b"bundle-signature" in done.stderr, done.stderr


def test_a_configured_file_store_resolves_against_its_project_from_anywhere(yupana, tmp_path):
    import shutil

    root = tmp_path / "policy-repo"
    shutil.copytree(REPO / "fixtures" / "catalogue", root / "catalogue")
    configure(root, '[yupana.quipu]\nenabled = true\nendpoint = "file:catalogue"\n')
    cases = write(tmp_path / "cases" / "a.test.toml", CASES)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = yupana("test", "--root", str(root), cases, "--json", cwd=elsewhere)
    doc = as_json(done)
    assert done.returncode == 0 and doc["source"] == f"store file:{root / 'catalogue'}", doc.get("error")
    alt = tmp_path / "alt.toml"
    alt.write_text(f'[yupana.quipu]\nenabled = true\nendpoint = "file:{root / "catalogue" / "text-rules.ttl"}"\n')
    only_text = as_json(yupana("--config", str(alt), "test", "--root", str(root), cases, "--json", cwd=elsewhere))
    assert only_text["exit_code"] == 1 and {u["plane"] for u in only_text["coverage"]["uncovered"]} == {"text_rules"}
