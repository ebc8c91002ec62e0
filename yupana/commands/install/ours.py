"""Which hook commands are yupana's own registration, and the flags they carry.

A command is *ours* — install may update it in place, uninstall may remove it — only when it
is exactly what ``yupana install`` writes, the skew-proof wrapper
``out=$(<yupana> hook <event> [flags] 2>/dev/null) || exit 0; printf '%s' "$out"`` (also
without its ``printf`` tail, as early docs had it), or a bare ``<yupana> [flags] hook <event>
[flags]``, where ``<yupana>`` is one word naming ``yupana`` (any path) or ``<python> -m
yupana``, and the flags are the hook's own (``--tenant``, ``--config``, ``--json``,
``--quiet``, ``--verbose``). Anything more — ``/opt/secscan/check.sh && yupana hook
pre-edit``, a pipe, a redirection, a substitution, a script that merely mentions ``yupana
hook post-edit`` — is the user's: :func:`mentions` finds it so install and uninstall can
name it, and neither changes it.

:func:`parse` also returns the ``--tenant`` / ``--config`` values, so an upgrade carries
them into the new command instead of silently dropping a tenant's scope.
"""

from __future__ import annotations

import os
import re
import shlex
from typing import NamedTuple

EVENTS = ("pre-edit", "pre-bash", "post-edit")
CARRIED = ("--tenant", "--config")  # the flags that change what a hook decides
CLIENT = "--client"  # which client the hook serves: written by the installer of its row, not carried
_IGNORED = ("--json", "--quiet", "--verbose")  # a hook accepts them and does nothing with them
_WRAPPER = re.compile(r"\Aout=\$\((?P<inner>.*) 2>/dev/null\) \|\| exit 0(?:; printf '%s' \"\$out\")?\Z", re.S)
_MENTION = re.compile(r"yupana['\"]?\s+(?:--?\S+\s+)*hook\s+(pre-edit|pre-bash|post-edit)\b")
_SHELL = set("`$;&|<>(){}\n\r*?[]~!#\\")  # outside single quotes: more than a plain command


class Registration(NamedTuple):
    event: str
    flags: tuple[tuple[str, str], ...]  # (flag, value) for --tenant / --config, in CARRIED order
    client: str | None = None  # --client: the registry name the installer wrote (yupana.clients)


def parse(command: object) -> Registration | None:
    """The registration ``command`` is, when it is ours (see the module text); else None."""
    if not isinstance(command, str):
        return None
    m = _WRAPPER.match(command)
    return _bare(m.group("inner") if m else command)


def mentions(command: object) -> str | None:
    """The yupana hook event a command runs or names, ours or not (for reporting)."""
    if not isinstance(command, str):
        return None
    m = _MENTION.search(command)
    return m.group(1) if m else None


def render(event: str, flags: tuple[tuple[str, str], ...], client: str | None = None) -> str:
    """The argument words after the yupana command: ``hook <event> [--client N] [--tenant T] [--config C]``."""
    return " ".join(["hook", event, *([f"--client {shlex.quote(client)}"] if client else []),
                     *(f"{name} {shlex.quote(value)}" for name, value in flags)])


def _bare(text: str) -> Registration | None:
    if not _plain(text):
        return None
    try:
        words = shlex.split(text)
    except ValueError:
        return None
    i = _program(words)
    if i is None:
        return None
    event = None
    values: dict[str, str] = {}
    seen_hook = False
    while i < len(words):
        word = words[i]
        name, eq, inline = word.partition("=")
        if name in CARRIED or name == CLIENT:
            if not eq:
                i += 1
                if i >= len(words):
                    return None
                inline = words[i]
            values[name] = inline
        elif word in _IGNORED:
            pass
        elif word == "hook" and not seen_hook:
            seen_hook = True
        elif seen_hook and event is None and word in EVENTS:
            event = word
        else:
            return None
        i += 1
    if event is None:
        return None
    return Registration(event, tuple((name, values[name]) for name in CARRIED if name in values), values.get(CLIENT))


def _program(words: list[str]) -> int | None:
    """How many words name the yupana program (``…/yupana`` or ``<python> -m yupana``)."""
    if words and os.path.basename(words[0]) == "yupana":
        return 1
    if len(words) >= 3 and os.path.basename(words[0]).startswith("python") and words[1:3] == ["-m", "yupana"]:
        return 3
    return None


def _plain(text: str) -> bool:
    """No shell syntax outside single quotes (inside double quotes ``$`` and backquotes still act)."""
    quote = None
    for ch in text:
        if quote == "'":
            if ch == "'":
                quote = None
        elif ch == "'" and quote is None:
            quote = "'"
        elif ch == '"':
            quote = None if quote == '"' else '"'
        elif ch in _SHELL:
            return False
    return quote is None
