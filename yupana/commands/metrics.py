"""``yupana metrics [--output PATH] [--root DIR]``: hook health and the rule set in the
OpenMetrics text format, for node_exporter's textfile collector (docs/metrics.md).

The exposition is the subset both parsers read: OpenMetrics (``# EOF``, ``# UNIT``, counter
samples ``*_total``) and the Prometheus text format node_exporter's textfile collector parses
(which takes ``# UNIT``/``# EOF`` for comments and the counters as untyped ``*_total``
series). Info metrics are therefore gauges named ``*_info`` with the value 1, never the
``info`` type, which the Prometheus text parser refuses for the whole file.

The figures come from the metrics spool (counters over the records it still holds: the file
and its ``.old`` slot, so a rotation resets them — OpenMetrics counters may reset, Prometheus'
``rate()`` handles it) and from the projection cache and ``refresh-state.json`` (read, never
written: no refresh is started, no store contacted). ``--output`` writes atomically (a temp
file renamed over the target), so the collector never reads half a file.
"""

from __future__ import annotations

from typing import Any

import argparse
import os
import sys
import time

# Latency buckets (seconds) for the hooks' own work; the hot path's budget is 100 ms.
BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0)

# Label cardinality (issue 23 §7): a label value read from the spool (written by anything
# that can append to it) is a series of its own, so each label is bounded. ``hook`` takes
# only the hooks the registry names; ``result`` and ``kind`` only short slugs, at most
# MAX_VALUES distinct ones per label (the most frequent); anything else is counted as OTHER.
MAX_VALUES = 24
OTHER = "other"
_SLUG = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_-")


# the global flags (cli.GLOBAL_HELP) this command honours; any other is refused (OpenMetrics text is the output format: no --json)
GLOBAL_FLAGS: tuple[str, ...] = ("--config",)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--output", metavar="PATH", default=None,
                        help="write here atomically (e.g. /var/lib/node_exporter/textfile/yupana.prom); "
                             "default: stdout")
    parser.add_argument("--root", default=None, help="project root whose configuration to use (default: cwd)")


def run(args: argparse.Namespace) -> int:
    from yupana import config, project_root

    root = project_root.cold_root(args.root)
    try:
        text = render(gather_records(), rule_set(root, getattr(args, "config", None), int(time.time())))
    except config.ConfigError as exc:
        print(f"yupana metrics: configuration error\n{exc}", file=sys.stderr)
        return 2
    if not args.output:
        sys.stdout.write(text)
        return 0
    from yupana.state import atomic

    error = atomic.write_quietly(os.path.abspath(args.output), text.encode("utf-8"))
    if error:
        print(f"yupana metrics: cannot write {args.output}: {error}", file=sys.stderr)
        return 1
    return 0


def gather_records() -> list[dict[str, Any]]:
    """Every record the spool holds: ``metrics.jsonl.old`` first, then ``metrics.jsonl``."""
    from yupana.state import paths, spool

    path = paths.metrics_spool()
    if not path:
        return []
    out: list[dict[str, Any]] = []
    for target in (path + ".old", path):
        if os.path.exists(target):
            out += spool.read_tail(target, max_bytes=1 << 62)
    return out


def rule_set(root: str, override: str | None, now: int) -> dict[str, Any]:
    """``status``'s rule-set section, offline (no probe, nothing written)."""
    from yupana.config import controls as config_controls
    from yupana.commands.status.rule_set import rule_set_section

    cfg = config_controls.check(root, override)["resolved"]["config"]
    return rule_set_section(cfg, root, now, "never")


def render(records: list[dict[str, Any]], rs: dict[str, Any]) -> str:
    """The OpenMetrics exposition, ending in ``# EOF``. Invocations are counted as status's hook
    health counts them: each hook's per-invocation record (the hook registry's ``record``) and
    its result (:func:`yupana.commands.status.health.invocation_result`)."""
    from yupana.commands.status.health import KIND_HOOK, invocation_result

    invocations: dict[tuple[str, str], int] = {}
    fail_open: dict[tuple[str, str], int] = {}
    served: dict[str, int] = {}
    latency: dict[str, list[float]] = {}
    for rec in records:
        kind = rec.get("kind")
        hook = KIND_HOOK.get(kind) if isinstance(kind, str) else None
        if hook:
            key = (hook, invocation_result(rec))
            invocations[key] = invocations.get(key, 0) + 1
            ms = rec.get("duration_ms")
            if isinstance(ms, (int, float)) and not isinstance(ms, bool):
                latency.setdefault(hook, []).append(ms / 1000.0)
        elif kind == "fail_open":
            key = (known_hook(rec.get("hook")), str(rec.get("fail_kind") or "unknown"))
            fail_open[key] = fail_open.get(key, 0) + 1
        elif kind == "served_from_cache":
            h = known_hook(rec.get("hook"))
            served[h] = served.get(h, 0) + 1
    invocations = bounded(invocations, 1)
    fail_open = bounded(fail_open, 1)
    lines: list[str] = []
    _family(lines, "yupana_hook_invocations", "counter", "hook invocations in the spool, by hook and result",
            [({"hook": h, "result": r}, n) for (h, r), n in sorted(invocations.items())], suffix="_total")
    _family(lines, "yupana_client_invocations", "counter", "hook invocations in the spool, by the client that sent "
            "them (its client registry name; unknown: nothing in the payload told) and hook",
            [({"client": c, "hook": h}, n) for (c, h), n in sorted(by_client(records).items())], suffix="_total")
    _family(lines, "yupana_fail_open", "counter", "fail-open records (the guard not enforcing something), by hook and kind",
            [({"hook": h, "kind": k}, n) for (h, k), n in sorted(fail_open.items())], suffix="_total")
    _family(lines, "yupana_served_from_cache", "counter", "hooks that enforced last-known policy from a stale cache",
            [({"hook": h}, n) for h, n in sorted(served.items())], suffix="_total")
    lines += ["# TYPE yupana_hook_duration_seconds histogram", "# UNIT yupana_hook_duration_seconds seconds",
              "# HELP yupana_hook_duration_seconds wall time of the hook's own work"]
    for hook, values in sorted(latency.items()):
        for bound in BUCKETS:
            lines.append(f'yupana_hook_duration_seconds_bucket{{hook="{_esc(hook)}",le="{bound}"}} '
                         f"{sum(1 for v in values if v <= bound)}")
        lines.append(f'yupana_hook_duration_seconds_bucket{{hook="{_esc(hook)}",le="+Inf"}} {len(values)}')
        lines.append(f'yupana_hook_duration_seconds_count{{hook="{_esc(hook)}"}} {len(values)}')
        lines.append(f'yupana_hook_duration_seconds_sum{{hook="{_esc(hook)}"}} {round(sum(values), 6)}')
    _rule_set_families(lines, rs)
    lines.append("# EOF")
    return "\n".join(lines) + "\n"


def known_hook(value: object) -> str:
    """``value`` when it names a hook of the registry, ``unknown`` when absent, else :data:`OTHER`."""
    from yupana.hooks.registry import HOOKS

    if value is None or value == "":
        return "unknown"
    return value if isinstance(value, str) and value in HOOKS else OTHER


def by_client(records: list[dict[str, Any]]) -> dict[tuple[str, str], int]:
    """(client, hook) -> invocations: each hook's per-invocation record by the client it names."""
    from yupana.commands.status.health import KIND_HOOK

    counts: dict[tuple[str, str], int] = {}
    for rec in records:
        kind = rec.get("kind")
        hook = KIND_HOOK.get(kind) if isinstance(kind, str) else None
        if hook:
            key = (known_client(rec.get("client")), hook)
            counts[key] = counts.get(key, 0) + 1
    return counts


def known_client(value: object) -> str:
    """``value`` when it names a row of the client registry, ``unknown`` when absent, else :data:`OTHER`."""
    from yupana import clients

    if value is None or value == "":
        return "unknown"
    return value if isinstance(value, str) and value in clients.names() else OTHER


def bounded(counts: dict[tuple[str, str], int], at: int) -> dict[tuple[str, str], int]:
    """``counts`` with the label at index ``at`` of each key bounded: a value that is not a
    short slug, or not among the :data:`MAX_VALUES` most frequent, is counted as :data:`OTHER`
    (its counts merged, so no count is lost)."""
    totals: dict[str, int] = {}
    for key, n in counts.items():
        totals[key[at]] = totals.get(key[at], 0) + n
    kept = set(sorted((v for v in totals if _slug(v)), key=lambda v: (-totals[v], v))[:MAX_VALUES])
    out: dict[tuple[str, str], int] = {}
    for key, n in counts.items():
        label = key[at] if key[at] in kept else OTHER
        fixed = (label, key[1]) if at == 0 else (key[0], label)
        out[fixed] = out.get(fixed, 0) + n
    return out


def _slug(value: str) -> bool:
    return 0 < len(value) <= 40 and all(c in _SLUG for c in value)


def _rule_set_families(lines: list[str], rs: dict[str, Any]) -> None:
    state = str(rs.get("state") or "off")
    # An "info" metric is a gauge named *_info whose value is 1: OpenMetrics' info type would be
    # the purer form, but node_exporter's textfile collector reads the Prometheus text format,
    # which knows no such type and drops the whole file over it ("unknown metric type").
    _family(lines, "yupana_rule_set_info", "gauge", "the governed rule set: state, digest and freshness as labels",
            [({"state": state, "digest": rs.get("digest") or "", "freshness": rs.get("freshness") or "none"}, 1)])
    age = rs.get("cache_age_secs")
    _family(lines, "yupana_cache_age_seconds", "gauge", "age of the projection cache (absent: no cache)",
            [({}, age)] if isinstance(age, int) else [], unit="seconds")
    counts = rs.get("counts") or {}
    planes = {(str(k), ""): v for k, v in counts.items() if isinstance(v, int) and not isinstance(v, bool)}
    _family(lines, "yupana_rule_set_rules", "gauge", "projected rules and policies per plane",
            [({"plane": k}, v) for (k, _), v in sorted(bounded(planes, 0).items())])
    refresh = rs.get("refresh") or {}
    samples: list[tuple[dict[str, Any], object]] = []
    if refresh.get("last_attempt_at") is not None:
        failed = (refresh.get("last_failure_at") or 0) >= (refresh.get("last_success_at") or 0) and \
            refresh.get("last_failure_at") is not None
        samples.append(({"outcome": "failure" if failed else "success",
                         "error_kind": str(refresh.get("last_error_kind") or "") if failed else ""}, 1))
    _family(lines, "yupana_last_refresh_info", "gauge", "the last refresh attempt's outcome", samples)
    for name, field, help_text in (
            ("yupana_last_refresh_attempt_timestamp_seconds", "last_attempt_at", "when the last refresh was attempted"),
            ("yupana_last_refresh_success_timestamp_seconds", "last_success_at", "when a refresh last succeeded")):
        value = refresh.get(field)
        _family(lines, name, "gauge", help_text, [({}, value)] if isinstance(value, int) else [])
    _family(lines, "yupana_refresh_consecutive_failures", "gauge", "refresh failures since the last success",
            [({}, int(refresh.get("consecutive_failures") or 0))])


def _family(lines: list[str], name: str, kind: str, help_text: str, samples: list[tuple[dict[str, Any], object]],
            suffix: str = "", unit: str | None = None) -> None:
    lines.append(f"# TYPE {name} {kind}")
    if unit:
        lines.append(f"# UNIT {name} {unit}")
    lines.append(f"# HELP {name} {help_text}")
    for labels, value in samples:
        body = ",".join(f'{k}="{_esc(str(v))}"' for k, v in labels.items())
        lines.append(f"{name}{suffix}{{{body}}} {value}" if body else f"{name}{suffix} {value}")


def _esc(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')
