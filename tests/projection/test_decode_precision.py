"""Text-rule precision properties (issue 25 §5): decoded strictly, gated by the shapes, optional."""

from __future__ import annotations

import pytest

from yupana.projection.errors import ProjectionError

from .helpers import AEGIS, PREFIXES, rule
from .test_gate import validate_ttl, violations

PRECISE = ('; aegis:minEntropy "3.5"^^xsd:decimal ; aegis:requiredKeyword "corp" , "HOST" ; '
           'aegis:allowMatchRegex "^example" ; aegis:allowStopword "Dummy"')


def test_a_rule_without_precision_properties_decodes_to_exactly_its_old_entry(projected):
    entry = projected(rule()).cache["text_rules"][0]
    assert not {"min_entropy", "secret_group", "keywords", "allow_match_regex", "stopwords"} & set(entry)


def test_precision_properties_are_decoded(projected):
    entry = projected(rule(PRECISE)).cache["text_rules"][0]
    assert entry["min_entropy"] == 3.5 and entry["keywords"] == ["HOST", "corp"]
    assert entry["allow_match_regexes"] == ["^example"] and entry["allow_match_regex"] == "^example"
    assert entry["allow_stopwords"] == ["Dummy"] and entry["stopwords"] == ["dummy"]


def test_a_shared_selector_allowlist_joins_the_rules_own(projected):
    body = rule('; aegis:allowMatchRegex "^x" ; aegis:allowStopword "own" ; aegis:exemptionSelector aegis:sel_words') + """
aegis:sel_words a aegis:Selector ; aegis:name "placeholders" ; aegis:evidenceSource "placeholder secrets" ;
    aegis:allowMatchRegex "X{8,}" ; aegis:allowStopword "EXAMPLE" .
"""
    cache = projected(body).cache
    entry = cache["text_rules"][0]
    assert entry["allow_match_regex"] == "(?:^x)|(?:X{8,})" and entry["stopwords"] == ["example", "own"]
    assert entry["exempt_path_regex"] is None  # a selector without paths exempts no path
    assert cache["exemption_selectors"][0]["stopwords"] == ["EXAMPLE"]


def test_the_dump_table_shows_a_rules_own_precision_and_a_selectors_shared_allowlist(projected, monkeypatch):
    from yupana.projection import dump

    monkeypatch.setenv("COLUMNS", "400")
    body = rule('; aegis:minEntropy "3.5"^^xsd:decimal ; aegis:requiredKeyword "corp" ; aegis:allowStopword "own" ; '
                'aegis:exemptionSelector aegis:sel_words') + """
aegis:sel_words a aegis:Selector ; aegis:name "placeholders" ; aegis:evidenceSource "placeholder secrets" ;
    aegis:allowMatchRegex "X{8,}" ; aegis:allowStopword "EXAMPLE" .
"""
    freshness = {"state": "fresh", "age_secs": 1, "endpoint": "file:x.ttl", "ttl_secs": 3600}
    text = dump.render(projected(body).cache, fmt="table", freshness=freshness)
    rule_line = next(line for line in text.splitlines() if "@placeholders" in line)
    assert "entropy>=3.5; keyword: corp; allow: 'own'" in rule_line
    selector_line = next(line for line in text.splitlines() if line.strip().startswith("placeholders"))
    assert "/X{8,}/, 'EXAMPLE'" in selector_line


@pytest.mark.parametrize("extra, prop, says", [
    ('; aegis:minEntropy "lots"', "minEntropy", "bits per character"),
    ('; aegis:minEntropy "9"', "minEntropy", "between 0 and 8"),
    ('; aegis:minEntropy "1" , "2"', "minEntropy", "exactly one"),
    ('; aegis:secretGroup "key"', "secretGroup", "does not have"),
    ('; aegis:allowMatchRegex "(?<=a)b"', "allowMatchRegex", "RE2 refuses"),
    ('; aegis:allowStopword " "', "allowStopword", "blank"),
])
def test_a_malformed_precision_property_fails_the_projection_naming_it(projected, extra, prop, says):
    with pytest.raises(ProjectionError) as caught:
        projected(rule(extra))
    assert caught.value.subject == AEGIS + "rule_no_hostnames" and prop in caught.value.property
    assert says in caught.value.message


def test_a_selector_with_neither_paths_nor_allowlist_fails(projected):
    body = rule("; aegis:exemptionSelector aegis:sel_empty") + """
aegis:sel_empty a aegis:Selector ; aegis:name "empty" ; aegis:evidenceSource "nothing" .
"""
    with pytest.raises(ProjectionError, match="at least one aegis:exemptPathRegex"):
        projected(body)


def test_the_shapes_accept_precision_and_refuse_what_the_decoder_refuses(tmp_path):
    assert validate_ttl(tmp_path, PREFIXES + rule(PRECISE)).conforms
    bad = validate_ttl(tmp_path, PREFIXES + rule('; aegis:minEntropy "lots" ; aegis:allowStopword ""'))
    found = {(path, constraint) for _focus, path, constraint in violations(bad)}
    assert ("aegis:minEntropy", "pattern") in found and ("aegis:allowStopword", "pattern") in found
    empty = validate_ttl(tmp_path, PREFIXES + rule("; aegis:exemptionSelector aegis:sel_empty") + """
aegis:sel_empty a aegis:Selector ; aegis:name "empty" ; aegis:evidenceSource "nothing" .
""")
    assert (AEGIS + "sel_empty", "aegis:exemptPathRegex", "minCount") in violations(empty)
    shared = validate_ttl(tmp_path, PREFIXES + rule("; aegis:exemptionSelector aegis:sel_words") + """
aegis:sel_words a aegis:Selector ; aegis:name "w" ; aegis:evidenceSource "placeholders" ; aegis:allowStopword "x" .
""")
    assert shared.conforms, shared.results
