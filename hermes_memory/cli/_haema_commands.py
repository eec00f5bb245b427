"""CLI commands of HAEMA's surface: the core memory (show, update), the write API (add) and the latest
slice (newest first, 1-indexed)."""

from __future__ import annotations

import argparse
from typing import Any

from hermes_memory.cli import _records as show
from hermes_memory.cli._common import add_global_options, emit, with_api


def register(sub: Any) -> None:
    p = sub.add_parser("core", help="the core memory (SOUL/TOOLS/RULE/USER): show it, or update it (LLM)")
    add_global_options(p)
    core = p.add_subparsers(dest="core_command", metavar="ACTION", required=True)
    q = core.add_parser("show", help="the core memory as markdown (the bullets, with --json their ids)")
    add_global_options(q)
    q.set_defaults(handler=lambda a: with_api(a, lambda api: emit(a, api.core_memory(), _show)))
    q = core.add_parser(
        "update", help="let the LLM propose a conservative update and apply it if valid (LLM mode)"
    )
    add_global_options(q)
    q.add_argument(
        "--candidate", action="append", dest="candidates", metavar="TEXT",
        help="a candidate memory (repeatable); default: facts learned since the last update",
    )  # fmt: skip
    q.set_defaults(
        handler=lambda a: with_api(a, lambda api: emit(a, api.core_memory_update(a.candidates), _updated))
    )

    p = sub.add_parser(
        "add",
        help="HAEMA's write: store memories, merged with their nearest stored facts (LLM mode: one text "
        "is pre-split into units, replaced facts are retired)",
    )
    add_global_options(p)
    p.add_argument("contents", nargs="+", help="one raw text, or several memory units with --units")
    p.add_argument("--units", action="store_true", help="each argument is already one memory unit")
    p.add_argument("--no-core", action="store_true", help="do not update core memory afterwards")
    p.set_defaults(handler=_add)

    p = sub.add_parser("latest", help="the newest remembered messages, newest first (HAEMA's get_latest)")
    add_global_options(p)
    p.add_argument("--begin", type=int, default=1, help="1-indexed start (1 = the newest)")
    p.add_argument("--count", type=int, default=10, help="how many messages")
    p.set_defaults(handler=lambda a: with_api(a, lambda api: _latest(a, api)))


def _add(args: argparse.Namespace) -> int:
    contents: str | list[str] = list(args.contents) if args.units else " ".join(args.contents)
    return with_api(args, lambda api: emit(args, api.add(contents, update_core=not args.no_core), _added))


def _show(d: dict[str, Any]) -> str:
    return str(d["markdown"]) or "(core memory is empty)"


def _updated(d: dict[str, Any]) -> str:
    if d["updated"]:
        head = f"core memory updated ({len(d['applied'])} change(s))"
    else:
        head = f"core memory unchanged ({d['reason'] or 'nothing to change'})"
    return head + ("\n\n" + d["markdown"] if d["markdown"] else "")


def _added(d: dict[str, Any]) -> str:
    lines = [f"stored: {text}" for text in d["memories"]]
    lines += [f"retired {r['uuid']} (superseded by {r['superseded_by']})" for r in d["retired"]]
    if d["fallback"]:
        lines.append(f"(stored as given: {d['reason']})")
    return "\n".join(lines) or "(nothing to store)"


__all__ = ["register"]


def _latest(args: argparse.Namespace, api: Any) -> int:
    """The newest messages with when and who said them; --json keeps HAEMA's list of texts."""
    if args.json or args.count <= 0 or args.begin < 1:
        return emit(args, api.latest(args.begin, args.count), lambda d: "\n".join(d) or "(nothing)")
    found = api.get_latest(count=min(1000, args.begin - 1 + args.count))
    if not found["success"]:
        return emit(args, found)
    rows = list(reversed(found["data"]))[args.begin - 1 : args.begin - 1 + args.count]

    def render(episodes: list[dict[str, Any]]) -> str:
        return "\n".join(
            f"{show.when(e['timestamp'])}  {e.get('speaker') or e.get('role')}: {e['text']}" for e in episodes
        ) or "(nothing)"

    return emit(args, {**found, "data": rows}, render)
