"""Text rules of every subclass, merged repeats, exemption alternatives and selectors."""

from __future__ import annotations

import pytest
import re2

from yupana.projection.errors import ProjectionError

from .helpers import AEGIS, SELECTOR, TEXT_CLASSES, rule

RULE = AEGIS + "rule_no_hostnames"


def test_subclass_instances_are_discovered_and_decoded(projected):
    entry = projected(rule('; aegis:identifierClass "hostname"')).cache["text_rules"][0]
    assert entry == {
        "iri": RULE, "name": "rule_no_hostnames", "label": "no internal hostnames", "labels": ["no internal hostnames"],
        "pattern": "\\b[a-z0-9-]+\\.corp\\.example\\b", "tier": "block", "class": "hostname",
        "exempt_path_regex": None, "exempt_path_regexes": [], "exemption_selectors": [],
        "rationale": None, "rationales": [],
    }


def test_rules_of_a_deeper_subclass_and_of_the_supertype_are_found(projected):
    body = (rule(cls="aegis:HostnamePattern") + "aegis:HostnamePattern rdfs:subClassOf aegis:InternalIdentifierPattern .\n"
            + 'aegis:rule_plain a aegis:TextRule ; rdfs:label "plain" ; aegis:regex "x" ; aegis:enforcementTier "warn" .')
    names = [r["name"] for r in projected(body).cache["text_rules"]]
    assert names == ["rule_no_hostnames", "rule_plain"]


def test_without_the_subclass_fact_as_data_a_subclass_rule_is_not_seen(projected):
    body = rule().replace(TEXT_CLASSES, "")
    assert projected(body).cache["text_rules"] == []


def test_every_distinct_label_rationale_and_class_is_kept(projected):
    body = rule('; rdfs:label "hostnames" ; rdfs:comment "leaks topology" , "seen in incident 7" , "leaks topology" ; '
                'aegis:identifierClass "hostname" , "fqdn"')
    entry = projected(body).cache["text_rules"][0]
    assert entry["labels"] == ["hostnames", "no internal hostnames"]
    assert entry["label"] == "hostnames \u2014 no internal hostnames"
    assert entry["rationales"] == ["leaks topology", "seen in incident 7"]
    assert entry["rationale"] == "leaks topology \u2014 seen in incident 7"
    assert entry["class"] == "fqdn \u2014 hostname"


def test_several_local_exemptions_are_alternatives(projected):
    entry = projected(rule('; aegis:exemptPathRegex "^docs/internal/" , "^tests/fixtures/"')).cache["text_rules"][0]
    combined = re2.compile(entry["exempt_path_regex"])
    assert entry["exempt_path_regexes"] == ["^docs/internal/", "^tests/fixtures/"]
    assert combined.search("tests/fixtures/hosts.txt")  # matches only the second alternative
    assert combined.search("docs/internal/net.md")  # only the first
    assert not combined.search("src/main.rs")


def test_a_single_exemption_is_kept_as_written(projected):
    entry = projected(rule('; aegis:exemptPathRegex "^docs/"')).cache["text_rules"][0]
    assert entry["exempt_path_regex"] == "^docs/"


def test_linked_selector_exemptions_join_the_local_ones(projected):
    body = rule('; aegis:exemptPathRegex "^docs/internal/" ; aegis:exemptionSelector aegis:sel_fixtures') + SELECTOR + """
aegis:rule_other a aegis:TextRule ; rdfs:label "other" ; aegis:regex "y" ; aegis:enforcementTier "warn" ;
    aegis:exemptionSelector aegis:sel_fixtures .
aegis:rule_canary a aegis:TextRule ; rdfs:label "canary" ; aegis:regex "z" ; aegis:enforcementTier "warn" .
"""
    cache = projected(body).cache
    rules = {r["name"]: r for r in cache["text_rules"]}
    hostnames = rules["rule_no_hostnames"]
    assert hostnames["exemption_selectors"] == [AEGIS + "sel_fixtures"]
    assert hostnames["exempt_path_regexes"] == ["^docs/internal/"]
    combined = re2.compile(hostnames["exempt_path_regex"])
    for path in ("docs/internal/a.md", "tests/fixtures/h.txt", "src/guard/patterns.rs"):
        assert combined.search(path), path
    assert not combined.search("src/guard/other.rs")
    assert re2.compile(rules["rule_other"]["exempt_path_regex"]).search("tests/fixtures/x")
    assert rules["rule_canary"]["exempt_path_regex"] is None  # no link, nothing inherited
    assert cache["exemption_selectors"] == [{
        "iri": AEGIS + "sel_fixtures", "name": "guard-fixtures", "evidence_source": "the guard's own fixtures",
        "exempt_path_regexes": ["^src/guard/patterns\\.rs$", "^tests/fixtures/"],
    }]


def test_selector_links_on_a_selector_are_not_followed(projected):
    body = rule("; aegis:exemptionSelector aegis:sel_fixtures") + SELECTOR + """
aegis:sel_fixtures aegis:exemptionSelector aegis:sel_everything .
aegis:sel_everything a aegis:Selector ; aegis:name "all" ; aegis:evidenceSource "all" ; aegis:exemptPathRegex "." .
"""
    entry = projected(body).cache["text_rules"][0]
    assert not re2.compile(entry["exempt_path_regex"]).search("src/main.rs")


@pytest.mark.parametrize("selector,subject,prop,words", [
    ("", "rule_no_hostnames", "aegis:exemptionSelector", "holds nothing"),
    (SELECTOR.replace("a aegis:Selector", "a aegis:Predicate"), "rule_no_hostnames", "aegis:exemptionSelector",
     "not typed aegis:Selector"),
    (SELECTOR.replace('aegis:exemptPathRegex "^tests/fixtures/" , "^src/guard/patterns\\\\.rs$" .', "."),
     "sel_fixtures", "aegis:exemptPathRegex", "missing"),
    (SELECTOR.replace('"^tests/fixtures/"', '""'), "sel_fixtures", "aegis:exemptPathRegex", "blank"),
    (SELECTOR.replace('"^tests/fixtures/"', '"(?!tests)"'), "sel_fixtures", "aegis:exemptPathRegex", "RE2"),
    (SELECTOR.replace('aegis:name "guard-fixtures" ;', ""), "sel_fixtures", "aegis:name", "missing"),
    (SELECTOR.replace('aegis:evidenceSource "the guard\'s own fixtures" ;', ""), "sel_fixtures",
     "aegis:evidenceSource", "missing"),
])
def test_bad_selectors_fail_the_projection(projected, selector, subject, prop, words):
    with pytest.raises(ProjectionError) as err:
        projected(rule("; aegis:exemptionSelector aegis:sel_fixtures") + selector)
    assert (err.value.subject, err.value.property) == (AEGIS + subject, prop)
    assert words in err.value.message
    if subject == "sel_fixtures":
        assert RULE in err.value.message  # names the rule that links it


def test_a_literal_link_fails(projected):
    with pytest.raises(ProjectionError) as err:
        projected(rule('; aegis:exemptionSelector "sel_fixtures"') + SELECTOR)
    assert (err.value.subject, err.value.property) == (RULE, "aegis:exemptionSelector")
    assert "not an IRI" in err.value.message


@pytest.mark.parametrize("body,prop", [
    (rule(tier="advise"), "aegis:enforcementTier"),
    (rule('; aegis:enforcementTier "warn"'), "aegis:enforcementTier"),
    (rule('; aegis:regex "other"'), "aegis:regex"),
    (rule().replace('aegis:regex "\\\\b[a-z0-9-]+\\\\.corp\\\\.example\\\\b" ;', ""), "aegis:regex"),
    (rule().replace('aegis:regex "\\\\b[a-z0-9-]+\\\\.corp\\\\.example\\\\b"', 'aegis:regex "(?<=a)b"'), "aegis:regex"),
    (rule().replace('rdfs:label "no internal hostnames" ;', ""), "rdfs:label"),
    (rule('; aegis:exemptPathRegex "[unclosed"'), "aegis:exemptPathRegex"),
    (rule('; aegis:exemptPathRegex ""'), "aegis:exemptPathRegex"),
])
def test_malformed_text_rules_refuse(projected, body, prop):
    with pytest.raises(ProjectionError) as err:
        projected(body)
    assert (err.value.subject, err.value.property) == (RULE, prop)


def test_a_text_rule_iri_ending_in_a_slash_has_no_name(projected):
    body = TEXT_CLASSES + '<http://example.org/rules/> a aegis:TextRule ; rdfs:label "x" ; aegis:regex "x" ; aegis:enforcementTier "warn" .'
    with pytest.raises(ProjectionError):
        projected(body)


def test_two_text_rules_with_one_name_refuse(projected):
    body = rule() + ('<http://example.org/other/rule_no_hostnames> a aegis:TextRule ; rdfs:label "x" ; '
                     'aegis:regex "x" ; aegis:enforcementTier "warn" .')
    with pytest.raises(ProjectionError) as err:
        projected(body)
    assert "unique" in err.value.message and RULE in str(err.value)
