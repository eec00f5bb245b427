"""CLI commands over Tier 1 and Tier 2: fact, entity, timeline, curated, stats, inspect."""

from __future__ import annotations

import argparse
import json
from typing import Any

from hermes_memory.cli import _records as show
from hermes_memory.cli._common import CommandError, add_global_options, emit, with_api
from hermes_memory.cli._engram_commands import bitemporal, when


def _sub(parent: Any, name: str, help_text: str) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = parent.add_parser(name, help=help_text, description=help_text)
    add_global_options(parser)
    return parser


def register(sub: Any) -> None:
    # fact ...
    fact = sub.add_parser("fact", help="store, query, get, update, correct and delete facts (Tier 2)")
    fact_sub = fact.add_subparsers(dest="action", required=True)
    p = _sub(fact_sub, "add", "store a fact")
    p.add_argument("content")
    p.add_argument("--category", default="general")
    p.add_argument("--confidence", type=float, default=1.0)
    p.add_argument("--source", default="user")
    p.add_argument("--ttl-days", type=float)
    p.set_defaults(handler=_fact_add)
    p = _sub(fact_sub, "query", "search facts (full text, BM25)")
    p.add_argument("query", nargs="?")
    p.add_argument("--category")
    p.add_argument("--limit", type=int, default=10)
    p.add_argument("--min-confidence", type=float, default=0.0)
    p.add_argument("--as-of", type=when, help="Unix time or ISO-8601 (2023-05-08, 2023-05-08T13:56): "
                   "what was believed then")
    p.add_argument("--valid-at", type=when, help="Unix time or ISO-8601: facts true then (as known --as-of)")
    p.set_defaults(handler=_fact_query)
    p = _sub(fact_sub, "get", "show one fact")
    p.add_argument("uuid")
    p.set_defaults(
        handler=lambda a: with_api(a, lambda api: emit(a, api.fact_get(a.uuid), lambda d: show.fact_line(d)))
    )
    p = _sub(fact_sub, "update", "change fields of a fact")
    p.add_argument("uuid")
    p.add_argument("--content")
    p.add_argument("--category")
    p.add_argument("--confidence", type=float)
    p.add_argument("--importance", type=float)
    p.set_defaults(handler=_fact_update)
    p = _sub(fact_sub, "correct", "store a correction that supersedes a fact (the old one stays in history)")
    p.add_argument("uuid", help="the fact's uuid (or its first 8 characters)")
    p.add_argument("text", help="the corrected statement (plain text)")
    p.add_argument("--reason", default="corrected", help="why, kept in the audit trail (default: corrected)")
    p.set_defaults(
        handler=lambda a: with_api(
            a,
            lambda api: emit(
                a,
                api.fact_correct(a.uuid, a.text, reason=a.reason),
                lambda d: f"{show.fact_line(d['fact'])}\nreplaces {show.fact_line(d['replaced'])}",
            ),
        )
    )
    p = _sub(fact_sub, "delete", "archive a fact (or remove it with --hard)")
    p.add_argument("uuid")
    p.add_argument("--hard", action="store_true")
    p.set_defaults(
        handler=lambda a: with_api(
            a,
            lambda api: emit(
                a,
                api.fact_delete(a.uuid, soft=not a.hard),
                lambda d: f"deleted {d['uuid']} (soft={d['soft']})",
            ),
        )
    )

    # entity ...
    entity = sub.add_parser("entity", help="ensure, link and query entities (Tier 2)")
    entity_sub = entity.add_subparsers(dest="action", required=True)
    p = _sub(entity_sub, "ensure", "create an entity or return the existing one")
    p.add_argument("name")
    p.add_argument("--type", dest="entity_type", required=True)
    p.add_argument("--alias", action="append", default=[])
    p.add_argument("--description")
    p.set_defaults(
        handler=lambda a: with_api(
            a,
            lambda api: emit(
                a, api.entity_ensure(a.name, a.entity_type, a.alias, a.description), show.entity_line
            ),
        )
    )
    p = _sub(entity_sub, "link", "relate two entities")
    p.add_argument("from_name")
    p.add_argument("relation")
    p.add_argument("to_name")
    p.add_argument("--strength", type=float, default=1.0)
    p.set_defaults(
        handler=lambda a: with_api(
            a,
            lambda api: emit(
                a,
                api.entity_link(a.from_name, a.to_name, a.relation, a.strength),
                lambda d: f"{d['from_name']} -[{d['relation_type']} {d['strength']:.2f}]-> {d['to_name']}",
            ),
        )
    )
    p = _sub(entity_sub, "query", "find entities by name, alias or type")
    p.add_argument("name", nargs="?")
    p.add_argument("--type", dest="entity_type")
    p.add_argument("--limit", type=int, default=10)
    p.set_defaults(
        handler=lambda a: with_api(
            a, lambda api: emit(a, api.entity_query(a.name, a.entity_type, a.limit), show.entities)
        )
    )

    # timeline ...
    timeline = sub.add_parser("timeline", help="add and query dated events (Tier 2)")
    timeline_sub = timeline.add_subparsers(dest="action", required=True)
    p = _sub(timeline_sub, "add", "record an event")
    p.add_argument("title")
    p.add_argument("--type", dest="event_type", default="event")
    p.add_argument("--description")
    p.add_argument("--importance", type=float, default=0.5)
    p.add_argument("--entity", action="append", default=[])
    p.add_argument("--at", type=float, help="Unix time of the event (default now)")
    p.set_defaults(
        handler=lambda a: with_api(
            a,
            lambda api: emit(
                a,
                api.timeline_add(
                    a.event_type, a.title, a.description, a.importance, a.entity, timestamp=a.at
                ),
                lambda d: show.events([d]),
            ),
        )
    )
    p = _sub(timeline_sub, "query", "events in a time range")
    p.add_argument("--start", type=float)
    p.add_argument("--end", type=float)
    p.add_argument("--type", dest="event_type")
    p.add_argument("--entity")
    p.add_argument("--limit", type=int, default=20)
    p.set_defaults(
        handler=lambda a: with_api(
            a,
            lambda api: emit(
                a, api.timeline_query(a.start, a.end, a.event_type, a.limit, entity=a.entity), show.events
            ),
        )
    )

    # curated ...
    curated = sub.add_parser("curated", help="Hermes' curated MEMORY.md / USER.md (Tier 1)")
    curated_sub = curated.add_subparsers(dest="action", required=True)
    p = _sub(curated_sub, "get", "print a store's entries (and which file they were read from)")
    p.add_argument("--store", default="memory", help="memory (MEMORY.md) or user (USER.md)")
    p.set_defaults(handler=lambda a: with_api(a, lambda api: _curated_get(a, api)))
    p = _sub(curated_sub, "add", "append an entry")
    p.add_argument("content")
    p.add_argument("--store", default="memory")
    p.set_defaults(
        handler=lambda a: with_api(
            a, lambda api: emit(a, api.curated_add(a.content, a.store), _curated_result)
        )
    )
    p = _sub(curated_sub, "replace", "replace the entry containing OLD")
    p.add_argument("old")
    p.add_argument("new")
    p.add_argument("--store", default="memory")
    p.set_defaults(
        handler=lambda a: with_api(
            a, lambda api: emit(a, api.curated_replace(a.old, a.new, a.store), _curated_result)
        )
    )
    p = _sub(curated_sub, "remove", "remove the entry containing SUBSTRING")
    p.add_argument("substring")
    p.add_argument("--store", default="memory")
    p.set_defaults(
        handler=lambda a: with_api(
            a, lambda api: emit(a, api.curated_remove(a.substring, a.store), _curated_result)
        )
    )

    p = _sub(sub, "stats", "counts and sizes of every tier")
    p.set_defaults(handler=lambda a: with_api(a, lambda api: emit(a, api.stats(), render_stats)))
    p = _sub(sub, "inspect", "show a record by uuid with its audit trail, or the latest writes")
    p.add_argument("uuid", nargs="?")
    p.add_argument("--limit", type=int, default=20)
    p.set_defaults(handler=_inspect)


def _fact_add(args: argparse.Namespace) -> int:
    def run(api: Any) -> int:
        env = api.fact_store(
            args.content, args.category, args.confidence, args.source, ttl_days=args.ttl_days
        )
        return emit(
            args, env, lambda d: ("stored " if d["created"] else "already known ") + show.fact_line(d)
        )

    return with_api(args, run)


def _fact_query(args: argparse.Namespace) -> int:
    return with_api(
        args,
        lambda api: emit(
            args,
            api.fact_query(args.query, args.category, args.limit, args.min_confidence,
                           as_of=bitemporal(args.as_of, args.valid_at)),
            show.facts,
        ),
    )


def _fact_update(args: argparse.Namespace) -> int:
    fields = {
        k: getattr(args, k)
        for k in ("content", "category", "confidence", "importance")
        if getattr(args, k) is not None
    }
    if not fields:
        raise CommandError("error: give at least one of --content, --category, --confidence, --importance", 2)
    return with_api(args, lambda api: emit(args, api.fact_update(args.uuid, **fields), show.fact_line))


def _curated_get(args: argparse.Namespace, api: Any) -> int:
    from hermes_memory.tier1.curated_store import STORE_FILES

    envelope = api.curated_entries(args.store)
    path = api.config.memories_dir / STORE_FILES[args.store] if args.store in STORE_FILES else None
    if path is not None:
        envelope["meta"]["path"] = str(path)

    def render(entries: list[str]) -> str:
        state = "" if path is None or path.exists() else " (does not exist yet)"
        lines = [f"{args.store} store: {path}{state}"] if path is not None else []
        lines += [f"- {e}" for e in entries] or ["(empty)"]
        return "\n".join(lines)

    return emit(args, envelope, render)


def _curated_result(d: dict[str, Any]) -> str:
    return f"{d['message']} [{d['store']}: {d['usage']}]"


def render_stats(d: dict[str, Any]) -> str:
    lines = [f"profile {d['profile']}"]
    for store, info in d.get("tier1", {}).items():
        lines.append(f"tier1 {store:<6}  {info['entries']} entries, {info['usage']}")
    t2 = d.get("tier2")
    if t2:
        lines.append(
            f"tier2 facts {t2['facts_active']} active / {t2['facts']} stored, entities {t2['entities']}, "
            f"relations {t2['relations']}, events {t2['timeline_events']}, episodes {t2['episodes']}"
        )
        lines.append(
            f"tier2 db {t2['db_engine']} {t2['db_path']} ({t2['db_bytes']:,} bytes, "
            f"schema v{t2['schema_version']}, "
            f"{t2['audit_entries']} audit entries)"
        )
    for key in ("tier3", "graph"):
        if key in d:
            lines.append(f"{key} " + json.dumps(d[key], default=str))
    return "\n".join(lines)


def _inspect(args: argparse.Namespace) -> int:
    def run(api: Any) -> int:
        if args.uuid is None:
            return emit(args, api.audit_log(args.limit), _audit_lines)
        for getter in (api.fact_get,):
            env = getter(args.uuid)
            if env["success"]:  # a short id printed by `history` names the whole uuid
                audit = api.audit_log(args.limit, target_uuid=env["data"]["uuid"])
                env["data"] = {"record": env["data"], "audit": audit["data"]}
                return emit(
                    args, env, lambda d: show.fact_line(d["record"]) + "\n" + _audit_lines(d["audit"])
                )
            if env["meta"].get("error_type") == "invalid_input":  # a prefix several records share
                raise CommandError(f"error: {env['error']}")
        audit = api.audit_log(args.limit, target_uuid=args.uuid)
        if audit["success"] and audit["data"]:
            return emit(args, audit, _audit_lines)
        raise CommandError(f"error: nothing recorded for {args.uuid!r}")

    return with_api(args, run)


def _audit_lines(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "(no audit entries)"
    return "\n".join(
        f"{show.when(r['timestamp'])}  {r['action']:<18} {r['tier']:<6} by {r['actor']:<8} "
        f"{(r['target_uuid'] or '-')[:8]}  {json.dumps(r['diff'], ensure_ascii=False) if r['diff'] else ''}"
        for r in rows
    )


__all__ = ["register"]
