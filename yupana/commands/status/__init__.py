"""``yupana status [--tenant T] [--json] [--live | --offline]``: is the guard armed, and running? Cold path.

It reports, resolved for the tenant (``--tenant``, else ``$BOBBIN_ROLE``):

* **local controls** — ``ok``, or ``degraded`` with each control of the configuration no
  hook can run (a malformed glob, a regex RE2 refuses, a query that does not compile, a
  broken tripwire, an endpoint no refresh can use): the findings of ``yupana config check``;
* **policy** — the mode and where it came from (default, user or project file,
  ``--config``, environment), the tenant's declared scope (path and target counts, blast
  ceilings) with a ⚠ when ``enforce`` has nothing to enforce a path scope with
  (``enforcing_without_scope``), the work-item and action-scope rungs with the mode as
  their ceiling, config warnings (unknown keys), and ``notify_on_fail_open``;
* **rule set** — ``off`` (the governed plane is not configured), ``loaded``, ``empty``,
  ``stale`` (a servable cache answers, but it is overdue, the last refresh failed, or the
  live store does not answer) or ``degraded`` (nothing servable: the guard fails open on
  governed policy); counts per plane, the digest, cache age / TTL / endpoint, and the
  refresher's last attempt, error and back-off (``refresh-state.json``);
* **signed rule set** — the bundle this host installed, or ``never-loaded``;
* **landing** — the ``[yupana.policy] landing`` rung, the signing key (present, key id), the
  git pre-push hook, and this project's last landing certification (its own population:
  the landing spool, never counted with the hooks' records);
* **hooks** — health from the metrics spool (:mod:`yupana.commands.status.health`);
* **clients** — per coding client found on this machine: registered or not, wrapper and
  timeout, Codex trust, last record seen for this project (:mod:`yupana.commands.status.clients`).

The live store: status never refreshes and never writes the cache. It asks the store one
trivial query (``SELECT … LIMIT 1``), bounded by ``request_timeout_secs`` (a hung store or
DNS lookup cannot hold the terminal longer), only when the cache is not fresh — to tell
"the store is down" from "the store is up, a refresh is due" — or always with ``--live``
(then a failed probe turns ``loaded``/``empty`` into ``stale``, as the Rust original's live
projection does). ``--offline`` never contacts the store.

Exit codes: 0 off / loaded / empty / stale; 3 degraded (rule set, local controls, or a client's hooks
registered but untrusted or never invoked); 4 the project config lowered the
user's mode, or a control of the guard got looser within the window (3 wins when both apply: the guard not enforcing is the more urgent fact);
1 a configuration or other error, with the reason on stderr (and in ``--json``).
Schema and field meanings: docs/status.md.
"""

from __future__ import annotations

from typing import Any

import argparse
import os
import sys
import time

from yupana.commands.status.rule_set import rule_set_section

EXIT_OK, EXIT_ERROR, EXIT_DEGRADED, EXIT_LOWERED = 0, 1, 3, 4
SCHEMA_VERSION = 1
DEFAULT_WINDOW_SECS = 86400
DEFAULT_LAST_N = 100
# The hooks read [yupana.policy] notify_on_fail_open (the Rust original did not: interop §8 item 4).
NOTIFY_ON_FAIL_OPEN_READ = True
SIGNED_NOTE = ("no signed rule set exists yet: the resident, signed rule cache is not built, so nothing signed "
               "is loaded; the measured state of the rules the hooks enforce is rule_set.state")


# the global flags (cli.GLOBAL_HELP) this command honours; any other is refused
GLOBAL_FLAGS: tuple[str, ...] = ("--json", "--config", "--tenant")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    live = parser.add_mutually_exclusive_group()
    live.add_argument("--live", action="store_true",
                      help="ask the store even when the cache is fresh (bounded by request_timeout_secs)")
    live.add_argument("--offline", action="store_true", help="never contact the store")
    parser.add_argument("--root", default=None, help="project root whose configuration to use (default: cwd)")
    parser.add_argument("--window", type=int, default=DEFAULT_WINDOW_SECS, metavar="SECS",
                        help=f"hook invocations are counted over this many seconds (default {DEFAULT_WINDOW_SECS})")
    parser.add_argument("--last", type=int, default=DEFAULT_LAST_N, metavar="N",
                        help=f"durations and rates over each hook's last N invocations (default {DEFAULT_LAST_N})")


def run(args: argparse.Namespace) -> int:
    from yupana import config, project_root

    project = project_root.cold_project(args.root)  # --root, else the project the cwd is in (and its nested layers)
    root = project.root
    override = getattr(args, "config", None)
    as_json = bool(getattr(args, "json", False))
    live = "always" if args.live else ("never" if args.offline else "auto")
    try:
        report = gather(root, override, tenant_of(args), int(time.time()), live=live,
                        window_secs=max(1, args.window), last_n=max(1, args.last), nested=project.nested)
    except config.ConfigError as exc:
        return _error("config", f"configuration error\n{exc}", as_json)
    except Exception as exc:  # noqa: BLE001 - an operator command names what failed, never a traceback
        return _error("internal", f"status failed: {type(exc).__name__}: {exc}", as_json)
    if as_json:
        from yupana.commands.json_output import emit

        emit("status", report)
    else:
        from yupana.commands.status import render as status_render

        sys.stdout.write(status_render.render(report))
    return int(report["exit_code"])


def tenant_of(args: argparse.Namespace) -> tuple[str | None, str | None]:
    """The tenant and where it came from (``--tenant``, ``$BOBBIN_ROLE``, or neither)."""
    if getattr(args, "tenant", None):
        return args.tenant, "--tenant"
    if os.environ.get("BOBBIN_ROLE"):
        return os.environ["BOBBIN_ROLE"], "$BOBBIN_ROLE"
    return None, None


def _error(kind: str, message: str, as_json: bool) -> int:
    print(f"yupana: {message}", file=sys.stderr)
    if as_json:
        from yupana.commands.json_output import emit

        emit("status", {"schema_version": SCHEMA_VERSION, "error": {"kind": kind, "message": message},
                        "exit_code": EXIT_ERROR})
    return EXIT_ERROR


def gather(root: str, override: str | None, tenant: tuple[str | None, str | None], now: int, *,
           live: str = "auto", window_secs: int = DEFAULT_WINDOW_SECS, last_n: int = DEFAULT_LAST_N,
           nested: tuple[str, ...] = ()) -> dict[str, Any]:
    """The whole ``status --json`` object (docs/status.md). Raises ``config.ConfigError``."""
    from yupana import block_tier
    from yupana.config import controls as config_controls
    from yupana.state import paths, spool
    from yupana.commands.status import health as status_health
    from yupana.redact import redact_url

    checked = config_controls.check(root, override, nested)  # the same findings as `yupana config check`
    resolved = checked["resolved"]
    cfg = resolved["config"]
    name, source = tenant
    rule_set = rule_set_section(cfg, root, now, live)
    rule_set["block_tier"] = block_tier.for_status(cfg, root, now, override, rule_set)
    spool_path = paths.metrics_spool()
    records, spool_info = status_health.read_spool(spool_path)
    complete = (spool_info["read_all"] and not spool_info["rotated"]) or (
        spool_info["oldest_ts"] is not None and spool_info["oldest_ts"] <= now - window_secs)
    spool_info["write_error"] = spool.last_error()  # this very command's own `command` record
    report = {
        "schema_version": SCHEMA_VERSION,
        "root": root,
        "base_ref": cfg["base_ref"],
        "base_commit": _base_commit(root, cfg["base_ref"]),
        "tenant": name,
        "tenant_source": source,
        "tiers": ["tree-sitter"],
        "languages": cfg["languages"],
        "quipu": {"enabled": bool(cfg["quipu"]["enabled"]), "branch_model": cfg["quipu"]["branch_model"],
                  "endpoint": redact_url(cfg["quipu"]["endpoint"])},
        "policy": policy_section(cfg, name),
        "policy_mode_provenance": resolved["provenance"],
        "config": {"sources": resolved["sources"], "warnings": resolved["warnings"],
                   "managed": managed_section(resolved), "lowered": resolved.get("lowered") or [],
                   "controls": {"state": "degraded" if checked["findings"] else "ok",
                                "findings": checked["findings"], "notes": checked["notes"]}},
        "metrics": {"record_paths": cfg["metrics"]["record_paths"]},
        "rule_set": rule_set,
        "signed_rule_set": signed_rule_set_section(cfg, root, now),
        "landing": landing_section(cfg, root, now),
        "hooks": status_health.summarise(records, now, window_secs=window_secs, last_n=last_n,
                                         window_complete=bool(complete)),
        "spool": spool_info,
        "now": now,
    }
    from yupana.commands.status import clients as status_clients

    report["clients"] = status_clients.section(root, records, now, deadline_ms=cfg["policy"]["deadline_ms"],
                                               spool_complete=spool_info["read_all"] and not spool_info["rotated"])
    from yupana.commands.status import tamper as status_tamper

    report["tamper"] = status_tamper.section(records, root, now, window_secs)
    from yupana.commands.status import rollout as status_rollout

    report["rollout"] = status_rollout.section(records, rule_set.get("staged") or {}, now, window_secs)
    report["exit_code"] = exit_code(report)
    return report


def landing_section(cfg: dict[str, Any], root: str, now: int) -> dict[str, Any]:
    """``landing``: the rung, signing key, git hook and last certification (docs/status.md "Landing")."""
    from yupana.commands.status import landing

    return landing.section(cfg, root, now)


def signed_rule_set_section(cfg: dict[str, Any], root: str, now: int) -> dict[str, Any]:
    """``signed_rule_set``: the bundle this host installed (docs/bundles.md), or never-loaded."""
    url = str((cfg.get("bundle") or {}).get("url") or "").strip()
    if not url:
        return {"loaded": False, "state": "never-loaded", "note": SIGNED_NOTE}
    from yupana.state import cache, refresh_state
    from yupana.workers import refresher

    path = refresher.cache_path_of(root)
    key = cache.endpoint_key(cfg["quipu"].get("endpoint") or "", root)
    state = refresh_state.read(path, key)
    installed = state.get("bundle") or {}
    from yupana.state import dataset

    found, refused = cache.load_servable_json(path, key, int(cfg["quipu"]["projection_cache_ttl_secs"]), now,
                                              dataset=dataset.identity(cfg["quipu"], root),
                                              dialect=cfg["quipu"].get("dialect"))
    loaded = bool(installed) and found is not None and found.get("digest") == installed.get("digest")
    out = {"loaded": loaded, "state": "loaded" if loaded else ("refused" if installed else "never-loaded"),
           "version": installed.get("digest"), "key_id": installed.get("key_id"),
           "source": installed.get("source") or url, "confirmed_at": installed.get("confirmed_at"),
           "age_secs": (now - int(installed["confirmed_at"])) if isinstance(installed.get("confirmed_at"), int) else None,
           "checked_at": installed.get("checked_at"), "last_error_kind": state.get("last_error_kind"),
           "last_error": state.get("last_error"),
           "note": "installed from a signed bundle" if loaded else (
               f"the installed bundle is not served ({refused.label})" if installed and refused else
               "no bundle has been installed yet: run `yupana project`")}
    return out


def exit_code(report: dict[str, Any]) -> int:
    """3 degraded (the rule set, a broken local control, or a client's hooks), else 4 when the project
    lowered the user's mode, a layer tried to lower the managed floor (or a nested file its project),
    or the managed floor is writable by this user, or a control of the guard got looser within the
    window, else 0."""
    if (report["rule_set"]["state"] == "degraded" or report["config"]["controls"]["state"] == "degraded"
            or report.get("clients", {}).get("state") == "degraded"):
        return EXIT_DEGRADED
    if report["policy_mode_provenance"].get("lowered_by_project") or (report.get("tamper") or {}).get("warn"):
        return EXIT_LOWERED
    managed = report["config"].get("managed") or {}
    if report["config"].get("lowered") or managed.get("writable") or managed.get("bypassed"):
        return EXIT_LOWERED
    return EXIT_OK


def managed_section(resolved: dict[str, Any]) -> dict[str, Any]:
    """``config.managed``: the managed floor in use, and whether this user (the hooks' user when
    status runs as it) could write it or its directory — a floor the agent can rewrite is advice."""
    from yupana.state import paths

    managed = resolved.get("managed") or {}
    path = str(managed.get("path") or "")
    present = bool(managed.get("present"))
    writable = [p for p in (path, os.path.dirname(path)) if present and p and os.access(p, os.W_OK)]
    machine = paths.MANAGED_CONFIG  # $YUPANA_MANAGED_CONFIG naming another file sets the machine's floor aside
    bypassed = machine if path != machine and os.path.lexists(machine) else None
    return {"path": path, "present": present, "writable": bool(writable), "writable_paths": writable,
            "bypassed": bypassed}


# ── policy ──────────────────────────────────────────────────────────────────────────


def policy_section(cfg: dict[str, Any], tenant: str | None) -> dict[str, Any]:
    """``policy`` in ``status --json``: mode, the tenant's scope (counts), the caveat, the rungs."""
    from yupana.evaluate.work_items import effective_rung

    policy = cfg["policy"]
    mode = policy["mode"]
    declared = (policy.get("scopes") or {}).get(tenant) if tenant else None
    scope = None
    if declared is not None:
        scope = {key: len(declared.get(key) or ()) for key in
                 ("allow_paths", "deny_paths", "allow_targets", "deny_targets")}
        scope["max_impacted_symbols"] = declared.get("max_impacted_symbols")
        scope["max_impacted_files"] = declared.get("max_impacted_files")
    constrains = scope is not None and bool(scope["allow_paths"] or scope["deny_paths"]
                                            or scope["max_impacted_symbols"] is not None
                                            or scope["max_impacted_files"] is not None)
    work_item = effective_rung(policy["work_item_scope"], mode)
    return {
        "mode": mode,
        "scope_configured": scope is not None,
        "scope_constrains_paths": constrains,
        "scope": scope,
        "ceilings": {"max_impacted_symbols": scope["max_impacted_symbols"] if scope else None,
                     "max_impacted_files": scope["max_impacted_files"] if scope else None},
        "enforcing_without_scope": mode == "enforce" and not constrains and work_item == "off",
        "work_item_scope": {"setting": policy["work_item_scope"], "effective": work_item},
        "action_scope": {"setting": policy["action_scope"], "effective": effective_rung(policy["action_scope"], mode)},
        "self_protection": {"setting": policy.get("self_protection", "enforce"),
                            "effective": effective_rung(policy.get("self_protection", "enforce"), mode)},
        "deadline_ms": policy["deadline_ms"],
        "notify_on_fail_open": policy["notify_on_fail_open"],
        "notify_on_fail_open_read": NOTIFY_ON_FAIL_OPEN_READ,
        "local_rules": len(policy.get("rules") or ()),
        "local_tripwires": len(policy.get("tripwires") or ()),
        "verify": policy["verify"],
    }


def _base_commit(root: str, base_ref: str) -> str | None:
    """The commit ``base_ref`` names in the repository at ``root`` (None outside a repository)."""
    import subprocess

    try:
        done = subprocess.run(["git", "-C", root, "rev-parse", "--verify", "--quiet", f"{base_ref}^{{commit}}"],
                              capture_output=True, timeout=2.0, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    sha = done.stdout.decode("ascii", "replace").strip()
    return sha if done.returncode == 0 and sha else None
