"""The one settings schema: every ``[yupana.*]`` key, its type, default and allowed values.

Plain data, standard library only, so that a hook can resolve a changed configuration in
process (:mod:`yupana.config.resolver`) in a few milliseconds. The pydantic-settings model
of :mod:`yupana.config` is *built from* this table; nothing else declares a key.

A field is a dict made by :func:`field`:

* ``kind``: ``str``, ``int``, ``float``, ``bool``, ``enum`` (one of ``choices``),
  ``list_str``, ``table`` (``fields``; ``name`` is the model's class name), ``map`` (a table
  of ``item`` tables keyed by any name: ``scopes.<tenant>``) or ``list_table`` (an array of
  ``item`` tables: ``[[rules]]``);
* ``default`` (a table's default is all of its fields' defaults), ``required``,
  ``optional`` (``None`` allowed: the key's unset default), bounds ``ge`` / ``gt`` / ``le``,
  ``alias`` (the key as written in TOML, when the Python name differs: ``class``).

* ``tighten``: which way the key may move above a floor (the managed file, or the project
  above a nested config): ``rung``, ``more``, ``narrower``, ``lower``, ``higher``, ``true``,
  ``fixed`` or ``free`` (:mod:`yupana.config.lattice`; docs/configuration.md, "The managed floor").

Merge rule (the same for every key): tables merge key by key; arrays and scalars replace.
Unknown keys are kept inside tables and dropped at the top level, and are reported.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from typing import Any

    Spec = dict[str, Any]  # one key's schema entry (what field() returns)

MODES = ("off", "advise", "enforce")


def field(kind: str, default: object = None, *, choices: tuple[str, ...] = (), ge: float | None = None,
          gt: float | None = None, le: float | None = None, optional: bool = False, required: bool = False,
          alias: str | None = None, fields: dict[str, Spec] | None = None, item: Spec | None = None,
          name: str | None = None, tighten: str = "free") -> Spec:
    """One schema entry (see the module doc)."""
    spec = {"kind": kind, "default": default, "choices": choices, "ge": ge, "gt": gt, "le": le,
            "optional": optional, "required": required, "alias": alias, "fields": fields, "item": item,
            "name": name, "tighten": tighten}
    return spec


def table(model_name: str, /, **fields: Spec) -> Spec:
    return field("table", fields=fields, name=model_name, tighten="table")


def enum(default: str | None, *choices: str, optional: bool = False, tighten: str = "free") -> Spec:
    return field("enum", default, choices=choices, optional=optional, tighten=tighten)


def rung(default: str = "off") -> Spec:
    """A mode ladder key (``off`` < ``advise`` < ``enforce``): a floor may only be raised."""
    return enum(default, *MODES, tighten="rung")


FRESHNESS = table(
    "Freshness",
    debounce_ms=field("int", 300, ge=0),
    heavy_debounce_ms=field("int", 1500, ge=0),
    lsp_on=enum("save", "save", "change", "off"),
)

TENANCY = table(
    "Tenancy",
    max_overlays=field("int", 32, ge=1),
    high_fanin_threshold=field("int", 200, ge=1),
    overlay_eviction=enum("on_session_close", "on_session_close", "lru"),
)

SERVE = table(
    "Serve",
    bind_address=field("str", "127.0.0.1"),
    mcp_http_port=field("int", 3040, ge=1, le=65535),
    read_only=field("bool", False, tighten="true"),
    use_daemon=field("bool", False),
)

QUIPU = table(
    "Quipu",
    enabled=field("bool", False, tighten="true"),
    endpoint=field("str", "", tighten="fixed"),
    dialect=enum(None, "sparql11", "quipu", optional=True, tighten="fixed"),
    default_graph=field("str", None, optional=True, tighten="fixed"),
    update_endpoint=field("str", None, optional=True, tighten="fixed"),  # SPARQL Update URL (sparql11); default: the query URL
    projection_cache_ttl_secs=field("int", 3600, ge=0, tighten="lower"),
    refresh_interval_secs=field("int", 300, ge=0, tighten="lower"),
    connect_timeout_secs=field("float", 2.0, gt=0),
    request_timeout_secs=field("float", 2.0, gt=0),
    refresh_deadline_secs=field("float", 20.0, gt=0),
    refresh_backoff_secs=field("int", 60, ge=1),
    batch_size=field("int", 200, ge=1, le=5000),
    max_rows=field("int", 10000, ge=1),
    # the largest fraction of the governed rules a refresh may drop unaccepted (docs/configuration.md)
    max_shrink=field("float", 0.5, ge=0, le=1, tighten="lower"),
    auth=enum("none", "none", "basic", "bearer", tighten="fixed"),
    auth_user=field("str", None, optional=True, tighten="fixed"),
    credentials_env=field("str", "YUPANA_SPARQL_SECRET", tighten="fixed"),
    credentials_file=field("str", None, optional=True, tighten="fixed"),
    signing_key_path=field("str", "yupana-signing.pk8"),
    promote_on=field("str", "merge"),
    branch_model=field("str", "named_graph"),
    shapes_path=field("str", "shapes/"),
)

SCOPE = table(
    "Scope",
    allow_paths=field("list_str", [], tighten="narrower"),
    deny_paths=field("list_str", [], tighten="more"),
    max_impacted_symbols=field("int", None, ge=0, optional=True, tighten="lower"),
    max_impacted_files=field("int", None, ge=0, optional=True, tighten="lower"),
    allow_targets=field("list_str", [], tighten="narrower"),
    deny_targets=field("list_str", [], tighten="more"),
)

LOCAL_RULE = table(
    "LocalRule",
    name=field("str", required=True),
    language=field("str", required=True),
    query=field("str", required=True),
    match_type=field("enum", choices=("must-match", "must-not-match", "must-exist"), required=True),
    pattern=field("str", required=True),
    gate=field("str", None, optional=True),
    applies_to=field("list_str", []),
    message=field("str", None, optional=True),
    class_=field("enum", None, choices=("hard", "soft", "escalation"), optional=True, alias="class"),
    verification_point=enum(None, "PAG", "ATM", "PAA", "tool_layer", "policy_layer", optional=True),
    backoff_formula=field("str", None, optional=True),
)

# Loosely typed on purpose: a misconfigured wire is a loud fail-open naming that wire, not a
# config error that disarms every other check (yupana.evaluate.tripwires); `config check`
# names it too.
TRIPWIRE = table(
    "Tripwire",
    name=field("str", ""),
    paths=field("list_str", []),
    rule=field("str", None, optional=True),
    effect=field("str", ""),
    message=field("str", None, optional=True),
    backoff_secs=field("int", None, optional=True),
)

POLICY = table(
    "Policy",
    mode=rung(),
    deadline_ms=field("int", 100, ge=1, le=60000, tighten="higher"),
    notify_on_fail_open=field("bool", True, tighten="true"),
    advise_audience=enum("operator", "operator", "model", "both", tighten="fixed"),
    max_hops=field("int", 5, ge=0, le=64, tighten="higher"),
    verify=field("bool", False, tighten="true"),
    work_item_scope=rung(),
    action_scope=rung(),
    # The landing certification of a git push (yupana hook pre-push, docs/landing.md): off does
    # nothing, advise certifies and never blocks, enforce blocks a refused push. mode is its ceiling.
    landing=rung(),
    disk_advisory=field("bool", True, tighten="true"),
    # This project's repository exposure when no governed source states it (docs/configuration.md).
    exposure=enum(None, "public", "internal", optional=True, tighten="fixed"),
    scopes=field("map", {}, item=SCOPE, tighten="map"),
    # The guard's own controls (.bobbin/, the config files, the hooks' registrations): their
    # effective level is min(mode, self_protection); a floor may only raise it.
    self_protection=rung("enforce"),
    rules=field("list_table", [], item=LOCAL_RULE, tighten="more"),
    tripwires=field("list_table", [], item=TRIPWIRE, tighten="more"),
)

# Signed rule-set bundles (docs/bundles.md): a publisher signs its validated projection with
# signing_key_path (`yupana bundle build`); hosts fetch url and trust only trusted_keys.
BUNDLE = table(
    "Bundle",
    url=field("str", "", tighten="fixed"),
    trusted_keys=field("list_str", [], tighten="fixed"),
    signing_key_path=field("str", None, optional=True),
)

METRICS = table(
    "Metrics",
    record_paths=enum("off", "off", "relative", "absolute"),
    # Opt-in capture of the evaluated inputs for `yupana replay` (yupana/state/inputs.py, docs/replay.md):
    # masked (what the rules caught is masked) or full; a managed floor's choice stands either way.
    record_inputs=enum("off", "off", "masked", "full", tighten="fixed"),
)

# Every [yupana] key, with the defaults of the interop reference §5.6.
SETTINGS = table(
    "Settings",
    base_ref=field("str", "main"),
    enable_lsp=field("bool", True),
    enable_cpg=field("bool", False),
    languages=field("list_str", ["rust", "typescript", "python", "go", "java", "cpp"]),
    freshness=FRESHNESS,
    tenancy=TENANCY,
    serve=SERVE,
    quipu=QUIPU,
    policy=POLICY,
    metrics=METRICS,
    bundle=BUNDLE,
)

# The keys whose value is a URL: userinfo (user:password@) is refused in each of them.
URL_KEYS = (("quipu", "endpoint"), ("quipu", "update_endpoint"), ("bundle", "url"))


def key_of(name: str, spec: Spec) -> str:
    """The key as written in TOML (the alias when there is one)."""
    return spec["alias"] or name
