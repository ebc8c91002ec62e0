"""``yupana replay`` through the real CLI: real hook runs capture their inputs on two hosts, then
the traffic is replayed against a candidate catalogue that adds one rule and retires another —
through the real hook code — and the flips are asserted: per rule, tenant, repo and client, with
masked examples, what could not be judged, ``--fail-on-flip`` and unusable input."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from conftest import run_yupana
from hooks.guard_kit import Repo, hook, text_rule, write_cache
from prebash import hook as bash_hook

ENDPOINT = "http://127.0.0.1:9"
HOST = r"\b[a-z0-9-]+\.corp\.example\b"
LIVE_RULES = [text_rule("rule_no_internal_hostnames", HOST), text_rule("rule_no_tracker_ids", r"\bOPS-[0-9]+\b")]


def counted(body: dict) -> dict:
    from yupana.planes import PLANES, count

    return {p.key: count(p.key, body.get(p.key)) for p in PLANES}


def _config(capture: str) -> str:
    return (f'[yupana.policy]\nmode = "enforce"\n[yupana.metrics]\nrecord_inputs = "{capture}"\n[yupana.quipu]\n'
            f'enabled = true\nendpoint = "{ENDPOINT}"\ndialect = "quipu"\nprojection_cache_ttl_secs = 7200\n'
            'refresh_interval_secs = 300\n')


class Fleet:
    """Two hosts' logs (spool and capture) under one directory, written by the real hooks."""

    def __init__(self, base: Path, env) -> None:
        self.env = env
        self.dir = base / "fleet"
        from yupana.state import cache

        write_cache(env, ENDPOINT, text_rules=LIVE_RULES)
        body, _ = cache.read_json(str(env.cache_for(ENDPOINT)))  # the planes as a reader sees them
        assert cache.save(dict(body, counts=counted(body)), str(env.cache_for(ENDPOINT))) is None  # as a refresh counts
        entry = {"exposure": "public", "at": int(time.time())}
        (env.cache_for(ENDPOINT).parent / "exposure.json").write_text(
            json.dumps({"version": 1, "entries": {f"{ENDPOINT}|widgets": entry}}))
        self.repo = Repo(base / "repo", env)

    def on(self, host: str, role: str, capture: str = "full") -> None:
        self.env["YUPANA_METRICS_PATH"] = str(self.dir / host / "metrics.jsonl")
        self.env["BOBBIN_ROLE"] = role
        self.repo.config(_config(capture))

    def edit(self, rel: str, text: str):
        return hook(self.env, self.repo.payload(rel=rel, old_string="x", new_string=text))

    def candidate(self, path: Path) -> Path:
        """The change under review: rule_no_tracker_ids retired, rule_no_eval added (block)."""
        from yupana.state import cache

        body, _ = cache.read_json(str(self.env.cache_for(ENDPOINT)))
        body["text_rules"] = [r for r in body["text_rules"] if r["name"] != "rule_no_tracker_ids"]
        body["text_rules"].append(text_rule("rule_no_eval", r"\beval\("))
        body["text_rules"].append(text_rule("rule_todo", r"\bTODO\b", tier="warn"))
        body["digest"] = "sha256:candidate"
        body["counts"] = counted(body)
        path.write_text(json.dumps(body))
        return path


@pytest.fixture
def fleet(tmp_path, env):
    fleet = Fleet(tmp_path, env)
    fleet.on("host-a", "polecat-1")
    assert fleet.edit("src/db.rs", 'let h = "db1.corp.example";').denied  # denied on both sides
    assert fleet.edit("src/ops.rs", "// see OPS-1234 for why").denied  # its rule is retired
    assert fleet.edit("src/run.py", "x = eval(src)").allowed_silently  # the new rule denies it
    fleet.on("host-b", "polecat-3")
    assert fleet.edit("src/gen.py", "y = eval(data)").allowed_silently  # denied, from host b
    assert fleet.edit("src/later.rs", "// TODO: later").allowed_silently  # newly notified
    patch = "*** Begin Patch\n*** Add File: src/p1.py\n+z = eval(q)\n*** Add File: src/p2.py\n+ok = 1\n*** End Patch\n"
    assert hook(env, fleet.repo.patch(patch)).allowed_silently  # Codex, two files: denied by the new rule
    bash_hook(env, "ls -la src", cwd=fleet.repo.root, role="polecat-3")
    fleet.on("host-c", "polecat-4", capture="masked")
    assert fleet.edit("src/old.rs", "// OPS-77 again").denied  # masked: its flip cannot be judged
    return fleet


def replay(env, *args: str, cwd=None):
    done = run_yupana(["replay", *args], env, cwd=cwd, timeout=240)
    doc = json.loads(done.stdout) if "--json" in args and done.stdout else None
    if doc is not None:  # every --json document, a result or a refusal, follows the shipped schema
        jsonschema = pytest.importorskip("jsonschema")
        from yupana.commands.json_output import schema_path

        jsonschema.Draft202012Validator(json.loads(Path(schema_path("replay")).read_text())).validate(doc)
    return done, doc


def test_replay_against_a_candidate_that_adds_one_rule_and_retires_another(fleet, env, tmp_path):
    candidate = fleet.candidate(tmp_path / "candidate.json")
    done, doc = replay(env, "--candidate", str(candidate), "--spool", str(fleet.dir), "--json", cwd=fleet.repo.root)
    assert done.returncode == 0, done.stderr
    assert doc["schema"] == "yupana.replay/1" and doc["error"] is None
    assert doc["live"]["kind"] == "cache" and doc["candidate"]["digest"] == "sha256:candidate"
    assert doc["inputs"] == 8 and doc["judged"] == 7
    assert doc["counts"] == {"newly_denied": 3, "no_longer_denied": 1, "newly_notified": 1, "no_longer_notified": 0}
    denied = doc["groups"]["newly_denied"]
    assert denied["rule"] == {"rule_no_eval": 3}
    assert denied["tenant"] == {"polecat-1": 1, "polecat-3": 2}
    assert denied["repo"] == {"widgets": 3} and denied["client"] == {"claude-code": 2, "codex": 1}
    assert doc["groups"]["no_longer_denied"]["rule"] == {"rule_no_tracker_ids": 1}
    assert doc["groups"]["newly_notified"]["rule"] == {"rule_todo": 1}
    example = doc["examples"]["no_longer_denied"][0]
    assert example["paths"] == ["src/ops.rs"] and "OPS-1234" not in example["text"] and "***" in example["text"]
    assert all("eval(" not in ex["text"] for ex in doc["examples"]["newly_denied"])  # what the rule caught: masked
    assert ["src/p1.py", "src/p2.py"] in [ex["paths"] for ex in doc["examples"]["newly_denied"]]  # the patch, whole
    # host c's capture masked what its retired rule caught: not judged (its flip cannot be seen), not counted
    assert doc["not_judged"]["masked"] == 1 and doc["masked_flips"] == []
    assert doc["not_judged"]["not_captured"] == 0
    assert {s["host"] for s in doc["sources"]} == {"host-a", "host-b", "host-c"}


def test_text_view_and_fail_on_flip(fleet, env, tmp_path):
    candidate = fleet.candidate(tmp_path / "candidate.json")
    done, _ = replay(env, "--candidate", str(candidate), "--spool", str(fleet.dir), "--fail-on-flip",
                     cwd=fleet.repo.root)
    assert done.returncode == 1, done.stderr
    out = done.stdout.decode()
    assert "newly denied: 3" in out and "no longer denied: 1" in out and "by rule: rule_no_eval 3" in out
    assert "not judged: 0 call(s)" in out and "1 input(s) captured masked" in out


def test_the_live_catalogue_against_itself_flips_nothing_and_uncaptured_calls_are_counted(fleet, env):
    env["YUPANA_METRICS_PATH"] = str(fleet.dir / "host-d" / "metrics.jsonl")
    fleet.repo.config(_config("off"))
    assert fleet.edit("src/x.rs", "let a = 1;").allowed_silently  # judged, not captured
    done, doc = replay(env, "--candidate", "@cache", "--spool", str(fleet.dir), "--json", "--fail-on-flip",
                       cwd=fleet.repo.root)
    assert done.returncode == 0, done.stderr
    assert doc["total"] == 0 and doc["unchanged"] == doc["judged"] == 7
    assert doc["not_judged"]["not_captured"] == 1


def test_unusable_input_exits_2(fleet, env, tmp_path):
    done, doc = replay(env, "--candidate", str(tmp_path / "nope.ttl"), "--spool", str(fleet.dir), "--json",
                       cwd=fleet.repo.root)
    assert done.returncode == 2 and doc["error"]["kind"] == "input" and "candidate" in doc["error"]["message"]
    done, _ = replay(env, "--candidate", "@cache", "--spool", str(tmp_path / "missing"), cwd=fleet.repo.root)
    assert done.returncode == 2 and b"no such file or directory" in done.stderr
    done, _ = replay(env, "--candidate", "@cache", "--since", "soon", "--spool", str(fleet.dir), cwd=fleet.repo.root)
    assert done.returncode == 2


CATALOGUE = Path(__file__).resolve().parents[2] / "fixtures" / "catalogue"
STAGING_RULE = '''
aegis:rule_no_staging_urls a aegis:InternalIdentifierPattern ;
    rdfs:label "no staging URLs" ;
    aegis:regex "https://staging\\\\.larkspur\\\\.example" ;
    aegis:enforcementTier "warn" ;
    aegis:identifierClass "hostname" ;
    rdfs:comment "Staging moves; link the service registry." .
'''


def test_a_projected_catalogue_against_its_edited_rdf_files(env, tmp_path):
    """The live side is a real refresh of RDF files (@cache); the candidate is the same files
    with one rule retired and one added, read, projected and SHACL-gated as `diff` reads them."""
    import shutil

    live, candidate = tmp_path / "live", tmp_path / "candidate"
    shutil.copytree(CATALOGUE, live)
    shutil.copytree(CATALOGUE, candidate)
    rules = candidate / "text-rules.ttl"
    text = rules.read_text()
    start, end = text.index("aegis:rule_no_ops_channels a"), text.index("aegis:rule_no_vault_paths a")
    rules.write_text(text[:start] + text[end:] + STAGING_RULE)
    repo = Repo(tmp_path / "repo", env).config(
        f'[yupana.policy]\nmode = "advise"\n[yupana.metrics]\nrecord_inputs = "full"\n'
        f'[yupana.quipu]\nenabled = true\nendpoint = "file:{live}"\n')
    done = run_yupana(["project"], env, cwd=repo.root)
    assert done.returncode == 0, done.stderr
    for rel, line in (("src/a.rs", 'let c = "#ops-payments";'), ("src/b.rs", 'let u = "https://staging.larkspur.example/x";'),
                      ("src/c.rs", "let a = 1;")):
        assert hook(env, repo.payload(rel=rel, old_string="x", new_string=line)).rc == 0
    done, doc = replay(env, "--candidate", str(candidate), "--json", cwd=repo.root)  # this host's capture
    assert done.returncode == 0, done.stderr
    assert doc["live"]["kind"] == "cache" and doc["candidate"]["kind"] == "files"
    assert doc["inputs"] == doc["judged"] == 3
    assert doc["counts"]["newly_notified"] == 1 and doc["counts"]["no_longer_notified"] == 1, json.dumps(doc["counts"])
    assert doc["groups"]["newly_notified"]["rule"] == {"rule_no_staging_urls": 1}
    assert doc["groups"]["no_longer_notified"]["rule"] == {"rule_no_ops_channels": 1}
    assert doc["groups"]["newly_notified"]["repo"] == {"widgets": 1}


def test_a_hosts_capture_and_spool_named_as_files_are_one_host(env, tmp_path):
    """The capture lives beside the spool: read by default, or named as two files, they are one
    host, so the calls its spool recorded are matched with its captured inputs (none missing)."""
    fleet = Fleet(tmp_path, env)
    fleet.on("host-a", "polecat-1")
    assert fleet.edit("src/db.rs", 'let h = "db1.corp.example";').denied
    assert fleet.edit("src/ok.rs", "let a = 1;").allowed_silently
    host = fleet.dir / "host-a"
    for spool in ((), ("--spool", str(host / "inputs.jsonl"), str(host / "metrics.jsonl"))):
        done, doc = replay(env, "--candidate", "@cache", *spool, "--json", cwd=fleet.repo.root)
        assert done.returncode == 0, done.stderr
        assert doc["judged"] == 2 and doc["not_judged"]["not_captured"] == 0, spool
        assert {s["host"] for s in doc["sources"]} == {str(host)}


def test_a_command_is_replayed_in_the_directory_it_ran_in_and_reproduces_the_recorded_decision(env, tmp_path):
    """Removing ``..`` from a subdirectory takes the project (and the guard's configuration) with
    it: refused live. Replayed from the same directory of the sandbox, the live side decides as the
    hook recorded (``recorded``), so a flip there would be the candidate's, not the replay's."""
    fleet = Fleet(tmp_path, env)
    fleet.on("host-a", "polecat-1")
    (fleet.repo.root / "src").mkdir()
    denied = bash_hook(env, "rm -rf ..", cwd=fleet.repo.root / "src")
    assert b'"deny"' in denied.stdout
    assert fleet.edit("src/ok.rs", "let a = 1;").allowed_silently
    done, doc = replay(env, "--candidate", "@cache", "--spool", str(fleet.dir), "--json", cwd=fleet.repo.root)
    assert done.returncode == 0, done.stderr
    assert doc["judged"] == 2 and doc["total"] == 0
    assert doc["recorded"] == {"compared": 2, "differed": 0, "examples": []}
    done, _ = replay(env, "--candidate", "@cache", "--spool", str(fleet.dir), cwd=fleet.repo.root)
    assert "replayed as recorded: 2 of 2 input(s)" in done.stdout.decode()


def test_an_edit_outside_the_project_is_replayed_outside_the_sandbox_never_at_this_machines_path(env, tmp_path):
    """A file outside any project is captured under its absolute path. Replayed, it is put outside
    the sandbox's project — not at that path, where the replaying machine may now have a project
    of its own (here one that denies everything) that would judge it instead of the catalogue."""
    fleet = Fleet(tmp_path, env)
    fleet.on("host-a", "polecat-1")
    assert fleet.edit("../elsewhere/notes.md", "remember the milk").allowed_silently
    [captured] = [json.loads(line) for line in (fleet.dir / "host-a" / "inputs.jsonl").read_text().splitlines()]
    assert captured["edits"][0]["path"] == str(tmp_path / "elsewhere" / "notes.md")
    Repo(tmp_path / "elsewhere", env, origin=None).config(
        '[yupana.policy]\nmode = "enforce"\n[[yupana.policy.tripwires]]\nname = "everything"\npaths = ["**"]\n'
        'effect = "deny"\nmessage = "this machine\'s own project"\n')
    done, doc = replay(env, "--candidate", "@cache", "--spool", str(fleet.dir), "--json", cwd=fleet.repo.root)
    assert done.returncode == 0, done.stderr
    assert doc["judged"] == 1 and doc["recorded"] == {"compared": 1, "differed": 0, "examples": []}


def test_advise_traffic_is_compared_with_what_enforce_would_have_answered(env, tmp_path):
    """An advise host notified where enforce would refuse; its capture says so (``would_deny``),
    so the live side's replay (judged as enforce) is compared with it: a would-deny is a deny."""
    fleet = Fleet(tmp_path, env)
    fleet.on("host-a", "polecat-1")
    fleet.repo.config(_config("full").replace('mode = "enforce"', 'mode = "advise"'))
    assert fleet.edit("src/db.rs", 'let h = "db1.corp.example";').message  # would deny: a notice
    assert fleet.edit("src/ok.rs", "let a = 1;").allowed_silently
    done, doc = replay(env, "--candidate", "@cache", "--spool", str(fleet.dir), "--json", cwd=fleet.repo.root)
    assert done.returncode == 0, done.stderr
    assert doc["judged"] == 2 and doc["recorded"] == {"compared": 2, "differed": 0, "examples": []}


def test_a_decision_the_replay_cannot_reproduce_is_reported_with_why(env, tmp_path):
    """The host's own configuration is not captured: a path its scope denied is allowed by the
    replayed live side, and the report says the replay did not see what the hook saw."""
    fleet = Fleet(tmp_path, env)
    fleet.on("host-a", "polecat-1")
    fleet.repo.config(_config("full") + '[yupana.policy.scopes.polecat-1]\ndeny_paths = ["vault/**"]\n')
    assert fleet.edit("vault/key.rs", "let a = 1;").denied
    assert fleet.edit("src/ok.rs", "let a = 1;").allowed_silently
    done, doc = replay(env, "--candidate", "@cache", "--spool", str(fleet.dir), "--json", cwd=fleet.repo.root)
    assert done.returncode == 0, done.stderr
    assert (doc["recorded"]["compared"], doc["recorded"]["differed"]) == (2, 1)
    [ex] = doc["recorded"]["examples"]
    assert (ex["paths"], ex["recorded"], ex["live"]) == (["vault/key.rs"], "deny", "allow")
    done, _ = replay(env, "--candidate", "@cache", "--spool", str(fleet.dir), cwd=fleet.repo.root)
    out = done.stdout.decode()
    assert "replayed as recorded: 1 of 2 input(s)" in out
    assert "differed: Edit vault/key.rs: recorded deny, replayed allow (the replay does not see the host's own" in out


def test_a_capture_line_cannot_move_the_replay_out_of_its_sandbox(tmp_path):
    """Shipped logs are data: a ``cwd`` that climbs out or is absolute runs at the project root,
    and an absolute file path (or one climbing out) lands below the sandbox's outside directory,
    never at itself."""
    from yupana.commands.replay.judge import located, workdir

    root, outside = str(tmp_path / "case"), str(tmp_path / "outside")
    assert workdir({"cwd": "src/deep"}, root) == f"{root}/src/deep"
    for cwd in ("../..", "src/../../x", "/etc", "", ".", None, 7):
        assert workdir({"cwd": cwd}, root) == root, cwd
    assert located("src/a.rs", root, outside) == f"{root}/src/a.rs"
    assert located("/etc/passwd", root, outside) == f"{outside}/etc/passwd"
    assert located("../../etc/passwd", root, outside) == f"{outside}/etc/passwd"
