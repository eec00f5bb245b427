"""The `hermes-memory` command line."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

from hermes_memory import __version__
from hermes_memory.cli import (
    _doctor_mcp_commands,
    _engram_commands,
    _graph_commands,
    _haema_commands,
    _hermes_commands,
    _maintenance_commands,
    _memory_commands,
    _ops_commands,
    _people_commands,
    _tier3_commands,
    _tier_commands,
    _ui_commands,
    demo,
)
from hermes_memory.cli._common import EXIT_OK, EXIT_USAGE, add_global_options, check_global_options, guarded
from hermes_memory.cli._help import fill_help


class _Parser(argparse.ArgumentParser):
    """Usage errors are one line on stderr (exit 2), like every other CLI error."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see --help)\n")


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The whole command line. Given the ``argv`` it will parse, it leaves out what only another
    command needs and is slow to load (the vector backends' names: `reindex`)."""
    # Sub-parsers inherit the parser class, so every level reports usage errors the same way.
    parser = _Parser(
        prog="hermes-memory",
        description="Tiered, local-first memory for Hermes Agent. Global options (--home/--hermes-home, "
        "--profile, --config, --scope, --json) go before or after the command.",
    )
    add_global_options(parser, top=True)
    parser.add_argument("--version", action="version", version=f"hermes-memory {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    demo.register(sub)
    _tier_commands.register(sub)
    _tier3_commands.register(sub, backends=argv is None or "reindex" in argv)
    _graph_commands.register(sub)
    _memory_commands.register(sub)
    _haema_commands.register(sub)
    _engram_commands.register(sub)
    _hermes_commands.register(sub)
    _maintenance_commands.register(sub)
    _doctor_mcp_commands.register(sub)
    _ops_commands.register(sub)
    _people_commands.register(sub)
    _ui_commands.register(sub)
    fill_help(parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return _main(argv)
    except BrokenPipeError:
        # The reader went away (`hermes-memory history user | head -1`): what it wanted was written.
        # Point stdout at /dev/null so the interpreter's final flush does not raise again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return EXIT_OK


def _main(argv: Sequence[str] | None) -> int:
    parser = build_parser(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    misplaced = check_global_options(args)
    if misplaced is not None:
        parser.error(misplaced)
    return guarded(handler, args)


__all__ = ["build_parser", "main"]
