"""`hermes-memory demo`: the main job on the embedded default, on a small built-in sample."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from hermes_memory.cli import _records as show
from hermes_memory.cli._common import EXIT_OK, CommandError
from hermes_memory.cli._progress import ProgressBar
from hermes_memory.cli._tier3_commands import hits
from hermes_memory.cli._tier_commands import render_stats

# Knowledge a few conversations with a user would leave behind.
SAMPLE_CURATED = [
    ("user", "Maya prefers short answers with code first."),
    ("memory", "Project Atlas deploys from the main branch every Friday."),
]
SAMPLE_ENTITIES = [
    ("Maya Okafor", "person", ["Maya"], "the user; backend engineer"),
    ("Nordlicht Labs", "org", ["Nordlicht"], "Maya's employer, a robotics start-up in Hamburg"),
    ("Atlas", "project", ["Project Atlas"], "fleet-routing service Maya leads"),
    ("Postgres", "tech", ["PostgreSQL"], "Atlas' primary database"),
    ("Python", "tech", [], None),
    ("Lena", "person", [], "Maya's sister"),
    ("Lisbon", "place", [], None),
    ("Hamburg", "place", [], None),
]
SAMPLE_RELATIONS = [
    ("Maya", "works_at", "Nordlicht Labs", 1.0),
    ("Maya", "leads", "Atlas", 0.9),
    ("Atlas", "depends_on", "Postgres", 0.9),
    ("Atlas", "uses", "Python", 0.8),
    ("Maya", "sibling_of", "Lena", 1.0),
    ("Lena", "lives_in", "Lisbon", 0.9),
    ("Nordlicht Labs", "located_in", "Hamburg", 0.8),
]
SAMPLE_FACTS = [
    ("Maya works at Nordlicht Labs as a backend engineer.", "user", 1.0),
    ("Maya adopted a beagle puppy named Biscuit in March.", "user", 0.9),
    ("Atlas stores routes in Postgres 16 with PostGIS.", "project", 0.95),
    ("Atlas is written in Python 3.12 and deployed on Kubernetes.", "project", 0.9),
    ("Maya prefers pytest over unittest.", "preference", 0.85),
    ("Lena, Maya's sister, moved to Lisbon last year.", "relationship", 0.8),
    ("The Atlas team decided to drop Redis in favour of Postgres LISTEN/NOTIFY.", "project", 0.9),
]
SAMPLE_EVENTS = [
    ("2024-03-12", "milestone", "Maya adopted Biscuit", ["Maya"], 0.6),
    ("2024-06-03", "decision", "Atlas drops Redis for Postgres LISTEN/NOTIFY", ["Atlas", "Postgres"], 0.8),
    ("2024-09-20", "milestone", "Atlas 2.0 released", ["Atlas"], 0.9),
]
# Each query with the words of the line it should put first: the demo says whether it did.
QUERIES = {
    "Where does Maya work?": "works at Nordlicht Labs",
    "what database does atlas use": "stores routes in Postgres",
    "dog puppy": "beagle puppy named Biscuit",
}
SEMANTIC_QUERIES = {
    "new dog": "beagle puppy named Biscuit",
    "which datastore backs the routing service": "stores routes in Postgres",
}
HYBRID_QUERIES = {"Maya's dog": "beagle puppy named Biscuit"}
# A short conversation remembered turn by turn (no LLM): extraction, bitemporal facts, recall.
SAMPLE_TURNS = [
    ("2024-01-15T09:00:00", "I live in Hamburg and I work at Nordlicht Labs.", "Noted, Hamburg it is."),
    ("2024-03-12T18:30:00", "We adopted a beagle puppy yesterday, his name is Biscuit!", "Congratulations!"),
    ("2024-10-02T08:15:00", "Big news: I moved to Lisbon last month to be closer to Lena.", "How exciting!"),
]
RECALL_QUERIES = {
    "Where does Maya live now?": "moved to Lisbon",
    "What is the name of Maya's dog?": "his name is Biscuit",
}


def register(sub: Any) -> None:
    p = sub.add_parser("demo", help="run the main job on a built-in sample (temp home unless --home)")
    p.add_argument(
        "--home", "--hermes-home", dest="home", default=argparse.SUPPRESS,
        help="HERMES_HOME to fill (default: a fresh temporary directory)",
    )  # fmt: skip
    p.add_argument(
        "--json", action="store_true", default=argparse.SUPPRESS,
        help="print a JSON summary on stdout (the walk-through goes to stderr)",
    )  # fmt: skip
    p.set_defaults(_accepts=frozenset({"home", "json"}))
    p.set_defaults(handler=run_demo)


def _ts(day: str) -> float:
    return datetime.strptime(day, "%Y-%m-%d").replace(tzinfo=UTC).timestamp()


def _check(env: dict[str, Any]) -> Any:
    if not env["success"]:
        raise CommandError(f"error: demo step failed: {env['error']}")
    return env["data"]


def first_check(query: str, expected: str, texts: list[str]) -> dict[str, Any]:
    """Where the line holding ``expected`` came among ``texts`` (1 = first, None = not shown)."""
    rank = next((i for i, text in enumerate(texts, 1) if expected in text), None)
    return {"query": query, "expected": expected, "rank": rank, "first": rank == 1}


def _say(check: dict[str, Any], summary: dict[str, Any]) -> None:
    summary.setdefault("checks", []).append(check)
    if check["first"]:
        print(f"  -> first: yes ({check['expected']!r})")
    elif check["rank"] is None:
        print(f"  -> first: NO — no line with {check['expected']!r} among these")
    else:
        print(f"  -> first: NO — the line with {check['expected']!r} came {check['rank']}")


def run_demo(args: argparse.Namespace) -> int:
    summary: dict[str, Any] = {}
    as_json = bool(getattr(args, "json", False))
    with contextlib.ExitStack() as stack:
        if as_json:
            stack.enter_context(contextlib.redirect_stdout(sys.stderr))
        if args.home:
            home = Path(args.home)
        else:
            home = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="hermes-memory-demo-")))
        code = _demo(home, summary)
    if as_json:
        print(json.dumps({"success": True, "data": {"home": str(home), **summary}}, indent=2, default=str))
    return code


def _demo(home: Path, summary: dict[str, Any]) -> int:
    print(f"hermes-memory demo — HERMES_HOME={home}\n")
    from hermes_memory.api.memory_api import MemoryAPI

    with MemoryAPI(hermes_home=home, actor="demo") as api:
        print("== feeding the sample ==")
        for store, text in SAMPLE_CURATED:
            _check(api.curated_add(text, store))
        for name, etype, aliases, desc in SAMPLE_ENTITIES:
            _check(api.entity_ensure(name, etype, aliases, desc))
        for src, rel, dst, strength in SAMPLE_RELATIONS:
            _check(api.entity_link(src, dst, rel, strength))
        for content, category, conf in SAMPLE_FACTS:
            _check(api.fact_store(content, category, conf, "session"))
        for day, etype, title, ents, imp in SAMPLE_EVENTS:
            _check(api.timeline_add(etype, title, None, imp, ents, timestamp=_ts(day)))
        print(
            f"{len(SAMPLE_CURATED)} curated entries, {len(SAMPLE_ENTITIES)} entities, "
            f"{len(SAMPLE_RELATIONS)} relations, {len(SAMPLE_FACTS)} facts, {len(SAMPLE_EVENTS)} events\n"
        )

        print("== tier 1: curated (USER.md) ==")
        print("\n".join(f"- {e}" for e in _check(api.curated_entries("user"))))
        for query, expected in QUERIES.items():
            env = api.fact_query(query, limit=3, min_confidence=0.0)
            print(f"\n== tier 2: fact_query({query!r}) — {env['meta']['query_time_ms']:.1f} ms ==")
            rows = _check(env)
            print(show.facts(rows))
            _say(first_check(query, expected, [r["content"] for r in rows]), summary)
        print("\n== tier 2: entity_query('maya') ==")
        print(show.entities(_check(api.entity_query("maya", limit=1))))
        print("\n== tier 2: timeline_query(entity='Atlas') ==")
        print(show.events(_check(api.timeline_query(entity="Atlas"))))
        if "graph" in api.enabled_tiers():
            print("\n== graph: traverse('Maya', depth=2) ==")
            trav = _check(api.graph_traverse("Maya", 2))
            for item in trav["results"]:
                via = (item.get("via") or {}).get("relation_type", "?")
                print(
                    f"  {item['hops']} hop(s): {item['entity']['name']} "
                    f"({item['entity']['entity_type']}) via {via}"
                )
            print("\n== graph: central entities ==")
            for row in _check(api.graph_central_entities(3)):
                print(f"  {row['rank']}. {row['entity']['name']}  ({row['algorithm']} {row['score']:.3f})")
            path = _check(api.graph_shortest_path("Postgres", "Lisbon"))
            print("\n== graph: shortest_path('Postgres', 'Lisbon') ==")
            print("  " + " -> ".join(step["entity"]["name"] for step in path))
        if "tier3" in api.enabled_tiers():
            print("\n== tier 3: embedding the sample (real local model, loaded offline) ==")
            report = _check(api.embed_pending(progress=ProgressBar("embed")))
            print(f"{report['upserted']} vectors written to the {api.config.tier3.backend} backend")
            for query, expected in SEMANTIC_QUERIES.items():
                env = api.semantic_search(query, limit=3, min_score=0.0)
                print(f"\n== tier 3: semantic_search({query!r}) — {env['meta']['query_time_ms']:.1f} ms ==")
                rows = _check(env)
                print(hits(rows))
                _say(first_check(query, expected, [r["text"] for r in rows]), summary)
            for query, expected in HYBRID_QUERIES.items():
                env = api.semantic_hybrid(query, limit=3)
                print(f"\n== tier 2+3: semantic_hybrid({query!r}) — {env['meta']['query_time_ms']:.1f} ms ==")
                rows = _check(env)
                print(hits(rows))
                _say(first_check(query, expected, [r["text"] for r in rows]), summary)
        print("\n== remember: three turns through remember_turn (durable queue, no LLM) ==")
        for when, user, assistant in SAMPLE_TURNS:
            _check(
                api.remember_turn(
                    user, assistant, "demo-chat", when, user_name="Maya", assistant_name="Hermes"
                )
            )
        flushed = _check(api.flush(timeout=120))
        print(f"stored, extracted and indexed (queues drained: {flushed['drained']})")
        print("\n== bitemporal: contradictions() ==")
        for row in _check(api.contradictions()):
            print(f"  {row['old']['content']}  ->  {(row['new'] or {}).get('content')}")
        for query, expected in RECALL_QUERIES.items():
            env = api.recall(query, limit=4, budget_tokens=120)
            print(f"\n== recall({query!r}) — {env['meta']['query_time_ms']:.1f} ms ==")
            rendered = _check(env)["rendered"]
            summary.setdefault("recall", {})[query] = rendered
            print(rendered or "(nothing recalled)")
            _say(first_check(query, expected, rendered.splitlines()), summary)
        checks = summary.get("checks", [])
        firsts = sum(1 for c in checks if c["first"])
        print(f"\n== {firsts} of {len(checks)} queries put the expected line first ==")
        print("\n== stats ==")
        summary["stats"] = _check(api.stats())
        print(render_stats(summary["stats"]))
    return EXIT_OK


__all__ = [
    "HYBRID_QUERIES",
    "QUERIES",
    "RECALL_QUERIES",
    "SAMPLE_CURATED",
    "SAMPLE_ENTITIES",
    "SAMPLE_EVENTS",
    "SAMPLE_FACTS",
    "SAMPLE_RELATIONS",
    "SAMPLE_TURNS",
    "SEMANTIC_QUERIES",
    "first_check",
    "register",
    "run_demo",
]
