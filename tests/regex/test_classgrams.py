"""Kind trigrams: whenever a pattern matches, its kind key is in the text's kind string (issue 25 §1).

Texts are generated to match the pattern (hypothesis' ``from_regex``, then confirmed by RE2,
which decides), surrounded by arbitrary text with non-ASCII characters, so the guarantee the
index relies on is checked on matches, not only on texts that miss."""

from __future__ import annotations

import os
import sys

import re2
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from yupana.regex import classgrams
from yupana.regex.syntax import Parser

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "benchmarks"))
import adversarial_corpus  # noqa: E402
import rule_corpus  # noqa: E402

sys.path.pop(0)

TABLE = classgrams.table()
PATTERNS = [p for _, p in adversarial_corpus.patterns(400)] + [p for _, p in rule_corpus.patterns(200)]
AROUND = st.text(alphabet="aZ09_-=:/. \t\n\"'xqKk\u212a\u017fé\u00df", max_size=12)


def kinds(text: str) -> str:
    return text.encode("utf-8", "surrogatepass").translate(TABLE).decode("latin-1")


def key(pattern: str) -> tuple[str, ...] | None:
    return classgrams.kind_key_of(Parser(pattern).parse())


def test_most_adversarial_patterns_get_a_kind_key():
    keyed = sum(key(p) is not None for _, p in adversarial_corpus.patterns(400))
    assert keyed >= 300  # the index can key them, though none has a literal of three characters


@settings(max_examples=int(os.environ.get("PREFILTER_EXAMPLES", "1500")), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(st.data())
def test_every_match_holds_one_of_the_patterns_kind_trigrams(data):
    pattern = data.draw(st.sampled_from(PATTERNS))
    grams = key(pattern)
    if grams is None:
        return
    try:
        inner = data.draw(st.from_regex(pattern, fullmatch=False), label="match")
    except Exception:  # noqa: BLE001 - a pattern Python's re cannot read: nothing to generate
        return
    text = data.draw(AROUND) + inner + data.draw(AROUND)
    if re2.search(pattern, text) is None:
        return  # Python's re and RE2 differ (Unicode \d, \w): RE2 decides
    assert any(g in kinds(text) for g in grams), (pattern, text, grams)


def test_a_class_that_may_fold_to_a_non_ascii_letter_is_unknown():
    # (?i)k matches KELVIN SIGN, three bytes in UTF-8: no kind trigram may span it
    assert key(r"(?i)[0-9]k[0-9]") is None
    assert re2.search(r"(?i)[0-9]k[0-9]", "1\u212a2")
    assert key(r"[0-9]{2}[A-F][0-9]") is not None


def test_a_non_ascii_class_breaks_the_trigram():
    assert key(r"[0-9]\.[0-9]") == ("0.0",)
    assert key(r"[0-9][^a]{1}[0-9]") is None  # [^a] may be a multi-byte character
