"""The action surface: resolve a Bash command to (verb, target, class). Standard library only.

The recognised set is deliberately small; everything else is ``unknown`` — an abstention,
never a violation:

* ``host`` — ``ssh`` (destination with ``user@`` or a dotted host; ``-J`` jump hosts too),
  ``scp`` and ``rsync`` over ssh (remote operands ``[user@]host:path`` with ``user@`` or a
  dotted host), ``ansible``/``ansible-playbook -l|--limit`` (each limit element), and the
  remote host of ``systemctl -H`` / ``docker -H ssh://…``;
* ``service`` — ``systemctl`` (and ``service``) with a verb that changes a unit
  (start, stop, restart, reload, enable, disable, mask, kill…); ``NAME.service`` is named
  ``NAME``; read-only verbs (status, show, cat, is-active…) and unit patterns abstain;
* ``repo`` — ``git clone|push|pull|fetch`` with a URL (not a remote name, not a local
  path), named ``host/path`` without scheme, credentials, port or ``.git``;
* ``container`` — ``docker``/``podman`` verbs that act on a container (start, stop,
  restart, kill, rm, exec, attach, pause, unpause, rename, update, cp) and ``pct`` verbs
  that act on a guest (start, stop, reboot, destroy, enter, exec, set…).

The resolvers, one per tool, live in :mod:`yupana.shell.resolvers`; this module
holds the rule for whole command lines; :mod:`yupana.shell.targets` the
:class:`Action` model and the option grammar they share.

**Compound commands.** A command line yields one resolution per simple command only when
every simple command in it is read with certainty (:mod:`yupana.shell`: no command
substitution, subshell, compound command or syntax error anywhere; redirections and
heredocs are data and do not count).
Otherwise the whole line resolves to a single ``unknown`` carrying the reason. A member of
a multi-command pipeline resolves on its own only when every other member is a pure filter
(:mod:`yupana.shell.filters`: ``ssh a.example.com 2>&1 | tee log`` is ``host:a.example.com``);
otherwise it is ``unknown`` (``pipeline``); the other simple commands of the line still resolve. The words a resolver relies on (the command
name, options before the target, the target itself) must be literal: an expansion there
abstains.
"""

from __future__ import annotations

from yupana import shell
# The model is part of this module's API (callers import Action, the classes and Abstain from here).
from yupana.shell.targets import (CONTAINER, HOST, REPO, SERVICE, UNKNOWN, Abstain, Action, Opts,
                                  host_action, host_of, parse_options)

__all__ = ["CONTAINER", "HOST", "REPO", "SERVICE", "UNKNOWN", "Abstain", "Action", "Opts", "host_action", "host_of",
           "parse_options", "resolve", "resolve_command", "resolve_reading"]

def resolve(command: str | list[str]) -> list[Action]:
    """Resolve a command line (or a Codex argv list) to at least one Action."""
    reading = shell.read_argv(command) if isinstance(command, list) else shell.read(command)
    return resolve_reading(reading)


def resolve_reading(reading: shell.Reading) -> list[Action]:
    """Resolutions for an already-read command line (see the module docstring's rule)."""
    reason = reading.uncertain
    if reason:
        return [Action(UNKNOWN, reason=reason)]
    actions: list[Action] = []
    for cmd in reading.commands:
        if not cmd.argv:
            continue
        if cmd.pipeline and not cmd.others_pure:
            actions.append(Action(UNKNOWN, reason="pipeline"))
            continue
        actions.extend(resolve_command(cmd))
    return actions or [Action(UNKNOWN, reason="no command")]


def resolve_command(cmd: shell.Command) -> list[Action]:
    """Resolve one simple command (already unwrapped)."""
    words = cmd.argv
    if not words:
        return [Action(UNKNOWN, reason="no command")]
    if words[0].dynamic:
        return [Action(UNKNOWN, reason="the command name is an expansion")]
    from yupana.shell.resolvers import RESOLVERS

    resolver = RESOLVERS.get(cmd.name)
    if resolver is None:
        return [Action(UNKNOWN, reason=f"{cmd.name or 'command'} is not in the recognised set")]
    try:
        found = resolver(cmd.name, words)
    except Abstain as exc:
        return [Action(UNKNOWN, reason=f"{cmd.name}: {exc}")]
    return found or [Action(UNKNOWN, reason=f"{cmd.name}: no target")]
