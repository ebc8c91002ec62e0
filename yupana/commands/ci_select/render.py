"""The human form of ``yupana ci-select``: the selection, then (with ``--run``) the outcome. Cold path."""

from __future__ import annotations

from typing import Any

MAX_PATHS_SHOWN = 5
NOTE = "local checks supplement complete hosted CI and independent review; they replace neither"


def render(report: dict[str, Any], *, hint: bool = True) -> str:
    """The selection: state and why, policy freshness, the change, and each selected command.

    ``hint`` adds what to do next with a selection (not wanted when ``--run`` is running it).
    """
    state = report["state"]
    head = state.upper()
    if state == "selected" and report["complete"] is False:
        head += " (partial map)"
    lines = [_row("ci-select", f"{head} — {report['reason']}"),
             _row("policy", policy_line(report["policy"])),
             _row("change", change_line(report))]
    for i, cmd in enumerate(report["commands"], 1):
        lines.append(f"  {i}. {cmd['command']}")
        jobs = ", ".join(f"{j['job']} ({j['label']})" for j in cmd["jobs"])
        lines.append(f"       {'jobs' if len(cmd['jobs']) > 1 else 'job':<7}: {jobs}")
        lines.append(f"       matched: {', '.join(cmd['scopes'])} ← {_paths(cmd['paths'])}")
    if state == "selected":
        if report["runnable"]:
            next_step = "run them with `yupana ci-select --run` (or by hand, in the project root)"
        else:
            next_step = ("`--run` does not run a partial map's matches: they are not the whole check set "
                    "(run them by hand if you like; hosted CI decides the rest)")
        if hint:
            lines.append(_row("next", next_step))
    lines.append(_row("note", NOTE))
    from yupana import terminal

    return terminal.show(lines)  # fits the terminal, coloured on one; piped, full width and plain


def render_outcome(report: dict[str, Any]) -> str:
    """After ``--run``: what ran, what failed, what was not run, and why."""
    run = report["run"] or {}
    results = run.get("results") or []
    if run.get("refused"):
        line = f"nothing run — {run['refused']}"
    elif run.get("failed") is not None:
        line = f"FAILED — `{run['failed']}` exited {results[-1]['exit_code']}"
        passed = len(results) - 1
        if passed:
            line += f" after {passed} command(s) passed"
        if run.get("not_run"):
            line += f"; not run: {', '.join('`' + c + '`' for c in run['not_run'])}"
    elif results:
        line = f"passed — all {len(results)} command(s) exited 0"
    else:
        line = "nothing to run"
    from yupana import terminal

    return terminal.show([_row("result", line)])


def policy_line(policy: dict[str, Any]) -> str:
    """``fresh, cache age 12s (endpoint)``, the STALE form with its reason, or why there is none."""
    if policy.get("not_configured"):
        return f"off — {policy['not_configured']}"
    if policy.get("freshness") is None:
        return f"no servable cache ({(policy.get('miss') or {}).get('label')})"
    if policy["freshness"] == "fresh":
        return f"fresh, cache age {policy['cache_age_secs']}s ({policy['endpoint']})"
    return f"STALE: cache age {policy['cache_age_secs']}s; {policy['stale_reason']} ({policy['endpoint']})"


def change_line(report: dict[str, Any]) -> str:
    """How many paths, and where they came from."""
    n = len(report["changed"])
    if report.get("source") == "paths":
        return f"{n} path(s) from --paths"
    commit = (report.get("base_commit") or "")[:12]
    return f"{n} path(s): {report.get('base')}...HEAD ({commit}) plus uncommitted and untracked changes"


def _paths(paths: list[str]) -> str:
    shown = ", ".join(paths[:MAX_PATHS_SHOWN])
    if len(paths) > MAX_PATHS_SHOWN:
        shown += f" (+{len(paths) - MAX_PATHS_SHOWN} more)"
    return shown


def _row(label: str, text: str) -> str:
    return f"{label:<10}: {text}"
