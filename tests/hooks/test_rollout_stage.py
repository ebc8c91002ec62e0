"""A governed per-rule rollout stage (issue 24 §4): ``aegis:rolloutStage`` ``shadow`` | ``advise`` |
``enforce`` on a text rule, a ceiling under the host's mode. Through the real CLI with a real
catalogue (the embedded store, and a real Oxigraph refresh): a shadow rule is evaluated and
recorded and shown to nobody; an advise rule only warns under a host at enforce; a bad stage
fails the refresh naming subject and property while the prior cache keeps serving."""

from __future__ import annotations

import json
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from catalogue_kit import PREFIXES
from conftest import run_yupana
from guard_kit import AEGIS, Repo, hook

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "catalogue"

TEXT = 'let host = "db1.corp.example";'


def rule(stage: str | None) -> str:
    staged = f'    aegis:rolloutStage "{stage}" ;\n' if stage else ""
    return ("aegis:rule_no_corp_hosts a aegis:InternalIdentifierPattern ;\n"
            '    rdfs:label "no internal hostnames" ;\n'
            '    aegis:regex "\\\\b[a-z0-9-]+\\\\.corp\\\\.example\\\\b" ;\n'
            f'    aegis:enforcementTier "block" ;\n{staged}'
            '    rdfs:comment "hostnames leak topology" .\n'
            'aegis:repo_widgets aegis:exposure "public" .\n')


def catalogue(tmp_path, stage: str | None) -> str:
    path = tmp_path / "catalogue" / "catalogue.ttl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(PREFIXES + rule(stage))
    return str(path)


def configure(repo: Repo, endpoint: str, mode: str = "enforce", dialect: str | None = None) -> Repo:
    lines = ["[yupana.policy]", f'mode = "{mode}"', "[yupana.quipu]", "enabled = true", f'endpoint = "{endpoint}"']
    return repo.config("\n".join(lines + ([f'dialect = "{dialect}"'] if dialect else [])) + "\n")


def project(repo: Repo, env) -> None:
    done = run_yupana(["project"], env, cwd=repo.root, timeout=300)
    assert done.returncode == 0, done.stderr.decode()


def edit(env, repo: Repo):
    return hook(env, repo.payload(rel="src/net.rs", old_string="", new_string=TEXT))


@pytest.fixture
def widgets(tmp_path, env) -> Repo:
    return Repo(tmp_path / "repo", env, origin="git@github.com:acme/widgets.git")


def staged(env, tmp_path, widgets, stage: str | None, mode: str = "enforce"):
    project(configure(widgets, f"file:{catalogue(tmp_path, stage)}", mode), env)
    return edit(env, widgets)


def constraint(env) -> dict:
    guard = env.records("guard")[-1]
    [found] = [c for c in guard["constraints"] if c["id"] == "rule_no_corp_hosts"]
    return found


@pytest.mark.parametrize("mode", ["enforce", "advise"])
def test_a_shadow_rule_is_recorded_and_shown_to_nobody(env, tmp_path, widgets, mode):
    result = staged(env, tmp_path, widgets, "shadow", mode)
    assert result.allowed_silently, result  # no deny, no notice, no context for the model
    assert "corp.example" not in result.stderr and "no internal hostnames" not in result.stderr
    guard = env.records("guard")[-1]
    assert guard["result"] == "allow" and not guard.get("rule")
    assert constraint(env) == {"id": "rule_no_corp_hosts", "plane": "text", "outcome": "unsatisfied",
                               "response": "logged", "would_deny": True, "stage": "shadow"}
    assert guard.get("would_deny") in (None, False)  # the call itself: enforce would not have refused it
    assert not env.records("governed") and not env.records("fail_open")


def test_an_advise_rule_only_warns_under_a_host_at_enforce(env, tmp_path, widgets):
    result = staged(env, tmp_path, widgets, "advise")
    assert not result.denied, result
    shown = result.message + result.context
    assert "no internal hostnames" in shown and "rollout stage advise, so only a warning" in shown
    assert env.records("guard")[-1]["result"] == "notify"
    assert constraint(env) == {"id": "rule_no_corp_hosts", "plane": "text", "outcome": "unsatisfied",
                               "response": "warned", "would_deny": True, "stage": "advise"}
    [gov] = env.records("governed")
    assert gov["blocking"] is False and gov["rules"] == ["rule_no_corp_hosts"]


@pytest.mark.parametrize("stage", ["enforce", None])
def test_an_enforce_rule_or_one_with_no_stage_denies_as_today(env, tmp_path, widgets, stage):
    result = staged(env, tmp_path, widgets, stage)
    assert result.denied and "no internal hostnames" in result.reason, result
    assert constraint(env) == {"id": "rule_no_corp_hosts", "plane": "text", "outcome": "unsatisfied",
                               "response": "blocked"}


def test_project_dump_shows_each_rules_stage(env, tmp_path, widgets):
    project(configure(widgets, f"file:{catalogue(tmp_path, 'shadow')}"), env)
    done = run_yupana(["project", "--dump"], env, cwd=widgets.root)
    assert done.returncode == 0, done.stderr.decode()
    table = done.stdout.decode()
    assert "STAGE" in table and "shadow" in table.split("rule_no_corp_hosts", 1)[1].splitlines()[0]
    dumped = run_yupana(["project", "--dump", "--json"], env, cwd=widgets.root)
    [entry] = json.loads(dumped.stdout)["text_rules"]
    assert entry["stage"] == "shadow"
    turtle = run_yupana(["project", "--dump", "--format", "turtle"], env, cwd=widgets.root)
    assert turtle.returncode == 0, turtle.stderr.decode()
    assert 'aegis:rolloutStage "shadow"' in turtle.stdout.decode()


def test_a_shadow_rule_on_oxigraph_is_recorded_not_shown(env, tmp_path, widgets, oxigraph_server):
    url = oxigraph_server(catalogue(tmp_path, "shadow"))
    project(configure(widgets, url, dialect="sparql11"), env)
    result = edit(env, widgets)
    assert result.allowed_silently, result
    assert constraint(env)["stage"] == "shadow" and constraint(env)["would_deny"] is True


@pytest.mark.parametrize("bad,problem", [
    ('"staged"', "'staged' is not one of shadow, advise, enforce"),
    ('"shadow" , "enforce"', "rolloutStage"),
])
def test_a_bad_stage_fails_the_refresh_naming_subject_and_property(env, tmp_path, widgets, oxigraph_server,
                                                                   bad, problem):
    from servers.oxigraph import update_url

    url = oxigraph_server(catalogue(tmp_path, "shadow"), fresh=True)
    project(configure(widgets, url, dialect="sparql11"), env)
    before = env.cache_path.read_bytes()
    s, p = f"<{AEGIS}rule_no_corp_hosts>", f"<{AEGIS}rolloutStage>"
    update = f"DELETE WHERE {{ {s} {p} ?o }} ; INSERT DATA {{ {s} {p} {bad} }}"
    urllib.request.urlopen(urllib.request.Request(update_url(url), data=urllib.parse.urlencode(
        {"update": update}).encode(), method="POST"), timeout=10).read()
    done = run_yupana(["project"], env, cwd=widgets.root, timeout=300)
    err = done.stderr.decode()
    assert done.returncode == 1, err
    assert AEGIS + "rule_no_corp_hosts" in err or "aegis:rule_no_corp_hosts" in err, err
    assert "aegis:rolloutStage" in err and problem in err, err
    assert "prior cache kept" in err
    assert env.cache_path.read_bytes() == before
    assert edit(env, widgets).allowed_silently  # the prior cache (the rule in shadow) keeps serving


def test_report_counts_each_shadow_rules_would_denies_apart(env, tmp_path, widgets):
    staged(env, tmp_path, widgets, "shadow")
    hook(env, widgets.payload(rel="src/lib.rs", old_string="", new_string="let x = 1;"))  # fires nothing
    hook(env, widgets.payload(rel="src/net.rs", old_string="", new_string='h = "db2.corp.example"'))
    done = run_yupana(["report", "--json"], env, cwd=widgets.root)
    assert done.returncode == 0, done.stderr.decode()
    doc = json.loads(done.stdout)
    assert doc["shadow"] == [{"rule": "rule_no_corp_hosts", "fired": 2, "would_deny": 2}]
    assert doc["totals"]["invocations"] == 3
    assert doc["totals"]["would_deny"] == 0 and doc["totals"]["warned"] == 0  # nobody was shown anything
    assert "rule_no_corp_hosts" not in {g["key"] for g in doc["groups"]}
    text = run_yupana(["report"], env, cwd=widgets.root).stdout.decode()
    assert "Shadow rules" in text and "rule_no_corp_hosts" in text.split("Shadow rules", 1)[1]


def test_status_shows_each_shadow_rules_would_deny_count(env, tmp_path, widgets):
    staged(env, tmp_path, widgets, "shadow")
    hook(env, widgets.payload(rel="src/net.rs", old_string="", new_string='h = "db2.corp.example"'))
    hook(env, widgets.payload(rel="src/lib.rs", old_string="", new_string="let x = 1;"))
    done = run_yupana(["status", "--json"], env, cwd=widgets.root)
    doc = json.loads(done.stdout)
    assert doc["rollout"]["rules"] == [{"rule": "rule_no_corp_hosts", "stage": "shadow", "fired": 2, "would_deny": 2}]
    text = run_yupana(["status"], env, cwd=widgets.root).stdout.decode()
    line = next(x for x in text.splitlines() if "rule_no_corp_hosts" in x)
    assert "shadow" in line and "would have denied 2" in line, text


def test_explain_names_a_shadow_findings_stage_and_predicts_no_notice(env, tmp_path, widgets):
    project(configure(widgets, f"file:{catalogue(tmp_path, 'shadow')}"), env)
    payload = widgets.payload(rel="src/net.rs", old_string="", new_string=TEXT)
    done = run_yupana(["explain", "--json"], env, stdin=json.dumps(payload).encode(), cwd=widgets.root)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    report = json.loads(done.stdout)
    [found] = [f for s in report["stages"] for f in s.get("findings", ()) if f["id"] == "rule_no_corp_hosts"]
    assert found["stage"] == "shadow" and found["response"] == "logged" and found["outcome"] == "unsatisfied"
    assert report["decision"] == "allow" and not report["stdout"]
    text = run_yupana(["explain"], env, stdin=json.dumps(payload).encode(), cwd=widgets.root).stdout.decode()
    assert "stage shadow" in text


# ── structural policies (aegis:Policy with a tree-sitter selector) ─────────────────────

POLICY = """
aegis:sel_rust_method_calls a aegis:Selector ;
    aegis:name "rust-method-calls" ;
    aegis:evidenceSource "(call_expression function: (field_expression field: (field_identifier) @method))" ;
    aegis:language "rust" ;
    aegis:tier "tree-sitter" .
aegis:pred_no_unwrap a aegis:Predicate ;
    aegis:name "no-unwrap" ;
    aegis:evidenceSource "^(?:unwrap|expect)$" ;
    aegis:matchType "must-not-match" .
aegis:policy_no_unwrap a aegis:Policy ;
    rdfs:label "no-unwrap" ;
    aegis:boundary "action" ;
    aegis:selector aegis:sel_rust_method_calls ;
    aegis:predicate aegis:pred_no_unwrap ;
    aegis:effect "deny" ;
    aegis:constraintClass "hard" ;
    aegis:verificationPoint "PAG" %s.
"""
UNWRAP = "fn f() { let v = x.unwrap(); }"


def policy_catalogue(tmp_path, stage: str | None) -> str:
    path = tmp_path / "catalogue" / "policy.ttl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(PREFIXES + POLICY % (f'; aegis:rolloutStage "{stage}" ' if stage else ""))
    return str(path)


@pytest.mark.parametrize("stage,denied,shown,response", [
    ("shadow", False, False, "logged"),
    ("advise", False, True, "warned"),
    ("enforce", True, True, "blocked"),
    (None, True, True, "blocked"),
])
def test_a_structural_policy_honours_its_stage(env, tmp_path, widgets, stage, denied, shown, response):
    project(configure(widgets, f"file:{policy_catalogue(tmp_path, stage)}"), env)
    result = hook(env, widgets.payload(rel="src/lib.rs", old_string="", new_string=UNWRAP))
    assert result.denied is denied, result
    assert (not result.allowed_silently) is shown, result
    if stage == "advise":
        assert "rollout stage advise, so only a warning" in result.message + result.context
    guard = env.records("guard")[-1]
    [found] = [c for c in guard["constraints"] if c["id"] == "no-unwrap" and c["outcome"] == "unsatisfied"]
    assert found["response"] == response
    assert found.get("stage") == (stage if stage in ("shadow", "advise") else None)
    assert found.get("would_deny") == (True if stage in ("shadow", "advise") else None)
    dump = json.loads(run_yupana(["project", "--dump", "--json"], env, cwd=widgets.root).stdout)
    assert dump["policies"][0].get("stage") == stage


def test_a_bad_policy_stage_fails_the_refresh_naming_subject_and_property(env, tmp_path, widgets):
    project(configure(widgets, f"file:{policy_catalogue(tmp_path, 'shadow')}"), env)
    (tmp_path / "catalogue" / "policy.ttl").write_text(PREFIXES + POLICY % '; aegis:rolloutStage "dark" ')
    done = run_yupana(["project"], env, cwd=widgets.root, timeout=300)
    err = done.stderr.decode()
    assert done.returncode == 1, err
    assert "policy_no_unwrap" in err and "aegis:rolloutStage" in err and "prior cache kept" in err, err


# ── governed tripwires (aegis:Policy with aegis:appliesTo and no selector) ─────────────

WIRE = ('aegis:wire_auth a aegis:Policy ; rdfs:label "auth" ; aegis:boundary "action" ; aegis:appliesTo "src/auth/**" ;'
        ' aegis:effect "deny" ; aegis:constraintClass "hard" ; rdfs:comment "auth changes need review" %s.\n')


@pytest.mark.parametrize("stage,denied,shown,response", [
    ("shadow", False, False, "logged"),
    ("advise", False, True, "warned"),
    (None, True, True, "blocked"),
])
def test_a_governed_tripwire_honours_its_stage(env, tmp_path, widgets, stage, denied, shown, response):
    path = tmp_path / "catalogue" / "wire.ttl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(PREFIXES + WIRE % (f'; aegis:rolloutStage "{stage}" ' if stage else ""))
    project(configure(widgets, f"file:{path}"), env)
    result = hook(env, widgets.payload(rel="src/auth/login.rs", old_string="", new_string="fn login() {}"))
    assert result.denied is denied, result
    assert (not result.allowed_silently) is shown, result
    if stage == "advise":
        assert "rollout stage advise, so only a warning" in result.message + result.context
    [found] = [c for c in env.records("guard")[-1]["constraints"] if c["id"] == "tripwire:auth"]
    assert found["response"] == response and found.get("stage") == stage
    assert bool(env.records("tripwire")) is (stage != "shadow")  # a shadow wire leaves only the guard record's entry


def test_a_stage_on_a_host_memory_policy_which_does_not_honour_it_fails_the_refresh(env, tmp_path, widgets):
    memory = (FIXTURES / "memory.ttl").read_text().replace(
        'aegis:effect "deny"', 'aegis:effect "deny" ; aegis:rolloutStage "shadow"', 1)
    path = tmp_path / "catalogue" / "memory.ttl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(memory)
    done = run_yupana(["project"], configure(widgets, f"file:{path}").env, cwd=widgets.root, timeout=300)
    err = done.stderr.decode()
    assert done.returncode == 1, err
    assert "aegis:rolloutStage" in err and "not honoured by host-memory policies" in err, err


def test_status_lists_a_staged_wire_that_fired_on_nothing_yet(env, tmp_path, widgets):
    path = tmp_path / "catalogue" / "wire.ttl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(PREFIXES + WIRE % '; aegis:rolloutStage "advise" ')
    project(configure(widgets, f"file:{path}"), env)
    doc = json.loads(run_yupana(["status", "--json"], env, cwd=widgets.root).stdout)
    assert doc["rule_set"]["staged"] == {"tripwire:auth": "advise"}
    assert doc["rollout"]["rules"] == [{"rule": "tripwire:auth", "stage": "advise", "fired": 0, "would_deny": 0}]


def test_diff_calls_promoting_a_shadow_rule_to_enforce_a_raise(env, tmp_path):
    old, new = tmp_path / "old.ttl", tmp_path / "new.ttl"
    old.write_text(PREFIXES + rule("shadow"))
    new.write_text(PREFIXES + rule(None))
    done = run_yupana(["diff", str(old), str(new), "--json"], env, cwd=tmp_path, timeout=120)
    doc = json.loads(done.stdout)
    [change] = [c for c in doc["changes"] if c["name"] == "rule_no_corp_hosts"]
    assert change["tier"] == {"old": "record", "new": "block", "move": "raised"}
    assert {f["field"]: (f.get("old"), f.get("new")) for f in change["fields"]}["stage"] == ("shadow", None)


def test_shapes_validate_refuses_a_bad_stage_in_the_stores_ci(env, tmp_path):
    path = tmp_path / "bad.ttl"
    path.write_text(PREFIXES + rule("staged"))
    done = run_yupana(["shapes", "validate", str(path)], env, cwd=tmp_path, timeout=120)
    out = done.stdout.decode()
    assert done.returncode == 1, out + done.stderr.decode()
    assert "aegis:rule_no_corp_hosts" in out and "aegis:rolloutStage" in out and "shadow, advise, enforce" in out


# ── grounded predicates (aegis:Predicate, candidateSource token) ───────────────────────

GROUNDED = """
aegis:item_12 a aegis:WorkItem ; aegis:identifier "yup-12" .
aegis:pred_no_ids a aegis:Predicate ;
    aegis:name "no-ids" ;
    rdfs:label "work-item ids stay out of source" ;
    aegis:evidenceSource "graph:work-item-id-set" ;
    aegis:candidateSource "token" ;
    aegis:groundingQuery "SELECT ?id WHERE { ?w a aegis:WorkItem ; aegis:identifier ?id }" ;
    aegis:matchType "must-not-ground" ;
    aegis:enforcementTier "block" %s.
"""


@pytest.mark.parametrize("stage,denied,shown,response", [
    ("shadow", False, False, "logged"),
    ("advise", False, True, "warned"),
    (None, True, True, "blocked"),
])
def test_a_grounded_predicate_honours_its_stage(env, tmp_path, widgets, stage, denied, shown, response):
    path = tmp_path / "catalogue" / "grounded.ttl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(PREFIXES + GROUNDED % (f'; aegis:rolloutStage "{stage}" ' if stage else ""))
    project(configure(widgets, f"file:{path}"), env)
    result = hook(env, widgets.payload(rel="src/lib.rs", old_string="", new_string="// see yup-99"))
    assert result.denied is denied, result
    assert (not result.allowed_silently) is shown, result
    if stage == "advise":
        assert "rollout stage advise, so only a warning" in result.message + result.context
    [found] = [c for c in env.records("guard")[-1]["constraints"] if c["id"].startswith("no-ids")]
    assert found["response"] == response and found.get("stage") == stage
    table = run_yupana(["project", "--dump"], env, cwd=widgets.root).stdout.decode()
    assert (stage or "enforce") in table.split("GROUNDED RULES", 1)[1].split("no-ids", 1)[1].splitlines()[0]
