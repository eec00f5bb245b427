"""The `hermes-memory` command line."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import NoReturn

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
    demo,
)
from hermes_memory.cli._common import EXIT_USAGE, add_global_options, check_global_options, guarded


class _Parser(argparse.ArgumentParser):
    """Usage errors are one line on stderr (exit 2), like every other CLI error."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see --help)\n")


def build_parser() -> argparse.ArgumentParser:
    # Sub-parsers inherit the parser class, so every level reports usage errors the same way.
    parser = _Parser(
        prog="hermes-memory",
        description="Tiered, local-first memory for Hermes Agent. Global options (--home/--hermes-home, "
        "--profile, --config, --scope, --json) go before or after the command.",
    )
    add_global_options(parser, top=True)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    demo.register(sub)
    _tier_commands.register(sub)
    _tier3_commands.register(sub)
    _graph_commands.register(sub)
    _memory_commands.register(sub)
    _haema_commands.register(sub)
    _engram_commands.register(sub)
    _hermes_commands.register(sub)
    _maintenance_commands.register(sub)
    _doctor_mcp_commands.register(sub)
    _ops_commands.register(sub)
    _people_commands.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
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
