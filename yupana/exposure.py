"""Repository exposure (public / internal / unknown) for block-tier text rules, without waiting.

quipu answers exposure through ``POST /policy/check`` (interop reference §1.11, §3.3): the
policy ``aegis:policy_no-internal-ids-in-public-repos`` checked against
``aegis:repo_<name>`` — ``satisfied`` is public, ``unsatisfied`` internal, anything else
unknown. A hook must never wait on the network, so answers live in ``exposure.json`` in the
store's own directory (beside its projection cache, :mod:`yupana.state.stores`), keyed by endpoint
and repository, with a TTL
(:data:`TTL_SECS`; an *unknown* answer is kept for :data:`UNKNOWN_TTL_SECS` as a back-off
so a store that cannot answer is asked once per interval, not once per edit).

On a miss or an expired entry the hook answers **unknown now** (block-tier rules then warn
and say the exposure is unknown) and starts at most one detached
``yupana exposure-worker`` for that repository (single-flight through an O_EXCL marker
file). The worker calls the store through the transport and writes the file.

Any SPARQL store can state exposure as data instead (docs/vocabulary.md, "Repository
exposure"): ``aegis:repo_<name> aegis:exposure "public"``, projected with the catalogue into
the cache's ``repo_exposure``; and a project can declare it in config (``[yupana.policy]
exposure``). :func:`resolve` asks the sources in this order and takes the first that knows:
the governed graph's statement, quipu's ``/policy/check``, the config declaration. When none
does the exposure is unknown and the reason names each source's answer.

Hot path: standard library only, imported only when a block-tier text rule fired.
"""

from __future__ import annotations

import os

from yupana.workers import detached

from yupana import fastjson

from yupana.state import statefile, stores

from yupana.planes import AEGIS

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from typing import Any, Protocol

    class LookupWorkers(Protocol):
        """What an exposure lookup needs of the hook's workers (:class:`yupana.hooks.effects.Workers`,
        :class:`LookOnly`)."""

        def exposure_lookup(self, endpoint: str, repo: str, root: str, override: str | None) -> bool: ...


POLICY_IRI = AEGIS + "policy_no-internal-ids-in-public-repos"
TTL_SECS = 3600
UNKNOWN_TTL_SECS = 300
PENDING_SECS = 30
OUTCOMES = {"satisfied": "public", "unsatisfied": "internal"}
KNOWN = ("public", "internal")
#: Where an exposure came from (``exposure_source`` on the ``governed`` record).
GRAPH, POLICY_CHECK, CONFIG, NONE = "graph", "policy-check", "config", "none"
NOT_DECLARED = "[yupana.policy] exposure is not set"


def resolve(quipu: dict[str, Any], statements: dict[str, str] | list[dict[str, Any]] | None, declared: str | None,
            repo: str | None, now: int, *, root: str,
            override: str | None = None, no_repo_reason: str = "the file is in no git tree",
            workers: LookupWorkers | None = None) -> tuple[str, str | None, str]:
    """``(exposure, why, source)`` for ``repo``: the first source that knows, in precedence order.

    ``statements`` is the governed graph's word: the hot cache's ``_repo_exposure`` index
    (``{repo: exposure}``) or the cache's ``repo_exposure`` entries;
    ``declared`` the config's ``[yupana.policy] exposure`` (or None). ``why`` says where a
    known answer came from, or, for ``unknown``, what every source answered. Never waits:
    ``/policy/check`` answers from ``exposure.json`` (see :func:`lookup`).
    """
    said: list[str] = []
    if repo:
        if isinstance(statements, dict):
            stated = statements.get(repo)
        else:
            stated = next((e.get("exposure") for e in statements or () if isinstance(e, dict) and e.get("repo") == repo),
                          None)
        if stated in KNOWN:
            return stated, f"stated in the governed graph on aegis:repo_{repo}", GRAPH
        said.append(f"the governed graph states no aegis:exposure for aegis:repo_{repo}")
    found, reason = lookup(quipu, repo, now, root=root, override=override, no_repo_reason=no_repo_reason,
                           workers=workers)
    if found in KNOWN:
        return found, "quipu's /policy/check", POLICY_CHECK
    if declared in KNOWN:
        return declared, "declared by [yupana.policy] exposure", CONFIG
    said.append(reason or "/policy/check gave no answer")
    said.append(NOT_DECLARED)
    return "unknown", "no exposure source knows this repository: " + "; ".join(said), NONE


def cache_path(ident: str) -> str | None:
    """``exposure.json`` of the dataset ``ident`` (:func:`yupana.state.dataset.identity`), in its
    store's own directory (:mod:`yupana.state.stores`): each dataset's answers are its own."""
    return stores.beside(ident, "exposure.json")


def cache_path_for(quipu: dict[str, Any], root: str) -> str | None:
    """``exposure.json`` of the store ``quipu`` (a ``[yupana.quipu]`` table) configures."""
    from yupana.state import dataset

    return cache_path(dataset.identity(quipu, root))


def repo_iri(repo: str) -> str:
    return AEGIS + "repo_" + repo


def key(endpoint: str, repo: str) -> str:
    from yupana.redact import redact_url

    return redact_url(endpoint.rstrip("/")) + "|" + repo  # exposure.json holds no credentials


def read_entries(path: str | None) -> dict[str, Any]:
    """The stored answers: ``{key: {"exposure", "at", "reason"?}}`` ({} when none)."""
    if not path:
        return {}
    try:
        data = fastjson.loads(statefile.read(path, statefile.LOG_LIMIT))
    except (OSError, ValueError, UnicodeDecodeError):  # a refused FIFO or device is noted by statefile
        return {}
    entries = data.get("entries") if isinstance(data, dict) else None
    return entries if isinstance(entries, dict) else {}


def lookup(quipu: dict[str, Any], repo: str | None, now: int, *, root: str, override: str | None = None,
           no_repo_reason: str = "the file is in no git tree",
           workers: LookupWorkers | None = None) -> tuple[str, str | None]:
    """(exposure, reason) for ``repo`` on the configured store, answered from the file now.

    Never blocks on the network: a miss answers ``unknown`` and starts one detached lookup
    through ``workers`` (:class:`yupana.hooks.effects.Workers`; None: started here). A
    rehearsal's workers (``yupana explain``) start none and answer as if they had asked.
    """
    if not repo:
        return "unknown", no_repo_reason
    endpoint = str(quipu.get("endpoint") or "")
    if not endpoint.startswith(("http://", "https://")):
        return "unknown", f"the store {endpoint or '(bundled)'} has no /policy/check to ask"
    if quipu.get("dialect") == "sparql11":
        return "unknown", "a generic SPARQL 1.1 store has no /policy/check to ask"
    entry = read_entries(cache_path_for(quipu, root)).get(key(endpoint, repo))
    if isinstance(entry, dict) and isinstance(entry.get("at"), int):
        exposure = entry.get("exposure")
        age = now - entry["at"]
        ttl = TTL_SECS if exposure in ("public", "internal") else UNKNOWN_TTL_SECS
        if 0 <= age <= ttl and exposure in ("public", "internal", "unknown"):
            return exposure, entry.get("reason") if exposure == "unknown" else None
    if workers is not None:
        started = workers.exposure_lookup(endpoint, repo, root, override)
    else:
        started = start_lookup(endpoint, repo, root=root, override=override)
    note = "looking it up in the background" if started else "a lookup is already running"
    return "unknown", f"not known yet for this store; {note}"


def lookup_claimable(endpoint: str, repo: str) -> bool:
    """Whether :func:`start_lookup` would start a worker now (claims nothing, spawns nothing)."""
    marker = pending_marker(repo, endpoint)
    if marker is None:
        return False
    import time

    return detached.claimable(marker, time.time(), PENDING_SECS)


class LookOnly:
    """Workers (:class:`yupana.hooks.effects.Workers`' lookup) that start nothing: they say
    whether a lookup would start (``yupana status`` / ``project --dump``, through
    :mod:`yupana.block_tier`)."""

    __slots__ = ()

    def exposure_lookup(self, endpoint: str, repo: str, root: str, override: str | None) -> bool:
        return lookup_claimable(endpoint, repo)


def start_lookup(endpoint: str, repo: str, *, root: str, override: str | None = None) -> bool:
    """Start one detached ``yupana exposure-worker`` for ``repo`` unless one is pending."""
    marker = pending_marker(repo, endpoint)
    if marker is None:
        return False
    import time

    from yupana.redact import redact_url

    args = ["exposure-worker", "--repo", repo, "--endpoint", redact_url(endpoint), "--root", root, "--marker", marker]
    if override:
        args += ["--config", override]
    return detached.spawn_claimed(marker, args, time.time(), PENDING_SECS)


def pending_marker(repo: str, endpoint: str) -> str | None:
    from yupana.redact import redact_url

    base = stores.beside(redact_url(endpoint.rstrip("/")), "exposure.json")  # single flight per endpoint and repo
    if not base:
        return None
    safe = "".join(c for c in repo if c.isascii() and (c.isalnum() or c in "._-"))[:80] or "repo"
    return os.path.join(os.path.dirname(base), f"exposure.pending.{safe}")


def outcome_to_exposure(reply: object) -> tuple[str, str | None]:
    """Map a /policy/check reply to (exposure, reason) as the interop reference §1.11 says."""
    if not isinstance(reply, dict):
        return "unknown", "unreadable /policy/check reply"
    outcome = reply.get("outcome")
    if outcome in OUTCOMES:
        return OUTCOMES[outcome], None
    if outcome in (None, "unknown"):
        return "unknown", "the repository is not in the graph"
    return "unknown", f"unrecognised /policy/check outcome {outcome!r}"
