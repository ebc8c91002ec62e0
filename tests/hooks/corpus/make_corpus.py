"""Generate the hook-payload corpus in ``payloads/`` (reproducible; the files are committed).

    python tests/hooks/corpus/make_corpus.py            # rewrite payloads/
    python tests/hooks/corpus/make_corpus.py --check    # exit 1 if payloads/ is out of date

What it holds: malformed JSON, empty and binary input, missing and mistyped fields, unknown
tools, relative / absolute / outside-repo / symlink-shaped paths, Edit, Write, MultiEdit,
NotebookEdit, Bash, and Codex ``apply_patch`` variants (wrappers, CRLF, invalid syntax,
moves, absolute paths). Each file is one stdin, byte for byte: ``.json`` for payloads built
as JSON objects, ``.bin`` for raw byte cases (which may or may not be valid JSON).

Not committed, made at test time:

* :func:`write_big` — the 10 MB payloads (a Write and an apply_patch Add File);
* :func:`make_tree` + :func:`tree_payloads` — a real repository with symlinks (a link to a
  directory outside the repo, a link to a file, a symlinked cwd) and payloads naming
  files through them.

Paths in the committed payloads live under ``/tmp/yupana-corpus`` and need not exist.
"""

from __future__ import annotations

import json
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "payloads")
ROOT = "/tmp/yupana-corpus/repo"


def _obj(tool=None, tool_input=None, *, cwd=ROOT, event="PreToolUse", drop=(), **extra) -> dict:
    data = {
        "session_id": "corpus-session",
        "transcript_path": "/tmp/yupana-corpus/t.jsonl",
        "cwd": cwd,
        "permission_mode": "default",
        "hook_event_name": event,
        "tool_name": tool,
        "tool_input": tool_input,
        "tool_use_id": "toolu_corpus",
    }
    data.update(extra)
    for key in drop:
        data.pop(key, None)
    return data


def _j(data: object) -> bytes:
    return json.dumps(data, ensure_ascii=False).encode("utf-8")


PATCH_UPDATE = "*** Begin Patch\n*** Update File: src/lib.rs\n@@ fn main()\n-    old();\n+    new();\n*** End Patch\n"
PATCH_MULTI = ("*** Begin Patch\n*** Add File: docs/new.md\n+# New\n+text\n*** Delete File: old.txt\n"
               "*** Update File: src/a.py\n*** Move to: src/b.py\n@@\n import os\n-x = 1\n+x = 2\n"
               "@@ def f():\n-    pass\n+    return 1\n*** End Patch\n")


def payloads() -> dict[str, bytes]:
    """name → exact stdin bytes."""
    out: dict[str, bytes] = {}

    def add(name: str, data: object) -> None:
        key = f"{len(out):03d}-{name}"
        if isinstance(data, bytes):
            out[key + ".bin"] = data
        else:
            out[key + ".json"] = _j(data)

    # --- not JSON objects at all
    for name, raw in [
        ("empty", b""), ("whitespace", b" \n\t\r\n"), ("nul-bytes", b"\x00" * 64),
        ("truncated-object", b'{"session_id": "s", "tool_name": "Edit", "tool_input": {"file_path": "/x"'),
        ("trailing-comma", b'{"tool_name": "Edit",}'), ("single-quotes", b"{'tool_name': 'Edit'}"),
        ("bare-word", b"hello"), ("nan", b'{"tool_name": NaN}'), ("infinity", b'{"a": Infinity}'),
        ("unterminated-string", b'{"tool_name": "Edit'), ("two-objects", b"{}{}"),
        ("array", b"[1, 2, 3]"), ("string", b'"Edit"'), ("number", b"42"), ("null", b"null"),
        ("true", b"true"), ("deep-nesting", b"[" * 5_000 + b"]" * 5_000),
        ("deep-object", b'{"a":' * 5_000 + b"1" + b"}" * 5_000),
        ("invalid-utf8", b'{"tool_name": "Edit", "cwd": "\xff\xfe"}'),
        ("latin1", '{"tool_name": "Write", "tool_input": {"content": "café"}}'.encode("latin-1")),
        ("utf16", '{"tool_name": "Bash"}'.encode("utf-16")),
        ("control-chars-in-string", b'{"tool_name": "Ed\x01it"}'),
        ("html", b"<html><body>502 Bad Gateway</body></html>"),
        ("yaml", b"tool_name: Edit\ntool_input:\n  file_path: /x\n"),
        ("jsonl-two-lines", b'{"tool_name": "Bash"}\n{"tool_name": "Edit"}\n'),
    ]:
        add(name, raw)
    rng = random.Random(20240603)
    for n in range(12):
        add(f"binary-garbage-{n}", bytes(rng.getrandbits(8) for _ in range(rng.choice([1, 7, 64, 512, 4096]))))

    # --- minimal and odd envelopes
    add("empty-object", {})
    add("bom", b"\xef\xbb\xbf" + _j(_obj("Bash", {"command": "ls"})))
    add("only-session", {"session_id": "s"})
    add("no-tool-input", _obj("Edit", None, drop=("tool_input",)))
    add("no-tool-name", _obj(None, {"file_path": f"{ROOT}/a.py", "content": "x"}, drop=("tool_name",)))
    add("tool-input-null", _obj("Edit", None))
    for value in ("a string", 12, 1.5, True, [1, 2], [{"file_path": "/x"}]):
        add(f"tool-input-{type(value).__name__}", _obj("Edit", value))
    for field in ("session_id", "cwd", "tool_name", "hook_event_name", "tool_use_id"):
        for value in (7, None, [], {"x": 1}, False, ""):
            add(f"mistyped-{field}-{type(value).__name__}", _obj("Edit", {
                "file_path": f"{ROOT}/src/a.py", "old_string": "a", "new_string": "b"}, **{field: value}))
    add("lone-surrogate", b'{"tool_name": "Write", "tool_input": {"file_path": "/tmp/yupana-corpus/repo/\\ud800.py", '
                          b'"content": "\\udc00x"}}')
    add("escaped-unicode", _obj("Write", {"file_path": f"{ROOT}/\u00e9\u00e8/\u2603.py", "content": "\u2705 ok"}))
    add("duplicate-keys", b'{"tool_name": "Edit", "tool_name": "Write", "tool_input": {"file_path": "/tmp/x", '
                          b'"content": "a", "content": "b"}}')
    add("extra-unknown-fields", _obj("Edit", {"file_path": f"{ROOT}/a.py", "old_string": "a", "new_string": "b",
                                              "future": {"deep": [1, {"x": None}]}}, agent_id="sub-1",
                                     agent_type="explorer", future_top=[1, 2, 3]))
    for event in ("PostToolUse", "SessionStart", "UserPromptSubmit", "Stop", "pretooluse", ""):
        add(f"event-{event or 'blank'}", _obj("Edit", {"file_path": f"{ROOT}/a.py", "old_string": "a",
                                                        "new_string": "b"}, event=event,
                                               tool_response={"success": True}))

    # --- unknown tools
    for tool in ("Read", "Glob", "Grep", "WebFetch", "Task", "TodoWrite", "mcp__github__create_issue", "",
                 "edit", "EDIT", "Edit ", "x" * 5000, "ApplyPatch", "apply-patch"):
        add(f"tool-{tool[:20].strip() or 'blank'}", _obj(tool, {"file_path": f"{ROOT}/a.py", "pattern": "x"}))

    # --- Edit
    edit = {"file_path": f"{ROOT}/src/graph/blast.rs", "old_string": "fn a()", "new_string": "fn b()"}
    add("edit-basic", _obj("Edit", edit))
    add("edit-replace-all", _obj("Edit", {**edit, "replace_all": True}))
    add("edit-pure-deletion", _obj("Edit", {**edit, "new_string": ""}))
    add("edit-create-empty-old", _obj("Edit", {**edit, "old_string": ""}))
    add("edit-same-strings", _obj("Edit", {**edit, "new_string": edit["old_string"]}))
    for key in ("file_path", "old_string", "new_string"):
        add(f"edit-missing-{key}", _obj("Edit", {k: v for k, v in edit.items() if k != key}))
        for value in (None, 5, ["x"], {"a": "b"}, True):
            add(f"edit-{key}-{type(value).__name__}", _obj("Edit", {**edit, key: value}))
    for value in ("true", 1, None, [True]):
        add(f"edit-replace-all-{type(value).__name__}", _obj("Edit", {**edit, "replace_all": value}))
    add("edit-huge-strings", _obj("Edit", {**edit, "old_string": "o" * 50_000, "new_string": "n" * 50_000}))
    add("edit-path-variant-key", _obj("Edit", {"path": f"{ROOT}/a.py", "old_string": "a", "new_string": "b"}))

    # --- paths
    for name, path, cwd in [
        ("relative", "src/a.py", ROOT), ("relative-dot", "./src/../src/a.py", ROOT),
        ("absolute-inside", f"{ROOT}/src/a.py", ROOT), ("outside-repo", "/etc/passwd", ROOT),
        ("outside-home", "/tmp/yupana-corpus/other/secret.txt", ROOT), ("dotdot-escape", "../../etc/shadow", ROOT),
        ("symlink-shaped", f"{ROOT}/link-to-outside/secret.txt", ROOT), ("tilde", "~/.ssh/config", ROOT),
        ("windows", "C:\\Users\\x\\a.py", ROOT), ("unc", "\\\\server\\share\\a.py", ROOT),
        ("double-slash", "//tmp/yupana-corpus/repo/a.py", ROOT), ("trailing-slash", f"{ROOT}/src/", ROOT),
        ("nul-in-path", f"{ROOT}/a\u0000.py", ROOT), ("newline-in-path", f"{ROOT}/a\n.py", ROOT),
        ("spaces", f"{ROOT}/my dir/a file.py", ROOT), ("very-long", f"{ROOT}/" + "d/" * 3000 + "a.py", ROOT),
        ("root-itself", ROOT, ROOT), ("slash", "/", ROOT), ("dot", ".", ROOT),
        ("no-cwd", "src/a.py", None), ("cwd-relative", "a.py", "relative/dir"), ("cwd-root", "etc/x", "/"),
        ("cwd-trailing-slash", "a.py", ROOT + "/"), ("cwd-nonexistent", "a.py", "/nonexistent/yupana/x"),
        ("cwd-nul", "a.py", "/tmp/\u0000x"), ("cwd-empty", "a.py", ""),
    ]:
        add(f"path-{name}", _obj("Write", {"file_path": path, "content": "print('hi')\n"}, cwd=cwd,
                                 drop=("cwd",) if cwd is None else ()))

    # --- Write
    add("write-basic", _obj("Write", {"file_path": f"{ROOT}/README.md", "content": "# Title\n"}))
    add("write-empty-content", _obj("Write", {"file_path": f"{ROOT}/empty.txt", "content": ""}))
    add("write-no-content", _obj("Write", {"file_path": f"{ROOT}/x.txt"}))
    for value in (None, 3, ["a"], {"text": "a"}, False):
        add(f"write-content-{type(value).__name__}", _obj("Write", {"file_path": f"{ROOT}/x.txt", "content": value}))
    add("write-100kb", _obj("Write", {"file_path": f"{ROOT}/big.txt", "content": "line of text\n" * 8_000}))
    add("write-unicode", _obj("Write", {"file_path": f"{ROOT}/u.txt", "content": "naïve café ✅ \u202e rtl \u0000 nul"}))

    # --- MultiEdit
    multi = {"file_path": f"{ROOT}/src/m.py", "edits": [
        {"old_string": "a = 1", "new_string": "a = 2"}, {"old_string": "b", "new_string": "c", "replace_all": True}]}
    add("multiedit-basic", _obj("MultiEdit", multi))
    for name, edits in [("null", None), ("string", "edits"), ("empty", []), ("junk-items", [1, "x", None, []]),
                        ("missing-old", [{"new_string": "x"}]), ("missing-new", [{"old_string": "x"}]),
                        ("mistyped-items", [{"old_string": 1, "new_string": {"x": 1}}]),
                        ("nested", [[{"old_string": "a", "new_string": "b"}]]),
                        ("many", [{"old_string": f"v{i}", "new_string": f"w{i}"} for i in range(500)])]:
        add(f"multiedit-{name}", _obj("MultiEdit", {"file_path": f"{ROOT}/src/m.py", "edits": edits}))
    add("multiedit-no-path", _obj("MultiEdit", {"edits": multi["edits"]}))

    # --- NotebookEdit
    nb = {"notebook_path": f"{ROOT}/analysis.ipynb", "new_source": "import pandas as pd", "cell_id": "abc"}
    add("notebook-replace", _obj("NotebookEdit", nb))
    for mode in ("insert", "delete", "replace", "bogus", 3, None):
        add(f"notebook-mode-{mode}", _obj("NotebookEdit", {**nb, "edit_mode": mode, "cell_type": "code"}))
    add("notebook-cell-number", _obj("NotebookEdit", {**nb, "cell_number": 2, "cell_id": None}))
    add("notebook-cell-id-int", _obj("NotebookEdit", {**nb, "cell_id": 7}))
    add("notebook-no-source", _obj("NotebookEdit", {"notebook_path": nb["notebook_path"]}))
    add("notebook-source-variant", _obj("NotebookEdit", {"notebook_path": nb["notebook_path"], "source": "x"}))
    add("notebook-file-path-variant", _obj("NotebookEdit", {"file_path": nb["notebook_path"], "new_source": "x"}))
    add("notebook-source-list", _obj("NotebookEdit", {**nb, "new_source": ["line1\n", "line2"]}))
    add("notebook-no-path", _obj("NotebookEdit", {"new_source": "x"}))

    # --- Bash
    for name, command in [("basic", "cargo test"), ("heredoc", "cat <<'EOF' > f.txt\nsecret\nEOF"),
                          ("apply-patch-heredoc", "apply_patch <<'EOF'\n" + PATCH_UPDATE + "EOF"),
                          ("env-prefix", "FOO=1 rm -rf /"), ("empty", ""), ("list", ["ls", "-la"]),
                          ("int", 5), ("null", None), ("huge", "echo " + "x" * 100_000)]:
        add(f"bash-{name}", _obj("Bash", {"command": command, "description": "d", "timeout": 120000}))

    # --- Codex apply_patch
    for name, patch in [
        ("update", PATCH_UPDATE), ("multi", PATCH_MULTI),
        ("heredoc-eof", f"<<EOF\n{PATCH_UPDATE}EOF\n"), ("heredoc-single", f"<<'EOF'\n{PATCH_UPDATE}EOF\n"),
        ("heredoc-double", f'<<"EOF"\n{PATCH_UPDATE}EOF\n'), ("heredoc-mismatched", f"<<\"EOF'\n{PATCH_UPDATE}EOF\n"),
        ("command-form", f"apply_patch <<'EOF'\n{PATCH_UPDATE}EOF\n"),
        ("command-cd", f"cd 'sub dir' && apply_patch <<'PATCH'\n{PATCH_MULTI}PATCH\n"),
        ("command-trailing", f"apply_patch <<'EOF'\n{PATCH_UPDATE}EOF\necho done\n"),
        ("command-dash", f"apply_patch <<-'EOF'\n{PATCH_UPDATE}EOF\n"),
        ("command-unclosed", f"apply_patch <<'EOF'\n{PATCH_UPDATE}"),
        ("crlf", PATCH_MULTI.replace("\n", "\r\n")),
        ("absolute-paths", PATCH_MULTI.replace("File: ", f"File: {ROOT}/").replace("Move to: ", f"Move to: {ROOT}/")),
        ("outside-paths", "*** Begin Patch\n*** Add File: /etc/cron.d/x\n+* * * * * root sh\n"
                          "*** Update File: ../../outside.txt\n*** Move to: /tmp/elsewhere.txt\n@@\n-a\n+b\n*** End Patch"),
        ("missing-end", PATCH_UPDATE.replace("*** End Patch\n", "")),
        ("missing-begin", PATCH_UPDATE.replace("*** Begin Patch\n", "")),
        ("empty-envelope", "*** Begin Patch\n*** End Patch"), ("empty", ""), ("whitespace", "  \n\n "),
        ("unified-diff", "--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,2 @@\n-a\n+b\n"),
        ("git-diff", "diff --git a/x b/x\nindex 1..2 100644\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n"),
        ("invalid-header", "*** Begin Patch\n*** Frobnicate File: x\n*** End Patch"),
        ("empty-update", "*** Begin Patch\n*** Update File: x\n*** End Patch"),
        ("padded-markers", "  *** Begin Patch \n   *** Update File: f.txt  \n@@\n-one\n+two\n *** End Patch  "),
        ("stacked-context", "*** Begin Patch\n*** Update File: c.py\n@@ class A\n@@     def m(self):\n-        pass\n"
                            "+        return 1\n*** End Patch"),
        ("no-first-header", "*** Begin Patch\n*** Update File: f\n import foo\n+bar\n*** End Patch"),
        ("eof-marker", "*** Begin Patch\n*** Update File: t.txt\n@@\n first\n-second\n+second updated\n"
                       "*** End of File\n*** End Patch"),
        ("eof-marker-empty-chunk", "*** Begin Patch\n*** Update File: t\n@@\n*** End of File\n*** End Patch"),
        ("unexpected-line", "*** Begin Patch\n*** Update File: t\n@@\nbad line\n*** End Patch"),
        ("move-empty", "*** Begin Patch\n*** Update File: a\n*** Move to: \n@@\n-a\n+b\n*** End Patch"),
        ("add-no-lines", "*** Begin Patch\n*** Add File: empty.txt\n*** End Patch"),
        ("add-blank-between", "*** Begin Patch\n*** Add File: a\n+x\n\n*** Add File: b\n+y\n*** End Patch"),
        ("unicode", "*** Begin Patch\n*** Update File: dïr/naïve ✅.txt\n@@\n line1\n-naïve café\n+naïve café ✅\n"
                    "*** End Patch"),
        ("nul-path", "*** Begin Patch\n*** Add File: a\u0000b\n+x\n*** End Patch"),
        ("delete-dir", "*** Begin Patch\n*** Delete File: src\n*** End Patch"),
        ("many-files", "*** Begin Patch\n" + "".join(f"*** Add File: gen/f{i}.txt\n+{i}\n" for i in range(300))
                       + "*** End Patch"),
        ("100kb-add", "*** Begin Patch\n*** Add File: big.txt\n" + "+some added text line\n" * 5_000 + "*** End Patch"),
    ]:
        add(f"apply-patch-{name}", _obj("apply_patch", {"command": patch}))
    for name, tool_input in [
        ("bare-string", PATCH_UPDATE), ("input-key", {"input": PATCH_UPDATE}), ("patch-key", {"patch": PATCH_UPDATE}),
        ("argv-direct", {"command": ["apply_patch", PATCH_UPDATE]}),
        ("argv-bash", {"command": ["bash", "-lc", f"apply_patch <<'EOF'\n{PATCH_UPDATE}EOF"]}),
        ("argv-other", {"command": ["python", "x.py", "a", "b"]}), ("argv-mixed", {"command": ["apply_patch", 5]}),
        ("command-int", {"command": 5}), ("command-null", {"command": None}), ("no-command", {"other": 1}),
        ("null", None), ("number", 3),
    ]:
        add(f"apply-patch-input-{name}", _obj("apply_patch", tool_input))
    add("apply-patch-alias-edit", _obj("Edit", {"command": PATCH_UPDATE}))
    add("apply-patch-alias-write", _obj("Write", {"command": PATCH_MULTI}))
    add("apply-patch-codex-envelope", {"session_id": "019a-codex", "turn_id": "t1", "cwd": ROOT,
                                       "hook_event_name": "PreToolUse", "model": "gpt-5-codex",
                                       "tool_name": "apply_patch", "tool_use_id": "call_1",
                                       "tool_input": {"command": PATCH_MULTI}})
    return out


BIG_CONTENT_BYTES = 10 * 1024 * 1024


def write_big(directory: str) -> list[str]:
    """Write the 10 MB payloads into ``directory``; their paths."""
    os.makedirs(directory, exist_ok=True)
    line = "0123456789abcdef" * 4 + "\n"
    content = line * (BIG_CONTENT_BYTES // len(line) + 1)
    patch = "*** Begin Patch\n*** Add File: big.txt\n" + "".join("+" + ln + "\n" for ln in content.splitlines()) \
        + "*** End Patch\n"
    made = []
    for name, data in [("big-write-10mb.json", _obj("Write", {"file_path": f"{ROOT}/big.txt", "content": content})),
                       ("big-apply-patch-10mb.json", _obj("apply_patch", {"command": patch}))]:
        path = os.path.join(directory, name)
        with open(path, "wb") as fh:
            fh.write(_j(data))
        made.append(path)
    return made


def make_tree(root: str) -> dict[str, str]:
    """A repository under ``root`` with symlinks; names → absolute paths used by tree_payloads."""
    repo = os.path.join(root, "repo")
    outside = os.path.join(root, "outside")
    for d in (os.path.join(repo, ".git"), os.path.join(repo, "src"), outside):
        os.makedirs(d, exist_ok=True)
    with open(os.path.join(repo, ".git", "config"), "w") as fh:
        fh.write('[remote "origin"]\n\turl = git@github.com:acme/corpus.git\n')
    with open(os.path.join(repo, "src", "a.py"), "w") as fh:
        fh.write("x = 1\ny = 2\n")
    with open(os.path.join(outside, "secret.txt"), "w") as fh:
        fh.write("token = 1\n")
    links = {
        "dir_link": (outside, os.path.join(repo, "src", "linked")),
        "file_link": (os.path.join(outside, "secret.txt"), os.path.join(repo, "secret-link.txt")),
        "cwd_link": (repo, os.path.join(root, "repo-alias")),
        "dangling": (os.path.join(root, "missing"), os.path.join(repo, "dangling.txt")),
        "loop": (os.path.join(repo, "loop"), os.path.join(repo, "loop")),
    }
    for target, link in links.values():
        if not os.path.lexists(link):
            os.symlink(target, link)
    return {"repo": repo, "outside": outside, "alias": os.path.join(root, "repo-alias")}


def tree_payloads(tree: dict[str, str]) -> dict[str, bytes]:
    """Payloads naming files through the symlinks of :func:`make_tree`."""
    repo, alias = tree["repo"], tree["alias"]
    cases = {
        "edit-through-dir-link": _obj("Edit", {"file_path": f"{repo}/src/linked/secret.txt", "old_string": "token = 1",
                                               "new_string": "token = 2"}, cwd=repo),
        "write-file-link": _obj("Write", {"file_path": f"{repo}/secret-link.txt", "content": "x"}, cwd=repo),
        "write-symlinked-cwd": _obj("Write", {"file_path": "src/a.py", "content": "x"}, cwd=alias),
        "edit-absolute-via-alias": _obj("Edit", {"file_path": f"{alias}/src/a.py", "old_string": "x = 1",
                                                 "new_string": "x = 3"}, cwd=repo),
        "write-dangling-link": _obj("Write", {"file_path": f"{repo}/dangling.txt", "content": "x"}, cwd=repo),
        "write-link-loop": _obj("Write", {"file_path": f"{repo}/loop/x.txt", "content": "x"}, cwd=repo),
        "patch-through-links": _obj("apply_patch", {"command": (
            "*** Begin Patch\n*** Update File: src/linked/secret.txt\n*** Move to: src/moved.txt\n@@\n-token = 1\n"
            "+token = 9\n*** Add File: secret-link.txt\n+y\n*** Delete File: dangling.txt\n*** End Patch")}, cwd=repo),
    }
    return {name: _j(data) for name, data in cases.items()}


def main(argv: list[str]) -> int:
    check = "--check" in argv
    wanted = payloads()
    present = set(os.listdir(OUT)) if os.path.isdir(OUT) else set()
    if check:
        stale = [n for n, data in wanted.items() if n not in present or open(os.path.join(OUT, n), "rb").read() != data]
        extra = sorted(present - set(wanted))
        for name in stale + extra:
            print(f"out of date: {name}", file=sys.stderr)
        return 1 if stale or extra else 0
    os.makedirs(OUT, exist_ok=True)
    for name in present - set(wanted):
        os.unlink(os.path.join(OUT, name))
    for name, data in wanted.items():
        with open(os.path.join(OUT, name), "wb") as fh:
            fh.write(data)
    print(f"wrote {len(wanted)} payloads to {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
