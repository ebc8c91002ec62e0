"""A structural policy decided by its regexes' literals decides as the parse would (issue 12 §1).

The bundled catalogue's policies (every language, every match type) are projected through the
real projection and derived as a hook gets them (``_needs``); each is judged on real code —
syn's sources, this repository's Python, the fixture texts — once as derived and once with
``_needs`` removed (always parsed). Held: the same outcome for every policy on every text,
and the prefilter does decide most of them (the comparison is not vacuous).
"""

from __future__ import annotations

import glob
import os

import pytest

from tests.codegraph.conftest import DATA, file_edit
from yupana.evaluate import structural
from yupana.state import cache

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="module")
def policies(tmp_path_factory) -> list[dict]:
    from yupana import config
    from yupana.endpoint import open_endpoint
    from yupana.endpoint.base import Deadline
    from yupana.projection.refresh import project

    quipu = dict(config.resolve(str(tmp_path_factory.mktemp("cfg")), None)["config"]["quipu"])
    quipu["endpoint"] = "file:" + os.path.join(REPO, "fixtures", "catalogue")
    return cache.derive_hot(project(open_endpoint(quipu), quipu, Deadline(60.0)).cache)["policies"]


def _chunks(text: str, lines: int = 12) -> list[str]:
    rows = text.splitlines(keepends=True)
    return ["".join(rows[i:i + lines]) for i in range(0, len(rows), lines)]


def _samples() -> list[tuple[str, str]]:
    out = []
    for path in sorted((DATA / "syn").glob("*.rs")):  # under each Rust policy's appliesTo
        for base in ("src", "crates/ffi/src", "crates/dispatch/src/handlers"):
            out += [(f"{base}/{path.name}", chunk) for chunk in _chunks(path.read_text(), 40)]
    for path in sorted(glob.glob(os.path.join(REPO, "yupana", "evaluate", "*.py")))[:6]:
        out += [(f"tools/larkspur/{os.path.basename(path)}", chunk) for chunk in _chunks(open(path).read())]
    out += [("crates/ffi/src/io.rs", "// SAFETY: the buffer outlives the call\nunsafe { read(p) }\n"),
            ("crates/ffi/src/io.rs", "unsafe { read(p) }\n"),
            ("crates/dispatch/src/handlers/a.rs", "fn f() { let v = x.unwrap(); }\n"),
            ("src/lib.rs", "fn f() { let v = x.unwrap(); }\n// FRT-1201 follow-up\n"),
            ("src/todo.rs", "// TODO(ana): split this\n// TODO later\n"),
            ("web/src/app.ts", "export function f() { console.log('x'); }\n"),
            ("web/src/View.tsx", "export const V = () => <div dangerouslySetInnerHTML={{__html: h}} />;\n"),
            ("services/billing/internal/run.go", "func run() { panic(\"no\") }\n"),
            ("tools/sync.py", "try:\n    go()\nexcept:\n    pass\n"),
            ("LICENSE-header.rs", "// SPDX-License-Identifier: Apache-2.0\nfn main() {}\n")]
    return out


def test_prefiltered_decisions_match_the_parse(policies, tmp_path):
    (tmp_path / ".git").mkdir()
    assert any(p.get("_needs") for p in policies)
    parsed_only = [{k: v for k, v in p.items() if k != "_needs"} for p in policies]
    decided = judged = 0
    for rel, text in _samples():
        edit = file_edit(tmp_path, rel, content=text)
        fast = {(f.id, f.outcome) for f in structural.evaluate(policies, edit, "enforce")}
        slow = {(f.id, f.outcome) for f in structural.evaluate(parsed_only, edit, "enforce")}
        assert fast == slow, f"{rel}: {text[:120]!r}"
        for f in structural.evaluate(policies, edit, "enforce"):
            judged += 1
            decided += bool(f.extra.get("prefiltered"))
    assert judged > 50 and decided > judged // 2


def test_a_small_rust_edit_without_the_literals_loads_no_parser(policies, tmp_path):
    """The point of it: no tree-sitter (nor re2) for an edit no policy can fire on."""
    import subprocess
    import sys

    code = ("import json, sys\nfrom tests.codegraph.conftest import file_edit\nfrom yupana.evaluate import structural\n"
            "import pathlib\npolicies = json.loads(sys.stdin.read())\n"
            "root = pathlib.Path(sys.argv[1]); (root / '.git').mkdir()\n"
            "edit = file_edit(root, 'src/lib.rs', content='let total = compute(a, b);\\n')\n"
            "found = structural.evaluate(policies, edit, 'enforce')\n"
            "print(json.dumps([sorted(m for m in sys.modules if m.split('.')[0] in "
            "('tree_sitter', 'tree_sitter_rust', 're2')), [f.outcome for f in found]]))\n")
    import json

    serialisable = [{k: v for k, v in p.items() if k != "_applies_to"} for p in policies]
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path)], input=json.dumps(serialisable),
                          capture_output=True, text=True, cwd=REPO, timeout=60)
    assert done.returncode == 0, done.stderr
    loaded, outcomes = json.loads(done.stdout)
    assert outcomes and set(outcomes) == {"satisfied"}
    assert loaded == []
