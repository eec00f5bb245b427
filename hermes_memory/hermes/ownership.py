"""Whether ``hermes_memory`` and the ``hermes-memory`` command belong to this distribution.

Installing another project that ships the same import package or command overwrites the files of
whichever came first, silently. ``clashes`` names the other distribution and the one command that
puts this one back: uninstall the other, then reinstall this one over what it left.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import metadata

from hermes_memory._dist import COMMAND, DIST_NAME, PACKAGE, SUMMARY
from hermes_memory.hermes.interpreter import pip_args


@dataclass(frozen=True)
class Owners:
    """Which installed distributions claim the import package and the command, each with its summary."""

    package: Mapping[str, str]
    command: Mapping[str, str]


@dataclass(frozen=True)
class Clash:
    problem: str
    fix: str


def normalize(name: str) -> str:
    """A distribution name as the index compares them (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def is_ours(name: str, summary: str) -> bool:
    """This project, under its name or an earlier one (the same summary)."""
    return normalize(name) == DIST_NAME or summary == SUMMARY


def _summary(name: str) -> str:
    try:
        return str((metadata.metadata(name).get_all("Summary") or [""])[0])
    except metadata.PackageNotFoundError:  # listed by a stale record: nothing to read
        return ""


def installed_owners() -> Owners:
    """What this Python's installed distributions say about ``hermes_memory`` and ``hermes-memory``."""
    package = metadata.packages_distributions().get(PACKAGE, [])
    command = [ep.dist.name for ep in metadata.entry_points(group="console_scripts", name=COMMAND) if ep.dist]
    return Owners(
        package={name: _summary(name) for name in dict.fromkeys(package)},
        command={name: _summary(name) for name in dict.fromkeys(command)},
    )


def fix_command(python: str, others: Sequence[str]) -> str:
    """Uninstall ``others`` from ``python``, then reinstall this distribution over what they left."""
    quoted = " ".join(shlex.quote(name) for name in others)
    target = " ".join(shlex.quote(arg) for arg in pip_args([], pin_torch=False))
    py = shlex.quote(python)
    return f"{py} -m pip uninstall -y {quoted} && {py} -m pip install --force-reinstall --no-deps {target}"


def clashes(owners: Owners, python: str, where: str = "this Python") -> list[Clash]:
    """One clash per thing another distribution claims, each with the command that fixes it."""
    found: list[Clash] = []
    for what, claimed in ((f"the import package {PACKAGE}", owners.package),
                          (f"the `{COMMAND}` command", owners.command)):  # fmt: skip
        others = [name for name, summary in claimed.items() if not is_ours(name, summary)]
        if others:
            found.append(
                Clash(
                    f"in {where}, {what} belongs to another distribution ({', '.join(others)}), "
                    f"not {DIST_NAME}: one of them overwrote the other's files",
                    fix_command(python, others),
                )
            )
    return found


__all__ = ["Clash", "Owners", "clashes", "fix_command", "installed_owners", "is_ours", "normalize"]
