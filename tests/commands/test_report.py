"""``yupana report`` through the real CLI, on spools written by real hook runs: several hosts'
spools at once (a directory as a log shipper collects them, rotated ``.old`` slots included),
malformed lines skipped and named, grouped by rule, tenant, repo and client, the window, and
unusable input refused with exit 2."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from conftest import run_yupana
from hooks.guard_kit import Repo, hook, text_rule, write_cache
from prebash import hook as bash_hook

ENDPOINT = "http://127.0.0.1:9"
HOST = r"\b[a-z0-9-]+\.corp\.example\b"
SCOPE = '[yupana.policy.scopes.polecat-3]\ndeny_targets = ["service:etcd"]\n'


def _config(mode: str = "advise", endpoint: str = ENDPOINT) -> str:
    return (f'[yupana.policy]\nmode = "{mode}"\naction_scope = "enforce"\n{SCOPE}\n[yupana.quipu]\nenabled = true\n'
            f'endpoint = "{endpoint}"\ndialect = "quipu"\nprojection_cache_ttl_secs = 7200\nrefresh_interval_secs = 300\n')


class Fleet:
    """Two hosts' spools under one directory, written by the real hooks."""

    def __init__(self, base: Path, env) -> None:
        self.env = env
        self.dir = base / "fleet"
        write_cache(env, ENDPOINT, text_rules=[text_rule("rule_no_internal_hostnames", HOST),
                                               text_rule("rule_todo", r"\bTODO\b", tier="warn")])
        path = env.cache_for(ENDPOINT).parent / "exposure.json"
        entry = {"exposure": "public", "at": int(time.time())}
        path.write_text(json.dumps({"version": 1, "entries": {f"{ENDPOINT}|widgets": entry}}))
        self.repo = Repo(base / "repo", env).config(_config())
        self.broken = Repo(base / "broken", env).config(_config(endpoint="http://127.0.0.1:7"))  # no cache for it

    def spool(self, host: str) -> Path:
        return self.dir / host / "metrics.jsonl"

    def on(self, host: str, role: str | None = None) -> dict:
        self.env["YUPANA_METRICS_PATH"] = str(self.spool(host))
        self.env.pop("BOBBIN_ROLE", None)
        if role:
            self.env["BOBBIN_ROLE"] = role
        return self.env

    def edit(self, text: str, repo: Repo | None = None, rel: str = "src/net.rs"):
        repo = repo or self.repo
        return hook(self.env, repo.payload(rel=rel, old_string="x", new_string=text))

    def patch(self, text: str):
        patch = f"*** Begin Patch\n*** Add File: src/gen.rs\n+{text}\n*** End Patch\n"
        return hook(self.env, self.repo.patch(patch))


@pytest.fixture
def fleet(tmp_path, env):
    fleet = Fleet(tmp_path, env)
    fleet.on("host-a", role="polecat-1")
    assert "enforce would deny" in fleet.edit('let h = "db1.corp.example";').message
    fleet.edit("// TODO: later")
    os.replace(fleet.spool("host-a"), str(fleet.spool("host-a")) + ".old")  # the spool rotated
    fleet.edit('let h = "db2.corp.example";')
    fleet.on("host-b", role="polecat-3")
    assert "enforce would deny" in fleet.patch('let h = "db3.corp.example";').message  # Codex
    fleet.edit("let x = 1;", repo=fleet.broken)  # no servable cache: fails open
    bash_hook(env, "sudo systemctl restart etcd", cwd=fleet.repo.root, role="polecat-3")
    with open(fleet.spool("host-b"), "ab") as fh:  # a torn line, a foreign line, a non-object
        fh.write(b'{"kind": "guard", "ts": 17\n' + b"not json at all\n" + b"[1, 2]\n")
    return fleet


def report(env, *args: str, cwd=None):
    done = run_yupana(["report", *args], env, cwd=cwd)
    return done, (json.loads(done.stdout) if "--json" in args and done.stdout else None)


def test_several_hosts_spools_at_once_by_rule(env, fleet):
    done, doc = report(env, "--spool", str(fleet.dir), "--json")
    assert done.returncode == 0, done.stderr
    assert doc["hosts"] == 2 and {s["host"] for s in doc["sources"]} == {"host-a", "host-b"}
    assert [Path(s["path"]).name for s in doc["sources"]] == ["metrics.jsonl.old", "metrics.jsonl", "metrics.jsonl"]
    total = doc["totals"]
    assert total["invocations"] == 6 and total["hooks"] == {"pre-edit": 5, "pre-bash": 1}
    assert total["would_deny"] == 4  # three hostnames (one through a Codex patch) and the etcd restart
    assert total["warned"] == 1 and total["denied"] == 0
    assert total["fail_open"] == 1 and total["fail_kinds"] == {"projection": 1}
    assert total["fail_open_rate"] == round(1 / 6, 4)
    assert total["digests"] == {"sha256:test": 4}  # the fail-open edit had no rule set to decide with
    rows = {g["key"]: g for g in doc["groups"]}
    assert rows["rule_no_internal_hostnames"]["would_deny"] == 3
    assert rows["rule_todo"]["would_deny"] == 0 and rows["rule_todo"]["warned"] == 1
    assert rows["deny_targets:service:etcd"]["would_deny"] == 1
    assert rows["(no rule)"]["fail_open"] == 1 and rows["(no rule)"]["fail_kinds"] == {"projection": 1}
    assert doc["groups"][0]["key"] == "rule_no_internal_hostnames"  # the most would-denies first
    assert doc["malformed"] == 3
    [b] = [s for s in doc["sources"] if s["host"] == "host-b"]
    assert b["malformed"] == 3 and len(b["malformed_lines"]) == 3
    assert f"{fleet.spool('host-b')}: skipped 3 malformed line(s)" in done.stderr.decode()


def test_by_tenant_client_and_repo(env, fleet):
    _, by_tenant = report(env, "--spool", str(fleet.dir), "--by", "tenant", "--json")
    tenants = {g["key"]: g for g in by_tenant["groups"]}
    assert tenants["polecat-1"]["invocations"] == 3 and tenants["polecat-1"]["would_deny"] == 2
    assert tenants["polecat-1"]["warned"] == 1
    assert tenants["polecat-3"]["would_deny"] == 2 and tenants["polecat-3"]["fail_open"] == 1
    _, by_client = report(env, "--spool", str(fleet.dir), "--by", "client", "--json")
    clients = {g["key"]: g for g in by_client["groups"]}
    assert clients["codex"]["invocations"] == 1 and clients["codex"]["would_deny"] == 1
    assert clients["claude-code"]["invocations"] == 4  # the edits' payloads say which client
    assert clients["(none)"]["hooks"] == {"pre-bash": 1}  # the bare Bash payload names none
    _, by_repo = report(env, "--spool", str(fleet.dir), "--by", "repo", "--json")
    repos = {g["key"]: g for g in by_repo["groups"]}
    assert repos["widgets"]["would_deny"] == 3  # the edits the governed plane judged name their repository
    assert any(k.startswith("project:") for k in repos)  # the others: the project key they were judged under


def test_a_file_is_read_with_its_rotated_slot_and_files_add_up(env, fleet):
    _, doc = report(env, "--spool", str(fleet.spool("host-a")), str(fleet.spool("host-b")), "--json")
    assert doc["totals"]["invocations"] == 6 and doc["hosts"] == 2
    _, one = report(env, "--spool", str(fleet.spool("host-a")), "--json")
    assert one["totals"]["invocations"] == 3 and one["totals"]["would_deny"] == 2
    _, twice = report(env, "--spool", str(fleet.dir), str(fleet.spool("host-a")), "--json")
    assert twice["totals"]["invocations"] == 6  # a file named twice is read once


def test_the_window_leaves_out_older_records(env, fleet):
    old = json.loads(fleet.spool("host-a").read_text().splitlines()[-1])
    old["ts"] -= 30 * 86400
    with open(fleet.spool("host-a"), "a") as fh:
        fh.write(json.dumps(old) + "\n")
    _, recent = report(env, "--spool", str(fleet.dir), "--json")
    _, everything = report(env, "--spool", str(fleet.dir), "--since", "all", "--json")
    _, hour = report(env, "--spool", str(fleet.dir), "--since", "1h", "--json")
    assert recent["totals"]["invocations"] == hour["totals"]["invocations"] == 6
    assert everything["totals"]["invocations"] == 7 and everything["since"] is None
    assert sum(s["outside_window"] for s in recent["sources"]) == 1


def test_the_text_view_shows_the_totals_and_the_table(env, fleet):
    done, _ = report(env, "--spool", str(fleet.dir))
    out = done.stdout.decode()
    assert done.returncode == 0
    assert "2 host(s)" in out and "would deny:         4" in out and "failed open:        1" in out
    assert "projection 1" in out and "sha256:test (4)" in out
    table = out.split("By rule:")[1]
    assert "rule_no_internal_hostnames" in table and "deny_targets:service:etcd" in table


def test_without_spool_it_reads_this_hosts_spool(env, tmp_path):
    fleet = Fleet(tmp_path, env)
    fleet.edit('let h = "db1.corp.example";')  # the environment's own spool
    done, doc = report(env, "--json")
    assert done.returncode == 0 and doc["totals"]["would_deny"] == 1
    assert doc["sources"][0]["path"] == str(env.spool_path)


@pytest.mark.parametrize(("args", "said"), [
    (["--since", "soon"], "--since 'soon'"),
    (["--spool", "/nonexistent/spool.jsonl"], "/nonexistent/spool.jsonl: no such file or directory"),
])
def test_unusable_input_is_refused_with_exit_2(env, tmp_path, args, said):
    done, doc = report(env, *args, "--json")
    assert done.returncode == 2 and said in done.stderr.decode()
    assert doc["error"]["kind"] == "usage" and said in doc["error"]["message"]


def test_an_empty_directory_is_refused(env, tmp_path):
    (tmp_path / "empty").mkdir()
    done, _ = report(env, "--spool", str(tmp_path / "empty"))
    assert done.returncode == 2 and b"no *.jsonl spool file" in done.stderr


def test_the_json_follows_its_schema_for_reports_and_errors(env, fleet):
    jsonschema = pytest.importorskip("jsonschema")
    from yupana.commands.json_output import schema_path

    with open(schema_path("report"), encoding="utf-8") as fh:
        validator = jsonschema.Draft202012Validator(json.load(fh))
    _, doc = report(env, "--spool", str(fleet.dir), "--json")
    _, error = report(env, "--since", "soon", "--json")
    validator.validate(doc)
    validator.validate(error)
    assert doc["schema"] == error["schema"] == "yupana.report/1"
    assert not validator.is_valid({**doc, "by": "colour"})  # the schema is not vacuous
    assert not validator.is_valid({k: v for k, v in doc.items() if k != "totals"})


def test_enforce_traffic_counts_denials_and_a_co_firing_warn_rule_as_warned(env, tmp_path):
    fleet = Fleet(tmp_path, env)
    enforced = Repo(tmp_path / "enforced", env).config(_config(mode="enforce"))
    fleet.on("host-c")
    assert fleet.edit('let h = "db1.corp.example"; // TODO', repo=enforced).denied
    _, doc = report(env, "--spool", str(fleet.dir), "--json")
    total = doc["totals"]
    assert (total["denied"], total["would_deny"], total["warned"], total["advise"]) == (1, 0, 0, 0)
    rows = {g["key"]: g for g in doc["groups"]}
    assert rows["rule_no_internal_hostnames"]["denied"] == 1 and rows["rule_no_internal_hostnames"]["warned"] == 0
    assert rows["rule_todo"]["denied"] == 0 and rows["rule_todo"]["warned"] == 1


def test_advise_notices_from_an_older_yupana_are_not_guessed(env, tmp_path):
    spool = tmp_path / "old" / "metrics.jsonl"
    spool.parent.mkdir()
    now = int(time.time())
    older = {"kind": "guard", "ts": now, "result": "notify", "mode": "advise", "rule": "rule_x", "session": "s",
             "constraints": [{"id": "rule_x", "plane": "text", "outcome": "unsatisfied", "response": "warned"}]}
    spool.write_text(json.dumps(older) + "\n")
    _, doc = report(env, "--spool", str(spool), "--json")
    total = doc["totals"]
    assert (total["would_deny"], total["warned"], total["would_deny_unrecorded"]) == (0, 0, 1)


def test_this_hosts_spool_not_written_yet_is_an_empty_report(env, tmp_path):
    done, doc = report(env, "--json")  # the command's own `command` record is all the spool holds
    assert done.returncode == 0 and doc["totals"]["invocations"] == 0 and len(doc["sources"]) == 1
    (tmp_path / "a-file").write_text("")
    env["YUPANA_METRICS_PATH"] = str(tmp_path / "a-file" / "metrics.jsonl")  # below a file: never written
    done, doc = report(env, "--json")
    assert done.returncode == 0 and doc["sources"] == [] and doc["totals"]["invocations"] == 0
    assert b"no records yet" in done.stderr
