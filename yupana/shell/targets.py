"""What a Bash command acts on: :class:`Action` (verb, target, class), :class:`Abstain`, and the
option grammar every resolver shares. Standard library only.

Below both the per-tool resolvers (:mod:`yupana.shell.resolvers`) and the whole-line rule
(:mod:`yupana.shell.actions`), which import it and not each other's internals.
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


# ── option parsing shared by the resolvers ─────────────────────────────────────────────


class Opts:
    """Option grammar of one tool: short flags/with-value, long flags/with-value."""

    __slots__ = ("flags", "args", "long_flags", "long_args", "lenient_long", "lenient_short")

    def __init__(self, flags: str = "", args: str = "", long_flags: tuple[str, ...] = (),
                 long_args: tuple[str, ...] = (), lenient_long: bool = False, lenient_short: bool = False) -> None:
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
