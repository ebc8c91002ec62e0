"""The required-run prefilter never hides a match that google-re2 would find, and it does
exclude the everyday texts that the literal prefilter cannot (so ``re2`` stays unloaded)."""

from __future__ import annotations

import os

import pytest
import re2
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from yupana.regex.prefilter import may_run, prefilter, required_run
from tests.regex.test_prefilter import TRICKY, patterns

PROSE = ("Deployment notes\n\nThe widget service now reads its settings from the environment; see the "
         "runbook section on rollouts for the order of steps and who to ask when a canary fails.\n")
CODE = "let total = compute(a, b);\nfn helper(x: u32) -> u32 { x + 1 }\n"


@pytest.mark.parametrize(("pattern", "hit"), [
    (r"[A-Za-z0-9+/]{40,}={0,2}", "token: " + "QUJD" * 11 + "=="),
    (r"\b[0-9a-f]{40}\b", "commit 9fceb02d0ae598e95dc970b74767f19372d61af8 fixed it"),
    (r"\b(?:[0-9]{4}[ -]?){3}[0-9]{4}\b", "card 4111 1111 1111 1111 on file"),
    (r"[^\x00-\x7F]{20,}", "x" + "\u00e9" * 20),
    (r"\b(?:[0-9]{1,3}\.){3}[0-9]{1,3}\b", "ping 10.1.2.3 now"),
])
def test_literal_less_corpus_patterns_are_narrowed(pattern, hit):
    """The corpus patterns with no literal prefilter: excluded on prose and code, admitted on a match."""
    rr = required_run(pattern)
    assert rr is not None
    assert re2.search(pattern, hit) and may_run(rr, hit)
    for text in (PROSE, CODE):
        assert not re2.search(pattern, text)
        assert not may_run(rr, text), f"{pattern!r} should not need to run on {text[:30]!r}"


@pytest.mark.parametrize("pattern", [r".*", r"\w+", r"ab", r"[^a]{5}", r"\pL{4}", r"x?"])
def test_patterns_whose_runs_exclude_little_get_none(pattern):
    assert required_run(pattern) is None


def test_case_folding_and_non_ascii_are_members():
    """(?i)k matches KELVIN SIGN; [^\\x00-\\x7F] matches any non-ASCII character, as bytes."""
    rr = required_run(r"(?i)k{3}")
    assert rr is not None and may_run(rr, "\u212a\u212a\u212a") and may_run(rr, "kKk")
    assert not may_run(rr, "kk k")
    rr = required_run("[\u00e9\u00e8]{3}")
    assert rr is not None and may_run(rr, "\u00e9\u00e8\u00e9") and not may_run(rr, "eee")


def test_the_memo_is_per_table():
    a, b = required_run(r"[0-9]{5}"), required_run(r"[a-f]{5}")
    memo: dict[bytes, bytes] = {}
    assert may_run(a, "x 12345 y", memo) and not may_run(b, "x 12345 y", memo)
    assert len(memo) == 3  # the encoding and two tables


def _sound(pattern: str, texts: list[str]) -> None:
    try:
        compiled = re2.compile(pattern)
    except Exception:  # noqa: BLE001 - RE2 refused the pattern
        return
    rr = required_run(pattern)
    for text in texts:
        if compiled.search(text):
            assert may_run(rr, text), f"false negative: {pattern!r} run {rr and rr[1]} text {text!r}"


@settings(max_examples=int(os.environ.get("PREFILTER_EXAMPLES", "3000")), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(patterns, st.integers(1, 4), st.text(alphabet=" ;\n\u00a0", max_size=3),
       st.lists(st.text(alphabet=TRICKY + "xyz0123456789", max_size=24), max_size=4))
def test_no_false_negatives_on_repeated_samples(pair, times, gap, others):
    """Samples repeated (so runs are long enough to matter) and cut by separators."""
    pattern, sample = pair
    _sound(pattern, [sample * times, gap + sample + gap, (sample + gap) * times, *others])


@settings(max_examples=800, deadline=None)
@given(st.sampled_from([r"[a-c]{3,}", r"(?:ab|c\d){2}", r"[^\s]{4}", r"(?i:[k-m]{3})", r"\d+\.\d+\.\d+",
                        r"[\x{80}-\x{10FFFF}]{3}", r"[^\x00-\x{10FFFF}a]{3}|zz z"]),
       st.text(alphabet="abc1234. \u212akKlm\u00e9\u4e2dzZ\n", max_size=30))
def test_no_false_negatives_on_class_heavy_patterns(pattern, text):
    _sound(pattern, [text])


def test_both_prefilters_are_independent():
    """A pattern with a literal keeps it; the run is an extra, separate requirement."""
    pattern = r"\bAKIA[0-9A-Z]{16}\b"
    assert prefilter(pattern) == (("AKIA",), False)
    rr = required_run(pattern)
    assert rr is not None and rr[1] == 20
    assert not may_run(rr, "AKIA is a prefix")
    assert may_run(rr, "key AKIAABCDEFGHIJKLMNOP")


def _corpus_patterns() -> list[str]:
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    import adversarial_corpus
    import rule_corpus

    return [p for _, p in adversarial_corpus.patterns(400)] + [p for _, p in rule_corpus.patterns(200)]


CORPUS = _corpus_patterns()


def test_a_narrower_tail_excludes_what_the_run_alone_admits():
    """``\\b[a-z]{2}[A-Za-z0-9]{8,16}[A-F]\\b`` needs eleven word characters ending in A-F: prose has
    eleven-letter words (the run alone admits it), not one ending so; a match is admitted."""
    pattern = r"\b[fhiorsuw]{2}[A-Za-z0-9]{8,16}[A-F]\b"
    rr = required_run(pattern)
    assert rr is not None and rr[1] == 11 and _pivot_at(rr, before=10) == 1  # the tail: one of A-F after ten
    assert b"x" * 11 in PROSE.encode().translate(rr[0])  # "environment": the run alone would admit it
    assert not may_run(rr, PROSE) and not re2.search(pattern, PROSE)
    hit = "id = ow12abcXYZ9F;"
    assert re2.search(pattern, hit) and may_run(rr, hit)
    tails = [p for p in CORPUS if (r := required_run(p)) is not None and len(r) == 3
             and any(before + lo == r[1] for _, lo, before in r[2])]
    assert len(tails) >= 150, len(tails)  # most class-only patterns have one


def test_a_narrower_head_excludes_what_the_run_and_tail_admit():
    """``\\b[0-9]{2,4}-[A-Z]{2,5}-[a-z]{3,9}\\b`` starts with two digits: prose without digits is
    excluded though its words pass the run and the tail; a match is admitted."""
    pattern = r"\b[0-9]{2,4}-[A-Z]{2,5}-[a-z]{3,9}\b"
    rr = required_run(pattern)
    assert rr is not None and rr[1] == 9 and _pivot_at(rr, before=0) == 2  # the head: two digits first
    assert not may_run(rr, PROSE) and not re2.search(pattern, PROSE)
    hit = "ticket 042-OPS-rollout done"
    assert re2.search(pattern, hit) and may_run(rr, hit)
    assert not may_run(rr, "ticket 4-OPS-rollout done") and not re2.search(pattern, "ticket 4-OPS-rollout done")
    heads = [p for p in CORPUS if (r := required_run(p)) is not None and _pivot_at(r, before=0) is not None]
    assert len(heads) >= 100, len(heads)


def test_a_pivot_inside_the_run_excludes_what_its_ends_admit():
    """``\\b\\w{2,12}[-_.]\\w{6,17}\\b`` needs a ``-``, ``_`` or ``.`` with two word characters before
    it and six after: prose has the run, both ends and full stops, but no such place; names and
    versions are admitted, and a dot with too little after it is not."""
    pattern = r"\b\w{2,12}[-_.]\w{6,17}\b"
    rr = required_run(pattern)
    assert rr is not None and rr[1] == 9 and _pivot_at(rr, before=2) == 1
    assert not may_run(rr, PROSE) and not re2.search(pattern, PROSE)
    for hit in ("see release.markdown", "host db-primary01 is up", "x = 10.2000000"):
        assert re2.search(pattern, hit) and may_run(rr, hit), hit
    for miss in ("a.example here", "ends so.\nthe next", "it is ab-cdefg only"):
        assert not re2.search(pattern, miss) and not may_run(rr, miss), miss
    middle = [p for p in CORPUS if (r := required_run(p)) is not None and len(r) == 3
              and any(0 < before < r[1] - lo for _, lo, before in r[2])]
    assert len(middle) >= 50, len(middle)


def _pivot_at(rr: tuple, before: int) -> int | None:
    """The ``lo`` of the run's pivot that starts ``before`` characters into every match, or None."""
    return next((lo for _, lo, b in (rr[2] if len(rr) == 3 else ()) if b == before), None)


@settings(max_examples=int(os.environ.get("PREFILTER_EXAMPLES", "3000")), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(CORPUS + [r"[a-z]{2,5}[0-9]{2}", r"\w{3}[A-F]\b", r"(?i)[x-z]{3}[a-c]", r"[^\s]{2}\d",
                                 "[\u00e9-\u00eb]{2}[a-z]", r"(?:ab|cd)[0-9]{2,}[A-F]{2}$", r"[a-f]{3}\d{1,3}\b", r"\w{2}[-.]\w{3}",
                                 r"(?:q|zz)\d{2}[-_.:]{1,2}(?:ab|c){2}[A-F]x", r"[a-z]{2,4}[\x{e9}-]{2}[0-9]{1,2}"]),
       st.text(alphabet="abcdefqxzwyAF0129-_.:/ \n\u00e9\u212a", min_size=3, max_size=64))
def test_no_pivot_ever_hides_a_match(pattern, text):
    """Whatever the text, a pattern RE2 finds in it passes its required run, pivots included."""
    _sound(pattern, [text, text * 3, text + " " + text[::-1]])


def test_no_real_secret_is_hidden_by_a_run_or_its_pivots():
    """gitleaks' and detect-secrets' own patterns over detect-secrets' samples and the planted
    secrets of benchmarks/large_write.py: every text a pattern matches passes its run."""
    import json
    import sys
    from pathlib import Path

    from rdflib import Graph, URIRef

    root = Path(__file__).resolve().parents[2]
    sys.path.insert(0, str(root / "benchmarks"))
    import large_write

    data = root / "benchmarks" / "data"
    patterns = []
    for ttl in (data / "gitleaks" / "catalogue" / "text-rules.ttl", data / "detect-secrets" / "after.ttl"):
        graph = Graph().parse(ttl, format="turtle")
        patterns += sorted({str(o) for o in graph.objects(None, URIRef("http://aegis.gastown.local/ontology/regex"))})
    samples = json.loads((data / "detect-secrets" / "samples.json").read_text())["samples"]
    texts = [s["text"] for s in samples if isinstance(s.get("text"), str)]
    texts += [line for _, line in large_write.PLANTED] + [large_write.planted_text(30_000)]
    matched = tailed = 0
    for pattern in patterns:
        try:
            compiled = re2.compile(pattern)
        except Exception:  # noqa: BLE001 - RE2 refused the pattern
            continue
        rr = required_run(pattern)
        tailed += rr is not None and len(rr) == 3
        for text in texts:
            if compiled.search(text):
                matched += 1
                assert may_run(rr, text), (pattern, text[:80])
    assert len(patterns) >= 250 and tailed >= 40 and matched >= 1500, (len(patterns), tailed, matched)
