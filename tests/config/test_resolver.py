"""The settings model: layering, errors that name file and key, env overrides, provenance."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from yupana import config
from yupana.config import ConfigError, Settings, resolve

DOCS = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"


@pytest.fixture
def home(tmp_path, monkeypatch):
    for key in [k for k in __import__("os").environ if k.startswith("YUPANA_")]:
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("YUPANA_MANAGED_CONFIG", str(tmp_path / "managed" / "config.toml"))
    root = tmp_path / "repo"
    (root / ".bobbin").mkdir(parents=True)
    (tmp_path / "home" / ".config" / "bobbin").mkdir(parents=True)
    return tmp_path


def write_user(home, text):
    (home / "home" / ".config" / "bobbin" / "config.toml").write_text(text)


def write_project(home, text):
    (home / "repo" / ".bobbin" / "config.toml").write_text(text)


def test_defaults_without_any_file(home):
    snap = resolve(str(home / "repo"))
    cfg = snap["config"]
    assert cfg["policy"]["mode"] == "off"
    assert cfg["policy"]["deadline_ms"] == 100
    assert cfg["quipu"]["projection_cache_ttl_secs"] == 3600
    assert snap["sources"] == []
    assert snap["provenance"]["source"] == "default"


def test_project_over_user_tables_merge_arrays_replace(home):
    write_user(home, '[yupana.policy]\nmode = "enforce"\ndeadline_ms = 250\n'
                     '[yupana.policy.scopes.a]\nallow_paths = ["src/**", "docs/**"]\n')
    write_project(home, '[yupana.policy.scopes.a]\nallow_paths = ["tests/**"]\n'
                        '[yupana.policy.scopes.b]\ndeny_paths = ["x"]\n')
    cfg = resolve(str(home / "repo"))["config"]
    assert cfg["policy"]["mode"] == "enforce"  # from the user file, untouched by the project
    assert cfg["policy"]["deadline_ms"] == 250
    assert cfg["policy"]["scopes"]["a"]["allow_paths"] == ["tests/**"]  # arrays replace
    assert cfg["policy"]["scopes"]["b"]["deny_paths"] == ["x"]  # tables merge


def test_error_names_file_key_value_and_allowed_values(home):
    write_project(home, '[yupana.policy]\nmode = "enforced"\n')
    with pytest.raises(ConfigError) as err:
        resolve(str(home / "repo"))
    text = str(err.value)
    assert str(home / "repo" / ".bobbin" / "config.toml") in text
    assert "yupana.policy.mode" in text and "'enforced'" in text
    assert "'off', 'advise' or 'enforce'" in text


def test_bad_toml_names_the_file_and_position(home):
    write_user(home, "[yupana.policy\nmode = 1\n")
    with pytest.raises(ConfigError, match=r"config\.toml: not valid TOML: .*line 1"):
        resolve(str(home / "repo"))


def test_each_file_is_checked_on_its_own(home):
    # The user file is wrong even though the project file would override the key.
    write_user(home, '[yupana.policy]\ndeadline_ms = "fast"\n')
    write_project(home, "[yupana.policy]\ndeadline_ms = 50\n")
    with pytest.raises(ConfigError, match=r"home/\.config/bobbin/config\.toml: yupana\.policy\.deadline_ms"):
        resolve(str(home / "repo"))


def test_env_overrides_files_and_errors_name_the_variable(home, monkeypatch):
    write_project(home, '[yupana.policy]\nmode = "advise"\n')
    monkeypatch.setenv("YUPANA_POLICY__MODE", "enforce")
    snap = resolve(str(home / "repo"))
    assert snap["config"]["policy"]["mode"] == "enforce"
    assert snap["provenance"]["source"] == "env"
    monkeypatch.setenv("YUPANA_POLICY__MODE", "loud")
    with pytest.raises(ConfigError, match="environment variable YUPANA_POLICY__MODE"):
        resolve(str(home / "repo"))


def test_unknown_keys_are_warnings_not_errors(home):
    write_project(home, '[yupana.policy]\nmdoe = "enforce"\n[yupana.policy.scopes.t]\nallow_path = ["x"]\n')
    snap = resolve(str(home / "repo"))
    assert any("yupana.policy.mdoe" in w for w in snap["warnings"])
    assert any("yupana.policy.scopes.t.allow_path" in w for w in snap["warnings"])
    assert snap["config"]["policy"]["mode"] == "off"


def test_project_lowering_the_user_mode_is_reported(home):
    write_user(home, '[yupana.policy]\nmode = "enforce"\n')
    write_project(home, '[yupana.policy]\nmode = "advise"\n')
    prov = resolve(str(home / "repo"))["provenance"]
    assert prov == {"effective": "advise", "source": "project", "user_mode": "enforce", "lowered_by_project": True,
                    "managed_mode": None}


def test_explicit_config_replaces_discovery_and_must_exist(home):
    write_project(home, '[yupana.policy]\nmode = "enforce"\n')
    other = home / "other.toml"
    other.write_text('[yupana.policy]\nmode = "advise"\n')
    assert resolve(str(home / "repo"), str(other))["config"]["policy"]["mode"] == "advise"
    with pytest.raises(ConfigError, match="no such config file"):
        resolve(str(home / "repo"), str(home / "missing.toml"))


def test_local_rule_class_key_and_enums(home):
    write_project(home, '[[yupana.policy.rules]]\nname = "r"\nlanguage = "rust"\nquery = "(x) @c"\n'
                        'match_type = "must-match"\npattern = "a"\nclass = "hard"\n')
    rule = resolve(str(home / "repo"))["config"]["policy"]["rules"][0]
    assert rule["class"] == "hard"
    write_project(home, '[[yupana.policy.rules]]\nname = "r"\nlanguage = "rust"\nquery = "(x) @c"\n'
                        'match_type = "must-matches"\npattern = "a"\n')
    with pytest.raises(ConfigError, match=r"yupana\.policy\.rules\.0\.match_type"):
        resolve(str(home / "repo"))


def _model_keys(model, prefix=""):
    for name, field in model.model_fields.items():
        key = field.alias or name
        ann = field.annotation
        if isinstance(ann, type) and issubclass(ann, config.BaseModel):
            yield from _model_keys(ann, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}"


def test_every_key_is_documented():
    doc = DOCS.read_text()
    tables = {"policy.scopes": "scopes.<tenant>", "policy.rules": "[[yupana.policy.rules]]",
              "policy.tripwires": "[[yupana.policy.tripwires]]"}
    missing = [k for k in _model_keys(Settings)
               if not (tables.get(k, "") in doc if k in tables else re.search(rf"`{re.escape(k.split('.')[-1])}`", doc))]
    assert not missing, f"docs/configuration.md does not document: {missing}"


# ── one schema: the pydantic model is built from the table the hooks' resolver uses ────────

CORPUS = [
    {},
    {"policy": {"mode": "enforced"}},
    {"policy": {"mode": "enforce", "deadline_ms": "fast"}},
    {"policy": {"deadline_ms": 0}}, {"policy": {"deadline_ms": 60001}}, {"policy": {"deadline_ms": 2.0}},
    {"policy": {"deadline_ms": 2.5}}, {"policy": {"deadline_ms": True}}, {"policy": {"deadline_ms": "250"}},
    {"policy": {"verify": 1}}, {"policy": {"verify": 2}}, {"policy": {"verify": "yes"}}, {"policy": {"verify": [1]}},
    {"policy": 5}, {"policy": {"scopes": 3}}, {"policy": {"scopes": {"a": 3}}},
    {"policy": {"scopes": {"a": {"allow_paths": "src/**"}}}},
    {"policy": {"scopes": {"a": {"allow_paths": ["src/**", 3], "max_impacted_files": -1, "extra": 1}}}},
    {"policy": {"rules": [{"name": "r"}]}},
    {"policy": {"rules": [{"name": "r", "language": "rust", "query": "(x) @c", "match_type": "must-match",
                           "pattern": "a", "class": "hard", "zzz": [1, {"a": 2}]}]}},
    {"policy": {"rules": [{"name": "r", "language": "rust", "query": "(x) @c", "match_type": "must-matches",
                           "pattern": "a", "class": "hardest"}]}},
    {"policy": {"rules": "x"}}, {"policy": {"rules": ["x"]}},
    {"policy": {"tripwires": [{"name": "w", "paths": ["a/**"], "effect": "throttle", "backoff_secs": "x"}]}},
    {"policy": {"tripwires": [{"name": 3, "paths": "a", "rule": 5}]}},
    {"quipu": {"enabled": True, "endpoint": "http://127.0.0.1:3030", "dialect": "sparql", "connect_timeout_secs": 0}},
    {"quipu": {"connect_timeout_secs": 1, "request_timeout_secs": "1.5", "refresh_deadline_secs": "x",
               "batch_size": 5001, "auth": "digest", "default_graph": 4}},
    {"serve": {"mcp_http_port": 0, "use_daemon": True}}, {"freshness": {"lsp_on": "never"}},
    {"tenancy": {"max_overlays": 0}}, {"metrics": {"record_paths": "all"}},
    {"languages": "rust"}, {"languages": ["rust", 1]}, {"base_ref": 1}, {"enable_lsp": "off"},
    {"unknown": 1, "policy": {"mdoe": "x"}},
    {"policy": {"mode": "advise", "notify_on_fail_open": False, "max_hops": 65, "work_item_scope": "enforce"}},
]


@pytest.mark.parametrize("table", CORPUS, ids=[str(i) for i in range(len(CORPUS))])
def test_the_model_and_the_hooks_resolver_give_the_same_answers(table):
    from yupana.config import resolver as config_resolve, schema as config_schema

    errors: list = []
    value = config_resolve.validate(table, config_schema.SETTINGS, (), errors)
    assert config.model_check(table) == ((None if errors else value), errors)


def test_the_model_declares_every_key_of_the_schema_and_nothing_else():
    from yupana.config import schema as config_schema

    def schema_keys(spec, prefix=""):
        for name, sub in spec["fields"].items():
            key = config_schema.key_of(name, sub)
            if sub["kind"] == "table":
                yield from schema_keys(sub, f"{prefix}{key}.")
            else:
                yield f"{prefix}{key}"

    assert sorted(_model_keys(Settings)) == sorted(schema_keys(config_schema.SETTINGS))


def test_an_unknown_environment_key_is_a_warning_and_json_values_parse(home, monkeypatch):
    monkeypatch.setenv("YUPANA_POLICY__MDOE", "enforce")
    monkeypatch.setenv("YUPANA_POLICY__SCOPES__T__ALLOW_PATHS", '["src/**"]')
    snap = resolve(str(home / "repo"))
    assert snap["config"]["policy"]["mode"] == "off"
    assert snap["config"]["policy"]["scopes"]["t"]["allow_paths"] == ["src/**"]
    assert any("YUPANA_POLICY__MDOE" in w and "yupana.policy.mdoe" in w for w in snap["warnings"])
    monkeypatch.setenv("YUPANA_POLICY__SCOPES__T__ALLOW_PATHS", "src/**")
    with pytest.raises(ConfigError, match=r"environment variable YUPANA_POLICY__SCOPES__T__ALLOW_PATHS: "
                                          r"yupana\.policy\.scopes\.t\.allow_paths takes a JSON array"):
        resolve(str(home / "repo"))


def test_the_top_level_variables_are_the_schemas_top_level_keys(home, monkeypatch):
    from yupana import settings
    from yupana.config import schema as config_schema

    top = [f"YUPANA_{n.upper()}" for n, s in config_schema.SETTINGS["fields"].items() if s["kind"] != "table"]
    assert sorted(settings.TOP_LEVEL_ENV) == sorted(top)
    monkeypatch.setenv("YUPANA_BASE_REF", "develop")
    monkeypatch.setenv("YUPANA_LANGUAGES", '["rust"]')
    cfg = resolve(str(home / "repo"))["config"]
    assert cfg["base_ref"] == "develop" and cfg["languages"] == ["rust"]
