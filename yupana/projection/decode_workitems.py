"""The grounding set, work-item scopes and parents (interop §1.4, §1.10). Cold path.

These three are *non-fatal*: the refresh turns a failure into ``None`` (UNKNOWN) and a
notice, never into an empty answer. An empty answer is only ever what the store said.

* grounding set — every ``?w a aegis:WorkItem ; aegis:identifier ?id`` id, and the prefix
  set derived from it (the text before each id's last ``-``);
* scopes — id → sorted paths that commits implementing the item modified (observed rung);
* parents — child id → parent id via ``aegis:contains``. When an item has several
  parents the smallest id wins: the Rust original took the first row, which depends on the
  store's row order; this keeps every store's cache identical;
* status — id → the item's ``aegis:status`` (how it turned out: ``closed``, ``abandoned`` …),
  a plain literal, at most one per item: a second, different status or an IRI fails this
  plane (UNKNOWN for the refresh, naming the subject and ``aegis:status``), never a guess.
"""

from __future__ import annotations

from typing import Any

from yupana.projection.errors import ProjectionError
from yupana.projection.read import Reader


def fetch_grounding(reader: Reader) -> dict[str, Any]:
    """``{"ids": [...], "prefixes": [...]}`` (both sorted)."""
    ids = sorted({row["id"].value for row in reader.rows("grounding_set", "grounding") if "id" in row})
    prefixes = sorted({i.rsplit("-", 1)[0] for i in ids if "-" in i})
    return {"ids": ids, "prefixes": prefixes}


def fetch_scopes(reader: Reader) -> dict[str, list[str]]:
    """``{item id: [path, ...]}``; rows missing either value are dropped."""
    scopes: dict[str, set[str]] = {}
    for row in reader.rows("work_item_scopes", "work_item_scopes"):
        if "id" in row and "path" in row:
            scopes.setdefault(row["id"].value, set()).add(row["path"].value)
    return {item: sorted(found) for item, found in sorted(scopes.items())}


def fetch_parents(reader: Reader) -> dict[str, str]:
    """``{child id: parent id}``; rows missing either value are dropped."""
    parents: dict[str, str] = {}
    for row in reader.rows("work_item_parents", "work_item_parents"):
        if "id" in row and "parent" in row:
            child, parent = row["id"].value, row["parent"].value
            if child not in parents or parent < parents[child]:
                parents[child] = parent
    return dict(sorted(parents.items()))


def fetch_status(reader: Reader) -> dict[str, str]:
    """``{item id: status}``; rows missing either value are dropped."""
    status: dict[str, str] = {}
    for row in reader.rows("work_item_status", "work_item_status"):
        if "id" not in row or "status" not in row:
            continue
        item, value = row["id"].value, row["status"]
        subject = row["w"].value if "w" in row else item
        if not value.is_literal:
            raise ProjectionError(subject, "aegis:status", f"not a literal ({value.value}); a status is a plain string")
        if item in status and status[item] != value.value:
            raise ProjectionError(subject, "aegis:status", f"two values ({status[item]!r}, {value.value!r}); at most one")
        status[item] = value.value
    return dict(sorted(status.items()))


def tracker_wired(env: dict[str, Any]) -> bool:
    """Scopes and parents are fetched only when ``SHANTY_ROOT`` and ``SHANTY_AGENT`` are set."""
    return bool(env.get("SHANTY_ROOT")) and bool(env.get("SHANTY_AGENT"))
