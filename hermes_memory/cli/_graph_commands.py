"""CLI commands over the knowledge graph: pictures, traversal, paths, centrality, communities."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from hermes_memory.cli._common import CommandError, add_global_options, emit, open_api, with_api


def register(sub: Any) -> None:
    p = sub.add_parser("graph", help="draw the knowledge graph: --out FILE.html (interactive) or FILE.png")
    add_global_options(p)
    p.add_argument("--out", required=True, help="FILE.html (offline, interactive) or FILE.png (static)")
    p.add_argument("--around", help="centre on this entity (name, alias or uuid)")
    p.add_argument("--depth", type=int, default=2, help="hops around --around (default 2)")
    p.set_defaults(handler=_render)

    p = sub.add_parser("traverse", help="entities reachable from an entity within --depth hops")
    add_global_options(p)
    p.add_argument("entity")
    p.add_argument("--depth", type=int, default=2)
    p.add_argument("--relation", help="follow only this relation type")
    p.set_defaults(handler=_traverse)

    p = sub.add_parser("path", help="shortest path between two entities")
    add_global_options(p)
    p.add_argument("source")
    p.add_argument("target")
    p.set_defaults(handler=_path)

    p = sub.add_parser("central", help="the most central entities")
    add_global_options(p)
    p.add_argument("--limit", type=int, default=10)
    p.add_argument("--algorithm", choices=["betweenness", "pagerank", "degree"])
    p.set_defaults(handler=_central)

    p = sub.add_parser("communities", help="communities of entities (Louvain)")
    add_global_options(p)
    p.set_defaults(handler=lambda a: with_api(a, lambda api: emit(a, api.graph_communities(), _communities)))

    p = sub.add_parser("graph-rebuild", help="rebuild the graph from Tier 2")
    add_global_options(p)
    p.set_defaults(
        handler=lambda a: with_api(a, lambda api: emit(a, api.graph_rebuild(), lambda d: f"rebuilt: {d}"))
    )


def _render(args: argparse.Namespace) -> int:
    from hermes_memory.graph.render import render_html, render_png

    out = Path(args.out)
    suffix = out.suffix.lower()
    if suffix not in (".html", ".png"):
        raise CommandError("error: --out must end in .html or .png", 2)
    with open_api(args) as api:
        kg = api.knowledge_graph()
        if suffix == ".html":
            info = render_html(kg, out, around=args.around, depth=args.depth)
        else:
            info = render_png(kg, out, around=args.around, depth=args.depth)
    print(
        f"wrote {out} ({info['entities_shown']} of {info['entities_total']} entities, "
        f"{info['relations_shown']} of {info['relations_total']} relations)"
    )
    if suffix == ".png":
        print(f"for an interactive view (zoom, every name and relation) write {out.with_suffix('.html')}")
    return 0


def _traverse(args: argparse.Namespace) -> int:
    def render(d: dict[str, Any]) -> str:
        lines = [f"{d['start']['name']} ({d['start']['entity_type']}), depth {d['depth']}:"]
        for item in d["results"]:
            via = item.get("via") or {}
            lines.append(
                f"  {'  ' * (item['hops'] - 1)}{item['hops']} hop(s): {item['entity']['name']} "
                f"({item['entity']['entity_type']}) via {via.get('relation_type', '?')}"
            )
        return "\n".join(lines)

    return with_api(
        args, lambda api: emit(args, api.graph_traverse(args.entity, args.depth, args.relation), render)
    )


def _path(args: argparse.Namespace) -> int:
    def render(steps: list[dict[str, Any]]) -> str:
        if not steps:
            return "(no path)"
        parts = [steps[0]["entity"]["name"]]
        for step in steps[1:]:
            parts.append(f"-[{step['via']['relation_type']}]- {step['entity']['name']}")
        return " ".join(parts)

    return with_api(args, lambda api: emit(args, api.graph_shortest_path(args.source, args.target), render))


def _central(args: argparse.Namespace) -> int:
    def render(rows: list[dict[str, Any]]) -> str:
        return (
            "\n".join(
                f"{r['rank']:>2}. {r['entity']['name']} ({r['entity']['entity_type']})  "
                f"{r['algorithm']} {r['score']:.3f}"
                for r in rows
            )
            or "(empty graph)"
        )

    return with_api(
        args, lambda api: emit(args, api.graph_central_entities(args.limit, args.algorithm), render)
    )


def _communities(groups: list[list[dict[str, Any]]]) -> str:
    if not groups:
        return "(empty graph)"
    return "\n".join(
        f"{i + 1}. " + ", ".join(e.get("name", "?") for e in group) for i, group in enumerate(groups)
    )
