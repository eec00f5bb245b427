"""CLI commands for remembering turns and recalling across tiers, and for explaining what memory knows."""

from __future__ import annotations

import argparse
import contextlib
from typing import Any

from hermes_memory.cli import _records as show
from hermes_memory.cli._common import add_global_options, emit, with_api
from hermes_memory.cli._engram_commands import bitemporal, when


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
    p.add_argument("--limit", type=int, help="hits in all (default 10)")
    p.add_argument("--limit-per-tier", type=int, help="up to this many hits per tier, instead of --limit")
    p.add_argument("--tiers", nargs="+", choices=["tier1", "tier2", "tier3", "graph"])
    p.add_argument("--as-of", type=when, help="Unix time or ISO-8601 (2023-05-08, 2023-05-08T13:56): "
                   "what was believed then")
    p.add_argument("--valid-at", type=when, help="Unix time or ISO-8601: facts true then (as known --as-of)")
    p.add_argument("--budget", type=int, help="token budget of the rendered block")
    p.set_defaults(handler=_recall)

    p = sub.add_parser("why", help="where a fact came from: source turns, extractor, what it superseded")
    add_global_options(p)
    p.add_argument("uuid")
    p.set_defaults(handler=lambda a: with_api(a, lambda api: emit(a, api.why(a.uuid), _why)))

    p = sub.add_parser(
        "history",
        help="every fact about a subject, superseded ones included ('user', 'me', the user's name: the user)",
    )
    add_global_options(p)
    p.add_argument("subject")
    p.set_defaults(
        handler=lambda a: with_api(a, lambda api: emit(a, subject_history(api, a.subject), _history))
    )

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
        args, api.recall(args.query, args.tiers, args.limit, bitemporal(args.as_of, args.valid_at),
                         args.budget, limit_per_tier=args.limit_per_tier),
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


# Words that mean the user when asking about facts (facts about the user have the subject "the user",
# or the user's name when Hermes passed one).
def subject_history(api: Any, subject: str) -> dict[str, Any]:
    """``api.fact_history`` (for the user, ``user``, ``me`` or the user's name, the facts stored under
    every name the user goes by)."""
    return dict(api.fact_history(subject))


def _history(rows: list[dict[str, Any]]) -> str:
    return "\n".join(f"[{r['status']}] {show.fact_line(r)}" for r in rows) or "(no facts)"


def _contradictions(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "(no contradictions)"
    return "\n".join(
        f"{show.when(r['superseded_at'])}  {r['old']['content']}  ->  {(r['new'] or {}).get('content')}"
        for r in rows
    )
