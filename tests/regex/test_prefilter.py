"""Required-literal prefilters never hide a match that google-re2 would find.

The property: for every pattern RE2 accepts and every text, ``re2.search(pattern, text)``
matching implies ``may_match(prefilter(pattern), text)``. Patterns come from a grammar of
RE2 syntax (escapes, classes, POSIX classes, Unicode classes, groups, flags, alternation,
quantifiers, anchors, \\Q…\\E); each generated pattern carries a string it should match, so
texts built around that string exercise the matching side, not only the trivial one.
"""

from __future__ import annotations

import os
import random as _random

import pytest
import re2
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from yupana.regex.prefilter import may_match, may_run, prefilter, required_run

# Characters whose case folding differs between RE2 and Python in interesting ways.
TRICKY = "aAbBkKsS\u212a\u017fiI\u0130\u0131\u00e9\u00c9\u00df\u1e9e\u03c3\u03c2\u03a31_-. \n{}"
META = set("\\.+*?()|[]{}^$")


def _quote(c: str) -> str:
    return "\\" + c if c in META else c


def _variant(text: str, rnd: _random.Random) -> str:
    """A string RE2 would consider equal to ``text`` under (?i) (simple case folding)."""
    out = []
    for c in text:
        options = {c, c.lower(), c.upper()}
        if c in "kK":
            options.add("\u212a")
        if c in "sS":
            options.add("\u017f")
        if c in "\u03c3\u03c2\u03a3":
            options |= {"\u03c3", "\u03c2", "\u03a3"}
        options = {o for o in options if len(o) == 1}
        out.append(rnd.choice(sorted(options)))
    return "".join(out)


literal = st.sampled_from(TRICKY).map(lambda c: (_quote(c), c))
escaped = st.sampled_from(list(".-{}*+?()[]|^$\\/#_ ")).map(lambda c: ("\\" + c, c))
hex_escape = st.sampled_from(["A", "k", "\u00e9", "\u212a", "\u017f", "-"]).map(
    lambda c: (f"\\x{{{ord(c):x}}}" if ord(c) > 0xFF or c in "k" else f"\\x{ord(c):02x}", c))
classes = st.sampled_from([
    ("[ab]", "a"), ("[ab]", "b"), ("[^a]", "b"), ("[a-c]", "b"), ("[[:alpha:]]", "k"),
    ("[[:^digit:]]", "x"), ("[\\d_]", "7"), ("[]a]", "]"), ("[a-]", "-"), ("[kK]", "K"),
    ("[\u00e9s]", "\u00e9"), ("[\\pL]", "\u00df"), ("[[:upper:]]", "Q"), ("[\\x41-\\x43]", "B"),
    ("[a-c-e]", "-"), ("[\\-x]", "-"), ("[[:word:].]", "."), ("[\u212a]", "\u212a"),
    ("[^\\n]", "z"), ("[\\s]", " "), ("[[:xdigit:]]", "f"), ("[[:punct:]]", "{"),
    ("[kKx]", "k"), ("[sS]", "S"), ("[Ss]", "s"), ("[a-cA-C]", "B"), ("[k-kK-K]", "K"), ("[K\\x6b]", "k"),
])
specials = st.sampled_from([
    (".", "x"), ("\\d", "4"), ("\\w", "_"), ("\\s", "\n"), ("\\D", "a"), ("\\pL", "\u00e9"),
    ("\\p{Greek}", "\u03c3"), ("\\PL", "1"), ("\\C", "a"), ("\\W", "-"), ("\\S", "k"),
    ("\\pN", "3"), ("\\p{^Greek}", "a"),
])
anchors = st.sampled_from([("^", ""), ("$", ""), ("\\A", ""), ("\\z", ""), ("\\b", ""), ("\\B", "")])
quoted = st.text(alphabet="ab.*+(){}[]|^$kK", min_size=0, max_size=4).map(lambda t: (f"\\Q{t}\\E", t))
braces_literal = st.sampled_from([("{", "{"), ("x{,2}", "x{,2}"), ("{}", "{}"), ("x{a}", "x{a}")])

leaf = st.one_of(literal, literal, literal, escaped, hex_escape, classes, specials, anchors, quoted, braces_literal)


def _extend(children):
    def concat(parts):
        return "".join(p for p, _ in parts), "".join(s for _, s in parts)

    def alternation(args):
        parts, pick = args
        return "|".join(p for p, _ in parts), parts[pick % len(parts)][1]

    def group(args):
        (p, s), kind, seed = args
        rnd = _random.Random(seed)
        if kind == "(?i:":
            return f"(?i:{p})", _variant(s, rnd)
        if kind == "(?i)":
            return f"((?i){p})", _variant(s, rnd)
        if kind == "(?-i:":
            return f"(?i:x(?-i:{p}))", _variant("x", rnd) + s
        if kind == "(?P<n>":
            return f"(?P<g{seed % 100}>{p})", s
        return f"{kind}{p})", s

    def repeat(args):
        (p, s), (op, lo), lazy = args
        if p.endswith("\\E") or not p:
            p = f"(?:{p})"
        return f"(?:{p}){op}{'?' if lazy else ''}", s * lo

    quantifiers = st.sampled_from([("*", 0), ("*", 2), ("+", 1), ("+", 3), ("?", 0), ("?", 1), ("{2}", 2),
                                   ("{1,3}", 2), ("{0,2}", 1), ("{2,}", 3), ("{0}", 0), ("{1,1}", 1)])
    return st.one_of(
        st.lists(children, min_size=2, max_size=4).map(concat),
        st.tuples(st.lists(children, min_size=2, max_size=3), st.integers(0, 10)).map(alternation),
        st.tuples(children, st.sampled_from(["(", "(?:", "(?i:", "(?i)", "(?-i:", "(?P<n>", "(?s:", "(?U:", "(?m:"]),
                  st.integers(0, 10**6)).map(group),
        st.tuples(children, quantifiers, st.booleans()).map(repeat),
    )


patterns = st.recursive(leaf, _extend, max_leaves=12)
noise = st.text(alphabet=TRICKY + "xyz", max_size=6)


def _compile(pattern: str):
    try:
        return re2.compile(pattern)
    except Exception:  # noqa: BLE001 - re2 raises its own error type; RE2 refused the pattern
        return None


def assert_sound(pattern: str, texts: list[str]) -> None:
    compiled = _compile(pattern)
    if compiled is None:
        return
    pf = prefilter(pattern)
    rr = required_run(pattern)
    for text in texts:
        if compiled.search(text):
            assert may_match(pf, text), f"false negative: pattern {pattern!r}, prefilter {pf!r}, text {text!r}"
            assert may_match(pf, text, text.casefold())
            assert may_run(rr, text), f"false negative: pattern {pattern!r}, required run {rr and rr[1]}, text {text!r}"


@settings(max_examples=int(os.environ.get("PREFILTER_EXAMPLES", "3000")), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(patterns, noise, noise, st.lists(st.text(alphabet=TRICKY + "xyz", max_size=12), max_size=4))
@example(("(?i)strasse", "STRASSE"), "", "", ["stra\u017f\u017fe", "\u1e9e"])
@example(("(?i)\u00df", "\u1e9e"), "", "", [])
@example(("(?i)k", "\u212a"), "", "", [])
@example(("a|[kK]", "a"), "", "", ["\u212a"])  # RE2 folds [Kk] into (?i)k inside alternations
def test_no_false_negatives_on_generated_patterns(pair, before, after, others):
    pattern, sample = pair
    assert_sound(pattern, [before + sample + after, sample, *others])


@settings(max_examples=1500, deadline=None)
@given(st.text(alphabet="ab\\()[]{}|*+?.^$-:iPQEx0123,<>kK\u212a", max_size=20),
       st.lists(st.text(alphabet="ab()[]{}|*+?.^$-:kK\u212a,", max_size=10), max_size=5))
def test_no_false_negatives_on_arbitrary_strings(pattern, texts):
    """Random character soup: whatever RE2 accepts must still be sound (and nothing crashes)."""
    assert_sound(pattern, texts)


@pytest.mark.parametrize(("pattern", "required"), [
    (r"\b[a-z0-9-]+\.corp\.example\b", {".corp.example"}),
    (r"TODO|FIXME", {"TODO", "FIXME"}),
    (r"AKIA[0-9A-Z]{16}", {"AKIA"}),
    (r"\bfoo(bar|baz)\b", {"foobar", "foobaz"}),
    (r"colou?r", {"color", "colour"}),
    (r"console\.log\(", {"console.log("}),
    (r"\Qa.b*\E", {"a.b*"}),
    (r"a{,3}", {"a{,3}"}),
    (r"\bSK[0-9a-fA-F]{32}\b", {"SK"}),  # a class with both cases stays case-sensitive
])
def test_useful_literals_are_found(pattern, required):
    pf = prefilter(pattern)
    assert pf is not None and set(pf[0]) == required and pf[1] is False


def test_case_insensitive_patterns_compare_casefolded():
    literals, ci = prefilter(r"(?i)\bkubectl\s+delete")
    assert ci and literals == ("kubectl",)
    assert may_match((literals, ci), "KUBECTL  delete pods")
    assert not may_match((literals, ci), "helm uninstall")


@pytest.mark.parametrize("pattern", [
    r".*", r"\w+", r"[^a]", r"a*", r"x?", r"\pL+", r"(?x)a", r"\1", r"(a|)", r"", r"(?i)\u00e9", r"(?i)é",
    r"[[:alpha:]]+", r"\d{3}", r"\b[0-9a-f]{40}\b",
])
def test_patterns_without_a_required_literal_get_none(pattern):
    assert prefilter(pattern) is None


def test_nothing_pathological_hangs_or_crashes():
    assert prefilter("(" * 5000 + "a" + ")" * 5000) is None
    assert prefilter("((a{1000}){1000}){1000}") == (("a",), False)
    assert prefilter("x" * 30000) is None
    assert prefilter(None) is None  # type: ignore[arg-type]


def test_may_match_without_prefilter_always_runs_the_regex():
    assert may_match(None, "")


# ── the example catalogue ────────────────────────────────────────────────────────────

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CATALOGUE = os.path.join(REPO, "fixtures", "catalogue")
AEGIS = "http://aegis.gastown.local/ontology/"


def catalogue_patterns() -> list[str]:
    """Every regex of the bundled catalogue: text rules, exemptions, predicates, gates."""
    import rdflib

    graph = rdflib.Graph()
    for name in sorted(os.listdir(CATALOGUE)):
        if name.endswith(".ttl"):
            graph.parse(os.path.join(CATALOGUE, name), format="turtle")
    found = set()
    for prop in ("regex", "exemptPathRegex", "gate", "commandRegex"):
        found |= {str(o) for o in graph.objects(None, rdflib.URIRef(AEGIS + prop))}
    predicates = set(graph.subjects(rdflib.RDF.type, rdflib.URIRef(AEGIS + "Predicate")))
    found |= {str(o) for p in predicates for o in graph.objects(p, rdflib.URIRef(AEGIS + "evidenceSource"))}
    return sorted(found)


def _python_re_strategy(pattern: str):
    """Strings matching ``pattern`` under Python's re (same meaning as RE2 for these), or None."""
    import re

    try:
        re.compile(pattern)
    except re.error:
        return None
    return st.from_regex(pattern)


@pytest.mark.skipif(not os.path.isdir(CATALOGUE), reason="no bundled catalogue")
def test_the_catalogues_text_rules_get_useful_prefilters():
    import rdflib

    graph = rdflib.Graph()
    for name in sorted(os.listdir(CATALOGUE)):
        if name.endswith(".ttl"):
            graph.parse(os.path.join(CATALOGUE, name), format="turtle")
    rules = [str(o) for o in graph.objects(None, rdflib.URIRef(AEGIS + "regex"))]
    assert rules
    filtered = [p for p in rules if prefilter(p) is not None]
    assert len(filtered) >= len(rules) * 0.8, [p for p in rules if prefilter(p) is None]


@pytest.mark.skipif(not os.path.isdir(CATALOGUE), reason="no bundled catalogue")
@pytest.mark.parametrize("pattern", catalogue_patterns() if os.path.isdir(CATALOGUE) else [])
def test_no_false_negatives_on_the_catalogues_patterns(pattern):
    compiled = _compile(pattern)
    assert compiled is not None, f"the catalogue holds a pattern RE2 refuses: {pattern!r}"
    pf = prefilter(pattern)
    matching = _python_re_strategy(pattern)
    texts = st.text(alphabet=TRICKY + "xyz0123456789.-_/@", max_size=40)
    strategy = st.one_of(matching, texts) if matching is not None else texts

    @settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
    @given(strategy, noise, noise)
    def check(text, before, after):
        for candidate in (text, before + text + after):
            if compiled.search(candidate):
                assert may_match(pf, candidate), f"false negative: {pattern!r} {pf!r} {candidate!r}"

    check()


@pytest.mark.parametrize("broken", ["[a-", "[", "(?P<x", "\\", "[[:alp", "(?i"])
def test_malformed_patterns_get_no_prefilter_and_never_raise(broken):
    # A hook that rebuilds the hot twin computes prefilters; a pattern the parser cannot
    # read must mean "always evaluate", never an exception on the hot path.
    assert prefilter(broken) is None
