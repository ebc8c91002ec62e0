"""Entry point. ``yupana hook …`` dispatches without touching the cold path.

Hook invocations are parsed by hand (argparse alone imports :mod:`re` and gettext). A client
hook can never exit non-zero: an argument this version does not understand, or any exception
escaping a hook, is a stderr line and an allow (exit 0, empty stdout). A git hook
(``pre-push``) exits 1 only when its runtime says to refuse the push, and 0 on every fault.
Every other command is looked up in :data:`COMMANDS` and imported only when it is the one
asked for.
"""

from __future__ import annotations

import os
import sys

from yupana.hooks.registry import HOOKS, HookArgs as HookArgs  # HookArgs: this module's API too

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    import argparse
    from typing import NoReturn, Protocol

    from _typeshed import SupportsWrite

    class Flushable(Protocol):
        def flush(self) -> None: ...

# name -> (module, one-line summary). Each module defines add_arguments(parser) and run(args).
COMMANDS = {
    "project": ("yupana.commands.project", "refresh the projection from the store; --dump shows the cache"),
    "status": ("yupana.commands.status", "policy mode, rule set state, cache age and hook health"),
    "explain": ("yupana.commands.explain", "explain the decision for a hook payload read on stdin"),
    "shapes": ("yupana.commands.shapes", "validate RDF data against the SHACL shapes (for the store's CI)"),
    "test": ("yupana.commands.rule_tests", "catalogue unit tests: *.test.toml cases through the real hooks (store CI)"),
    "verify": ("yupana.commands.verify", "verify a proposed Rust buffer (tree-sitter tier)"),
    "ci-select": ("yupana.commands.ci_select", "the local commands the governed CI map selects for the outgoing change"),
    "report": ("yupana.commands.report", "the advise readout: would-deny, warned, failed open, per rule, tenant, "
                                         "repo or client, from one or many hosts' spools"),
    "metrics": ("yupana.commands.metrics", "hook health and the rule set in OpenMetrics text (node_exporter textfile)"),
    "config": ("yupana.commands.config", "check the configuration or print the resolved snapshot"),
    "landing": ("yupana.commands.landing", "verify signed landing certifications; create their signing key"),
    "diff": ("yupana.commands.diff", "what changed between two catalogues: rules added, removed, changed field by field"),
    "replay": ("yupana.commands.replay", "what a candidate catalogue would change on the captured hook inputs: the flips, "
                                         "per rule, tenant, repo and client"),
    "bundle": ("yupana.commands.bundle", "sign the validated projection into one bundle a fleet fetches (build, keygen)"),
    "install": ("yupana.commands.install", "register yupana's hooks with a coding client (`yupana install --help` "
                                           "lists them; trusted where the client asks for it), or git's pre-push hook"),
    "uninstall": ("yupana.commands.install.uninstall", "remove yupana's hooks (only ours) from a coding client or git"),
    "refresh-worker": ("yupana.workers.refresh_worker", "internal: the detached single-flight refresher"),
    "exposure-worker": ("yupana.workers.exposure_worker", "internal: the detached repository-exposure lookup"),
    "disk-flush": ("yupana.workers.disk_flush", "internal: write queued disk-impact samples to the store"),
}
INTERNAL_COMMANDS = ("refresh-worker", "exposure-worker", "disk-flush")
UNRECORDED_COMMANDS = INTERNAL_COMMANDS + ("explain",)  # explain is a dry run: it writes nothing to the spool

GLOBAL_VALUE_FLAGS = ("--tenant", "--config")
GLOBAL_BOOL_FLAGS = ("--json", "--quiet", "--verbose")
# What each global flag means; a command takes only those it declares in its GLOBAL_FLAGS (and
# they may come before or after the command word). A hook takes --tenant and --config; it
# accepts the others and ignores them (its output is its client's protocol, and refusing a
# flag would mean allowing the tool call).
GLOBAL_HELP = {
    "--json": "machine-readable output (docs/json.md)",
    "--quiet": "no progress lines: only results and errors",
    "--verbose": "every progress stage on stderr as it starts, even when piped",
    "--tenant": "tenant/role id (default: $BOBBIN_ROLE)",
    "--config": "config file replacing discovery (must exist)",
}
HOOK_FLAGS = ("--tenant", "--config")
CLOSED_PIPE = 141  # 128 + SIGPIPE: the status a shell reports for a filter whose reader went away


def parse_hook_argv(argv: list[str]) -> HookArgs:
    """Parse ``[globals] hook EVENT [flags]``; ValueError says what was not understood."""
    event = None
    values: dict[str, str] = {}
    flags: set[str] = set()
    positional: list[str] = []
    seen_hook = False
    i = 0
    while i < len(argv):
        arg = argv[i]
        name, eq, inline = arg.partition("=")
        if event is not None and len(positional) < _positional(event) and not arg.startswith("-"):
            positional.append(arg)  # git's arguments, verbatim (git refuses a remote name or URL that starts with "-")
        elif name in GLOBAL_VALUE_FLAGS or name == "--client":  # --client: a hook's own (yupana.clients)
            if eq:
                values[name] = inline
            elif i + 1 < len(argv):
                i += 1
                values[name] = argv[i]
            else:
                raise ValueError(f"{name} needs a value")
        elif arg in GLOBAL_BOOL_FLAGS:
            flags.add(arg)
        elif arg == "hook" and not seen_hook:
            seen_hook = True
        elif seen_hook and event is None and not arg.startswith("-"):
            event = arg
        else:
            raise ValueError(f"unexpected argument {arg!r}")
        i += 1
    if event is None:
        raise ValueError(f"missing hook event ({', '.join(HOOKS)})")
    if event not in HOOKS:
        raise ValueError(f"unknown hook event {event!r} (this version knows {', '.join(HOOKS)})")
    args = HookArgs(event)
    args.tenant = values.get("--tenant") or os.environ.get("BOBBIN_ROLE") or None
    args.config = values.get("--config")
    args.json = "--json" in flags
    args.quiet = "--quiet" in flags
    args.verbose = "--verbose" in flags
    args.positional = positional
    args.client = values.get("--client")
    return args


def _positional(event: str) -> int:
    row = HOOKS.get(event)
    return row.positional if row is not None else 0


def run_hook(argv: list[str]) -> int:
    """Run a hook; whatever happens, exit 0 (never 2: that is Claude Code's block channel) —
    except a git hook whose runtime refuses (exit 1: git's "do not push")."""
    import gc

    # A hook is a short process that frees nothing it could not free at exit: the cyclic
    # collector's passes over every imported object (~0.5 ms each, several per hook) buy nothing.
    gc.disable()
    try:
        args = parse_hook_argv(argv)
    except ValueError as exc:
        _stderr(f"yupana: hook invocation not understood ({exc}); allowing the tool call")
        return 0
    row = HOOKS[args.event]
    from yupana import hot_import

    hot_import.install()  # the hook's modules from one read (yupana/hot_import.py)
    try:
        code = row.runtime().main(args)
    except BaseException as exc:  # noqa: BLE001 - no crash path may block an agent or a push
        if isinstance(exc, SystemExit) and exc.code in (0, None):
            return 0
        _stderr(f"yupana: hook {args.event} failed ({type(exc).__name__}: {exc}); allowing the tool call")
        return 0
    if row.protocol == "client":
        hot_import.save()  # after the answer and the records: only when a module came the ordinary way
    return 1 if row.protocol == "git" and code == 1 else 0


def _stderr(line: str) -> None:
    try:
        from yupana.redact import redact_text

        os.write(2, (redact_text(line) + "\n").encode("utf-8", "replace"))
    except OSError:
        pass


def command_word(argv: list[str]) -> str | None:
    """The subcommand: the first word that is neither a global flag nor a global flag's value.

    ``yupana status --tenant hook`` is ``status``; ``yupana --tenant t hook pre-edit`` is
    ``hook``. A word that names no command (a newer harness's flag value, say) is not taken
    for one: the scan goes on, so ``yupana --from-the-future x hook pre-edit`` still reaches
    the hook parser, which allows with a stderr line instead of argparse's exit 2.
    """
    i = 0
    while i < len(argv):
        arg = argv[i]
        name, eq, _ = arg.partition("=")
        if name in GLOBAL_VALUE_FLAGS and not eq:
            i += 2
            continue
        if not arg.startswith("-") and (arg in COMMANDS or arg == "hook"):
            return arg
        i += 1
    return None


def entry() -> NoReturn:
    """The process's entry (bin/yupana, ``python -m yupana``): run :func:`main`, then leave.

    A hook has written its one answer and its records (unbuffered ``os.write`` calls) when
    :func:`main` returns, so it leaves without the interpreter's teardown — freeing every module
    (~2 ms of a small pre-edit, benchmarks/scale.py), a 10 MB payload, tree-sitter trees, and the
    codegraph index's closing WAL checkpoint — which the harness would otherwise wait for.
    Nothing buffered is lost: the standard streams are flushed first. Other commands exit
    the ordinary way.
    """
    code = main()
    if command_word(sys.argv[1:]) == "hook":
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # noqa: BLE001 - a closed or broken stream: nothing left to say
                pass
        os._exit(code)
    raise SystemExit(code)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if command_word(argv) == "hook" and "--help" not in argv and "-h" not in argv and "--version" not in argv:
        return run_hook(argv)
    return _run_command(argv)


def _run_command(argv: list[str]) -> int:
    parser = _command_parser(argv)
    try:
        args = parser.parse_args(argv)
    except BrokenPipeError:  # --help or --version written straight into a closed pipe (unbuffered stdout)
        _silence_stdout()
        return CLOSED_PIPE
    except SystemExit as done:  # --help, --version or a usage error: printed; a closed pipe ends it as below
        if _flush(sys.stdout):
            _silence_stdout()
            return CLOSED_PIPE
        return done.code if isinstance(done.code, int) else 2
    from yupana import bytecode

    bytecode.ensure_compiled()
    if not getattr(args, "_run", None):
        parser.print_help()
        return 0 if not argv else 1
    return _execute(args)


def _command_parser(argv: list[str]) -> argparse.ArgumentParser:
    """The parser of ``yupana COMMAND``: every command listed, only the one in ``argv`` loaded
    (its module's arguments); a global flag that command does not honour is refused here."""
    import argparse

    from yupana import __version__

    parser = _parser_class()(
        prog="yupana",
        description="Governance-plane client for fleets of AI coding agents.",
        epilog="commands:\n"
        + "\n".join(f"  {name:<15}{summary}" for name, (_, summary) in COMMANDS.items() if name not in INTERNAL_COMMANDS)
        + f"\n  hook EVENT     run a hook ({', '.join(HOOKS)}); reads the payload (git: the pushed refs) on stdin",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"yupana {__version__}")
    _add_globals(parser, tuple(GLOBAL_HELP), top=True)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    wanted = command_word(argv)
    honoured: tuple[str, ...] = ()
    for name, (module_name, summary) in COMMANDS.items():
        p = sub.add_parser(name, help=summary, description=summary)
        if name == wanted:
            module = __import__(module_name, fromlist=["run"])
            honoured = module.GLOBAL_FLAGS
            _add_globals(p, tuple(GLOBAL_HELP), shown=honoured)  # the others parse, to be refused by name below
            module.add_arguments(p)
            p.set_defaults(_run=module.run)
    hook = sub.add_parser("hook", help="run a hook", description="Run a hook; reads the payload on stdin.",
                          epilog="events:\n" + "\n".join(f"  {h.name:<11}{h.event:<13}{h.description}"
                                                         for h in HOOKS.values())
                          + "\n\n--json, --quiet and --verbose are accepted and ignored: a hook's stdout is its "
                            "client's protocol",
                          formatter_class=argparse.RawDescriptionHelpFormatter)
    _add_globals(hook, tuple(GLOBAL_HELP), shown=HOOK_FLAGS)
    hook.add_argument("event", choices=sorted(HOOKS))
    if wanted in COMMANDS:  # a global flag the command does nothing with, before or after its word
        for flag in _global_flags_in(argv):
            if flag not in honoured:
                takes = f"only {', '.join(honoured)}" if honoured else "none"
                parser.error(f"{flag} does nothing for `yupana {wanted}` (of the global flags it takes {takes})")
    return parser


def _execute(args: argparse.Namespace) -> int:
    """Run the parsed command: recorded, its output redacted, a closed pipe ended quietly."""
    hook_resolution = args.command == "config" and getattr(args, "action", None) == "snapshot"  # run by hooks
    if args.command not in UNRECORDED_COMMANDS and not hook_resolution:
        from yupana.state import spool

        spool.record("command", {"cmd": args.command})
    from yupana.redact import RedactingStream

    streams = sys.stdout, sys.stderr
    for stream in streams:  # a lone surrogate (a JSON ``\ud800`` escape in a payload) is shown as its escape:
        reconfigure = getattr(stream, "reconfigure", None)  # in --json, the very escape JSON reads back
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")
    sys.stdout, sys.stderr = RedactingStream(sys.stdout), RedactingStream(sys.stderr)  # no command prints a secret
    try:
        code = int(args._run(args) or 0)
    except KeyboardInterrupt:
        code = 130
    except BrokenPipeError:  # the reader went away (`yupana … | head`): stop quietly, as a Unix filter does
        code = CLOSED_PIPE
    except Exception:  # noqa: BLE001 - the traceback Python would print, through the redacting stderr
        # (same exit status)
        import traceback

        traceback.print_exc()
        code = 1
    finally:
        closed = _flush(sys.stdout)  # what is still buffered meets the closed pipe here (stdout is a pipe)
        _flush(sys.stderr)
        sys.stdout, sys.stderr = streams
    if code == CLOSED_PIPE or closed:
        _silence_stdout()
        return CLOSED_PIPE
    return code


def _flush(stream: Flushable) -> bool:
    """Flush ``stream``; True when its reader has gone away."""
    try:
        stream.flush()
    except BrokenPipeError:
        return True
    except (OSError, ValueError):
        pass
    return False


def _parser_class() -> type[argparse.ArgumentParser]:
    """ArgumentParser whose help and usage writes let a closed pipe through as BrokenPipeError.

    Some builds of Python 3.11 swallow OSError in ``_print_message`` (so ``yupana --help | head -0``
    would exit 0), others raise it: one behaviour everywhere, ended by :data:`CLOSED_PIPE`.
    Subparsers take the class of their parent. (argparse is imported here: never on a hook's path.)"""
    import argparse

    class Parser(argparse.ArgumentParser):
        def _print_message(self, message: str, file: SupportsWrite[str] | None = None) -> None:
            if message:
                (file or sys.stderr).write(message)

    return Parser


def _global_flags_in(argv: list[str]) -> list[str]:
    """The global flags given in ``argv`` (``--config X`` and ``--config=X`` alike), up to ``--``."""
    found = []
    for arg in argv:
        if arg == "--":
            break
        name = arg.partition("=")[0]
        if name in GLOBAL_HELP and (name in GLOBAL_VALUE_FLAGS or name == arg):
            found.append(name)
    return found


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's exit-time flush meets no closed pipe."""
    stdout = sys.__stdout__
    if stdout is None:  # no stdout at all: nothing to flush
        return
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)  # file descriptor 1: whatever object sys.stdout is now
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


def _add_globals(parser: argparse.ArgumentParser, flags: tuple[str, ...], top: bool = False, shown: tuple[str, ...] | None = None) -> None:
    """The global ``flags`` on ``parser``: on the top-level parser with their defaults, on a
    command's parser without (so a flag given before the command word is not reset after it);
    only those in ``shown`` (default: all) are listed in its ``--help``."""
    import argparse

    for flag in flags:
        bool_flag = flag in GLOBAL_BOOL_FLAGS
        default = (False if bool_flag else None) if top else argparse.SUPPRESS
        listed = shown is None or flag in shown
        text = GLOBAL_HELP[flag] + (" — for the commands that take it" if top else "")
        parser.add_argument(flag, action="store_true" if bool_flag else "store", default=default,
                            help=text if listed else argparse.SUPPRESS)
