"""CLI commands for Hermes Agent: install, uninstall and status of the ``nextlevel`` provider."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from hermes_memory.cli._common import EXIT_FAILED, EXIT_OK, add_global_options, home_flag


def _hermes_python_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--hermes-python",
        help="the Python that runs Hermes (default: the interpreter of the `hermes` command on PATH)",
    )


def register(sub: Any) -> None:
    p = sub.add_parser(
        "install",
        help="install the nextlevel memory provider into Hermes ($HERMES_HOME) and check Hermes' Python",
    )
    add_global_options(p, ("home", "json"))
    p.add_argument(
        "--activate", action="store_true", help="also set memory.provider: nextlevel in config.yaml"
    )
    _hermes_python_option(p)
    p.set_defaults(handler=_install)

    p = sub.add_parser(
        "uninstall",
        help="remove what install created and put config.yaml back as it was (memory data is kept)",
    )
    add_global_options(p, ("home", "json"))
    p.set_defaults(handler=_uninstall)

    p = sub.add_parser(
        "status",
        help="what is installed in Hermes, the settings it uses, what is pending, and whether "
        "the Python Hermes runs in can import it",
    )
    add_global_options(p, ("home", "json"))
    _hermes_python_option(p)
    p.add_argument("--no-check", action="store_true", help="do not start Hermes' Python to check imports")
    p.set_defaults(handler=_status)


def _install(args: argparse.Namespace) -> int:
    from hermes_memory.hermes import install, status

    result = install.install(args.home, activate=args.activate)
    # Does the Python that runs Hermes import this package (and what the settings need)?
    report = status.StatusReport(result.hermes_home, sys.executable, install.package_version())
    status.add_clashes(report)
    report.hermes_command, report.hermes_python = status.find_hermes_python(args.hermes_python)
    extras = install.home_extras(result.hermes_home)
    fix: str | None = None
    problem: str | None = None
    if report.problems:  # another distribution claims this package or its command here
        problem, fix = report.problems[0], report.fixes[0]
    elif report.hermes_python is None:
        problem = "cannot find the Python Hermes runs in (no `hermes` command on PATH)"
        fix = f"hermes-memory install{' --activate' if args.activate else ''}{home_flag(args)} " + (
            "--hermes-python /path/to/hermes/venv/bin/python"
        )
    else:
        from hermes_memory.hermes.interpreter import needed_modules
        from hermes_memory.hermes.settings import load_memory_config

        status.check_interpreter(
            report, needed_modules(load_memory_config(result.hermes_home).config), extras
        )
        if report.problems:
            problem, fix = report.problems[0], report.fixes[0]
    ok = problem is None
    if args.json:
        out: dict[str, Any] = {
            k: str(v) if not isinstance(v, bool | list) else v for k, v in vars(result).items()
        }
        out.update(hermes_python=report.hermes_python, importable=ok, problem=problem, fix=fix)
        out["active"] = ok and result.activated
        print(json.dumps(out))
        return EXIT_OK if ok else EXIT_FAILED
    print(f"installed the nextlevel provider in {result.plugin_dir}")
    print(f"installed the {install.SKILL_NAME} skill in {result.skill_file}")
    for note in result.notes:
        print(note)
    if not ok:
        state = "memory.provider is nextlevel, but" if result.activated else "but"
        print(f"NOT active: {state} {problem}")
        print(f"fix: {fix}")
        return EXIT_FAILED
    info = report.probe.get("hermes_memory", {})
    where = f"Hermes' Python {report.hermes_python} imports hermes_memory {info.get('version', '')}".rstrip()
    if result.activated:
        print(f"active: memory.provider is nextlevel in {result.config_file}; {where}")
    else:
        print(f"ready: {where}")
    print(f"check with: hermes-memory status{home_flag(args)}")
    return EXIT_OK


def _uninstall(args: argparse.Namespace) -> int:
    from hermes_memory.hermes import install

    result = install.uninstall(args.home)
    if args.json:
        print(json.dumps({"hermes_home": str(result.hermes_home), "removed": [str(p) for p in result.removed],
                          "deactivated": result.deactivated, "config": result.config,
                          "notes": result.notes}))  # fmt: skip
        return EXIT_OK
    if not result.removed and not result.deactivated:
        print(f"nothing to remove in {result.hermes_home}")
    for path in result.removed:
        print(f"removed {path}")
    config = result.hermes_home / "config.yaml"
    if result.config == "restored":
        state = "restored as it was before install" if config.exists() else "removed (install had created it)"
        print(f"{config}: {state}")
    elif result.config == "edited":
        print(
            f"{config}: memory.provider put back as before install (the file changed since, so only that key)"
        )
    for note in result.notes:
        print(note)
    return EXIT_OK


def _status(args: argparse.Namespace) -> int:
    from hermes_memory.hermes import status

    report = status.collect(args.home, hermes_python=args.hermes_python, check=not args.no_check)
    if args.json:
        print(json.dumps(report.to_dict(), default=str, indent=2))
    else:
        print(status.render(report))
    return EXIT_OK if report.ok else EXIT_FAILED


__all__ = ["register"]
