"""``yupana verify --file F --buffer B [--json]``: the verify arm's verdict from the command line.

``F`` is the Rust file the buffer would become (it need not exist yet); ``B`` holds the
proposed content (``-`` reads standard input). What differs from ``F`` on disk is what the
"edit" introduces, exactly as in the pre-edit hook; names are resolved against ``F``'s crate,
whose symbol index is built or brought up to date first (cold path: no 100 ms deadline).

Output (``--json``): ``{ok, tier, violations: [{kind, symbol, line, message}], unchecked:
[{symbol, line, reason}]}`` with ``tier`` ``"tree_sitter"``. Exit 1 when there are
violations, 2 when the input cannot be verified at all (not Rust, unreadable buffer), else 0.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from yupana.codegraph.verify import VerifyResult


# the global flags (cli.GLOBAL_HELP) this command honours; any other is refused
GLOBAL_FLAGS: tuple[str, ...] = ("--json",)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """--file, --buffer, --root, --deadline-ms (and the global --json)."""
    parser.add_argument("--file", required=True, help="the Rust file the buffer would replace (may not exist yet)")
    parser.add_argument("--buffer", required=True, help="file holding the proposed content ('-' for stdin)")
    parser.add_argument("--root", default=None, help="project root (default: the one a hook would judge --file under: "
                        "the nearest .bobbin/config.toml above it, else above the cwd, else its git top, else the cwd)")
    parser.add_argument("--deadline-ms", type=int, default=120000,
                        help="give up after this long (default 120000; the hook uses [yupana.policy] deadline_ms)")


def run(args: argparse.Namespace) -> int:
    """Verify the buffer against the file's crate; print the verdict; return the exit code."""
    import json

    from yupana.codegraph import index, parse, verify
    from yupana.edit import payload

    path = os.path.abspath(args.file)
    if parse.language_for_path(path) != "rust":
        return _fail(f"{args.file}: not a Rust file (.rs); the verifier is Rust-only at the tree-sitter tier")
    try:
        if args.buffer == "-":
            buffer = sys.stdin.buffer.read().decode("utf-8")
        else:
            with open(args.buffer, "rb") as fh:
                buffer = fh.read().decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return _fail(f"{args.buffer}: cannot read the proposed buffer ({exc})")
    root = os.path.abspath(args.root) if args.root else _project_root(path)
    os.environ["YUPANA_CODEGRAPH_WATCH"] = "0"  # no edit lands after a command-line verdict
    deadline_at = time.monotonic() + args.deadline_ms / 1000.0
    _build(path, root)
    raw = json.dumps({"cwd": root, "tool_name": "Write", "tool_input": {"file_path": path, "content": buffer}})
    inv = payload.parse(raw.encode("utf-8"))
    if inv is None or not inv.edits:
        return _fail("internal: the buffer could not be turned into an edit")
    result = verify.verify_edit(inv.edits[0], root, deadline_at)
    index.forget()
    if result is None:
        return _fail(f"{args.file}: no verdict (deadline of {args.deadline_ms} ms ran out, or no buffer)")
    if result.unparseable is not None:
        return _fail(f"{args.file}: no verdict (line {result.unparseable} does not parse; nothing was verified)")
    if getattr(args, "json", False):
        from yupana.commands.json_output import emit

        emit("verify", result.as_json(), sort_keys=False)
    else:
        _print_human(args.file, result)
    return 1 if result.violations else 0


def _project_root(path: str) -> str:
    """The root a hook's verify arm would use for ``path`` (yupana.project_root: the nearest
    ``.bobbin/config.toml`` above the file, else above the cwd, else the git top, else the cwd)."""
    from yupana import project_root
    from yupana.edit import payload

    return project_root.for_file(path, os.getcwd(), git_top=payload.git_top).root


def _build(path: str, root: str) -> None:
    """Index the crate of ``path`` whole before verifying (waits for a running builder)."""
    from yupana.codegraph import crate as crates
    from yupana.codegraph import background, store

    try:
        repo = crates.repo_root(path, root)
        c = crates.find(path, repo)
        if background.build(repo, c.dir) is None:  # another builder holds the lock: wait for it briefly
            for _ in range(100):
                time.sleep(0.1)
                if background.build(repo, c.dir) is not None:
                    break
    except (store.StoreError, OSError) as exc:
        print(f"yupana verify: symbol index unavailable ({exc}); names in other files are unchecked",
              file=sys.stderr)


def _print_human(shown: str, result: "VerifyResult") -> None:
    for v in result.violations:
        print(f"{shown}:{v['line']}: {v['kind']}: {v['message']}")
    if result.unchecked:
        print(f"{len(result.unchecked)} reference(s) not checked (tree-sitter tier):")
        for u in result.unchecked[:20]:
            print(f"  line {u['line']}: {u['symbol']} — {u['reason']}")
    if not result.violations:
        print(f"{shown}: no unresolved references introduced (tier {result.tier})")


def _fail(message: str) -> int:
    print(f"yupana verify: {message}", file=sys.stderr)
    return 2
