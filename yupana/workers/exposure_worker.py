"""``yupana exposure-worker`` (internal): ask the store whether a repository is public.

Started detached by the pre-edit hook (:mod:`yupana.exposure`) when a block-tier text rule
fired and the stored answer is missing or expired. It resolves the same configuration the
hook used, calls quipu's ``/policy/check`` through the transport within a 2 s deadline,
maps the outcome (satisfied → public, unsatisfied → internal, anything else → unknown with
the reason) and merges the answer into ``exposure.json`` under an flock, atomically. It
never raises into anything: every failure is stored as an ``unknown`` answer with its
reason, which also serves as the back-off.
"""

from __future__ import annotations

import argparse
import os
import time

from yupana.state import atomic

from yupana.workers import detached

DEADLINE_SECS = 2.0


# the global flags (cli.GLOBAL_HELP) this command honours; any other is refused
GLOBAL_FLAGS: tuple[str, ...] = ("--config",)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--repo", required=True, help="repository name (the origin URL's last segment)")
    parser.add_argument("--endpoint", required=True, help="the store the hook's configuration names")
    parser.add_argument("--root", default=None, help="project root whose configuration to resolve")
    parser.add_argument("--marker", default=None, help="single-flight marker to remove when done")


def run(args: argparse.Namespace) -> int:
    from yupana import exposure

    try:
        root, override = args.root or os.getcwd(), getattr(args, "config", None)
        found, reason = ask(args.repo, args.endpoint, root, override)
        store(exposure.key(args.endpoint, args.repo), found, reason, _answers(root, override))
    finally:
        if args.marker:
            detached.release(args.marker)  # the single-flight marker the hook created
    return 0


def ask(repo: str, endpoint: str, root: str, override: str | None) -> tuple[str, str | None]:
    """(exposure, reason) from the store (:meth:`yupana.endpoint.Endpoint.repository_exposure`); never raises."""
    try:
        from yupana import config

        quipu = config.resolve(root, override)["config"]["quipu"]
    except Exception as exc:  # noqa: BLE001 - stored as the reason
        return "unknown", f"configuration error: {exc}"
    from yupana.state.cache import normalize_endpoint

    if normalize_endpoint(str(quipu.get("endpoint") or "")) != normalize_endpoint(endpoint):  # as the hook saw it
        return "unknown", "the configured endpoint changed while the lookup was pending"
    from yupana.endpoint import POLICY_CHECK, Deadline, EndpointError, open_endpoint

    try:
        ep = open_endpoint(quipu)
    except Exception as exc:  # noqa: BLE001
        return "unknown", f"cannot open the store: {exc}"
    try:
        if not ep.can(POLICY_CHECK):
            return "unknown", f"the store ({ep.dialect}) has no /policy/check"
        return ep.repository_exposure(repo, Deadline(DEADLINE_SECS))
    except Exception as exc:  # noqa: BLE001 - EndpointError or anything else: unknown, with why
        kind = exc.kind + ": " if isinstance(exc, EndpointError) else ""
        return "unknown", f"/policy/check failed ({kind}{exc})"
    finally:
        try:
            ep.close()
        except Exception:  # noqa: BLE001
            pass


def _answers(root: str, override: str | None) -> str | None:
    """``exposure.json`` of the dataset ``root``'s configuration names (None: unresolvable)."""
    from yupana import config, exposure

    try:
        quipu = config.resolve(root, override)["config"]["quipu"]
    except config.ConfigError:
        return None
    return exposure.cache_path_for(quipu, root)


def store(entry_key: str, found: str, reason: str | None, path: str | None) -> None:
    """Merge one answer into ``path``, an exposure.json (flock + atomic rename)."""
    import fcntl
    import json

    from yupana import exposure

    target = path
    if not target:
        return
    os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
    with open(target + ".lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        entries = exposure.read_entries(target)
        now = int(time.time())
        entries = {k: v for k, v in entries.items() if isinstance(v, dict) and now - v.get("at", 0) <= 7 * 86400}
        from yupana.redact import redact_text

        entry = {"exposure": found, "at": now}
        if reason:
            entry["reason"] = redact_text(reason)
        entries[entry_key] = entry
        atomic.write(target, json.dumps({"version": 1, "entries": entries}, indent=1, sort_keys=True).encode())
