"""The pydantic-settings model, built from the one schema table (:mod:`yupana.config.schema`). Cold path.

Loaded on first use of :class:`yupana.config.Settings` (or another model) only: resolution
itself is :mod:`yupana.config.resolver`, standard library, so the cold commands and the
refresher do not pay pydantic's ~250 ms import to read their configuration.
``tests/config/test_resolver.py`` holds the model and the resolver to the same answers (values and
error messages) on a corpus of configurations.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from yupana.config import schema as schema

Mode = Literal[schema.MODES]  # type: ignore[valid-type]


class _Table(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)


class _Root(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="YUPANA_", env_nested_delimiter="__", extra="ignore", populate_by_name=True
    )

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


_BUILT: dict[str, type[BaseModel]] = {}


def _annotation(spec: dict[str, Any]) -> Any:
    kind = spec["kind"]
    if kind == "table":
        ann: Any = _model(spec)
    elif kind == "map":
        ann = dict[str, _model(spec["item"])]  # type: ignore[misc]
    elif kind == "list_table":
        ann = list[_model(spec["item"])]  # type: ignore[misc]
    elif kind == "list_str":
        ann = list[str]
    elif kind == "enum":
        ann = Literal[spec["choices"]]
    else:
        ann = {"str": str, "int": int, "float": float, "bool": bool}[kind]
    return ann | None if spec["optional"] else ann


def _model(spec: dict[str, Any], base: type[BaseModel] = _Table) -> type[BaseModel]:
    """The pydantic model of one schema table (built once)."""
    if spec["name"] in _BUILT:
        return _BUILT[spec["name"]]
    from pydantic import create_model

    fields: dict[str, Any] = {}
    for name, sub in spec["fields"].items():
        bounds = {k: sub[k] for k in ("ge", "gt", "le") if sub[k] is not None}
        if sub["alias"]:
            bounds["alias"] = sub["alias"]
        if sub["kind"] == "table":
            value: Any = Field(default_factory=_model(sub), **bounds)
        elif sub["required"]:
            value = Field(..., **bounds)
        elif isinstance(sub["default"], (list, dict)):
            value = Field(default_factory=lambda d=sub["default"]: type(d)(d), **bounds)
        else:
            value = Field(sub["default"], **bounds)
        fields[name] = (_annotation(sub), value)
    model = create_model(spec["name"], __base__=base, __module__=__name__, **fields)
    _BUILT[spec["name"]] = model
    return model


Settings = _model(schema.SETTINGS, _Root)
Freshness, Tenancy, Serve, Quipu, Policy, Metrics = (
    _model(schema.SETTINGS["fields"][k]) for k in ("freshness", "tenancy", "serve", "quipu", "policy", "metrics"))
Scope, LocalRule, Tripwire = (_model(schema.POLICY["fields"][k]["item"]) for k in ("scopes", "rules", "tripwires"))


class _FileOnly(Settings):  # type: ignore[valid-type, misc]
    """The same model with the environment switched off, to check one table on its own."""

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


def model_check(table: dict[str, Any]) -> tuple[dict[str, Any] | None, list[tuple[tuple[Any, ...], str, Any]]]:
    """``table`` through the pydantic model: (dump, None) or (None, [(loc, message, input)]).

    What :func:`yupana.config.resolver.check` answers, by the other engine (the parity test).
    """
    try:
        return _FileOnly(**table).model_dump(mode="json", by_alias=True), []
    except ValidationError as exc:
        return None, [(tuple(e["loc"]), e["msg"], e.get("input")) for e in exc.errors()]
