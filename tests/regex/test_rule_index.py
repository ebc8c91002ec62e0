"""The literal index never drops a rule that the full scan would fire (issue 12 §1).

The full scan is what a hook did before the index: every rule's prefilters tested in turn
(:func:`yupana.evaluate.text_rules.candidates` over the list). The index answers from the hot
twin (:class:`yupana.state.hot_view.TextRules`), reading only the rules it returns. Held:
both give the same rules, in the same order, for generated literal sets and texts (both
lookup strategies), and the real evaluation (regexes included) gives the same findings over
a realistic corpus of distinct rules and real text.
"""

from __future__ import annotations

import glob
import os
import sys

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from yupana.evaluate import text_rules
from yupana.regex import rule_index
from yupana.regex.prefilter import may_match
from yupana.state import hot_derive
from yupana.state.hot_view import HotFile
from yupana.state.hot_view import HotCache

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ALPHABET = "abcAB\u00df\u212ak-. \u00e9"


def _twin(rules: list[dict]) -> HotCache:
    cache = {"version": 1, "written_at": 1, "endpoint": "x", "text_rules": rules}
    return HotCache(HotFile(data=b"".join(hot_derive.image(cache, {"key": None, "json_sha1": ""}))))


def _index(prefilters: list) -> rule_index.Index:
    meta, sections = rule_index.build(prefilters)
    return rule_index.Index(meta, lambda name, start, end: sections[name][start:end])


literal = st.text(alphabet=ALPHABET, min_size=1, max_size=6)
prefilter = st.one_of(st.none(), st.tuples(st.lists(literal, min_size=1, max_size=3).map(tuple), st.booleans()))


@settings(max_examples=int(os.environ.get("PREFILTER_EXAMPLES", "3000")), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(prefilter, max_size=30), st.text(alphabet=ALPHABET, max_size=40))
def test_both_lookups_return_every_rule_whose_prefilter_admits_the_text(pfs, text):
    pfs = [(tuple(lit.casefold() for lit in p[0]), True) if p and p[1] else p for p in pfs]  # folded, as built
    index = _index(pfs)
    hays = {rule_index.CASE: text, rule_index.FOLD: text.casefold()}
    truth = {i for i, pf in enumerate(pfs) if may_match(pf, text)}
    found = index.candidates(text, lambda: text.casefold())
    assert found is not None and truth <= found
    short = {i for k, ids in index.meta["short"].items() if k[1:] in hays[k[0]] for i in ids}
    always = set(index.meta["always"])
    for way in (index.probe, index.scan, index.literal_set):
        got = way(hays, None)
        assert got is not None and truth <= got | short | always


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.text(alphabet="abcXYZ-._", min_size=1, max_size=8), st.booleans()), max_size=40),
       st.text(alphabet="abcxyzXYZ-._ \n", max_size=300))
def test_the_twin_admits_exactly_what_the_full_scan_admits(literals, text):
    """Same rules, same order: the index only ever skips reading rules that cannot match."""
    rules = [{"name": f"r{i}", "pattern": ("(?i)" if ci else "") + "".join("\\" + c if c in ".-" else c for c in lit),
              "tier": "warn"} for i, (lit, ci) in enumerate(literals)]
    twin = _twin(rules)
    full, _ = text_rules.candidates(list(twin.text_rules), text)
    indexed, skipped = text_rules.candidates(twin.text_rules, text)
    assert skipped == 0
    assert [r["name"] for r in indexed] == [r["name"] for r in full]


def test_a_realistic_catalogue_gives_the_same_findings_through_the_index():
    """3,000 distinct corpus rules against this repository's own text: same violations."""
    sys.path.insert(0, os.path.join(REPO, "benchmarks"))
    try:
        import scale
    finally:
        sys.path.pop(0)
    rules = scale.distinct_rules(3000)
    twin = _twin(rules)
    full = list(twin.text_rules)
    texts = [open(p, encoding="utf-8").read() for p in sorted(glob.glob(os.path.join(REPO, "docs", "*.md")))[:12]]
    texts += ["see host-1.nightjar5.acme.internal and PLAT22-7 and project kestrel1234 today",
              "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678 and 10.1.22.3", ""]
    fired = 0
    for text in texts:
        want = text_rules.evaluate(full, text, "docs/x.md", lambda: ("public", "", "r"))
        got = text_rules.evaluate(twin.text_rules, text, "docs/x.md", lambda: ("public", "", "r"))
        assert [(f.id, f.message) for f in got] == [(f.id, f.message) for f in want]
        fired += len(want)
    assert fired > 0  # the corpus does fire on these texts: the comparison is not vacuous


def test_the_index_reads_only_a_handful_of_rules_for_a_small_edit():
    twin = _twin(_distinct(20_000))
    admitted, skipped = text_rules.candidates(twin.text_rules, "The widget service reads its settings.\n")
    assert (admitted, skipped) == ([], 0)
    assert len(twin.text_rules._rules) < 50  # rules unmarshalled, out of 20,000


def _distinct(n: int) -> list[dict]:
    return [{"name": f"r{i}", "pattern": rf"\bcodename{i}x\b", "tier": "warn"} for i in range(n)]


def test_a_deadline_in_the_past_looks_at_nothing_and_says_so():
    twin = _twin(_distinct(500))
    big = "plain text " * 20_000
    admitted, skipped = text_rules.candidates(twin.text_rules, big, deadline_at=0.0)
    assert admitted == [] and skipped == 500


_ADVERSARIAL: list = []


def _adversarial_twin() -> tuple[list[dict], HotCache]:
    if not _ADVERSARIAL:
        sys.path.insert(0, os.path.join(REPO, "benchmarks"))
        try:
            import adversarial_corpus
        finally:
            sys.path.pop(0)
        rules = adversarial_corpus.text_rules(2000)
        _ADVERSARIAL.append((rules, _twin(rules)))
    return _ADVERSARIAL[0]


@settings(max_examples=int(os.environ.get("PREFILTER_EXAMPLES", "300")) // 3, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large])
@given(st.data())
def test_an_adversarial_catalogue_fires_through_the_index_what_every_regex_fires(data):
    """2,000 patterns with no literal of three characters (benchmarks/adversarial_corpus.py),
    keyed by kind trigrams and short literals: the index never drops a rule that running every
    regex on the text (no prefilter at all) fires. Texts hold matches of a few of the patterns."""
    rules, twin = _adversarial_twin()
    parts = [data.draw(st.text(alphabet="The widget reads 42 é\n_-.:=", max_size=30))]
    for rule in data.draw(st.lists(st.sampled_from(rules), min_size=1, max_size=3)):
        try:
            parts.append(data.draw(st.from_regex(rule["pattern"], fullmatch=True)))
        except Exception:  # noqa: BLE001 - a pattern Python's re cannot read: nothing to generate
            continue
        parts.append(data.draw(st.sampled_from([" ", "\n", ", ", ""])))
    text = "".join(parts)
    bare = [{k: v for k, v in r.items() if not k.startswith("_")} for r in rules]  # no prefilter: every regex runs
    want = text_rules.evaluate(bare, text, "docs/x.md", lambda: ("public", "", "r"))
    got = text_rules.evaluate(twin.text_rules, text, "docs/x.md", lambda: ("public", "", "r"))
    assert [(f.id, f.message) for f in got] == [(f.id, f.message) for f in want]


def test_an_adversarial_catalogue_hands_few_rules_to_the_regex_stage_for_prose():
    rules, twin = _adversarial_twin()
    admitted, skipped = text_rules.candidates(twin.text_rules, "The widget service reads its settings.\n")
    assert skipped == 0 and len(admitted) < len(rules) // 20
