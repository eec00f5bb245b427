"""Shared CLI plumbing: global options, opening the API, printing envelopes, exit codes."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any

from hermes_memory.api.memory_api import MemoryAPI
from hermes_memory.errors import HermesMemoryError

EXIT_OK = 0
EXIT_FAILED = 1  # the operation was refused or found nothing (envelope success False)
EXIT_USAGE = 2

Handler = Callable[[argparse.Namespace], int]


class CommandError(Exception):
    """Printed as one line on stderr; the CLI exits with ``code``."""

    def __init__(self, message: str, code: int = EXIT_FAILED):
        super().__init__(message)
        self.code = code


def add_global_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--home", help="HERMES_HOME to use (default: $HERMES_HOME or ~/.hermes)")
    parser.add_argument("--profile", help="memory profile (default: from config, 'default')")
    parser.add_argument("--config", help="a YAML config file merged over the defaults")
    add_scope_option(parser)
    parser.add_argument("--json", action="store_true", help="print the full JSON envelope")


def add_scope_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--scope", help="the agent scope to act as (default: config 'scope.name'); reads see only it"
    )


def open_api(args: argparse.Namespace, *, backend: str | None = None) -> MemoryAPI:
    return MemoryAPI(
        profile=args.profile, hermes_home=args.home, config_path=args.config, actor="cli", backend=backend,
        scope=getattr(args, "scope", None),
    )  # fmt: skip


def with_api(args: argparse.Namespace, fn: Callable[[MemoryAPI], int]) -> int:
    """Open the API for a command, run ``fn`` with it, and close it (also on errors)."""
    with open_api(args) as api:
        return fn(api)


def emit(
    args: argparse.Namespace, envelope: dict[str, Any], render: Callable[[Any], str] | None = None
) -> int:
    """Print an envelope (JSON with --json, else ``render(data)``); return the exit code."""
    if getattr(args, "json", False):
        print(json.dumps(envelope, ensure_ascii=False, indent=2, default=str))
        return EXIT_OK if envelope["success"] else EXIT_FAILED
    if not envelope["success"]:
        raise CommandError(f"error: {envelope['error']}")
    data = envelope["data"]
    print(render(data) if render is not None else json.dumps(data, ensure_ascii=False, indent=2, default=str))
    degraded = envelope["meta"].get("degraded")
    if degraded:  # the answer is complete for what was reachable; say what was not
        print(f"note: degraded: {degraded}", file=sys.stderr)
    return EXIT_OK


def guarded(handler: Handler, args: argparse.Namespace) -> int:
    """Run a handler; typed errors become one line on stderr and a non-zero exit."""
    try:
        return handler(args)
    except CommandError as exc:
        print(str(exc), file=sys.stderr)
        return exc.code
    except HermesMemoryError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_FAILED


def parse_json_arg(name: str, text: str | None) -> Any:
    if text is None:
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise CommandError(f"error: {name} is not valid JSON: {exc.msg}", EXIT_USAGE) from exc
