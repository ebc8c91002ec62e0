"""A shell-level reader for Bash tool commands. Standard library only (no shlex, no re).

It reads a command line the way a POSIX shell / bash would *tokenise* it (the tokeniser is
:mod:`yupana.shell.lexer`), without running anything, and answers which simple commands it
would execute and with which words:

* words with quoting: '…' (literal), "…" (``\\`` escapes ``$ ` " \\`` and newline),
  ``$'…'`` (ANSI-C escapes), ``$"…"``, backslash escapes, line continuations, comments;
* ``VAR=value`` prefixes (kept apart from argv);
* wrappers that run their arguments as a command: ``sudo`` (with ``-u user`` and its other
  options), ``doas``, ``env`` (options and assignments), ``nice``, ``ionice``, ``timeout``,
  ``nohup``, ``time``, ``command``, ``builtin``, ``exec``, ``stdbuf``, ``setsid``, ``!``;
* ``sh|bash|dash|zsh|ksh -c '…'`` payloads and ``eval '…'``, read recursively up to
  :data:`MAX_DEPTH` nested shells;
* segments split on ``&&``, ``||``, ``;``, ``|``, ``&`` and newlines; members of a
  multi-command pipeline are flagged ``pipeline``, and ``others_pure`` says whether every
  other member of that pipeline is a pure filter (:mod:`yupana.shell.filters`: ``tee``,
  ``grep``, ``head``…, which run no command), so the member can be read as if alone;
* heredoc bodies and quoted text are data: they never become commands.

Redirections (``> log``, ``2>&1``, ``< in``, heredocs and here-strings) are set aside: they
say where data goes, not which command runs, so ``ssh a.example.com uptime 2>&1`` is read
with certainty. A heredoc with an unquoted delimiter whose body holds ``$(`` or a backtick
is not (the shell runs that substitution).

What it cannot read with certainty it says so, per command, in ``Command.uncertain``:
command substitution (``$(…)``, backticks, in a word or in an expanded heredoc body),
process substitution, subshells and function definitions, compound commands (``if``/``for``/``case``…),
``xargs`` (argv comes from stdin), ``env -S``, a shell payload that is itself an expansion,
nesting deeper than :data:`MAX_DEPTH`, and syntax errors (an unterminated quote, a dangling
``&&``). A word whose value is not known from syntax (a parameter expansion, an unquoted
glob or brace pattern) is kept with ``dynamic = True``; callers decide whether the words
they rely on are literal. Callers that must not guess (the action resolver) turn any
uncertainty into an abstention.
"""

from __future__ import annotations

from yupana.shell.filters import pure_filter
from yupana.shell.lexer import Word, lex

__all__ = ["Word", "Command", "Reading", "read", "read_argv", "MAX_DEPTH", "KEYWORDS", "SHELLS"]

MAX_DEPTH = 4
MAX_CHARS = 256 * 1024
KEYWORDS = frozenset(
    ("if", "then", "elif", "else", "fi", "for", "while", "until", "do", "done", "case", "esac",
     "select", "function", "{", "}", "[[", "]]", "coproc")
)
SHELLS = frozenset(("sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "busybox"))


class Command:
    """One simple command the shell would run, after wrappers and prefixes are removed.

    ``argv`` — the effective command words; ``assigns`` — names of ``VAR=`` prefixes
    (``settings`` — those words whole);
    ``wrappers`` — wrapper names removed, outermost first (``sudo``, ``env``, ``bash -c``…);
    ``pipeline`` — part of a pipeline of two or more commands; ``others_pure`` — every
    other member of each pipeline it is part of is a pure filter (True outside pipelines);
    ``uncertain`` — reasons it cannot be read with certainty (empty when it can);
    ``depth`` — nested shell level; ``redirects`` — ``(operator, target word)`` of its
    redirections (an outer shell's too, for the commands of a ``sh -c`` payload).
    """

    __slots__ = ("argv", "assigns", "settings", "wrappers", "pipeline", "others_pure", "uncertain", "depth", "redirects")

    def __init__(self, argv: list[Word], *, depth: int = 0) -> None:
        self.argv = argv
        self.assigns: list[str] = []
        self.settings: list[Word] = []
        self.wrappers: list[str] = []
        self.pipeline = False
        self.others_pure = True
        self.uncertain: list[str] = []
        self.depth = depth
        self.redirects: list[tuple[str, Word]] = []

    @property
    def name(self) -> str:
        """Basename of the command word ("" when there is none)."""
        if not self.argv:
            return ""
        return self.argv[0].text.rsplit("/", 1)[-1]

    def text(self) -> str:
        """The effective argv joined by single spaces (the evidence a command regex reads)."""
        return " ".join(w.text for w in self.argv)

    def __repr__(self) -> str:
        return f"Command({[w.text for w in self.argv]!r}, uncertain={self.uncertain!r}, pipeline={self.pipeline})"


class Reading:
    """Everything read from one command line: its simple commands and overall certainty."""

    __slots__ = ("commands", "error")

    def __init__(self) -> None:
        self.commands: list[Command] = []
        self.error: str | None = None  # a syntax error: nothing here is certain

    @property
    def uncertain(self) -> str | None:
        """The first reason the line is not read with certainty, or None."""
        if self.error:
            return self.error
        for cmd in self.commands:
            if cmd.uncertain:
                return cmd.uncertain[0]
        return None


# ── parser: tokens to simple commands ────────────────────────────────────────────────

_LIST_OPS = ("&&", "||", ";", "&", "\n")


def read(command: str, depth: int = 0) -> Reading:
    """Read a command line into its simple commands (wrappers removed, shells recursed).

    A line longer than :data:`MAX_CHARS` is not read at all (an uncertain, empty reading):
    the hook's budget is better spent failing open than tokenising a megabyte of words.
    """
    reading = Reading()
    if len(command) > MAX_CHARS:
        reading.error = f"command longer than {MAX_CHARS} characters: not read"
        return reading
    tokens, error = lex(command)
    if error:
        reading.error = error
    raw: list[tuple[list[Word], list[str], int, list[tuple[str, Word]]]] = []  # (words, reasons, pipeline id, redirects)
    words: list[Word] = []
    reasons: list[str] = []
    redirects: list[tuple[str, Word]] = []
    pipe_id = 0
    pending_binary: str | None = None
    redirect: str | None = None
    for kind, value in tokens:
        if kind == "w":
            if redirect is not None:
                redirects.append((redirect, value))  # type: ignore[arg-type] # a redirection target is not an argument
                redirect = None
            else:
                words.append(value)  # type: ignore[arg-type]
        elif kind == "mark":
            reasons.append(value)  # type: ignore[arg-type]
        elif kind == "redir":
            redirect = value  # type: ignore[assignment] # where output goes (or input comes from) is not which command runs
        else:
            op = value
            if op in ("(", ")"):
                reasons.append("subshell or function definition")
            elif op in (";;", ";&", ";;&"):
                reasons.append("case clause")
            elif words or reasons or redirects:
                raw.append((words, reasons, pipe_id, redirects))
                words, reasons, redirects = [], [], []
                pending_binary = op if op in ("&&", "||", "|", "|&") else None
                if op not in ("|", "|&"):
                    pipe_id += 1
            elif op == "\n" and pending_binary:
                pass  # `a &&<newline> b` continues the list
            elif op != "\n":
                reading.error = reading.error or f"syntax error near {op!r}"
    if words or reasons or redirects:
        raw.append((words, reasons, pipe_id, redirects))
        pending_binary = None
    if pending_binary:
        reading.error = reading.error or f"incomplete command after {pending_binary!r}"
    sizes: dict[int, int] = {}
    for _, _, pid, _ in raw:
        sizes[pid] = sizes.get(pid, 0) + 1
    pipelines: dict[int, list[list[Command]]] = {}
    for seg_words, seg_reasons, pid, seg_redirects in raw:
        segment = _unwrap(seg_words, depth)
        for cmd in segment:
            cmd.uncertain = seg_reasons + cmd.uncertain
            cmd.redirects = seg_redirects + cmd.redirects
            cmd.pipeline = cmd.pipeline or sizes[pid] > 1
            reading.commands.append(cmd)
        if sizes[pid] > 1:
            pipelines.setdefault(pid, []).append(segment)
    for members in pipelines.values():
        _mark_others_pure(members, depth)
    if reading.error:
        for cmd in reading.commands:
            cmd.uncertain.append(reading.error)
    return reading


def _mark_others_pure(members: list[list[Command]], depth: int) -> None:
    """Clear ``others_pure`` on the commands of each member beside a member that is no pure
    filter. A member is one only as one plain command (not a shell payload's commands)."""
    pure = [len(m) == 1 and m[0].depth == depth and pure_filter(m[0]) for m in members]
    impure = pure.count(False)
    for member, is_pure in zip(members, pure):
        if impure - (0 if is_pure else 1) > 0:
            for cmd in member:
                cmd.others_pure = False


def read_argv(argv: list[str]) -> Reading:
    """Read an argv given as a list (Codex shell payloads): no shell splitting applies."""
    reading = Reading()
    reading.commands.extend(_unwrap([Word(a, quoted=True) for a in argv], 0))
    return reading


# ── wrappers ──────────────────────────────────────────────────────────────────────────

# name -> (short flags, short options taking a value, long flags, long options taking a value)
_WRAPPERS: dict[str, tuple[str, str, tuple[str, ...], tuple[str, ...]]] = {
    "sudo": ("AbEHiKknPSsV", "CDghprRtTuU", ("askpass", "background", "preserve-env", "set-home", "login",
             "non-interactive", "preserve-groups", "stdin", "shell", "reset-timestamp", "remove-timestamp"),
             ("user", "group", "close-from", "chdir", "host", "prompt", "role", "type", "command-timeout",
              "other-user", "chroot")),
    "doas": ("ns", "u", (), ()),
    "env": ("0iv", "uC", ("ignore-environment", "null", "debug"), ("unset", "chdir")),
    "nice": ("", "n", (), ("adjustment",)),
    "ionice": ("t", "cn", ("ignore",), ("class", "classdata")),
    "timeout": ("v", "sk", ("preserve-status", "foreground", "verbose"), ("signal", "kill-after")),
    "nohup": ("", "", (), ()),
    "time": ("pavq", "fo", ("portability", "append", "verbose", "quiet"), ("format", "output")),
    "command": ("p", "", (), ()),
    "builtin": ("", "", (), ()),
    "exec": ("cl", "a", (), ()),
    "stdbuf": ("", "ioe", (), ("input", "output", "error")),
    "setsid": ("cfw", "", ("ctty", "fork", "wait"), ()),
}


def _unwrap(words: list[Word], depth: int) -> list[Command]:
    """Strip prefixes and wrappers from one simple command; recurse into shell payloads."""
    cmd = Command([], depth=depth)
    i = 0
    n = len(words)
    while i < n and words[i].assign:
        cmd.assigns.append(words[i].text.split("=", 1)[0].rstrip("+"))
        cmd.settings.append(words[i])
        i += 1
    for _ in range(32):
        if i >= n:
            break
        head = words[i]
        if not head.quoted and head.text in KEYWORDS:
            cmd.uncertain.append(f"compound command ({head.text})")
            break
        if head.dynamic:
            break
        name = head.text.rsplit("/", 1)[-1]
        if name == "!" and not head.quoted:
            i += 1
            continue
        if name == "xargs":
            cmd.uncertain.append("xargs appends arguments read from standard input")
            break
        if name == "eval":
            rest = words[i + 1:]
            cmd.wrappers.append("eval")
            if any(w.dynamic for w in rest):
                cmd.uncertain.append("eval of an expansion")
                break
            return _nested(cmd, " ".join(w.text for w in rest), depth)
        if name in SHELLS:
            payload = _shell_payload(words, i, cmd)
            if payload is None:
                break
            return _nested(cmd, payload, depth)
        spec = _WRAPPERS.get(name)
        if spec is None:
            break
        if name == "command" and i + 1 < n and words[i + 1].text in ("-v", "-V"):
            break  # `command -v x` looks a name up; it runs nothing
        j = _skip_options(words, i + 1, spec, cmd, name)
        if j is None:
            break
        cmd.wrappers.append(name)
        if name == "env":
            while j < n and words[j].assign:
                cmd.assigns.append(words[j].text.split("=", 1)[0])
                cmd.settings.append(words[j])
                j += 1
        elif name == "sudo":
            while j < n and words[j].assign:
                cmd.assigns.append(words[j].text.split("=", 1)[0])
                cmd.settings.append(words[j])
                j += 1
        elif name == "timeout":
            if j < n and words[j].dynamic:
                cmd.uncertain.append("timeout duration is an expansion")
                break
            j += 1  # the duration
        i = j
    cmd.argv = list(words[i:])
    return [cmd]


def _is_signed_int(text: str) -> bool:
    return len(text) > 1 and text[0] == "-" and text[1:].isdigit()


def _skip_options(words: list[Word], i: int, spec: tuple[str, str, tuple[str, ...], tuple[str, ...]], cmd: Command,
                  name: str) -> int | None:
    """Index of the first word after ``name``'s options, or None (uncertain, reason noted)."""
    short_flags, short_args, long_flags, long_args = spec
    n = len(words)
    while i < n:
        w = words[i]
        text = w.text
        if w.dynamic:
            cmd.uncertain.append(f"{name} argument is an expansion")
            return None
        if text == "--":
            return i + 1
        if not text.startswith("-") or text == "-":
            if text == "-" and name == "env":
                i += 1
                continue
            return i
        if name == "nice" and _is_signed_int(text):
            i += 1
            continue
        if text.startswith("--"):
            key, eq, _ = text[2:].partition("=")
            if key in long_flags or (eq and key in long_args) or (name == "sudo" and key == "preserve-env"):
                i += 1
            elif key in long_args:
                i += 2
            elif name == "env" and key == "split-string":
                cmd.uncertain.append("env --split-string re-splits its argument")
                return None
            else:
                cmd.uncertain.append(f"unrecognised {name} option {text}")
                return None
            continue
        k = 1
        consumed_next = False
        while k < len(text):
            ch = text[k]
            if ch in short_args:
                if k + 1 == len(text):
                    consumed_next = True
                break
            if ch == "S" and name == "env":
                cmd.uncertain.append("env -S re-splits its argument")
                return None
            if ch not in short_flags:
                cmd.uncertain.append(f"unrecognised {name} option -{ch}")
                return None
            k += 1
        i += 2 if consumed_next else 1
    return i


def _shell_payload(words: list[Word], i: int, cmd: Command) -> str | None:
    """The ``-c`` string of ``sh|bash … -c STRING``; None when there is none (reason noted)."""
    name = words[i].text.rsplit("/", 1)[-1]
    n = len(words)
    j = i + 1
    if name == "busybox":
        if j < n and words[j].text in ("sh", "ash"):
            j += 1
        else:
            return None
    has_c = False
    while j < n:
        w = words[j]
        text = w.text
        if w.dynamic and (w.quoted or not has_c) and not text.startswith(("-", "+")):
            break  # an operand (the payload or a script name) that is an expansion
        if w.dynamic:
            cmd.uncertain.append(f"{name} option is an expansion")
            return None
        if text == "--" or text == "-":
            j += 1
            break
        if text.startswith("--"):
            if text in ("--rcfile", "--init-file"):
                j += 2
            else:
                j += 1
            continue
        if text[:1] in "-+" and len(text) > 1:
            cluster = text[1:]
            if "c" in cluster:
                has_c = True
            j += 1
            if "o" in cluster or "O" in cluster:
                j += 1  # -o pipefail / -O extglob take a value
            continue
        break
    if not has_c:
        return None  # a script file or standard input: read with certainty, resolved as unknown
    if j >= n:
        cmd.uncertain.append(f"{name} -c without a command string")
        return None
    if words[j].dynamic:
        cmd.uncertain.append(f"{name} -c payload is an expansion")
        return None
    cmd.wrappers.append(f"{name} -c")
    return words[j].text


def _nested(outer: Command, payload: str, depth: int) -> list[Command]:
    """Commands of a nested shell payload, carrying the outer command's context."""
    if depth + 1 > MAX_DEPTH:
        outer.uncertain.append(f"shell payloads nested deeper than {MAX_DEPTH}")
        return [outer]
    inner = read(payload, depth + 1)
    commands = inner.commands or [Command([], depth=depth + 1)]
    for cmd in commands:
        cmd.wrappers = outer.wrappers + cmd.wrappers
        cmd.assigns = outer.assigns + cmd.assigns
        cmd.settings = outer.settings + cmd.settings
        cmd.uncertain = outer.uncertain + cmd.uncertain
        if inner.error and inner.error not in cmd.uncertain:
            cmd.uncertain.append(inner.error)
    return commands
