"""``yupana verify --file F --buffer B [--json]`` through the real CLI, on a real crate."""

from __future__ import annotations

import json
import shutil

from tests.codegraph.conftest import DATA

SNAKE_FMT = '        transform(self.0.as_ref(), lowercase, |f| write!(f, "_"), f)'


def _crate(env):
    root = env.base / "heck"
    shutil.copytree(DATA / "heck", root)
    (root / ".git").mkdir()
    return root


def test_violations_as_json_and_exit_1(env, yupana):
    root = _crate(env)
    buffer = env.base / "proposed.rs"
    buffer.write_text((root / "src" / "snake.rs").read_text().replace(SNAKE_FMT, "        transform(self.0.as_ref(), snakify, f)"))
    done = yupana("verify", "--file", str(root / "src" / "snake.rs"), "--buffer", str(buffer), "--json", cwd=root)
    assert done.returncode == 1, done.stderr
    out = json.loads(done.stdout)
    assert out["ok"] is False and out["tier"] == "tree_sitter"
    assert [(v["kind"], v["symbol"], v["line"]) for v in out["violations"]] == [
        ("identifier-does-not-exist", "snakify", 55), ("wrong-arity", "transform", 55)]
    assert set(out) == {"schema", "yupana_version", "ok", "tier", "violations", "unchecked"}
    assert out["schema"] == "yupana.verify/1"


def test_clean_buffer_exits_0_and_reads_stdin(env, yupana):
    root = _crate(env)
    text = (root / "src" / "snake.rs").read_text() + "\npub fn twice(s: &str) -> String { s.to_snake_case() }\n"
    done = yupana("verify", "--file", str(root / "src" / "snake.rs"), "--buffer", "-", stdin=text, cwd=root)
    assert done.returncode == 0, done.stderr
    assert b"no unresolved references introduced" in done.stdout


def test_not_rust_or_unreadable_is_a_clear_error(env, yupana):
    root = _crate(env)
    done = yupana("verify", "--file", str(root / "README.md"), "--buffer", str(root / "Cargo.toml"))
    assert done.returncode == 2 and b"not a Rust file" in done.stderr
    done = yupana("verify", "--file", str(root / "src" / "lib.rs"), "--buffer", str(root / "missing.rs"))
    assert done.returncode == 2 and b"cannot read the proposed buffer" in done.stderr


def test_a_buffer_that_does_not_parse_where_it_changed_has_no_verdict(env, yupana):
    root = _crate(env)
    text = (root / "src" / "snake.rs").read_text() + "\npub fn leaf( -> u32 {{{{ missing_helper(\n"
    done = yupana("verify", "--file", str(root / "src" / "snake.rs"), "--buffer", "-", stdin=text, cwd=root)
    assert done.returncode == 2, done.stdout
    assert b"does not parse" in done.stderr and b"missing_helper" not in done.stdout
