"""The managed floor (issue 22 §1): no user, project, variable, --config or nested file lowers it."""

from __future__ import annotations

import os

import pytest

from yupana.config import lattice as config_lattice, schema as config_schema
from yupana.config import ConfigError, resolve


@pytest.fixture
def home(tmp_path, monkeypatch):
    for key in [k for k in os.environ if k.startswith("YUPANA_")]:
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("YUPANA_MANAGED_CONFIG", str(tmp_path / "managed" / "config.toml"))
    for d in ("repo/.bobbin", "home/.config/bobbin", "managed"):
        (tmp_path / d).mkdir(parents=True)
    return tmp_path


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


FLOOR = """
[yupana.policy]
mode = "advise"
deadline_ms = 200
[yupana.policy.scopes.agent]
allow_paths = ["src/**"]
deny_paths = ["src/config.rs"]
[[yupana.policy.tripwires]]
name = "auth"
paths = ["src/auth/**"]
effect = "deny"
[yupana.quipu]
endpoint = "http://store.example:3030"
"""


def test_every_layer_may_tighten_the_floor_and_none_may_loosen_it(home, monkeypatch):
    managed = write(home / "managed" / "config.toml", FLOOR)
    write(home / "home/.config/bobbin/config.toml", '[yupana.policy]\nmode = "off"\n')
    project = write(home / "repo/.bobbin/config.toml", """
[yupana.policy]
deadline_ms = 50
[yupana.policy.scopes.agent]
allow_paths = ["src/lib/**", "docs/**"]
deny_paths = ["src/main.rs"]
[[yupana.policy.tripwires]]
name = "auth"
paths = ["nothing/**"]
effect = "warn"
[yupana.quipu]
endpoint = "http://elsewhere:1"
""")
    monkeypatch.setenv("YUPANA_POLICY__MODE", "off")
    snap = resolve(str(home / "repo"))
    cfg = snap["config"]
    assert cfg["policy"]["mode"] == "advise"
    assert cfg["policy"]["deadline_ms"] == 200
    scope = cfg["policy"]["scopes"]["agent"]
    assert scope["allow_paths"] == ["src/lib/**"]  # narrower kept, the wider glob dropped
    assert scope["deny_paths"] == ["src/config.rs", "src/main.rs"]  # more: the floor's stay
    assert [(w["name"], w["paths"], w["effect"]) for w in cfg["policy"]["tripwires"]] == [
        ("auth", ["src/auth/**"], "deny")]
    assert cfg["quipu"]["endpoint"] == "http://store.example:3030"
    lowered = {(e["layer"], e["key"]): e for e in snap["lowered"]}
    assert set(lowered) == {("user", "policy.mode"), ("env", "policy.mode"), ("project", "policy.deadline_ms"),
                            ("project", "policy.scopes.agent.allow_paths"),
                            ("project", "policy.scopes.agent.deny_paths"), ("project", "policy.tripwires"),
                            ("project", "quipu.endpoint")}
    assert lowered[("env", "policy.mode")] == {"layer": "env", "file": "YUPANA_POLICY__MODE", "key": "policy.mode",
                                               "value": "off", "floor": "advise"}
    assert lowered[("project", "policy.deadline_ms")]["file"] == str(project)
    assert snap["managed"] == {"path": str(managed), "present": True}
    assert snap["sources"][0] == {"layer": "managed", "path": str(managed)}
    assert snap["provenance"]["source"] == "managed" and snap["provenance"]["managed_mode"] == "advise"


def test_a_tighter_value_stands_and_is_not_reported(home):
    write(home / "managed" / "config.toml", FLOOR)
    write(home / "repo/.bobbin/config.toml", '[yupana.policy]\nmode = "enforce"\ndeadline_ms = 300\n')
    snap = resolve(str(home / "repo"))
    assert (snap["config"]["policy"]["mode"], snap["config"]["policy"]["deadline_ms"]) == ("enforce", 300)
    assert snap["lowered"] == []
    assert snap["provenance"]["source"] == "project"


def test_config_override_is_held_to_the_floor_too(home):
    write(home / "managed" / "config.toml", '[yupana.policy]\nmode = "enforce"\n')
    other = write(home / "other.toml", '[yupana.policy]\nmode = "off"\n')
    snap = resolve(str(home / "repo"), str(other))
    assert snap["config"]["policy"]["mode"] == "enforce"
    assert [(e["layer"], e["file"]) for e in snap["lowered"]] == [("--config", str(other))]


def test_a_nested_file_only_tightens_the_project_above_it(home):
    write(home / "repo/.bobbin/config.toml", '[yupana.policy]\nmode = "enforce"\n'
                                            '[yupana.policy.scopes.agent]\ndeny_paths = ["src/config.rs"]\n')
    nested = write(home / "repo/src/.bobbin/config.toml",
                   '[yupana.policy]\nmode = "off"\nself_protection = "off"\n'
                   '[yupana.policy.scopes.agent]\ndeny_paths = ["src/extra.rs"]\n')
    snap = resolve(str(home / "repo"), None, (str(home / "repo" / "src"),))
    policy = snap["config"]["policy"]
    assert policy["mode"] == "enforce" and policy["self_protection"] == "enforce"
    assert policy["scopes"]["agent"]["deny_paths"] == ["src/config.rs", "src/extra.rs"]
    assert all(e["layer"] == "nested" and e["file"] == str(nested) for e in snap["lowered"])
    assert {e["key"] for e in snap["lowered"]} == {"policy.mode", "policy.self_protection",
                                                   "policy.scopes.agent.deny_paths"}
    assert snap["sources"][-1] == {"layer": "nested", "path": str(nested)}


def test_without_a_managed_file_nothing_changes(home):
    write(home / "repo/.bobbin/config.toml", '[yupana.policy]\nmode = "advise"\n')
    snap = resolve(str(home / "repo"))
    assert snap["config"]["policy"]["mode"] == "advise" and snap["lowered"] == []
    assert snap["managed"]["present"] is False


@pytest.mark.parametrize("make", ["fifo", "zero", "big"])
def test_a_config_that_is_no_regular_file_or_too_big_is_an_error_at_once(home, make):
    path = home / "repo/.bobbin/config.toml"
    if make == "fifo":
        os.mkfifo(path)
    elif make == "zero":
        path.symlink_to("/dev/zero")
    else:
        with open(path, "wb") as fh:
            fh.truncate(5 << 20)
    with pytest.raises(ConfigError) as err:
        resolve(str(home / "repo"))
    said = str(err.value)
    assert str(path) in said and "the configuration was not read" in said
    assert {"fifo": "FIFO", "zero": "/dev/zero", "big": "over the 4194304-byte bound"}[make] in said


def test_every_schema_row_says_how_it_tightens():
    def rows(spec, prefix=""):
        for name, sub in spec["fields"].items():
            yield prefix + name, sub
            if sub["kind"] == "table":
                yield from rows(sub, prefix + name + ".")
            elif sub["kind"] in ("map", "list_table"):
                yield from rows(sub["item"], prefix + name + ".")

    bad = [(k, s["tighten"]) for k, s in rows(config_schema.SETTINGS)
           if s["tighten"] not in config_lattice.KINDS + ("table", "map")]
    assert not bad
    modes = [k for k, s in rows(config_schema.SETTINGS) if s["kind"] == "enum" and s["choices"] == config_schema.MODES]
    assert all(dict(rows(config_schema.SETTINGS))[k]["tighten"] == "rung" for k in modes), modes


def test_the_lattice_in_one_place():
    assert config_lattice.within("src/a/**", "src/**") and not config_lattice.within("docs/**", "src/**")
    assert config_lattice.looser({"policy": {"mode": "enforce"}}, {"policy": {"mode": "advise"}}) == ["policy.mode"]
    assert config_lattice.looser({"policy": {"mode": "advise"}}, {"policy": {"mode": "enforce"}}) == []


WIRE = {"name": "w", "paths": ["src/auth/**"], "effect": "deny"}
LATTICE = [
    # (what the floor sets, what a layer tries, what stands, whether it was lowered)
    ({"policy": {"landing": "advise"}}, {"policy": {"landing": "off"}}, ("policy", "landing"), "advise", True),
    ({"policy": {"landing": "advise"}}, {"policy": {"landing": "enforce"}}, ("policy", "landing"), "enforce", False),
    ({"policy": {"tripwires": [WIRE]}}, {"policy": {"tripwires": []}}, ("policy", "tripwires"), [WIRE], True),
    ({"policy": {"tripwires": [WIRE]}}, {"policy": {"tripwires": [dict(WIRE, effect="warn"), dict(WIRE, name="x")]}},
     ("policy", "tripwires"), [WIRE, dict(WIRE, name="x")], True),
    ({"policy": {"scopes": {"t": {"allow_paths": ["src/**"]}}}}, {"policy": {"scopes": {"t": {"allow_paths": []}}}},
     ("policy", "scopes", "t", "allow_paths"), ["src/**"], True),
    ({"policy": {"scopes": {"t": {"allow_paths": ["**"]}}}}, {"policy": {"scopes": {"t": {"allow_paths": ["a/*"]}}}},
     ("policy", "scopes", "t", "allow_paths"), ["a/*"], False),
    ({"policy": {"scopes": {"t": {"max_impacted_files": 10}}}},
     {"policy": {"scopes": {"t": {"max_impacted_files": 50}}}}, ("policy", "scopes", "t", "max_impacted_files"), 10,
     True),
    ({"policy": {"scopes": {"t": {"max_impacted_files": 10}}}}, {"policy": {"scopes": {"t": {"max_impacted_files": 3}}}},
     ("policy", "scopes", "t", "max_impacted_files"), 3, False),
    ({"policy": {"max_hops": 8}}, {"policy": {"max_hops": "2"}}, ("policy", "max_hops"), 8, True),
    ({"policy": {"verify": True}}, {"policy": {"verify": "false"}}, ("policy", "verify"), True, True),
    ({"bundle": {"trusted_keys": ["ed25519:A"]}}, {"bundle": {"trusted_keys": ["ed25519:A", "ed25519:EVIL"]}},
     ("bundle", "trusted_keys"), ["ed25519:A"], True),
    ({"quipu": {"batch_size": 100}}, {"quipu": {"batch_size": 7}}, ("quipu", "batch_size"), 7, False),
    ({"policy": {"scopes": {"t": {"deny_paths": ["a"]}}}}, {"policy": {"scopes": {"u": {"deny_paths": []}}}},
     ("policy", "scopes", "u", "deny_paths"), [], False),
]


@pytest.mark.parametrize("floor,layer,at,stands,lowered", LATTICE, ids=[str(i) for i in range(len(LATTICE))])
def test_each_kind_of_the_lattice(home, floor, layer, at, stands, lowered):
    write(home / "managed" / "config.toml", _toml(floor))
    write(home / "repo/.bobbin/config.toml", _toml(layer))
    snap = resolve(str(home / "repo"))
    node = snap["config"]
    for part in at:
        node = node[part]
    if isinstance(stands, list) and stands and isinstance(stands[0], dict):
        node = [{k: v for k, v in entry.items() if k in ("name", "paths", "effect")} for entry in node]
    assert node == stands
    assert bool(snap["lowered"]) is lowered
    if lowered:
        assert snap["lowered"][0]["key"] == ".".join(at) and snap["lowered"][0]["layer"] == "project"


def _toml(table: dict, prefix: str = "yupana") -> str:
    """A tiny TOML writer for these tables (inline arrays of inline tables)."""
    import json

    scalars, tables = [], []
    for key, value in table.items():
        if isinstance(value, dict):
            tables.append(_toml(value, f"{prefix}.{key}"))
        elif isinstance(value, list) and value and isinstance(value[0], dict):
            items = ", ".join("{" + ", ".join(f"{k} = {json.dumps(v)}" for k, v in e.items()) + "}" for e in value)
            scalars.append(f"{key} = [{items}]")
        else:
            scalars.append(f"{key} = {json.dumps(value)}")
    return (f"[{prefix}]\n" + "\n".join(scalars) + "\n" if scalars else "") + "".join(tables)


def test_a_url_tried_below_the_floor_is_listed_without_its_credentials(home, monkeypatch):
    write(home / "managed" / "config.toml", '[yupana.quipu]\nendpoint = "http://store.example:3030"\n')
    monkeypatch.setenv("YUPANA_QUIPU__ENDPOINT", "http://alice:s3cret@evil.example:1/")
    snap = resolve(str(home / "repo"))
    assert snap["config"]["quipu"]["endpoint"] == "http://store.example:3030"
    [entry] = snap["lowered"]
    assert entry["key"] == "quipu.endpoint" and "s3cret" not in repr(entry) and "evil.example" in entry["value"]
