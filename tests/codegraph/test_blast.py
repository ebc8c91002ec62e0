"""Blast radius on heck 0.4.0 (a real crate), against expectations worked out by hand.

heck's modules each implement ``fmt::Display`` for an ``As…Case`` wrapper by calling the
crate-private helpers of lib.rs (``transform``, ``lowercase``, ``uppercase``, ``capitalize``):

* ``lowercase`` (lib.rs) is named by the ``fmt`` methods of kebab.rs, lower_camel.rs and
  snake.rs, and called by ``capitalize`` (lib.rs) — hop 1;
* ``capitalize`` is named by the ``fmt`` methods of title.rs and upper_camel.rs (and
  lower_camel.rs, already reached) — hop 2; nothing calls ``.fmt`` directly — the walk ends.
* ``AsSnakeCase`` (snake.rs) is named by its ``Display`` impl header and constructed in
  ``impl ToSnakeCase for str { fn to_snake_case }`` — hop 1; ``to_snake_case`` is called by
  the blanket ``to_snek_case`` and by the body of snake.rs's test macro ``t!``
  (``$s1.to_snake_case()``) — hop 2; the ``t!(…)`` invocations sit in snake.rs's
  ``mod tests`` — hop 3. Every other module defines its own ``t!``: theirs are not reached.
"""

from __future__ import annotations

import os
import time

from tests.codegraph.conftest import build, file_edit
from yupana.codegraph import blast

LOWERCASE_OLD = '            write!(f, "{}", c.to_lowercase())?;'
LOWERCASE_NEW = '            write!(f, "{}", c.to_lowercase().next().unwrap_or(c))?;'


def _measure(root, edit, hops=5, **kw):
    return blast.measure(edit, str(root), hops, time.monotonic() + 10, **kw)


def test_helper_edit_reaches_every_formatter_that_uses_it(heck):
    build(heck)
    result = _measure(heck, file_edit(heck, "src/lib.rs", LOWERCASE_OLD, LOWERCASE_NEW))
    assert isinstance(result, blast.BlastResult), result
    assert result.touched == ["src/lib.rs: lowercase (fn)"]
    got = {(rel, name, hop) for rel, name, _kind, hop in result.impacted}
    assert got == {
        ("src/lib.rs", "lowercase", 0),
        ("src/kebab.rs", "AsKebabCase::fmt", 1),
        ("src/lower_camel.rs", "AsLowerCamelCase::fmt", 1),
        ("src/snake.rs", "AsSnakeCase::fmt", 1),
        ("src/lib.rs", "capitalize", 1),
        ("src/title.rs", "AsTitleCase::fmt", 2),
        ("src/upper_camel.rs", "AsUpperCamelCase::fmt", 2),
    }
    assert (result.symbols, result.files) == (7, 6)
    assert result.tier == "tree-sitter"


def test_max_hops_bounds_the_walk(heck):
    build(heck)
    one = _measure(heck, file_edit(heck, "src/lib.rs", LOWERCASE_OLD, LOWERCASE_NEW), hops=1)
    assert (one.symbols, one.files) == (5, 4)
    zero = _measure(heck, file_edit(heck, "src/lib.rs", LOWERCASE_OLD, LOWERCASE_NEW), hops=0)
    assert (zero.symbols, zero.files) == (1, 1)


def test_type_edit_reaches_its_impl_and_constructors(heck):
    build(heck)
    edit = file_edit(heck, "src/snake.rs", "pub struct AsSnakeCase<T: AsRef<str>>(pub T);",
                     "pub struct AsSnakeCase<T: AsRef<str>>(pub T, usize);")
    result = _measure(heck, edit)
    got = sorted((name, kind, hop) for _rel, name, kind, hop in result.impacted)
    assert got == [("AsSnakeCase", "impl", 1), ("AsSnakeCase", "struct", 0), ("T::to_snek_case", "method", 2),
                   ("str::to_snake_case", "method", 1), ("t", "macro", 2), ("tests", "mod", 3)]
    assert result.impacted_files == ["src/snake.rs"]


def test_edit_between_items_touches_nothing(heck):
    build(heck)
    edit = file_edit(heck, "src/snake.rs", "use std::fmt;\n", "use std::fmt;\nuse std::borrow::Cow;\n")
    result = _measure(heck, edit)
    assert (result.symbols, result.files, result.touched) == (0, 0, [])


def test_limits_stop_the_walk_early_with_lower_bounds(heck):
    build(heck)
    result = _measure(heck, file_edit(heck, "src/lib.rs", LOWERCASE_OLD, LOWERCASE_NEW), limit_symbols=2)
    assert result.symbols > 2 and not result.complete and result.hops == 1


def test_a_new_file_impacts_nothing(heck):
    build(heck)
    result = _measure(heck, file_edit(heck, "src/extra.rs", content="pub fn extra() {}\n"))
    assert isinstance(result, blast.BlastResult) and result.symbols == 0


def test_unmeasured_kinds_are_never_a_clean_zero(heck):
    build(heck)
    py = _measure(heck, file_edit(heck, "tools/gen.py", content="print(1)\n"))
    assert isinstance(py, blast.Unmeasured) and py.kind == "no-grammar"
    missing = _measure(heck, file_edit(heck, "src/lib.rs", "fn this_is_not_there()", "fn x()"))
    assert isinstance(missing, blast.Unmeasured) and missing.kind == "no-anchors"
    (heck / "src" / "dir.rs").mkdir()
    unreadable = _measure(heck, file_edit(heck, "src/dir.rs", "a", "b"))
    assert isinstance(unreadable, blast.Unmeasured) and unreadable.kind == "unreadable"
    late = blast.measure(file_edit(heck, "src/lib.rs", LOWERCASE_OLD, LOWERCASE_NEW), str(heck), 5,
                         time.monotonic() - 1)
    assert isinstance(late, blast.Unmeasured) and late.kind == "deadline"


def test_cold_index_is_unmeasured_then_a_background_build_makes_it_warm(heck, isolated_index):
    edit = file_edit(heck, "src/lib.rs", LOWERCASE_OLD, LOWERCASE_NEW)
    first = blast.measure(edit, str(heck), 5, time.monotonic() + 0.001)
    assert isinstance(first, blast.Unmeasured) and first.kind == "deadline"
    assert "background build" in first.reason
    from yupana.codegraph import index

    index.forget()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # the detached builder started above finishes on its own
        result = blast.measure(file_edit(heck, "src/lib.rs", LOWERCASE_OLD, LOWERCASE_NEW), str(heck), 5,
                               time.monotonic() + 0.05)
        index.forget()
        if isinstance(result, blast.BlastResult):
            break
        time.sleep(0.2)
    assert isinstance(result, blast.BlastResult), result
    assert result.symbols == 7


def test_edited_file_changed_on_disk_is_reindexed_before_measuring(heck):
    build(heck)
    lib = heck / "src" / "lib.rs"
    text = lib.read_text()
    # Another edit already landed: capitalize no longer calls lowercase.
    lib.write_text(text.replace("            lowercase(&s[i..], f)?;", "            f.write_str(&s[i..])?;"))
    os.utime(lib, None)
    result = _measure(heck, file_edit(heck, "src/lib.rs", LOWERCASE_OLD, LOWERCASE_NEW))
    names = {name for _rel, name, _kind, _hop in result.impacted}
    assert "capitalize" not in names and "AsTitleCase::fmt" not in names
    assert result.symbols == 4


def test_a_few_other_files_behind_still_measure_and_say_so(heck, monkeypatch):
    from yupana.codegraph import index

    build(heck)
    kebab = heck / "src" / "kebab.rs"
    kebab.write_text(kebab.read_text() + "\n// a later edit\n")
    real = index.CrateIndex.refresh

    def slow_others(self, deadline_at, first=None, **kw):  # only the edited file fits in time
        index._rate["bps"] = 1.0
        try:
            return real(self, deadline_at, first, **kw)
        finally:
            index._rate.pop("bps", None)

    monkeypatch.setattr(index.CrateIndex, "refresh", slow_others)
    lib = heck / "src" / "lib.rs"
    lib.write_text(lib.read_text() + "\n// this file changed too\n")
    result = _measure(heck, file_edit(heck, "src/lib.rs", LOWERCASE_OLD, LOWERCASE_NEW))
    assert isinstance(result, blast.Unmeasured)  # the edited file itself could not be re-read in time
    monkeypatch.setattr(index.CrateIndex, "refresh", real)
    index.forget()
    index.open_crate(str(lib), str(heck), time.monotonic() + 10)  # lib.rs indexed again; kebab.rs too
    index.forget()
    kebab.write_text(kebab.read_text() + "\n// and again\n")
    monkeypatch.setattr(index.CrateIndex, "refresh", slow_others)
    result = _measure(heck, file_edit(heck, "src/lib.rs", LOWERCASE_OLD, LOWERCASE_NEW))
    assert isinstance(result, blast.BlastResult) and result.symbols == 7
    assert any("src/kebab.rs" in n for n in result.notes)
