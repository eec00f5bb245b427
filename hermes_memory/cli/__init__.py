"""The `hermes-memory` command line."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from hermes_memory.cli import _tier_commands, demo
from hermes_memory.cli._common import EXIT_USAGE, guarded


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hermes-memory", description="Tiered, local-first memory for Hermes Agent."
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    demo.register(sub)
    _tier_commands.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    return guarded(handler, args)


__all__ = ["build_parser", "main"]
