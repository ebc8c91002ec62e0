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

**Compound commands.** A command line yields one resolution per simple command only when
every simple command in it is read with certainty (:mod:`yupana.shell`: no command
substitution, redirection, subshell, compound command or syntax error anywhere).
Otherwise the whole line resolves to a single ``unknown`` carrying the reason. A member of
a multi-command pipeline resolves to ``unknown`` (``pipeline``) on its own; the other
simple commands of the line still resolve. The words a resolver relies on (the command
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


class _Abstain(Exception):
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
        if cmd.pipeline:
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
    resolver = _RESOLVERS.get(cmd.name)
    if resolver is None:
        return [Action(UNKNOWN, reason=f"{cmd.name or 'command'} is not in the recognised set")]
    try:
        found = resolver(cmd.name, words)
    except _Abstain as exc:
        return [Action(UNKNOWN, reason=f"{cmd.name}: {exc}")]
    return found or [Action(UNKNOWN, reason=f"{cmd.name}: no target")]


# ── option parsing shared by the resolvers ─────────────────────────────────────────────


class _Opts:
    """Option grammar of one tool: short flags/with-value, long flags/with-value."""

    __slots__ = ("flags", "args", "long_flags", "long_args", "lenient_long", "lenient_short")

    def __init__(self, flags: str = "", args: str = "", long_flags: tuple = (), long_args: tuple = (),
                 lenient_long: bool = False, lenient_short: bool = False) -> None:
        self.flags, self.args = flags, args
        self.long_flags, self.long_args = frozenset(long_flags), frozenset(long_args)
        self.lenient_long, self.lenient_short = lenient_long, lenient_short


def _parse(words: list[shell.Word], i: int, opts: _Opts, *, first_only: bool = False,
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
            raise _Abstain(f"an expansion ({w.text}) where options or the target are read")
        text = w.text
        if text == "--":
            for rest in words[i + 1:]:
                if rest.dynamic:
                    raise _Abstain(f"an expansion ({rest.text}) among the operands")
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
                    raise _Abstain(f"--{key} needs a value")
                if words[i + 1].dynamic:
                    raise _Abstain(f"--{key} value is an expansion")
                options.append((key, words[i + 1].text))
                i += 2
            elif key in opts.long_flags or opts.lenient_long:
                options.append((key, ""))
                i += 1
            else:
                raise _Abstain(f"unrecognised option {text}")
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
                        raise _Abstain(f"-{ch} needs a value")
                    if words[i + 1].dynamic:
                        raise _Abstain(f"-{ch} value is an expansion")
                    options.append((ch, words[i + 1].text))
                    i += 2
                break
            if ch not in opts.flags and not opts.lenient_short:
                raise _Abstain(f"unrecognised option -{ch}")
            options.append((ch, ""))
            k += 1
        else:
            i += 1
    return operands, options, n


def _host(dest: str, *, allow_port: bool = False) -> tuple[str | None, bool]:
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


def _host_action(verb: str, dest: str, *, allow_port: bool = False) -> Action | None:
    host, qualified = _host(dest, allow_port=allow_port)
    if host and qualified:
        return Action(HOST, verb, host)
    return None


# ── host ──────────────────────────────────────────────────────────────────────────────

_SSH = _Opts("46AaCfGgKkMNnqsTtVvXxYy", "BbcDEeFIiJLlmOoPpQRSWw")
_SCP = _Opts("346ABCOpqRrsTv", "cDFiJloPSX")
_RSYNC = _Opts(
    "aAbcCdDEgHhiIJkKlLmnNoOpPqrRsStuUvWxXyz0468", "eBfMT@",
    long_args=("rsh", "rsync-path", "exclude", "include", "filter", "files-from", "exclude-from", "include-from",
               "log-file", "password-file", "temp-dir", "compare-dest", "copy-dest", "link-dest", "partial-dir",
               "backup-dir", "suffix", "chmod", "chown", "usermap", "groupmap", "timeout", "contimeout", "bwlimit",
               "port", "sockopts", "out-format", "log-file-format", "max-size", "min-size", "max-delete",
               "block-size", "modify-window", "compress-level", "compress-choice", "checksum-choice",
               "skip-compress", "info", "debug", "stop-after", "stop-at", "iconv", "remote-option", "address",
               "read-batch", "write-batch", "only-write-batch", "outbuf", "max-alloc", "protocol"),
    lenient_long=True,
)


def _ssh(name: str, words: list[shell.Word]) -> list[Action]:
    operands, options, _ = _parse(words, 1, _SSH, first_only=True)
    flags = {k for k, _ in options}
    if flags & {"G", "V", "Q"}:
        raise _Abstain("-G/-V/-Q do not connect")
    if not operands:
        raise _Abstain("no destination")
    dest = operands[0]
    if dest.startswith("ssh://"):
        dest = dest[6:].split("/", 1)[0]
    actions = [a for a in (_host_action("ssh", j, allow_port=True) for k, v in options if k == "J" for j in v.split(",")) if a]
    main = _host_action("ssh", dest, allow_port=dest != operands[0])
    if main is None:
        raise _Abstain(f"destination {operands[0]!r} is a bare hostname (no user@, no dot)")
    return actions + [main]


def _remote_operand(text: str) -> str | None:
    """The ``[user@]host`` of a remote scp/rsync operand, or None for a local path."""
    if text.startswith(("scp://", "rsync://")):
        return text.split("://", 1)[1].split("/", 1)[0]
    if text.startswith("["):
        end = text.find("]:")
        return text[:end + 1] if end > 0 else None
    colon = text.find(":")
    if colon <= 0 or "/" in text[:colon]:
        return None
    return text[:colon]


def _scp(name: str, words: list[shell.Word]) -> list[Action]:
    operands, options, _ = _parse(words, 1, _SCP)
    actions = [a for a in (_host_action("scp", j, allow_port=True) for k, v in options if k == "J" for j in v.split(",")) if a]
    bare: list[str] = []
    for op in operands:
        remote = _remote_operand(op)
        if remote is None:
            continue
        act = _host_action("scp", remote, allow_port=op.startswith("scp://"))
        if act is None:
            bare.append(remote)
        elif act not in actions:
            actions.append(act)
    if not actions and bare:
        raise _Abstain(f"remote host {bare[0]!r} is a bare hostname (no user@, no dot)")
    if not actions:
        raise _Abstain("no remote operand")
    return actions


def _rsync(name: str, words: list[shell.Word]) -> list[Action]:
    operands, options, _ = _parse(words, 1, _RSYNC)
    for key, value in options:
        if key in ("e", "rsh") and not value.split(" ", 1)[0].rsplit("/", 1)[-1].startswith("ssh"):
            raise _Abstain(f"remote shell {value!r} is not ssh")
    actions: list[Action] = []
    bare: list[str] = []
    for op in operands:
        if op.startswith("rsync://") or "::" in op.split("/", 1)[0]:
            raise _Abstain("rsync daemon transfer, not over ssh")
        remote = _remote_operand(op)
        if remote is None:
            continue
        act = _host_action("rsync", remote)
        if act is None:
            bare.append(remote)
        elif act not in actions:
            actions.append(act)
    if not actions and bare:
        raise _Abstain(f"remote host {bare[0]!r} is a bare hostname (no user@, no dot)")
    if not actions:
        raise _Abstain("no remote operand")
    return actions


_ANSIBLE = _Opts(
    "", "iemauftMcTBPl",
    long_args=("inventory", "extra-vars", "module-name", "args", "user", "forks", "tags", "skip-tags", "limit",
               "become-user", "become-method", "connection", "timeout", "private-key", "key-file", "vault-id",
               "vault-password-file", "start-at-task", "ssh-common-args", "ssh-extra-args", "scp-extra-args",
               "sftp-extra-args", "module-path", "playbook-dir", "background", "poll", "tree",
               "connection-password-file", "become-password-file"),
    lenient_long=True, lenient_short=True,
)


def _ansible(name: str, words: list[shell.Word]) -> list[Action]:
    _, options, _ = _parse(words, 1, _ANSIBLE)
    limits = [v for k, v in options if k in ("l", "limit")]
    if not limits:
        raise _Abstain("no --limit")
    actions: list[Action] = []
    for limit in limits:
        if limit.startswith("@"):
            raise _Abstain("--limit reads its hosts from a file")
        for part in limit.replace(":", ",").split(","):
            part = part.strip()
            if part and part[0] not in "!&":
                act = Action(HOST, name, part)
                if act not in actions:
                    actions.append(act)
    if not actions:
        raise _Abstain("--limit names no host to act on")
    return actions


# ── service ───────────────────────────────────────────────────────────────────────────

SYSTEMCTL_VERBS = frozenset((
    "start", "stop", "restart", "reload", "try-restart", "reload-or-restart", "try-reload-or-restart",
    "condrestart", "force-reload", "enable", "disable", "reenable", "mask", "unmask", "kill", "freeze", "thaw",
    "clean", "edit", "revert", "preset", "link", "set-property", "isolate",
))
SYSTEMCTL_READ_VERBS = frozenset((
    "status", "show", "cat", "is-active", "is-enabled", "is-failed", "list-units", "list-unit-files",
    "list-dependencies", "list-timers", "list-sockets", "list-jobs", "help", "get-default",
))
_SYSTEMCTL = _Opts(
    "aflqrit", "tspHMnoP",
    long_flags=("user", "system", "global", "now", "no-block", "quiet", "force", "no-pager", "full", "all",
                "runtime", "wait", "no-reload", "no-ask-password", "dry-run", "failed", "show-types",
                "no-legend", "plain", "no-warn", "no-wall", "recursive", "reverse", "after", "before",
                "firmware-setup", "value", "legend", "check-inhibitors"),
    long_args=("type", "signal", "property", "host", "machine", "lines", "output", "state", "job-mode", "root",
               "kill-whom", "kill-value", "what", "boot-loader-entry", "message", "timestamp", "image", "drop-in",
               "when", "preset-mode", "reboot-argument"),
)


def _unit_actions(tool: str, verb: str, units: list[str]) -> list[Action]:
    actions: list[Action] = []
    for unit in units:
        if any(c in unit for c in "*?["):
            continue  # a unit pattern: which units it covers is not known from syntax
        if unit.endswith(".service"):
            unit = unit[: -len(".service")]
        if unit:
            actions.append(Action(SERVICE, f"{tool} {verb}", unit))
    return actions


def _systemctl(name: str, words: list[shell.Word]) -> list[Action]:
    operands, options, _ = _parse(words, 1, _SYSTEMCTL)
    if not operands:
        raise _Abstain("no verb")
    verb = operands[0]
    if verb in SYSTEMCTL_READ_VERBS:
        raise _Abstain(f"{verb} is read-only")
    if verb not in SYSTEMCTL_VERBS:
        raise _Abstain(f"unrecognised verb {verb!r}")
    actions = [a for a in (_host_action(name, v) for k, v in options if k in ("H", "host")) if a]
    units = _unit_actions(name, verb, operands[1:])
    if not units:
        raise _Abstain(f"{verb} names no unit (or only unit patterns)")
    return actions + units


_SERVICE_VERBS = frozenset(("start", "stop", "restart", "reload", "force-reload", "try-restart", "condrestart"))


def _service(name: str, words: list[shell.Word]) -> list[Action]:
    operands, _, _ = _parse(words, 1, _Opts(), interleaved=False)
    if len(operands) < 2:
        raise _Abstain("expects `service NAME VERB`")
    if operands[1] not in _SERVICE_VERBS:
        raise _Abstain(f"{operands[1]!r} is not a recognised service verb")
    return _unit_actions(name, operands[1], [operands[0]])


# ── repo ──────────────────────────────────────────────────────────────────────────────

_GIT = _Opts("pPhv", "Cc", long_flags=("bare", "no-pager", "paginate", "no-replace-objects", "literal-pathspecs",
                                       "glob-pathspecs", "noglob-pathspecs", "icase-pathspecs", "no-optional-locks",
                                       "no-advice", "no-lazy-fetch", "exec-path"),
             long_args=("git-dir", "work-tree", "namespace", "config-env", "super-prefix"))
_GIT_SUB = {
    "clone": _Opts(lenient_short=True, lenient_long=True, args="objuc",
                   long_args=("origin", "branch", "upload-pack", "reference", "reference-if-able", "separate-git-dir",
                              "depth", "shallow-since", "shallow-exclude", "config", "template", "jobs", "filter",
                              "server-option", "bundle-uri", "ref-format", "revision")),
    "push": _Opts(lenient_short=True, lenient_long=True, args="o",
                  long_args=("receive-pack", "exec", "push-option")),
    "fetch": _Opts(lenient_short=True, lenient_long=True, args="jo",
                   long_args=("depth", "deepen", "shallow-since", "shallow-exclude", "jobs", "upload-pack",
                              "server-option", "negotiation-tip", "refmap")),
    "pull": _Opts(lenient_short=True, lenient_long=True, args="josX",
                  long_args=("depth", "deepen", "shallow-since", "shallow-exclude", "jobs", "upload-pack",
                             "server-option", "negotiation-tip", "strategy", "strategy-option")),
}
_URL_SCHEMES = ("https://", "http://", "ssh://", "git://", "git+ssh://", "ssh+git://", "ftp://", "ftps://")


def repo_url(text: str) -> str | None:
    """``host/path`` for a remote repository URL (scheme, credentials, port, ``.git``
    removed; host lower-cased), or None for a remote name or a local path."""
    lower = text.lower()
    if lower.startswith(_URL_SCHEMES):
        rest = text.split("://", 1)[1]
        authority, _, path = rest.partition("/")
        host = authority.rpartition("@")[2]
        if host.startswith("["):
            host = host[1:host.find("]")] if "]" in host else host[1:]
        elif ":" in host:
            host = host.split(":", 1)[0]
    elif "://" in text:
        return None  # file:// and other schemes name no remote repository we recognise
    elif ":" in text and not text.startswith(("/", ".", "~")) and "/" not in text.split(":", 1)[0]:
        authority, _, path = text.partition(":")
        host = authority.rpartition("@")[2]
        if len(host) == 1:
            return None  # a DOS drive letter, not a host
    else:
        return None
    for cut in ("?", "#"):
        path = path.split(cut, 1)[0]
    path = path.strip("/")
    if path.endswith(".git"):
        path = path[:-4]
    if not host:
        return None
    return f"{host.lower()}/{path}" if path else host.lower()


def _git(name: str, words: list[shell.Word]) -> list[Action]:
    operands, _, i = _parse(words, 1, _GIT, first_only=True)
    if not operands:
        raise _Abstain("no subcommand")
    sub = operands[0]
    opts = _GIT_SUB.get(sub)
    if opts is None:
        raise _Abstain(f"`git {sub}` is not in the recognised set (clone, push, pull, fetch)")
    args, options, _ = _parse(words, i, opts)
    repo = args[0] if args else next((v for k, v in options if k == "repo"), None)
    if repo is None:
        raise _Abstain("no repository given")
    target = repo_url(repo)
    if target is None:
        raise _Abstain(f"{repo!r} is a remote name or a local path, not a URL")
    return [Action(REPO, f"git {sub}", target)]


# ── container ─────────────────────────────────────────────────────────────────────────

_DOCKER = _Opts("Dv", "Hcl", long_flags=("debug", "tls", "tlsverify", "remote", "version"),
                long_args=("host", "context", "config", "log-level", "tlscacert", "tlscert", "tlskey", "connection",
                           "url", "identity", "root", "runroot", "storage-driver", "cgroup-manager", "events-backend",
                           "module", "ssh"))
_CONTAINER_VERBS: dict[str, tuple[_Opts, str]] = {
    # verb -> (options, which operands are containers: all | first | cp)
    "start": (_Opts("ai", "", ("attach", "interactive"), ("detach-keys",)), "all"),
    "stop": (_Opts("", "st", (), ("time", "signal", "timeout")), "all"),
    "restart": (_Opts("", "st", (), ("time", "signal", "timeout")), "all"),
    "kill": (_Opts("", "s", (), ("signal",)), "all"),
    "rm": (_Opts("fvl", "t", ("force", "volumes", "link", "depend", "ignore"), ("time",)), "all"),
    "pause": (_Opts(), "all"),
    "unpause": (_Opts(), "all"),
    "exec": (_Opts("dit", "euw", ("detach", "interactive", "tty", "privileged", "latest"),
                   ("env", "env-file", "user", "workdir", "detach-keys", "preserve-fds")), "first"),
    "attach": (_Opts("", "", ("no-stdin", "sig-proxy", "latest"), ("detach-keys",)), "first"),
    "rename": (_Opts(), "first"),
    "update": (_Opts("", "cm", (), ("cpus", "cpu-shares", "cpu-period", "cpu-quota", "cpuset-cpus", "cpuset-mems",
                                   "memory", "memory-reservation", "memory-swap", "kernel-memory", "restart",
                                   "blkio-weight", "pids-limit")), "all"),
    "cp": (_Opts("aLq", "", ("archive", "follow-link", "quiet", "overwrite"), ()), "cp"),
}
PCT_VERBS = frozenset((
    "start", "stop", "shutdown", "reboot", "destroy", "enter", "exec", "console", "push", "pull", "resize", "set",
    "snapshot", "rollback", "delsnapshot", "clone", "migrate", "mount", "unmount", "suspend", "resume", "restore",
    "unlock", "move-volume", "move_volume", "fstrim", "template",
))


def _docker(name: str, words: list[shell.Word]) -> list[Action]:
    operands, options, i = _parse(words, 1, _DOCKER, first_only=True)
    if not operands:
        raise _Abstain("no verb")
    verb = operands[0]
    if verb == "container":
        more, _, i = _parse(words, i, _Opts(), first_only=True)
        if not more:
            raise _Abstain("no verb after `container`")
        verb = more[0]
    spec = _CONTAINER_VERBS.get(verb)
    if spec is None:
        raise _Abstain(f"`{name} {verb}` does not act on a named container")
    opts, which = spec
    args, _, _ = _parse(words, i, opts, interleaved=which == "all")
    if which == "first":
        args = args[:1]
    elif which == "cp":
        args = [a.split(":", 1)[0] for a in args if ":" in a and "/" not in a.split(":", 1)[0]]
    actions = [a for a in (_host_action(name, v[6:], allow_port=True)
                           for k, v in options if k in ("H", "host", "url") and v.startswith("ssh://")) if a]
    containers = [Action(CONTAINER, f"{name} {verb}", a) for a in args if a]
    if not containers:
        raise _Abstain(f"{verb} names no container")
    return actions + containers


def _pct(name: str, words: list[shell.Word]) -> list[Action]:
    if len(words) < 3 or words[1].dynamic or words[2].dynamic:
        raise _Abstain("expects `pct VERB VMID`")
    verb, vmid = words[1].text, words[2].text
    if verb not in PCT_VERBS:
        raise _Abstain(f"`pct {verb}` does not act on a guest")
    if not vmid.isdigit():
        raise _Abstain(f"{vmid!r} is not a VMID")
    return [Action(CONTAINER, f"pct {verb}", vmid)]


_RESOLVERS = {
    "ssh": _ssh, "scp": _scp, "rsync": _rsync, "ansible": _ansible, "ansible-playbook": _ansible,
    "systemctl": _systemctl, "service": _service, "git": _git, "docker": _docker, "podman": _docker, "pct": _pct,
}
