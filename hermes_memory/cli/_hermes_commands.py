"""CLI commands for Hermes Agent: install, uninstall and status of the ``nextlevel`` provider."""

from __future__ import annotations

import argparse
import json
from typing import Any

from hermes_memory.cli._common import EXIT_FAILED, EXIT_OK


def register(sub: Any) -> None:
    p = sub.add_parser("install", help="install the nextlevel memory provider into Hermes ($HERMES_HOME)")
    p.add_argument("--hermes-home", help="Hermes' home (default: $HERMES_HOME or ~/.hermes)")
    p.add_argument(
        "--activate", action="store_true", help="also set memory.provider: nextlevel in config.yaml"
    )
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(handler=_install)

    p = sub.add_parser("uninstall", help="remove the nextlevel provider from Hermes (memory data is kept)")
    p.add_argument("--hermes-home", help="Hermes' home (default: $HERMES_HOME or ~/.hermes)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(handler=_uninstall)

    p = sub.add_parser(
        "status", help="what is installed in Hermes, and whether the Python Hermes runs in can import it"
    )
    p.add_argument("--hermes-home", help="Hermes' home (default: $HERMES_HOME or ~/.hermes)")
    p.add_argument("--hermes-python", help="the Python that runs Hermes (default: from the `hermes` command)")
    p.add_argument("--no-check", action="store_true", help="do not start Hermes' Python to check imports")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(handler=_status)


def _install(args: argparse.Namespace) -> int:
    from hermes_memory.hermes import install

    result = install.install(args.hermes_home, activate=args.activate)
    if args.json:
        print(
            json.dumps({k: str(v) if not isinstance(v, bool | list) else v for k, v in vars(result).items()})
        )
        return EXIT_OK
    print(f"installed the nextlevel provider in {result.plugin_dir}")
    print(f"installed the {install.SKILL_NAME} skill in {result.skill_file}")
    if result.activated:
        print(f"active: memory.provider is nextlevel in {result.config_file}")
    for note in result.notes:
        print(note)
    print("check with: hermes-memory status")
    return EXIT_OK


def _uninstall(args: argparse.Namespace) -> int:
    from hermes_memory.hermes import install

    result = install.uninstall(args.hermes_home)
    if args.json:
        print(json.dumps({"hermes_home": str(result.hermes_home), "removed": [str(p) for p in result.removed],
                          "deactivated": result.deactivated, "notes": result.notes}))  # fmt: skip
        return EXIT_OK
    if not result.removed and not result.deactivated:
        print(f"nothing to remove in {result.hermes_home}")
    for path in result.removed:
        print(f"removed {path}")
    if result.deactivated:
        print("memory.provider is now empty (Hermes uses its built-in memory only)")
    for note in result.notes:
        print(note)
    return EXIT_OK


def _status(args: argparse.Namespace) -> int:
    from hermes_memory.hermes import status

    report = status.collect(args.hermes_home, hermes_python=args.hermes_python, check=not args.no_check)
    if args.json:
        print(json.dumps(report.to_dict(), default=str, indent=2))
    else:
        print(status.render(report))
    return EXIT_OK if report.ok else EXIT_FAILED


__all__ = ["register"]
