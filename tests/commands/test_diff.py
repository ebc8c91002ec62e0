"""``yupana diff OLD NEW`` through the real CLI, on the shipped example catalogue (copied and
edited as a catalogue author would), quipu's own policy catalogue, a real Oxigraph, a signed
bundle and a projection cache."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import QUIPU_FIXTURES, REPO, Env, run_yupana

AEGIS = "http://aegis.gastown.local/ontology/"
CATALOGUE = REPO / "fixtures" / "catalogue"

NEW_RULE = '''
aegis:rule_no_staging_urls a aegis:InternalIdentifierPattern ;
    rdfs:label "no staging URLs" ;
    aegis:regex "https://staging\\\\.larkspur\\\\.example" ;
    aegis:enforcementTier "warn" ;
    aegis:identifierClass "hostname" ;
    rdfs:comment "Staging moves; link the service registry." .
'''


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} is not in {path}"
    path.write_text(text.replace(old, new, 1))


def reviewed_change(new: Path) -> None:
    """The change under review: one rule added, one tripwire retired, a tier raised, a tripwire
    lowered and narrowed, and a shared selector widened (which widens every rule linking it)."""
    text_rules = new / "text-rules.ttl"
    edit(text_rules, '"\\\\b(?:FRT|OPS|SEC)-[0-9]{1,6}\\\\b" ;\n    aegis:enforcementTier "warn"',
         '"\\\\b(?:FRT|OPS|SEC|INC)-[0-9]{1,6}\\\\b" ;\n    aegis:enforcementTier "block"')
    edit(text_rules, 'aegis:exemptPathRegex "^infra/inventory/" ,', 'aegis:exemptPathRegex "^infra/inventory/" , "^infra/terraform/" ,')
    text_rules.write_text(text_rules.read_text() + NEW_RULE)
    wires = new / "tripwires.ttl"
    edit(wires, '"crates/gateway/src/auth/**" , "services/identity/**" ;\n    aegis:effect "deny" ;\n'
                '    aegis:constraintClass "hard"',
         '"crates/gateway/src/auth/**" ;\n    aegis:effect "warn" ;\n    aegis:constraintClass "soft"')
    text = wires.read_text()
    start, end = text.index("aegis:wire_production_deploy a"), text.index("aegis:wire_schema_migrations a")
    wires.write_text(text[:start] + text[end:])


@pytest.fixture
def catalogues(tmp_path):
    old, new = tmp_path / "old", tmp_path / "new"
    shutil.copytree(CATALOGUE, old)
    shutil.copytree(CATALOGUE, new)
    reviewed_change(new)
    return old, new


def diff(env: Env, *args: str, cwd: Path | None = None):
    return run_yupana(["diff", *args], env, cwd=cwd or env.base, timeout=120)


def as_json(env: Env, *args: str, cwd: Path | None = None) -> tuple[int, dict]:
    done = diff(env, *args, "--json", cwd=cwd)
    assert done.stdout, done.stderr
    return done.returncode, json.loads(done.stdout)


def by_name(doc: dict) -> dict[str, dict]:
    return {c["name"]: c for c in doc["changes"]}


def test_the_same_catalogue_twice_is_no_change_and_exits_0_even_with_fail_on_change(env, tmp_path):
    shutil.copytree(CATALOGUE, tmp_path / "copy")
    done = diff(env, str(CATALOGUE), str(tmp_path / "copy"), "--fail-on-change")
    assert done.returncode == 0, done.stderr
    assert b"no change: both sources hold the same rules" in done.stdout
    code, doc = as_json(env, str(CATALOGUE), str(tmp_path / "copy"))
    assert code == 0 and doc["identical"] is True and doc["changes"] == []
    assert doc["old"]["digest"] == doc["new"]["digest"] and doc["old"]["kind"] == "files"


def test_a_reviewed_change_is_reported_rule_by_rule_and_field_by_field(env, catalogues):
    old, new = catalogues
    code, doc = as_json(env, str(old), str(new))
    assert code == 0 and doc["identical"] is False
    assert doc["summary"] == {"added": 1, "removed": 1, "changed": 6, "tiers_raised": 1, "tiers_lowered": 1,
                              "exemptions_widened": 3, "exemptions_narrowed": 0}
    changes = by_name(doc)
    added = changes["rule_no_staging_urls"]
    assert added["change"] == "added" and added["kind"] == "text rule" and added["tier"]["new"] == "warn"
    assert added["entry"]["pattern"] == "https://staging\\.larkspur\\.example"
    removed = changes["production-deploy-manifests"]
    assert removed["change"] == "removed" and removed["plane"] == "tripwires" and removed["tier"]["old"] == "block"
    raised = changes["rule_no_tracker_ids"]
    assert raised["tier"] == {"old": "warn", "new": "block", "move": "raised"}
    assert {f["field"]: (f["old"], f["new"]) for f in raised["fields"]}["pattern"] == (
        "\\b(?:FRT|OPS|SEC)-[0-9]{1,6}\\b", "\\b(?:FRT|OPS|SEC|INC)-[0-9]{1,6}\\b")
    lowered = changes["auth-boundary"]
    assert lowered["tier"] == {"old": "block", "new": "warn", "move": "lowered"}
    fields = {f["field"]: f for f in lowered["fields"]}
    assert (fields["effect"]["old"], fields["effect"]["new"]) == ("deny", "warn")
    assert (fields["class"]["old"], fields["class"]["new"]) == ("hard", "soft")
    assert fields["paths"]["removed"] == ["services/identity/**"] and fields["paths"]["added"] == []
    # the selector widened, and with it every rule that links it, though their own triples are unchanged
    selector = changes["infra-inventory"]
    assert selector["fields"][0]["added"] == ["^infra/terraform/"]
    for rule in ("rule_no_internal_hostnames", "rule_no_private_addresses", "rule_no_vault_paths"):
        assert changes[rule]["exemptions"] == {"move": "widened", "added": ["^infra/terraform/"], "removed": []}
        assert changes[rule]["fields"] == []
    assert "rule_no_ops_channels" not in changes  # links another selector: untouched


def test_the_table_names_what_moved_and_fail_on_change_exits_1(env, catalogues):
    old, new = catalogues
    done = diff(env, str(old), str(new), "--fail-on-change")
    assert done.returncode == 1, done.stderr
    out = done.stdout.decode()
    assert "1 added, 1 removed, 6 changed; tiers: 1 raised, 1 lowered; exemptions: 3 widened, 0 narrowed" in out
    for heading in ("ADDED (1)", "REMOVED (1)", "CHANGED (6)"):
        assert heading in out
    assert "tier (raised)" in out and "tier (lowered)" in out and "exemptions (widened)" in out
    assert "+ ^infra/terraform/" in out and "− services/identity/**" in out
    added = out[out.index("ADDED (1)"):out.index("REMOVED (1)")]
    assert "https://staging\\.larkspur\\.example" in added  # what the new rule matches
    removed = out[out.index("REMOVED (1)"):out.index("CHANGED (6)")]
    assert "deploy/prod/**, deploy/shared/secrets.*.yaml" in removed  # what the retired tripwire guarded
    narrow = run_yupana(["diff", str(old), str(new)], {**env, "COLUMNS": "70"}, cwd=env.base, timeout=120)
    assert all(len(line) <= 70 for line in narrow.stdout.decode().splitlines()), narrow.stdout.decode()


def test_markdown_is_a_review_comment_with_escaped_tables(env, catalogues):
    old, new = catalogues
    done = diff(env, str(old), str(new), "--format", "markdown")
    assert done.returncode == 0, done.stderr
    md = done.stdout.decode()
    assert md.startswith("## yupana diff\n")
    assert "**1 added, 1 removed, 6 changed; tiers: 1 raised, 1 lowered; exemptions: 3 widened, 0 narrowed**" in md
    assert "### Added (1)" in md and "### Removed (1)" in md and "### Changed (6)" in md
    # a regex's | would end a table cell: escaped inside the code span
    assert "`\\b(?:FRT\\|OPS\\|SEC\\|INC)-[0-9]{1,6}\\b`" in md
    rows = [line for line in md.splitlines() if line.startswith("| text rule | `rule_no_tracker_ids`")]
    assert len(rows) == 1 and rows[0].count(" | ") + rows[0].count("\\| ") >= 4
    for line in md.splitlines():
        if line.startswith("|"):  # every row has its five (or four) cells: no stray pipe
            assert line.replace("\\|", "").count("|") in (5, 6), line


def test_globs_comma_lists_and_file_locations_are_sources(env, catalogues):
    old, new = catalogues
    code, doc = as_json(env, f"{old}/*.ttl", f"file:{new}")
    assert code == 0 and doc["summary"]["added"] == 1
    assert len(doc["old"]["location"].split(",")) == len(list(old.glob("*.ttl")))
    only_text = f"{old}/00-classes.ttl,{old}/text-rules.ttl"
    code, doc = as_json(env, only_text, f"{new}/00-classes.ttl,{new}/text-rules.ttl")
    assert code == 0 and {c["plane"] for c in doc["changes"]} == {"text_rules", "exemption_selectors"}


@pytest.mark.parametrize("mangle, kind, words", [
    (lambda p: edit(p / "text-rules.ttl", 'aegis:enforcementTier "block" ;\n    aegis:identifierClass "hostname"',
                    'aegis:enforcementTier "maybe" ;\n    aegis:identifierClass "hostname"'),
     None, ["rule_no_internal_hostnames", "enforcementTier"]),
    (lambda p: edit(p / "text-rules.ttl", '"\\\\bACCT-[0-9]{8}\\\\b"', '"\\\\bACCT-([0-9]{8}\\\\b"'),
     None, ["rule_no_customer_account_ids"]),
    (lambda p: (p / "text-rules.ttl").write_text("this is not turtle ."), "input", ["text-rules.ttl"]),
])
def test_a_catalogue_a_refresh_would_refuse_is_unusable_input_naming_subject_and_property(env, catalogues, mangle, kind,
                                                                                          words):
    old, new = catalogues
    mangle(new)
    code, doc = as_json(env, str(old), str(new))
    assert code == 2 and doc["error"]["side"] == "new" and doc["changes"] == []
    if kind:
        assert doc["error"]["kind"] == kind
    for word in words:
        assert word in doc["error"]["message"], doc["error"]
    done = diff(env, str(old), str(new))
    assert done.returncode == 2 and done.stdout == b""
    assert done.stderr.startswith(b"yupana diff: the new source: "), done.stderr


def test_a_missing_source_and_a_directory_without_rdf_are_unusable(env, tmp_path):
    done = diff(env, str(tmp_path / "nowhere"), str(CATALOGUE))
    assert done.returncode == 2 and b"no such file or directory" in done.stderr
    (tmp_path / "empty").mkdir()
    done = diff(env, str(CATALOGUE), str(tmp_path / "empty"))
    assert done.returncode == 2 and b"no RDF files there" in done.stderr
    done = diff(env, f"{tmp_path}/*.nothing", str(CATALOGUE))
    assert done.returncode == 2 and b"matches no file" in done.stderr


def test_a_projection_cache_is_a_source_and_at_cache_is_this_hosts(env, catalogues):
    old, new = catalogues
    root = env.base / "proj"
    (root / ".bobbin").mkdir(parents=True)
    (root / ".bobbin" / "config.toml").write_text(f'[yupana.quipu]\nenabled = true\nendpoint = "file:{old}"\n')
    done = run_yupana(["project"], env, cwd=root)
    assert done.returncode == 0, done.stderr
    code, doc = as_json(env, "@cache", str(new), cwd=root)
    assert code == 0 and doc["old"]["kind"] == "cache" and doc["summary"]["added"] == 1
    assert doc["old"]["written_at"] is not None
    code, doc = as_json(env, str(env.cache_path), "@store", cwd=root)  # the cache file against the live store
    assert code == 0 and doc["identical"] is True and doc["new"]["kind"] == "files"
    broken = env.base / "projection.json"
    cache = json.loads(env.cache_path.read_text())
    cache["text_rules"][0]["tier"] = ["block"]
    broken.write_text(json.dumps(cache))
    code, doc = as_json(env, str(broken), str(new), cwd=root)
    assert code == 2 and doc["error"]["side"] == "old" and "tier" in doc["error"]["message"]


def test_at_cache_without_a_cache_says_to_project_first(env, tmp_path):
    root = tmp_path / "proj"
    (root / ".bobbin").mkdir(parents=True)
    (root / ".bobbin" / "config.toml").write_text(f'[yupana.quipu]\nenabled = true\nendpoint = "file:{CATALOGUE}"\n')
    done = diff(env, "@cache", str(CATALOGUE), cwd=root)
    assert done.returncode == 2 and b"run `yupana project` first" in done.stderr


def test_a_signed_bundle_is_verified_before_it_is_compared(env, catalogues, tmp_path):
    old, new = catalogues
    key = tmp_path / "key.pem"
    made = run_yupana(["bundle", "keygen", "--out", str(key), "--json"], env)
    public = json.loads(made.stdout)["public_key"]
    root = tmp_path / "pub"
    (root / ".bobbin").mkdir(parents=True)
    (root / ".bobbin" / "config.toml").write_text(
        f'[yupana.quipu]\nenabled = true\nendpoint = "file:{new}"\n[yupana.bundle]\nsigning_key_path = "{key}"\n')
    built = run_yupana(["bundle", "build", "--out", str(tmp_path / "rules.bundle")], env, cwd=root)
    assert built.returncode == 0, built.stderr
    code, doc = as_json(env, str(old), str(tmp_path / "rules.bundle"), "--trust", public)
    assert code == 0 and doc["new"]["kind"] == "bundle" and doc["summary"]["tiers_raised"] == 1
    unkeyed = diff(env, str(old), str(tmp_path / "rules.bundle"))
    assert unkeyed.returncode == 2 and b"--trust" in unkeyed.stderr
    other = tmp_path / "other.pem"
    stranger = json.loads(run_yupana(["bundle", "keygen", "--out", str(other), "--json"], env).stdout)["public_key"]
    code, doc = as_json(env, str(old), str(tmp_path / "rules.bundle"), "--trust", stranger)
    assert code == 2 and doc["error"]["kind"] == "unknown-key"
    data = (tmp_path / "rules.bundle").read_bytes()
    (tmp_path / "tampered.bundle").write_bytes(data.replace(b"INC", b"ICN"))
    code, doc = as_json(env, str(old), str(tmp_path / "tampered.bundle"), "--trust", public)
    assert code == 2 and doc["error"]["kind"] == "signature"
    (tmp_path / "future.bundle").write_bytes(b"yupana-bundle/2\n" + data.partition(b"\n")[2])
    code, doc = as_json(env, str(old), str(tmp_path / "future.bundle"), "--trust", public)
    assert code == 2 and doc["error"]["kind"] == "format" and "yupana-bundle/1" in doc["error"]["message"]


def test_an_endpoint_on_a_real_oxigraph_is_a_source(env, catalogues, oxigraph_server):
    old, new = catalogues
    url = oxigraph_server(*sorted(old.glob("*.ttl")))
    code, doc = as_json(env, url, str(new))
    assert code == 0, doc
    assert doc["old"]["kind"] == "endpoint" and doc["old"]["location"] == url
    assert doc["summary"] == {"added": 1, "removed": 1, "changed": 6, "tiers_raised": 1, "tiers_lowered": 1,
                              "exemptions_widened": 3, "exemptions_narrowed": 0}
    code, doc = as_json(env, url, str(old), "--dialect", "sparql11")
    assert code == 0 and doc["identical"] is True
    refused = diff(env, url, str(old), "--dialect", "quipu")  # Oxigraph has no quipu /query: named, with the fix
    assert refused.returncode == 2 and refused.stdout == b"" and b"[yupana.quipu]" not in refused.stderr


@pytest.mark.skipif(not (QUIPU_FIXTURES / "shapes").is_dir(), reason="quipu fixtures absent")
def test_quipus_own_policy_catalogue_an_effect_raised_and_a_policy_retired(env, tmp_path):
    files = [QUIPU_FIXTURES / "shapes" / "policies" / "treesitter.ttl", *sorted((QUIPU_FIXTURES / "ontologies").glob("*.ttl"))]
    new = tmp_path / "new"
    new.mkdir()
    for f in files:
        shutil.copy(f, new / f.name)
    text = (new / "treesitter.ttl").read_text()
    assert 'aegis:constraintClass "soft"' in text
    (new / "treesitter.ttl").write_text(text.replace('aegis:constraintClass "soft"', 'aegis:constraintClass "hard"'))
    code, doc = as_json(env, ",".join(str(f) for f in files), str(new))
    assert code == 0, doc
    changes = by_name(doc)
    assert changes["todo-needs-ticket"]["tier"] == {"old": "warn", "new": "block", "move": "raised"}
    assert {f["field"] for f in changes["todo-needs-ticket"]["fields"]} == {"rule.class"}


def test_json_follows_its_schema_for_a_diff_and_an_error(env, catalogues):
    jsonschema = pytest.importorskip("jsonschema")
    from tests.commands.test_json_schemas import check

    old, new = catalogues
    doc = check("diff", diff(env, str(old), str(new), "--json"))
    assert doc["changes"]
    error = check("diff", diff(env, str(old), str(old / "missing.ttl"), "--json"))
    assert error["error"]["kind"] == "input" and error["exit_code"] == 2
    assert jsonschema  # imported for the skip


def test_an_unquoted_glob_spread_over_the_arguments_is_named_with_the_fix(env, catalogues):
    old, new = catalogues
    done = diff(env, *(str(p) for p in sorted(old.glob("*.ttl"))), str(new))
    assert done.returncode == 2 and done.stdout == b""
    assert b"two sources are compared" in done.stderr and b"quote a glob" in done.stderr


def test_the_configured_credentials_go_to_the_configured_endpoint_only(env, catalogues, guarded_server):
    old, _ = catalogues
    files = sorted(old.glob("*.ttl"))
    configured = guarded_server(*files, bearer="tok-configured-only")
    other = guarded_server(*files)
    root = env.base / "proj"
    (root / ".bobbin").mkdir(parents=True)
    (root / ".bobbin" / "config.toml").write_text(
        f'[yupana.quipu]\nenabled = true\nendpoint = "{configured.url}"\ndialect = "sparql11"\nauth = "bearer"\n')
    run_env = {**env, "YUPANA_SPARQL_SECRET": "tok-configured-only"}
    done = run_yupana(["diff", "@store", other.url, "--json"], run_env, cwd=root, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["identical"] is True
    assert configured.requests and all(r["headers"].get("authorization") == "Bearer tok-configured-only"
                                       for r in configured.requests)
    assert other.requests and not any("authorization" in r["headers"] for r in other.requests)
    assert b"tok-configured-only" not in done.stdout + done.stderr


def test_at_store_reads_a_relative_file_location_from_the_project_root(env, catalogues):
    old, new = catalogues
    root = env.base / "proj"
    shutil.copytree(old, root / "catalogue")
    (root / ".bobbin").mkdir(parents=True)
    (root / ".bobbin" / "config.toml").write_text('[yupana.quipu]\nenabled = true\nendpoint = "file:catalogue"\n')
    code, doc = as_json(env, "@store", str(new), "--root", str(root), cwd=env.base)
    assert code == 0 and doc["old"]["kind"] == "files" and doc["summary"]["added"] == 1
    assert doc["old"]["location"].startswith(f"file:{root / 'catalogue'}")


def projected_cache(env: Env, catalogue: Path) -> dict:
    """The cache `yupana project` writes for ``catalogue``."""
    root = env.base / "projected"
    (root / ".bobbin").mkdir(parents=True, exist_ok=True)
    (root / ".bobbin" / "config.toml").write_text(f'[yupana.quipu]\nenabled = true\nendpoint = "file:{catalogue}"\n')
    done = run_yupana(["project"], env, cwd=root)
    assert done.returncode == 0, done.stderr
    return json.loads(env.cache_path.read_text())


def entry(cache: dict, plane: str, name: str) -> dict:
    return next(e for e in cache[plane] if e.get("name") == name)


def test_caches_compared_exemptions_narrowed_or_both_and_tiers_lowered_by_class_and_effect(env, tmp_path):
    before = projected_cache(env, CATALOGUE)
    after = json.loads(json.dumps(before))
    selector = next(s for s in after["exemption_selectors"] if s["name"] == "guard-fixtures")
    selector["exempt_path_regexes"] = ["^tools/secret-scanner/patterns/", "^tools/secret-scanner/testdata/"]
    entry(after, "text_rules", "rule_no_tracker_ids")["exempt_path_regexes"] = ["^CHANGELOG\\.md$"]
    memory = entry(after, "memory_policies", "cargo-memory-floor")
    memory["class"], memory["effect"] = None, "warn"  # no class: the effect decides, and warn does not block
    entry(after, "grounded_rules", "no-work-item-ids-in-code")["tier"] = "warn"
    (tmp_path / "before.json").write_text(json.dumps(before))
    (tmp_path / "after.json").write_text(json.dumps(after))
    code, doc = as_json(env, str(tmp_path / "before.json"), str(tmp_path / "after.json"))
    assert code == 0 and doc["old"]["kind"] == doc["new"]["kind"] == "cache"
    changes = by_name(doc)
    assert changes["rule_no_tracker_ids"]["exemptions"] == {"move": "narrowed", "added": [],
                                                            "removed": ["^docs/releases/"]}
    both = [c for c in doc["changes"] if c["exemptions"]["move"] == "widened and narrowed"]
    assert len(both) == 7  # every rule linking guard-fixtures
    assert all(c["exemptions"]["added"] == ["^tools/secret-scanner/testdata/"] and
               c["exemptions"]["removed"] == ["^tools/secret-scanner/tests/fixtures/"] for c in both)
    assert changes["cargo-memory-floor"]["tier"] == {"old": "block", "new": "warn", "move": "lowered"}
    assert changes["no-work-item-ids-in-code"]["tier"] == {"old": "block", "new": "warn", "move": "lowered"}
    assert doc["summary"]["tiers_lowered"] == 2 and doc["summary"]["exemptions_narrowed"] == 8
    assert doc["summary"]["exemptions_widened"] == 7


SHORT_COMMENTS = '''@prefix sh:    <http://www.w3.org/ns/shacl#> .
@prefix rdfs:  <http://www.w3.org/2000/01/rdf-schema#> .
@prefix aegis: <http://aegis.gastown.local/ontology/> .
aegis:ShortCommentShape a sh:NodeShape ;
    sh:targetClass aegis:InternalIdentifierPattern ;
    sh:property [ sh:path rdfs:comment ; sh:maxLength 20 ; sh:message "rationale too long for this team" ] .
'''


def test_both_sides_go_through_the_shacl_gate_and_shapes_replaces_its_shapes(env, catalogues, tmp_path):
    old, new = catalogues
    shapes = tmp_path / "shapes"
    shapes.mkdir()
    (shapes / "team.ttl").write_text(SHORT_COMMENTS)
    code, doc = as_json(env, str(old), str(new), "--shapes", str(shapes))
    assert code == 2 and doc["error"] == {"kind": "shapes", "side": "old", "message": doc["error"]["message"]}
    assert "does not conform to the SHACL shapes" in doc["error"]["message"]
    assert "rationale too long for this team" in doc["error"]["message"]
    done = diff(env, str(old), str(new), "--shapes", str(tmp_path / "nowhere"))
    assert done.returncode == 2 and b"--shapes" in done.stderr


def test_a_ci_map_change_names_the_command_and_its_scopes_and_the_coverage(env, tmp_path):
    new = tmp_path / "new"
    shutil.copytree(CATALOGUE, new)
    ci = new / "ci-map.ttl"
    edit(ci, 'aegis:coverage "complete"', 'aegis:coverage "partial"')
    edit(ci, 'aegis:command "go test ./services/..." ;\n    aegis:appliesTo "services/**" , "go.mod" , "go.sum" .',
         'aegis:command "go test -race ./services/..." ;\n    aegis:appliesTo "services/**" , "go.mod" , "go.sum" , '
         '"tools/go/**" .')
    code, doc = as_json(env, str(CATALOGUE), str(new))
    assert code == 0 and doc["summary"]["changed"] == 2
    changes = by_name(doc)
    assert changes["coverage"]["kind"] == "CI map"
    assert changes["coverage"]["fields"] == [{"field": "complete", "old": True, "new": False}]
    fields = {f["field"]: f for f in changes["go-tests"]["fields"]}
    assert fields["commands[cmd_go_test].command"]["new"] == "go test -race ./services/..."
    assert fields["commands[cmd_go_test].scopes"]["added"] == ["tools/go/**"]


def test_a_markdown_summary_too_long_for_a_review_comment_is_cut_between_rows_and_says_so(env, tmp_path):
    from catalogue_kit import write_catalogue

    old = write_catalogue(tmp_path / "old", 1500)
    new = write_catalogue(tmp_path / "new", 1500, tier="warn")
    done = diff(env, str(old), str(new), "--format", "markdown")
    assert done.returncode == 0, done.stderr
    md = done.stdout.decode()
    assert len(md) <= 60_000 < 65_536  # GitHub refuses a longer comment
    assert "**0 added, 0 removed, 1500 changed; tiers: 0 raised, 1500 lowered**" in md
    rows = [line for line in md.splitlines() if line.startswith("| text rule |")]
    assert 100 < len(rows) < 1500 and all(line.endswith(" |") for line in rows)
    assert f"_… and {1500 - len(rows)} more rows, left out to keep this comment postable" in md
    code, doc = as_json(env, str(old), str(new))  # JSON keeps every change
    assert code == 0 and len(doc["changes"]) == 1500
