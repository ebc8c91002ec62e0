"""Buffer verification on real code: what an edit introduces that resolves to nothing.

The edits are the kind an agent gets wrong — a helper that does not exist, a call with an
argument too few, an import of a crate the manifest does not name, a ``mod`` with no file —
applied to heck 0.4.0, a real crate. The false-positive checks verify real files against
themselves with everything counted as introduced.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from tests.codegraph.conftest import REGISTRY, build, file_edit
from yupana.codegraph import index, verify

SNAKE_FMT = '        transform(self.0.as_ref(), lowercase, |f| write!(f, "_"), f)'


def _verify(root, edit, **kw):
    return verify.verify_edit(edit, str(root), time.monotonic() + 10, **kw)


def _kinds(result) -> list[tuple[str, str]]:
    return [(v["kind"], v["symbol"]) for v in result.violations]


def test_hallucinated_helper_is_a_violation_with_its_line(heck):
    build(heck)
    new = '        let s = snakify(self.0.as_ref());\n        transform(&s, lowercase, |f| write!(f, "_"), f)'
    result = _verify(heck, file_edit(heck, "src/snake.rs", SNAKE_FMT, new))
    assert _kinds(result) == [("identifier-does-not-exist", "snakify")]
    assert result.violations[0]["line"] == 55 and not result.ok
    assert result.as_json()["tier"] == "tree_sitter"


def test_names_in_std_format_macros_are_checked(heck):
    build(heck)
    new = '        transform(self.0.as_ref(), lowercase, |f| write!(f, "{}", separator), f)'
    result = _verify(heck, file_edit(heck, "src/snake.rs", SNAKE_FMT, new))
    assert _kinds(result) == [("identifier-does-not-exist", "separator")]


def test_crate_item_not_imported_here_is_named_as_such(heck):
    build(heck)
    new = SNAKE_FMT + "?;\n        capitalize(\"x\", f)"
    result = _verify(heck, file_edit(heck, "src/snake.rs", SNAKE_FMT, new))
    assert _kinds(result) == [("identifier-does-not-exist", "capitalize")]
    assert "not imported" in result.violations[0]["message"]


def test_wrong_arity_free_function_imported_from_the_crate(heck):
    build(heck)
    result = _verify(heck, file_edit(heck, "src/snake.rs", SNAKE_FMT, "        transform(self.0.as_ref(), lowercase, f)"))
    assert _kinds(result) == [("wrong-arity", "transform")]
    assert "takes 4 argument(s) but is called with 3" in result.violations[0]["message"]
    assert "src/lib.rs:75" in result.violations[0]["message"]


def test_wrong_arity_through_a_crate_path(heck):
    build(heck)
    new = SNAKE_FMT + "?;\n        crate::capitalize(\"x\", f, 3)"
    result = _verify(heck, file_edit(heck, "src/snake.rs", SNAKE_FMT, new))
    assert _kinds(result) == [("wrong-arity", "crate::capitalize")]


def test_wrong_arity_of_an_associated_function_and_through_self(heck):
    build(heck)
    lib = heck / "src" / "lib.rs"
    lib.write_text(lib.read_text() + "\npub struct Scanner;\n\nimpl Scanner {\n    pub fn new(limit: usize) -> Self {\n"
                   "        let _ = limit;\n        Scanner\n    }\n}\n")
    build(heck)
    old = "fn get_iterator(s: &str) -> impl Iterator<Item = &str> {"
    new = old + "\n    let _scanner = Scanner::new();"
    assert _kinds(_verify(heck, file_edit(heck, "src/lib.rs", old, new))) == [("wrong-arity", "Scanner::new")]
    old = "        let _ = limit;"
    new = "        let _ = limit;\n        let _again = Self::new(limit, 2);"
    assert _kinds(_verify(heck, file_edit(heck, "src/lib.rs", old, new))) == [("wrong-arity", "Scanner::new")]


def test_removing_an_argument_is_checked_too(heck):
    build(heck)
    new = '        transform(self.0.as_ref(), |f| write!(f, "_"), f)'
    assert _kinds(_verify(heck, file_edit(heck, "src/snake.rs", SNAKE_FMT, new))) == [("wrong-arity", "transform")]


def test_unresolved_imports(heck):
    build(heck)
    use = "use crate::{lowercase, transform};"
    bad_crate = _verify(heck, file_edit(heck, "src/snake.rs", use, use + "\nuse fancy_case::Convert;"))
    assert _kinds(bad_crate) == [("unresolved-import", "fancy_case::Convert")]
    bad_path = _verify(heck, file_edit(heck, "src/snake.rs", use, "use crate::{lowercase, transform, helpers::snakify};"))
    assert _kinds(bad_path) == [("unresolved-import", "crate::helpers::snakify")]
    dependency = _verify(heck, file_edit(heck, "src/snake.rs", use, use + "\nuse unicode_segmentation::UnicodeSegmentation;"))
    assert dependency.ok  # an (optional) dependency in Cargo.toml


def test_mod_without_a_file(heck, tmp_path):
    build(heck)
    anchor = "mod upper_camel;"
    result = _verify(heck, file_edit(heck, "src/lib.rs", anchor, anchor + "\nmod ghost;"))
    assert _kinds(result) == [("unresolved-import", "ghost")]
    assert "src/ghost.rs" in result.violations[0]["message"]
    created = str(heck / "src" / "ghost.rs")  # the same patch adds the file
    assert _verify(heck, file_edit(heck, "src/lib.rs", anchor, anchor + "\nmod ghost;"), created=[created]).ok
    (heck / "src" / "ghost").mkdir()
    (heck / "src" / "ghost" / "mod.rs").write_text("")
    assert _verify(heck, file_edit(heck, "src/lib.rs", anchor, anchor + "\nmod ghost;")).ok


def test_correct_edits_pass(heck):
    build(heck)
    new = ('        let word = self.0.as_ref();\n'
           '        transform(word, lowercase, |f| write!(f, "{}", "_"), f)')
    assert _verify(heck, file_edit(heck, "src/snake.rs", SNAKE_FMT, new)).violations == []
    multi = file_edit(heck, "src/snake.rs", edits=[
        ("use std::fmt;", "use std::fmt;\nuse std::borrow::Cow;"),
        (SNAKE_FMT, '        let c: Cow<str> = Cow::Borrowed(self.0.as_ref());\n'
                    '        transform(&c, lowercase, |f| write!(f, "_"), f)'),
    ])
    assert _verify(heck, multi).violations == []


def test_pre_existing_breakage_is_not_the_edits_business(heck):
    snake = heck / "src" / "snake.rs"
    snake.write_text(snake.read_text().replace("        self.to_snake_case()", "        self.to_snake_case(); legacy_helper()"))
    build(heck)
    result = _verify(heck, file_edit(heck, "src/snake.rs", "use std::fmt;", "use std::fmt;\nuse std::borrow::Cow;"))
    assert result.violations == []
    moved = _verify(heck, file_edit(heck, "src/snake.rs", SNAKE_FMT, SNAKE_FMT + "?;\n        legacy_helper();\n        Ok(())"))
    assert moved.violations == []  # the name was already in the file: not introduced by this edit


def test_unknown_sources_are_unchecked_never_violations(heck):
    build(heck)
    use = "use crate::{lowercase, transform};"
    result = _verify(heck, file_edit(heck, "src/snake.rs", use + "\n",
                                     use + "\nuse unicode_segmentation::*;\nfn probe() -> usize { grapheme_count() }\n"))
    assert result.violations == []
    assert any(u["symbol"] == "grapheme_count" and "glob" in u["reason"] for u in result.unchecked)


def test_no_opinion_without_a_buffer_or_for_other_languages(heck):
    build(heck)
    assert _verify(heck, file_edit(heck, "src/snake.rs", "not in the file", "x")) is None
    assert _verify(heck, file_edit(heck, "README.md", content="# heck\n")) is None


def test_an_index_still_being_built_gives_no_clean_verdict(heck, monkeypatch):
    """Cold crate: a name from another file cannot be judged, so the verdict is no opinion
    (the hook records UNKNOWN) — but what is certain without the index is still reported."""
    monkeypatch.setitem(index._rate, "bps", 1.0)  # every file looks too slow to parse in time
    edit = file_edit(heck, "src/snake.rs", SNAKE_FMT, SNAKE_FMT + "?;\n        snakify(f)")
    assert verify.verify_edit(edit, str(heck), time.monotonic() + 5) is None
    index.forget()
    anchor = "use crate::{lowercase, transform};"
    certain = _verify(heck, file_edit(heck, "src/snake.rs", anchor, anchor + "\nmod ghost;"))
    assert certain is not None and _kinds(certain) == [("unresolved-import", "ghost")] and not certain.complete


def _self_verify(crate_dir: Path) -> tuple[int, list[tuple[str, dict]]]:
    ci = build(crate_dir)
    ci = index.open_crate(str(crate_dir / "Cargo.toml"), str(crate_dir), time.monotonic() + 30)
    bad = []
    for rel in sorted(ci.files):
        data = (crate_dir / rel).read_bytes()
        env = verify.Env(str(crate_dir / rel), ci.crate, ci, rel, ci.info(rel))
        result = verify.verify_source(data, [(0, len(data))], env, None)
        bad += [(rel, v) for v in result.violations]
    return len(ci.files), bad


def test_heck_verified_against_itself_has_no_violations(heck):
    files, bad = _self_verify(heck)
    assert files == 8 and bad == []


@pytest.mark.parametrize("crate", ["serde-1.0.152", "mio-0.8.4", "regex-1.7.1"])
def test_real_crates_verified_against_themselves_have_no_violations(crate, tmp_path):
    src = REGISTRY / crate
    if not src.is_dir():
        pytest.skip(f"{src} not installed (apt-get install librust-{crate.rsplit('-', 1)[0]}-dev)")
    import shutil

    root = tmp_path / crate
    shutil.copytree(src, root, ignore=shutil.ignore_patterns("debian"))
    if crate.startswith("mio"):  # Debian's packaging removed the Windows-only dependency from Cargo.toml
        with open(root / "Cargo.toml", "a") as fh:
            fh.write('\n[target."cfg(windows)".dependencies.windows-sys]\nversion = "0.36"\n')
    files, bad = _self_verify(root)
    assert files > 10
    assert bad == [], bad[:5]
    assert os.path.exists(root / "Cargo.toml")
