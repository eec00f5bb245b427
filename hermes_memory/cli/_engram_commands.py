"""CLI commands of the Engram seed: batch remember, fact triples with valid time, bitemporal ``as-of``,
the agents sharing the store, and the LLM's compress and reflect."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from hermes_memory.cli import _records as show
from hermes_memory.cli._common import add_global_options, emit, with_api
from hermes_memory.errors import ValidationError


def when(text: str) -> float | str:
    """A time argument: Unix seconds as a number, anything else (ISO-8601: ``2023-05-08``,
    ``2023-05-08T13:56``) as text for the API to parse and check."""
    try:
        return float(text)
    except ValueError:
        return text


def bitemporal(known: float | str | None, valid: float | str | None) -> Any:
    """``--as-of`` (system time) and ``--valid-at`` (world time) as the API's ``as_of``."""
    return known if valid is None else {"valid": valid, "known": known}


def register(sub: Any) -> None:
    p = sub.add_parser("observe-many", help="remember many messages/turns from a JSON file, all or nothing")
    add_global_options(p)
    p.add_argument("file", help="a JSON list of {text, speaker?, role?} or {user?, assistant?} items "
                   "('-': stdin)")
    p.add_argument("--session", default="cli")
    p.set_defaults(handler=_observe_many)

    p = sub.add_parser("assert-fact", help="store a fact triple with its valid time")
    add_global_options(p)
    p.add_argument("subject")
    p.add_argument("predicate")
    p.add_argument("object")
    p.add_argument("--valid-from", type=when, help="Unix time or ISO-8601 (default now)")
    p.add_argument("--valid-to", type=when, help="Unix time or ISO-8601 (default open)")
    p.add_argument("--confidence", type=float, default=1.0)
    p.set_defaults(handler=_assert_fact)

    p = sub.add_parser("as-of", help="facts true at a valid time as known at a known time (bitemporal)")
    add_global_options(p)
    p.add_argument("--valid", type=when, help="world time: what was true then (default: --known)")
    p.add_argument("--known", type=when, help="system time: what memory knew then (default now)")
    p.add_argument("--subject")
    p.add_argument("--query")
    p.add_argument("--limit", type=int, default=50)
    p.set_defaults(handler=_as_of)

    p = sub.add_parser("list-agents", help="the agents (scopes) sharing this store, and which this one reads")
    add_global_options(p)
    p.set_defaults(handler=lambda a: with_api(a, lambda api: emit(a, api.list_agents(), _agents)))

    p = sub.add_parser("compress", help="summarise old turns of a session or period into summary facts (LLM)")
    add_global_options(p)
    p.add_argument("--session")
    p.add_argument("--before", type=when, help="Unix time or ISO-8601 (default: older than 7 days)")
    p.add_argument("--batch-size", type=int, default=20)
    p.add_argument("--limit", type=int, default=200)
    p.set_defaults(handler=_compress)

    p = sub.add_parser("reflect", help="insights over recent turns, stored as facts citing them (LLM)")
    add_global_options(p)
    p.add_argument("--session")
    p.add_argument("--limit", type=int, default=50)
    p.set_defaults(
        handler=lambda a: with_api(a, lambda api: emit(a, api.reflect(a.session, limit=a.limit), _written))
    )


def _observe_many(args: argparse.Namespace) -> int:
    import sys

    try:
        raw = sys.stdin.read() if args.file == "-" else Path(args.file).read_text(encoding="utf-8")
        items = json.loads(raw)
    except (OSError, ValueError) as exc:
        raise ValidationError(f"cannot read the items from {args.file}: {exc}") from exc

    def run(api: Any) -> int:
        env = api.observe_many(items, args.session)
        if env["success"]:
            flushed = api.flush(60)
            if not flushed["success"]:
                return emit(args, flushed)
        return emit(args, env, lambda d: f"queued {d['queued']} of {len(d['turns'])} turn(s)")

    return with_api(args, run)


def _assert_fact(args: argparse.Namespace) -> int:
    def run(api: Any) -> int:
        env = api.assert_fact(args.subject, args.predicate, args.object, args.valid_from, args.valid_to,
                              confidence=args.confidence)  # fmt: skip
        return emit(args, env, lambda d: ("stored " if d["created"] else "already known ") + valid_line(d))

    return with_api(args, run)


def _as_of(args: argparse.Namespace) -> int:
    return with_api(args, lambda api: emit(
        args, api.as_of(args.valid, args.known, subject=args.subject, query=args.query, limit=args.limit),
        lambda rows: "\n".join(valid_line(f) for f in rows) or "(no facts)",
    ))  # fmt: skip


def valid_line(f: dict[str, Any]) -> str:
    """A fact's line with its valid time: ``(valid <from> to <to|now>)``."""
    start = show.when(f["valid_from"]) if f.get("valid_from") is not None else "?"
    end = show.when(f["valid_to"]) if f.get("valid_to") is not None else "now"
    return f"{show.fact_line(f)}  (valid {start} to {end})"


def _compress(args: argparse.Namespace) -> int:
    return with_api(args, lambda api: emit(
        args, api.compress(args.session, args.before, batch_size=args.batch_size, limit=args.limit), _written
    ))  # fmt: skip


def _agents(rows: list[dict[str, Any]]) -> str:
    lines = []
    for row in rows:
        mark = " (this agent)" if row["own"] else ""
        counts = f": {row['episodes']} turns, {row['facts']} facts" if row["readable"] else " (not readable)"
        lines.append(f"{row['scope']}{mark}{counts}")
    return "\n".join(lines) or "(no agents)"


def _written(d: dict[str, Any]) -> str:
    lines = [f"{len(d['facts'])} fact(s) from {d['episodes']} turn(s)"]
    lines += [show.fact_line(f) for f in d["facts"]]
    lines += [f"failed ({f['session_id']}): {f['error']}" for f in d["failed"]]
    return "\n".join(lines)


__all__ = ["bitemporal", "register", "valid_line", "when"]
