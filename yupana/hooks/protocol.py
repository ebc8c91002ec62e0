"""The hook output protocol, shared by every hook. Standard library only.

One :class:`Outcome` per invocation, rendered once at the end and written with a single
``write`` so a crash can never leave partial JSON on stdout:

* allow   — empty stdout (never ``permissionDecision: "allow"``: the guard only subtracts
  permission, it never grants it);
* notify  — operator notices (degradations) as ``{"systemMessage": …}``; advisories (what
  an advise run or a non-blocking rule found) go where ``[yupana.policy] advise_audience``
  says: ``operator`` (the default) the ``systemMessage``, ``model``
  ``hookSpecificOutput.additionalContext`` (the channel that reaches the model), ``both``
  both. Model-facing context (post-edit's notice) is always ``additionalContext``. For
  Codex every notice is *also* ``additionalContext``, on every hook: ``codex exec`` shows a
  ``systemMessage`` to nobody (docs/clients/codex.md);
* deny    — the PreToolUse ``permissionDecision: "deny"`` envelope with a reason written
  for the model to act on, without a final period: Codex appends ``. Command: <patch>``
  to it, Claude Code shows it after ``hook error:``.

Loud degradations (:func:`degrade`) are a stderr line, a spool record of their own kind,
and a ``systemMessage`` shown once per session per kind (marker file created O_EXCL in the
temp directory, ``yupana-guard-failopen-<session>-<kind>``).

The record and the marker go through the hook's effects (:mod:`yupana.hooks.effects`):
a dry run (``yupana explain``) creates no marker — it only looks whether the marker exists
(:func:`marker_path`), answers as a real hook would, and notes the notice for the report.
"""

from __future__ import annotations

import os

from yupana import clients, fastjson, redact

from yupana.state import paths, statefile

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from typing import Any

    from yupana.hooks.effects import Effects

ALLOW, NOTIFY, DENY = "allow", "notify", "deny"
_RANK = {ALLOW: 0, NOTIFY: 1, DENY: 2}


AUDIENCES = ("operator", "model", "both")


class Outcome:
    """What one hook invocation will say. Decisions only ever strengthen."""

    __slots__ = ("decision", "reasons", "messages", "advisories", "context")

    def __init__(self) -> None:
        self.decision = ALLOW
        self.reasons: list[str] = []  # model-facing deny reasons
        self.messages: list[str] = []  # operator notices (the user's channel; also the model's where the row says)
        self.advisories: list[str] = []  # findings that do not block: routed by advise_audience
        self.context: list[str] = []  # model-facing additionalContext parts

    def deny(self, reason: str) -> None:
        self.decision = DENY
        self.reasons.append(reason)

    def _notified(self) -> None:
        if _RANK[self.decision] < _RANK[NOTIFY]:
            self.decision = NOTIFY

    def notify(self, message: str) -> None:
        """An operator notice (a degradation, a check that could not run)."""
        self._notified()
        self.messages.append(message)

    def advise(self, message: str) -> None:
        """An advisory: what a check found that does not block (advise mode, warn tiers, back-offs)."""
        self._notified()
        self.advisories.append(message)

    def add_context(self, text: str) -> None:
        """Model-facing context (post-edit's out-of-ground notice) that is not a decision."""
        self._notified()
        self.context.append(text)

    def merge(self, other: "Outcome") -> None:
        if _RANK[other.decision] > _RANK[self.decision]:
            self.decision = other.decision
        self.reasons += other.reasons
        for mine, theirs in ((self.messages, other.messages), (self.advisories, other.advisories),
                             (self.context, other.context)):
            mine += [m for m in theirs if m not in mine]

    def render(self, event: str = "PreToolUse", *, client: str | None = None, audience: str = "operator") -> str:
        """The exact stdout for this outcome ("" for a silent allow), in the client's shape.

        ``client`` is who sent the payload (a :mod:`yupana.clients` registry name; None: Claude
        Code's shape): a client whose row says it shows the user nothing (Codex) gets every
        notice as model-facing too, and an event whose answer carries no model context in that
        client (Gemini's BeforeTool) sends it to the user. ``audience`` is
        ``[yupana.policy] advise_audience``."""
        row = clients.get(client)
        to_model = row is not None and not row.shows_user
        operator = list(self.messages)
        model = list(self.context)
        if audience != "model":
            operator += [a for a in self.advisories if a not in operator]
        if audience != "operator" or to_model:
            model += [a for a in self.advisories if a not in model]
        if to_model:
            model += [m for m in self.messages if m not in model]
        if row is not None and event not in row.model_events:
            operator += [m for m in model if m not in operator]
            model = []
        deny = deny_reason(self.reasons) if self.decision == DENY else None
        if deny is None and not model and not operator:
            return ""
        out = clients.adapter(row or clients.canonical()).shape(deny, model, operator, event)
        return fastjson.dumps(out) if out else ""


def deny_reason(reasons: list[str]) -> str:
    """The reasons, one paragraph each, without the final period: Codex shows
    ``<reason>. Command: <patch>`` and Claude Code ``… hook error: <reason>``."""
    text = "\n\n".join(reasons).rstrip()
    if text.endswith(".") and not text.endswith(".."):
        text = text[:-1]
    return text


def advise_audience(cfg: dict[str, Any] | None) -> str:
    """``[yupana.policy] advise_audience``: who is shown advisories (default ``operator``)."""
    value = ((cfg or {}).get("policy") or {}).get("advise_audience", "operator")
    return value if value in AUDIENCES else "operator"


def read_stdin() -> bytes:
    """The whole payload on stdin (an unreadable stdin reads as empty: an allow)."""
    chunks = []
    while True:
        try:
            chunk = os.read(0, 1 << 20)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)


def emit(text: str) -> None:
    """Write the whole of stdout in one call (or nothing)."""
    if not text:
        return
    data = redact.redact_text(text).encode("utf-8", "backslashreplace")  # lone surrogates become JSON escapes
    view = memoryview(data)
    while view:
        n = os.write(1, view)
        view = view[n:]


def stderr(line: str) -> None:
    try:
        os.write(2, (redact.redact_text(line.rstrip("\n")) + "\n").encode("utf-8", "replace"))
    except OSError:
        pass


def unreadable_payload(hook: str, raw: bytes) -> None:
    """The stderr line for stdin that is not a JSON object: the hook allows without checking.

    No session id can be read from such input, so there is no once-per-session message;
    the ``guard`` / ``pre_bash_invoked`` record (``parsed: false``) carries it to ``status``.
    """
    stderr(f"yupana: {hook}: stdin is not a JSON object ({len(raw)} byte{'' if len(raw) == 1 else 's'}); "
           "allowing without checking")


def _sanitize(text: str, limit: int) -> str:
    return "".join(c for c in text if c.isascii() and (c.isalnum() or c in "_-"))[:limit]


def marker_path(session_id: str | None, kind: str) -> str | None:
    """The once-per-session marker of ``kind`` (None without a usable session id)."""
    sid = _sanitize(session_id or "", 64)
    if not sid:
        return None
    return os.path.join(paths.temp_dir(), f"yupana-guard-failopen-{sid}-{_sanitize(kind, 80)}")


def first_time(session_id: str | None, kind: str) -> bool:
    """True the first time ``kind`` is raised in this session (creates the marker).

    With no usable session id, or when the marker cannot be created for any reason other
    than already existing, this answers True: over-warning beats silence.
    """
    marker = marker_path(session_id, kind)
    if marker is None:
        return True
    try:
        fd = os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        return statefile.not_regular(marker) is not None  # a FIFO or a symlink there hides nothing
    except OSError:
        return True
    os.close(fd)
    return True


def notify_on_fail_open(cfg: dict[str, Any] | None) -> bool:
    """``[yupana.policy] notify_on_fail_open`` (true unless the resolved config says false).

    False keeps fail-open notices out of the user's pane; the stderr line and the spool
    record are written either way, so the degradation is never silent on record.
    """
    if not cfg:
        return True
    return (cfg.get("policy") or {}).get("notify_on_fail_open", True) is not False


def degrade(
    outcome: Outcome,
    effects: Effects,
    *,
    session_id: str | None,
    kind: str,
    record_kind: str,
    message: str,
    fields: dict[str, Any] | None = None,
    notify: bool = True,
    item: str | None = None,
) -> None:
    """A loud degradation: stderr line, spool record ``record_kind``, once-per-session message.

    ``kind`` keys the once-per-session marker (for example ``projection``); ``message`` is
    the operator-facing sentence; ``fields`` go on the spool record. ``effects`` (a
    :class:`yupana.hooks.effects.Effects`) writes the record and the marker.
    """
    stderr(f"yupana: {message}")
    effects.record(record_kind, fields, item=item)
    if notify and effects.first_time(session_id, kind):
        outcome.notify(f"yupana: {message}")


def refused_state(outcome: Outcome, effects: Effects, *, hook: str, session_id: str | None,
                  cfg: dict[str, Any] | None = None) -> None:
    """Every state file this invocation refused to read (:mod:`yupana.state.statefile`: a FIFO, a
    device, a symlink to one, or an oversized file) as a loud ``state_file`` degradation."""
    for path, reason in statefile.drain():
        degrade(outcome, effects, session_id=session_id, kind="state_file", record_kind="state_file",
                message=f"{hook}: refused the state file {path}: it {reason}; it was not used (remove or "
                        "replace it with a regular file)",
                fields={"hook": hook, "session": session_id, "path": path, "reason": reason},
                notify=notify_on_fail_open(cfg))
