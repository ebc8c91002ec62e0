"""queries/*.rq and the only way values reach them: safely serialised VALUES blocks."""

from __future__ import annotations

import os

import pyoxigraph
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from yupana.endpoint.base import Deadline, Term
from yupana.projection import queries
from yupana.projection.queries import QueryError, TermError

NASTY_LITERALS = [
    '" } } SELECT * WHERE { ?s ?p ?o } #',
    "\\u0022 } #",
    "\\\\u0022",
    "\\U00000022",
    "ends with a backslash\\",
    "line\nbreak\rcarriage\ttab",
    "nul\x00and\x7fdel\x1bescape",
    "'''triple''' \"\"\"quotes\"\"\"",
    "unicode \u2028 separator \u0085 NEL \uff02 fullwidth quote 🦀 and ñ",
    "> <http://evil/> . }",
    "",
]


def _roundtrip(term_sparql: str) -> list:
    store = pyoxigraph.Store()
    rows = list(store.query(f"SELECT ?x WHERE {{ VALUES ?x {{ {term_sparql} }} }}"))
    return [row["x"] for row in rows]


def test_every_query_file_is_valid_sparql():
    store = pyoxigraph.Store()
    names = sorted(f[:-3] for f in os.listdir(queries.queries_dir()) if f.endswith(".rq"))
    assert len(names) >= 14
    for name in names:
        text = queries.load(name)
        values = {}
        for var in ("s", "t"):
            if "{{VALUES ?" + var + "}}" in text:
                values[var] = ["http://example.org/a"]
        rendered = queries.render(name, values=values, limit=10, offset=0)
        assert "{{" not in rendered
        store.query(rendered)  # raises SyntaxError when the text is not SPARQL


@pytest.mark.parametrize("value", NASTY_LITERALS)
def test_literal_cannot_break_out_and_round_trips(value):
    found = _roundtrip(queries.serialise_literal(value))
    assert len(found) == 1
    assert isinstance(found[0], pyoxigraph.Literal)
    assert found[0].value == value


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",))))
def test_any_text_round_trips_as_one_literal(value):
    found = _roundtrip(queries.serialise_literal(value))
    assert [f.value for f in found] == [value]


def test_u_escapes_after_a_backslash_are_neutralised():
    # A parser that expands \u escapes before parsing must not see one in escaped content.
    text = queries.serialise_literal("\\u0022")
    assert "\\u0022" not in text.replace("\\\\", "")


def test_language_tag_and_datatype():
    assert _roundtrip(queries.serialise_literal("x", lang="en-GB"))[0].language == "en-gb"
    typed = _roundtrip(queries.serialise_literal("5", datatype="http://www.w3.org/2001/XMLSchema#integer"))[0]
    assert typed.datatype.value.endswith("#integer")
    with pytest.raises(TermError):
        queries.serialise_literal("x", lang='en" } #')
    with pytest.raises(TermError):
        queries.serialise_literal("x", datatype="http://x/> . }")


@pytest.mark.parametrize("iri", [
    "http://x/> } ?s ?p ?o . { <http://y/",
    'http://x/"quoted"',
    "http://x/a b",
    "http://x/line\nbreak",
    "http://x/back\\slash",
    "http://x/{brace}",
    "http://x/pipe|caret^`",
    "relative/iri",
    "",
    "http://x/\ud800",
])
def test_unsafe_iris_are_refused(iri):
    with pytest.raises(TermError):
        queries.serialise_iri(iri)


def test_unicode_iri_round_trips():
    iri = "http://aegis.gastown.local/ontology/règle_日本_🦀"
    found = _roundtrip(queries.serialise_iri(iri))
    assert [f.value for f in found] == [iri]


def test_blank_nodes_cannot_be_named():
    with pytest.raises(TermError):
        queries.serialise_term(Term("bnode", "b0"))


def test_values_block_serialises_every_term():
    block = queries.values_block("s", ["http://x/a", Term("literal", 'q"uote'), Term("uri", "http://x/b")])
    assert block == 'VALUES ?s { <http://x/a> "q\\"uote" <http://x/b> }'
    with pytest.raises(QueryError):
        queries.values_block("s }", ["http://x/a"])
    with pytest.raises(TermError):
        queries.values_block("s", ["http://x/a> } #"])


def test_render_checks_its_placeholders():
    with pytest.raises(QueryError):
        queries.render("policies_read")  # no values for ?s
    with pytest.raises(QueryError):
        queries.render("policies_read", values={"s": ["http://x/a"], "nope": ["http://x/b"]})
    with pytest.raises(QueryError):
        queries.render("policies_discover", limit=-1, offset=0)
    with pytest.raises(QueryError):
        queries.render("grounding_set", limit=10)  # OFFSET missing (discovery pages by key now)
    with pytest.raises(QueryError):
        queries.load("no_such_query")


def test_after_is_a_serialised_literal_and_blank_nodes_pass():
    text = queries.render("policies_discover", limit=10, after='http://x/a" ) } #')
    assert "FILTER(!isIRI(?s) || STR(?s) > " + queries.serialise_literal('http://x/a" ) } #') + ")" in text
    assert "OFFSET {" not in queries.load("policies_discover") and text.rstrip().endswith("ORDER BY STR(?s)\nLIMIT 10")


def test_counted_keeps_the_prologue_and_embeds_the_select():
    plain = queries.render("policies_read", values={"s": ["http://x/a"]})
    wrapped = queries.counted(plain)
    assert wrapped.startswith(plain[:plain.index("SELECT")])
    assert wrapped.count("VALUES ?s") == 2 and "COUNT(*) AS ?yupanaRowCount" in wrapped
    import pyoxigraph

    store = pyoxigraph.Store()
    store.add(pyoxigraph.Quad(pyoxigraph.NamedNode("http://x/a"), pyoxigraph.NamedNode(
        "http://www.w3.org/2000/01/rdf-schema#label"), pyoxigraph.Literal("a")))
    rows = list(store.query(wrapped))
    counts = [r["yupanaRowCount"].value for r in rows if r["yupanaRowCount"] is not None]
    assert counts == ["1"] and len(rows) == 2


def test_batched():
    assert [list(b) for b in queries.batched([1, 2, 3, 4, 5], 2)] == [[1, 2], [3, 4], [5]]
    assert list(queries.batched([], 3)) == []


def test_text_rule_discovery_sends_the_subclass_path(store):
    from yupana.projection.refresh import project

    endpoint = store("")
    project(endpoint, {}, Deadline(10), env={})
    assert any("?s a/rdfs:subClassOf* aegis:TextRule" in q for q in endpoint.sent)


# What the digest input of a plain literal ends with and the next comment begins with.
_SPELLED = "\\thttp://www.w3.org/2001/XMLSchema#string@ http://www.w3.org/2000/01/rdf-schema#comment\\t"


def _digests(turtle: str) -> dict[str, tuple[str | None, int]]:
    """The store's digest and blank-node count of each text rule of ``turtle``."""
    store = pyoxigraph.Store()
    store.load(("@prefix aegis: <http://aegis.gastown.local/ontology/> .\n"
                "@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n"
                "@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .\n" + turtle).encode(), format=pyoxigraph.RdfFormat.TURTLE)
    subjects = sorted({q.subject.value for q in store if isinstance(q.subject, pyoxigraph.NamedNode)})
    read = queries.render("text_rules_read", values={"s": subjects})
    out = {}
    for row in store.query(queries.digested(read)):
        digest = row[queries.DIGEST_VAR]
        out[row["s"].value] = (digest.value if digest is not None else None, int(row[queries.BLANKS_VAR].value))
    return out


@pytest.mark.parametrize("one,other", [
    ('rdfs:comment "a b" , "c"', 'rdfs:comment "a" , "b c"'),  # where one value ends and the next begins
    ('rdfs:label "x"@en', 'rdfs:label "x"'),  # the language
    ('aegis:exemptionSelector <http://x/y>', 'aegis:exemptionSelector "http://x/y"'),  # an IRI or a string
    ('rdfs:label "5"^^xsd:integer', 'rdfs:label "5"'),  # the datatype
    ('rdfs:label "a\\tb"', 'rdfs:label "a" ; rdfs:comment "b"'),  # a tab inside a value
    ('rdfs:label "x" ; rdfs:comment "y"', 'rdfs:label "y" ; rdfs:comment "x"'),  # which property holds which value
    # one value spelling out the digest input of two (in either order): the lengths keep them apart
    (f'rdfs:comment "a{_SPELLED}b"', 'rdfs:comment "a" , "b"'),
    (f'rdfs:comment "b{_SPELLED}a"', 'rdfs:comment "a" , "b"'),
])
def test_a_digest_tells_apart_what_a_read_tells_apart(one, other):
    # the spelled-out pair alone on its subject (no other triple between the two comments)
    base = "aegis:r " if _SPELLED in one else "aegis:r a aegis:TextRule ; aegis:regex \"x\" ; "
    first, second = _digests(base + one + " ."), _digests(base + other + " .")
    rule = "http://aegis.gastown.local/ontology/r"
    assert first[rule][0] and second[rule][0] and first[rule][0] != second[rule][0]
    assert _digests(base + one + " .") == first  # and the same triples, the same digest


def test_a_blank_node_object_is_counted_and_its_subject_never_digested_alike():
    found = _digests('aegis:r a aegis:TextRule ; rdfs:comment [ rdfs:label "x" ] .')
    _digest, blanks = found["http://aegis.gastown.local/ontology/r"]
    assert blanks == 1  # the reader then never takes the rule as unchanged (read.py _digest_of)
