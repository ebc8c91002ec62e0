"""Parse errors an edit introduces outside the bytes it changed make the verdict UNKNOWN
(``unparseable``), on the windowed path (a real crate, its index built) and whole-file; errors
the file had before are not counted against the edit (issue 23 §7)."""

from __future__ import annotations

import time

import pytest

from tests.codegraph.conftest import build, file_edit
from yupana.codegraph import verify

SNAKE_FMT = '        transform(self.0.as_ref(), lowercase, |f| write!(f, "_"), f)'
CALL = "        let s = snakify(self.0.as_ref());\n"


def _verify(root, edit):
    return verify.verify_edit(edit, str(root), time.monotonic() + 10)


@pytest.mark.parametrize("new", [CALL + SNAKE_FMT + "\n    }", CALL + SNAKE_FMT + "\n    }\n    }"],
                         ids=["stray-brace", "two-stray-braces"])
@pytest.mark.parametrize("indexed", [True, False], ids=["windowed", "whole-file"])
def test_a_break_outside_the_changed_bytes_is_no_verdict(heck, new, indexed):
    if indexed:
        build(heck)
    result = _verify(heck, file_edit(heck, "src/snake.rs", SNAKE_FMT, new))
    assert result is not None and result.unparseable is not None and result.violations == []
    clean = _verify(heck, file_edit(heck, "src/snake.rs", SNAKE_FMT, CALL + SNAKE_FMT))
    if indexed or clean is not None:  # without an index, a clean search is no opinion
        assert [v["symbol"] for v in clean.violations] == ["snakify"] and clean.unparseable is None


def test_errors_the_file_already_had_are_not_the_edits(heck):
    snake = heck / "src" / "snake.rs"
    snake.write_text(snake.read_text() + "\nfn already_broken( {\n")
    build(heck)
    result = _verify(heck, file_edit(heck, "src/snake.rs", SNAKE_FMT, CALL + SNAKE_FMT))
    assert result is not None and result.unparseable is None
    assert [v["symbol"] for v in result.violations] == ["snakify"]
