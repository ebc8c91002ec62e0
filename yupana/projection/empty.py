"""An empty answer never silently replaces a catalogue that governed something. Cold path.

A store that answers with no governed rules at all — a wrong or missing ``default_graph``,
an empty or half-reloaded store, another endpoint behind the same URL — looks exactly
like a catalogue whose rules were all retired, and caching it switches governed policy
off everywhere. So a refresh whose projection governs nothing, where the cache it would
replace governs something, is **refused** (error kind ``empty``; the prior cache keeps
serving) unless the operator accepts it for this one run (``yupana project
--accept-empty``). The background refresh worker never accepts it: an empty catalogue
reaches the hooks only by a person's explicit choice.

A sharp shrink is the same accident half-way (a store reloaded with 5 % of its rules, a
truncated file, one graph of two loaded): a projection that drops more than
``[yupana.quipu] max_shrink`` (a fraction, default 0.5) of the governed rules the prior cache
holds is refused with error kind ``shrink``, accepted the same way (``--accept-empty``, or
its spelling ``--accept-shrink``), never by the worker.

When there is nothing to protect (no prior cache, or the prior one was empty too) the
empty projection is stored, and the refresh says so loudly (a warning on stderr and in
``yupana project``'s summary; ``yupana status`` shows the rule set as ``empty``).
"""

from __future__ import annotations

from typing import Any

from yupana.planes import GOVERNED_PLANES

#: The planes whose entries govern edits and commands (docs/cache-format.md "counts").
GOVERNED = GOVERNED_PLANES

ACCEPT_FLAG = "--accept-empty"
SHRINK_FLAG = "--accept-shrink"  # the same acceptance, said for a shrink
DEFAULT_MAX_SHRINK = 0.5


def governed_rules(counts: dict[str, Any] | None) -> int:
    """How many governed rules a cache's ``counts`` holds (0 for a missing or odd table)."""
    if not isinstance(counts, dict):
        return 0
    return sum(v for v in (counts.get(plane) for plane in GOVERNED) if isinstance(v, int) and not isinstance(v, bool))


def _prior_counts(path: str, key: str) -> dict[str, Any] | None:
    """The counts of the cache this refresh would replace (None: none for this endpoint)."""
    from yupana.state import cache

    found, miss = cache.read_json(path)
    if miss or not isinstance(found, dict) or cache.normalize_endpoint(str(found.get("endpoint"))) != key:
        return None
    return found.get("counts") if isinstance(found.get("counts"), dict) else None


def check(projected: dict[str, Any], path: str, key: str, *, accept_empty: bool,
          max_shrink: float = DEFAULT_MAX_SHRINK) -> tuple[str | None, str | None]:
    """``(refusal, warning)`` for storing ``projected`` (a cache dict) at ``path``.

    ``refusal`` (the message of an ``empty`` failure) when the projection governs nothing
    but the prior cache for ``key`` governs something and ``accept_empty`` is false;
    otherwise ``warning`` is set whenever the projection governs nothing. A projection that
    governs something but drops more than ``max_shrink`` of the prior's governed rules is
    :func:`shrink`'s to judge.
    """
    after = governed_rules(projected.get("counts"))
    if after > 0:
        return shrink(projected, path, key, after, accept=accept_empty, max_shrink=max_shrink)
    prior = _prior_counts(path, key)
    before = governed_rules(prior)
    endpoint = projected.get("endpoint") or key
    if before > 0 and not accept_empty:
        return (f"the store answered with no governed rules at all, but the cache it would replace governs {before} "
                f"({_shown(prior)}); refusing to switch governed policy off. Likely causes: a wrong or missing "
                f"[yupana.quipu] default_graph, an empty or half-loaded store, or the wrong endpoint ({endpoint}). "
                f"If the catalogue really is empty now, run `yupana project {ACCEPT_FLAG}` once"), None
    if before > 0:
        return None, (f"accepted an empty catalogue ({ACCEPT_FLAG}): it replaces {before} governed rules "
                      f"({_shown(prior)}); hooks now enforce no governed rule from {endpoint}")
    return None, (f"EMPTY CATALOGUE: {endpoint} holds no governed rules (no policies, text rules, grounded rules, "
                  "tripwires or host-memory policies), so no governed rule is enforced — check [yupana.quipu] "
                  "endpoint and default_graph, and that the store is loaded")


def shrink(projected: dict[str, Any], path: str, key: str, after: int, *, accept: bool,
           max_shrink: float) -> tuple[str | None, str | None]:
    """``(refusal, warning)`` for a projection governing ``after`` rules that may drop too many.

    The refusal starts with ``shrink:`` (the refresher's error kind ``shrink``)."""
    prior = _prior_counts(path, key)
    before = governed_rules(prior)
    if before <= 0 or after >= before:
        return None, None
    dropped = (before - after) / before
    if dropped <= max_shrink:
        return None, None
    endpoint = projected.get("endpoint") or key
    said = (f"the store answered with {after} governed rules ({_shown(projected.get('counts'))}) where the cache it "
            f"would replace governs {before} ({_shown(prior)}): {dropped:.0%} fewer, more than [yupana.quipu] "
            f"max_shrink = {max_shrink:g}")
    if accept:
        return None, f"accepted a shrunken catalogue: {said}; hooks now enforce {after} governed rules from {endpoint}"
    return (f"shrink: {said}; refusing to drop them. Likely causes: a store reloaded in part, a truncated file, "
            f"one graph of several loaded, or the wrong endpoint ({endpoint}). If the rules really were retired, run "
            f"`yupana project {SHRINK_FLAG}` once (or raise max_shrink)"), None


def _shown(counts: dict[str, Any] | None) -> str:
    counts = counts or {}
    return ", ".join(f"{plane.replace('_', ' ')} {counts[plane]}" for plane in GOVERNED
                     if isinstance(counts.get(plane), int) and counts[plane])
