"""Where an edit changes a file: anchors for Edit/MultiEdit, a line diff for everything else."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.codegraph.conftest import DATA
from yupana.codegraph import spans

LIB = (DATA / "heck" / "src" / "lib.rs").read_bytes()


def _apply(old: bytes, changes, new: bytes) -> bytes:
    out, at = [], 0
    for os_, oe, ns, ne in changes:
        out.append(old[at:os_])
        out.append(new[ns:ne])
        at = oe
    out.append(old[at:])
    return b"".join(out)


def test_an_edit_anchor_is_trimmed_to_what_differs():
    old_s = "fn lowercase(s: &str, f: &mut fmt::Formatter) -> fmt::Result {"
    new_s = "fn lowercase(s: &str, f: &mut fmt::Formatter<'_>) -> fmt::Result {"
    new = LIB.replace(old_s.encode(), new_s.encode())
    (change,) = spans.changes([(old_s, new_s)], [False], LIB, new)
    os_, oe, ns, ne = change
    assert (oe - os_, new[ns:ne]) == (0, b"<'_>")
    assert LIB[:os_].endswith(b"fmt::Formatter")


def test_replace_all_marks_every_occurrence():
    new = LIB.replace(b"fmt::Result", b"std::fmt::Result")
    changes = spans.changes([("fmt::Result", "std::fmt::Result")], [True], LIB, new)
    assert len(changes) == LIB.count(b"fmt::Result")
    assert _apply(LIB, changes, new) == new


def test_multi_edit_far_apart_gives_separate_changes():
    a, b = "mod kebab;", "    s.to_uppercase()"
    if b.encode() not in LIB:
        b = "fn capitalize("
    new = LIB.replace(a.encode(), b"mod kebab;\nmod extra;").replace(b.encode(), (b + " ").encode(), 1)
    changes = spans.changes([(a, "mod kebab;\nmod extra;"), (b, b + " ")], [False, False], LIB, new)
    assert len(changes) == 2 and _apply(LIB, changes, new) == new


def test_a_write_is_diffed_into_hunks_not_one_span():
    text = LIB.decode()
    new = text.replace("mod kebab;", "mod kebab;\nmod extra;").replace(
        "fn capitalize(", "fn capitalize_words(").encode()
    changes = spans.diff(LIB, new)
    assert len(changes) == 2 and _apply(LIB, changes, new) == new
    assert all(oe - os_ < 40 for os_, oe, _, _ in changes)


def test_anchor_made_by_an_earlier_replacement_falls_back_to_the_diff():
    old = b"fn a() {}\nfn b() {}\n"
    new = b"fn a() { c() }\nfn b() {}\n"
    # the second anchor only exists after the first replacement
    changes = spans.changes([("fn a() {}", "fn a() { x }"), ("{ x }", "{ c() }")], [False, False], old, new)
    assert _apply(old, changes, new) == new


def test_new_file_is_one_insertion():
    assert spans.diff(b"", b"fn main() {}\n") == [(0, 0, 0, 13)]


lines = st.lists(st.sampled_from([b"fn a() {}\n", b"}\n", b"let x = 1;\n", b"// c\n", b"use std::fmt;\n", b"\n",
                                  b"    x + 1\n", b"mod m;\n"]), max_size=25)


@settings(max_examples=300, deadline=None)
@given(lines, lines)
def test_diff_changes_rebuild_the_new_buffer(a, b):
    old, new = b"".join(a), b"".join(b)
    changes = spans.diff(old, new)
    assert _apply(old, changes, new) == new
    assert all(os_ <= oe and ns <= ne for os_, oe, ns, ne in changes)
    assert all(x[1] <= y[0] for x, y in zip(changes, changes[1:]))
