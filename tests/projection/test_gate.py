"""The SHACL gate: results as an operator reads them, and shapes that agree with the decoder."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import rdflib
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from yupana.endpoint.base import Term
from yupana.globs import GlobError, compile_glob
from yupana.projection import gate
from yupana.projection.decode_tripwires import parse_backoff
from yupana.projection.errors import ProjectionError
from yupana.projection.subject import Subject

from .helpers import AEGIS, CI, EXPOSURE, MEMORY, PREFIXES, SELECTOR, grounded, rule, structural, wire, write_ttl

XSD_STRING = "http://www.w3.org/2001/XMLSchema#string"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
RDFS = "http://www.w3.org/2000/01/rdf-schema#"


def lit(value: str, datatype: str | None = XSD_STRING) -> Term:
    """A literal as the embedded store and SPARQL JSON give it (plain strings typed xsd:string)."""
    return Term("literal", value, datatype)


def iri(local: str) -> Term:
    return Term("uri", AEGIS + local)


def tripwire_triples(effect: str = "deny", **extra: Term) -> list[tuple[str, str, Term]]:
    s = AEGIS + "wire_auth"
    triples = [
        (s, RDF_TYPE, iri("Policy")),
        (s, RDFS + "label", lit("auth-boundary")),
        (s, AEGIS + "boundary", lit("action")),
        (s, AEGIS + "appliesTo", lit("src/auth/**")),
        (s, AEGIS + "effect", lit(effect)),
    ]
    triples += [(s, AEGIS + p, t) for p, t in extra.items()]
    return triples


def validate_ttl(tmp_path: Path, body: str) -> gate.GateReport:
    graph = rdflib.Graph().parse(write_ttl(tmp_path, body), format="turtle")
    return gate.validate_graph(graph)


def violations(report: gate.GateReport) -> list[tuple[str, str | None, str]]:
    return [(r.focus, r.path, r.constraint) for r in report.results if r.severity == "violation"]


# ── results ──────────────────────────────────────────────────────────────────────────


def test_a_valid_tripwire_conforms_with_no_results():
    report = gate.validate(tripwire_triples())
    assert report.conforms and report.results == []
    assert report.triples == 5


def test_an_effect_the_seam_cannot_enforce_is_reported_with_focus_path_constraint_and_value():
    report = gate.validate(tripwire_triples("require-approval"))
    assert not report.conforms
    [result] = report.results
    assert result.focus == AEGIS + "wire_auth"
    assert result.path == "aegis:effect"
    assert result.constraint == "in"
    assert result.severity == "violation"
    assert result.value == "require-approval" and result.value_kind == "literal"
    assert result.shape == "aegis:TripwireShape"
    assert "deny, warn or throttle" in result.message
    assert "aegis:wire_auth" in report.text and "aegis:effect" in report.text
    assert report.summary().startswith("1 SHACL violation: aegis:wire_auth aegis:effect:")


def test_xsd_string_literals_from_the_store_still_match_value_sets():
    # pyoxigraph and SPARQL JSON type plain literals xsd:string; rdflib would compare them
    # unequal to the shapes' plain "deny" unless the gate normalises them.
    typed = gate.validate(tripwire_triples("deny"))
    plain = gate.validate([(s, p, Term(o.kind, o.value, None, o.lang)) for s, p, o in tripwire_triples("deny")])
    assert typed.conforms and plain.conforms


def test_a_sequence_path_is_rendered_as_a_sparql_path():
    report = gate.validate(tripwire_triples() + [
        (AEGIS + "policy_x", RDF_TYPE, iri("Policy")),
        (AEGIS + "policy_x", RDFS + "label", lit("x")),
        (AEGIS + "policy_x", AEGIS + "boundary", lit("action")),
        (AEGIS + "policy_x", AEGIS + "selector", iri("sel_x")),
        (AEGIS + "policy_x", AEGIS + "predicate", iri("pred_x")),
        (AEGIS + "sel_x", RDF_TYPE, iri("Selector")),
        (AEGIS + "sel_x", AEGIS + "tier", lit("tree-sitter")),
        (AEGIS + "sel_x", AEGIS + "evidenceSource", lit("(line_comment) @c")),
        (AEGIS + "pred_x", RDF_TYPE, iri("Predicate")),
        (AEGIS + "pred_x", AEGIS + "evidenceSource", lit("x")),
        (AEGIS + "pred_x", AEGIS + "matchType", lit("must-match")),
    ])
    assert violations(report) == [(AEGIS + "policy_x", "aegis:selector/aegis:language", "minCount")]


def test_a_text_rule_of_a_subclass_is_checked_through_the_subclass_fact_in_the_data():
    rule_iri, cls = AEGIS + "rule_x", AEGIS + "InternalIdentifierPattern"
    triples = [(rule_iri, RDF_TYPE, Term("uri", cls)), (rule_iri, RDFS + "label", lit("x")),
               (rule_iri, AEGIS + "regex", lit("x")), (rule_iri, AEGIS + "enforcementTier", lit("advise"))]
    with_fact = gate.validate(triples + [(cls, RDFS + "subClassOf", iri("TextRule"))])
    assert violations(with_fact) == [(rule_iri, "aegis:enforcementTier", "in")]
    # Without the fact the rule is not a TextRule (discovery would not find it either): a
    # warning says so, and a warning never refuses.
    without = gate.validate(triples)
    assert without.conforms
    assert [(r.focus, r.severity, r.shape) for r in without.results] == [
        (rule_iri, "warning", "aegis:UnreachableTextRuleShape")]


def test_warnings_and_infos_never_refuse_a_refresh(tmp_path):
    report = validate_ttl(tmp_path, """
aegis:wi_1 a aegis:WorkItem ; rdfs:label "no id" .
aegis:policy_claim a aegis:Policy ; rdfs:label "claim" ; aegis:boundary "action" ; aegis:predicate aegis:pred_c .
aegis:pred_c a aegis:Predicate ; aegis:name "c" ; aegis:evidenceSource "x" ; aegis:matchType "must-ground" .
""")
    assert report.conforms
    assert sorted((r.severity, r.focus.rsplit("/", 1)[1]) for r in report.results) == [
        ("info", "policy_claim"), ("warning", "wi_1")]


def test_a_shared_selector_with_neither_paths_nor_an_allowlist_is_named(tmp_path):
    """A selector may carry paths or a content allowlist (issue 25 §5); one with neither is refused,
    named on the selector itself (the decoder names it too)."""
    body = rule("; aegis:exemptionSelector aegis:sel_empty") + """
aegis:sel_empty a aegis:Selector ; aegis:name "empty" ; aegis:evidenceSource "nothing yet" .
"""
    report = validate_ttl(tmp_path, body)
    assert not report.conforms
    assert {subject for subject, _, _ in violations(report)} == {AEGIS + "sel_empty"}


def test_a_nested_selector_link_is_a_warning_not_an_exemption(tmp_path):
    body = rule("; aegis:exemptionSelector aegis:sel_fixtures") + SELECTOR.replace(
        '"^src/guard/patterns\\\\.rs$" .', '"^src/guard/patterns\\\\.rs$" ; aegis:exemptionSelector aegis:sel_other .')
    report = validate_ttl(tmp_path, body)
    assert report.conforms
    assert [(r.severity, r.path) for r in report.results] == [("warning", "aegis:exemptionSelector")]


def test_disk_observations_carry_no_argv_paths_or_devices(tmp_path):
    report = validate_ttl(tmp_path, """
aegis:diskobs_1 a aegis:CommandDiskImpactObservation ; aegis:commandSignature "cargo:build|repo:git|cwd:repo-root" ;
    aegis:filesystemIdentity "mount:5d41402abc4b" ; aegis:deltaBytes -734003200 ; aegis:observedAt 1780000000 .
aegis:diskobs_2 a aegis:CommandDiskImpactObservation ; aegis:commandSignature "cargo build --release /srv/x" ;
    aegis:filesystemIdentity "/dev/nvme0n1p2" ; aegis:deltaBytes "12" ; aegis:observedAt 1780000001 ;
    aegis:argv "cargo build --release" .
""")
    assert sorted((r.focus.rsplit("/", 1)[1], r.path, r.constraint) for r in report.results) == [
        ("diskobs_2", "aegis:argv", "closed"),
        ("diskobs_2", "aegis:commandSignature", "pattern"),
        ("diskobs_2", "aegis:deltaBytes", "datatype"),
        ("diskobs_2", "aegis:filesystemIdentity", "pattern"),
    ]


def test_results_come_in_a_stable_order():
    triples = tripwire_triples("record") + [(AEGIS + "wire_auth", AEGIS + "appliesTo", lit("a**"))]
    first = gate.validate(triples).results
    assert gate.validate(list(reversed(triples))).results == first
    assert [r.path for r in first] == ["aegis:appliesTo", "aegis:effect"]


def test_a_missing_or_broken_shapes_directory_is_a_gate_error_not_a_verdict(tmp_path):
    with pytest.raises(gate.GateError, match="no shapes directory"):
        gate.validate(tripwire_triples(), str(tmp_path / "absent"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(gate.GateError, match=r"holds no \.ttl"):
        gate.validate(tripwire_triples(), str(tmp_path / "empty"))
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "x.ttl").write_text("@prefix sh: <http://www.w3.org/ns/shacl#> .\nsh:x sh:y \"unterminated .\n")
    with pytest.raises(gate.GateError, match=r"x\.ttl does not parse"):
        gate.validate(tripwire_triples(), str(broken))


def test_a_shape_the_validator_cannot_run_is_a_gate_error(tmp_path):
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "x.ttl").write_text(PREFIXES + """@prefix sh: <http://www.w3.org/ns/shacl#> .
aegis:BadShape a sh:NodeShape ; sh:target [ a sh:SPARQLTarget ; sh:select "SELECT ?this WHERE { ?this" ] ;
    sh:property [ sh:path aegis:x ; sh:minCount 1 ] .
""")
    with pytest.raises(gate.GateError, match="validator failed"):
        gate.validate(tripwire_triples(), str(bad))


# ── the shapes agree with the strict decoder ─────────────────────────────────────────

BASE = (structural() + wire() + MEMORY + rule("; aegis:exemptionSelector aegis:sel_fixtures") + SELECTOR + grounded()
        + CI + EXPOSURE)

# (description, old, new, where the decoder and the gate both point: subject, property)
MUTATIONS = [
    ("tripwire effect", 'aegis:effect "deny" ;\n    rdfs:comment', 'aegis:effect "record" ;\n    rdfs:comment', "wire_auth", "aegis:effect"),
    ("throttle without back-off", 'aegis:effect "deny" ;\n    rdfs:comment', 'aegis:effect "throttle" ;\n    rdfs:comment',
     "wire_auth", "aegis:backoffFormula"),
    ("back-off D of zero", 'aegis:effect "deny" ;\n    rdfs:comment',
     'aegis:effect "throttle" ; aegis:backoffFormula "exp(min(overage / 0, 2))" ;\n    rdfs:comment', "wire_auth", "aegis:backoffFormula"),
    ("back-off prose", 'aegis:effect "deny" ;\n    rdfs:comment',
     'aegis:effect "throttle" ; aegis:backoffFormula "five minutes" ;\n    rdfs:comment', "wire_auth", "aegis:backoffFormula"),
    ("two wire labels", 'rdfs:label "auth-boundary" ;', 'rdfs:label "auth-boundary" , "auth" ;', "wire_auth", "rdfs:label"),
    ("malformed glob", '"src/login.rs"', '"src/***"', "wire_auth", "aegis:appliesTo"),
    ("grounded structural match type", 'aegis:matchType "must-not-match" .\naegis:policy_ticket',
     'aegis:matchType "must-ground" .\naegis:policy_ticket', "pred_ticket", "aegis:matchType"),
    ("structural policy without label", 'rdfs:label "no-ticket" ;', "", "policy_ticket", "rdfs:label"),
    ("selector without language", 'aegis:language "rust" ;', "", "sel_comments", "aegis:language"),
    ("negative latency budget", "aegis:predicate aegis:pred_ticket  .", "aegis:predicate aegis:pred_ticket ; aegis:latencyBudgetMs -5 .",
     "policy_ticket", "aegis:latencyBudgetMs"),
    ("blank gate", 'aegis:matchType "must-not-match" .\naegis:policy_ticket',
     'aegis:matchType "must-not-match" ; aegis:gate " " .\naegis:policy_ticket', "pred_ticket", "aegis:gate"),
    ("memory match type", 'aegis:matchType "must-not-match" .\naegis:op_floor', 'aegis:matchType "must-match" .\naegis:op_floor',
     "pred_heavy", "aegis:matchType"),
    ("memory threshold zero", "aegis:threshold 8.0", "aegis:threshold 0.0", "op_floor", "aegis:threshold"),
    ("memory effect throttle", 'aegis:op_floor ;\n    aegis:effect "deny"', 'aegis:op_floor ;\n    aegis:effect "throttle"',
     "policy_memory", "aegis:effect"),
    ("memory selector tier", 'aegis:tier "live"', 'aegis:tier "lsp"', "sel_shell", "aegis:tier"),
    ("text rule tier", 'aegis:enforcementTier "block"', 'aegis:enforcementTier "advise"', "rule_no_hostnames", "aegis:enforcementTier"),
    ("two regexes", 'aegis:enforcementTier "block"', 'aegis:enforcementTier "block" ; aegis:regex "other"',
     "rule_no_hostnames", "aegis:regex"),
    ("blank local exemption", "aegis:exemptionSelector aegis:sel_fixtures", 'aegis:exemptionSelector aegis:sel_fixtures ; aegis:exemptPathRegex " "',
     "rule_no_hostnames", "aegis:exemptPathRegex"),
    ("blank rationale", "aegis:exemptionSelector aegis:sel_fixtures", 'aegis:exemptionSelector aegis:sel_fixtures ; rdfs:comment "  "',
     "rule_no_hostnames", "rdfs:comment"),
    ("selector without regex", 'aegis:exemptPathRegex "^tests/fixtures/" , "^src/guard/patterns\\\\.rs$" .', ".",
     "sel_fixtures", "aegis:exemptPathRegex"),
    ("link to a literal", "aegis:exemptionSelector aegis:sel_fixtures", 'aegis:exemptionSelector "sel_fixtures"',
     "rule_no_hostnames", "aegis:exemptionSelector"),
    ("link to a predicate", "aegis:exemptionSelector aegis:sel_fixtures", "aegis:exemptionSelector aegis:pred_ticket",
     "rule_no_hostnames", "aegis:exemptionSelector"),
    ("blank selector name", 'aegis:name "guard-fixtures"', 'aegis:name " "', "sel_fixtures", "aegis:name"),
    ("grounded lexical match type", 'aegis:matchType "must-not-ground"', 'aegis:matchType "must-match"',
     "pred_grounded", "aegis:matchType"),
    ("grounded tier", 'aegis:matchType "must-not-ground"', 'aegis:matchType "must-not-ground" ; aegis:enforcementTier "advise"',
     "pred_grounded", "aegis:enforcementTier"),
    ("grounded without query", 'aegis:groundingQuery "SELECT ?id WHERE { ?w a aegis:WorkItem ; aegis:identifier ?id }" ;', "",
     "pred_grounded", "aegis:groundingQuery"),
    ("coverage marker", 'aegis:coverage "complete"', 'aegis:coverage "mostly"', "cimap_main", "aegis:coverage"),
    ("blank job label", 'rdfs:label "Lint"', 'rdfs:label "  "', "cijob_lint", "rdfs:label"),
    ("command without scope", 'aegis:appliesTo "**/*.py" .', ".", "cmd_ruff", "aegis:appliesTo"),
    ("unclosed class in a scope", '"**/*.py"', '"**/[abc.py"', "cmd_ruff", "aegis:appliesTo"),
    ("exposure word", 'aegis:exposure "public"', 'aegis:exposure "secret"', "repo_widgets", "aegis:exposure"),
    ("two exposures", 'aegis:exposure "internal"', 'aegis:exposure "internal" , "public"', "repo_infra",
     "aegis:exposure"),
    ("exposure an IRI", 'aegis:exposure "internal"', "aegis:exposure aegis:internal", "repo_infra", "aegis:exposure"),
    ("blank exposure comment", 'rdfs:comment "open source"', 'rdfs:comment "  "', "repo_widgets", "rdfs:comment"),
]


def test_the_base_catalogue_passes_both(projected, tmp_path):
    projection = projected(BASE)
    assert gate.validate(projection.triples).conforms
    assert violations(validate_ttl(tmp_path, BASE)) == []


@pytest.mark.parametrize("what,old,new,subject,prop", MUTATIONS, ids=[m[0] for m in MUTATIONS])
def test_what_the_decoder_refuses_the_shapes_refuse_at_the_same_place(projected, tmp_path, what, old, new, subject, prop):
    assert old in BASE, what
    body = BASE.replace(old, new, 1)
    with pytest.raises(ProjectionError) as err:
        projected(body)
    assert (err.value.subject, err.value.property) == (AEGIS + subject, prop), err.value
    found = violations(validate_ttl(tmp_path, body))
    assert any((focus == AEGIS + subject and (path or "").startswith(prop)) or (path or "").endswith(prop)
               for focus, path, _ in found), found


def as_terms(graph: rdflib.Graph) -> list[tuple[str, str, Term]]:
    """The triples of an rdflib graph as the store reads them (plain literals typed xsd:string)."""
    out = []
    for s, p, o in graph:
        if isinstance(o, rdflib.Literal):
            term = Term("literal", str(o), None if o.language else str(o.datatype or XSD_STRING), o.language)
        else:
            term = Term("bnode" if isinstance(o, rdflib.BNode) else "uri", str(o))
        out.append((f"_:{s}" if isinstance(s, rdflib.BNode) else str(s), str(p), term))
    return out


EXTRA = [  # warnings and infos: an unreachable text rule, a nested selector link, an unprojected policy
    'aegis:stray a aegis:Thing ; aegis:regex "x" ; aegis:enforcementTier "warn" .',
    "aegis:sel_fixtures aegis:exemptionSelector aegis:sel_fixtures .",
    'aegis:policy_x a aegis:Policy ; rdfs:label "x" ; aegis:boundary "action" ; aegis:predicate aegis:pred_ticket .',
]


@pytest.mark.parametrize("body", [BASE, BASE + "\n".join(EXTRA)] + [BASE.replace(m[1], m[2], 1) for m in MUTATIONS],
                         ids=["base", "warnings"] + [m[0] for m in MUTATIONS])
def test_targets_the_embedded_store_answers_are_the_ones_pyshacl_finds(tmp_path, body):
    # The refresh's gate answers the shapes' SPARQL targets with pyoxigraph (gate_targets);
    # ``shapes validate`` lets pySHACL run them: the same data gives the same results.
    graph = rdflib.Graph().parse(write_ttl(tmp_path, body), format="turtle")
    own = gate.validate_graph(graph).results
    answered = gate.validate(as_terms(graph)).results
    assert answered == own
    assert body is BASE or own  # every mutated catalogue has results to compare


# Values a decoder compiles (RE2, the glob dialect), which SHACL cannot: the gate runs the
# decoder's own compile step on them (projection/gate_compiles.py, the shapes' yupana:compiles).
COMPILE_MUTATIONS = [
    ("text rule look-behind", '"\\\\b[a-z0-9-]+\\\\.corp\\\\.example\\\\b"', '"(?<=x)a"', "rule_no_hostnames", "aegis:regex", "RE2"),
    ("local exemption unbalanced", 'aegis:enforcementTier "block"', 'aegis:enforcementTier "block" ; aegis:exemptPathRegex "("',
     "rule_no_hostnames", "aegis:exemptPathRegex", "RE2"),
    ("shared exemption backreference", '"^tests/fixtures/" ,', '"^(a)\\\\1" ,', "sel_fixtures", "aegis:exemptPathRegex", "RE2"),
    ("structural pattern look-ahead", '"\\\\b[A-Z]+-[0-9]+\\\\b"', '"x(?=y)"', "pred_ticket", "aegis:evidenceSource", "RE2"),
    ("structural gate unbalanced", 'aegis:matchType "must-not-match" .\naegis:policy_ticket',
     'aegis:matchType "must-not-match" ; aegis:gate "a(b" .\naegis:policy_ticket', "pred_ticket", "aegis:gate", "RE2"),
    ("memory command regex", '"\\\\bcargo\\\\s+(build|test)\\\\b"', '"cargo (?<!x)build"', "pred_heavy", "aegis:evidenceSource", "RE2"),
    ("tripwire reversed range", '"src/login.rs"', '"src/[z-a].rs"', "wire_auth", "aegis:appliesTo", "Glob"),
    ("structural reversed range", "aegis:predicate aegis:pred_ticket  .",
     'aegis:predicate aegis:pred_ticket ; aegis:appliesTo "src/[9-0]/*.rs" .', "policy_ticket", "aegis:appliesTo", "Glob"),
    ("CI scope reversed range", '"**/*.py"', '"**/[z-a].py"', "cmd_ruff", "aegis:appliesTo", "Glob"),
]


@pytest.mark.parametrize("what,old,new,subject,prop,step", COMPILE_MUTATIONS, ids=[m[0] for m in COMPILE_MUTATIONS])
def test_what_the_decoder_cannot_compile_the_gate_refuses_with_the_decoders_reason(projected, tmp_path, what, old, new,
                                                                                    subject, prop, step):
    assert old in BASE, what
    body = BASE.replace(old, new, 1)
    with pytest.raises(ProjectionError) as err:
        projected(body)
    assert (err.value.subject, err.value.property) == (AEGIS + subject, prop), err.value
    found = [r for r in validate_ttl(tmp_path, body).results if r.severity == "violation"]
    assert [(r.focus, r.path, r.constraint) for r in found] == [(AEGIS + subject, prop, f"yupana:CompilesAs{step}")], found
    reason = found[0].message.split(" — ")[0]
    assert reason in err.value.message and ("RE2 refuses" if step == "RE2" else "invalid glob") in reason
    assert found[0].value_kind == "literal" and f'"{found[0].value}"' in new.replace("\\\\", "\\")  # Turtle's \\ unescaped


def test_a_glob_the_shapes_pattern_refuses_is_reported_once(tmp_path):
    """``src/***`` breaks the glob grammar (SHACL's pattern) and the compiler: one finding, SHACL's."""
    found = violations(validate_ttl(tmp_path, BASE.replace('"src/login.rs"', '"src/***"', 1)))
    assert found == [(AEGIS + "wire_auth", "aegis:appliesTo", "pattern")]


def test_values_no_decoder_compiles_are_not_compiled(tmp_path):
    """A regex-looking value where no plane reads one (a grounded predicate's evidence, a
    transition policy's glob) is not the compile steps' business: the refresh does not refuse it."""
    body = BASE + """
aegis:policy_later a aegis:Policy ; rdfs:label "later" ; aegis:boundary "transition" ; aegis:appliesTo "[z-a]" .
""" + grounded().replace('"graph:work-item-id-set"', '"(?<=x)"').replace("pred_grounded", "pred_other").replace(
        "pred_citation", "pred_cite2")
    assert not [r for r in validate_ttl(tmp_path, body).results if r.constraint.startswith("yupana:")]


def test_a_compile_mark_the_gate_cannot_run_is_a_gate_error(tmp_path):
    shapes = tmp_path / "shapes"
    shapes.mkdir()
    (shapes / "x.ttl").write_text(PREFIXES + """@prefix sh: <http://www.w3.org/ns/shacl#> .
@prefix yupana: <urn:yupana:> .
aegis:XShape a sh:NodeShape ; sh:targetClass aegis:Policy ;
    sh:property [ sh:path aegis:appliesTo ; yupana:compiles yupana:CompilesAsPCRE ] .
""")
    with pytest.raises(gate.GateError, match="unknown compile step"):
        gate.validate(tripwire_triples(), str(shapes))


# ── patterns mirrored from code ──────────────────────────────────────────────────────


def _shape_pattern(shape: str, path: str) -> str:
    shapes = gate.load_shapes()
    sh = rdflib.Namespace(gate.SH)
    node = rdflib.URIRef(AEGIS + shape)
    for prop in shapes.objects(node, sh.property):
        pattern = shapes.value(prop, sh.pattern)
        if shapes.value(prop, sh.path) == rdflib.URIRef(AEGIS + path) and pattern and len(str(pattern)) > 3:
            return str(pattern)
    raise AssertionError(f"no pattern for {shape} {path}")


GLOB_PATTERN = re.compile(_shape_pattern("GovernedPolicyShape", "appliesTo"))


def _compiles(glob: str) -> bool:
    try:
        compile_glob(glob)
    except GlobError as exc:
        # A reversed range ("[z-a]") is beyond a regex: it is the decoder's check alone.
        assume("reversed" not in str(exc))
        return False
    return True


@settings(max_examples=600, deadline=None)
@given(st.text(alphabet="ab/*?[]!-", min_size=1, max_size=12))
def test_the_glob_pattern_accepts_exactly_what_the_glob_dialect_compiles(glob):
    assert bool(GLOB_PATTERN.search(glob)) == _compiles(glob), glob


BACKOFF_PATTERN = re.compile(_shape_pattern("TripwireShape", "backoffFormula"))


def _parses(formula: str) -> bool:
    try:
        parse_backoff(Subject(AEGIS + "w"), formula)
    except ProjectionError:
        return False
    return True


_numbers = st.sampled_from(["0", "00", "1", "2.", ".5", "0.0", "0.25", "+3", "-1", "-0.5", "10", "1e3", "", " 7 "])


@settings(max_examples=600, deadline=None)
@given(st.one_of(
    _numbers,
    st.builds(lambda d, c, s1, s2: f"exp(min({s1}overage /{s2}{d},{s1}{c}))", _numbers, _numbers,
              st.sampled_from(["", " ", "\t"]), st.sampled_from(["", " "])),
    st.sampled_from(["exp (min(overage / 2, 3))", "exp(max(overage / 2, 3))", "300s", "exp(min(overage/2,3))x"]),
))
def test_the_backoff_pattern_accepts_exactly_what_the_decoder_parses(formula):
    assert bool(BACKOFF_PATTERN.search(formula)) == _parses(formula), formula


def test_an_exposure_stated_off_a_repository_iri_is_refused_by_both(projected, tmp_path):
    body = BASE.replace("aegis:repo_widgets aegis:exposure", "aegis:widgets aegis:exposure", 1)
    with pytest.raises(ProjectionError) as err:
        projected(body)
    assert (err.value.subject, err.value.property) == (AEGIS + "widgets", "aegis:exposure")
    assert (AEGIS + "widgets", None, "pattern") in violations(validate_ttl(tmp_path, body))
