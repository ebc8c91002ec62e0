"""The plane registry: one row per plane of a projection cache. Standard library only.

Every module that walks the planes of a cache — the projection's counts, the cache's list
and optional fields, the entry checks, the empty-catalogue test, ``--dump`` (table, Turtle),
``yupana status``'s counts and ``yupana explain``'s — iterates :data:`PLANES` instead of
spelling the keys. A row names its cold parts (decoder,
dump renderers) by dotted path, so importing this module costs nothing on the hot path.
Adding a plane: a row here, a query in ``queries/``, a decoder in ``projection/``, an
evaluator, a shape (docs/architecture.md "Adding a plane"); tests/test_planes.py checks that
the row and its parts agree.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

CACHE_VERSION = 1
AEGIS = "http://aegis.gastown.local/ontology/"

# Not a dataclass (the hot path avoids dataclasses/typing): a plain slotted row.


class Plane:
    """One plane: its cache key and how every consumer treats it.

    ``fatal``: a decode failure fails the refresh (else the plane is UNKNOWN, ``None``).
    ``shape``: ``list`` (entries checked by ``cache_entries.CHECKS[check]``) or ``object``.
    ``governed``: its entries are rules a hook enforces (an empty catalogue has none).
    ``queries``: the ``queries/<name>.rq`` files it reads; ``decoder``: dotted path.
    ``table``/``turtle``: dotted paths of the ``--dump`` renderers (None: not dumped).
    ``counted``: an object plane's member whose length is its count (else the whole value's).
    ``stage``: a governed plane's evaluating stage, as ``yupana explain`` names it.
    ``status``: its label in ``yupana status``'s ``rule_set.counts`` (None: not counted there);
    ``status_words``: how the ``planes`` line of the text form says it (None: not on the line);
    ``rule_set``: its entries make the status rule set ``loaded`` rather than ``empty``.
    """

    __slots__ = ("key", "fatal", "shape", "governed", "check", "queries", "decoder", "table", "turtle", "counted",
                 "stage", "status", "status_words", "rule_set")

    def __init__(self, key: str, *, fatal: bool, shape: str, governed: bool = False, check: str | None = None,
                 queries: tuple[str, ...] = (), decoder: str, table: str | None, turtle: str | None,
                 counted: str | None = None, stage: str | None = None, status: str | None = None,
                 status_words: str | None = None, rule_set: bool = False) -> None:
        self.key = key
        self.fatal = fatal
        self.shape = shape
        self.governed = governed
        self.check = check
        self.queries = queries
        self.decoder = decoder
        self.table = table
        self.turtle = turtle
        self.counted = counted
        self.stage = stage
        self.status = status
        self.status_words = status_words
        self.rule_set = rule_set


_D = "yupana.projection.dump."
_T = "yupana.projection.dump_turtle."
_P = "yupana.projection."

# Order is the dump order.
PLANES: tuple[Plane, ...] = (
    Plane("policies", fatal=True, shape="list", governed=True, check="policies",
          queries=("policies_discover", "policies_read", "atoms_read"), decoder=_P + "decode_structural.decode",
          table=_D + "_structural", turtle=_T + "_structural", stage="governed",
          status="structural", status_words="structural", rule_set=True),
    Plane("text_rules", fatal=True, shape="list", governed=True, check="text_rules",
          queries=("text_rules_discover", "text_rules_read"), decoder=_P + "decode_text.decode",
          table=_D + "_text_rules", turtle=_T + "_text_rules", stage="governed",
          status="text", status_words="text", rule_set=True),
    Plane("exemption_selectors", fatal=True, shape="list", check="exemption_selectors",
          queries=("text_rules_read",), decoder=_P + "decode_text.decode_selector",
          table=_D + "_selectors", turtle=_T + "_selectors",
          status="exemption_selectors", status_words="exemption selectors"),
    Plane("grounded_rules", fatal=True, shape="list", governed=True, check="grounded_rules",
          queries=("grounded_discover",), decoder=_P + "decode_grounded.decode",
          table=_D + "_grounded", turtle=_T + "_grounded", stage="governed",
          status="grounded", status_words="grounded", rule_set=True),
    Plane("tripwires", fatal=True, shape="list", governed=True, check="tripwires",
          queries=("policies_discover", "policies_read"), decoder=_P + "decode_tripwires.decode",
          table=_D + "_tripwires", turtle=_T + "_tripwires", stage="tripwires",
          status="tripwires", status_words="tripwires", rule_set=True),
    Plane("memory_policies", fatal=True, shape="list", governed=True, check="memory_policies",
          queries=("policies_discover", "policies_read"), decoder=_P + "decode_memory.decode",
          table=_D + "_memory", turtle=_T + "_memory", stage="memory",
          status="memory_policies", status_words="memory policies", rule_set=True),
    Plane("ci_map", fatal=True, shape="object", queries=("ci_maps_discover", "ci_read"),
          decoder=_P + "decode_ci.decode", table=_D + "_ci_map", turtle=_T + "_ci_map", counted="jobs",
          status="ci_jobs", status_words="CI map jobs", rule_set=True),
    Plane("repo_exposure", fatal=True, shape="list", queries=("repo_exposure_discover", "repo_exposure_read"),
          decoder=_P + "decode_exposure.decode", table=_D + "_exposure", turtle=_T + "_exposure"),
    Plane("landing_policies", fatal=True, shape="list", check="landing_policies",
          queries=("landing_discover", "landing_read"), decoder=_P + "decode_landing.decode_all",
          table=_D + "_landing", turtle=_T + "_landing"),
    Plane("grounding", fatal=False, shape="object", queries=("grounding_set",),
          decoder=_P + "decode_workitems.fetch_grounding", table=_D + "_work_items", turtle=None, counted="ids"),
    Plane("work_item_scopes", fatal=False, shape="object", queries=("work_item_scopes",),
          decoder=_P + "decode_workitems.fetch_scopes", table=_D + "_work_items", turtle=None,
          status="work_item_scopes"),
    Plane("work_item_parents", fatal=False, shape="object", queries=("work_item_parents",),
          decoder=_P + "decode_workitems.fetch_parents", table=_D + "_work_items", turtle=None),
    Plane("work_item_status", fatal=False, shape="object", queries=("work_item_status",),
          decoder=_P + "decode_workitems.fetch_status", table=_D + "_work_items", turtle=None),
    Plane("disk_history", fatal=False, shape="object", queries=("disk_keys", "disk_history"),
          decoder=_P + "decode_disk.fetch_disk_history", table=_D + "_disk", turtle=_T + "_disk"),
)

BY_KEY: dict[str, Plane] = {p.key: p for p in PLANES}
# Keys of a cache that are bookkeeping, not planes.
META_KEYS = ("version", "endpoint", "dialect", "digest", "counts", "unprojected", "notices", "projected_at",
             "refreshed_at")

LIST_PLANES = tuple(p.key for p in PLANES if p.shape == "list")
OPTIONAL_PLANES = tuple(p.key for p in PLANES if p.shape == "object")
GOVERNED_PLANES = tuple(p.key for p in PLANES if p.governed)


def count(key: str, value: object) -> int | None:
    """The ``counts`` entry of one plane's value (None: the plane is UNKNOWN)."""
    if value is None:
        return None
    counted = BY_KEY[key].counted
    if counted is not None:
        return len(value.get(counted) or ()) if isinstance(value, dict) else 0
    return len(value)  # type: ignore[arg-type]  # a plane's value is a list or an object (cache_entries)


def renderers(kind: str) -> list[Callable[..., object]]:
    """The ``--dump`` section functions of ``kind`` (``table`` or ``turtle``), in order, each once. Cold."""
    import importlib

    out: list[Callable[..., object]] = []
    for p in PLANES:
        path = getattr(p, kind)
        if path is None:
            continue
        module, _, name = path.rpartition(".")
        fn = getattr(importlib.import_module(module), name)
        if fn not in out:
            out.append(fn)
    return out
