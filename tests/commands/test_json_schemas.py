"""Every command's ``--json`` output, from the real CLI, validates against its shipped JSON
Schema (yupana/schemas/<command>.schema.json) and carries the one convention (docs/json.md)."""

from __future__ import annotations

import json
import subprocess

import pytest

from yupana import __version__
from yupana.commands.json_output import schema_path
from tests.commands.test_shapes import BAD, write
from tests.commands.test_status import project, root, write_config  # noqa: F401 - root is a fixture
from tests.commands.test_verify import SNAKE_FMT, _crate

jsonschema = pytest.importorskip("jsonschema")


def check(command: str, done: subprocess.CompletedProcess) -> dict:
    assert done.stdout, done.stderr
    doc = json.loads(done.stdout)
    with open(schema_path(command), encoding="utf-8") as fh:
        schema = json.load(fh)
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(doc, schema)
    assert doc["schema"] == f"yupana.{command}/1" and doc["yupana_version"] == __version__
    return doc


def test_status_project_config_explain_and_ci_select_follow_their_schemas(yupana, env, root):  # noqa: F811
    write_config(root, mode="enforce")
    check("project", yupana("project", "--json", cwd=root))
    doc = check("status", yupana("status", "--json", "--offline", cwd=root))
    assert doc["schema_version"] == 1  # the old key is kept one major version
    check("config.check", yupana("config", "check", "--json", cwd=root))
    payload = {"session_id": "s", "cwd": str(root), "hook_event_name": "PreToolUse", "tool_name": "Edit",
               "tool_input": {"file_path": str(root / "src" / "lib.rs"), "old_string": "fn old() {}",
                              "new_string": "fn new() {}"}}
    check("explain", yupana("explain", "--json", stdin=json.dumps(payload), cwd=root))
    error = check("ci-select", yupana("ci-select", "--json", cwd=root))  # not a git tree: the error document
    assert error["error"]["kind"] == "git"


def test_shapes_validate_follows_its_schema_for_results_and_errors(yupana, tmp_path):
    check("shapes.validate", yupana("shapes", "validate", "--json", write(tmp_path, "bad.ttl", BAD)))
    check("shapes.validate", yupana("shapes", "validate", "--json", str(tmp_path / "missing.ttl")))


def test_verify_follows_its_schema(env, yupana):
    crate = _crate(env)
    buffer = env.base / "proposed.rs"
    buffer.write_text((crate / "src" / "snake.rs").read_text().replace(SNAKE_FMT, "        transform(self.0.as_ref(), snakify, f)"))
    check("verify", yupana("verify", "--file", str(crate / "src" / "snake.rs"), "--buffer", str(buffer), "--json", cwd=crate))
