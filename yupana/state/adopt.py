"""Adopting a store directory of an older yupana, keyed by the endpoint alone. Cold path.

Before the dataset identity (:mod:`yupana.state.dataset`), a store's directory was
``stores/<digest of the endpoint>``: every ``default_graph``, dialect, auth identity and
credential in the URL of one endpoint shared it, and whichever refreshed last owned its cache.
Such a cache is adopted into the dataset's own directory only when it is proven to hold that
dataset (:func:`unproven` says why not), by the refresher, under the refresh lock, before it asks
the store — so a host upgraded while its store is down keeps enforcing what it proved. A cache
that cannot be proven is left where it is and never served (the hooks' ``absent`` miss for
the new directory, until a refresh writes one); the ``state_migrated`` record says which.

Proof, beyond the cache's ``endpoint`` being this store's:

* a ``file:`` store: its locations are the whole of what selects the data (the default
  graph, dialect and credentials do not apply), so the endpoint is proof;
* an ``http(s)`` store: nothing masked in the URL (the old directory was shared by every
  credential a URL could carry), no auth (the old cache does not say whose credentials read
  it), and the memo of the refresh that wrote the cache (``projection.memo``, which records
  the default graph and dialect) names this default graph, the configured dialect (when one is
  configured) and exactly the cache's text rules.
"""

from __future__ import annotations

from typing import Any

import marshal
import os

from yupana.state import cache, paths, statefile

CACHE = "projection.json"
MEMO = "projection.memo"


def adopt(quipu: dict[str, Any], key: str, ident: str, path: str) -> str | None:
    """Adopt the endpoint-keyed cache of an older yupana as ``path`` (the cache of ``ident``)
    when it is proven to be this dataset's; what was done, in words, or None (nothing to adopt)."""
    if paths.explicit_projection_cache() or os.path.lexists(path):
        return None
    old_dir = paths.store_dir(key)
    if not old_dir or os.path.abspath(old_dir) == os.path.abspath(os.path.dirname(path)):
        return None
    old = os.path.join(old_dir, CACHE)
    if not os.path.lexists(old):
        return None
    found, miss = cache.read_json(old)
    why = miss.reason if miss is not None else unproven(found or {}, quipu, key, ident, old_dir)
    if why is None and found is not None:
        found["dataset"] = ident  # written_at unchanged: its freshness and TTL are the old cache's
        from yupana.state import stores

        os.makedirs(os.path.dirname(path), exist_ok=True)
        stores.name_store(os.path.dirname(path), ident)
        error = cache.save(found, path)
        done = error or f"adopted {old} as {path} (proven to hold {ident})"
        if error is None:
            _copy_memo(old_dir, os.path.dirname(path))
    else:
        done = f"did not adopt {old}: it cannot be proven to hold {ident} ({why}); it is not served"
    from yupana.state import spool

    spool.record("state_migrated", {"legacy": old, "moves": [done]})
    return done


def unproven(found: dict[str, Any], quipu: dict[str, Any], key: str, ident: str, old_dir: str) -> str | None:
    """Why the endpoint-keyed cache ``found`` is not proven to hold the dataset ``ident`` (None: it is)."""
    from yupana.state import dataset

    if found.get("dataset") is not None:
        return None if found.get("dataset") == ident else f"it holds the dataset {found.get('dataset')!r}"
    if cache.normalize_endpoint(str(found.get("endpoint"))) != key:
        return f"it was written for {found.get('endpoint')!r}"
    if key.startswith("file:"):
        return None
    if dataset.masked_digest(str(quipu.get("endpoint") or "")):
        return "the endpoint carries credentials, and every credential of this URL shared the old directory"
    if str(quipu.get("auth") or "none").lower() != "none":
        return "it does not say whose credentials read it"
    dialect = quipu.get("dialect")
    if dialect and found.get("dialect") != dialect:
        return f"it was read with dialect {found.get('dialect')!r}, not {dialect!r}"
    return _memo_unproven(os.path.join(old_dir, MEMO), found, quipu, key)


def _memo_unproven(path: str, found: dict[str, Any], quipu: dict[str, Any], key: str) -> str | None:
    try:
        doc = marshal.loads(statefile.read(path, 1 << 30))
    except FileNotFoundError:
        return "no memo beside it records the default graph it was read from"
    except (OSError, ValueError, EOFError, TypeError) as exc:
        return f"its memo is unreadable ({exc})"
    memo_key = doc.get("key") if isinstance(doc, dict) else None
    rules = doc.get("rules") if isinstance(doc, dict) else None
    if not isinstance(memo_key, dict) or not isinstance(rules, dict):
        return "its memo is not a memo"
    if memo_key.get("endpoint") != key or memo_key.get("dialect") != found.get("dialect"):
        return "its memo was written by another refresh"
    graph = quipu.get("default_graph") or None
    if memo_key.get("default_graph") != graph:
        return f"it was read from default_graph {memo_key.get('default_graph')!r}, not {graph!r}"
    if set(rules) != {r.get("iri") for r in found.get("text_rules") or ()}:
        return "its memo holds other rules than it does (written by another refresh)"
    return None


def _copy_memo(old_dir: str, new_dir: str) -> None:
    """The old memo beside the adopted cache (its key still matches: the next refresh stays incremental)."""
    source, target = os.path.join(old_dir, MEMO), os.path.join(new_dir, MEMO)
    try:
        os.link(source, target)
    except OSError:
        pass
