"""The work-item scope ladder: observed, derived, unknown (interop reference §1.10, §5.4).

Used when the tenant has no declared scope and ``[yupana.policy] work_item_scope`` is armed.
The effective rung is the lower of ``work_item_scope`` and ``mode`` (the mode is a ceiling).

* The tracked item comes from the plate, ``$SHANTY_ROOT/crew/$SHANTY_AGENT/plate.json``
  (``{"item", "at", "session"}``); it is unknown when the file is missing or malformed,
  ``item`` is empty, ``at`` is not a number, or the plate is older than
  ``$YUPANA_PLATE_MAX_AGE_SECS`` (default 14400; exactly that old is still fresh).
* **Observed**: the item has paths in the projected ``work_item_scopes``. Outside them is a
  deny at ``enforce`` and an advisory otherwise (``scope-observed:<item>``).
* **Derived**: only when the item has no observed paths, its parent's observed paths. It
  never denies (an inference must not block); inside the parent's ground it answers allow
  rather than falling through to "unguarded" (``scope-derived:<item>``).
* **Unknown**: nothing is known. With an identified tenant, a once-per-session advisory
  (the hook's ``unknown-scope`` notice); without one, silence. Outcome UNKNOWN, never clean.

Paths in the scope map are literal (repo-relative file paths), compared exactly.
"""

from __future__ import annotations

import os

from yupana import fastjson
from yupana.evaluate import SATISFIED, UNKNOWN, Finding, rung

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from typing import Any
    from collections.abc import Mapping

DEFAULT_PLATE_MAX_AGE_SECS = 14400


def effective_rung(work_item_scope: str, mode: str) -> str:
    """The lower of the two settings: the ambient mode is a ceiling (:func:`yupana.evaluate.rung`)."""
    return rung(work_item_scope, mode)


def plate_path(env: Mapping[str, str] | None = None) -> str | None:
    env = os.environ if env is None else env
    root, agent = env.get("SHANTY_ROOT"), env.get("SHANTY_AGENT")
    if not root or not agent:
        return None
    return os.path.join(root, "crew", agent, "plate.json")


def read_plate(now: int, env: Mapping[str, str] | None = None) -> tuple[str | None, str]:
    """(item, why) — the tracked work item, or None and the reason it is unknown."""
    env = os.environ if env is None else env
    path = plate_path(env)
    if path is None:
        return None, "no tracker plate (SHANTY_ROOT / SHANTY_AGENT unset)"
    try:
        with open(path, "rb") as fh:
            plate = fastjson.loads(fh.read())
    except FileNotFoundError:
        return None, f"no plate at {path}"
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        return None, f"unreadable plate {path}: {exc}"
    if not isinstance(plate, dict):
        return None, f"malformed plate {path}"
    item, at = plate.get("item"), plate.get("at")
    if not isinstance(item, str) or not item:
        return None, f"the plate at {path} names no item"
    if isinstance(at, bool) or not isinstance(at, (int, float)):
        return None, f"the plate at {path} has no numeric `at`"
    try:
        max_age = int(env.get("YUPANA_PLATE_MAX_AGE_SECS") or DEFAULT_PLATE_MAX_AGE_SECS)
    except ValueError:
        max_age = DEFAULT_PLATE_MAX_AGE_SECS
    if now - at > max_age:
        return None, f"the plate at {path} is stale ({int(now - at)}s old; limit {max_age}s)"
    return item, ""


def evaluate(rung: str, item: str | None, scopes: dict[str, Any] | None, parents: dict[str, Any] | None, rel: str,
             tenant: str | None, why_unknown: str = "") -> Finding | None:
    """The ladder's finding for one file, or None when the rung is off.

    ``Finding.extra`` carries the ``scope`` record fields: ``provenance`` and, as known,
    ``item`` and ``parent``.
    """
    if rung == "off":
        return None
    observed = scopes.get(item) if (item and isinstance(scopes, dict)) else None
    if observed:
        cid = f"scope-observed:{item}"
        extra = {"provenance": "observed", "item": item}
        if rel in observed:
            return Finding(cid, "scope", "", outcome=SATISFIED, rel=rel, extra=extra)
        message = (f"edit to {rel} is outside the observed scope of work item `{item}` (the {len(observed)} "
                   f"path(s) its prior commits touched, e.g. {_examples(observed)}). Keep to the item's ground, "
                   "or track this change under the item it belongs to.")
        return Finding(cid, "scope", message, blocking=(rung == "enforce"), rel=rel, extra=extra)
    parent = parents.get(item) if (item and isinstance(parents, dict)) else None
    ground = scopes.get(parent) if (parent and isinstance(scopes, dict)) else None
    if ground:
        cid = f"scope-derived:{item}"
        extra = {"provenance": "derived", "item": item, "parent": parent}
        if rel in ground:
            return Finding(cid, "scope", "", outcome=SATISFIED, rel=rel, extra=extra)
        message = (f"edit to {rel} is outside the ground derived for work item `{item}` from its parent "
                   f"`{parent}` ({_examples(ground)}); advisory only — a derived scope never blocks.")
        return Finding(cid, "scope", message, blocking=False, rel=rel, extra=extra)
    reason = why_unknown or _unknown_reason(item, scopes, parents)
    extra = {"provenance": "unknown", "item": item, "reason": reason}
    return Finding("scope-unknown", "scope",
                   f"work-item scope is UNKNOWN ({reason}); edits{_by(tenant)} are not scope-checked this session",
                   outcome=UNKNOWN, rel=rel, extra=extra)


def _unknown_reason(item: str | None, scopes: dict[str, Any] | None, parents: dict[str, Any] | None) -> str:
    if item is None:
        return "no tracked work item"
    if scopes is None:
        return "the projection holds no work-item scopes (not fetched, or the fetch failed)"
    return f"work item `{item}` has no observed ground and no parent with one"


def _by(tenant: str | None) -> str:
    return f" by tenant `{tenant}`" if tenant else ""


def _examples(paths: list[str], limit: int = 3) -> str:
    shown = ", ".join(paths[:limit])
    return shown + (", …" if len(paths) > limit else "")
