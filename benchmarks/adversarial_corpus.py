"""A deterministic corpus of text-rule patterns chosen to defeat trigram keying, for benchmarks.

benchmarks/rule_corpus.py draws the rules operators write, nearly all with a literal of three
or more characters that the hot twin's literal index (:mod:`yupana.regex.rule_index`) files
them under. This corpus is the opposite: every pattern is distinct, and none has a required
literal of three characters or more, so the index can key none of them by a trigram. The
kinds (issue 25 §1):

* ``classes``: character classes only (``\\b[a-hj-np-z]{2}[0-9]{3,7}[A-F]\\b``);
* ``short-alt``: alternations of one- and two-character literals between big classes
  (``(?:qz|xj|vk)[0-9a-z]{4,9}``), filed, if at all, under short keys;
* ``ci``: the same under ``(?i)``, whole or mid-pattern;
* ``lazy``: lazy quantifiers between short anchors (``z[^\\s]{2,40}?q[0-9]{3}``);
* ``token``: secret-like token shapes, a class and a length (``[A-Z2-7]{26,}``).

``text_rules(n)`` wraps them as projection-cache text-rule entries (docs/cache-format.md), in
the shape benchmarks/rule_corpus.py gives. Same seed, same corpus.
"""

from __future__ import annotations

import random

LOWER = "abcdefghijklmnopqrstuvwxyz"
RARE = "qxzjvkwy"  # letters whose pairs are rare in prose: the short literals
CLASSES = ["[0-9]", "[a-f0-9]", "[A-F0-9]", "[0-9a-z]", "[A-Z0-9]", "[A-Za-z0-9]", "[A-Z2-7]", "[a-z0-9_-]",
           "[A-Za-z0-9+/]", "[0-9A-HJ-NP-Z]", "\\d", "\\w", "[^\\s\"']"]


def _span(r: random.Random) -> str:
    """A random class under a random counted repetition."""
    lo = r.randint(2, 9)
    return f"{r.choice(CLASSES)}{{{lo},{lo + r.randint(0, 12)}}}"


def _letters(r: random.Random, k: int) -> str:
    """A class of ``k`` random lowercase letters, written as ranges where they run."""
    return "[" + "".join(sorted(r.sample(LOWER, k))) + "]"


def _pair(r: random.Random) -> str:
    return r.choice(RARE) + r.choice(RARE)


def _classes(r: random.Random) -> str:
    return r.choice([
        rf"\b{_letters(r, r.randint(8, 20))}{{2}}{_span(r)}[A-F]\b",
        rf"\b{_span(r)}[-_.]{_span(r)}\b",
        rf"(?:^|\s){_span(r)}:{_span(r)}(?:$|\s)",
        rf"\b[0-9]{{{r.randint(2, 4)}}}-[A-Z]{{{r.randint(2, 5)}}}-{_span(r)}\b",
    ])


def _short_alt(r: random.Random) -> str:
    alts = "|".join(sorted({_pair(r) for _ in range(r.randint(2, 5))}))
    return r.choice([
        rf"(?:{alts}){_span(r)}",
        rf"\b{_span(r)}(?:{alts})\b",
        rf"(?:{alts})[-_]?{_span(r)}(?:{_pair(r)}|{r.choice(RARE)})",
    ])


def _ci(r: random.Random) -> str:
    return r.choice([
        rf"(?i)\b(?:{_pair(r)}|{_pair(r)}){_span(r)}\b",
        rf"\b{_span(r)}(?i:{_pair(r)}|{r.choice(RARE)}[0-9]){_span(r)}",
        rf"(?i)[{r.choice(RARE)}{r.choice(RARE)}][-=:]{_span(r)}",
    ])


def _lazy(r: random.Random) -> str:
    a, b = r.choice(RARE), r.choice(RARE)
    return r.choice([
        rf"{_pair(r)}[^\s]{{{r.randint(1, 5)},{r.randint(20, 60)}}}?{b}{_span(r)}",
        rf"\b{_pair(r)}.*?{_span(r)}\b",
        rf"(?s){a}{b}.{{0,{r.randint(8, 80)}}}?[0-9]{{{r.randint(3, 6)}}}",
    ])


def _token(r: random.Random) -> str:
    lo = r.randint(16, 48)
    return r.choice([
        rf"{r.choice(CLASSES)}{{{lo},}}",
        rf"\b{r.choice(CLASSES)}{{{lo}}}\b",
        rf"{r.choice(CLASSES)}{{{lo // 2}}}[.:]{r.choice(CLASSES)}{{{lo},{lo + r.randint(1, 30)}}}",
    ])


KINDS = [("classes", 3, _classes), ("short-alt", 3, _short_alt), ("ci", 2, _ci), ("lazy", 2, _lazy),
         ("token", 1, _token)]


def patterns(n: int = 500, seed: int = 20261205) -> list[tuple[str, str]]:
    """``n`` distinct (category, pattern) pairs."""
    r = random.Random(seed)
    weights = [w for _, w, _ in KINDS]
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    while len(out) < n:
        kind, _, make = r.choices(KINDS, weights)[0]
        pattern = make(r)
        if pattern in seen:
            continue
        seen.add(pattern)
        out.append((kind, pattern))
    return out


def text_rules(n: int = 500, seed: int = 20261205) -> list[dict]:
    """Text-rule cache entries (docs/cache-format.md) for ``n`` adversarial patterns."""
    base = "http://aegis.gastown.local/ontology/"
    rules = []
    for i, (kind, pattern) in enumerate(patterns(n, seed)):
        name = f"adv_{kind.replace('-', '_')}_{i:05d}"
        rules.append({
            "iri": base + name, "name": name, "label": name, "labels": [name], "pattern": pattern,
            "tier": "block" if i % 3 else "warn", "class": kind, "exempt_path_regex": None,
            "exempt_path_regexes": [], "exemption_selectors": [], "rationale": f"adversarial {kind}",
            "rationales": [f"adversarial {kind}"],
        })
    return rules
