"""The input capture: what a hook evaluated, kept for ``yupana replay``. Hot path, standard library only.

Opt-in (``[yupana.metrics] record_inputs`` = ``masked`` | ``full``; ``off`` by default). One JSON line per tool call
a hook judged, in ``inputs.jsonl`` *beside the metrics spool* (the same directory, so a log
shipper that collects the spool collects it too), created ``0600``:

* ``kind`` (``input``), ``ts``, ``hook``, ``session``, ``tool_use_id``, ``client``, ``tool``, ``tenant``, ``agent``,
  ``project``, ``repo``, ``exposure`` (the decisive file's, as on ``governed``), ``mode``, ``decision`` (what the hook answered) and ``digest`` (the
  rule set it decided with), so replay can group and compare;
* ``edits``: each file as ``{"path": <relative to the project root>, "op", "text": <the
  introduced text>}``; or ``command`` (pre-bash);
* bounded: at most :data:`MAX_TEXT` characters of introduced text per call (shared by its
  files, in order), :data:`MAX_COMMAND` of a command and :data:`MAX_EDITS` files; a cut sets
  ``truncated``.

Masking (docs/replay.md "What is masked"): under ``masked``, every text a violated rule caught (a text rule's
match, a structural rule's capture, a grounded reference: what a refusal may quote) is replaced
by ``***``; under both, the line passes the spool's redaction (URL credentials, remembered secrets). A
masked input says so (``masked``: the rule ids whose catches were masked; ``redacted: true``):
replay re-runs it on the masked text and reports it under what it could not judge.

Retention: past :data:`ROTATE_BYTES` the file is renamed ``inputs.jsonl.old`` (one slot, as the
spool), so the capture never holds more than twice that; ``yupana replay --since`` bounds what is
read. Writing is fail-silent (a full disk never changes a guard outcome); the reason is kept in
:func:`last_error`.
"""

from __future__ import annotations

import os
import time

from yupana import fastjson, redact
from yupana.state import paths, statefile

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from typing import Any

FILE_NAME = "inputs.jsonl"
KIND = "input"  # every line's kind: a spool reader that meets one (a shipped directory) can tell it apart
ROTATE_BYTES = 16 * 1024 * 1024
MAX_TEXT = 16 * 1024
MAX_COMMAND = 4 * 1024
MAX_EDITS = 32
MASK = "***"
MIN_MASKED = 3  # shorter catches are not masked (they would mangle the text everywhere)

_last_error: str | None = None


def last_error() -> str | None:
    """Why the most recent capture in this process was not written, or None."""
    return _last_error


def capture_path() -> str | None:
    """``inputs.jsonl`` in the metrics spool's directory (None: no state directory)."""
    spool = paths.metrics_spool()
    return os.path.join(os.path.dirname(spool), FILE_NAME) if spool else None


def entry(fields: dict[str, Any], edits: list[tuple[str, str, str]], command: str | None,
          caught: list[tuple[str, str]]) -> dict[str, Any]:
    """The capture of one call: ``fields`` (attribution, decision), ``edits`` as ``(path, op,
    introduced)``, the ``command``, and ``caught`` — ``(rule id, text)`` the violated rules caught,
    masked out of the text and the command."""
    rec: dict[str, Any] = {"kind": KIND, "ts": int(time.time())}
    for key, value in fields.items():
        if value is not None:
            rec[key] = value
    forms = sorted({t for _, t in caught if isinstance(t, str) and len(t) >= MIN_MASKED}, key=len, reverse=True)
    masked: set[str] = set()
    truncated = False
    budget = MAX_TEXT
    out = []
    for path, op, text in edits[:MAX_EDITS]:
        text, hit = _mask(text, forms, caught)
        masked |= hit
        if len(text) > budget:
            text, truncated = text[:budget], True
        budget -= len(text)
        out.append({"path": path, "op": op, "text": text})
    if len(edits) > MAX_EDITS:
        truncated = True
    if out:
        rec["edits"] = out
    if command is not None:
        command, hit = _mask(command, forms, caught)
        masked |= hit
        if len(command) > MAX_COMMAND:
            command, truncated = command[:MAX_COMMAND], True
        rec["command"] = command
    if masked:
        rec["masked"] = sorted(masked)
    if truncated:
        rec["truncated"] = True
    return rec


def _mask(text: str, forms: list[str], caught: list[tuple[str, str]]) -> tuple[str, set[str]]:
    hit: set[str] = set()
    for form in forms:
        if form in text:
            text = text.replace(form, MASK)
            hit |= {rule for rule, t in caught if t == form}
    return text, hit


def append(rec: dict[str, Any], path: str | None = None) -> bool:
    """Append ``rec`` (one line, redacted) to the capture file; False, never raises, on failure."""
    global _last_error
    try:
        target = path or capture_path()
        if not target:
            _last_error = "no state path for the input capture: set YUPANA_METRICS_PATH, XDG_STATE_HOME or HOME"
            return False
        raw = fastjson.dumps(rec)
        line = redact.redact_text(raw)
        if line != raw:
            line = line[:-1] + ',"redacted":true}'
        data = (line + "\n").encode("utf-8", "backslashreplace")
        try:
            if os.stat(target).st_size > ROTATE_BYTES:
                os.replace(target, target + ".old")
        except FileNotFoundError:
            parent = os.path.dirname(target)
            if parent:
                os.makedirs(parent, mode=0o700, exist_ok=True)
        fd = statefile.open_append(target, 0o600)
        try:
            if os.fstat(fd).st_mode & 0o077:
                os.fchmod(fd, 0o600)  # an older or foreign file: the texts are the operator's alone
            written = os.write(fd, data)
        finally:
            os.close(fd)
        if written != len(data):
            _last_error = f"short write to {target} ({written} of {len(data)} bytes)"
            return False
        return True
    except Exception as exc:  # noqa: BLE001 - the capture must never raise into a hook
        _last_error = f"{type(exc).__name__}: {exc}"
        return False
