"""The hooks, one row each: plain data, read by ``yupana.cli`` and ``yupana explain``. Hot path.

A row names the hook (``yupana hook <name>``), the module and the
:class:`yupana.hooks.runtime.HookRuntime` subclass that runs it (imported only when that
hook runs), the client event it answers, a one-line description, and how ``yupana
explain`` recognises its payload (``infer``: a payload key and the value it must hold;
None: the default; rows are tried in order), and whether it reads the tenant from
``$BOBBIN_ROLE`` only (``tenant_env``: explain's ``--tenant`` then stands in for it), and the
kind of the one record it writes per invocation to the metrics spool (``record``: ``guard``,
``pre_bash_invoked``, ``post_edit_invoked``; docs/records.md) — what ``yupana status``'s hook
health, its clients' "last seen" and ``yupana metrics`` count. Adding a hook is adding a row (and its module). Nothing is imported
here: the registry costs a hook nothing.

``protocol`` says whose hook it is. ``client`` (Claude Code, Codex): a JSON payload on stdin,
the client's JSON on stdout, exit 0 always; the runtime is a
:class:`yupana.hooks.runtime.HookRuntime` and ``yupana explain`` can rehearse it. ``git``: git
runs it (``yupana hook pre-push REMOTE URL``, ref lines on stdin); its runtime's ``main``
returns the exit status git acts on (0 proceed, 1 refuse), takes up to ``positional``
arguments after the event, and runs commands — it is cold, lives with its command
(``yupana.commands.landing.pre_push``) and is not rehearsed by ``explain``.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from yupana.hooks.runtime import HookRuntime
    from typing import Any


class Hook:
    """One registered hook (see the module docstring)."""

    __slots__ = ("name", "module", "entry", "event", "description", "infer", "tenant_env", "protocol", "positional",
                 "record")

    def __init__(self, name: str, module: str, entry: str, event: str, description: str,
                 infer: tuple[str, str] | None = None, tenant_env: bool = False, protocol: str = "client",
                 positional: int = 0, record: str | None = None) -> None:
        self.name = name
        self.module = module
        self.entry = entry
        self.event = event
        self.description = description
        self.infer = infer
        self.tenant_env = tenant_env
        self.protocol = protocol
        self.positional = positional
        self.record = record

    def runtime(self) -> type[HookRuntime]:
        """The hook's runtime class (imports its module)."""
        runtime: type[HookRuntime] = getattr(__import__(self.module, fromlist=[self.entry]), self.entry)
        return runtime


HOOKS: dict[str, Hook] = {h.name: h for h in (
    Hook("pre-edit", "yupana.hooks.pre_edit", "Guard", "PreToolUse",
         "the guard for edits: scope, tripwires, local and governed rules, verify, blast radius",
         record="guard"),
    Hook("pre-bash", "yupana.hooks.pre_bash", "PreBash", "PreToolUse",
         "the action scope, host memory and disk impact of a shell command",
         infer=("tool_name", "Bash"), tenant_env=True, record="pre_bash_invoked"),
    Hook("post-edit", "yupana.hooks.post_edit", "PostEdit", "PostToolUse",
         "tell the model when an edit landed outside its work item's observed ground",
         infer=("hook_event_name", "PostToolUse"), record="post_edit_invoked"),
    Hook("pre-push", "yupana.commands.landing.pre_push", "PrePush", "git pre-push",
         "certify a git push against its repository's landing policy (signed landing-* record)",
         protocol="git", positional=2),
)}
CLIENT_HOOKS = tuple(name for name, h in HOOKS.items() if h.protocol == "client")  # what explain can rehearse
#: each hook's per-invocation record kind, in registry order (status's hook health, yupana metrics)
INVOCATION_RECORDS = {name: h.record for name, h in HOOKS.items() if h.record}
DEFAULT = "pre-edit"  # what explain assumes when no row's ``infer`` matches the payload


def get(name: str) -> Hook:
    return HOOKS[name]


def infer(data: dict[str, Any], client: str | None = None) -> tuple[str, str]:
    """(hook, how it was chosen) for a decoded payload (``yupana explain`` without ``--hook``):
    for a payload whose client is known (:func:`yupana.clients.identify`; ``client``: told), its
    row says whether the tool is a shell tool and which event is its after-tool event; else the
    rows' ``infer`` (the canonical ``tool_name`` / ``hook_event_name``)."""
    from yupana import clients

    row = clients.identify(data, client)
    if row is not None:
        tool, event = data.get("tool_name"), data.get("hook_event_name")
        if isinstance(tool, str) and row.kind(tool) == clients.SHELL:
            return "pre-bash", f"tool_name {tool}" + ("" if tool == "Bash" else f" ({row.label}'s shell tool)")
        if event is not None and event == row.events.get(clients.POST):
            return "post-edit", f"hook_event_name {event}" + ("" if event == clients.POST else
                                                               f" ({row.label}'s after-tool event)")
        data = clients.adapter(row).translate(data)  # a payload in its own shape: read as the hook reads it
    for hook in HOOKS.values():
        if hook.protocol == "client" and hook.infer is not None and data.get(hook.infer[0]) == hook.infer[1]:
            return hook.name, f"{hook.infer[0]} {hook.infer[1]}"
    return DEFAULT, f"tool_name {data.get('tool_name')!r}, hook_event_name {data.get('hook_event_name')!r}"
