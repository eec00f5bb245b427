"""CLI commands for a store shared by the people of a Hermes gateway: the privacy mode in force,
splitting a store that mixed people, and assigning a quarantined session to its person."""

from __future__ import annotations

import argparse
from typing import Any

from hermes_memory.audience import QUARANTINE_SCOPE, Sharing
from hermes_memory.cli._common import add_global_options, emit, open_api
from hermes_memory.core import people_split
from hermes_memory.scoping import check_scope_name


def register(sub: Any) -> None:
    p = sub.add_parser("people", help="gateway people: privacy mode, split a mixed store, assign quarantine")
    people = p.add_subparsers(dest="people_command", required=True)
    q = people.add_parser("mode", help="the privacy mode in force and what is shared")
    add_global_options(q)
    q.set_defaults(handler=_mode)
    q = people.add_parser(
        "split", help="move gateway turns of the local scope to each person's/group's scope"
    )
    add_global_options(q)
    q.add_argument("--dry-run", action="store_true", help="print what would move; change nothing")
    q.set_defaults(handler=_split)
    q = people.add_parser("assign", help=f"move a session of scope '{QUARANTINE_SCOPE}' to a scope")
    add_global_options(q)
    q.add_argument("session_id")
    q.add_argument("scope", help="e.g. user:telegram:111 or group:telegram:-100")
    q.set_defaults(handler=_assign)


def mode_lines(per_user: bool, sharing: Sharing, read_also: tuple[str, ...]) -> list[str]:
    """What a gateway's people share, in words (status, doctor and ``people mode`` print it)."""
    if not per_user:
        return [
            "people: ONE memory for everyone (scope.per_user: false): every person's turns are "
            "recalled into every other person's session"
        ]
    out = ["people: private (each person and each group chat has its own memory)"]
    for name, handles in sharing.people.items():
        out.append(f"linked: {name} = {', '.join(handles)}")
    for pool in sharing.pools:
        out.append(
            f"WARNING shared pool '{pool.name}': facts of {', '.join(pool.members) or 'nobody'} are "
            f"read by them and by {', '.join(pool.readers) or 'no one else'}"
        )
    if read_also:
        out.append(f"WARNING scope.read_also: every session also reads {', '.join(read_also)}")
    return out


def _mode(args: argparse.Namespace) -> int:
    with open_api(args) as api:
        scope = api.config.scope
        lines = mode_lines(scope.per_user, Sharing.of(scope.people, scope.pools), scope.read_also)
    print("\n".join(lines))
    return 0


def _split(args: argparse.Namespace) -> int:
    with open_api(args) as api:
        scope = api.config.scope
        report = people_split.split(
            api.tier2, api.scope, Sharing.of(scope.people, scope.pools), dry_run=args.dry_run
        )
    return emit(
        args,
        {"success": True, "data": report.to_dict(), "error": None, "meta": {}},
        lambda _d: "\n".join(report.lines()),
    )


def _assign(args: argparse.Namespace) -> int:
    target = check_scope_name(args.scope, "scope")
    with open_api(args) as api:
        moved = people_split.assign(api.tier2, args.session_id, target)
    print(", ".join(f"{count} {table}" for table, count in moved.items()) + f" moved to {target}")
    return 0
