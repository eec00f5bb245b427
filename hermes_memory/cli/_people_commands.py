"""CLI commands for a store shared by the people of a Hermes gateway: the privacy mode in force,
splitting a store that mixed people, and assigning a quarantined session to its person."""

from __future__ import annotations

import argparse
from typing import Any

from hermes_memory.audience import QUARANTINE_SCOPE, Sharing
from hermes_memory.cli._common import CommandError, add_global_options, emit, open_api
from hermes_memory.scoping import check_scope_name

# The commands' own modules load the store's code: imported when a command runs (``--help`` stays light).


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
    q.add_argument("session_id", help="a session whose turns wait in quarantine (see its export)")
    q.add_argument("scope", help="e.g. user:telegram:111 or group:telegram:-100")
    q.set_defaults(handler=_assign)
    q = people.add_parser("forget", help="forget everything of one person or group (--scope NAME)")
    add_global_options(q)
    q.add_argument("--yes", action="store_true", help="really forget (default: show what would go)")
    q.set_defaults(handler=_forget)


def _mode(args: argparse.Namespace) -> int:
    with open_api(args) as api:
        from hermes_memory.hermes.people_status import people_status

        status = people_status(api.config)
    print("\n".join(status.lines))
    for problem, fix in status.problems:
        print(f"problem: {problem}\n  fix: {fix}")
    return 0


def _split(args: argparse.Namespace) -> int:
    with open_api(args) as api:
        scope = api.config.scope
        from hermes_memory.core import people_split

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
        from hermes_memory.core import people_split

        moved = people_split.assign(api.tier2, args.session_id, target)
    print(", ".join(f"{count} {table}" for table, count in moved.items()) + f" moved to {target}")
    return 0


def _forget(args: argparse.Namespace) -> int:
    if not args.scope:
        raise CommandError("error: name the person or group: --scope user:<platform>:<user_id>", 2)
    with open_api(args) as api:
        outcome = api.core.forgetting.forget_scope(confirm=args.yes)
    counts = outcome.counts["tier2"]
    what = ", ".join(f"{n} {k}" for k, n in counts.items() if n)
    print(f"{'forgot' if args.yes else 'would forget'} in scope {args.scope}: {what or 'nothing'}")
    if not args.yes:
        print("run again with --yes to forget it")
    return 0
