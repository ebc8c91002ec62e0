"""End to end from Turtle: `yupana project` over the example catalogue (embedded store), then the
hook enforces what was projected — text rules with linked exemption selectors, governed tripwires."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from conftest import REPO, run_yupana
from guard_kit import Repo, hook

CATALOGUE = REPO / "fixtures" / "catalogue"


@pytest.fixture
def projected(env, tmp_path):
    if not (CATALOGUE / "text-rules.ttl").exists():
        pytest.skip("the example catalogue is not in this checkout")
    data = tmp_path / "catalogue"
    shutil.copytree(CATALOGUE, data)
    repo = Repo(tmp_path / "repo", env, origin="https://git.example/larkspur/freight.git")
    repo.config(f'[yupana.policy]\nmode = "enforce"\n[yupana.quipu]\nenabled = true\nendpoint = "file:{data}"\n')
    done = run_yupana(["project"], env, cwd=repo.root, timeout=300)
    if done.returncode != 0:
        pytest.skip(f"yupana project does not work here yet: {done.stderr.decode()[-400:]}")
    assert env.cache_path.exists()
    return repo


def test_projected_block_rule_warns_when_exposure_is_unknown(env, projected):
    # the embedded store has no /policy/check: exposure is unknown, so a block rule warns and says why
    result = hook(env, projected.payload(rel="src/net.rs", new_string='host = "db1.corp.larkspur.example"'))
    assert not result.denied and "no internal hostnames" in result.message
    assert "exposure of repo `freight` is unknown" in result.message and "(policy fresh, cache age" in result.message
    assert env.records("guard")[-1]["repo"] == "freight"


def test_projected_block_rule_denies_in_the_repository_the_catalogue_states_public(env, projected):
    # fixtures/catalogue/repo-exposure.ttl: aegis:repo_larkspur-freight aegis:exposure "public"
    subprocess.run(["git", "-C", str(projected.root), "remote", "set-url", "origin",
                    "git@git.example:larkspur/larkspur-freight.git"], check=True)
    result = hook(env, projected.payload(rel="src/net.rs", new_string='host = "db1.corp.larkspur.example"'))
    assert result.denied and "repo `larkspur-freight` is public" in result.reason and "(exposure: stated in the governed graph" in result.stderr
    assert env.records("governed")[-1]["exposure_source"] == "graph"


def test_projected_exemption_selectors_exempt_their_paths(env, projected):
    text = 'host = "db1.corp.larkspur.example"'
    for rel in ("docs/internal/hosts.md", "infra/inventory/hosts.txt", "tools/secret-scanner/patterns/a.rs"):
        result = hook(env, projected.payload(rel=rel, new_string=text))
        assert not result.denied and "no internal hostnames" not in result.stdout, rel
    assert "no internal hostnames" in hook(env, projected.payload(rel="docs/public/hosts.md", new_string=text)).stdout


def test_projected_governed_tripwires(env, projected):
    result = hook(env, projected.payload(rel="services/identity/login.rs", new_string="fn login() {}"))
    assert result.denied and "tripwire `auth-boundary`" in result.reason and "(policy fresh" in result.reason
    trip = env.records("tripwire")[-1]
    assert trip["source"] == "governed" and trip["iri"].endswith("wire_auth_boundary")
    # a soft throttle wire never blocks, records a back-off, and the next edit hears about it
    first = hook(env, projected.payload(rel="Cargo.lock", new_string="x"))
    assert not first.denied and "lockfile-churn" in first.message
    throttle = env.records("throttle")[-1]
    assert throttle["backoff_secs"] == 300 and throttle["constraint_id"] == "tripwire:lockfile-churn"
    assert "back-off active" in hook(env, projected.payload(rel="src/x.rs", new_string="y")).message
