"""``yupana uninstall <client>|git``: remove only yupana's hooks (and what its installer adds with them: Codex's trust entries)."""

from __future__ import annotations

import argparse

from yupana.commands import install


# the global flags (cli.GLOBAL_HELP) this command honours; any other is refused
GLOBAL_FLAGS: tuple[str, ...] = ()


def add_arguments(parser: argparse.ArgumentParser) -> None:
    install.add_arguments(parser)


def run(args: argparse.Namespace) -> int:
    return install.apply(args, install=False)
