"""An armed check (a .rs edit with verify and blast) imports nothing costly.

The hook process may load tree-sitter's compiled bindings and ``_sqlite3`` when a check is
armed for the file, but never the packages around them (``tree_sitter`` imports typing,
``tree_sitter_rust`` importlib.resources, ``sqlite3`` datetime) nor json, pathlib and
friends. The one exception is what the compiled binding itself imports when it loads:
``re`` (for query predicates) and ``enum`` (its LogType), ~5 ms, part of tree-sitter's cost.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig

from tests.codegraph.conftest import build
from tests.test_hot_imports import COSTLY

BINDING_OWN = {"re", "enum"}  # imported by tree_sitter._binding's own module init

SCRIPT = r"""
import sys, time
from yupana import fastjson
from yupana.edit import payload
root = sys.argv[1]
old = "fn capitalize(s: &str, f: &mut fmt::Formatter) -> fmt::Result {"
raw = fastjson.dumps({"cwd": root, "tool_name": "Edit", "tool_input": {
    "file_path": root + "/src/lib.rs", "old_string": old, "new_string": old + "\n    let _n = s.len();"}})
edit = payload.parse(raw if isinstance(raw, bytes) else raw.encode()).edits[0]
from yupana.codegraph import blast, verify
deadline = time.monotonic() + 5
v = verify.verify_edit(edit, root, deadline)
b = blast.measure(edit, root, 5, deadline)
assert v is not None and v.ok and b.symbols >= 1, (v, b)
print("\n".join(sorted(sys.modules)))
"""


def test_armed_verify_and_blast_import_nothing_costly(heck, isolated_index):
    build(heck)
    env = dict(os.environ, YUPANA_CODEGRAPH_DIR=str(isolated_index))
    env["PYTHONPATH"] = os.pathsep.join([os.path.dirname(os.path.dirname(os.path.dirname(__file__))),
                                         sysconfig.get_paths()["purelib"]])
    done = subprocess.run([sys.executable, "-S", "-c", SCRIPT, str(heck)], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    loaded = set(done.stdout.split())
    roots = {m.split(".")[0] for m in loaded}
    assert not roots & (set(COSTLY) - BINDING_OWN), sorted(roots & set(COSTLY))
    assert {"tree_sitter._binding", "tree_sitter_rust._binding", "_sqlite3"} <= loaded
    assert not {"tree_sitter", "tree_sitter_rust", "sqlite3", "diskcache"} & loaded
