"""``yupana shapes validate`` through the real CLI: every exit code, both output forms."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import REPO

PREFIXES = """\
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix aegis: <http://aegis.gastown.local/ontology/> .
"""

GOOD = PREFIXES + """
aegis:wire_auth a aegis:Policy ; rdfs:label "auth-boundary" ; aegis:boundary "action" ;
    aegis:appliesTo "src/auth/**" ; aegis:effect "deny" .
"""

BAD = PREFIXES + """
aegis:wire_auth a aegis:Policy ; rdfs:label "auth-boundary" ; aegis:boundary "action" ;
    aegis:appliesTo "src/auth/**" ; aegis:effect "require-approval" .
aegis:wire_hot a aegis:Policy ; rdfs:label "hot" ; aegis:boundary "action" ;
    aegis:appliesTo "src/core.rs" ; aegis:effect "throttle" .
"""

# Conforms to every SHACL constraint; the refresh's decoders refuse three values: RE2 refuses
# a look-behind and an unbalanced "(", the glob dialect a reversed range.
COMPILE_BAD = PREFIXES + """
aegis:InternalIdentifierPattern rdfs:subClassOf aegis:TextRule .
aegis:rule_lookbehind a aegis:InternalIdentifierPattern ; rdfs:label "look-behind" ;
    aegis:regex "(?<=x)a" ; aegis:enforcementTier "block" .
aegis:sel_comments a aegis:Selector ; aegis:name "comments" ; aegis:evidenceSource "(line_comment) @c" ;
    aegis:language "rust" ; aegis:tier "tree-sitter" .
aegis:pred_open a aegis:Predicate ; aegis:name "open" ;
    aegis:evidenceSource "(" ; aegis:matchType "must-not-match" .
aegis:policy_open a aegis:Policy ; rdfs:label "open" ; aegis:boundary "action" ;
    aegis:selector aegis:sel_comments ; aegis:predicate aegis:pred_open .
aegis:wire_reversed a aegis:Policy ; rdfs:label "reversed" ; aegis:boundary "action" ;
    aegis:appliesTo "src/[z-a]/**" ; aegis:effect "deny" .
"""

#: (focus, path, constraint, a words of the compiler's own reason) of each COMPILE_BAD finding
COMPILE_FINDINGS = [
    ("aegis:pred_open", "aegis:evidenceSource", "yupana:CompilesAsRE2", "missing ): ("),
    ("aegis:rule_lookbehind", "aegis:regex", "yupana:CompilesAsRE2", "invalid perl operator: (?<"),
    ("aegis:wire_reversed", "aegis:appliesTo", "yupana:CompilesAsGlob", "range z-a is reversed"),
]

WARNING_ONLY = PREFIXES + """
aegis:wi_1 a aegis:WorkItem ; rdfs:label "an item without its id" .
"""


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_conforming_data_exits_0(yupana, tmp_path):
    run = yupana("shapes", "validate", write(tmp_path, "good.ttl", GOOD))
    assert run.returncode == 0, run.stderr
    assert b"conforms" in run.stdout


def test_violations_exit_1_and_name_focus_path_constraint_and_message(yupana, tmp_path):
    run = yupana("shapes", "validate", write(tmp_path, "bad.ttl", BAD))
    assert run.returncode == 1
    out = run.stdout.decode()
    header, *rows = [line for line in out.splitlines() if line.startswith(("SEVERITY", "violation"))]
    assert header.split()[:5] == ["SEVERITY", "FOCUS", "PATH", "CONSTRAINT", "MESSAGE"]
    effect = next(r for r in rows if "aegis:wire_auth" in r)
    assert effect.split()[:4] == ["violation", "aegis:wire_auth", "aegis:effect", "in"]
    assert "deny, warn or throttle" in effect and '"require-approval"' in effect
    throttle = next(r for r in rows if "aegis:wire_hot" in r)
    assert throttle.split()[:4] == ["violation", "aegis:wire_hot", "aegis:backoffFormula", "minCount"]
    assert "DOES NOT CONFORM: 2 violations" in out


def test_files_are_merged_so_links_across_files_resolve(yupana, tmp_path):
    rule = PREFIXES + """
aegis:InternalIdentifierPattern rdfs:subClassOf aegis:TextRule .
aegis:rule_x a aegis:InternalIdentifierPattern ; rdfs:label "x" ; aegis:regex "x" ;
    aegis:enforcementTier "block" ; aegis:exemptionSelector aegis:sel_shared .
"""
    selector = PREFIXES + """
aegis:sel_shared a aegis:Selector ; aegis:name "shared" ; aegis:evidenceSource "fixtures" ;
    aegis:exemptPathRegex "^tests/fixtures/" .
"""
    alone = yupana("shapes", "validate", write(tmp_path, "rule.ttl", rule))
    assert alone.returncode == 1 and b"aegis:exemptionSelector" in alone.stdout
    both = yupana("shapes", "validate", write(tmp_path, "rule.ttl", rule), write(tmp_path, "sel.ttl", selector))
    assert both.returncode == 0, both.stdout.decode()


def test_a_directory_is_read_whole(yupana, tmp_path):
    catalogue = REPO / "fixtures" / "catalogue"
    run = yupana("--json", "shapes", "validate", str(catalogue), "--allow-warnings")
    assert run.returncode == 0, run.stdout.decode()
    doc = json.loads(run.stdout)
    assert len(doc["files"]) == len(list(catalogue.glob("*.ttl"))) and doc["counts"]["violation"] == 0
    empty = tmp_path / "empty"
    empty.mkdir()
    run = yupana("shapes", "validate", str(empty))
    assert run.returncode == 2 and b"no RDF files" in run.stderr


def test_warnings_fail_unless_allowed(yupana, tmp_path):
    path = write(tmp_path, "items.ttl", WARNING_ONLY)
    strict = yupana("shapes", "validate", path)
    assert strict.returncode == 1
    assert b"warning" in strict.stdout and b"aegis:identifier" in strict.stdout
    allowed = yupana("shapes", "validate", path, "--allow-warnings")
    assert allowed.returncode == 0
    assert b"warning" in allowed.stdout  # still reported
    violations = yupana("shapes", "validate", write(tmp_path, "bad.ttl", BAD), "--allow-warnings")
    assert violations.returncode == 1


def test_what_the_refresh_cannot_compile_fails_validation_with_the_compilers_reason(yupana, tmp_path):
    """A regex RE2 refuses and a glob that does not compile pass every SHACL constraint, and every
    host's refresh would refuse them: the store's CI says so first, as violations (exit 1, even
    with --allow-warnings)."""
    path = write(tmp_path, "compile.ttl", COMPILE_BAD)
    run = yupana("shapes", "validate", path, "--allow-warnings")
    assert run.returncode == 1, run.stdout.decode()
    out = run.stdout.decode()
    rows = [line.split(None, 4) for line in out.splitlines() if line.startswith("violation")]
    assert [tuple(r[1:4]) for r in rows] == [f[:3] for f in COMPILE_FINDINGS]
    for row, (*_, reason) in zip(rows, COMPILE_FINDINGS):
        assert reason in row[4] and "a refresh refuses the projection" in row[4]
    assert "DOES NOT CONFORM: 3 violations, 0 warnings" in out
    doc = json.loads(yupana("shapes", "validate", path, "--json").stdout)
    assert doc["exit_code"] == 1 and doc["conforms"] is False and doc["counts"]["violation"] == 3
    assert [(compact(r["focus"]), r["path"], r["constraint"], r["value"], r["value_kind"]) for r in doc["results"]] == [
        (*f[:3], value, "literal") for f, value in zip(COMPILE_FINDINGS, ["(", "(?<=x)a", "src/[z-a]/**"])]
    assert [r["shape"] for r in doc["results"]] == ["aegis:StructuralPolicyShape", "aegis:GovernedTextRuleShape",
                                                    "aegis:TripwireShape"]
    fixed = COMPILE_BAD.replace('"(?<=x)a"', '"xa"').replace('"("', '"[(]"').replace("[z-a]", "[a-z]")
    assert yupana("shapes", "validate", write(tmp_path, "fixed.ttl", fixed)).returncode == 0


def compact(iri: str) -> str:
    return iri.replace("http://aegis.gastown.local/ontology/", "aegis:")


def test_a_missing_file_exits_2_and_names_it(yupana, tmp_path):
    missing = str(tmp_path / "nope.ttl")
    run = yupana("shapes", "validate", write(tmp_path, "good.ttl", GOOD), missing)
    assert run.returncode == 2
    assert missing.encode() in run.stderr and b"no such file" in run.stderr
    assert run.stdout == b""


def test_broken_turtle_exits_2_naming_the_file_and_line(yupana, tmp_path):
    broken = write(tmp_path, "broken.ttl", PREFIXES + '\naegis:x rdfs:label "fine" .\naegis:y rdfs:label "unterminated .\n')
    run = yupana("shapes", "validate", broken)
    assert run.returncode == 2
    assert f"{broken}:5:".encode() in run.stderr, run.stderr
    assert b"not valid turtle" in run.stderr


def test_a_missing_or_broken_shapes_directory_is_bad_input_exit_2(yupana, tmp_path):
    data = write(tmp_path, "good.ttl", GOOD)
    run = yupana("shapes", "validate", data, "--shapes", str(tmp_path / "no-shapes"))
    assert run.returncode == 2 and b"no shapes directory" in run.stderr
    broken = tmp_path / "broken-shapes"
    broken.mkdir()
    (broken / "s.ttl").write_text("@prefix sh: <http://www.w3.org/ns/shacl#> .\nsh:a sh:b sh:c\n")
    run = yupana("shapes", "validate", data, "--shapes", str(broken))
    assert run.returncode == 2 and b"s.ttl does not parse" in run.stderr


def test_a_validator_failure_is_an_internal_error_exit_3(yupana, tmp_path):
    shapes = tmp_path / "shapes"
    shapes.mkdir()
    (shapes / "s.ttl").write_text(PREFIXES + """@prefix sh: <http://www.w3.org/ns/shacl#> .
aegis:BadShape a sh:NodeShape ; sh:target [ a sh:SPARQLTarget ; sh:select "SELECT ?this WHERE { ?this" ] ;
    sh:property [ sh:path aegis:x ; sh:minCount 1 ] .
""")
    run = yupana("shapes", "validate", write(tmp_path, "good.ttl", GOOD), "--shapes", str(shapes))
    assert run.returncode == 3
    assert b"internal error" in run.stderr and b"validator failed" in run.stderr


def test_a_custom_shapes_directory_is_used(yupana, tmp_path):
    shapes = tmp_path / "shapes"
    shapes.mkdir()
    (shapes / "s.ttl").write_text(PREFIXES + """@prefix sh: <http://www.w3.org/ns/shacl#> .
aegis:NeedsCommentShape a sh:NodeShape ; sh:targetClass aegis:Policy ;
    sh:property [ sh:path rdfs:comment ; sh:minCount 1 ; sh:message "every policy explains itself" ] .
""")
    run = yupana("shapes", "validate", write(tmp_path, "good.ttl", GOOD), "--shapes", str(shapes))
    assert run.returncode == 1 and b"every policy explains itself" in run.stdout


def test_json_report_schema(yupana, tmp_path):
    path = write(tmp_path, "bad.ttl", BAD)
    run = yupana("--json", "shapes", "validate", path)
    assert run.returncode == 1
    doc = json.loads(run.stdout)
    assert doc["schema"] == "yupana.shapes.validate/1"
    assert doc["exit_code"] == 1 and doc["conforms"] is False
    assert doc["files"] == [path] and doc["shapes_dir"] == str(REPO / "shapes")
    assert doc["counts"] == {"violation": 2, "warning": 0, "info": 0}
    assert doc["errors"] == [] and doc["triples"] == 10
    first = doc["results"][0]
    assert set(first) == {"severity", "focus", "path", "constraint", "shape", "message", "value", "value_kind"}
    assert (first["focus"], first["path"], first["constraint"], first["value"], first["value_kind"]) == (
        "http://aegis.gastown.local/ontology/wire_auth", "aegis:effect", "in", "require-approval", "literal")
    # the flag after the command works the same, and the output is stable run to run
    again = yupana("shapes", "validate", path, "--json")
    assert json.loads(again.stdout) == doc


def test_json_errors_for_unreadable_input(yupana, tmp_path):
    missing = str(tmp_path / "nope.ttl")
    run = yupana("shapes", "validate", missing, "--json")
    assert run.returncode == 2
    doc = json.loads(run.stdout)
    assert doc["conforms"] is None and doc["error_kind"] == "input"
    assert doc["errors"] == [{"file": missing, "line": None, "message": "no such file"}]


@pytest.mark.parametrize("args", [["shapes"], ["shapes", "validate"], ["shapes", "check", "x.ttl"]])
def test_usage_errors_are_argparse_errors(yupana, args):
    run = yupana(*args)
    assert run.returncode == 2 and b"usage:" in run.stderr
