"""``yupana ci-select [--base REF] [--paths P…] [--json] [--run]``: the pre-push CI advisory. Cold path.

Which governed local commands stand in for the hosted CI jobs an outgoing change touches.
The change is ``git diff <base>...HEAD`` plus uncommitted and untracked paths
(:mod:`yupana.commands.ci_select.changes`), or the ``--paths`` given, relative to the project root
— the directory the hooks would judge a file under (:mod:`yupana.project_root`: the
nearest ``.bobbin/config.toml`` above the cwd, else the repository's top), so the map's
scopes see the same repo-relative path as every other plane; a changed path outside the
project root stays absolute. ``--base`` defaults to ``[yupana] base_ref``. The map is the
projection cache's ``ci_map`` for the configured endpoint, read as ``yupana status`` reads
it: never refreshed, never rewritten, served within ``projection_cache_ttl_secs`` and called
STALE, with its age, once ``refresh_interval_secs`` has passed or a refresh failed since it
was written.
The selection itself is :func:`yupana.evaluate.ci_map.select`.

``--run`` runs the selected commands in order, in the project root, through
``/bin/sh -c``, their output streamed (to stderr under ``--json``, so stdout stays one JSON
object), stopping at the first failure. It runs only a selection from a *complete* map:
partial knowledge must not run a partial check set, so a partial map's matches are listed
and not run.

Exit codes: 0 quiet, or selected (and, with ``--run``, every command passed); 1 a command
failed; 2 a usage, configuration or git error (nothing selected, nothing recorded beyond
the ``command`` record); 3 UNKNOWN — no servable cache, no map, an invalid map, a partial
map with no match, or a partial map's matches (listed, not run). Records: ``ci_select``,
or ``ci_shift_unknown`` for UNKNOWN (docs/records.md). Operator page: docs/ci-map.md.
"""

from __future__ import annotations

import os
import sys
import time

TYPE_CHECKING = False  # `yupana hook pre-push` reuses this runner: argparse and typing load only for the command
if TYPE_CHECKING:
    import argparse
    from typing import Any

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_UNKNOWN = 0, 1, 2, 3
SCHEMA_VERSION = 1
NOT_CONFIGURED, NO_CACHE = "not-configured", "no-cache"


# the global flags (cli.GLOBAL_HELP) this command honours; any other is refused
GLOBAL_FLAGS: tuple[str, ...] = ("--json", "--config")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """--base, --paths, --run (and the global --json, --config)."""
    change = parser.add_mutually_exclusive_group()
    change.add_argument("--base", default=None, metavar="REF",
                        help="compare HEAD with its merge base with REF (default: [yupana] base_ref)")
    change.add_argument("--paths", nargs="+", default=None, metavar="P",
                        help="select for these paths (relative to the project root, or absolute) instead of asking git")
    parser.add_argument("--run", action="store_true",
                        help="run the selected commands in order in the project root; stop at the first failure")


def run(args: argparse.Namespace) -> int:
    """Select, report, record, and with ``--run`` run; return the exit code."""
    from yupana import config, project_root
    from yupana.commands.ci_select import changes as ci_changes
    from yupana.commands.ci_select import render

    as_json = bool(getattr(args, "json", False))
    now = int(time.time())
    try:
        cwd = os.getcwd()
        top = ci_changes.repo_top(cwd)
        root = project_root.nearest(cwd) or top  # as a hook finds it (nothing found: the git top)
        cfg = config.resolve(root, getattr(args, "config", None))["config"]
        base = None if args.paths else (args.base or cfg["base_ref"])
        if args.paths:
            changed = ci_changes.relative_paths(root, args.paths)
            base_commit = None
        else:
            assert base is not None  # base_ref is a str setting with a default
            changed = rebase(ci_changes.outgoing(top, base), top, root)
            base_commit = ci_changes.commit_of(top, base)
    except ci_changes.GitError as exc:
        return _usage_error("git", str(exc), as_json)
    except config.ConfigError as exc:
        return _usage_error("config", f"configuration error\n{exc}", as_json)
    report = gather(cfg, root, changed, now)
    report.update(base=base, base_commit=base_commit, source="paths" if args.paths else "git")
    report["run"] = None
    if args.run:
        if not as_json:
            _write(render.render(report, hint=False))  # the selection first, then the commands' own output
        report["run"] = run_commands(report, root, as_json)
    report["exit_code"] = exit_code(report)
    _record(report)
    if as_json:
        from yupana.commands.json_output import emit

        emit("ci-select", report)
        if report["state"] == "unknown":
            print(f"yupana: ci-select UNKNOWN: {report['reason']}", file=sys.stderr)
    else:
        _write(render.render_outcome(report) if args.run else render.render(report))
    return int(report["exit_code"])


def rebase(changed: list[str], top: str, root: str) -> list[str]:
    """Paths relative to the git ``top`` made relative to the project ``root`` (absolute outside it)."""
    if top == root:
        return changed
    out = []
    prefix = root.rstrip("/") + "/"
    for rel in changed:
        path = os.path.normpath(os.path.join(top, rel))
        out.append(path[len(prefix):] if path.startswith(prefix) else path)
    return out


def gather(cfg: dict[str, Any], top: str, changed: list[str], now: int) -> dict[str, Any]:
    """The selection for ``changed`` against the servable cache: the ``--json`` object, less the run."""
    from yupana.evaluate import ci_map

    policy = served_policy(cfg, top, now)
    body = policy.pop("_cache")
    if policy["not_configured"]:
        selection = ci_map.Selection(ci_map.UNKNOWN, f"the governed plane is not configured ({policy['not_configured']}): "
                                     "there is no CI map to select from", cause=NOT_CONFIGURED,
                                     changed=ci_map.normalise_paths(changed))
    elif body is None:
        miss = policy["miss"] or {}
        reason = f"no servable projection cache ({miss.get('label')}): {miss.get('reason')}"
        if "yupana project" not in reason:
            reason += " (run `yupana project`)"
        selection = ci_map.Selection(ci_map.UNKNOWN, reason, cause=NO_CACHE, changed=ci_map.normalise_paths(changed))
    else:
        selection = ci_map.select(body.get("ci_map"), changed)
    report = {"schema_version": SCHEMA_VERSION, "root": top, **selection.to_dict(), "policy": policy}
    report["runnable"] = selection.runnable
    return report


def served_policy(cfg: dict[str, Any], top: str, now: int) -> dict[str, Any]:
    """The cache ``ci-select`` may serve, and its freshness; never refreshes, never writes.

    Returns the ``policy`` object of ``--json`` plus ``_cache`` (the cache, or None).
    """
    from yupana.state import cache, refresh_state

    quipu = cfg["quipu"]
    ttl, interval = int(quipu["projection_cache_ttl_secs"]), int(quipu["refresh_interval_secs"])
    out: dict[str, Any] = {"endpoint": None, "cache_path": None, "freshness": None, "cache_age_secs": None, "written_at": None,
                 "ttl_secs": ttl, "refresh_interval_secs": interval, "stale_reason": None, "miss": None,
                 "not_configured": None, "_cache": None}
    off, key, path, body, miss = cache.served_json(quipu, top, now)
    if off is not None or key is None:
        out["not_configured"] = off
        return out
    out.update(endpoint=key, cache_path=path)
    if miss is not None:
        out["miss"] = {"label": miss.label, "reason": miss.reason}
        return out
    assert body is not None
    written = body["written_at"]
    out.update(written_at=written, cache_age_secs=now - written, _cache=body)
    state = refresh_state.read(path, key)
    if refresh_state.failed_since(state, written):
        out["stale_reason"] = f"last refresh failed: {state.get('last_error') or 'unknown error'}"
    elif now - written > interval:
        out["stale_reason"] = f"refresh overdue (refresh_interval_secs = {interval})"
    out["freshness"] = "stale" if out["stale_reason"] else "fresh"
    return out


def exit_code(report: dict[str, Any]) -> int:
    """0 quiet / selected (and passed); 1 a command failed; 3 UNKNOWN or a partial selection."""
    run_info = report.get("run")
    if run_info and run_info.get("failed") is not None:
        return EXIT_FAILED
    if report["state"] == "unknown" or (report["state"] == "selected" and not report["runnable"]):
        return EXIT_UNKNOWN
    return EXIT_OK


def run_commands(report: dict[str, Any], top: str, as_json: bool) -> dict[str, Any]:
    """Run a complete map's selection in order (see the module docstring); the ``run`` object."""
    out: dict[str, Any] = {"refused": None, "results": [], "failed": None, "not_run": []}
    commands = [c["command"] for c in report["commands"]]
    if report["state"] == "unknown":
        out["refused"] = "coverage is UNKNOWN: nothing is run (see reason)"
        return out
    if report["state"] != "selected":
        return out
    if not report["runnable"]:
        out["refused"] = ("the CI map is partial: its matches are not the whole check set, and a partial "
                          "check set is not run (run them by hand, and let hosted CI decide the rest)")
        out["not_run"] = commands
        return out
    say = _progress(as_json)
    for i, command in enumerate(commands):
        say(f"── ci-select [{i + 1}/{len(commands)}] {command}")
        started = time.monotonic()
        rc = _shell(command, top, as_json)
        took = round(time.monotonic() - started, 3)
        out["results"].append({"command": command, "exit_code": rc, "duration_secs": took})
        if rc != 0:
            out["failed"] = command
            out["not_run"] = commands[i + 1:]
            say(f"── ci-select: FAILED (exit {rc}) after {took:g}s: {command}"
                + (f"; {len(out['not_run'])} later command(s) not run" if out["not_run"] else ""))
            return out
        say(f"── ci-select: passed in {took:g}s")
    return out


def _shell(command: str, top: str, as_json: bool) -> int:
    """Run one command through /bin/sh in ``top``; its stdout goes to ours, or to stderr under --json."""
    import subprocess

    sys.stdout.flush()
    sys.stderr.flush()
    try:
        done = subprocess.run(["/bin/sh", "-c", command], cwd=top, stdin=subprocess.DEVNULL,
                              stdout=sys.stderr.fileno() if as_json else None)
    except OSError as exc:
        print(f"yupana: cannot start /bin/sh for {command!r}: {exc.strerror or exc}", file=sys.stderr)
        return 127
    return done.returncode


def _progress(as_json: bool) -> Any:
    stream = sys.stderr if as_json else sys.stdout

    def say(line: str) -> None:
        print(line, file=stream, flush=True)

    return say


def _record(report: dict[str, Any]) -> None:
    from yupana.state import spool

    policy = report["policy"]
    common = {"changed": len(report["changed"]), "policy_freshness": policy["freshness"],
              "policy_age_secs": policy["cache_age_secs"]}
    if report["state"] == "unknown":
        spool.record("ci_shift_unknown", {"reason": report["reason"], "cause": report["cause"], **common,
                                          "miss": (policy["miss"] or {}).get("label")})
        return
    fields = {"state": report["state"], "complete": report["complete"],
              "commands": [c["command"] for c in report["commands"]], **common, "exit_code": report["exit_code"]}
    run_info = report["run"]
    if run_info is not None:
        fields.update(ran=len(run_info["results"]), failed=run_info["failed"],
                      refused=bool(run_info["refused"]) or None)
    spool.record("ci_select", fields)


def _write(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


def _usage_error(kind: str, message: str, as_json: bool) -> int:
    print(f"yupana: ci-select: {message}", file=sys.stderr)
    if as_json:
        from yupana.commands.json_output import emit

        emit("ci-select", {"schema_version": SCHEMA_VERSION, "error": {"kind": kind, "message": message},
                           "exit_code": EXIT_USAGE})
    return EXIT_USAGE
