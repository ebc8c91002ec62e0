"""The configuration for the cold commands: resolution, and the typed model on demand.

Every key, type, default and allowed value is declared once, in :mod:`yupana.config_schema`.
Resolution (layering, per-file checks, ``YUPANA_<TABLE>__<KEY>`` overrides, provenance,
warnings) is :mod:`yupana.config_resolve`, standard library only, so that hooks run it in
process when a file changed; it is re-exported here for the cold commands. The
pydantic-settings model derived from the same table (:class:`Settings`, :class:`Quipu`, …,
:func:`model_check`) lives in :mod:`yupana.config_model` and is imported on first use of one
of those names, so reading the configuration never costs pydantic's import.

Hooks never import this module.
"""

from __future__ import annotations

from yupana.config_resolve import (MODE_ORDER as MODE_ORDER, deep_merge as deep_merge, origin as origin,  # re-exported
                                   read_file as read_file, resolve as resolve, resolve_layers as resolve_layers,
                                   unknown_keys as unknown_keys)
from yupana.settings import ConfigError as ConfigError  # one error class for hooks and cold commands

_MODEL_NAMES = ("Settings", "Freshness", "Tenancy", "Serve", "Quipu", "Policy", "Metrics", "Scope", "LocalRule",
                "Tripwire", "Mode", "BaseModel", "ValidationError", "model_check")


def __getattr__(name: str) -> object:
    if name in _MODEL_NAMES:
        from yupana import config_model

        return getattr(config_model, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
