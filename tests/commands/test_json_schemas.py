"""Every command's ``--json`` output, from the real CLI, validates against its shipped JSON
Schema (yupana/schemas/<schema>.schema.json) and carries the one convention (docs/json.md):
reports and error documents alike; a command that takes ``--json`` without a schema fails."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from yupana import __version__
from yupana.cli import COMMANDS
from yupana.commands.json_output import SCHEMAS_DIR, schema_path
from tests.commands.test_shapes import BAD, COMPILE_BAD, write
from tests.commands.test_status import project, root, write_config  # noqa: F401 - root is a fixture
from tests.commands.test_verify import SNAKE_FMT, _crate

jsonschema = pytest.importorskip("jsonschema")


def check(name: str, done: subprocess.CompletedProcess) -> dict:
    assert done.stdout, done.stderr
    doc = json.loads(done.stdout)
    with open(schema_path(name), encoding="utf-8") as fh:
        schema = json.load(fh)
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.Draft202012Validator(schema).validate(doc)
    assert doc["schema"] == f"yupana.{name}/1" and doc["yupana_version"] == __version__
    return doc


def assert_refused(name: str, doc: dict) -> None:
    with open(schema_path(name), encoding="utf-8") as fh:
        validator = jsonschema.Draft202012Validator(json.load(fh))
    assert not validator.is_valid(doc)


def test_status_project_config_explain_and_ci_select_follow_their_schemas(yupana, env, root):  # noqa: F811
    write_config(root, mode="enforce")
    refreshed = check("project", yupana("project", "--json", cwd=root))
    assert refreshed["status"] == "refreshed" and refreshed["planes"]
    doc = check("status", yupana("status", "--json", "--offline", cwd=root))
    assert doc["schema_version"] == 1  # the old key is kept one major version
    assert doc["rule_set"]["state"] == "loaded"
    assert_refused("status", {k: v for k, v in doc.items() if k != "rule_set"})  # the schema is not vacuous
    assert_refused("status", {**doc, "rule_set": {**doc["rule_set"], "state": "green"}})
    dump = check("project.dump", yupana("project", "--dump", "--json", "--no-refresh", cwd=root))
    assert dump["version"] >= 1 and dump["digest"] == refreshed["digest"]  # the cache's own version stays
    check("config.check", yupana("config", "check", "--json", cwd=root))
    payload = {"session_id": "s", "cwd": str(root), "hook_event_name": "PreToolUse", "tool_name": "Edit",
               "tool_input": {"file_path": str(root / "src" / "lib.rs"), "old_string": "fn old() {}",
                              "new_string": "fn new() {}"}}
    explained = check("explain", yupana("explain", "--json", stdin=json.dumps(payload), cwd=root))
    assert explained["decision"] in ("allow", "notify", "deny") and explained["stages"]
    assert_refused("explain", {**explained, "decision": "maybe"})
    error = check("ci-select", yupana("ci-select", "--json", cwd=root))  # not a git tree: the error document
    assert error["error"]["kind"] == "git"
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    selected = check("ci-select", yupana("ci-select", "--json", "--paths", "src/lib.rs", cwd=root))
    assert selected["state"] in ("selected", "quiet", "unknown") and "error" not in selected


def test_error_documents_follow_the_same_schemas(yupana, env, tmp_path, root):  # noqa: F811
    bad = tmp_path / "bad.toml"
    bad.write_text('[yupana.policy]\nmode = "bogus"\n')
    status = check("status", yupana("--config", str(bad), "status", "--json", "--offline", cwd=root))
    assert status["error"]["kind"] == "config" and status["exit_code"] == 1
    explained = check("explain", yupana("explain", "--json", stdin=b"", cwd=root))  # no payload
    assert explained["error"]["kind"] == "payload"
    failed = check("project", yupana("--config", str(bad), "project", "--json", cwd=root))
    assert failed["status"] == "failed" and failed["error_kind"] == "config"
    config = check("config.check", yupana("--config", str(bad), "config", "check", "--json", cwd=root))
    assert config["ok"] is False and "bogus" in config["error"]


def test_shapes_validate_follows_its_schema_for_results_and_errors(yupana, tmp_path):
    results = check("shapes.validate", yupana("shapes", "validate", "--json", write(tmp_path, "bad.ttl", BAD)))
    assert results["counts"]["violation"] >= 1 and results["exit_code"] == 1
    compiled = check("shapes.validate", yupana("shapes", "validate", "--json", write(tmp_path, "c.ttl", COMPILE_BAD)))
    assert {r["constraint"] for r in compiled["results"]} == {"yupana:CompilesAsRE2", "yupana:CompilesAsGlob"}
    missing = check("shapes.validate", yupana("shapes", "validate", "--json", str(tmp_path / "missing.ttl")))
    assert missing["error_kind"] == "input" and missing["exit_code"] == 2


def test_verify_follows_its_schema(env, yupana):
    crate = _crate(env)
    buffer = env.base / "proposed.rs"
    buffer.write_text((crate / "src" / "snake.rs").read_text().replace(SNAKE_FMT, "        transform(self.0.as_ref(), snakify, f)"))
    check("verify", yupana("verify", "--file", str(crate / "src" / "snake.rs"), "--buffer", str(buffer), "--json", cwd=crate))


def test_bundle_keygen_and_a_refused_build_follow_their_schemas(yupana, tmp_path, root):  # noqa: F811
    key = check("bundle.keygen", yupana("bundle", "keygen", "--out", str(tmp_path / "k.pem"), "--json"))
    assert key["public_key"].startswith("ed25519:")
    write_config(root)  # no [yupana.bundle] signing_key_path: refused, and the document says why
    refused = check("bundle.build", yupana("bundle", "build", "--out", str(tmp_path / "b"), "--json", cwd=root))
    assert refused["status"] == "refused" and refused["error_kind"] == "config"


def test_every_command_that_takes_json_has_a_schema_and_no_other_takes_json(yupana):
    shipped = {name[: -len(".schema.json")] for name in os.listdir(SCHEMAS_DIR)}
    for command, (module_name, _) in COMMANDS.items():
        module = __import__(module_name, fromlist=["GLOBAL_FLAGS"])
        mine = {s for s in shipped if s == command or s.startswith(command + ".")}
        if "--json" in module.GLOBAL_FLAGS:
            assert mine, f"`yupana {command}` takes --json but ships no schema in {SCHEMAS_DIR}"
        else:
            assert not mine, command
    refused = yupana("metrics", "--json")
    assert refused.returncode == 2 and b"--json does nothing for `yupana metrics`" in refused.stderr
