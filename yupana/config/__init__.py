"""The configuration: one schema, one resolver, the typed model on demand.

The package, by module (each imported only by who needs it):

- :mod:`yupana.config.schema` declares every key, type, default, allowed value and lattice kind once;
- :mod:`yupana.config.validate` checks a table against it, :mod:`yupana.config.lattice` says which
  value is tighter (the managed floor), :mod:`yupana.config.resolver` layers the files and
  ``YUPANA_<TABLE>__<KEY>`` overrides with provenance — standard library only, so a hook runs
  it in process when a file changed (through :mod:`yupana.settings`, the hot snapshot reader);
- :mod:`yupana.config.error` holds the one error class, below all of them;
- :mod:`yupana.config.model` is the pydantic-settings model derived from the same table, and
  :mod:`yupana.config.controls` the cold checks of ``config check``: cold path only.

The resolver's public names and the model's are re-exported here on first use, so
``from yupana import config`` costs nothing until one of them is read, and never pydantic's
import unless a model name is.
"""

from __future__ import annotations

from yupana.config.error import ConfigError as ConfigError  # one error class for hooks and cold commands

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: hooks load this package

if TYPE_CHECKING:
    from pydantic import BaseModel as BaseModel, ValidationError as ValidationError

    from yupana.config.model import (Freshness as Freshness, LocalRule as LocalRule,
                                     Metrics as Metrics, Mode as Mode, Policy as Policy, Quipu as Quipu,
                                     Scope as Scope, Serve as Serve, Settings as Settings, Tenancy as Tenancy,
                                     Tripwire as Tripwire,
                                     model_check as model_check)
    from yupana.config.resolver import (MODE_ORDER as MODE_ORDER, deep_merge as deep_merge, origin as origin,
                                        read_file as read_file, resolve as resolve, resolve_layers as resolve_layers,
                                        unknown_keys as unknown_keys)

_RESOLVER_NAMES = ("MODE_ORDER", "deep_merge", "origin", "read_file", "resolve", "resolve_layers", "unknown_keys")
_MODEL_NAMES = ("Settings", "Freshness", "Tenancy", "Serve", "Quipu", "Policy", "Metrics", "Scope", "LocalRule",
                "Tripwire", "Mode", "BaseModel", "ValidationError", "model_check")


def __getattr__(name: str) -> object:
    if name in _RESOLVER_NAMES:
        from yupana.config import resolver

        return getattr(resolver, name)
    if name in _MODEL_NAMES:
        from yupana.config import model

        return getattr(model, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
