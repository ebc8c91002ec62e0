"""Landing certification through the real CLI: real git repositories in tmp_path, a real
``git push`` to a local bare remote running the hook ``yupana install git`` wrote, a real cache
written by ``yupana project`` from the embedded store, real commands, the real spools.

Every push evaluation is a ``landing-*`` record in the landing spool and nothing of it reaches
the metrics spool; unknown is never certified; a yupana fault never blocks a push."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from catalogue_kit import PREFIXES
from conftest import REPO, run_yupana
from model_text_kit import forbidden

GIT_IDENTITY = {"GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "test@example.invalid",
                "GIT_COMMITTER_NAME": "Test", "GIT_COMMITTER_EMAIL": "test@example.invalid"}
BIN = str(Path(sys.executable).parent)
UNIT = 'echo unit >> "$CI_LOG"; test ! -e "$CI_FAIL"'


def catalogue(coverage: str = "complete", command: str = UNIT, repo: str = "widgets", ci_map: bool = True,
              requires: str = '"ci-selection-complete" , "local-commands-pass"') -> str:
    head = f'aegis:cimap_main a aegis:CiMap ; aegis:coverage "{coverage}" ; aegis:ciJob aegis:cijob_unit .' if ci_map else ""
    return f"""
{head}
aegis:cijob_unit a aegis:CiJob ; aegis:name "unit-tests" ; rdfs:label "Unit tests" ; aegis:localCommand aegis:cmd_unit .
aegis:cmd_unit a aegis:LocalCommand ; aegis:command '{command}' ; aegis:appliesTo "src/**" .
aegis:landing_strict a aegis:LandingPolicy ; rdfs:label "strict" ; aegis:requires {requires} .
aegis:repo_{repo} aegis:landingPolicy aegis:landing_strict .
"""


class Landing:
    """``work`` (branch main, pushed to the bare ``widgets.git``), configured for a file: catalogue
    and a signing key outside the work tree, the hook installed by ``yupana install git``."""

    def __init__(self, base: Path, env, *, mode: str = "enforce", landing: str = "advise") -> None:
        self.env = env
        env.update(GIT_IDENTITY)
        env["PATH"] = os.pathsep.join([BIN, os.path.dirname(shutil.which("git") or "/usr/bin/git"), "/usr/bin", "/bin"])
        self.log = base / "ci.log"
        env["CI_LOG"] = str(self.log)
        env["CI_FAIL"] = str(base / "FAIL")
        self.fail_flag = base / "FAIL"
        self.base = base
        self.cat = base / "cat"
        self.cat.mkdir()
        self.key = base / "keys" / "landing.pk8"
        self.landing_spool = env.state / "yupana" / "landing.jsonl"
        self.git_in(base, "init", "-q", "--bare", "widgets.git")
        self.root = base / "work"
        self.root.mkdir()
        self.git("init", "-q", "-b", "main")
        self.git("remote", "add", "origin", str(base / "widgets.git"))
        self.configure(mode=mode, landing=landing)
        self.write("src/app.py", "x = 1\n")
        self.write("README.txt", "widgets\n")
        self.commit("base")

    def configure(self, *, mode: str, landing: str, endpoint: str | None = None) -> None:
        self.write(".bobbin/config.toml",
                   f'[yupana.quipu]\nenabled = true\nendpoint = "{endpoint or "file:" + str(self.cat)}"\n'
                   f'signing_key_path = "{self.key}"\n'
                   f'[yupana.policy]\nmode = "{mode}"\nlanding = "{landing}"\n')

    def git_in(self, where: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        return subprocess.run(["git", "-C", str(where), *args], env=self.env, capture_output=True, check=check)

    def git(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        return self.git_in(self.root, *args, check=check)

    def write(self, rel: str, text: str) -> None:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)

    def commit(self, message: str) -> str:
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.head()

    def head(self) -> str:
        return self.git("rev-parse", "HEAD").stdout.decode().strip()

    def catalogue(self, body: str, *, project: bool = True) -> None:
        (self.cat / "catalogue.ttl").write_text(PREFIXES + body)
        if project:
            done = run_yupana(["project"], self.env, cwd=self.root)
            assert done.returncode == 0, done.stderr.decode()

    def yupana(self, *args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess:
        return run_yupana(list(args), self.env, cwd=self.root, stdin=stdin)

    def install(self) -> None:
        done = self.yupana("install", "git")
        assert done.returncode == 0, done.stderr.decode()

    def keygen(self) -> dict:
        done = self.yupana("landing", "keygen", "--json")
        assert done.returncode == 0, done.stderr.decode()
        return json.loads(done.stdout)

    def push(self, *refspec: str) -> subprocess.CompletedProcess:
        return self.git("push", "origin", *(refspec or ("main",)), check=False)

    def remote_head(self, ref: str = "refs/heads/main") -> str | None:
        done = self.git_in(self.base / "widgets.git", "rev-parse", "--verify", "--quiet", ref, check=False)
        return done.stdout.decode().strip() or None

    def certifications(self) -> list[dict]:
        if not self.landing_spool.exists():
            return []
        return [json.loads(line) for line in self.landing_spool.read_text().splitlines() if line.strip()]

    def ran(self) -> list[str]:
        return self.log.read_text().splitlines() if self.log.exists() else []


@pytest.fixture
def land(tmp_path, env) -> Landing:
    return Landing(tmp_path, env)


def landing_kinds(records: list[dict]) -> list[str]:
    return [r["kind"] for r in records if str(r.get("kind", "")).startswith("landing")]


# ── certified, signed, verified; its own population ──────────────────────────────────


def test_a_push_whose_selection_passes_is_certified_signed_and_verifies(land, env):
    key = land.keygen()
    land.catalogue(catalogue())
    land.install()
    land.write("src/app.py", "x = 2\n")
    sha = land.commit("change src")
    done = land.push()
    assert done.returncode == 0, done.stderr.decode()
    assert land.remote_head() == sha
    assert land.ran() == ["unit"]  # the selected command ran once, on the pushed commit
    [record] = land.certifications()
    assert record["kind"] == "landing-certified" and record["format"] == "yupana-landing/1"
    assert record["evaluation"] == "push" and record["repo"] == "widgets" and record["remote"] == "origin"
    assert record["ref"] == "refs/heads/main" and record["sha"] == sha and record["remote_sha"] is None
    assert record["policy"]["policy"].endswith("landing_strict") and record["policy"]["source"] == "repository"
    assert [(r["requirement"], r["outcome"]) for r in record["requirements"]] == [
        ("ci-selection-complete", "met"), ("local-commands-pass", "met")]
    assert record["commands"][0]["command"] == UNIT and record["commands"][0]["exit_code"] == 0
    assert record["policy_freshness"] == "fresh" and record["rung"] == "advise" and record["blocking"] is False
    assert record["signed"] is True and record["key_id"] == key["key_id"] and record["signature"]
    stderr = done.stderr.decode()
    assert "yupana: landing CERTIFIED refs/heads/main → origin refs/heads/main (repo `widgets`, policy `strict`" in stderr
    # its own population: nothing of the push reaches the metrics spool
    assert landing_kinds(env.records()) == [] and env.records("guard") == []
    verified = land.yupana("landing", "verify", "--last")
    assert verified.returncode == 0, verified.stdout.decode() + verified.stderr.decode()
    assert f"signed by {key['key_id']}" in verified.stdout.decode()
    # verified elsewhere with the public key alone
    assert land.yupana("landing", "verify", "--all", "--key", key["public_key"]).returncode == 0


def test_a_second_push_measures_only_what_it_adds(land):
    land.catalogue(catalogue())
    land.install()
    assert land.push().returncode == 0
    first = land.head()
    land.write("README.txt", "widgets, again\n")  # outside every scope
    second = land.commit("docs only")
    assert land.push().returncode == 0
    update = land.certifications()[-1]
    assert update["remote_sha"] == first and update["sha"] == second and update["changed"] == 1
    assert update["kind"] == "landing-certified" and update["selection"]["state"] == "quiet"
    assert update["commands"] == [] and land.ran() == ["unit"]  # nothing new to run: the complete map is quiet


# ── refused: the mode ladder decides whether it blocks ───────────────────────────────


@pytest.mark.parametrize("landing,blocks", [("enforce", True), ("advise", False)])
def test_a_failing_command_refuses_and_only_enforce_blocks(land, landing, blocks):
    land.configure(mode="enforce", landing=landing)
    land.commit("config")
    land.catalogue(catalogue())
    land.install()
    land.fail_flag.write_text("")
    sha = land.head()
    done = land.push()
    [record] = land.certifications()
    assert record["kind"] == "landing-refused" and record["blocking"] is blocks
    assert record["requirements"][1] == {"requirement": "local-commands-pass", "outcome": "unmet",
                                         "reason": f"`{UNIT}` failed (exit 1)"}
    stderr = done.stderr.decode()
    if blocks:
        assert done.returncode != 0 and land.remote_head() is None
        assert "the push is BLOCKED: make the requirement pass" in stderr
        ours = [line for line in stderr.splitlines() if line.startswith("yupana")]
        assert ours and all(forbidden(line) == [] for line in ours), ours  # issue 22 §3: nothing on skipping it
    else:
        assert done.returncode == 0 and land.remote_head() == sha
        assert "advise: the push proceeds" in stderr


def test_mode_is_the_ceiling_of_the_landing_rung(land):
    land.configure(mode="advise", landing="enforce")
    land.commit("config")
    land.catalogue(catalogue())
    land.install()
    land.fail_flag.write_text("")
    done = land.push()
    assert done.returncode == 0 and land.remote_head() == land.head()
    assert land.certifications()[0]["rung"] == "advise" and land.certifications()[0]["blocking"] is False


def test_off_evaluates_nothing_and_records_nothing(land):
    land.configure(mode="enforce", landing="off")
    land.commit("config")
    land.catalogue(catalogue())
    land.install()
    done = land.push()
    assert done.returncode == 0 and land.ran() == [] and land.certifications() == []
    assert "landing certification is off for this project" in done.stderr.decode()


# ── unknown is never certified, and never blocks ─────────────────────────────────────


def _unknown(land, done, *, reason: str) -> dict:
    assert done.returncode == 0, done.stderr.decode()  # enforce, yet UNKNOWN never blocks
    assert land.remote_head() == land.head()
    [record] = land.certifications()
    assert record["kind"] == "landing-unknown" and record["blocking"] is False, record
    assert reason in record["reason"], record["reason"]
    assert "UNKNOWN — not certified" in done.stderr.decode() and "the push proceeds" in done.stderr.decode()
    return record


@pytest.fixture
def enforcing(land):
    land.configure(mode="enforce", landing="enforce")
    land.commit("config")
    land.install()
    return land


def test_no_policy_for_the_repository_is_unknown(enforcing):
    enforcing.catalogue(catalogue(repo="gadgets"))
    record = _unknown(enforcing, enforcing.push(), reason="no landing policy for repository `widgets`")
    assert record["policy"] is None and enforcing.ran() == []


def test_a_partial_map_is_unknown_and_runs_nothing(enforcing):
    enforcing.catalogue(catalogue(coverage="partial"))
    record = _unknown(enforcing, enforcing.push(), reason="the CI map is partial")
    assert {r["outcome"] for r in record["requirements"]} == {"unknown"} and enforcing.ran() == []


def test_no_ci_map_is_unknown(enforcing, env):
    enforcing.catalogue(catalogue(ci_map=False))
    _unknown(enforcing, enforcing.push(), reason="no CI map is projected")
    [noise] = env.records("ci_shift_unknown")  # the CI-map clause's count, in the metrics spool
    assert noise["cause"] == "no-map" and noise["source"] == "pre-push" and noise["repo"] == "widgets"
    assert landing_kinds(env.records()) == []  # the certification itself is not there


def test_no_servable_cache_is_unknown_and_starts_a_refresh(enforcing):
    enforcing.catalogue(catalogue(), project=False)
    record = _unknown(enforcing, enforcing.push(), reason="no servable projection cache (absent")
    assert record["refresh_started"] is True


def test_a_command_that_cannot_run_is_unknown(enforcing):
    enforcing.catalogue(catalogue(command="no-such-checker --all"))
    record = _unknown(enforcing, enforcing.push(), reason="`no-such-checker --all` could not run (exit 127")
    assert record["commands"][0]["exit_code"] == 127


def test_a_working_tree_that_is_not_the_pushed_commit_runs_nothing(enforcing):
    enforcing.catalogue(catalogue())
    enforcing.write("src/app.py", "x = 'uncommitted'\n")
    _unknown(enforcing, enforcing.push(), reason="the working tree differs from the pushed commit")
    assert enforcing.ran() == []


def test_a_rev_range_that_cannot_be_computed_is_unknown(enforcing, tmp_path):
    enforcing.catalogue(catalogue())
    assert enforcing.push().returncode == 0
    other = tmp_path / "other"  # someone else moves the remote on
    enforcing.git_in(tmp_path, "clone", "-q", "-b", "main", str(tmp_path / "widgets.git"), str(other))
    (other / "src" / "theirs.py").write_text("y = 1\n")
    enforcing.git_in(other, "add", "-A")
    enforcing.git_in(other, "commit", "-q", "-m", "theirs")
    enforcing.git_in(other, "push", "-q", "--no-verify", "origin", "HEAD:refs/heads/main")
    enforcing.landing_spool.unlink()
    enforcing.write("src/app.py", "x = 3\n")
    enforcing.commit("mine")
    done = enforcing.push("--force", "HEAD:refs/heads/main")  # the hook sees a remote tip it does not hold
    assert done.returncode == 0, done.stderr.decode()
    [record] = enforcing.certifications()
    assert record["kind"] == "landing-unknown" and "the outgoing change cannot be computed" in record["reason"]
    assert "a commit this repository does not hold" in record["reason"]


# ── signing and verification ─────────────────────────────────────────────────────────


def test_without_a_key_the_record_is_unsigned_and_says_so(land):
    land.catalogue(catalogue())
    land.install()
    assert land.push().returncode == 0
    [record] = land.certifications()
    assert record["kind"] == "landing-certified" and record["signed"] is False
    assert "signature" not in record and "key_id" not in record
    assert f"no signing key at {land.key}" in record["unsigned_reason"]
    done = land.yupana("landing", "verify", "--last")  # no key anywhere: an unsigned record needs none
    assert done.returncode == 3 and "UNSIGNED" in done.stdout.decode() and "no signing key at" in done.stdout.decode()


def test_keygen_keeps_a_key_inside_the_work_tree_out_of_git_and_never_replaces_one(land):
    config = land.root / ".bobbin" / "config.toml"
    config.write_text(config.read_text().replace(f'signing_key_path = "{land.key}"', 'signing_key_path = "yupana-signing.pk8"'))
    land.commit("key in the tree")
    key = land.keygen()
    path = land.root / "yupana-signing.pk8"
    assert key["private_key"] == str(path) and (path.stat().st_mode & 0o777) == 0o600
    assert key["excluded_in"] and land.git("status", "--porcelain").stdout == b""  # git will not commit it
    before = path.read_bytes()
    again = land.yupana("landing", "keygen")
    assert again.returncode == 1 and "never replaced" in again.stderr.decode() and path.read_bytes() == before


def _signed_push(land) -> dict:
    key = land.keygen()
    land.catalogue(catalogue())
    land.install()
    assert land.push().returncode == 0
    return key


def _verify_line(land, line: str, *extra: str) -> tuple[int, dict]:
    path = land.base / "record.json"
    path.write_text(line)
    done = land.yupana("landing", "verify", str(path), "--json", *extra)
    return done.returncode, json.loads(done.stdout)


@pytest.mark.parametrize("old,new", [('"repo":"widgets"', '"repo":"widgetz"'),
                                     ('"kind":"landing-certified"', '"kind":"landing-unknown"'),
                                     ('"exit_code":0', '"exit_code":1')])
def test_a_changed_byte_fails_verification(land, old, new):
    _signed_push(land)
    line = land.landing_spool.read_text().splitlines()[0]
    assert old in line
    code, doc = _verify_line(land, line.replace(old, new, 1))
    assert code == 1 and doc["records"][0]["problem"] == "signature" and doc["verified"] == 0
    code, doc = _verify_line(land, line)
    assert code == 0 and doc["verified"] == 1


def test_another_key_does_not_verify(land):
    _signed_push(land)
    other = land.yupana("landing", "keygen", "--out", str(land.base / "other.pk8"), "--json")
    done = land.yupana("landing", "verify", "--last", "--key", json.loads(other.stdout)["public_key"])
    assert done.returncode == 1 and "unknown-key" in done.stdout.decode()
    land.key.unlink()  # a signed record and no key to check it with: a usage error, never "verified"
    done = land.yupana("landing", "verify", "--last")
    assert done.returncode == 2 and "no key to verify with" in done.stderr.decode()


def test_a_record_signed_for_a_certification_it_does_not_show_is_refused(land):
    """Signed with the right key, but certified while a requirement is unknown: inconsistent."""
    _signed_push(land)
    script = f"""
import json, sys
from yupana.commands.landing import certificate
rec = json.loads(open({str(land.landing_spool)!r}).read().splitlines()[0])
rec["requirements"][1]["outcome"] = "unknown"
key = certificate.SigningKey({str(land.key)!r}, None)
print(certificate.line(certificate.seal(rec, key)).decode(), end="")
"""
    forged = subprocess.run([sys.executable, "-c", script], capture_output=True, env=land.env, check=True).stdout.decode()
    code, doc = _verify_line(land, forged)
    assert code == 1 and doc["records"][0]["problem"] == "inconsistent"


# ── refs: deletions, new branches, pre-commit ────────────────────────────────────────


def test_a_deletion_lands_nothing_and_is_not_certified(land):
    land.catalogue(catalogue())
    assert land.push("--no-verify", "HEAD:refs/heads/topic").returncode == 0
    land.install()
    done = land.push(":refs/heads/topic")
    assert done.returncode == 0 and land.remote_head("refs/heads/topic") is None
    assert land.certifications() == [] and "nothing lands" in done.stderr.decode()


def test_an_annotated_tag_is_certified_for_the_commit_it_tags(land):
    land.catalogue(catalogue())
    land.install()
    land.git("tag", "-a", "v1", "-m", "release")
    done = land.push("v1")
    assert done.returncode == 0, done.stderr.decode()
    [record] = land.certifications()
    assert record["ref"] == "refs/tags/v1" and record["kind"] == "landing-certified" and land.ran() == ["unit"]


def test_pre_commit_passes_the_ref_in_its_variables(land):
    land.catalogue(catalogue())
    base = land.head()
    land.write("src/app.py", "x = 9\n")
    sha = land.commit("for pre-commit")
    env = dict(land.env, PRE_COMMIT_FROM_REF=base, PRE_COMMIT_TO_REF=sha, PRE_COMMIT_REMOTE_NAME="origin",
               PRE_COMMIT_REMOTE_URL=str(land.base / "widgets.git"), PRE_COMMIT_LOCAL_BRANCH="refs/heads/main",
               PRE_COMMIT_REMOTE_BRANCH="refs/heads/main")
    done = run_yupana(["hook", "pre-push"], env, cwd=land.root, stdin=b"")  # pre-commit keeps git's stdin
    assert done.returncode == 0, done.stderr.decode()
    [record] = land.certifications()
    assert record["kind"] == "landing-certified" and record["sha"] == sha and record["remote_sha"] == base
    assert record["changed"] == 1 and record["repo"] == "widgets"


def test_a_remote_name_alone_is_resolved_to_its_url(land):
    land.catalogue(catalogue())
    line = f"refs/heads/main {land.head()} refs/heads/main {'0' * 40}\n".encode()
    done = land.yupana("hook", "pre-push", "origin", stdin=line)
    assert done.returncode == 0, done.stderr.decode()
    [record] = land.certifications()
    assert record["repo"] == "widgets" and record["url"] == str(land.base / "widgets.git")
    garbled = land.yupana("hook", "pre-push", "origin", str(land.base / "widgets.git"), stdin=b"not a ref line\n")
    assert garbled.returncode == 0 and land.certifications()[-1]["kind"] == "landing-unknown"
    assert "the pushed refs cannot be read" in land.certifications()[-1]["reason"]


def test_the_fixture_catalogue_through_the_embedded_store(land, tmp_path):
    """fixtures/catalogue: larkspur-infra inherits its type's policy (a complete selection only),
    larkspur-freight has its own (the selection run): mdbook, absent here, cannot run."""
    if shutil.which("mdbook", path=land.env["PATH"]):
        pytest.skip("mdbook is installed: the freight case needs a command that cannot run")
    land.configure(mode="enforce", landing="enforce", endpoint="file:" + str(REPO / "fixtures" / "catalogue"))
    land.write("docs/guide.md", "# guide\n")
    land.commit("docs")
    assert land.yupana("project").returncode == 0
    land.install()
    for name in ("larkspur-infra", "larkspur-freight"):
        land.git_in(tmp_path, "init", "-q", "--bare", f"{name}.git")
        land.git("remote", "add", name, str(tmp_path / f"{name}.git"))
        assert land.git("push", name, "HEAD:refs/heads/main", check=False).returncode == 0
    infra, freight = land.certifications()
    assert infra["kind"] == "landing-certified" and infra["repo"] == "larkspur-infra"
    assert infra["policy"]["source"] == "repository-type" and infra["policy"]["repository_type"].endswith(
        "repotype_service")
    assert infra["commands"] == []  # ci-selection-complete only: the selection is not run
    assert freight["kind"] == "landing-unknown" and freight["policy"]["source"] == "repository"
    assert "`mdbook build docs` could not run (exit 127" in freight["reason"]


# ── faults fail open ─────────────────────────────────────────────────────────────────


def test_a_yupana_that_cannot_run_never_blocks_the_push(land):
    land.configure(mode="enforce", landing="enforce")
    land.commit("config")
    land.catalogue(catalogue())
    land.install()
    land.fail_flag.write_text("")
    hook = land.root / ".git" / "hooks" / "pre-push"
    hook.write_text(hook.read_text().replace(" hook pre-push", " hook pre-push-from-the-future"))
    done = land.push()  # a yupana too old to know the hook: "not understood", exit 0
    assert done.returncode == 0 and land.remote_head() == land.head()
    assert "hook invocation not understood" in done.stderr.decode()
    hook.write_text(hook.read_text().replace(BIN, str(land.base / "gone")))
    land.write("src/app.py", "x = 5\n")
    land.commit("again")
    done = land.push()  # yupana absent: 127, and the script says the push is not certified
    assert done.returncode == 0 and land.remote_head() == land.head()
    assert "this push is NOT certified" in done.stderr.decode()


def test_a_landing_spool_that_cannot_be_written_is_said_and_the_push_proceeds(land, env):
    land.catalogue(catalogue())
    land.install()
    blocked = land.base / "not-a-file"
    blocked.mkdir()
    env["YUPANA_LANDING_PATH"] = str(blocked)
    done = land.push()
    assert done.returncode == 0 and land.remote_head() == land.head()
    assert "the certification could not be recorded" in done.stderr.decode()


def test_a_configuration_error_is_unknown_and_the_push_proceeds(land):
    land.catalogue(catalogue())
    land.install()
    config = land.root / ".bobbin" / "config.toml"
    config.write_text(config.read_text().replace('landing = "advise"', 'landing = "always"'))
    land.commit("broken config")
    done = land.push()
    assert done.returncode == 0 and land.remote_head() == land.head() and land.ran() == []
    [record] = land.certifications()
    assert record["kind"] == "landing-unknown" and record["repo"] == "widgets" and record["rung"] == "?"
    assert "configuration error" in record["reason"] and "landing" in record["reason"]


# ── install git ──────────────────────────────────────────────────────────────────────


def test_install_never_clobbers_a_foreign_hook_and_uninstall_removes_only_ours(land):
    hook = land.root / ".git" / "hooks" / "pre-push"
    hook.parent.mkdir(parents=True, exist_ok=True)
    hook.write_text("#!/bin/sh\nexit 0\n")
    done = land.yupana("install", "git")
    assert done.returncode == 1 and "not yupana's: not replaced" in done.stderr.decode()
    assert hook.read_text() == "#!/bin/sh\nexit 0\n"
    assert land.yupana("uninstall", "git").returncode == 1 and hook.exists()  # a foreign hook is left alone
    done = land.yupana("install", "git", "--force")
    assert done.returncode == 0 and "kept as" in done.stdout.decode()
    assert "yupana-landing-hook" in hook.read_text() and os.access(hook, os.X_OK)
    assert (hook.parent / "pre-push.yupana-backup").read_text() == "#!/bin/sh\nexit 0\n"
    again = land.yupana("install", "git")
    assert again.returncode == 0 and "already installed" in again.stdout.decode()
    assert land.yupana("uninstall", "git").returncode == 0
    assert hook.read_text() == "#!/bin/sh\nexit 0\n" and not (hook.parent / "pre-push.yupana-backup").exists()


def test_install_follows_core_hooks_path(land):
    land.git("config", "core.hooksPath", ".githooks")
    assert land.yupana("install", "git").returncode == 0
    assert "yupana-landing-hook" in (land.root / ".githooks" / "pre-push").read_text()
    assert not (land.root / ".git" / "hooks" / "pre-push").exists()


def test_the_pre_commit_hook_entry_is_published():
    text = (REPO / ".pre-commit-hooks.yaml").read_text()
    entry = text.split("- id: yupana-landing", 1)[1].split("\n- id:", 1)[0]
    for line in ("entry: yupana hook pre-push", "stages: [pre-push]", "pass_filenames: false", "always_run: true"):
        assert line in entry


# ── status ───────────────────────────────────────────────────────────────────────────


def test_status_reports_the_key_and_the_last_certification(land):
    key = land.keygen()
    land.catalogue(catalogue())
    land.install()
    assert land.push().returncode == 0
    done = land.yupana("status", "--json", "--offline")
    landing = json.loads(done.stdout)["landing"]
    assert landing["effective"] == "advise" and landing["git_hook"]["ours"] is True
    assert landing["signing_key"] == {"path": str(land.key), "configured": str(land.key), "present": True,
                                      "key_id": key["key_id"], "error": None}
    last = landing["last"]
    assert last["kind"] == "landing-certified" and last["repo"] == "widgets" and last["signed"] is True
    assert landing["counts"] == {"landing-certified": 1} and landing["notes"] == []
    hooks = json.loads(done.stdout)["hooks"]
    assert all(h.get("invocations_in_window", 0) == 0 for h in hooks.values() if isinstance(h, dict))
    text = land.yupana("status", "--offline").stdout.decode()
    assert f"signing key : {key['key_id']} at {land.key}" in text
    assert "last landing: CERTIFIED" in text and "repo `widgets` refs/heads/main" in text


def test_landing_json_follows_its_schemas(land):
    from tests.commands.test_json_schemas import check

    land.keygen()
    land.catalogue(catalogue())
    land.install()
    assert land.push().returncode == 0
    check("landing.verify", land.yupana("landing", "verify", "--all", "--json"))
    check("landing.verify", land.yupana("landing", "verify", str(land.base / "missing.json"), "--json"))
    check("landing.keygen", land.yupana("landing", "keygen", "--out", str(land.base / "k2.pk8"), "--json"))
    check("status", land.yupana("status", "--json", "--offline"))
