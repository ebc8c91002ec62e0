"""Resolving ``[yupana.*]`` from .bobbin/config.toml, layered, with the standard library only.

Resolution, lowest to highest precedence, merged per key (tables deep-merge; arrays and
scalars replace):

1. the defaults of :mod:`yupana.config.schema`;
2. the managed file, ``/etc/bobbin/config.toml`` (``$YUPANA_MANAGED_CONFIG``): also the
   *floor* — every layer above may tighten what it sets, never loosen it
   (:mod:`yupana.config.lattice`; a lower value is dropped and listed in ``lowered``);
3. the user file, ``$HOME/.config/bobbin/config.toml``;
4. the project file, ``<root>/.bobbin/config.toml``;
5. environment variables ``YUPANA_<TABLE>__<KEY>`` (for example ``YUPANA_POLICY__MODE``;
   a list or table value is JSON);
6. nested project files between the project root and the judged path, outermost first:
   each can only tighten everything above it (their floor is the resolution so far).

``--config PATH`` replaces discovery (3, 4 and 6; never the managed floor): the file must exist. Each file is checked on
its own, so an error names the file, the key and what is allowed (in the words pydantic
uses: the pydantic-settings model of :mod:`yupana.config` is built from the same schema, and
a test holds the two to the same answers). Unknown keys are not errors (a newer config must
not disarm an older binary) but are reported as warnings. A URL carrying ``user:password@``
is refused, and the error shows it without them.

This runs inside a hook when the snapshot of :mod:`yupana.settings` misses (a file was
edited): ``tomllib`` is imported only then (~4 ms), nothing else that is costly.
"""

from __future__ import annotations

import os

from yupana.config import schema as schema
from yupana.state import paths
from yupana import redact
from yupana.config.validate import validate, validate_table  # noqa: F401 - validate: part of this module's interface
from yupana.config.error import TOP_LEVEL_ENV, ConfigError

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from yupana.config.schema import Spec
    from yupana.config.validate import Loc, Problem

    Layer = tuple[str, str, dict[str, Any]]  # (layer, path, table) read from one file

MODE_ORDER = {mode: i for i, mode in enumerate(schema.MODES)}
CREDENTIALS_HELP = ("remove them from the URL and configure them apart: [yupana.quipu] auth = \"basic\" (with "
                    "auth_user) or \"bearer\", and the secret in the environment variable named by credentials_env "
                    "(default YUPANA_SPARQL_SECRET) or the file named by credentials_file (docs/endpoints.md, "
                    "\"Credentials\")")


CONFIG_LIMIT = 4 << 20  # a config file larger than this is refused, never read whole
digests: dict[str, str] = {}  # path -> SHA-1 of the bytes of each config file read (control_changed)


def read_file(path: str) -> dict[str, Any]:
    """The ``[yupana]`` table of one TOML file, checked; ConfigError naming the file when unusable.

    Read as the state files are (:mod:`yupana.state.statefile`): a FIFO, a device, a symlink
    to one, or a file over :data:`CONFIG_LIMIT` is refused at once — never a hang, never an
    unbounded read — and the refusal is this ConfigError (a loud ``config`` fail-open), not a
    ``state_file`` one."""
    import tomllib

    from yupana.state import statefile

    try:
        raw = statefile.read(path, CONFIG_LIMIT)
    except statefile.Refused as exc:
        if (exc.path, exc.reason) in statefile.refused:
            statefile.refused.remove((exc.path, exc.reason))  # said here, as a config error, not twice
        reason = exc.reason.replace("this state file", "a config file")
        raise ConfigError(f"{path}: {reason}: the configuration was not read (replace it with a regular file "
                          f"of at most {CONFIG_LIMIT >> 20} MB)") from None
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such config file") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read config file: {exc.strerror or exc}") from None
    digests[path] = _sha1_hex(raw)
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: not UTF-8 ({exc.reason} at byte {exc.start})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    table = data.get("yupana", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [yupana] must be a table, found {type(table).__name__}")
    check(table, path)
    return table


def _sha1_hex(data: bytes) -> str:
    """Hex SHA-1 of a config file's bytes (the builtin module: hashlib would load OpenSSL)."""
    try:
        from _sha1 import sha1
    except ImportError:  # pragma: no cover - interpreters built without it
        from hashlib import sha1
    hexed: str = sha1(data).hexdigest()
    return hexed


def check(table: dict[str, Any], source: str) -> dict[str, Any]:
    """``table`` validated on its own (defaults filled); ConfigError naming ``source`` and each bad key."""
    errors: list[Problem] = []
    out = validate_table(table, schema.SETTINGS, (), errors)
    if errors:
        raise ConfigError("\n".join(_explain(loc, msg, got, source) for loc, msg, got in errors))
    refuse_userinfo(table, lambda key: source)
    return out


def _explain(loc: Loc, msg: str, got: object, source: str) -> str:
    key = "yupana." + ".".join(str(p) for p in loc)
    shown = "" if isinstance(got, dict) else f" = {got!r}"
    return f"{source}: {key}{shown}: {msg}"


# ── credentials in URLs ────────────────────────────────────────────────────────────


def refuse_userinfo(table: dict[str, Any], source_of: Callable[[Loc], str]) -> None:
    """ConfigError when a URL key of ``table`` carries userinfo; the message never shows it."""
    for section, key in schema.URL_KEYS:
        value = (table.get(section) or {}).get(key) if isinstance(table.get(section), dict) else None
        if not isinstance(value, str):
            continue
        url = value.strip()
        shown = redact.redact_url(url)
        if redact.MASK + "@" in shown and redact.MASK + "@" not in url:
            raise ConfigError(f"{source_of((section, key))}: yupana.{section}.{key} = {shown!r} (user:password@ "
                              "masked here): a URL must not carry credentials — they would reach logs, records "
                              f"and the user's pane; {CREDENTIALS_HELP}")


# ── layering ───────────────────────────────────────────────────────────────────────


def deep_merge(low: dict[str, Any], high: dict[str, Any]) -> dict[str, Any]:
    """Tables merge key by key; arrays and scalars in ``high`` replace those in ``low``."""
    out = dict(low)
    for key, value in high.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = value
    return out


def env_var(loc: Loc) -> str:
    """The environment variable that sets the key at ``loc``."""
    return "YUPANA_" + "__".join(str(p).upper() for p in loc)


def env_overrides() -> tuple[dict[str, Any], list[str]]:
    """The ``YUPANA_<TABLE>__<KEY>`` (and top-level ``YUPANA_<KEY>``) variables as a nested table,
    and warnings for unknown ones."""
    tree: dict[str, Any] = {}
    warnings: list[str] = []
    for var in sorted(os.environ):
        if not var.startswith("YUPANA_"):
            continue
        if "__" not in var and var not in TOP_LEVEL_ENV:
            near = _did_you_mean(var, known_env_vars(), cutoff=0.9)  # YUPANA_QUIPU_ENDPOINT: one "_" short
            if near:
                warnings.append(f"environment variable {var}: not a setting (ignored){near}")
            continue
        parts = var[len("YUPANA_"):].lower().split("__")
        spec = schema.SETTINGS
        path: list[str] = []
        for part in parts:
            sub = None
            if spec["kind"] == "table":
                sub = next((s for n, s in spec["fields"].items() if part in (n, s["alias"])), None)
                key = schema.key_of(part, sub) if sub else part
            elif spec["kind"] == "map":
                sub, key = spec["item"], part
            if sub is None:
                warnings.append(f"environment variable {var}: unknown key yupana.{'.'.join(path + [part])} (ignored)"
                                + _did_you_mean(var, known_env_vars()))
                break
            path.append(key)
            spec = sub
        else:
            node = tree
            for key in path[:-1]:
                if not isinstance(node.get(key), dict):
                    node[key] = {}
                node = node[key]
            node[path[-1]] = _env_value(var, os.environ[var], spec, path)
    return tree, warnings


def _env_value(var: str, raw: str, spec: Spec, path: list[str]) -> object:
    if spec["kind"] not in ("list_str", "list_table", "map", "table"):
        return raw
    from yupana import fastjson

    try:
        return fastjson.loads(raw)
    except ValueError as exc:
        raise ConfigError(f"environment variable {var}: yupana.{'.'.join(path)} takes a JSON "
                          f"{'array' if spec['kind'].startswith('list') else 'table'} here ({exc})") from None


def layers(root: str, override: str | None) -> list[Layer]:
    """(layer, path, checked [yupana] table) for each file read, lowest precedence first
    (the managed floor and nested files apart: :func:`resolve_layers`)."""
    if override:
        return [("--config", override, read_file(override))]
    found = []
    user = paths.user_config_file()
    if user and os.path.lexists(user):
        found.append(("user", user, read_file(user)))
    project = paths.project_config_file(root)
    if os.path.lexists(project):
        found.append(("project", project, read_file(project)))
    return found


def managed_layer() -> Layer | None:
    """The managed floor's (layer, path, table), or None when its file is absent."""
    path = paths.managed_config_file()
    return ("managed", path, read_file(path)) if os.path.lexists(path) else None


def resolve_layers(root: str, override: str | None = None,
                   nested: tuple[str, ...] = ()) -> tuple[dict[str, Any], list[Layer]]:
    """The snapshot dict (see :func:`resolve`) and the layers it was resolved from (each table
    as it stood once the floor was applied: a lowered key is gone from it).

    ``nested``: the directories below ``root`` (outermost first) whose ``.bobbin/config.toml``
    applies to the path being judged — each a layer that can only tighten what is above it.
    """
    from yupana.config import lattice as lattice

    managed = managed_layer()
    floor = managed[2] if managed else {}
    read: list[Layer] = [managed] if managed else []
    merged: dict[str, Any] = dict(floor)
    warnings: list[str] = []
    lowered: list[dict[str, Any]] = []
    nested_read = [] if override else [("nested", p, read_file(p)) for d in nested
                                       if os.path.lexists(p := paths.project_config_file(d))]
    for layer, path, table in read + layers(root, override):
        warnings += [f"{path}: unknown key {k} (ignored){_did_you_mean(k, known_keys())}" for k in unknown_keys(table)]
        if layer == "managed":
            continue
        table, low = lattice.clamp(floor, table)
        lowered += [_lowered(layer, path, at, tried, kept) for at, tried, kept in low]
        read.append((layer, path, table))
        merged = deep_merge(merged, table)
    env_tree, env_warnings = env_overrides()
    env_tree, low = lattice.clamp(floor, env_tree)
    lowered += [_lowered("env", _env_source(at), at, tried, kept) for at, tried, kept in low]
    merged = deep_merge(merged, env_tree)
    errors: list[Problem] = []
    config = validate_table(merged, schema.SETTINGS, (), errors)
    if errors:
        lines = []
        for loc, msg, got in errors:
            var = env_var(loc)
            lines.append(_explain(loc, msg, got, f"environment variable {var}" if var in os.environ
                                  else "merged configuration"))
        raise ConfigError("\n".join(lines))
    refuse_userinfo(env_tree, lambda key: f"environment variable {env_var(key)}")
    for layer, path, table in nested_read:  # each can only tighten what stands above it
        warnings += [f"{path}: unknown key {k} (ignored){_did_you_mean(k, known_keys())}" for k in unknown_keys(table)]
        table, low = lattice.clamp(config, table)
        lowered += [_lowered(layer, path, at, tried, kept) for at, tried, kept in low]
        read.append((layer, path, table))
        config = validate_table(deep_merge(config, table), schema.SETTINGS, (), errors)
    if errors:  # each nested file was checked on its own: a merge that breaks is a bug, said as one
        raise ConfigError("\n".join(_explain(loc, msg, got, "nested configuration") for loc, msg, got in errors))
    snap = {
        "config": config,
        "sources": [{"layer": layer, "path": path} for layer, path, _ in read],
        "provenance": _mode_provenance(read, config["policy"]["mode"]),
        "warnings": warnings + env_warnings,
        "lowered": lowered,
        "managed": {"path": paths.managed_config_file(), "present": managed is not None},
        "digests": {path: digests.get(path) for _, path, _ in read},
    }
    return snap, read


def _lowered(layer: str, source: str, at: tuple[str, ...], tried: object, kept: object) -> dict[str, Any]:
    """One ``config_lowered`` entry (docs/records.md): a layer's value the floor did not let stand
    (a URL without its ``user:password@``: the entry reaches the spool and ``status``)."""
    if tuple(at) in schema.URL_KEYS:
        tried = redact.redact_url(tried) if isinstance(tried, str) else tried
        kept = redact.redact_url(kept) if isinstance(kept, str) else kept
    return {"layer": layer, "file": source, "key": ".".join(at), "value": tried, "floor": kept}


def _env_source(at: tuple[str, ...]) -> str:
    """The variable that set the key at ``at`` (it may name a table above it)."""
    for depth in range(len(at), 0, -1):
        if env_var(at[:depth]) in os.environ:
            return env_var(at[:depth])
    return env_var(at)


def resolve(root: str, override: str | None = None, nested: tuple[str, ...] = ()) -> dict[str, Any]:
    """The configuration for ``root`` as a plain snapshot dict.

    ``config`` (every key, defaults filled), ``sources`` (the files read), ``provenance``
    (where the effective mode came from and whether the project lowered the user's mode),
    ``warnings`` (unknown keys), ``lowered`` (each value a layer tried below its floor:
    ``{layer, file, key, value, floor}``) and ``managed`` (the floor's file, and whether it is
    there). Raises ConfigError.
    """
    return resolve_layers(root, override, nested)[0]


def known_keys(spec: Spec = schema.SETTINGS, prefix: str = "yupana") -> list[str]:
    """Every dotted key the schema defines (tables' fields, recursively; map items as ``<name>``)."""
    found: list[str] = []
    for name, sub in spec["fields"].items():
        dotted = f"{prefix}.{schema.key_of(name, sub)}"
        found.append(dotted)
        if sub["kind"] == "table":
            found += known_keys(sub, dotted)
    return found


def known_env_vars() -> list[str]:
    """The environment variables that set a schema key (``YUPANA_<TABLE>__<KEY>``) or a top-level one."""
    return sorted({"YUPANA_" + "__".join(k.split(".")[1:]).upper() for k in known_keys()} | set(TOP_LEVEL_ENV))


def _did_you_mean(name: str, candidates: list[str], cutoff: float = 0.75) -> str:
    """`` (did you mean X?)`` for the closest candidate, else ""; difflib only on this cold path."""
    import difflib

    close = difflib.get_close_matches(name, candidates, n=1, cutoff=cutoff)
    return f" (did you mean {close[0]}?)" if close else ""


def unknown_keys(table: dict[str, Any], spec: Spec = schema.SETTINGS, prefix: str = "yupana") -> list[str]:
    """Dotted names of keys the schema does not define (reported, never fatal)."""
    found: list[str] = []
    fields = {schema.key_of(n, s): s for n, s in spec["fields"].items()}
    fields.update({n: s for n, s in spec["fields"].items() if n not in fields})
    for key, value in table.items():
        sub = fields.get(key)
        if sub is None:
            found.append(f"{prefix}.{key}")
        elif sub["kind"] == "table" and isinstance(value, dict):
            found += unknown_keys(value, sub, f"{prefix}.{key}")
        elif sub["kind"] == "map" and isinstance(value, dict):
            for name, entry in value.items():
                if isinstance(entry, dict):
                    found += unknown_keys(entry, sub["item"], f"{prefix}.{key}.{name}")
        elif sub["kind"] == "list_table" and isinstance(value, list):
            for i, entry in enumerate(value):
                if isinstance(entry, dict):
                    found += unknown_keys(entry, sub["item"], f"{prefix}.{key}[{i}]")
    return found


def _mode_provenance(read: list[Layer], effective: str) -> dict[str, Any]:
    source = "default"
    user_mode = None
    project_mode = None
    managed_mode = None
    for layer, _, table in read:
        mode = (table.get("policy") or {}).get("mode")
        if mode is not None:
            source = layer
            if layer == "user":
                user_mode = mode
            elif layer == "project":
                project_mode = mode
            elif layer == "managed":
                managed_mode = mode
    if os.environ.get("YUPANA_POLICY__MODE") and (source != "managed" or
                                                   os.environ["YUPANA_POLICY__MODE"] == managed_mode):
        source = "env"
    lowered = (user_mode is not None and project_mode is not None
               and MODE_ORDER[project_mode] < MODE_ORDER[user_mode])
    return {"effective": effective, "source": source, "user_mode": user_mode, "lowered_by_project": lowered,
            "managed_mode": managed_mode}


def origin(loc: Loc, read: list[Layer]) -> str:
    """Where the key at ``loc`` (``("policy", "rules", 0, "pattern")``) got its value."""
    for depth in range(len(loc), 1, -1):
        if env_var(loc[:depth]) in os.environ:
            return f"environment variable {env_var(loc[:depth])}"
    for _, path, table in reversed(read):
        node: object = table
        for part in loc:
            if isinstance(node, dict) and part in node:
                node = node[part]
            elif isinstance(node, list) and isinstance(part, int) and part < len(node):
                node = node[part]
            else:
                break
        else:
            return path
    return "default"
