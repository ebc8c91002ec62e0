"""The persistent index: only changed files are parsed again, and concurrent hooks are safe."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from tests.codegraph.conftest import build
from yupana.codegraph import index, store


@pytest.fixture
def parses(monkeypatch):
    """Count the files the index parses in this process."""
    seen: list[int] = []
    real = index._facts

    def counting(data: bytes):
        seen.append(len(data))
        return real(data)  # (facts, tree, seconds)

    monkeypatch.setattr(index, "_facts", counting)
    return seen


def _open(root):
    index.forget()
    return index.open_crate(str(root / "src" / "lib.rs"), str(root), time.monotonic() + 30)


def test_build_indexes_every_file_of_the_crate(heck):
    ci = build(heck)
    assert ci.complete and sorted(ci.files) == sorted(f"src/{p.name}" for p in (heck / "src").glob("*.rs"))
    ci = _open(heck)
    transform = [s for s in ci.symbols_of("src/lib.rs") if s[1] == "transform"]
    assert transform and transform[0][2] == "fn" and transform[0][10] == 4
    assert ci.crate.name == "heck" and "unicode_segmentation" in ci.crate.deps


def test_warm_open_parses_nothing(heck, parses):
    build(heck)
    parses.clear()
    ci = _open(heck)
    assert ci.complete and parses == []


def test_only_the_changed_file_is_parsed_again(heck, parses):
    build(heck)
    parses.clear()
    snake = heck / "src" / "snake.rs"
    snake.write_text(snake.read_text() + "\npub fn snake_extra(a: u8, b: u8) -> u8 { a + b }\n")
    ci = _open(heck)
    assert len(parses) == 1 and parses[0] == snake.stat().st_size
    assert any(s[1] == "snake_extra" and s[10] == 2 for s in ci.symbols_of("src/snake.rs"))
    parses.clear()
    _open(heck)
    assert parses == []  # written back: the next process does not parse it again


def test_same_content_new_mtime_is_not_parsed(heck, parses):
    build(heck)
    parses.clear()
    os.utime(heck / "src" / "kebab.rs", (time.time() + 5, time.time() + 5))
    _open(heck)
    assert parses == []


def test_new_and_deleted_files_are_noticed(heck):
    build(heck)
    (heck / "src" / "extra.rs").write_text("pub fn from_extra() {}\n")
    (heck / "src" / "title.rs").unlink()
    ci = _open(heck)
    assert "src/extra.rs" in ci.files and "src/title.rs" not in ci.files
    assert ci.symbols_named(["AsTitleCase"]) == []
    assert [r[7] for r in ci.symbols_named(["from_extra"])] == ["src/extra.rs"]


def test_a_busy_index_answers_from_memory(heck, isolated_index):
    build(heck)
    blocker = store.Store(store.index_path(str(heck)))
    blocker.begin()  # another process is writing
    try:
        snake = heck / "src" / "snake.rs"
        snake.write_text(snake.read_text() + "\npub fn only_in_memory() {}\n")
        ci = _open(heck)
        assert "src/snake.rs" in ci.overlay and any("memory" in n for n in ci.notes)
        assert [r[7] for r in ci.symbols_named(["only_in_memory"])] == ["src/snake.rs"]
        assert ci.names_known(["only_in_memory"]) == {"only_in_memory": {"fn"}}
    finally:
        blocker.rollback()
        blocker.close()
    index.forget()
    ci = _open(heck)  # the lock is free again: the next process writes it
    assert not ci.overlay and [r[7] for r in ci.symbols_named(["only_in_memory"])] == ["src/snake.rs"]


def test_a_deadline_already_past_opens_no_index(heck):
    """Opening (and freshening) the index is work: once the deadline has passed it is cut."""
    from yupana.codegraph import parse

    index.forget()
    with pytest.raises(parse.Cancelled, match="before the crate's index was opened"):
        index.open_crate(str(heck / "src" / "lib.rs"), str(heck), time.monotonic() - 0.001)


def test_an_index_of_another_version_is_rebuilt(heck):
    build(heck)
    path = store.index_path(str(heck))
    st = store.Store(path)
    st.db.execute("UPDATE meta SET v='0.0' WHERE k='schema'")
    st.close()
    ci = _open(heck)
    assert ci.complete and ci.symbols_named(["transform"])


_WORKER = r"""
import os, sys, time
from yupana.codegraph import index
root, n = sys.argv[1], int(sys.argv[2])
for i in range(15):
    path = os.path.join(root, "src", f"gen_{n}.rs")
    with open(path, "w") as fh:
        fh.write(f"pub fn gen_{n}_{i}(x: u32) -> u32 {{ x + {i} }}\n")
    index.forget()
    ci = index.open_crate(os.path.join(root, "src", "lib.rs"), root, time.monotonic() + 5)
    assert [r[2] for r in ci.symbols_named([f"gen_{n}_{i}"])] == [f"gen_{n}_{i}"], (n, i)
print("ok")
"""


def test_concurrent_hook_processes_keep_the_index_consistent(heck, isolated_index):
    build(heck)
    env = dict(os.environ, YUPANA_CODEGRAPH_DIR=str(isolated_index))
    procs = [subprocess.Popen([sys.executable, "-c", _WORKER, str(heck), str(n)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) for n in range(4)]
    outs = [p.communicate(timeout=240) for p in procs]
    assert all(p.returncode == 0 for p in procs), [o[1][-800:] for o in outs]
    st = store.Store(store.index_path(str(heck)))
    assert st.db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    st.close()
    ci = _open(heck)
    for n in range(4):  # what is on disk now is what the index holds
        assert [r[2] for r in ci.symbols_named([f"gen_{n}_14"])] == [f"gen_{n}_14"]
        assert ci.symbols_named([f"gen_{n}_3"]) == []


def test_after_the_edit_lands_a_detached_refresher_indexes_it(heck, monkeypatch):
    from tests.codegraph.conftest import file_edit
    from yupana.codegraph import blast

    monkeypatch.setenv("YUPANA_CODEGRAPH_WATCH", "1")
    build(heck)
    old = "fn capitalize(s: &str, f: &mut fmt::Formatter) -> fmt::Result {"
    new = old + "\n    let _landed = 1;"
    edit = file_edit(heck, "src/lib.rs", old, new)
    assert isinstance(blast.measure(edit, str(heck), 5, time.monotonic() + 10), blast.BlastResult)
    lib = heck / "src" / "lib.rs"
    time.sleep(0.2)
    lib.write_text(lib.read_text().replace(old, new))  # the tool applies the edit
    digest = store.content_hash(lib.read_bytes())
    st = store.Store(store.index_path(str(heck)))
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        row = st.db.execute("SELECT hash FROM files WHERE rel='src/lib.rs'").fetchone()
        if row and row[0] == digest:
            break
        time.sleep(0.1)
    st.close()
    assert row and row[0] == digest  # indexed without any hook having to parse it
