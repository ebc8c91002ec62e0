"""The Codex patch reader: every upstream scenario, the wrappers Codex accepts, exact rebuilds."""

from __future__ import annotations

import os
import time
from collections import Counter

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from yupana.edit import apply_patch as ap

# The same location tests/conftest.py names (imported by value: several conftest modules exist).
CODEX_FIXTURES = Path(os.environ.get("YUPANA_SHARED_FIXTURES", "/work/shared/fixtures")) / "codex-apply-patch"


def _tree(root: str) -> dict[str, str]:
    """Every file under ``root`` (relative path → text); {} when the folder is absent."""
    files: dict[str, str] = {}
    if not os.path.isdir(root):
        return files
    for dirpath, _dirs, names in os.walk(root):
        for name in names:
            full = os.path.join(dirpath, name)
            with open(full, encoding="utf-8", newline="") as fh:
                files[os.path.relpath(full, root)] = fh.read()
    return files


def _scenarios() -> list[str]:
    if not CODEX_FIXTURES.is_dir():
        return []
    return sorted(d.name for d in CODEX_FIXTURES.iterdir() if (d / "patch.txt").is_file())


needs_fixtures = pytest.mark.skipif(not _scenarios(), reason="codex-apply-patch fixtures absent")


class Scenario:
    def __init__(self, name: str) -> None:
        base = CODEX_FIXTURES / name
        self.name = name
        self.patch_text = (base / "patch.txt").read_text(encoding="utf-8")
        self.input = _tree(str(base / "input"))
        self.expected = _tree(str(base / "expected"))


def _outcome(s: Scenario) -> tuple[bool, dict[str, bool]]:
    """(parsed cleanly, {op index: op takes effect per expected/ vs input/}).

    Derived only from the fixture data: an op "takes effect" when expected/ shows its
    result (added file present with its content, deleted file gone, updated/moved target
    changed).
    """
    patch = ap.parse(s.patch_text)
    effects: dict[str, bool] = {}
    for n, op in enumerate(patch.ops):
        if op.op == ap.ADD:
            effects[n] = s.expected.get(op.path) == op.content
        elif op.op == ap.DELETE:
            effects[n] = op.path in s.input and op.path not in s.expected
        else:
            target = op.move_to or op.path
            changed = target in s.expected and s.expected.get(target) != s.input.get(target)
            effects[n] = changed and (op.move_to is None or op.path not in s.expected)
    return not patch.problems, effects


@needs_fixtures
def test_the_failing_scenarios_are_the_ones_the_fixture_readme_names():
    failing = set()
    for name in _scenarios():
        clean, effects = _outcome(Scenario(name))
        if not clean or not all(effects.values()):
            failing.add(name[:3])
    assert failing == {"005", "006", "007", "008", "009", "012", "013", "015"}


@needs_fixtures
@pytest.mark.parametrize("name", _scenarios())
def test_scenario(name: str):
    s = Scenario(name)
    patch = ap.parse(s.patch_text)
    clean, effects = _outcome(s)
    if not clean:
        # Rejected by the parser: the fixture shows no change at all.
        assert patch.problems and all(p.startswith("apply_patch: ") for p in patch.problems)
        assert s.expected == s.input
        return
    touched = set()
    for n, op in enumerate(patch.ops):
        if op.op == ap.ADD:
            touched.add(op.path)
            if effects[n]:
                assert op.added == s.expected[op.path].splitlines()
        elif op.op == ap.DELETE:
            touched.add(op.path)
        else:
            target = op.move_to or op.path
            touched |= {op.path, target}
            original = s.input.get(op.path)
            if original is None:
                assert not effects[n]  # update of a missing file cannot succeed
                continue
            rebuilt, why = ap.apply_chunks(original, op.chunks)
            if effects[n]:
                assert why is None
                assert rebuilt == s.expected[target]
                # Only + lines are introduced: exactly the lines expected/ gained.
                gained = Counter(s.expected[target].splitlines()) - Counter(original.splitlines())
                assert Counter(op.added) == gained
            else:
                assert rebuilt is None and why.startswith("anchor missing")
    # Every file that differs between input/ and expected/ is a target of the patch.
    changed = {p for p in set(s.input) | set(s.expected) if s.input.get(p) != s.expected.get(p)}
    assert changed <= touched


def test_multi_operation_patch():
    # Also covered when the upstream fixtures are absent.
    patch = ap.parse("*** Begin Patch\n*** Add File: a/new.txt\n+hello\n*** Delete File: gone.txt\n"
                     "*** Update File: m.txt\n*** Move to: n.txt\n@@\n-x\n+y\n*** End Patch\n")
    assert not patch.problems
    assert [(o.op, o.path, o.move_to) for o in patch.ops] == [
        ("add", "a/new.txt", None), ("delete", "gone.txt", None), ("update", "m.txt", "n.txt")]
    assert patch.ops[0].content == "hello\n"
    assert patch.ops[2].added == ["y"]


# ----------------------------------------------------------------------------- envelope

BODY = "*** Begin Patch\n*** Update File: f.py\n@@\n-a\n+b\n*** End Patch"


@pytest.mark.parametrize("wrapped", [
    f"<<EOF\n{BODY}\nEOF\n",
    f"<<'EOF'\n{BODY}\nEOF\n",
    f'<<"EOF"\n{BODY}\nEOF\n',
    f"apply_patch <<'EOF'\n{BODY}\nEOF\n",
    f"apply_patch <<EOF\n{BODY}\nEOF",
    f'apply_patch <<"PATCH"\n{BODY}\nPATCH\n\n',
    f"applypatch <<'EOF'\n{BODY}\nEOF\n",
    f"apply_patch << 'EOF'\n{BODY}\nEOF\n",
    f"  \n{BODY}\n\n",
])
def test_wrappers_codex_accepts(wrapped: str):
    patch = ap.parse(wrapped)
    assert patch.problems == []
    assert [(o.op, o.path) for o in patch.ops] == [("update", "f.py")]
    assert patch.ops[0].added == ["b"]


def test_cd_prefix_sets_the_workdir():
    patch = ap.parse(f"cd 'sub dir' && apply_patch <<'EOF'\n{BODY}\nEOF\n")
    assert patch.problems == [] and patch.workdir == "sub dir" and patch.wrapper == "command"
    assert ap.parse(f"cd src && apply_patch <<EOF\n{BODY}\nEOF").workdir == "src"


@pytest.mark.parametrize("text, expect", [
    (f"<<\"EOF'\n{BODY}\nEOF\n", "first line"),  # mismatched quotes: Codex rejects
    ("<<EOF\n*** Begin Patch\n*** Update File: f.py\nEOF\n", "last line"),
    ("*** Begin Patch\n*** Add File: a\n+x\n", "last line"),  # no End Patch
    ("*** Begin Patch", "last line"),
    ("--- a/f.py\n+++ b/f.py\n@@ -1 +1 @@\n-a\n+b\n", "must be '*** Begin Patch'"),  # unified diff
    (f"apply_patch <<-'EOF'\n{BODY}\nEOF\n", "'<<-'"),
    (f"apply_patch <<'EOF'\n{BODY}\nEOF\necho done\n", "commands after the heredoc"),
    (f"apply_patch <<'EOF'\n{BODY}\n", "not closed"),
    (f"apply_patch foo <<'EOF'\n{BODY}\nEOF\n", "unsupported invocation"),
    (f"echo hi && apply_patch <<'EOF'\n{BODY}\nEOF\n", "must be '*** Begin Patch'"),
    (f"apply_patch <<'EOF\n{BODY}\nEOF\n", "cannot read the command line"),
    ("", "empty patch text"),
    ("*** Begin Patch\n*** End Patch", "empty patch"),
    ("*** Begin Patch\n*** Update File: f\n*** End Patch", "has no changes"),
    ("*** Begin Patch\n*** Frobnicate File: f\n*** End Patch", "not a valid section header"),
    ("*** Begin Patch\n*** Update File: f\n@@\n*** End Patch", "no lines"),
    ("*** Begin Patch\n*** Update File: f\n@@\nbad\n*** End Patch", "unexpected line"),
    ("*** Begin Patch\n*** Update File: f\n@@\n-a\n+b\nbad\n*** End Patch", "expected a '@@'"),
    ("*** Begin Patch\n*** Update File: f\n@@\n*** End of File\n*** End Patch", "no lines"),
    ("*** Begin Patch\n*** Update File: f\n*** Move to: \n@@\n-a\n*** End Patch", "without a path"),
    ("*** Begin Patch\n*** Add File: a\n+x\n\n*** Delete File: b\n*** End Patch", "not a valid section header"),
])
def test_rejected_patches_report_a_problem(text: str, expect: str):
    patch = ap.parse(text)
    assert any(expect in p for p in patch.problems), patch.problems


def test_sections_read_before_an_error_are_kept():
    patch = ap.parse("*** Begin Patch\n*** Add File: keep.txt\n+k\n*** Bogus\n*** End Patch")
    assert patch.problems and [o.path for o in patch.ops] == ["keep.txt"]


def test_crlf_patch_reads_like_lf():
    lf = ap.parse("*** Begin Patch\n*** Update File: f\n@@ def g():\n a\n-b\n+c\n*** End of File\n*** End Patch\n")
    crlf = ap.parse("*** Begin Patch\r\n*** Update File: f\r\n@@ def g():\r\n a\r\n-b\r\n+c\r\n"
                    "*** End of File\r\n*** End Patch\r\n")
    assert crlf.problems == lf.problems == []
    (a,), (b,) = lf.ops, crlf.ops
    assert (a.path, repr(a.chunks)) == (b.path, repr(b.chunks))


def test_whitespace_padding_is_accepted_only_where_codex_accepts_it():
    patch = ap.parse("  *** Begin Patch  \n   *** Update File: f.txt   \n@@\n-a\n+b\n\t*** End Patch ")
    assert patch.problems == [] and patch.ops[0].path == "f.txt"
    # A padded Move to is not a Move to for Codex: it reads as a context line.
    moved = ap.parse("*** Begin Patch\n*** Update File: f\n *** Move to: g\n-a\n+b\n*** End Patch")
    assert moved.ops[0].move_to is None
    assert moved.ops[0].chunks[0].old_lines == ["*** Move to: g", "a"]


def test_chunk_structure():
    patch = ap.parse(
        "*** Begin Patch\n*** Update File: f\n"
        "\n  \n"  # blank lines before a chunk are skipped
        " first chunk has no header\n-x\n+y\n"
        "\n"  # inside a chunk, an empty line is an empty context line (as in Codex)
        "@@ class A\n@@     def m(self):\n \n-old\n+new\n+more\n"
        "@@\n+tail\n*** End of File\n"
        "*** End Patch")
    assert patch.problems == []
    c1, c2, c3 = patch.ops[0].chunks
    assert (c1.contexts, c1.old_lines, c1.new_lines) == ([], ["first chunk has no header", "x", ""],
                                                         ["first chunk has no header", "y", ""])
    assert c2.contexts == ["class A", "    def m(self):"]
    assert (c2.old_lines, c2.new_lines, c2.added) == (["", "old"], ["", "new", "more"], ["new", "more"])
    assert (c3.old_lines, c3.added, c3.eof) == ([], ["tail"], True)
    assert patch.ops[0].added == ["y", "new", "more", "tail"]


def test_add_file_without_lines_is_an_empty_file():
    patch = ap.parse("*** Begin Patch\n*** Add File: empty.txt\n*** End Patch")
    assert patch.problems == [] and patch.ops[0].content == ""


def test_unicode_paths_and_text():
    patch = ap.parse("*** Begin Patch\n*** Add File: dïr/naïve ✅.md\n+café ✅\n*** End Patch")
    assert patch.ops[0].path == "dïr/naïve ✅.md" and patch.ops[0].added == ["café ✅"]


def test_ten_megabyte_patch_parses_quickly():
    lines = "".join(f"+line {i} " + "x" * 90 + "\n" for i in range(100_000))
    text = f"*** Begin Patch\n*** Add File: big.txt\n{lines}*** End Patch\n"
    assert len(text) > 10_000_000
    started = time.perf_counter()
    patch = ap.parse(text)
    assert time.perf_counter() - started < 5  # generous: a hang or quadratic blow-up fails
    assert patch.problems == [] and len(patch.ops[0].lines) == 100_000


# ----------------------------------------------------------------------------- rebuild


def _update(body: str) -> list[ap.Chunk]:
    patch = ap.parse(f"*** Begin Patch\n*** Update File: f\n{body}\n*** End Patch")
    assert patch.problems == []
    return patch.ops[0].chunks


def test_stacked_contexts_narrow_the_search():
    original = "class A:\n    def m(self):\n        return 1\nclass B:\n    def m(self):\n        return 1\n"
    chunks = _update("@@ class B:\n@@     def m(self):\n-        return 1\n+        return 2")
    rebuilt, why = ap.apply_chunks(original, chunks)
    assert why is None
    assert rebuilt == original.replace("class B:\n    def m(self):\n        return 1",
                                       "class B:\n    def m(self):\n        return 2")


def test_ambiguous_anchor_is_reported_not_guessed():
    original = "x = 1\ny = 2\nx = 1\n"
    rebuilt, why = ap.apply_chunks(original, _update("@@\n-x = 1\n+x = 3"))
    assert rebuilt is None and why.startswith("anchor ambiguous")
    rebuilt, why = ap.apply_chunks(original, _update("@@\n y = 2\n-x = 1\n+x = 3"))
    assert why is None and rebuilt == "x = 1\ny = 2\nx = 3\n"


def test_ambiguous_context_header_is_reported():
    original = "def f():\n    a\ndef f():\n    b\n"
    rebuilt, why = ap.apply_chunks(original, _update("@@ def f():\n-    b\n+    c"))
    assert rebuilt is None and why.startswith("anchor ambiguous") and "def f()" in why


@pytest.mark.parametrize("original", [
    "    value = 1   \n",  # whitespace differs
    "msg = \u201chello\u201d\n",  # typographic quotes
    "a\u00a0=\u00a01\n",  # non-breaking spaces
])
def test_fuzzy_anchor_codex_would_accept_is_reported_as_fuzzy(original: str):
    body = {"    value = 1   \n": "-value = 1\n+value = 2",
            "msg = \u201chello\u201d\n": '-msg = "hello"\n+msg = "bye"',
            "a\u00a0=\u00a01\n": "-a = 1\n+a = 2"}[original]
    rebuilt, why = ap.apply_chunks(original, _update("@@\n" + body))
    assert rebuilt is None and why.startswith("anchor fuzzy")


def test_crlf_file_is_fuzzy_for_an_lf_patch():
    rebuilt, why = ap.apply_chunks("a\r\nb\r\n", _update("@@\n a\n-b\n+c"))
    assert rebuilt is None and why.startswith("anchor fuzzy")


def test_missing_anchor():
    rebuilt, why = ap.apply_chunks("a\nb\n", _update("@@\n-zzz\n+y"))
    assert rebuilt is None and why.startswith("anchor missing")


def test_end_of_file_anchor_must_be_at_the_end():
    original = "tail\nmiddle\ntail\n"
    rebuilt, why = ap.apply_chunks(original, _update("@@\n-tail\n+TAIL\n*** End of File"))
    assert why is None and rebuilt == "tail\nmiddle\nTAIL\n"  # not ambiguous: EOF pins it
    rebuilt, why = ap.apply_chunks(original, _update("@@\n-middle\n+M\n*** End of File"))
    assert rebuilt is None and why.startswith("anchor missing")


def test_chunks_apply_in_order_from_where_the_previous_one_ended():
    original = "a\nx\nb\nx\n"
    rebuilt, why = ap.apply_chunks(original, _update("@@\n a\n-x\n+1\n@@\n-x\n+2"))
    assert why is None and rebuilt == "a\n1\nb\n2\n"


def test_pure_addition_is_appended_at_the_end_as_codex_does():
    rebuilt, why = ap.apply_chunks("a\nb", _update("@@ a\n+new"))
    assert why is None and rebuilt == "a\nb\nnew\n"


def test_trailing_blank_old_line_is_retried_without_it():
    # A trailing empty context line stands for the file's final newline.
    rebuilt, why = ap.apply_chunks("a\nb\n", _update("@@\n a\n-b\n+c\n"))
    assert why is None and rebuilt == "a\nc\n"
    chunk = ap.Chunk(1)
    chunk.old_lines, chunk.new_lines, chunk.added = ["b", ""], ["c", ""], ["c"]
    rebuilt, why = ap.apply_chunks("a\nb", [chunk])
    assert why is None and rebuilt == "a\nc\n"


def test_empty_file_and_whole_file_replacement():
    assert ap.apply_chunks("", _update("@@\n+only")) == ("only\n", None)
    assert ap.apply_chunks("old\n", _update("@@\n-old")) == ("", None)


# ----------------------------------------------------------------------------- never raises


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(list("*@ +-\n\r\tEOFabc:'\"<&") + [
    "*** Begin Patch\n", "*** End Patch\n", "*** Add File: ", "*** Update File: ", "*** Delete File: ",
    "*** Move to: ", "@@ ", "*** End of File\n", "apply_patch <<'EOF'\n", "EOF\n", "cd x && "]),
    max_size=120).map("".join))
def test_parse_never_raises(text: str):
    patch = ap.parse(text)
    assert isinstance(patch.problems, list)
    for op in patch.ops:
        if op.op == ap.UPDATE:
            for original in ("", "a\nb\n", "EOF\n*** End Patch\n"):
                rebuilt, why = ap.apply_chunks(original, op.chunks)
                assert (rebuilt is None) == (why is not None)


def test_non_text_input_is_a_problem_not_a_crash():
    assert ap.parse(None).problems  # type: ignore[arg-type]
    assert ap.parse(b"*** Begin Patch").problems  # type: ignore[arg-type]
