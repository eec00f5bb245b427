"""CLI commands over Tier 3: index, search, hybrid, reindex."""

from __future__ import annotations

import argparse
from typing import Any

from hermes_memory.cli._common import CommandError, add_global_options, emit, open_api
from hermes_memory.cli._progress import ProgressBar
from hermes_memory.cli._records import when


def hits(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "(no results)"
    return "\n".join(
        f"{r['score']:.3f}  {when(r.get('timestamp'))}  [{r['tier']}/{r['kind']}] {r['text'][:160]}"
        for r in rows
    )


def register(sub: Any, *, backends: bool = True) -> None:
    """The Tier 3 commands; ``backends=False`` leaves the names out of `reindex --backend` (listing
    them loads the vector backends' registry, numpy included: only `reindex` itself needs them)."""
    p = sub.add_parser("index", help="chunk, embed and index a text (Tier 3)")
    add_global_options(p)
    p.add_argument("text")
    p.add_argument("--source-type", default="document")
    p.add_argument("--session")
    p.set_defaults(handler=_index)

    p = sub.add_parser("search", help="semantic (vector) search over indexed memory (Tier 3)")
    add_global_options(p)
    p.add_argument("query")
    p.add_argument("--limit", type=int, default=10)
    p.add_argument("--min-score", type=float)
    p.add_argument("--session", help="only chunks of this session")
    p.set_defaults(handler=_search)

    p = sub.add_parser("hybrid", help="BM25 + vector search fused by reciprocal rank fusion")
    add_global_options(p)
    p.add_argument("query")
    p.add_argument("--limit", type=int, default=10)
    p.set_defaults(handler=_hybrid)

    p = sub.add_parser("reindex", help="rebuild the vector store from Tier 2 (e.g. to switch backend)")
    add_global_options(p)
    choices = None
    if backends:
        from hermes_memory.tier3.backend import BACKENDS

        choices = list(BACKENDS)
    p.add_argument("--backend", choices=choices, help="the vector backend to rebuild into")
    p.set_defaults(handler=_reindex)


def _index(args: argparse.Namespace) -> int:
    with open_api(args) as api:
        env = api.semantic_index(args.text, args.source_type, args.session)
        return emit(args, env, lambda d: f"indexed {d['chunks']} chunk(s): {', '.join(d['chunk_ids'])}")


def _search(args: argparse.Namespace) -> int:
    filters = {"session_id": args.session} if args.session else None
    with open_api(args) as api:
        _drain(api)
        return emit(args, api.semantic_search(args.query, args.limit, args.min_score, filters), hits)


def _hybrid(args: argparse.Namespace) -> int:
    with open_api(args) as api:
        _drain(api)
        return emit(args, api.semantic_hybrid(args.query, args.limit), hits)


def _drain(api: Any) -> None:
    """Embed whatever is still queued so a search sees every write made so far."""
    env = api.embed_pending()
    if not env["success"]:
        raise CommandError(f"error: {env['error']}")


def _reindex(args: argparse.Namespace) -> int:
    with open_api(args, backend=args.backend) as api:
        env = api.reindex(progress=ProgressBar("reindex"))
        name = args.backend or api.config.tier3.backend

        def render(d: dict[str, Any]) -> str:
            hint = ""
            if args.backend and args.backend != api.config.tier3.backend:
                hint = f"\nset tier3.backend: {args.backend} in your config to use it from now on"
            embedded = f" ({d['embedded']} embedded, the rest reused from Tier 2)"
            into = name if d["search"].startswith("engine") else "Tier 2"
            return f"reindexed {d['upserted']} vectors into {into}{embedded}\nsearch: {d['search']}{hint}"

        return emit(args, env, render)
