"""``yupana explain`` through the real CLI: it explains exactly what the real hook decides,
with the hook's own code, and leaves nothing behind.

Every scenario uses a real repository, real config files and a real cache written by
``yupana project`` from an embedded store (a small catalogue written here). Where the
would-be stdout is compared with a real hook, the hook runs on a *copy* of the state, so
neither run can change what the other sees.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
import time
from pathlib import Path

import pytest
from catalogue_kit import PREFIXES
from conftest import Env, run_yupana

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "hooks"))
from guard_kit import AEGIS, Repo

CATALOGUE = PREFIXES + r"""
aegis:rule_no_corp_hosts a aegis:InternalIdentifierPattern ;
    rdfs:label "no corp hostnames" ;
    aegis:regex "\\b[a-z0-9-]+\\.corp\\.example\\b" ;
    aegis:enforcementTier "block" ;
    aegis:identifierClass "hostname" ;
    aegis:exemptPathRegex "^docs/internal/" ;
    rdfs:comment "Internal hostnames map the network for anyone reading a public repository." .

aegis:sel_rust_comments a aegis:Selector ;
    aegis:name "rust-line-comments" ;
    aegis:evidenceSource "(line_comment) @c" ;
    aegis:language "rust" ;
    aegis:tier "tree-sitter" .

aegis:pred_no_ticket a aegis:Predicate ;
    aegis:name "no-ticket-in-comment" ;
    aegis:evidenceSource "\\bACME-[0-9]+\\b" ;
    aegis:matchType "must-not-match" ;
    aegis:tier "tree-sitter" .

aegis:policy_no_ticket a aegis:Policy ;
    rdfs:label "no-ticket-in-comment" ;
    aegis:targets "CodeModule" ;
    aegis:claim "no rust comment cites a ticket" ;
    aegis:boundary "action" ;
    aegis:selector aegis:sel_rust_comments ;
    aegis:predicate aegis:pred_no_ticket ;
    aegis:effect "deny" ;
    aegis:constraintClass "hard" ;
    aegis:verificationPoint "PAG" ;
    aegis:hostedAtLayer "orchestration" .
"""


def _config(store: Path, extra: str = "") -> str:
    return f'[yupana.policy]\nmode = "enforce"\n{extra}\n[yupana.quipu]\nenabled = true\nendpoint = "file:{store}"\n'


@pytest.fixture
def store(tmp_path) -> Path:
    directory = tmp_path / "store"
    directory.mkdir()
    (directory / "catalogue.ttl").write_text(CATALOGUE)
    return directory


@pytest.fixture
def repo(env, tmp_path, store) -> Repo:
    return Repo(tmp_path / "repo", env).config(_config(store))


def project(env: Env, repo: Repo) -> None:
    done = run_yupana(["project"], env, cwd=repo.root, timeout=300)
    assert done.returncode == 0, done.stderr.decode()[-800:]
    assert env.cache_path.exists()


def explain(env: Env, payload: dict | bytes, *flags: str, cwd=None) -> dict:
    """``yupana explain --json`` on ``payload``; the report (asserting exit 0)."""
    stdin = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    done = run_yupana(["explain", "--json", *flags], env, stdin=stdin, cwd=cwd)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    return json.loads(done.stdout)


def real_hook(env: Env, payload: dict, event: str = "pre-edit", *flags: str, extra_env: dict | None = None) -> str:
    run_env = dict(env, **(extra_env or {}))
    done = run_yupana([*flags, "hook", event], run_env, stdin=json.dumps(payload).encode())
    assert done.returncode == 0
    return done.stdout.decode("utf-8")


def copy_state(env: Env, tmp_path: Path, name: str = "copy") -> Env:
    """A second environment holding a copy of ``env``'s home, state and temp directories."""
    other = Env(tmp_path / name)
    for src, dst in ((env.home, other.home), (env.state, other.state), (env.tmp, other.tmp)):
        shutil.copytree(src, dst, dirs_exist_ok=True)
    return other


def compare_with_hook(env: Env, tmp_path: Path, payload: dict, *flags: str, event: str = "pre-edit",
                      hook_flags: tuple = (), extra_env: dict | None = None) -> tuple[dict, str]:
    """(explain's report, the real hook's stdout on a copy of the state). The copy lives in
    another directory, so where a message names a state file, its path is the only thing
    mapped back. The cache age in a verdict is whole seconds of wall time: when the two runs
    straddle a second, both run again."""
    for attempt in range(4):
        twin = copy_state(env, tmp_path, f"copy{attempt}")
        report = explain(env, payload, *flags)
        printed = real_hook(twin, payload, event, *hook_flags, extra_env=extra_env).replace(str(twin.base), str(env.base))
        ages = set(re.findall(r"cache age (\d+)s", report["stdout"] + printed))
        if len(ages) <= 1:
            return report, printed
        time.sleep(0.2)
    raise AssertionError(f"explain and the hook never ran within the same second: {report['stdout']!r} {printed!r}")


def stage(report: dict, name: str, file: str | None = None) -> dict:
    found = [s for s in report["stages"] if s["stage"] == name and (file is None or s["file"] == file)]
    assert found, [(s["stage"], s["file"]) for s in report["stages"]]
    return found[0]


def files(env: Env) -> dict[str, tuple[int, int]]:
    """Every file under the state and temp directories, with its size and mtime — except the
    resolved config snapshot, which any command reading the configuration may write."""
    found = {}
    for base in (env.state, env.tmp):
        for path in base.rglob("*"):
            if path.is_file() and "config" not in path.relative_to(base).parts:
                st = path.stat()
                found[str(path.relative_to(env.base))] = (st.st_size, st.st_mtime_ns)
    return found


# ── decisions explained ─────────────────────────────────────────────────────────────


def test_a_denied_edit_is_explained_with_the_rule_iri_the_matched_text_and_the_hooks_exact_stdout(env, repo, tmp_path):
    project(env, repo)
    payload = repo.payload(rel="src/lib.rs", new_string="// fixes ACME-42 for good\nfn f() {}\n")
    report, printed = compare_with_hook(env, tmp_path, payload)

    assert report["hook"] == "pre-edit" and report["decision"] == "deny"
    assert report["stdout"] == printed and printed.startswith('{"hookSpecificOutput"')
    assert json.loads(printed)["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert report["decided_by"] == {"stage": "governed", "file": "src/lib.rs", "constraints": ["no-ticket-in-comment"]}
    governed = stage(report, "governed", "src/lib.rs")
    [denied] = [f for f in governed["findings"] if f["outcome"] == "unsatisfied"]
    assert denied["id"] == "no-ticket-in-comment" and denied["plane"] == "structural" and denied["blocking"]
    assert denied["response"] == "blocked" and denied["class"] == "hard" and denied["verification_point"] == "PAG"
    assert denied["provenance"]["iri"] == AEGIS + "policy_no_ticket"
    assert denied["provenance"]["cache"] == str(env.cache_path)
    assert "ACME-42" in denied["matched"]["violations"][0]["text"]
    assert governed["said"]["deny"][0] in report["stdout_json"]["hookSpecificOutput"]["permissionDecisionReason"]
    assert report["policy"]["state"] == "fresh" and report["policy"]["consulted"]
    assert f"(policy fresh, cache age {report['policy']['age_secs']}s)" in printed
    # the guard record it would have written carries the same constraint
    [guard] = [r for r in report["records"] if r["kind"] == "guard"]
    assert guard["result"] == "deny" and guard["rule"] == "no-ticket-in-comment"

    text = run_yupana(["explain"], env, stdin=json.dumps(payload))
    out = text.stdout.decode()
    assert text.returncode == 0 and out.startswith("yupana explain: pre-edit")
    assert "DENY by governed on src/lib.rs: no-ticket-in-comment" in out
    assert AEGIS + "policy_no_ticket" in out and "ACME-42" in out


def test_an_allowed_edit_lists_every_stage_it_skipped_and_why(env, repo, store):
    repo.config(_config(store, '[yupana.policy.scopes.polecat-3]\nallow_paths = ["docs/**"]\n'))
    project(env, repo)
    payload = repo.payload(rel="docs/guide.md", new_string="Run the build first.")
    report = explain(env, payload, "--tenant", "polecat-3")

    assert report["decision"] == "allow" and report["stdout"] == "" and report["decided_by"] is None
    assert stage(report, "local rules")["state"] == "skipped"
    assert stage(report, "verify")["why"] == "verify = false"
    scope = stage(report, "scope", "docs/guide.md")
    assert scope["state"] == "ran"
    [declared] = scope["findings"]
    assert declared["id"] == "scope-declared:polecat-3" and declared["outcome"] == "satisfied"
    assert declared["matched"]["admitted_by"] == {"docs/guide.md": "docs/**"}
    assert declared["provenance"] == {"kind": "local", "key": "[yupana.policy.scopes.polecat-3]", "layer": "project",
                                      "path": str(repo.root / ".bobbin" / "config.toml")}
    blast = stage(report, "blast radius")
    assert blast["state"] == "skipped" and "ceiling" in blast["why"]
    governed = stage(report, "governed")
    assert governed["state"] == "ran" and governed["findings"] == []
    assert governed["detail"]["prefilter_admitted"] == []
    assert stage(report, "tripwires")["state"] == "skipped"

    out = run_yupana(["explain", "--tenant", "polecat-3"], env, stdin=json.dumps(payload)).stdout.decode()
    assert "DECISION    ALLOW" in out and "verify = false" in out and "skipped" in out


def test_mode_off_says_the_guard_is_inert(env, repo, store):
    repo.config(_config(store).replace('mode = "enforce"', 'mode = "off"'))
    report = explain(env, repo.payload(rel="src/lib.rs", new_string="// ACME-1\n"))
    assert report["decision"] == "allow"
    assert stage(report, "checks")["why"].startswith("mode = off")
    assert report["config"]["settings"]["mode"] == "off" and report["config"]["mode"]["source"] == "project"
    # the cache was not consulted; it is still described (here: none was ever projected)
    assert report["policy"]["consulted"] is False and report["policy"]["state"] == "unavailable"
    assert report["policy"]["refresh"]["would_start"] is False


def test_a_stale_cache_shows_its_age_and_the_refresh_it_would_start_but_does_not(env, repo):
    from yupana.state import cache

    project(env, repo)
    body = json.loads(env.cache_path.read_text())
    body["written_at"] -= 900
    assert cache.save(body, str(env.cache_path)) is None
    before = files(env)
    report = explain(env, repo.payload(rel="src/lib.rs", new_string="host = 'db1.corp.example'"))

    policy = report["policy"]
    assert policy["state"] == "stale" and 900 <= policy["age_secs"] < 960
    assert policy["note"].startswith(f"(policy STALE: cache age {policy['age_secs']}s; refresh overdue")
    assert policy["refresh"] == {"due": True, "would_start": True, "backoff_until": None}
    assert any(w["effect"] == "refresh-worker" for w in report["withheld"])
    assert "(policy STALE: cache age" in report["stdout"]
    [served] = [r for r in report["records"] if r["kind"] == "served_from_cache"]
    assert served["hook"] == "pre-edit" and served["age_secs"] == policy["age_secs"]
    assert any("serving the projection cache STALE" in line for line in report["stderr"])
    time.sleep(1.0)  # a refresh worker, had one been started, would have rewritten the cache by now
    assert json.loads(env.cache_path.read_text())["written_at"] == body["written_at"]
    assert files(env) == before


def test_no_servable_cache_is_explained_as_unknown_and_failing_open(env, repo, tmp_path):
    repo.config(_config(tmp_path / "no-such-store"))  # nothing servable, and a refresh cannot make one
    payload = repo.payload(rel="src/lib.rs", new_string="host = 'db1.corp.example'")
    before = files(env)
    report, printed = compare_with_hook(env, tmp_path, payload)

    assert report["stdout"] == printed and "no servable projection cache" in printed
    assert report["policy"]["state"] == "unavailable" and report["policy"]["miss"]["label"] == "absent"
    governed = stage(report, "governed", "src/lib.rs")
    assert governed["state"] == "unknown" and "NOT enforced (fail-open)" in governed["why"]
    cache_stage = stage(report, "policy cache")
    assert cache_stage["state"] == "unknown"
    [projection] = cache_stage["findings"]
    assert projection["id"] == "projection" and projection["outcome"] == "unknown"
    assert projection["provenance"] == {"kind": "guard", "what": "no servable projection cache"}
    [notice] = [n for n in report["notices"] if n["kind"] == "projection"]
    assert notice["shown"] and not notice["already_shown"] and notice["marker"].startswith(str(env.tmp))
    assert [r["fail_kind"] for r in report["records"] if r["kind"] == "fail_open"] == ["projection"]
    assert files(env) == before

    # once a real hook showed the notice in this session, explain says the next one is suppressed
    twin = copy_state(env, tmp_path, "shown")
    real_hook(twin, payload)
    again = explain(twin, payload)
    [notice] = [n for n in again["notices"] if n["kind"] == "projection"]
    assert notice["already_shown"] and not notice["shown"]
    assert "no servable projection cache" not in again["stdout"]
    assert again["stdout"] == real_hook(twin, payload)


def test_an_exempted_path_shows_the_exemption_and_what_it_would_have_matched(env, repo):
    project(env, repo)
    text = "see db1.corp.example for the dashboards"
    report = explain(env, repo.payload(rel="docs/internal/hosts.md", new_string=text))

    assert report["decision"] == "allow" and report["stdout"] == ""
    governed = stage(report, "governed", "docs/internal/hosts.md")
    assert governed["findings"] == []
    assert governed["detail"]["prefilter_admitted"] == ["rule_no_corp_hosts"]
    [exemption] = governed["detail"]["exemptions"]
    assert exemption["exempted"] and exemption["regex"] == "^docs/internal/" and exemption["exempted_by"] == "docs/internal/"
    assert exemption["iri"] == AEGIS + "rule_no_corp_hosts" and exemption["would_match"] == ["db1.corp.example"]

    elsewhere = explain(env, repo.payload(rel="docs/public/hosts.md", new_string=text))
    governed = stage(elsewhere, "governed", "docs/public/hosts.md")
    assert [e["exempted"] for e in governed["detail"]["exemptions"]] == [False]
    [warned] = governed["findings"]
    assert warned["matched"]["text"] == "db1.corp.example" and warned["provenance"]["iri"] == AEGIS + "rule_no_corp_hosts"
    assert warned["response"] == "warned"  # block tier, but the embedded store cannot say the repo is public
    assert governed["detail"]["exposure"]["exposure"] == "unknown"
    assert governed["detail"]["exposure"]["source"] == "none"  # no graph statement, no /policy/check, no config


PRECISE = PREFIXES + r"""
aegis:sel_placeholders a aegis:Selector ;
    aegis:name "placeholders" ;
    aegis:evidenceSource "placeholder secrets in examples" ;
    aegis:allowMatchRegex "^sk_test_" ;
    aegis:allowStopword "example" .

aegis:rule_generic_secret a aegis:TextRule ;
    rdfs:label "generic secret" ;
    aegis:regex "(?i)password\\s*=\\s*'(?P<secret>[^']{8,})'" ;
    aegis:enforcementTier "warn" ;
    aegis:secretGroup "secret" ;
    aegis:minEntropy "3.0"^^xsd:decimal ;
    aegis:requiredKeyword "password" ;
    aegis:allowStopword "changeme" ;
    aegis:exemptionSelector aegis:sel_placeholders .
"""


def test_each_allowed_match_says_why_and_whether_the_rule_or_a_shared_selector_allowed_it(env, tmp_path):
    store = tmp_path / "precise"
    store.mkdir()
    (store / "catalogue.ttl").write_text(PRECISE.replace("@prefix aegis:", "@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .\n@prefix aegis:", 1))
    repo = Repo(tmp_path / "repo", env).config(_config(store))
    project(env, repo)
    text = ("password = 'aaaaaaaaaa'\npassword = 'changeme-Q7v2'\npassword = 'sk_test_Zq9#vB2!'\n"
            "password = 'my-example-Zq9'\npassword = 'Tq9#vB2!mK7p'\n")
    report = explain(env, repo.payload(rel="src/app.py", new_string=text))
    governed = stage(report, "governed", "src/app.py")
    allowed = {a["match"]: (a["why"], a["by"]) for a in governed["detail"]["allowed"]}
    assert allowed == {
        "password = 'aaaaaaaaaa'": ("entropy 0.00 < 3 bits/char", ["rule"]),
        "password = 'changeme-Q7v2'": ("stopword `changeme`", ["rule"]),
        "password = 'sk_test_Zq9#vB2!'": ("allowlist regex matched `sk_test_`", ["selector placeholders"]),
        "password = 'my-example-Zq9'": ("stopword `example`", ["selector placeholders"]),
    }
    [fired] = governed["findings"]
    assert fired["matched"]["text"] == "password = 'Tq9#vB2!mK7p'"
    printed = run_yupana(["explain"], env, stdin=json.dumps(repo.payload(rel="src/app.py", new_string=text)).encode())
    assert "(stopword `example`; by the selector placeholders)" in printed.stdout.decode()


def test_local_rules_tripwires_and_throttles_name_their_config_entry(env, repo, store, tmp_path):
    repo.config(_config(store, '[[yupana.policy.tripwires]]\nname = "lockfiles"\npaths = ["Cargo.lock"]\n'
                               'effect = "throttle"\nbackoff_secs = 600\n'
                               '[[yupana.policy.tripwires]]\nname = "auth"\npaths = ["src/auth/**"]\neffect = "deny"\n'))
    project(env, repo)
    before = files(env)
    report, printed = compare_with_hook(env, tmp_path, repo.payload(rel="src/auth/login.rs", new_string="fn x() {}"))
    assert report["decision"] == "deny" and report["stdout"] == printed
    [auth] = [f for f in stage(report, "tripwires")["findings"] if f["outcome"] == "unsatisfied"]
    assert auth["id"] == "tripwire:auth" and auth["matched"]["glob"] == "src/auth/**"
    assert auth["provenance"] == {"kind": "local", "key": "[[yupana.policy.tripwires]]", "name": "auth", "index": 1,
                                  "layer": "project", "path": str(repo.root / ".bobbin" / "config.toml")}
    assert auth["freshness"] == "fresh"

    throttled = explain(env, repo.payload(rel="Cargo.lock", new_string="x"))
    assert throttled["decision"] == "notify"
    [record] = [r for r in throttled["records"] if r["kind"] == "throttle"]
    assert record["constraint_id"] == "tripwire:lockfiles" and record["backoff_secs"] == 600
    assert any(w["effect"] == "throttle" for w in throttled["withheld"])
    assert files(env) == before  # no throttles.jsonl: the next edit is not throttled by an explanation
    assert "back-off active" not in explain(env, repo.payload(rel="src/x.rs", new_string="y"))["stdout"]


def test_a_blown_deadline_names_the_checks_it_left_unknown(env, repo, store):
    # parsing the Rust buffer for the structural policy alone outlasts a 1 ms budget
    repo.config(_config(store, "deadline_ms = 1\n[yupana.policy.scopes.polecat-3]\ndeny_paths = [\"src/**\"]\n"))
    project(env, repo)
    report = explain(env, repo.payload(rel="src/lib.rs", new_string="fn f() {}\n"), "--tenant", "polecat-3")
    deadline = stage(report, "deadline")
    assert deadline["state"] == "unknown" and "1 ms ran out before the" in deadline["why"]
    assert [f["id"] for f in deadline["findings"]] == ["deadline"]
    # the path-only checks ran first: the scope's deny stands, and the notice rides with it
    assert report["decision"] == "deny" and "UNKNOWN" in report["stdout"]
    order = [s["stage"] for s in report["stages"]]
    assert order.index("scope") < order.index("deadline") and order.index("tripwires") < order.index("deadline")
    missed = {m["stage"] for m in report["not_reached"]}
    assert {"verify", "blast radius", "rule tripwires"} <= missed and not {"scope", "tripwires"} & missed
    assert all(m["file"] == "src/lib.rs" for m in report["not_reached"])
    assert [r["stage"] for r in report["records"] if r.get("fail_kind") == "deadline"] == [
        deadline["why"].split("before the ")[1].split(" check")[0]]


# ── pre-bash ────────────────────────────────────────────────────────────────────────


def test_a_pre_bash_command_is_explained_with_its_resolution_and_action_scope(env, repo, store, tmp_path):
    repo.config(_config(store, 'action_scope = "enforce"\n[yupana.policy.scopes.polecat-3]\n'
                               'allow_targets = ["host:build-*"]\ndeny_targets = ["service:etcd"]\n'))
    project(env, repo)
    before = files(env)
    payload = {"session_id": "sess-9", "cwd": str(repo.root), "hook_event_name": "PreToolUse", "tool_name": "Bash",
               "tool_input": {"command": "sudo systemctl restart etcd && ssh ops@build-3.example.com uptime"}}
    report, printed = compare_with_hook(env, tmp_path, payload, "--tenant", "polecat-3", event="pre-bash",
                                        extra_env={"BOBBIN_ROLE": "polecat-3"})

    assert report["hook"] == "pre-bash" and report["hook_from"] == "tool_name Bash"
    assert report["decision"] == "deny" and report["stdout"] == printed
    assert report["decided_by"] == {"stage": "action scope", "file": None, "constraints": ["deny_targets:service:etcd"]}
    assert [(a["class"], a["target"]) for a in report["invocation"]["actions"]] == [
        ("service", "etcd"), ("host", "build-3.example.com")]
    assert stage(report, "resolution")["state"] == "ran"
    scope = stage(report, "action scope")
    assert scope["detail"]["rung"] == "enforce" and scope["detail"]["tenant"] == "polecat-3"
    assert [(a["target"], a["result"], a["rule"]) for a in scope["detail"]["actions"]] == [
        ("service:etcd", "deny", "deny_targets:service:etcd"), ("host:build-3.example.com", "inside", None)]
    assert scope["detail"]["provenance"]["path"] == str(repo.root / ".bobbin" / "config.toml")
    assert "outside the action scope" in scope["said"]["deny"][0]
    assert stage(report, "disk")["why"] == "the command is denied"
    kinds = [r["kind"] for r in report["records"]]
    assert kinds[:3] == ["pre_bash_invoked", "action", "action"] and "action_scope" in kinds
    assert files(env) == before


# ── input and side effects ──────────────────────────────────────────────────────────


def test_config_names_the_file_it_came_from_and_honours_an_override(env, repo, store, tmp_path):
    other = tmp_path / "other.toml"
    other.write_text('[yupana.policy]\nmode = "advise"\ndeadline_ms = 250\n')
    report = explain(env, repo.payload(rel="src/lib.rs", new_string="x"), "--config", str(other))
    config = report["config"]
    assert config["sources"] == [{"layer": "--config", "path": str(other)}]
    assert config["settings"]["mode"] == "advise" and config["settings"]["deadline_ms"] == 250
    assert config["origins"]["deadline_ms"] == {"layer": "--config", "path": str(other)}
    assert config["origins"]["verify"] == {"layer": "default"}
    assert report["policy"]["state"] == "off"  # this file does not configure the governed plane
    broken = tmp_path / "broken.toml"
    broken.write_text('[yupana.policy]\nmode = "sometimes"\n')
    report = explain(env, repo.payload(rel="src/lib.rs", new_string="x"), "--config", str(broken))
    assert report["config"]["state"] == "error" and "mode" in report["config"]["error"]
    assert stage(report, "config")["state"] == "unknown" and "configuration error" in report["stdout"]


def test_the_hook_is_inferred_from_the_payload_unless_named(env, repo):
    post = repo.payload(rel="src/lib.rs", new_string="x")
    post["hook_event_name"] = "PostToolUse"
    report = explain(env, post)
    assert report["hook"] == "post-edit" and report["hook_from"] == "hook_event_name PostToolUse"
    assert stage(report, "work-item notice")["why"].startswith("work_item_scope = off")
    assert explain(env, post, "--hook", "pre-edit")["hook"] == "pre-edit"


@pytest.mark.parametrize("stdin, why", [
    (b"", "the payload is empty"),
    (b"{not json", "the payload is not JSON"),
    (b"[1, 2]", "the payload is a JSON list, not an object"),
    (b"\xff\xfe\x00garbage", "the payload is not UTF-8 text"),
])
def test_an_unreadable_payload_exits_2_and_says_why(env, stdin, why):
    done = run_yupana(["explain"], env, stdin=stdin)
    assert done.returncode == 2 and why in done.stderr.decode() and done.stdout == b""
    done = run_yupana(["explain", "--json"], env, stdin=stdin)
    assert done.returncode == 2 and why in json.loads(done.stdout)["error"]["message"]
    assert not env.spool_path.exists()


def test_explain_writes_nothing_marks_nothing_and_spawns_nothing(env, repo, store, tmp_path):
    # every effect at once: no servable cache (a fail-open notice, a marker, a refresh to start),
    # a throttle wire (a back-off to write) and records of every kind
    repo.config(_config(store, '[[yupana.policy.tripwires]]\nname = "lockfiles"\npaths = ["Cargo.lock"]\n'
                               'effect = "throttle"\nbackoff_secs = 600\n'))
    payload = repo.payload(rel="Cargo.lock", new_string="host = 'db1.corp.example'")
    before = files(env)
    report = explain(env, payload)
    withheld = {w["effect"] for w in report["withheld"]}
    assert {"spool", "marker", "refresh-worker", "throttle"} <= withheld
    time.sleep(1.5)  # a detached refresh of this file: store would have written the cache by now
    assert not env.spool_path.exists()
    assert not env.cache_path.exists()
    assert files(env) == before
    assert not list(env.tmp.glob("yupana-guard-failopen-*"))
    # and a real hook on a copy does every one of those things
    twin = copy_state(env, tmp_path, "real")
    real_hook(twin, payload)
    assert twin.records("guard") and list(twin.tmp.glob("yupana-guard-failopen-*"))
    assert (twin.state / "yupana" / "throttles.jsonl").exists()


def test_lone_surrogate_escapes_are_explained_not_a_traceback(tmp_path):
    """Issue 23 §7: a payload with lone-surrogate escapes (``"\\ud800"``: valid JSON, no valid
    UTF-8) made ``explain`` print a traceback; it is shown as its escape, and ``--json`` is JSON."""
    env = Env(tmp_path / "env")
    repo = Repo(tmp_path / "repo", env).config('[yupana.policy]\nmode = "enforce"\n')
    raw = json.dumps(repo.payload(rel="src/a\ud800.rs", old_string="x", new_string='fn a() { "\udc00" }'))
    assert "\\ud800" in raw  # json.dumps escapes it: the payload is plain ASCII JSON
    text = run_yupana(["explain"], env, stdin=raw, cwd=repo.root)
    assert text.returncode == 0 and b"Traceback" not in text.stderr, text.stderr.decode()[-600:]
    assert b"src/a\\ud800.rs" in text.stdout and b"\\udc00" in text.stdout
    done = run_yupana(["explain", "--json"], env, stdin=raw, cwd=repo.root)
    assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr.decode()[-600:]
    report = json.loads(done.stdout)
    assert "\udc00" in json.dumps(report, ensure_ascii=False)  # the escape reads back as the same code unit
