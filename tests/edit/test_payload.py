"""Hook payloads read into edits: every tool, every tolerated malformation, real files on disk."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time

from pathlib import Path

import pytest

from yupana.edit import payload
from yupana.edit.payload import parse, proposed_buffer

# The same location tests/conftest.py names (imported by value: several conftest modules exist).
CODEX_FIXTURES = Path(os.environ.get("YUPANA_SHARED_FIXTURES", "/work/shared/fixtures")) / "codex-apply-patch"


def _raw(tool: str | None = None, tool_input: object = None, cwd: object = None, **extra) -> bytes:
    data: dict = {"session_id": "s-1", "hook_event_name": "PreToolUse", "tool_use_id": "t-1", **extra}
    if tool is not None:
        data["tool_name"] = tool
    if tool_input is not None:
        data["tool_input"] = tool_input
    if cwd is not None:
        data["cwd"] = cwd
    return json.dumps(data).encode()


def _write(path, text: str) -> str:
    os.makedirs(os.path.dirname(str(path)), exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as fh:
        fh.write(text)
    return str(path)


# ----------------------------------------------------------------------------- not a payload


@pytest.mark.parametrize("raw", [
    b"", b"   \n", b"\xff\xfe\x00garbage\x80", b"{", b"{\"a\": }", b"[1, 2]", b"\"text\"", b"42",
    b"null", b"{} trailing", b"{\"a\": NaN}", b"[" * 100_000, os.urandom(4096),
])
def test_unparseable_input_is_none(raw: bytes):
    assert parse(raw) is None


def test_minimal_and_unknown_payloads():
    inv = parse(b"{}")
    assert inv is not None and inv.edits == [] and inv.problems == [] and inv.tool_name is None
    assert inv.cwd == os.getcwd()
    inv = parse(_raw("Read", {"file_path": "/x"}, "/repo", future_field={"nested": [1]}))
    assert inv.edits == [] and inv.problems == []
    assert inv.raw_keys == ["session_id", "hook_event_name", "tool_use_id", "future_field", "tool_name",
                            "tool_input", "cwd"]
    assert (inv.session_id, inv.tool_use_id, inv.event, inv.cwd) == ("s-1", "t-1", "PreToolUse", "/repo")


def test_utf8_bom_is_tolerated():
    assert parse(b"\xef\xbb\xbf" + _raw("Bash", {"command": "ls"})).command == "ls"


@pytest.mark.parametrize("field", ["session_id", "tool_use_id", "hook_event_name", "tool_name", "cwd"])
@pytest.mark.parametrize("value", [1, 2.5, True, [], {"a": 1}])
def test_mistyped_top_level_fields_are_absent_and_noted(field: str, value: object):
    data = json.loads(_raw("Edit", {"file_path": "/r/a.py", "old_string": "a", "new_string": "b"}, "/r"))
    data[field] = value
    inv = parse(json.dumps(data).encode())
    assert inv is not None
    assert any(field in p for p in inv.problems)
    attr = {"hook_event_name": "event"}.get(field, field)
    if field == "cwd":
        assert inv.cwd == os.getcwd()
    else:
        assert getattr(inv, attr) is None


def test_relative_payload_cwd_is_resolved_and_noted(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    inv = parse(_raw("Write", {"file_path": "f.txt", "content": "x"}, "sub"))
    assert inv.cwd == str(tmp_path / "sub") and inv.edits[0].path == str(tmp_path / "sub" / "f.txt")
    assert any("cwd is relative" in p for p in inv.problems)


# ----------------------------------------------------------------------------- Claude Code tools


def test_edit(tmp_path):
    f = _write(tmp_path / "src" / "a.py", "x = 1\ny = 2\n")
    inv = parse(_raw("Edit", {"file_path": f, "old_string": "y = 2", "new_string": "y = 3"}, str(tmp_path)))
    (edit,) = inv.edits
    assert (edit.op, edit.path, edit.rel, edit.outside) == ("edit", f, "src/a.py", False)
    assert edit.introduced == "y = 3"
    assert edit.replacements == [("y = 2", "y = 3")]
    assert proposed_buffer(edit) == "x = 1\ny = 3\n"
    assert inv.problems == [] and edit.problems == []


def test_edit_anchor_missing_or_ambiguous(tmp_path):
    f = _write(tmp_path / "a.py", "v = 1\nv = 1\n")
    miss = parse(_raw("Edit", {"file_path": f, "old_string": "zzz", "new_string": "q"})).edits[0]
    assert proposed_buffer(miss) is None and any("anchor missing" in p for p in miss.problems)
    amb = parse(_raw("Edit", {"file_path": f, "old_string": "v = 1", "new_string": "v = 2"})).edits[0]
    assert proposed_buffer(amb) is None and any("anchor ambiguous" in p and "2 times" in p for p in amb.problems)
    every = parse(_raw("Edit", {"file_path": f, "old_string": "v = 1", "new_string": "v = 2",
                                "replace_all": True})).edits[0]
    assert proposed_buffer(every) == "v = 2\nv = 2\n"


def test_edit_special_cases(tmp_path):
    new = str(tmp_path / "new.py")
    create = parse(_raw("Edit", {"file_path": new, "old_string": "", "new_string": "hi\n"})).edits[0]
    assert proposed_buffer(create) == "hi\n"
    f = _write(tmp_path / "a.py", "a\n")
    same = parse(_raw("Edit", {"file_path": f, "old_string": "a", "new_string": "a"})).edits[0]
    assert proposed_buffer(same) is None and any("equals new_string" in p for p in same.problems)
    gone = parse(_raw("Edit", {"file_path": str(tmp_path / "nope.py"), "old_string": "a",
                               "new_string": "b"})).edits[0]
    assert proposed_buffer(gone) is None and any("no such file" in p for p in gone.problems)
    crlf = _write(tmp_path / "w.txt", "one\r\ntwo\r\n")
    e = parse(_raw("Edit", {"file_path": crlf, "old_string": "one\ntwo", "new_string": "x"})).edits[0]
    assert proposed_buffer(e) is None and any("CRLF" in p for p in e.problems)
    binary = tmp_path / "b.bin"
    binary.write_bytes(b"\xff\xfe\x00\x01")
    e = parse(_raw("Edit", {"file_path": str(binary), "old_string": "a", "new_string": "b"})).edits[0]
    assert proposed_buffer(e) is None and any("not UTF-8" in p for p in e.problems)


def test_proposed_buffer_is_cached_and_reads_the_file_once(tmp_path):
    f = _write(tmp_path / "a.py", "a\n")
    edit = parse(_raw("Edit", {"file_path": f, "old_string": "a", "new_string": "b"})).edits[0]
    assert proposed_buffer(edit) == "b\n"
    os.unlink(f)
    assert proposed_buffer(edit) == "b\n"


@pytest.mark.parametrize("tool_input, field", [
    ({"file_path": 5, "old_string": "a", "new_string": "b"}, "file_path"),
    ({"file_path": "", "old_string": "a", "new_string": "b"}, "file_path"),
    ({"old_string": "a", "new_string": "b"}, "without file_path"),
    ({"file_path": "/r/a", "old_string": ["a"], "new_string": "b"}, "old_string"),
    ({"file_path": "/r/a", "old_string": "a", "new_string": None}, "old_string and new_string"),
    ({"file_path": "/r/a", "old_string": "a", "new_string": 7}, "new_string"),
    ({"file_path": "/r/a", "old_string": "a", "new_string": "b", "replace_all": "yes"}, "replace_all"),
    ({"file_path": "/r/a\u0000b", "old_string": "a", "new_string": "b"}, "NUL"),
])
def test_mistyped_edit_fields_are_noted_never_raised(tool_input: dict, field: str):
    inv = parse(_raw("Edit", tool_input, "/r"))
    noted = inv.problems + [p for e in inv.edits for p in e.problems]
    for e in inv.edits:
        proposed_buffer(e)
        noted += e.problems
    assert any(field in p for p in noted), noted


def test_multi_edit(tmp_path):
    f = _write(tmp_path / "m.py", "a = 1\nb = 2\nc = 3\n")
    inv = parse(_raw("MultiEdit", {"file_path": f, "edits": [
        {"old_string": "a = 1", "new_string": "a = 10"},
        {"old_string": "c = 3", "new_string": "c = 30"},
        {"old_string": "= 10", "new_string": "= 10  # ten"},
    ]}, str(tmp_path)))
    (edit,) = inv.edits
    assert edit.op == "multi_edit" and edit.rel == "m.py"
    assert edit.introduced == "a = 10\nc = 30\n= 10  # ten"
    # The third edit's old_string lies in the first's new_string: the tool refuses that.
    assert proposed_buffer(edit) is None and any("earlier edit" in p for p in edit.problems)
    ok = parse(_raw("MultiEdit", {"file_path": f, "edits": [
        {"old_string": "a = 1", "new_string": "a = 10"}, {"old_string": "\n", "new_string": ";\n", "replace_all": True},
    ]})).edits[0]
    assert proposed_buffer(ok) == "a = 10;\nb = 2;\nc = 3;\n"


@pytest.mark.parametrize("edits", [None, "x", [], [1, {"old_string": "a", "new_string": "b"}],
                                   [{"old_string": "a"}], [{"new_string": "b"}]])
def test_multi_edit_malformed_lists(edits, tmp_path):
    f = _write(tmp_path / "m.py", "a\n")
    inv = parse(_raw("MultiEdit", {"file_path": f, "edits": edits}))
    (edit,) = inv.edits
    assert proposed_buffer(edit) is None and edit.problems


def test_write(tmp_path):
    inv = parse(_raw("Write", {"file_path": "out/new.txt", "content": "hello\n"}, str(tmp_path)))
    (edit,) = inv.edits
    assert (edit.op, edit.path, edit.rel) == ("write", str(tmp_path / "out" / "new.txt"), "out/new.txt")
    assert edit.introduced == edit.new_content == proposed_buffer(edit) == "hello\n"
    bad = parse(_raw("Write", {"file_path": "x", "content": {"no": 1}}, str(tmp_path))).edits[0]
    assert bad.introduced == "" and proposed_buffer(bad) is None and bad.problems


def test_ten_megabyte_write_content():
    content = ("0123456789abcdef" * 64 + "\n") * 10_000
    assert len(content) > 10_000_000
    raw = _raw("Write", {"file_path": "/r/big.txt", "content": content}, "/r")
    started = time.perf_counter()
    inv = parse(raw)
    assert time.perf_counter() - started < 5
    assert inv.edits[0].introduced == content


def test_notebook_edit(tmp_path):
    nb = str(tmp_path / "n.ipynb")
    replace = parse(_raw("NotebookEdit", {"notebook_path": nb, "new_source": "print(1)", "cell_id": "c1"},
                         str(tmp_path))).edits[0]
    assert (replace.op, replace.rel, replace.edit_mode, replace.cell_id) == ("notebook", "n.ipynb", "replace", "c1")
    assert replace.introduced == "print(1)"
    assert proposed_buffer(replace) is None and any("not reconstructed" in p for p in replace.problems)
    insert = parse(_raw("NotebookEdit", {"notebook_path": nb, "new_source": "# md", "edit_mode": "insert",
                                         "cell_type": "markdown"})).edits[0]
    assert insert.edit_mode == "insert" and insert.introduced == "# md"
    delete = parse(_raw("NotebookEdit", {"notebook_path": nb, "new_source": "old", "edit_mode": "delete"})).edits[0]
    assert delete.introduced == ""
    variant = parse(_raw("NotebookEdit", {"file_path": nb, "source": "x", "edit_mode": "zap", "cell_id": 3}))
    (v,) = variant.edits
    assert v.introduced == "x" and v.edit_mode == "replace" and v.cell_id == "3"
    assert any("file_path" in p for p in variant.problems) and any("zap" in p for p in variant.problems)


def test_bash():
    inv = parse(_raw("Bash", {"command": "cargo test", "description": "tests", "timeout": 1000}))
    assert inv.command == "cargo test" and inv.edits == [] and not inv.patch_call
    inv = parse(_raw("Bash", {"command": ["ls"]}))
    assert inv.command is None and inv.problems


def test_tool_input_not_an_object():
    for value in ("string", 3, [1]):
        inv = parse(_raw("Edit", value))
        assert inv.edits == [] and any("tool_input" in p for p in inv.problems)


# ----------------------------------------------------------------------------- paths


def test_paths_relative_absolute_outside_and_dotdot(tmp_path):
    root = str(tmp_path / "repo")
    os.makedirs(root)
    inv = parse(_raw("Write", {"file_path": "a/../b/./c.py", "content": ""}, root + "/"))
    e = inv.edits[0]
    assert (e.path, e.rel, e.outside) == (os.path.join(root, "b", "c.py"), "b/c.py", False)
    outside = parse(_raw("Write", {"file_path": "/etc/passwd", "content": ""}, root)).edits[0]
    assert (outside.rel, outside.outside) == ("/etc/passwd", True)
    escape = parse(_raw("Write", {"file_path": "../sibling/x.py", "content": ""}, root)).edits[0]
    assert escape.outside and escape.rel == str(tmp_path / "sibling" / "x.py")
    prefix = parse(_raw("Write", {"file_path": root + "-other/x", "content": ""}, root)).edits[0]
    assert prefix.outside  # /repo-other is not inside /repo
    itself = parse(_raw("Write", {"file_path": root, "content": ""}, root)).edits[0]
    assert itself.rel == "." and not itself.outside


def test_no_payload_cwd_uses_the_process_cwd(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    e = parse(_raw("Write", {"file_path": "x.txt", "content": "1"})).edits[0]
    assert (e.path, e.rel) == (str(tmp_path / "x.txt"), "x.txt")


def test_symlinks_rel_is_lexical_real_path_sees_through(tmp_path):
    repo = tmp_path / "repo"
    secret = tmp_path / "secret"
    os.makedirs(repo / "src")
    os.makedirs(secret)
    os.symlink(secret, repo / "src" / "link")
    _write(secret / "key.txt", "k\n")
    e = parse(_raw("Edit", {"file_path": str(repo / "src" / "link" / "key.txt"), "old_string": "k",
                            "new_string": "K"}, str(repo))).edits[0]
    assert e.rel == "src/link/key.txt" and not e.outside
    assert e.real_path == str(secret / "key.txt") and e.real_rel == str(secret / "key.txt")
    assert proposed_buffer(e) == "K\n"
    # A symlinked cwd: rel and real_rel agree for files inside it.
    os.symlink(repo, tmp_path / "alias")
    inside = parse(_raw("Write", {"file_path": "src/f.py", "content": ""}, str(tmp_path / "alias"))).edits[0]
    assert inside.rel == inside.real_rel == "src/f.py"
    assert inside.real_path == str(repo / "src" / "f.py")


# ----------------------------------------------------------------------------- Codex apply_patch


def _patch_payload(patch: str, cwd: str, **tool_input) -> bytes:
    return _raw("apply_patch", {"command": patch, **tool_input}, cwd)


def test_patch_with_absolute_paths_as_codex_sends_them(tmp_path):
    a = _write(tmp_path / "notes" / "a.txt", "first\nsecond\n")
    old = _write(tmp_path / "scratch" / "f1.txt", "bye\n")
    patch = (f"*** Begin Patch\n*** Update File: {a}\n@@\n+third line\n*** Add File: {tmp_path}/notes/new.txt\n"
             f"+hello\n*** Delete File: {old}\n*** Update File: {tmp_path}/.env\n@@\n+TOKEN=abc123\n*** End Patch\n")
    inv = parse(_patch_payload(patch, str(tmp_path)))
    assert inv.patch_call and inv.tool_name == "apply_patch" and inv.session_id == "s-1" and inv.tool_use_id == "t-1"
    assert inv.problems == []
    assert [(e.op, e.rel) for e in inv.edits] == [
        ("update", "notes/a.txt"), ("add", "notes/new.txt"), ("delete", "scratch/f1.txt"), ("update", ".env")]
    update, add, delete, env = inv.edits
    assert update.introduced == "third line" and proposed_buffer(update) == "first\nsecond\nthird line\n"
    assert add.introduced == add.new_content == proposed_buffer(add) == "hello\n"
    assert delete.introduced == "" and proposed_buffer(delete) == ""
    assert env.introduced == "TOKEN=abc123"
    assert proposed_buffer(env) is None and any("no such file" in p for p in env.problems)


def test_patch_context_is_not_introduced(tmp_path):
    f = _write(tmp_path / "f.py", "import os\nSECRET = 1\nx = 1\n")
    patch = "*** Begin Patch\n*** Update File: f.py\n@@\n import os\n SECRET = 1\n-x = 1\n+x = 2\n*** End Patch"
    (edit,) = parse(_patch_payload(patch, str(tmp_path))).edits
    assert edit.introduced == "x = 2"
    assert edit.replacements == [("import os\nSECRET = 1\nx = 1", "import os\nSECRET = 1\nx = 2")]
    assert proposed_buffer(edit) == "import os\nSECRET = 1\nx = 2\n"
    assert f


def test_move_yields_source_and_destination(tmp_path):
    _write(tmp_path / "old" / "name.txt", "old content\n")
    patch = "*** Begin Patch\n*** Update File: old/name.txt\n*** Move to: ../out/name.txt\n@@\n-old content\n+new\n*** End Patch"
    inv = parse(_patch_payload(patch, str(tmp_path / "")))
    src, dest = inv.edits
    assert (src.op, src.rel, src.move_to) == ("update", "old/name.txt", str(tmp_path.parent / "out" / "name.txt"))
    assert (dest.op, dest.path, dest.move_from, dest.outside) == ("move", src.move_to, src.path, True)
    assert src.introduced == dest.introduced == "new"
    assert proposed_buffer(src) == proposed_buffer(dest) == "new\n"


@pytest.mark.parametrize("wrap", [
    lambda p: p,
    lambda p: f"<<'EOF'\n{p}\nEOF\n",
    lambda p: f"apply_patch <<'EOF'\n{p}\nEOF\n",
    lambda p: f'cd sub && apply_patch <<"EOF"\n{p}\nEOF',
    lambda p: p.replace("\n", "\r\n"),
])
def test_patch_wrappers(wrap, tmp_path):
    body = "*** Begin Patch\n*** Update File: f.txt\n@@\n-a\n+b\n*** End Patch"
    inv = parse(_patch_payload(wrap(body), str(tmp_path)))
    assert inv.problems == []
    base = tmp_path / "sub" if "cd sub" in wrap("") else tmp_path
    assert inv.edits[0].path == str(base / "f.txt")


@pytest.mark.parametrize("tool_input, note", [
    ("*** Begin Patch\n*** Add File: a\n+x\n*** End Patch", "bare string"),
    ({"input": "*** Begin Patch\n*** Add File: a\n+x\n*** End Patch"}, "tool_input.input"),
    ({"patch": "*** Begin Patch\n*** Add File: a\n+x\n*** End Patch"}, "tool_input.patch"),
    ({"command": ["apply_patch", "*** Begin Patch\n*** Add File: a\n+x\n*** End Patch"]}, "argv list"),
    ({"command": ["bash", "-lc", "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\nEOF"]},
     "argv list"),
])
def test_patch_input_variants_are_read_and_noted(tool_input, note, tmp_path):
    inv = parse(_raw("apply_patch", tool_input, str(tmp_path)))
    assert [(e.op, e.rel, e.introduced) for e in inv.edits] == [("add", "a", "x\n")]
    assert any(note in p for p in inv.problems)


@pytest.mark.parametrize("tool_input", [None, 5, {"command": 5}, {"command": ["ls", "-la", "x", "y"]}, {}])
def test_patch_without_readable_text_is_a_problem(tool_input):
    inv = parse(_raw("apply_patch", tool_input))
    assert inv.patch_call and inv.edits == [] and inv.problems


def test_invalid_patch_syntax_is_a_problem_on_the_invocation():
    inv = parse(_patch_payload("*** Begin Patch\n*** Add File: a\n+x\n", "/r"))
    assert inv.problems and "End Patch" in inv.problems[0]
    inv = parse(_patch_payload("diff --git a/x b/x\n", "/r"))
    assert inv.problems and inv.edits == []


def test_patch_under_an_edit_alias_is_read_as_a_patch():
    inv = parse(_raw("Write", {"command": "*** Begin Patch\n*** Add File: a\n+x\n*** End Patch"}, "/r"))
    assert inv.patch_call and [e.path for e in inv.edits] == ["/r/a"] and inv.problems


def _copy_input(name: str, dest) -> str:
    src = CODEX_FIXTURES / name / "input"
    if src.is_dir():
        shutil.copytree(src, dest)
    else:
        os.makedirs(dest)
    return str(dest)


def _scenarios() -> list[str]:
    if not CODEX_FIXTURES.is_dir():
        return []
    return sorted(d.name for d in CODEX_FIXTURES.iterdir() if (d / "patch.txt").is_file())


def _files(root: str) -> dict[str, str]:
    out = {}
    for dirpath, _d, names in os.walk(root):
        for n in names:
            p = os.path.join(dirpath, n)
            with open(p, encoding="utf-8", newline="") as fh:
                out[os.path.relpath(p, root)] = fh.read()
    return out


@pytest.mark.skipif(not _scenarios(), reason="codex-apply-patch fixtures absent")
@pytest.mark.parametrize("absolute", [False, True], ids=["relative", "absolute"])
@pytest.mark.parametrize("name", _scenarios())
def test_fixture_scenarios_through_the_payload(name: str, absolute: bool, tmp_path):
    """Applying each FileEdit's proposed buffer to a copy of input/ yields expected/.

    For the scenarios whose patch fails, every edit that would fail says why (None buffer
    plus a problem), and a syntactically invalid patch leaves a problem on the invocation.
    """
    root = _copy_input(name, tmp_path / "work")
    text = (CODEX_FIXTURES / name / "patch.txt").read_text(encoding="utf-8")
    if absolute:  # real Codex payloads carry absolute paths
        for marker in ("*** Add File: ", "*** Delete File: ", "*** Update File: ", "*** Move to: "):
            text = text.replace(marker, marker + root + "/")
    inv = parse(_patch_payload(text, root))
    expected = _files(str(CODEX_FIXTURES / name / "expected")) if (CODEX_FIXTURES / name / "expected").is_dir() else {}
    before = _files(root)
    if inv.problems:
        assert before == expected  # Codex rejects the whole patch: nothing changes
        return
    buffers = [(e, proposed_buffer(e)) for e in inv.edits]
    failed = [e for e, b in buffers if b is None]
    for e in failed:
        assert e.problems, f"{e.rel}: None without a reason"
    # Apply, as Codex would, the edits up to the first failing one.
    state = dict(before)
    for e, buffer in buffers:
        if buffer is None:
            break
        rel = os.path.relpath(e.path, root)
        if e.op == "delete":
            state.pop(rel, None)
        elif e.op == "update" and e.move_to:
            state.pop(rel, None)
        else:
            state[rel] = buffer
    assert state == expected
    assert bool(failed) == (name[:3] in {"006", "007", "009", "012", "015"})


# ----------------------------------------------------------------------------- git


def _git_config(path, text: str) -> None:
    _write(path, text)


def test_git_top_and_repo_name(tmp_path):
    repo = tmp_path / "work" / "proj"
    _git_config(repo / ".git" / "config", '[core]\n\tbare = false\n[remote "upstream"]\n\turl = x/other.git\n'
                '[remote "origin"]\n\turl = git@github.com:acme/widgets.git\n\tfetch = +refs/heads/*\n')
    deep = repo / "src" / "pkg" / "new_dir" / "file.py"  # need not exist
    assert payload.git_top(str(deep)) == str(repo)
    assert payload.git_top(str(repo)) == str(repo)
    assert payload.repo_name(str(repo)) == "widgets"
    assert payload.git_top(str(tmp_path / "work")) != str(repo)  # never looks downwards


@pytest.mark.parametrize("url, name", [
    ("https://github.com/acme/widgets.git", "widgets"),
    ("https://github.com/acme/widgets/", "widgets"),
    ("https://github.com/acme/widgets.git/", "widgets"),
    ("git@host:widgets.git", "widgets"),
    ("git@host:team/widgets", "widgets"),
    ("/srv/git/widgets.git", "widgets"),
    ("file:///srv/git/widgets", "widgets"),
    ('"https://h/a/quoted.git"  # comment', "quoted"),
    ("ssh://git@host:2222/a/b/c.git ; trailing", "c"),
])
def test_repo_name_url_forms(tmp_path, url: str, name: str):
    _git_config(tmp_path / ".git" / "config", f'[remote "origin"]\n    URL = {url}\n')
    assert payload.repo_name(str(tmp_path)) == name


def test_repo_name_follows_gitdir_files(tmp_path):
    main = tmp_path / "main"
    _git_config(main / ".git" / "config", '[remote "origin"]\n\turl = https://h/o/mainrepo.git\n')
    # a worktree: .git file → .git/worktrees/wt, whose commondir points back at main/.git
    _write(main / ".git" / "worktrees" / "wt" / "commondir", "../..\n")
    wt = tmp_path / "wt"
    _write(wt / ".git", f"gitdir: {main}/.git/worktrees/wt\n")
    assert payload.git_top(str(wt / "a" / "b.py")) == str(wt)
    assert payload.repo_name(str(wt)) == "mainrepo"
    # a submodule: relative gitdir into the superproject's modules, with its own origin
    _git_config(main / ".git" / "modules" / "sub" / "config", '[remote "origin"]\n\turl = git@h:o/subrepo.git\n')
    _write(main / "sub" / ".git", "gitdir: ../.git/modules/sub\n")
    assert payload.repo_name(str(main / "sub")) == "subrepo"


@pytest.mark.parametrize("config", [
    "", "[core]\n\tbare = false\n", '[remote "upstream"]\n\turl = https://h/x.git\n',
    '[remote "Origin"]\n\turl = https://h/x.git\n', '[remote "origin"]\n\tfetch = x\n', "\x00\xff garbage [[[",
])
def test_repo_name_without_an_origin_url_is_none(tmp_path, config: str):
    _git_config(tmp_path / ".git" / "config", config)
    assert payload.repo_name(str(tmp_path)) is None


def test_repo_name_legacy_section_and_missing_git(tmp_path):
    _git_config(tmp_path / "a" / ".git" / "config", "[remote.origin]\nurl = https://h/legacy.git\n")
    assert payload.repo_name(str(tmp_path / "a")) == "legacy"
    assert payload.repo_name(str(tmp_path / "nothing")) is None
    _write(tmp_path / "b" / ".git", "not a gitdir line\n")
    assert payload.repo_name(str(tmp_path / "b")) is None


# ----------------------------------------------------------------------------- import cost


def test_import_adds_no_stdlib_modules_beyond_json_accelerator():
    code = ("import sys; before = set(sys.modules); import yupana.edit.payload as p; "
            "p.parse(b'{\"tool_name\": \"apply_patch\", \"tool_input\": {\"command\": \"x\"}}'); "
            "print('\\n'.join(sorted(set(sys.modules) - before)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    # __future__ (a few dozen lines, ~0.1 ms) is executed by `from __future__ import annotations`;
    # itertools is compiled into the interpreter (nothing read from disk): the patch reader's C scans.
    assert {m for m in out if not m.startswith("yupana")} <= {"_json", "__future__", "itertools"}, out
    assert "itertools" in sys.builtin_module_names


def test_input_as_memoryview_and_posix_double_slash_cwd():
    inv = parse(memoryview(_raw("Write", {"file_path": "//r/a.py", "content": ""}, "//r/")))
    assert (inv.cwd, inv.edits[0].path, inv.edits[0].rel) == ("/r", "/r/a.py", "a.py")


def test_move_destination_shares_the_source_rebuild_and_its_reason(tmp_path):
    _write(tmp_path / "a.txt", "one\n")
    patch = "*** Begin Patch\n*** Update File: a.txt\n*** Move to: b.txt\n@@\n-two\n+three\n*** End Patch"
    src, dest = parse(_patch_payload(patch, str(tmp_path))).edits
    assert proposed_buffer(dest) is None and proposed_buffer(src) is None
    assert dest.problems == src.problems and "anchor missing" in src.problems[0] and "a.txt" in src.problems[0]
