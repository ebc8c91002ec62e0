"""The one settings model: ``[yupana.*]`` from .bobbin/config.toml, layered. Cold path only.

Resolution, lowest to highest precedence, merged per key (tables deep-merge; arrays and
scalars replace):

1. the defaults below;
2. the user file, ``$HOME/.config/bobbin/config.toml``;
3. the project file, ``<root>/.bobbin/config.toml``;
4. environment variables ``YUPANA_<TABLE>__<KEY>`` (for example ``YUPANA_POLICY__MODE``).

``--config PATH`` replaces discovery (2 and 3): the file must exist. Each file is checked on
its own, so an error names the file, the key and what is allowed. Unknown keys are not
errors (a newer config must not disarm an older binary) but are reported as warnings by
``yupana status`` and ``yupana config check``.

Hooks never import this module (pydantic costs ~250 ms): they read the resolved snapshot
that :mod:`yupana.settings` keeps keyed by the config files' fingerprints.
"""

from __future__ import annotations

import os
import tomllib
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from yupana import paths

Mode = Literal["off", "advise", "enforce"]
MODE_ORDER = {"off": 0, "advise": 1, "enforce": 2}


class ConfigError(Exception):
    """A configuration file or value that cannot be used; the message says where and why."""


class _Table(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)


class Freshness(_Table):
    debounce_ms: int = Field(300, ge=0)
    heavy_debounce_ms: int = Field(1500, ge=0)
    lsp_on: Literal["save", "change", "off"] = "save"


class Tenancy(_Table):
    max_overlays: int = Field(32, ge=1)
    high_fanin_threshold: int = Field(200, ge=1)
    overlay_eviction: Literal["on_session_close", "lru"] = "on_session_close"


class Serve(_Table):
    bind_address: str = "127.0.0.1"
    mcp_http_port: int = Field(3040, ge=1, le=65535)
    read_only: bool = False
    use_daemon: bool = False


class Quipu(_Table):
    enabled: bool = False
    endpoint: str = ""
    dialect: Literal["sparql11", "quipu"] | None = None
    default_graph: str | None = None
    update_endpoint: str | None = None  # SPARQL Update URL (sparql11); default: the query URL
    projection_cache_ttl_secs: int = Field(3600, ge=0)
    refresh_interval_secs: int = Field(300, ge=0)
    connect_timeout_secs: float = Field(2.0, gt=0)
    request_timeout_secs: float = Field(2.0, gt=0)
    refresh_deadline_secs: float = Field(20.0, gt=0)
    refresh_backoff_secs: int = Field(60, ge=1)
    batch_size: int = Field(200, ge=1, le=5000)
    max_rows: int = Field(10000, ge=1)
    auth: Literal["none", "basic", "bearer"] = "none"
    auth_user: str | None = None
    credentials_env: str = "YUPANA_SPARQL_SECRET"
    credentials_file: str | None = None
    signing_key_path: str = "yupana-signing.pk8"
    promote_on: str = "merge"
    branch_model: str = "named_graph"
    shapes_path: str = "shapes/"


class Scope(_Table):
    allow_paths: list[str] = []
    deny_paths: list[str] = []
    max_impacted_symbols: int | None = Field(None, ge=0)
    max_impacted_files: int | None = Field(None, ge=0)
    allow_targets: list[str] = []
    deny_targets: list[str] = []


class LocalRule(_Table):
    name: str
    language: str
    query: str
    match_type: Literal["must-match", "must-not-match", "must-exist"]
    pattern: str
    gate: str | None = None
    applies_to: list[str] = []
    message: str | None = None
    class_: Literal["hard", "soft", "escalation"] | None = Field(None, alias="class")
    verification_point: Literal["PAG", "ATM", "PAA", "tool_layer", "policy_layer"] | None = None
    backoff_formula: str | None = None


class Tripwire(_Table):
    """Loosely typed on purpose: a misconfigured wire is a loud fail-open naming that wire,
    not a config error that disarms every other check (see yupana.evaluate.tripwires)."""

    name: str = ""
    paths: list[str] = []
    rule: str | None = None
    effect: str = ""
    message: str | None = None
    backoff_secs: int | None = None


class Policy(_Table):
    mode: Mode = "off"
    deadline_ms: int = Field(100, ge=1, le=60000)
    notify_on_fail_open: bool = True
    max_hops: int = Field(5, ge=0, le=64)
    verify: bool = False
    work_item_scope: Mode = "off"
    action_scope: Mode = "off"
    disk_advisory: bool = True
    scopes: dict[str, Scope] = {}
    rules: list[LocalRule] = []
    tripwires: list[Tripwire] = []


class Metrics(_Table):
    record_paths: Literal["off", "relative", "absolute"] = "off"


class Settings(BaseSettings):
    """Every ``[yupana]`` key, with the defaults of the interop reference §5.6."""

    model_config = SettingsConfigDict(
        env_prefix="YUPANA_", env_nested_delimiter="__", extra="ignore", populate_by_name=True
    )

    base_ref: str = "main"
    enable_lsp: bool = True
    enable_cpg: bool = False
    languages: list[str] = ["rust", "typescript", "python", "go", "java", "cpp"]
    freshness: Freshness = Freshness()
    tenancy: Tenancy = Tenancy()
    serve: Serve = Serve()
    quipu: Quipu = Quipu()
    policy: Policy = Policy()
    metrics: Metrics = Metrics()

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # Environment over the merged files over the defaults.
        return (env_settings, init_settings)


class _FileOnly(Settings):
    """The same model with the environment switched off, to check one file on its own."""

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings,)


def read_file(path: str) -> dict[str, Any]:
    """The ``[yupana]`` table of one TOML file; ConfigError naming the file when unreadable."""
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such config file") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read config file: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    table = data.get("yupana", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [yupana] must be a table, found {type(table).__name__}")
    _check(table, path)
    return table


def _check(table: dict[str, Any], source: str) -> None:
    try:
        _FileOnly(**table)
    except ValidationError as exc:
        raise ConfigError(_explain(exc, source)) from None


def _explain(exc: ValidationError, source: str) -> str:
    lines = []
    for err in exc.errors():
        key = "yupana." + ".".join(str(p) for p in err["loc"])
        got = err.get("input")
        allowed = ""
        ctx = err.get("ctx") or {}
        if "expected" in ctx and str(ctx["expected"]) not in err["msg"]:
            allowed = f"; allowed: {ctx['expected']}"
        shown = "" if isinstance(got, dict) else f" = {got!r}"
        lines.append(f"{source}: {key}{shown}: {err['msg']}{allowed}")
    return "\n".join(lines)


def _explain_env(exc: ValidationError) -> str:
    lines = []
    for err in exc.errors():
        var = "YUPANA_" + "__".join(str(p).upper() for p in err["loc"])
        source = f"environment variable {var}" if var in os.environ else "merged configuration"
        lines.append(_explain(ValidationError.from_exception_data(exc.title, [err]), source))  # type: ignore[list-item]
    return "\n".join(lines)


def deep_merge(low: dict[str, Any], high: dict[str, Any]) -> dict[str, Any]:
    """Tables merge key by key; arrays and scalars in ``high`` replace those in ``low``."""
    out = dict(low)
    for key, value in high.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = value
    return out


def unknown_keys(table: dict[str, Any], model: type[BaseModel] = Settings, prefix: str = "yupana") -> list[str]:
    """Dotted names of keys the model does not define (reported, never fatal)."""
    found: list[str] = []
    fields = model.model_fields
    aliases = {f.alias: name for name, f in fields.items() if f.alias}
    for key, value in table.items():
        name = aliases.get(key, key)
        if name not in fields:
            found.append(f"{prefix}.{key}")
            continue
        ann = fields[name].annotation
        if isinstance(value, dict) and isinstance(ann, type) and issubclass(ann, BaseModel):
            found += unknown_keys(value, ann, f"{prefix}.{key}")
        elif isinstance(value, dict) and name == "scopes":
            for tenant, scope in value.items():
                if isinstance(scope, dict):
                    found += unknown_keys(scope, Scope, f"{prefix}.{key}.{tenant}")
        elif isinstance(value, list) and name in ("rules", "tripwires"):
            sub = LocalRule if name == "rules" else Tripwire
            for i, entry in enumerate(value):
                if isinstance(entry, dict):
                    found += unknown_keys(entry, sub, f"{prefix}.{key}[{i}]")
    return found


def resolve(root: str, override: str | None = None) -> dict[str, Any]:
    """Resolve the configuration for ``root`` into a plain snapshot dict.

    The snapshot holds ``config`` (every key, defaults filled), ``sources`` (the files
    read), ``provenance`` (where the effective mode came from and whether the project
    lowered the user's mode) and ``warnings`` (unknown keys). Raises ConfigError.
    """
    layers: list[tuple[str, str, dict[str, Any]]] = []
    if override:
        layers.append(("--config", override, read_file(override)))
    else:
        user = paths.user_config_file()
        if user and os.path.exists(user):
            layers.append(("user", user, read_file(user)))
        project = paths.project_config_file(root)
        if os.path.exists(project):
            layers.append(("project", project, read_file(project)))
    merged: dict[str, Any] = {}
    warnings: list[str] = []
    for _, path, table in layers:
        merged = deep_merge(merged, table)
        warnings += [f"{path}: unknown key {k} (ignored)" for k in unknown_keys(table)]
    try:
        settings = Settings(**merged)
    except ValidationError as exc:
        raise ConfigError(_explain_env(exc)) from None
    config = settings.model_dump(mode="json", by_alias=True)
    return {
        "config": config,
        "sources": [{"layer": layer, "path": path} for layer, path, _ in layers],
        "provenance": _mode_provenance(layers, config["policy"]["mode"]),
        "warnings": warnings,
    }


def _mode_provenance(layers: list[tuple[str, str, dict[str, Any]]], effective: str) -> dict[str, Any]:
    source = "default"
    user_mode = None
    project_mode = None
    for layer, _, table in layers:
        mode = (table.get("policy") or {}).get("mode")
        if mode is not None:
            source = layer
            if layer == "user":
                user_mode = mode
            elif layer == "project":
                project_mode = mode
    if os.environ.get("YUPANA_POLICY__MODE"):
        source = "env"
    lowered = (
        user_mode is not None
        and project_mode is not None
        and MODE_ORDER[project_mode] < MODE_ORDER[user_mode]
    )
    return {"effective": effective, "source": source, "user_mode": user_mode, "lowered_by_project": lowered}
