"""``yupana explain [--json] [--tenant T] [--config P] [--hook H] < payload.json``. Cold path.

What an operator asks when an agent was denied: given the hook payload, which checks ran
(or were skipped, and why; or could not run: UNKNOWN), which rules matched and why, with
their provenance (rule IRI and plane, or the config file and entry), the policy's
freshness and cache age, the decision, and the exact stdout the hook would print.

It runs the real hook — the runtime its row of :mod:`yupana.hooks.registry` names,
:meth:`yupana.hooks.runtime.HookRuntime.answer` — with rehearsal effects
(:class:`yupana.hooks.effects.RehearsalEffects`, :mod:`yupana.commands.explain.trace`):
no spool record, no once-per-session marker, no detached worker, no throttle back-off;
what they would have been is reported instead.

The hook is ``--hook``, else inferred from the payload by the registry's rows: ``tool_name``
``Bash`` → pre-bash, ``hook_event_name`` ``PostToolUse`` → post-edit, anything else →
pre-edit. The tenant is
``--tenant``, else ``$BOBBIN_ROLE`` (pre-bash reads only the environment, so for it
``--tenant`` stands in for ``$BOBBIN_ROLE``).

Exit codes: 0 explained (whatever the decision); 2 the payload is unreadable (not UTF-8
JSON, not an object, nothing on stdin) — the message says why; 1 any other error.
Schema and field meanings: docs/explain.md.
"""

from __future__ import annotations

from typing import Any

import argparse
import json
import os
import sys
import time

from yupana.hooks import registry

EXIT_OK, EXIT_ERROR, EXIT_PAYLOAD = 0, 1, 2
HOOKS = registry.CLIENT_HOOKS  # a git hook (pre-push) runs commands: it is not rehearsed


class PayloadError(Exception):
    """The payload cannot be explained; the message says why and what to do."""


# the global flags (cli.GLOBAL_HELP) this command honours; any other is refused
GLOBAL_FLAGS: tuple[str, ...] = ("--json", "--config", "--tenant")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--hook", choices=HOOKS, default=None,
                        help="the hook to explain (default: from the payload — a shell tool (Bash): pre-bash; "
                             "the client's after-tool event (PostToolUse): post-edit; otherwise pre-edit)")
    parser.add_argument("--client", default=None, metavar="NAME",
                        help="the client that sent the payload, as its registration's --client says (a client "
                             "registry name, docs/clients/registry.md; default: read from the payload)")


def run(args: argparse.Namespace) -> int:
    as_json = bool(getattr(args, "json", False))
    try:
        raw = read_payload(sys.stdin)
        data = decode(raw)
    except PayloadError as exc:
        return _error("payload", str(exc), as_json, EXIT_PAYLOAD)
    client = getattr(args, "client", None)
    hook, hook_from = (args.hook, "--hook") if args.hook else infer_hook(data, client)
    tenant = getattr(args, "tenant", None) or os.environ.get("BOBBIN_ROLE") or None
    try:
        report = explain(raw, hook, hook_from, tenant, getattr(args, "config", None), client)
    except Exception as exc:  # noqa: BLE001 - an operator command names what failed, never a traceback
        return _error("internal", f"explain failed: {type(exc).__name__}: {exc}", as_json, EXIT_ERROR)
    if as_json:
        from yupana.commands.json_output import emit

        emit("explain", report)
    else:
        from yupana.commands.explain import render as explain_render

        sys.stdout.write(explain_render.render(report))
    return EXIT_OK


def read_payload(stream: Any) -> bytes:
    """The whole of stdin; PayloadError when there is nothing to read."""
    if stream is None or stream.isatty():
        raise PayloadError("no payload on stdin: pipe the hook payload in, e.g. `yupana explain < payload.json`")
    raw: bytes = stream.buffer.read()
    if not raw.strip():
        raise PayloadError("the payload is empty: pipe the hook payload JSON in, e.g. `yupana explain < payload.json`")
    return raw


def decode(raw: bytes) -> dict[str, Any]:
    """The payload as a JSON object, or PayloadError saying why it is not one."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PayloadError(f"the payload is not UTF-8 text (byte {exc.start}: {exc.reason}); a hook would allow "
                           "it silently") from None
    text = text[1:] if text.startswith("\ufeff") else text
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise PayloadError(f"the payload is not JSON ({exc}); a hook would allow it (nothing on stdout, a stderr line)") from None
    if not isinstance(data, dict):
        raise PayloadError(f"the payload is a JSON {type(data).__name__}, not an object; a hook would allow it "
                           "silently")
    return data


def infer_hook(data: dict[str, Any], client: str | None = None) -> tuple[str, str]:
    """(hook, how it was chosen) from the payload (:func:`yupana.hooks.registry.infer`)."""
    return registry.infer(data, client)


def explain(raw: bytes, hook: str, hook_from: str, tenant: str | None, config: str | None,
            client: str | None = None) -> dict[str, Any]:
    """Dry-run ``hook`` on ``raw`` and build the report (see docs/explain.md)."""
    from yupana.cli import HookArgs
    from yupana.commands.explain import report as explain_report
    from yupana.commands.explain.trace import Trace, rehearsal

    args = HookArgs(hook)
    args.tenant = tenant
    args.config = config
    args.client = client
    trace = Trace()
    row = registry.get(hook)
    env = {"BOBBIN_ROLE": tenant} if row.tenant_env and tenant else None
    with rehearsal(trace, env):
        owner = row.runtime()(args, time.monotonic(), trace.effects)
        stdout = owner.answer(raw)
    inv = owner.inv
    probe = None if trace.first("policy cache") else _probe(trace, inv, config)
    return explain_report.build(hook, hook_from, owner, trace, stdout, inv, tenant=tenant, probe=probe)


def _probe(trace: Any, inv: Any, config: str | None) -> Any:
    """The policy cache as the hook would see it, when this invocation never looked at it
    (for the freshness line): loaded dry, with its records and stderr thrown away."""
    from yupana.commands.explain.trace import Trace, rehearsal
    from yupana.hooks import governed

    note = trace.first("config")
    if note is None or note.state != "ran" or inv is None:
        return None
    cfg = note.detail["snapshot"]["config"]
    quipu = cfg.get("quipu") or {}
    if not quipu.get("enabled") or not quipu.get("endpoint"):
        return None
    thrown = Trace()
    with rehearsal(thrown):
        return governed.load(cfg, int(time.time()), root=inv.project.root, override=config, spawn=False,
                             effects=thrown.effects)


def _error(kind: str, message: str, as_json: bool, code: int) -> int:
    print(f"yupana explain: {message}", file=sys.stderr)
    if as_json:
        from yupana.commands.json_output import emit

        emit("explain", {"schema_version": 1, "error": {"kind": kind, "message": message}})
    return code
