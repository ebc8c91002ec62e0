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
holds the rule for whole command lines and the option grammar they share.

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

HOST, SERVICE, REPO, CONTAINER, UNKNOWN = "host", "service", "repo", "container", "unknown"


class Action:
    """One resolved action. ``class_`` is ``unknown`` for abstentions, with ``reason``."""

    __slots__ = ("verb", "target", "class_", "reason")

    def __init__(self, class_: str, verb: str | None = None, target: str | None = None, reason: str | None = None) -> None:
        self.class_ = class_
        self.verb = verb
        self.target = target
        self.reason = reason

    @property
    def key(self) -> str:
        """``class:target`` — what allow_targets / deny_targets globs are matched against."""
        return f"{self.class_}:{self.target}"

    def __repr__(self) -> str:
        if self.class_ == UNKNOWN:
            return f"Action(unknown, {self.reason!r})"
        return f"Action({self.class_}, {self.verb!r}, {self.target!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Action) and (self.class_, self.verb, self.target) == (other.class_, other.verb, other.target)


class Abstain(Exception):
    """Raised inside a resolver: the command is unknown for the given reason."""


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


# ── option parsing shared by the resolvers ─────────────────────────────────────────────


class Opts:
    """Option grammar of one tool: short flags/with-value, long flags/with-value."""

    __slots__ = ("flags", "args", "long_flags", "long_args", "lenient_long", "lenient_short")

    def __init__(self, flags: str = "", args: str = "", long_flags: tuple = (), long_args: tuple = (),
                 lenient_long: bool = False, lenient_short: bool = False) -> None:
        self.flags, self.args = flags, args
        self.long_flags, self.long_args = frozenset(long_flags), frozenset(long_args)
        self.lenient_long, self.lenient_short = lenient_long, lenient_short


def parse_options(words: list[shell.Word], i: int, opts: Opts, *, first_only: bool = False,
                  interleaved: bool = True) -> tuple[list[str], list[tuple[str, str]], int]:
    """Split ``words[i:]`` into operands and (option, value) pairs.

    ``first_only`` stops at the first operand (a subcommand or an ssh destination);
    ``interleaved`` allows options after operands (GNU style). Expansions abstain.
    """
    operands: list[str] = []
    options: list[tuple[str, str]] = []
    n = len(words)
    while i < n:
        w = words[i]
        if w.dynamic:
            raise Abstain(f"an expansion ({w.text}) where options or the target are read")
        text = w.text
        if text == "--":
            for rest in words[i + 1:]:
                if rest.dynamic:
                    raise Abstain(f"an expansion ({rest.text}) among the operands")
                operands.append(rest.text)
                if first_only:
                    return operands, options, i + 2
            return operands, options, n
        if not text.startswith("-") or text == "-" or (operands and not interleaved):
            operands.append(text)
            i += 1
            if first_only:
                return operands, options, i
            continue
        if text.startswith("--"):
            key, eq, value = text[2:].partition("=")
            if eq:
                options.append((key, value))
                i += 1
            elif key in opts.long_args:
                if i + 1 >= n:
                    raise Abstain(f"--{key} needs a value")
                if words[i + 1].dynamic:
                    raise Abstain(f"--{key} value is an expansion")
                options.append((key, words[i + 1].text))
                i += 2
            elif key in opts.long_flags or opts.lenient_long:
                options.append((key, ""))
                i += 1
            else:
                raise Abstain(f"unrecognised option {text}")
            continue
        k = 1
        while k < len(text):
            ch = text[k]
            if ch in opts.args:
                if k + 1 < len(text):
                    options.append((ch, text[k + 1:]))
                    i += 1
                else:
                    if i + 1 >= n:
                        raise Abstain(f"-{ch} needs a value")
                    if words[i + 1].dynamic:
                        raise Abstain(f"-{ch} value is an expansion")
                    options.append((ch, words[i + 1].text))
                    i += 2
                break
            if ch not in opts.flags and not opts.lenient_short:
                raise Abstain(f"unrecognised option -{ch}")
            options.append((ch, ""))
            k += 1
        else:
            i += 1
    return operands, options, n


def host_of(dest: str, *, allow_port: bool = False) -> tuple[str | None, bool]:
    """(host, qualified) of ``[user@]host[:port]``: qualified = user@ given or a dotted/IP host."""
    user, at, host = dest.rpartition("@")
    if host.startswith("["):
        end = host.find("]")
        host = host[1:end] if end > 0 else host[1:]
        return (host.lower() or None), True
    if allow_port and host.count(":") == 1:
        host = host.split(":", 1)[0]
    if not host or "/" in host:
        return None, False
    if host.count(":") >= 2:
        return host.lower(), True  # an IPv6 literal
    return host.lower(), bool(at and user) or "." in host


def host_action(verb: str, dest: str, *, allow_port: bool = False) -> Action | None:
    host, qualified = host_of(dest, allow_port=allow_port)
    if host and qualified:
        return Action(HOST, verb, host)
    return None
