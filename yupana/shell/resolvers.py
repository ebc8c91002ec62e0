"""The resolvers behind :mod:`yupana.shell.actions`, one per recognised tool.

Each takes the command name and its words (wrappers already removed) and returns the
actions it can name with certainty, or raises :class:`~yupana.shell.actions.Abstain`
with the reason. Option grammars follow each tool's manual; an option a resolver does not
know abstains unless the grammar is declared lenient (git and ansible: a misread there
cannot turn a non-URL into a URL, nor invent a ``--limit``). Standard library only.
"""

from __future__ import annotations

from yupana import shell
from yupana.shell.targets import (CONTAINER, HOST, REPO, SERVICE, Abstain, Action, Opts, host_action,
                                    parse_options)

# ── host ──────────────────────────────────────────────────────────────────────────────

_SSH = Opts("46AaCfGgKkMNnqsTtVvXxYy", "BbcDEeFIiJLlmOoPpQRSWw")
_SCP = Opts("346ABCOpqRrsTv", "cDFiJloPSX")
_RSYNC = Opts(
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
    operands, options, _ = parse_options(words, 1, _SSH, first_only=True)
    flags = {k for k, _ in options}
    if flags & {"G", "V", "Q"}:
        raise Abstain("-G/-V/-Q do not connect")
    if not operands:
        raise Abstain("no destination")
    dest = operands[0]
    if dest.startswith("ssh://"):
        dest = dest[6:].split("/", 1)[0]
    actions = [a for a in (host_action("ssh", j, allow_port=True) for k, v in options if k == "J" for j in v.split(",")) if a]
    main = host_action("ssh", dest, allow_port=dest != operands[0])
    if main is None:
        raise Abstain(f"destination {operands[0]!r} is a bare hostname (no user@, no dot)")
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
    operands, options, _ = parse_options(words, 1, _SCP)
    actions = [a for a in (host_action("scp", j, allow_port=True) for k, v in options if k == "J" for j in v.split(",")) if a]
    bare: list[str] = []
    for op in operands:
        remote = _remote_operand(op)
        if remote is None:
            continue
        act = host_action("scp", remote, allow_port=op.startswith("scp://"))
        if act is None:
            bare.append(remote)
        elif act not in actions:
            actions.append(act)
    if not actions and bare:
        raise Abstain(f"remote host {bare[0]!r} is a bare hostname (no user@, no dot)")
    if not actions:
        raise Abstain("no remote operand")
    return actions


def _rsync(name: str, words: list[shell.Word]) -> list[Action]:
    operands, options, _ = parse_options(words, 1, _RSYNC)
    for key, value in options:
        if key in ("e", "rsh") and not value.split(" ", 1)[0].rsplit("/", 1)[-1].startswith("ssh"):
            raise Abstain(f"remote shell {value!r} is not ssh")
    actions: list[Action] = []
    bare: list[str] = []
    for op in operands:
        if op.startswith("rsync://") or "::" in op.split("/", 1)[0]:
            raise Abstain("rsync daemon transfer, not over ssh")
        remote = _remote_operand(op)
        if remote is None:
            continue
        act = host_action("rsync", remote)
        if act is None:
            bare.append(remote)
        elif act not in actions:
            actions.append(act)
    if not actions and bare:
        raise Abstain(f"remote host {bare[0]!r} is a bare hostname (no user@, no dot)")
    if not actions:
        raise Abstain("no remote operand")
    return actions


_ANSIBLE = Opts(
    "", "iemauftMcTBPl",
    long_args=("inventory", "extra-vars", "module-name", "args", "user", "forks", "tags", "skip-tags", "limit",
               "become-user", "become-method", "connection", "timeout", "private-key", "key-file", "vault-id",
               "vault-password-file", "start-at-task", "ssh-common-args", "ssh-extra-args", "scp-extra-args",
               "sftp-extra-args", "module-path", "playbook-dir", "background", "poll", "tree",
               "connection-password-file", "become-password-file"),
    lenient_long=True, lenient_short=True,
)


def _ansible(name: str, words: list[shell.Word]) -> list[Action]:
    _, options, _ = parse_options(words, 1, _ANSIBLE)
    limits = [v for k, v in options if k in ("l", "limit")]
    if not limits:
        raise Abstain("no --limit")
    actions: list[Action] = []
    for limit in limits:
        if limit.startswith("@"):
            raise Abstain("--limit reads its hosts from a file")
        for part in limit.replace(":", ",").split(","):
            part = part.strip()
            if part and part[0] not in "!&":
                act = Action(HOST, name, part)
                if act not in actions:
                    actions.append(act)
    if not actions:
        raise Abstain("--limit names no host to act on")
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
_SYSTEMCTL = Opts(
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
    operands, options, _ = parse_options(words, 1, _SYSTEMCTL)
    if not operands:
        raise Abstain("no verb")
    verb = operands[0]
    if verb in SYSTEMCTL_READ_VERBS:
        raise Abstain(f"{verb} is read-only")
    if verb not in SYSTEMCTL_VERBS:
        raise Abstain(f"unrecognised verb {verb!r}")
    actions = [a for a in (host_action(name, v) for k, v in options if k in ("H", "host")) if a]
    units = _unit_actions(name, verb, operands[1:])
    if not units:
        raise Abstain(f"{verb} names no unit (or only unit patterns)")
    return actions + units


_SERVICE_VERBS = frozenset(("start", "stop", "restart", "reload", "force-reload", "try-restart", "condrestart"))


def _service(name: str, words: list[shell.Word]) -> list[Action]:
    operands, _, _ = parse_options(words, 1, Opts(), interleaved=False)
    if len(operands) < 2:
        raise Abstain("expects `service NAME VERB`")
    if operands[1] not in _SERVICE_VERBS:
        raise Abstain(f"{operands[1]!r} is not a recognised service verb")
    return _unit_actions(name, operands[1], [operands[0]])


# ── repo ──────────────────────────────────────────────────────────────────────────────

_GIT = Opts("pPhv", "Cc", long_flags=("bare", "no-pager", "paginate", "no-replace-objects", "literal-pathspecs",
                                       "glob-pathspecs", "noglob-pathspecs", "icase-pathspecs", "no-optional-locks",
                                       "no-advice", "no-lazy-fetch", "exec-path"),
             long_args=("git-dir", "work-tree", "namespace", "config-env", "super-prefix"))
_GIT_SUB = {
    "clone": Opts(lenient_short=True, lenient_long=True, args="objuc",
                   long_args=("origin", "branch", "upload-pack", "reference", "reference-if-able", "separate-git-dir",
                              "depth", "shallow-since", "shallow-exclude", "config", "template", "jobs", "filter",
                              "server-option", "bundle-uri", "ref-format", "revision")),
    "push": Opts(lenient_short=True, lenient_long=True, args="o",
                  long_args=("receive-pack", "exec", "push-option")),
    "fetch": Opts(lenient_short=True, lenient_long=True, args="jo",
                   long_args=("depth", "deepen", "shallow-since", "shallow-exclude", "jobs", "upload-pack",
                              "server-option", "negotiation-tip", "refmap")),
    "pull": Opts(lenient_short=True, lenient_long=True, args="josX",
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
    operands, _, i = parse_options(words, 1, _GIT, first_only=True)
    if not operands:
        raise Abstain("no subcommand")
    sub = operands[0]
    opts = _GIT_SUB.get(sub)
    if opts is None:
        raise Abstain(f"`git {sub}` is not in the recognised set (clone, push, pull, fetch)")
    args, options, _ = parse_options(words, i, opts)
    repo = args[0] if args else next((v for k, v in options if k == "repo"), None)
    if repo is None:
        raise Abstain("no repository given")
    target = repo_url(repo)
    if target is None:
        raise Abstain(f"{repo!r} is a remote name or a local path, not a URL")
    return [Action(REPO, f"git {sub}", target)]


# ── container ─────────────────────────────────────────────────────────────────────────

_DOCKER = Opts("Dv", "Hcl", long_flags=("debug", "tls", "tlsverify", "remote", "version"),
                long_args=("host", "context", "config", "log-level", "tlscacert", "tlscert", "tlskey", "connection",
                           "url", "identity", "root", "runroot", "storage-driver", "cgroup-manager", "events-backend",
                           "module", "ssh"))
_CONTAINER_VERBS: dict[str, tuple[Opts, str]] = {
    # verb -> (options, which operands are containers: all | first | cp)
    "start": (Opts("ai", "", ("attach", "interactive"), ("detach-keys",)), "all"),
    "stop": (Opts("", "st", (), ("time", "signal", "timeout")), "all"),
    "restart": (Opts("", "st", (), ("time", "signal", "timeout")), "all"),
    "kill": (Opts("", "s", (), ("signal",)), "all"),
    "rm": (Opts("fvl", "t", ("force", "volumes", "link", "depend", "ignore"), ("time",)), "all"),
    "pause": (Opts(), "all"),
    "unpause": (Opts(), "all"),
    "exec": (Opts("dit", "euw", ("detach", "interactive", "tty", "privileged", "latest"),
                   ("env", "env-file", "user", "workdir", "detach-keys", "preserve-fds")), "first"),
    "attach": (Opts("", "", ("no-stdin", "sig-proxy", "latest"), ("detach-keys",)), "first"),
    "rename": (Opts(), "first"),
    "update": (Opts("", "cm", (), ("cpus", "cpu-shares", "cpu-period", "cpu-quota", "cpuset-cpus", "cpuset-mems",
                                   "memory", "memory-reservation", "memory-swap", "kernel-memory", "restart",
                                   "blkio-weight", "pids-limit")), "all"),
    "cp": (Opts("aLq", "", ("archive", "follow-link", "quiet", "overwrite"), ()), "cp"),
}
PCT_VERBS = frozenset((
    "start", "stop", "shutdown", "reboot", "destroy", "enter", "exec", "console", "push", "pull", "resize", "set",
    "snapshot", "rollback", "delsnapshot", "clone", "migrate", "mount", "unmount", "suspend", "resume", "restore",
    "unlock", "move-volume", "move_volume", "fstrim", "template",
))


def _docker(name: str, words: list[shell.Word]) -> list[Action]:
    operands, options, i = parse_options(words, 1, _DOCKER, first_only=True)
    if not operands:
        raise Abstain("no verb")
    verb = operands[0]
    if verb == "container":
        more, _, i = parse_options(words, i, Opts(), first_only=True)
        if not more:
            raise Abstain("no verb after `container`")
        verb = more[0]
    spec = _CONTAINER_VERBS.get(verb)
    if spec is None:
        raise Abstain(f"`{name} {verb}` does not act on a named container")
    opts, which = spec
    args, _, _ = parse_options(words, i, opts, interleaved=which == "all")
    if which == "first":
        args = args[:1]
    elif which == "cp":
        args = [a.split(":", 1)[0] for a in args if ":" in a and "/" not in a.split(":", 1)[0]]
    actions = [a for a in (host_action(name, v[6:], allow_port=True)
                           for k, v in options if k in ("H", "host", "url") and v.startswith("ssh://")) if a]
    containers = [Action(CONTAINER, f"{name} {verb}", a) for a in args if a]
    if not containers:
        raise Abstain(f"{verb} names no container")
    return actions + containers


def _pct(name: str, words: list[shell.Word]) -> list[Action]:
    if len(words) < 3 or words[1].dynamic or words[2].dynamic:
        raise Abstain("expects `pct VERB VMID`")
    verb, vmid = words[1].text, words[2].text
    if verb not in PCT_VERBS:
        raise Abstain(f"`pct {verb}` does not act on a guest")
    if not vmid.isdigit():
        raise Abstain(f"{vmid!r} is not a VMID")
    return [Action(CONTAINER, f"pct {verb}", vmid)]


RESOLVERS = {
    "ssh": _ssh, "scp": _scp, "rsync": _rsync, "ansible": _ansible, "ansible-playbook": _ansible,
    "systemctl": _systemctl, "service": _service, "git": _git, "docker": _docker, "podman": _docker, "pct": _pct,
}
