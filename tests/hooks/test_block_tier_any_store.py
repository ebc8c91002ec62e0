"""Block-tier text rules can block on any store (issue 9 §5), through the real CLI: exposure
stated in the graph of a real Oxigraph server or of the embedded store, declared in config,
or known by nothing (a warning, and a record saying why); malformed exposure data fails the
refresh naming subject and property; ``project --dump`` and ``status`` say whether the block
tier can block here and why not."""

from __future__ import annotations

import json
import urllib.parse
import urllib.request

import pytest
from catalogue_kit import PREFIXES
from conftest import run_yupana
from guard_kit import AEGIS, Repo, hook

RULE = """
aegis:rule_no_corp_hosts a aegis:InternalIdentifierPattern ;
    rdfs:label "no internal hostnames" ;
    aegis:regex "\\\\b[a-z0-9-]+\\\\.corp\\\\.example\\\\b" ;
    aegis:enforcementTier "block" ;
    rdfs:comment "hostnames leak topology" .
"""
TEXT = 'let host = "db1.corp.example";'


def catalogue(tmp_path, exposure: str = "") -> str:
    path = tmp_path / "catalogue" / "catalogue.ttl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(PREFIXES + RULE + exposure)
    return str(path)


def configure(repo: Repo, endpoint: str, *, dialect: str | None = "sparql11", policy: str = "",
              quipu: str = "") -> Repo:
    lines = ["[yupana.policy]", 'mode = "enforce"', policy, "[yupana.quipu]", "enabled = true",
             f'endpoint = "{endpoint}"'] + ([f'dialect = "{dialect}"'] if dialect else []) + [quipu]
    return repo.config("\n".join(lines) + "\n")


def project(repo: Repo, env) -> None:
    done = run_yupana(["project"], env, cwd=repo.root, timeout=300)
    assert done.returncode == 0, done.stderr.decode()


def edit(env, repo: Repo):
    return hook(env, repo.payload(rel="src/net.rs", old_string="", new_string=TEXT))


@pytest.fixture
def widgets(tmp_path, env) -> Repo:
    return Repo(tmp_path / "repo", env, origin="git@github.com:acme/widgets.git")


# ── exposure stated in the graph ─────────────────────────────────────────────────────


@pytest.mark.parametrize("store", ["oxigraph", "embedded"])
def test_a_block_rule_denies_in_a_repository_the_graph_states_public(env, tmp_path, widgets, oxigraph_server, store):
    data = catalogue(tmp_path, 'aegis:repo_widgets aegis:exposure "public" .\n'
                               'aegis:repo_gadgets aegis:exposure "internal" .\n')
    endpoint = oxigraph_server(data) if store == "oxigraph" else f"file:{data}"
    project(configure(widgets, endpoint, dialect="sparql11" if store == "oxigraph" else None), env)
    result = edit(env, widgets)
    assert result.denied, result
    assert "no internal hostnames" in result.reason
    assert "repo `widgets` is public" in result.reason and "governed graph" not in result.reason  # issue 22 §3
    assert "(exposure: stated in the governed graph on aegis:repo_widgets)" in result.stderr  # the operator's
    [gov] = env.records("governed")
    assert gov["exposure"] == "public" and gov["exposure_source"] == "graph" and gov["blocking"] is True
    assert gov["repo"] == "widgets" and "exposure_reason" not in gov
    guard = env.records("guard")[-1]
    assert guard["result"] == "deny" and guard["exposure"] == "public" and guard["repo"] == "widgets"
    assert not env.records("fail_open")


def test_a_block_rule_denies_on_virtuoso_with_the_graph_statement(env, tmp_path, widgets, virtuoso_server):
    server = virtuoso_server()
    graph = "http://yupana.test/exposure"
    server.load_turtle(catalogue(tmp_path, 'aegis:repo_widgets aegis:exposure "public" .\n'), graph)
    project(configure(widgets, server.url, quipu=f'default_graph = "{graph}"'), env)
    result = edit(env, widgets)
    assert result.denied and "repo `widgets` is public" in result.reason
    assert "(exposure: stated in the governed graph" in result.stderr
    assert env.records("governed")[0]["exposure_source"] == "graph"


def test_on_quipu_the_graph_statement_answers_without_asking_policy_check(env, tmp_path, widgets, quipu_server):
    server = quipu_server(catalogue(tmp_path, 'aegis:repo_widgets aegis:exposure "public" .\n'))
    server.policy_outcomes[AEGIS + "repo_widgets"] = "unsatisfied"  # the graph statement comes first
    project(configure(widgets, server.url, dialect="quipu"), env)
    result = edit(env, widgets)
    assert result.denied and "stated in the governed graph" in result.stderr
    assert not [r for r in server.requests if r.path == "/policy/check"]
    assert not (env.state / "yupana" / "exposure.json").exists()


def test_a_repository_the_graph_states_internal_only_warns(env, tmp_path, widgets, oxigraph_server):
    data = catalogue(tmp_path, 'aegis:repo_widgets aegis:exposure "internal" .\n')
    project(configure(widgets, oxigraph_server(data)), env)
    result = edit(env, widgets)
    assert not result.denied and "downgraded to a warning because repo `widgets` is internal" in result.message
    assert "stated in the governed graph" in result.message
    [gov] = env.records("governed")
    assert gov["exposure"] == "internal" and gov["exposure_source"] == "graph" and gov["blocking"] is False


def test_the_graph_statement_wins_over_the_config_declaration(env, tmp_path, widgets, oxigraph_server):
    data = catalogue(tmp_path, 'aegis:repo_widgets aegis:exposure "internal" .\n')
    project(configure(widgets, oxigraph_server(data), policy='exposure = "public"'), env)
    result = edit(env, widgets)
    assert not result.denied and "is internal" in result.message
    assert "(exposure: stated in the governed graph" in result.message
    assert env.records("governed")[0]["exposure_source"] == "graph"


# ── exposure declared in config ──────────────────────────────────────────────────────


def test_a_block_rule_denies_in_a_repository_the_config_declares_public(env, tmp_path, widgets, oxigraph_server):
    project(configure(widgets, oxigraph_server(catalogue(tmp_path)), policy='exposure = "public"'), env)
    result = edit(env, widgets)
    assert result.denied and "repo `widgets` is public" in result.reason and "[yupana" not in result.reason
    assert "(exposure: declared by [yupana.policy] exposure)" in result.stderr
    [gov] = env.records("governed")
    assert gov["exposure"] == "public" and gov["exposure_source"] == "config" and gov["blocking"] is True
    # internal in config: the same rule only warns, and says why
    configure(widgets, oxigraph_server(catalogue(tmp_path)), policy='exposure = "internal"')
    result = edit(env, widgets)
    assert not result.denied and "is internal" in result.message
    assert "(exposure: declared by [yupana.policy] exposure)" in result.message


def test_a_config_declaration_outside_any_git_tree_still_applies(env, tmp_path, oxigraph_server):
    repo = Repo(tmp_path / "plain", env, origin=None)
    project(configure(repo, oxigraph_server(catalogue(tmp_path)), policy='exposure = "public"'), env)
    result = edit(env, repo)
    assert result.denied and "declared by [yupana.policy] exposure" in result.stderr


# ── no source: unknown stays a warning, and the record says why ──────────────────────


@pytest.mark.parametrize("store", ["oxigraph", "embedded"])
def test_with_no_exposure_source_a_block_rule_warns_and_the_record_says_why(env, tmp_path, widgets, oxigraph_server,
                                                                            store):
    data = catalogue(tmp_path, 'aegis:repo_gadgets aegis:exposure "public" .\n')
    endpoint = oxigraph_server(data) if store == "oxigraph" else f"file:{data}"
    project(configure(widgets, endpoint, dialect="sparql11" if store == "oxigraph" else None), env)
    result = edit(env, widgets)
    assert not result.denied and "exposure of repo `widgets` is unknown" in result.message
    [gov] = env.records("governed")
    assert gov["exposure"] == "unknown" and gov["exposure_source"] == "none" and gov["blocking"] is False
    why = gov["exposure_reason"]
    assert "no aegis:exposure for aegis:repo_widgets" in why and "[yupana.policy] exposure is not set" in why
    assert ("SPARQL 1.1" if store == "oxigraph" else "has no /policy/check") in why
    assert env.records("guard")[-1]["exposure"] == "unknown"
    assert not (env.state / "yupana" / "exposure.json").exists()  # nothing to ask: no lookup was started


# ── malformed exposure data fails the refresh ────────────────────────────────────────


R, E = f"<{AEGIS}repo_widgets>", f"<{AEGIS}exposure>"


@pytest.mark.parametrize("bad,subject,problem", [
    (f'{R} {E} "public" , "internal"', AEGIS + "repo_widgets", "exactly one"),
    (f'{R} {E} "secret"', AEGIS + "repo_widgets", "'secret' is not one of public, internal"),
    (f"{R} {E} <{AEGIS}public>", AEGIS + "repo_widgets", "is not a literal"),
    (f'<{AEGIS}widgets> {E} "public"', AEGIS + "widgets", "not a repository IRI"),
])
def test_malformed_exposure_fails_the_refresh_naming_subject_and_property(env, tmp_path, widgets, oxigraph_server,
                                                                          bad, subject, problem):
    from servers.oxigraph import update_url

    url = oxigraph_server(catalogue(tmp_path, 'aegis:repo_widgets aegis:exposure "public" .\n'), fresh=True)
    project(configure(widgets, url), env)
    before = env.cache_path.read_bytes()
    update = f"DELETE WHERE {{ ?s {E} ?o }} ; INSERT DATA {{ {bad} }}"
    urllib.request.urlopen(urllib.request.Request(update_url(url), data=urllib.parse.urlencode(
        {"update": update}).encode(), method="POST"), timeout=10).read()
    done = run_yupana(["project"], env, cwd=widgets.root, timeout=300)
    err = done.stderr.decode()
    assert done.returncode == 1, err
    assert subject in err and "aegis:exposure" in err and problem in err, err
    assert "prior cache kept" in err
    assert env.cache_path.read_bytes() == before  # the last good catalogue keeps serving
    assert edit(env, widgets).denied  # still public, from the prior cache


# ── project --dump and status say whether the block tier can block ───────────────────


def test_dump_and_status_say_the_block_tier_cannot_block_without_an_exposure_source(env, tmp_path, widgets,
                                                                                     oxigraph_server):
    project(configure(widgets, oxigraph_server(catalogue(tmp_path))), env)
    dump = run_yupana(["project", "--dump"], env, cwd=widgets.root)
    text = dump.stdout.decode()
    assert dump.returncode == 0, dump.stderr.decode()
    assert "block tier: 1 block-tier text rule CANNOT block: the exposure of repo `widgets` is unknown" in text
    assert "→ block-tier rules only warn" in text and "no aegis:exposure for aegis:repo_widgets" in text
    assert "REPOSITORY EXPOSURE (0)" in text
    as_json = json.loads(run_yupana(["project", "--dump", "--json"], env, cwd=widgets.root).stdout)
    assert as_json["block_tier"]["can_block"] is False and as_json["block_tier"]["exposure"] == "unknown"
    assert as_json["block_tier"]["source"] == "none" and as_json["repo_exposure"] == []
    status = run_yupana(["status", "--offline"], env, cwd=widgets.root)
    assert "block tier  : ⚠ 1 block-tier text rule CANNOT block: the exposure of repo `widgets` is unknown" in \
        status.stdout.decode()
    out = json.loads(run_yupana(["status", "--offline", "--json"], env, cwd=widgets.root).stdout)
    found = out["rule_set"]["block_tier"]
    assert found["can_block"] is False and found["repo"] == "widgets" and found["block_rules"] == 1
    assert "[yupana.policy] exposure" in found["why"]


def test_dump_and_status_say_the_block_tier_can_block_with_the_graph_statement(env, tmp_path, widgets,
                                                                               oxigraph_server):
    data = catalogue(tmp_path, 'aegis:repo_widgets aegis:exposure "public" ; rdfs:comment "open source" .\n')
    project(configure(widgets, oxigraph_server(data)), env)
    text = run_yupana(["project", "--dump"], env, cwd=widgets.root).stdout.decode()
    assert ("block tier: 1 block-tier text rule can block: repo `widgets` is public (stated in the governed graph"
            in text)
    assert "REPOSITORY EXPOSURE (1)" in text and "open source" in text
    status = run_yupana(["status", "--offline"], env, cwd=widgets.root).stdout.decode()
    assert "block tier  : 1 block-tier text rule can block: repo `widgets` is public" in status
    # advise: public, but the mode does not block
    configure(widgets, oxigraph_server(data)).config(
        widgets.root.joinpath(".bobbin", "config.toml").read_text().replace('"enforce"', '"advise"'))
    status = run_yupana(["status", "--offline"], env, cwd=widgets.root).stdout.decode()
    assert "CANNOT block: repo `widgets` is public (stated in the governed graph on aegis:repo_widgets), but mode = " \
           "advise" in status
