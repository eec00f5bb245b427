"""CLI commands for remembering turns and recalling across tiers, and for explaining what memory knows."""

from __future__ import annotations

import argparse
import contextlib
from typing import Any

from hermes_memory.cli import _records as show
from hermes_memory.cli._common import add_global_options, emit, with_api


def register(sub: Any) -> None:
    p = sub.add_parser("remember", help="remember a message (queued durably, then extracted and indexed)")
    add_global_options(p)
    p.add_argument("text")
    p.add_argument("--session", default="cli")
    p.add_argument("--speaker")
    p.add_argument("--role", choices=["user", "assistant"], default="user")
    p.add_argument("--time", help="Unix seconds or ISO-8601 (default now)")
    p.set_defaults(handler=_remember)

    p = sub.add_parser("recall", help="what memory knows about a query, from every tier, ranked")
    add_global_options(p)
    p.add_argument("query")
    p.add_argument("--limit", type=int, default=10)
    p.add_argument("--tiers", nargs="+", choices=["tier1", "tier2", "tier3", "graph"])
    p.add_argument("--as-of", type=float, help="Unix time: what was believed then")
    p.add_argument("--budget", type=int, help="token budget of the rendered block")
    p.set_defaults(handler=_recall)

    p = sub.add_parser("why", help="where a fact came from: source turns, extractor, what it superseded")
    add_global_options(p)
    p.add_argument("uuid")
    p.set_defaults(handler=lambda a: with_api(a, lambda api: emit(a, api.why(a.uuid), _why)))

    p = sub.add_parser("history", help="every fact about a subject, superseded ones included")
    add_global_options(p)
    p.add_argument("subject")
    p.set_defaults(handler=lambda a: with_api(a, lambda api: emit(a, api.fact_history(a.subject), _history)))

    p = sub.add_parser("contradictions", help="facts closed by a contradicting newer fact")
    add_global_options(p)
    p.add_argument("--limit", type=int, default=50)
    p.set_defaults(
        handler=lambda a: with_api(a, lambda api: emit(a, api.contradictions(a.limit), _contradictions))
    )


def _remember(args: argparse.Namespace) -> int:
    when: Any = args.time
    if when is not None:
        with contextlib.suppress(ValueError):  # ISO-8601 text stays text; the API parses and validates it
            when = float(when)

    def run(api: Any) -> int:
        env = api.remember_message(args.text, args.session, when, role=args.role, speaker=args.speaker)
        if env["success"]:
            flushed = api.flush(60)
            if not flushed["success"]:
                return emit(args, flushed)
        return emit(args, env, lambda d: f"remembered turn {d['turn_id']}")

    return with_api(args, run)


def _recall(args: argparse.Namespace) -> int:
    return with_api(args, lambda api: emit(
        args, api.recall(args.query, args.tiers, args.limit, args.as_of, args.budget),
        lambda d: d["rendered"] or "(nothing recalled)",
    ))  # fmt: skip


def _why(d: dict[str, Any]) -> str:
    lines = [
        show.fact_line(d["fact"]),
        f"  learned {show.when(d['learned_at'])} by {d['extractor']} "
        f"(confidence {d['confidence']:.2f}, source {d['source']['type']} {d['source']['id'] or ''})",
    ]
    for ep in d["source_episodes"]:
        lines.append(
            f"  from turn {show.when(ep.get('timestamp'))} {ep.get('speaker') or ''}: {ep.get('text', '')}"
        )
    if d["superseded_by"]:
        lines.append(f"  superseded by: {d['superseded_by'].get('content')}")
    for old in d["supersedes"]:
        lines.append(f"  supersedes: {old['content']}")
    return "\n".join(lines)


def _history(rows: list[dict[str, Any]]) -> str:
    return "\n".join(f"[{r['status']}] {show.fact_line(r)}" for r in rows) or "(no facts)"


def _contradictions(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "(no contradictions)"
    return "\n".join(
        f"{show.when(r['superseded_at'])}  {r['old']['content']}  ->  {(r['new'] or {}).get('content')}"
        for r in rows
    )
