"""``yupana project``: refresh the projection cache now; ``--dump`` shows what it holds.

``yupana project`` runs one refresh (:func:`yupana.workers.refresher.refresh_now`) and prints one
line per plane — count, digest, duration, endpoint. On failure it exits non-zero with the
named reason and what keeps serving ("prior cache kept (age 120s)"). When the refresh is
slow it says what it is doing on stderr. With no endpoint configured it projects the
bundled example catalogue (into a cache of its own, see :func:`refresher.cache_path_for`).

``yupana project --dump [--json | --format table|json|turtle] [--no-refresh]`` prints the
cache: with no endpoint configured it first projects the bundled example catalogue
(unless ``--no-refresh``); with one, it shows the cache as it is (run ``yupana project``
to refresh it). A cache that would not be served (expired, another endpoint) is still
shown, with a warning that hooks refuse it.

Exit codes: 0 done; 1 the refresh failed (or there is no cache to dump); 3 another
refresh is running and did not finish within the wait.
"""

from __future__ import annotations

from typing import Any

import argparse
import hashlib
import json
import sys
import threading
import time

from yupana.planes import PLANES as REGISTRY

EXIT_FAILED = 1
EXIT_BUSY = 3
SLOW_SECS = 1.0

PLANES = tuple(p.key for p in REGISTRY) + ("unprojected",)  # the summary's rows: the registry's, then the unprojected
# Where a plane's fetch time is accounted in the projection's stats, when not under its own name.
TIMED_WITH = {"tripwires": "policies", "memory_policies": "policies", "unprojected": "policies"}
#: The phases of a refresh, in order (docs/refresh.md, "Where a refresh spends its time").
PHASES = ("server", "transfer", "decode", "compile", "gate", "write")


# the global flags (cli.GLOBAL_HELP) this command honours; any other is refused (the refresh outcome or the dump as JSON; the configuration; the progress lines)
GLOBAL_FLAGS: tuple[str, ...] = ("--json", "--config", "--quiet", "--verbose")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dump", action="store_true", help="print what the cache holds")
    parser.add_argument("--format", choices=("table", "json", "turtle"), default=None,
                        help="--dump output (default: table; --json means json)")
    parser.add_argument("--no-refresh", action="store_true",
                        help="--dump without first projecting the bundled catalogue")
    parser.add_argument("--root", default=None, help="project root whose configuration to use (default: cwd)")
    parser.add_argument("--accept-empty", "--accept-shrink", dest="accept_empty", action="store_true",
                        help="store the answer even if it governs nothing, or drops more than max_shrink of the "
                             "rules, while the cache it replaces governs rules (refused otherwise: docs/refresh.md)")
    parser.add_argument("--wait", type=float, default=None,
                        help="seconds to wait for a refresh that is already running (default: the refresh deadline)")


def run(args: argparse.Namespace) -> int:
    from yupana import project_root

    root = project_root.cold_root(args.root)  # --root, else the project the cwd is in
    override = getattr(args, "config", None)
    as_json = bool(getattr(args, "json", False))
    if args.dump:
        return _dump(root, override, args.format or ("json" if as_json else "table"), args.no_refresh,
                     args.wait, _progress_mode(args))
    outcome = _refresh(root, override, args.wait, quiet=_progress_mode(args),
                       accept_empty=bool(getattr(args, "accept_empty", False)))
    if as_json:
        from yupana.commands.json_output import emit

        emit("project", _outcome_json(outcome))
    return _report(outcome, print_table=not as_json)


# ── refresh ─────────────────────────────────────────────────────────────────────────


def _progress_mode(args: Any) -> str:
    """"quiet" (--quiet: none), "verbose" (--verbose: every stage at once), else "auto"."""
    if getattr(args, "quiet", False):
        return "quiet"
    return "verbose" if getattr(args, "verbose", False) else "auto"


def _refresh(root: str, override: str | None, wait: float | None, quiet: str = "auto", accept_empty: bool = False) -> Any:
    from yupana.workers import refresher

    # auto: progress only on a terminal and only once the work has taken a second; piped, nothing
    verbose = quiet == "verbose"
    on_tty = quiet == "auto" and sys.stderr.isatty()
    ticker = _Progress(enabled=verbose or on_tty, delay=0.0 if verbose else SLOW_SECS, live=on_tty and not verbose)
    if wait is None:
        wait = _deadline_secs(root, override) + 5.0
    try:
        return refresher.refresh_now(root, override, progress=ticker.stage, allow_bundled=True, lock_wait_secs=wait,
                                     accept_empty=accept_empty)
    finally:
        ticker.stop()


def _deadline_secs(root: str, override: str | None) -> float:
    try:
        from yupana import config

        return float(config.resolve(root, override)["config"]["quipu"]["refresh_deadline_secs"])
    except Exception:  # noqa: BLE001 - refresh_now reports configuration errors itself
        return 20.0


def _report(outcome: Any, *, print_table: bool) -> int:
    from yupana.workers import refresher

    if outcome.ok:
        if print_table:
            for line in summary_lines(outcome):
                print(line)
        for warning in outcome.warnings:
            print(f"yupana: warning: {warning}", file=sys.stderr)
        return 0
    head = "refresh not started" if outcome.status == refresher.BUSY else "refresh FAILED"
    first, _, rest = (outcome.error or "").partition("\n")
    print(f"yupana: {head} ({outcome.error_kind}): {first}", file=sys.stderr)
    if rest:
        print(rest, file=sys.stderr)
    if outcome.prior_age_secs is not None:
        print(f"yupana: prior cache kept (age {outcome.prior_age_secs}s) at {outcome.cache_path}", file=sys.stderr)
    elif outcome.cache_path:
        print(f"yupana: no prior cache for this endpoint ({outcome.prior_miss or 'absent'}); hooks fail open until a "
              "refresh succeeds", file=sys.stderr)
    if outcome.backoff_until:
        wait = max(0, outcome.backoff_until - int(time.time()))
        print(f"yupana: hooks will not retry for {wait}s ({outcome.consecutive_failures} failure(s) in a row); "
              "`yupana project` retries now", file=sys.stderr)
    return EXIT_BUSY if outcome.status == refresher.BUSY else EXIT_FAILED


def summary_lines(outcome: Any) -> list[str]:
    """One line per plane: count, digest, duration, endpoint (plus a heading and a footer)."""
    digests = _digests(outcome.cache_path)
    rows = []
    for plane in PLANES:
        count = (outcome.counts or {}).get(plane)
        stats = (outcome.planes or {}).get(plane)
        timed_with = TIMED_WITH.get(plane)
        if stats is not None:
            duration = f"{stats.duration_s:.2f}s"
        elif timed_with:
            duration = f"(in {timed_with})"
        else:
            duration = "-"
        rows.append((plane, "unknown" if count is None else str(count), digests.get(plane) or "-", duration))
    width = max(len(r[0]) for r in rows)
    lines = [f"projected {outcome.endpoint} ({outcome.dialect}) in {outcome.duration_s:.2f}s -> {outcome.cache_path}"]
    for plane, count, digest, duration in rows:
        lines.append(f"  {plane:<{width}}  {count:>7}  {digest:<23}  {duration:>12}  {outcome.endpoint}")
    gate = outcome.gate
    gate_note = ""
    if gate is not None:
        kept = f", results of {gate.kept_subjects} unchanged rules kept" if gate.kept_subjects else ""
        gate_note = f"; SHACL gate conforms ({gate.triples} triples{kept}, {gate.duration_s:.2f}s)"
    lines.append(f"rule set digest {outcome.digest}{gate_note}")
    incremental = outcome.incremental
    if incremental is not None:
        why = f" (all read: {incremental['full_reason']})" if incremental.get("full_reason") else ""
        if incremental.get("memo_discarded"):
            why += f" ({incremental['memo_discarded']} memo entries failed their digest and were discarded)"
        lines.append(f"text rules: {incremental['rules_kept']} unchanged and kept, {incremental['rules_read']} read{why}")
    if outcome.phases:
        lines.append("phases: " + ", ".join(f"{name} {_secs(outcome.phases.get(name))}" for name in PHASES))
    for notice in outcome.notices:
        lines.append(f"notice: {notice}")
    from yupana.projection.empty import governed_rules

    if outcome.counts and governed_rules(outcome.counts) == 0:
        lines.append("WARNING: the catalogue is EMPTY: no governed rule is enforced (see the warning on stderr)")
    return lines


def _secs(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}s"


def phases_json(phases: dict[str, float | None]) -> dict[str, float | None] | None:
    """``{"server_s", "transfer_s", "decode_s", "compile_s", "gate_s", "write_s"}`` (None: not
    measured — a bundle install, a phase the refresh never reached, a writer that does not time it)."""
    if not phases:
        return None
    return {f"{name}_s": None if phases.get(name) is None else round(float(phases[name] or 0.0), 4) for name in PHASES}


#: A plane's digest when it is JSON ``null`` (UNKNOWN).
_NULL = hashlib.sha256(b"null").hexdigest()


def _digests(path: str | None) -> dict[str, str]:
    """A short content digest of each plane of the cache at ``path`` (SHA-256 of its JSON as
    the cache writer wrote it, from the hot twin's header: the JSON is not read again);
    "unknown" for a plane that is UNKNOWN."""
    from yupana.state import cache

    return {plane: "unknown" if digest == _NULL else "sha256:" + digest[:16]
            for plane, digest in cache.plane_digests(path).items()}


def _outcome_json(outcome: Any) -> dict[str, Any]:
    digests = _digests(outcome.cache_path) if outcome.ok else {}
    planes = []
    for plane in PLANES:
        stats = (outcome.planes or {}).get(plane)
        planes.append({
            "plane": plane,
            "count": (outcome.counts or {}).get(plane),
            "digest": digests.get(plane),
            "duration_s": round(stats.duration_s, 4) if stats is not None else None,
            "requests": stats.requests if stats is not None else None,
        })
    gate = outcome.gate
    return {
        "status": outcome.status,
        "endpoint": outcome.endpoint,
        "dialect": outcome.dialect,
        "cache_path": outcome.cache_path,
        "written_at": outcome.written_at,
        "digest": outcome.digest,
        "duration_s": round(outcome.duration_s, 4),
        "planes": planes,
        "notices": outcome.notices,
        "gate": None if gate is None else {"conforms": gate.conforms, "triples": gate.triples,
                                            "kept_subjects": gate.kept_subjects, "chunks": gate.chunks,
                                            "duration_s": round(gate.duration_s, 4),
                                            "results": [r.as_dict() for r in gate.results]},
        "phases": phases_json(outcome.phases),
        "incremental": outcome.incremental,
        "progress": outcome.progress,
        "error_kind": outcome.error_kind,
        "error": outcome.error,
        "prior_age_secs": outcome.prior_age_secs,
        "consecutive_failures": outcome.consecutive_failures,
        "backoff_until": outcome.backoff_until,
        "warnings": outcome.warnings,
        "bundle": outcome.bundle,
    }


class _Progress:
    """Says on stderr what a slow refresh is doing: nothing for the first second, then the
    current stage, then a reminder every few seconds while it lasts."""

    def __init__(self, enabled: bool = True, delay: float = SLOW_SECS, live: bool = False) -> None:
        self.enabled = enabled
        self.delay = delay
        self.live = live  # a terminal: one status line redrawn in place (a spinner and the elapsed time)
        self.drawn = False
        self.t0 = time.monotonic()
        self.current = "starting"
        self.shown = ""
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._tick, daemon=True) if enabled else None
        if self.thread:
            self.thread.start()

    def stage(self, message: str) -> None:
        self.current = message
        if self.enabled and time.monotonic() - self.t0 >= self.delay:
            self._show()

    def _show(self) -> None:
        if self.live:
            return  # the ticker thread redraws the line
        if self.current != self.shown:
            self.shown = self.current
            print(f"yupana: {self.current} ({time.monotonic() - self.t0:.1f}s)", file=sys.stderr, flush=True)

    def _tick(self) -> None:
        if self.done.wait(self.delay):
            return
        if self.live:
            spinner = "|/-\\"
            n = 0
            while not self.done.is_set():
                sys.stderr.write(f"\r\x1b[Kyupana: {spinner[n % 4]} {self.current} ({time.monotonic() - self.t0:.1f}s)")
                sys.stderr.flush()
                self.drawn = True
                n += 1
                self.done.wait(0.1)
            return
        self._show()
        while not self.done.wait(5.0):
            print(f"yupana: still {self.current} ({time.monotonic() - self.t0:.0f}s)", file=sys.stderr, flush=True)

    def stop(self) -> None:
        self.done.set()
        if self.thread and self.live:
            self.thread.join(1.0)
            if self.drawn:
                sys.stderr.write("\r\x1b[K")  # the status line goes; the outcome is printed after it
                sys.stderr.flush()


# ── dump ────────────────────────────────────────────────────────────────────────────


def _dump(root: str, override: str | None, fmt: str, no_refresh: bool, wait: float | None, quiet: str) -> int:
    from yupana.state import cache, refresh_state
    from yupana import config
    from yupana.workers import refresher

    try:
        cfg = config.resolve(root, override)["config"]
    except config.ConfigError as exc:
        print(f"yupana: configuration error\n{exc}", file=sys.stderr)
        return EXIT_FAILED
    quipu = cfg["quipu"]
    configured = (quipu.get("endpoint") or "").strip()
    if not configured and not no_refresh:
        outcome = _refresh(root, override, wait, quiet=quiet)
        if not outcome.ok:
            code = _report(outcome, print_table=False)
            if outcome.prior_age_secs is None:
                return code
    from yupana.state import dataset

    key = cache.endpoint_key(configured, root)
    ident = dataset.identity(quipu, root)
    path = refresher.cache_path_for(configured, ident)
    if not path:
        print("yupana: no cache path could be resolved: set YUPANA_PROJECTION_CACHE_PATH, XDG_STATE_HOME or HOME",
              file=sys.stderr)
        return EXIT_FAILED
    body, miss = cache.read_json(path)
    if miss:
        print(f"yupana: nothing to dump — {miss.reason}", file=sys.stderr)
        return EXIT_FAILED
    assert body is not None  # read() answers a body or the miss
    now = int(time.time())
    ttl = int(quipu.get("projection_cache_ttl_secs", 3600))
    interval = int(quipu.get("refresh_interval_secs", 300))
    _, refused = cache.load_servable_json(path, key, ttl, now, dataset=ident, dialect=quipu.get("dialect"))
    if refused:
        print(f"yupana: warning: hooks would NOT serve this cache ({refused.label}): {refused.reason}", file=sys.stderr)
    age = now - body["written_at"]
    state = refresh_state.read(path, key)
    stale = refused is not None or age > interval or refresh_state.failed_since(state, body["written_at"])
    freshness = {"state": "stale" if stale else "fresh", "age_secs": age, "endpoint": body.get("endpoint", ""),
                 "ttl_secs": ttl}
    from yupana import block_tier

    served = None if refused else body
    found = block_tier.assess(cfg, served, root, now, override=override, no_cache=refused.reason if refused else None)
    sys.stdout.write(render(body, fmt, freshness, found))
    return 0


def render(body: dict[str, Any], fmt: str, freshness: dict[str, Any], found: dict[str, Any] | None = None) -> str:
    """The dump text: :func:`yupana.projection.dump.render` when present, else the JSON."""
    try:
        from yupana.projection import dump
    except ImportError:
        dump = None  # type: ignore[assignment]
    if dump is not None:
        from yupana.commands.json_output import stamp

        text = dump.render(body, fmt=fmt, freshness=freshness, block_tier=found,
                           stamp=stamp("project.dump", {}) if fmt == "json" else None)
    else:
        out = dict(body)
        out["freshness"] = freshness["state"]
        out["age_secs"] = freshness["age_secs"]
        text = json.dumps(out, indent=2, sort_keys=True, ensure_ascii=False)
    return text if text.endswith("\n") else text + "\n"
