"""``yupana ci-select`` through the real CLI: a real git repository in tmp_path, a real cache
written by ``yupana project`` from the embedded store over a small CI-map catalogue, real
commands run by ``--run``, and the real spool."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from catalogue_kit import PREFIXES, text_rule

GIT_IDENTITY = {"GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "test@example.invalid",
                "GIT_COMMITTER_NAME": "Test", "GIT_COMMITTER_EMAIL": "test@example.invalid"}

LINT = """'echo lint >> "$CI_LOG" && pwd >> "$CI_LOG" && echo LINT-SAYS-HI'"""
FAILING_LINT = """'echo lint >> "$CI_LOG"; echo LINT-SAYS-HI; exit 7'"""


def ci_catalogue(coverage: str = "complete", lint: str = LINT) -> str:
    """Three jobs; lint links two commands, one of which unit-tests also links."""
    return f"""
aegis:cimap_main a aegis:CiMap ; aegis:coverage "{coverage}" ;
    aegis:ciJob aegis:cijob_docs , aegis:cijob_lint , aegis:cijob_unit .
aegis:cijob_docs a aegis:CiJob ; aegis:name "docs" ; rdfs:label "Docs" ; aegis:localCommand aegis:cmd_docs .
aegis:cijob_lint a aegis:CiJob ; aegis:name "lint" ; rdfs:label "Lint" ;
    aegis:localCommand aegis:cmd_lint , aegis:cmd_unit .
aegis:cijob_unit a aegis:CiJob ; aegis:name "unit-tests" ; rdfs:label "Unit tests" ; aegis:localCommand aegis:cmd_unit .
aegis:cmd_docs a aegis:LocalCommand ; aegis:command 'echo docs >> "$CI_LOG"' ; aegis:appliesTo "docs/**" , "*.md" .
aegis:cmd_lint a aegis:LocalCommand ; aegis:command {lint} ; aegis:appliesTo "**/*.py" .
aegis:cmd_unit a aegis:LocalCommand ; aegis:command 'echo unit >> "$CI_LOG"' ; aegis:appliesTo "src/**" , "tests/**" .
"""


LINT_TEXT = 'echo lint >> "$CI_LOG" && pwd >> "$CI_LOG" && echo LINT-SAYS-HI'
UNIT_TEXT = 'echo unit >> "$CI_LOG"'
DOCS_TEXT = 'echo docs >> "$CI_LOG"'


class Project:
    """A repository on branch ``feature`` off ``main``, configured for a file: catalogue outside it."""

    def __init__(self, base: Path, env) -> None:
        self.env = env
        env.update(GIT_IDENTITY)
        self.log = base / "ci.log"
        env["CI_LOG"] = str(self.log)
        self.cat = base / "cat"
        self.cat.mkdir()
        self.root = base / "repo"
        self.root.mkdir()
        self.git("init", "-q", "-b", "main")
        self.write(".bobbin/config.toml", f'[yupana.quipu]\nenabled = true\nendpoint = "file:{self.cat}"\n')
        self.write("README.md", "# widgets\n")
        self.write("src/keep.py", "x = 1\n")
        self.write("web/app.ts", "let x = 1;\n")
        self.commit("base")
        self.git("checkout", "-q", "-b", "feature")

    def git(self, *args: str) -> str:
        done = subprocess.run(["git", "-C", str(self.root), *args], env=self.env, capture_output=True, check=True)
        return done.stdout.decode()

    def write(self, rel: str, text: str) -> None:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)

    def commit(self, message: str) -> None:
        self.git("add", "-A")
        self.git("commit", "-q", "-m", message)

    def catalogue(self, body: str) -> None:
        (self.cat / "catalogue.ttl").write_text(PREFIXES + body)

    def project(self, yupana) -> None:
        done = yupana("project", cwd=self.root)
        assert done.returncode == 0, done.stderr.decode()

    def ran(self) -> list[str]:
        return self.log.read_text().splitlines() if self.log.exists() else []


@pytest.fixture
def repo(tmp_path, env) -> Project:
    return Project(tmp_path, env)


def select_json(yupana, repo: Project, *flags: str, cwd: Path | None = None) -> tuple[int, dict, str]:
    done = yupana("ci-select", "--json", *flags, cwd=cwd or repo.root)
    assert done.stdout, done.stderr.decode()
    return done.returncode, json.loads(done.stdout), done.stderr.decode()


def select_text(yupana, repo: Project, *flags: str) -> tuple[int, str, str]:
    done = yupana("ci-select", *flags, cwd=repo.root)
    return done.returncode, done.stdout.decode(), done.stderr.decode()


def ci_records(env) -> list[dict]:
    return [r for r in env.records() if r["kind"] in ("ci_select", "ci_shift_unknown")]


# ── selection ─────────────────────────────────────────────────────────────────────────


def test_a_branch_change_selects_each_covering_command_once_in_map_order(yupana, env, repo):
    repo.catalogue(ci_catalogue())
    repo.project(yupana)
    repo.write("src/keep.py", "x = 2\n")
    repo.commit("change src")
    code, out, _ = select_json(yupana, repo)
    assert code == 0 and out["exit_code"] == 0
    assert out["state"] == "selected" and out["complete"] is True and out["runnable"] is True
    assert out["changed"] == ["src/keep.py"] and out["source"] == "git" and out["base"] == "main"
    assert out["base_commit"] == repo.git("rev-parse", "main").strip()
    assert [c["command"] for c in out["commands"]] == [LINT_TEXT, UNIT_TEXT]
    unit = out["commands"][1]
    assert [j["job"] for j in unit["jobs"]] == ["lint", "unit-tests"]  # stands in for two jobs, listed once
    assert unit["scopes"] == ["src/**"] and unit["paths"] == ["src/keep.py"]
    assert out["policy"]["freshness"] == "fresh" and out["policy"]["endpoint"] == f"file:{repo.cat}"
    assert out["run"] is None and repo.ran() == []  # selecting runs nothing
    assert ci_records(env) == [{"kind": "ci_select", "ts": ci_records(env)[0]["ts"], "state": "selected",
                                "complete": True, "commands": [LINT_TEXT, UNIT_TEXT], "changed": 1,
                                "policy_freshness": "fresh", "policy_age_secs": out["policy"]["cache_age_secs"],
                                "exit_code": 0}]
    code, text, _ = select_text(yupana, repo)
    assert code == 0 and "SELECTED" in text and f"1. {LINT_TEXT}" in text and f"2. {UNIT_TEXT}" in text
    assert "lint (Lint), unit-tests (Unit tests)" in text and "src/** ← src/keep.py" in text
    assert "supplement complete hosted CI and independent review" in text


def test_uncommitted_untracked_and_both_sides_of_a_rename_are_part_of_the_change(yupana, repo):
    repo.catalogue(ci_catalogue())
    repo.project(yupana)
    (repo.root / "docs").mkdir()
    repo.git("mv", "web/app.ts", "docs/app.ts")  # staged rename: old and new path both count
    repo.write("README.md", "# widgets, edited\n")  # unstaged
    repo.write("tests/test_new.py", "")  # untracked
    repo.write(".gitignore", "build/\n")
    repo.write("build/out.py", "")  # ignored: not part of the change
    _code, out, _ = select_json(yupana, repo)
    assert set(out["changed"]) == {"web/app.ts", "docs/app.ts", "README.md", "tests/test_new.py", ".gitignore"}
    assert [c["command"] for c in out["commands"]] == [DOCS_TEXT, LINT_TEXT, UNIT_TEXT]
    assert out["commands"][0]["paths"] == [p for p in out["changed"] if p in ("docs/app.ts", "README.md")]


def test_commits_that_landed_on_the_base_since_the_branch_left_are_not_counted(yupana, repo):
    repo.catalogue(ci_catalogue())
    repo.project(yupana)
    repo.git("checkout", "-q", "main")
    repo.write("src/other.py", "y = 1\n")
    repo.commit("someone else's change on main")
    repo.git("checkout", "-q", "feature")
    repo.write("web/app.ts", "let x = 2;\n")
    repo.commit("web only")
    _code, out, _ = select_json(yupana, repo)
    assert out["changed"] == ["web/app.ts"] and out["state"] == "quiet"


def test_a_complete_map_no_scope_matches_is_quiet_and_run_runs_nothing(yupana, env, repo):
    repo.catalogue(ci_catalogue())
    repo.project(yupana)
    repo.write("web/app.ts", "let x = 2;\n")
    code, out, _ = select_json(yupana, repo, "--run")
    assert code == 0 and out["state"] == "quiet" and out["commands"] == [] and "nothing to run" in out["reason"]
    assert out["run"]["results"] == [] and out["run"]["refused"] is None and repo.ran() == []
    assert [r["state"] for r in ci_records(env)] == ["quiet"]


def test_paths_replace_git_and_absolute_ones_are_made_repository_relative(yupana, repo):
    repo.catalogue(ci_catalogue())
    repo.project(yupana)
    _code, out, _ = select_json(yupana, repo, "--paths", str(repo.root / "docs" / "guide.md"), "./web/x.ts")
    assert out["source"] == "paths" and out["base"] is None and out["changed"] == ["docs/guide.md", "web/x.ts"]
    assert [c["command"] for c in out["commands"]] == [DOCS_TEXT]


def test_the_example_catalogue_selects_for_a_rust_change(yupana, repo):
    from yupana.state import paths

    example = Path(paths.source_root()) / "fixtures" / "catalogue"
    repo.write(".bobbin/config.toml", f'[yupana.quipu]\nenabled = true\nendpoint = "file:{example}"\n')
    repo.project(yupana)
    code, out, _ = select_json(yupana, repo, "--paths", "crates/core/src/lib.rs", "tools/pyproject.toml")
    assert code == 0 and out["complete"] is True
    # The projection orders jobs, and each job's commands, by IRI: python_tests < rust_check < rust_tests.
    assert [c["command"] for c in out["commands"]] == [
        "pytest -q tools", "ruff check tools", "cargo clippy --workspace --all-targets -- -D warnings",
        "cargo fmt --all -- --check", "cargo nextest run --workspace"]
    code, out, _ = select_json(yupana, repo, "--paths", "infra/terraform/main.tf")
    assert code == 0 and out["state"] == "quiet"


# ── partial and unknown ───────────────────────────────────────────────────────────────


def test_a_partial_maps_matches_are_listed_never_run(yupana, env, repo):
    repo.catalogue(ci_catalogue(coverage="partial"))
    repo.project(yupana)
    repo.write("src/keep.py", "x = 2\n")
    code, out, _ = select_json(yupana, repo, "--run")
    assert code == 3 and out["state"] == "selected" and out["complete"] is False and out["runnable"] is False
    assert [c["command"] for c in out["commands"]] == [LINT_TEXT, UNIT_TEXT] and "partial" in out["reason"]
    assert out["run"]["refused"] and out["run"]["not_run"] == [LINT_TEXT, UNIT_TEXT] and repo.ran() == []
    rec = ci_records(env)[-1]
    assert rec["kind"] == "ci_select" and rec["complete"] is False and rec["refused"] is True and rec["ran"] == 0
    code, text, _ = select_text(yupana, repo)
    assert code == 3 and "SELECTED (partial map)" in text and "does not run a partial map's matches" in text


def test_a_partial_map_with_no_match_is_unknown_and_counted(yupana, env, repo):
    repo.catalogue(ci_catalogue(coverage="partial"))
    repo.project(yupana)
    repo.write("web/app.ts", "let x = 2;\n")
    code, out, stderr = select_json(yupana, repo)
    assert code == 3 and out["state"] == "unknown" and out["cause"] == "partial-no-match"
    assert "cannot certify" in stderr
    assert [(r["kind"], r["cause"]) for r in ci_records(env)] == [("ci_shift_unknown", "partial-no-match")]


def test_no_map_in_the_store_is_unknown_never_quiet(yupana, env, repo):
    repo.catalogue(text_rule(0))  # a catalogue, but no aegis:CiMap in it
    repo.project(yupana)
    repo.write("web/app.ts", "let x = 2;\n")
    code, text, _ = select_text(yupana, repo, "--run")
    assert code == 3 and "UNKNOWN — no CI map is projected" in text and "nothing run" in text
    (rec,) = ci_records(env)
    assert rec["kind"] == "ci_shift_unknown" and rec["cause"] == "no-map" and "no CI map" in rec["reason"]
    assert rec["changed"] == 1 and rec["policy_freshness"] == "fresh" and repo.ran() == []


def test_no_servable_cache_is_unknown(yupana, env, repo):
    repo.catalogue(ci_catalogue())  # never projected
    code, out, stderr = select_json(yupana, repo)
    assert code == 3 and out["cause"] == "no-cache" and out["policy"]["miss"]["label"] == "absent"
    assert "yupana project" in stderr
    assert ci_records(env)[0]["miss"] == "absent"


def test_an_unconfigured_plane_is_unknown(yupana, repo):
    repo.write(".bobbin/config.toml", "[yupana.policy]\nmode = \"advise\"\n")
    code, out, _ = select_json(yupana, repo)
    assert code == 3 and out["cause"] == "not-configured" and "enabled is false" in out["reason"]


def test_an_empty_scope_list_makes_the_map_unknown_even_when_another_command_matches(yupana, env, repo):
    from yupana.state import cache

    repo.catalogue(ci_catalogue())
    repo.project(yupana)
    body = json.loads(env.cache_path.read_text())  # the projection refuses such a map; a direct writer might not
    body["ci_map"]["jobs"][0]["commands"][0]["scopes"] = []  # the docs command; the change is Python
    assert cache.save(body, str(env.cache_path)) is None
    repo.write("src/keep.py", "x = 2\n")
    code, out, _ = select_json(yupana, repo, "--run")
    assert code == 3 and out["state"] == "unknown" and out["cause"] == "invalid-map" and out["commands"] == []
    assert "empty scope list" in out["reason"] and repo.ran() == []
    assert ci_records(env)[0]["kind"] == "ci_shift_unknown"


def test_a_stale_cache_still_serves_and_says_so_with_its_age(yupana, env, repo):
    from yupana.state import cache

    repo.catalogue(ci_catalogue())
    repo.project(yupana)
    body = json.loads(env.cache_path.read_text())
    body["written_at"] -= 1000  # past refresh_interval_secs (300), inside the TTL (3600)
    assert cache.save(body, str(env.cache_path)) is None
    repo.write("src/keep.py", "x = 2\n")
    code, out, _ = select_json(yupana, repo)
    assert code == 0 and out["policy"]["freshness"] == "stale" and out["policy"]["cache_age_secs"] >= 1000
    assert "refresh overdue" in out["policy"]["stale_reason"]
    assert ci_records(env)[0]["policy_freshness"] == "stale"
    code, text, _ = select_text(yupana, repo)
    assert "STALE: cache age 10" in text
    assert json.loads(env.cache_path.read_text())["written_at"] == body["written_at"]  # never refreshed


# ── --run ─────────────────────────────────────────────────────────────────────────────


def test_run_runs_the_selection_in_order_in_the_repository_top(yupana, env, repo):
    repo.catalogue(ci_catalogue())
    repo.project(yupana)
    repo.write("src/keep.py", "x = 2\n")
    (repo.root / "src" / "deep").mkdir()
    done = yupana("ci-select", "--run", cwd=repo.root / "src" / "deep")
    assert done.returncode == 0, done.stderr.decode()
    assert repo.ran() == ["lint", str(repo.root), "unit"]  # once each, in order, at the top
    text = done.stdout.decode()
    assert text.index("LINT-SAYS-HI") < text.index("passed — all 2 command(s) exited 0")  # output streamed
    rec = ci_records(env)[-1]
    assert rec["ran"] == 2 and rec["exit_code"] == 0 and "failed" not in rec


def test_run_stops_at_the_first_failure(yupana, env, repo):
    repo.catalogue(ci_catalogue(lint=FAILING_LINT))
    repo.project(yupana)
    repo.write("src/keep.py", "x = 2\n")
    code, out, stderr = select_json(yupana, repo, "--run")  # stdout stays one JSON object
    failing = 'echo lint >> "$CI_LOG"; echo LINT-SAYS-HI; exit 7'
    assert code == 1 and out["exit_code"] == 1 and repo.ran() == ["lint"]
    assert out["run"]["failed"] == failing and out["run"]["not_run"] == [UNIT_TEXT]
    assert out["run"]["results"][0]["exit_code"] == 7
    assert "LINT-SAYS-HI" in stderr  # the command's stdout went to stderr under --json
    rec = ci_records(env)[-1]
    assert rec["failed"] == failing and rec["ran"] == 1 and rec["exit_code"] == 1
    code, text, _ = select_text(yupana, repo, "--run")
    assert code == 1 and f"FAILED — `{failing}` exited 7" in text and f"not run: `{UNIT_TEXT}`" in text


# ── usage errors ──────────────────────────────────────────────────────────────────────


def test_usage_and_git_errors_exit_2_and_select_nothing(yupana, env, repo, tmp_path):
    repo.catalogue(ci_catalogue())
    repo.project(yupana)
    code, out, stderr = select_json(yupana, repo, "--base", "no-such-branch")
    assert code == 2 and out["error"]["kind"] == "git" and "no-such-branch" in stderr
    code, out, _ = select_json(yupana, repo, "--paths", "../outside.py")
    assert code == 2 and "not a path inside" in out["error"]["message"]
    elsewhere = tmp_path / "not-a-repo"
    elsewhere.mkdir()
    done = yupana("ci-select", cwd=elsewhere)
    assert done.returncode == 2 and "not inside a git work tree" in done.stderr.decode()
    assert yupana("ci-select", "--run", "--bogus", cwd=repo.root).returncode == 2
    assert yupana("ci-select", "--base", "main", "--paths", "a.py", cwd=repo.root).returncode == 2
    assert ci_records(env) == []
