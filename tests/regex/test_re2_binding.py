"""yupana.regex.re2_binding answers every call exactly as google-re2's own wrapper does, and a hook
that runs a text rule no longer imports the wrapper."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import pytest
import re2
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from yupana.regex import re2_binding

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))

import adversarial_corpus  # noqa: E402
import rule_corpus  # noqa: E402

HANDWRITTEN = [
    r"(?P<key>[A-Za-z_]+)\s*=\s*(?P<value>\S+)", r"(a)|(b)", r"x*", r"\b", r"$", r"^", r"(?m)^\w+$",
    r"é+", r"[^\x00-\x7f]+", r"(?i)straße", r"\p{Greek}+", r"(?s).{3}", r"(a)(b)?(c)", r"", r"(?P<n>ü)?ß",
    r"AKIA[0-9A-Z]{16}", r"ghp_[A-Za-z0-9]{36}", r"(?i)(?:api|secret)[_-]?key\s*[:=]\s*['\"]?([^'\"\s]{8,})",
]
TEXTS = [
    "", "a", "abc", "key = value\nother=thing", "héllo wörld ééé", "straSSe Straße 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 αβγ δ",
    "AKIAABCDEFGHIJKLMNOP and ghp_" + "a" * 36, "日本語のテキスト key=値", "x\n\ny\n", "🙂🙂 a 🙂b",
    "api_key = 'hunter2hunter2' secret-key: 's3cr3tvalue'",
]


def _patterns() -> list[str]:
    out = list(HANDWRITTEN)
    out += [p for _, p in rule_corpus.patterns(120)]
    out += [p for _, p in adversarial_corpus.patterns(120)]
    return out


PATTERNS = _patterns()


def _theirs(pattern: str, text: str, pos: int | None = None, endpos: int | None = None) -> list:
    compiled = re2.compile(pattern)
    return [(m.span(), [m.span(g) for g in range(compiled.groups + 1)], m.groups(), m.groupdict())
            for m in compiled.finditer(text, pos, endpos)]


def _ours(pattern: str, text: str, pos: int | None = None, endpos: int | None = None) -> list:
    compiled = re2_binding.compile(pattern)
    return [(m.span(), [m.span(g) for g in range(compiled.groups + 1)], m.groups(), m.groupdict())
            for m in compiled.finditer(text, pos, endpos)]


@pytest.mark.parametrize("pattern", PATTERNS)
def test_every_match_group_and_offset_is_the_wrappers(pattern):
    try:
        re2.compile(pattern)
    except re2.error:
        with pytest.raises(re2.error):
            re2_binding.compile(pattern)
        return
    compiled = re2_binding.compile(pattern)
    assert compiled.groupindex == re2.compile(pattern).groupindex
    for text in TEXTS:
        assert _ours(pattern, text) == _theirs(pattern, text), text
        for pos, endpos in ((1, None), (3, 9), (None, 5), (7, 2), (-4, 100)):
            assert _ours(pattern, text, pos, endpos) == _theirs(pattern, text, pos, endpos), (text, pos, endpos)
            ours = compiled.search(text, pos, endpos)
            theirs = re2.compile(pattern).search(text, pos, endpos)
            assert (ours and (ours.span(), ours.group(0))) == (theirs and (theirs.span(), theirs.group(0)))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pattern=st.sampled_from(HANDWRITTEN), text=st.text(max_size=60), pos=st.integers(-2, 70),
       endpos=st.integers(-2, 70))
def test_any_text_any_window(pattern, text, pos, endpos):
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: both refuse it the same way
        with pytest.raises(UnicodeEncodeError):
            _theirs(pattern, text)
        with pytest.raises(UnicodeEncodeError):
            _ours(pattern, text)
        return
    assert _ours(pattern, text, pos, endpos) == _theirs(pattern, text, pos, endpos)


@pytest.mark.parametrize("pattern", [r"[^\x00-\x7f]+", r"\w+", r"(?P<k>é)(x)?", r"\b\d{3}\b", r"x*"])
def test_long_texts_across_many_blocks(pattern):
    """Offsets in a text much longer than the binding's 2048-character blocks, every kind of
    character width, at and around block boundaries, are the wrapper's."""
    import random

    r = random.Random(7)
    alphabet = ["a", "b", " ", "\n", "é", "日", "🙂", "1", "2", "3", "x"]
    text = "".join(r.choice(alphabet) for _ in range(9000))
    assert _ours(pattern, text) == _theirs(pattern, text)
    for pos, endpos in ((2047, 2049), (2048, 6145), (4095, None), (None, 4097), (8999, 9000), (1, 8998)):
        assert _ours(pattern, text, pos, endpos) == _theirs(pattern, text, pos, endpos), (pos, endpos)
    for _ in range(40):
        pos, endpos = sorted(r.randrange(0, 9001) for _ in range(2))
        assert _ours(pattern, text, pos, endpos) == _theirs(pattern, text, pos, endpos), (pos, endpos)


def test_interleaved_searches_of_two_texts_keep_their_offsets():
    """The one encoded text kept between calls is never another text's."""
    pattern = re2_binding.compile(r"\S+")
    a, b = "ééé aaa ééé", "bbb ü bbb"
    it_a, it_b = pattern.finditer(a), pattern.finditer(b)
    others = [f"é{i} ü" for i in range(8)]  # more texts than are kept encoded between calls
    got = []
    for _ in range(3):
        for other in others:
            assert pattern.search(other).group(0) == other.split()[0]
        got.append(next(it_a).group(0))
        got.append(next(it_b).group(0))
        got.append(pattern.search(a, 4).group(0))
    assert got == ["ééé", "bbb", "aaa", "aaa", "ü", "aaa", "ééé", "bbb", "aaa"]


def test_escape_and_sets_are_the_wrappers():
    literals = ["a.b", "(x)", "日本", "[?]", "ü*", "\\", ""]
    assert [re2_binding.escape(s) for s in literals] == [re2.escape(s) for s in literals]
    patterns = [re2.escape(s) for s in literals[:-1]] + [r"\d{3}"]
    options = re2.Options()
    options.log_errors = False
    theirs = re2.Set.SearchSet(options)
    for p in patterns:
        theirs.Add(p)
    theirs.Compile()
    ours = re2_binding.search_set(patterns)
    for text in TEXTS + ["x a.b (x) 日本 123", "ü*ü"]:
        assert ours.Match(text) == theirs.Match(text), text


def test_a_refused_pattern_raises_re2_error_and_logs_nothing():
    code = ("from yupana.regex import re2_binding\n"
            "try:\n    re2_binding.compile('(')\nexcept re2_binding.error as exc:\n    print('refused', exc)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=60)
    assert "refused" in done.stdout and "missing )" in done.stdout
    assert "re2.cc" not in done.stderr and "Error parsing" not in done.stderr
    assert re2_binding.error is re2.error


def test_a_hook_that_runs_a_text_rule_does_not_import_the_wrapper(env, tmp_path):
    """The hook denies through RE2 (its extension, loaded directly: no import is logged for it) and
    imports none of the wrapper's modules (functools, collections)."""
    from hooks.guard_kit import Repo, text_rule, write_cache

    endpoint = "http://127.0.0.1:9"
    write_cache(env, endpoint, text_rules=[text_rule("no_akia", r"\bAKIA[0-9A-Z]{16}\b")])
    exposure = env.cache_for(endpoint).parent / "exposure.json"  # a public repository: the block tier denies
    exposure.write_text(json.dumps({"version": 1, "entries": {f"{endpoint}|widgets": {
        "exposure": "public", "at": int(time.time())}}}))
    repo = Repo(tmp_path / "repo", env).config(f'[yupana.policy]\nmode = "enforce"\n[yupana.quipu]\n'
                                               f'enabled = true\nendpoint = "{endpoint}"\ndialect = "quipu"\n')
    payload = repo.payload(rel="notes.md", new_string="key AKIAABCDEFGHIJKLMNOP here")
    root = repo.root
    bare = dict(env, PYTHONPATH=os.pathsep.join([str(REPO), sysconfig.get_paths()["purelib"]]))
    names = []
    for _ in range(2):  # the first call resolves the configuration
        done = subprocess.run([sys.executable, "-S", "-X", "importtime", "-c",  # bin/yupana's start, no runpy
                               "import sys; from yupana.cli import main; sys.exit(main())", "hook", "pre-edit"],
                              input=json.dumps(payload), env=bare, cwd=str(root), capture_output=True, text=True,
                              timeout=60)
        names = [line.rsplit("|", 1)[1].strip() for line in done.stderr.splitlines()
                 if line.startswith("import time:") and "|" in line]
    said = [line for line in done.stderr.splitlines() if not line.startswith("import time:")]
    assert done.stdout.strip(), said
    assert json.loads(done.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny", done.stdout
    assert "re2" not in names and "functools" not in names and "collections" not in names, names
