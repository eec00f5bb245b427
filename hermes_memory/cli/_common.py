"""Shared CLI plumbing: global options, opening the API, printing envelopes, exit codes."""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import sys
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from hermes_memory.errors import HermesMemoryError

if TYPE_CHECKING:
    from hermes_memory.api.memory_api import MemoryAPI
    from hermes_memory.hermes.settings import ResolvedConfig

# The parser is built from this module and the command modules only: the store, the config loader and
# the tiers are imported by a command when it runs (`--help` and a typo answer at once).

EXIT_OK = 0
EXIT_FAILED = 1  # the operation was refused or found nothing (envelope success False)
EXIT_USAGE = 2

Handler = Callable[[argparse.Namespace], int]


class CommandError(Exception):
    """Printed as one line on stderr; the CLI exits with ``code``."""

    def __init__(self, message: str, code: int = EXIT_FAILED):
        super().__init__(message)
        self.code = code


# Options every command that opens the memory takes, before or after the subcommand
# (`hermes-memory --home H stats` and `hermes-memory stats --home H`).
GLOBAL_OPTIONS = ("home", "profile", "config", "scope", "json")
_FLAGS = {
    "home": ("--home", "--hermes-home"),
    "profile": ("--profile",),
    "config": ("--config",),
    "scope": ("--scope",),
    "json": ("--json",),
}
_HELP = {
    "home": "Hermes' home, HERMES_HOME (default: $HERMES_HOME or ~/.hermes); its nextlevel.yaml is read",
    "profile": "memory profile (default: the one Hermes uses for this home, normally 'default')",
    "config": "settings file to use instead of HOME/nextlevel.yaml (that form, or a hermes-memory config)",
    "scope": "the agent scope to act as (default: config 'scope.name'); reads see only it",
    "json": "print the full JSON envelope",
}


def add_global_options(
    parser: argparse.ArgumentParser, names: Iterable[str] = GLOBAL_OPTIONS, *, top: bool = False
) -> None:
    """Add the global options ``names`` to ``parser``.

    On a subcommand their default is "absent" (argparse.SUPPRESS), so a value given before the
    subcommand is not overwritten; the top-level parser holds the real defaults (None / False).
    """
    chosen = tuple(names)
    for name in chosen:
        default: Any = (False if name == "json" else None) if top else argparse.SUPPRESS
        if name == "json":
            parser.add_argument(
                *_FLAGS[name], dest=name, action="store_true", default=default, help=_HELP[name]
            )
        else:
            parser.add_argument(*_FLAGS[name], dest=name, default=default, help=_HELP[name])
    if not top:
        parser.set_defaults(_accepts=frozenset(chosen))


def check_global_options(args: argparse.Namespace) -> str | None:
    """An error message when a global option given before the subcommand does not apply to it."""
    accepts: frozenset[str] = getattr(args, "_accepts", frozenset())
    for name in GLOBAL_OPTIONS:
        if name not in accepts and getattr(args, name, None) not in (None, False):
            return f"{_FLAGS[name][0]} does not apply to '{command_name(args)}'"
    return None


def command_name(args: argparse.Namespace) -> str:
    action = getattr(args, "action", None)
    return f"{args.command} {action}" if isinstance(action, str) else str(args.command)


def resolve(args: argparse.Namespace) -> ResolvedConfig:
    """The configuration Hermes' provider uses for this home (see ``load_memory_config``). Raises
    ValidationError for a bad ``--profile`` or ``--scope`` (they name a directory, an agent)."""
    from hermes_memory.hermes.settings import load_memory_config
    from hermes_memory.scoping import check_scope_name
    from hermes_memory.validation import profile_name

    if getattr(args, "profile", None) is not None:
        profile_name("--profile", args.profile)
    if getattr(args, "scope", None) is not None:
        check_scope_name(args.scope, "--scope")
    home = getattr(args, "home", None)
    if home is not None and not os.path.isdir(os.path.expanduser(str(home))):
        # A typo would otherwise open (and create) an empty store there and report on it.
        raise CommandError(
            f"error: --home {home}: no such directory; for a new memory home create it first "
            f"(mkdir -p {shlex.quote(str(home))})",
            EXIT_USAGE,
        )
    return load_memory_config(
        getattr(args, "home", None),
        config_path=getattr(args, "config", None),
        profile=getattr(args, "profile", None),
    )


def open_api(args: argparse.Namespace, *, backend: str | None = None) -> MemoryAPI:
    from hermes_memory.api.memory_api import MemoryAPI

    return MemoryAPI(resolve(args).config, actor="cli", backend=backend, scope=getattr(args, "scope", None))


def home_flag(args: argparse.Namespace) -> str:
    """`` --hermes-home H`` when a home was given, so printed hints name the same home."""
    home = getattr(args, "home", None)
    return f" --hermes-home {shlex.quote(str(home))}" if home else ""


_HINT = re.compile(r"`hermes-memory ([a-z][a-z0-9-]*(?: [a-z][a-z0-9-]*)?)([^`]*)`")


def with_home(args: argparse.Namespace, text: str) -> str:
    """``text`` with each quoted `hermes-memory <command>` hint repeating the home that was given."""
    flag = home_flag(args)
    if not flag:
        return text

    def add(match: re.Match[str]) -> str:
        rest = match.group(2)
        if "--home" in rest or "--hermes-home" in rest:
            return match.group(0)
        return f"`hermes-memory {match.group(1)}{rest}{flag}`"

    return _HINT.sub(add, text)


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
        raise CommandError(with_home(args, f"error: {envelope['error']}"))
    data = envelope["data"]
    print(render(data) if render is not None else json.dumps(data, ensure_ascii=False, indent=2, default=str))
    # The answer is complete for what was reachable; say what was not, in the words the model reads.
    from hermes_memory.recall.availability import unavailable_note

    unavailable = envelope["meta"].get("tiers_unavailable")
    degraded = envelope["meta"].get("degraded")
    for warning in envelope["meta"].get("warnings") or []:  # e.g. recall's query decomposition failed
        print(with_home(args, f"note: {warning}"), file=sys.stderr)
    if unavailable:
        print(with_home(args, f"note: degraded: {unavailable_note(unavailable)}"), file=sys.stderr)
    elif degraded:
        reasons = degraded if isinstance(degraded, list) else [degraded]
        print(with_home(args, "note: degraded: " + "; ".join(map(str, reasons))), file=sys.stderr)
    return EXIT_OK


def guarded(handler: Handler, args: argparse.Namespace) -> int:
    """Run a handler; typed errors become one line on stderr and a non-zero exit."""
    try:
        return handler(args)
    except CommandError as exc:
        print(with_home(args, str(exc)), file=sys.stderr)
        return exc.code
    except HermesMemoryError as exc:
        print(with_home(args, f"error: {exc}"), file=sys.stderr)
        return EXIT_FAILED


def parse_json_arg(name: str, text: str | None) -> Any:
    if text is None:
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise CommandError(f"error: {name} is not valid JSON: {exc.msg}", EXIT_USAGE) from exc
