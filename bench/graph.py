"""Knowledge-graph benchmark: build, persistence, queries and analytics on a synthetic, seeded graph.

    python bench/graph.py                      # 10k entities / 50k relations (the seed's target scale)
    python bench/graph.py --entities 2000 --relations 10000 --queries 100 --skip-betweenness

Relation endpoints are drawn half uniformly, half from a skewed distribution, so the graph has hubs
like a real knowledge graph (a few entities - the user, their main project - touch many relations).
Seed target (section 13): depth-3 traversal < 30 ms at 10k nodes.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import statistics
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hermes_memory.graph.centrality import analysis_graph
from hermes_memory.graph.nx_store import KnowledgeGraph
from hermes_memory.records import Entity, Relation

TYPES = ("person", "project", "tech", "org", "concept", "place")
RELATION_TYPES = ("works_on", "knows", "depends_on", "part_of", "related_to", "uses")


def synthetic(entities: int, relations: int, seed: int) -> tuple[list[Entity], list[Relation]]:
    rng = random.Random(seed)
    ents = [
        Entity(
            uuid=f"ent-{i:06d}",
            name=f"{TYPES[i % len(TYPES)].capitalize()} {i}",
            entity_type=TYPES[i % len(TYPES)],
            aliases=(f"E{i}",) if i % 5 == 0 else (),
            description="synthetic entity" if i % 3 == 0 else None,
            first_seen=1.7e9 + i,
            last_seen=1.7e9 + i + rng.random() * 1e6,
            occurrence_count=1 + int(rng.expovariate(0.3)),
            metadata={"source": "bench"} if i % 7 == 0 else {},
        )
        for i in range(entities)
    ]
    rels = []
    for j in range(relations):
        a = int(entities * rng.random() ** 3)  # skewed: low indices are hubs
        b = rng.randrange(entities)
        rels.append(
            Relation(
                uuid=f"rel-{j:07d}",
                from_entity_id=ents[a].uuid,
                to_entity_id=ents[b].uuid,
                relation_type=rng.choice(RELATION_TYPES),
                strength=round(0.1 + 0.9 * rng.random(), 3),
                evidence_fact_id=None,
                created_at=1.7e9 + j,
                updated_at=1.7e9 + j,
            )
        )
    return ents, rels


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    value = fn()
    return (time.perf_counter() - start) * 1000.0, value


def percentiles(samples: list[float]) -> str:
    ordered = sorted(samples)
    p50 = statistics.median(ordered)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return f"p50 {p50:8.2f} ms   p95 {p95:8.2f} ms   max {ordered[-1]:8.2f} ms   (n={len(ordered)})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entities", type=int, default=10_000)
    parser.add_argument("--relations", type=int, default=50_000)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--skip-betweenness", action="store_true")
    args = parser.parse_args()

    ents, rels = synthetic(args.entities, args.relations, args.seed)
    rng = random.Random(args.seed + 1)
    print(f"graph bench: {len(ents)} entities, {len(rels)} relations, seed {args.seed}")

    kg = KnowledgeGraph()
    ms, report = timed(lambda: kg.rebuild(ents, rels))
    print(f"rebuild (full)                 {ms:9.1f} ms   skipped={report['skipped_count']}")
    ms, _ = timed(lambda: kg.rebuild(ents, rels))
    print(f"rebuild (again, warm)          {ms:9.1f} ms")
    tracemalloc.start()
    probe = KnowledgeGraph()
    probe.rebuild(ents, rels)
    current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del probe
    print(f"memory: graph held {current / 2**20:7.1f} MiB, peak during rebuild {peak / 2**20:7.1f} MiB")

    incremental = KnowledgeGraph()
    ms_e, _ = timed(lambda: [incremental.upsert_entity(e) for e in ents])
    ms_r, _ = timed(lambda: [incremental.upsert_relation(r) for r in rels])
    per_op = (ms_e + ms_r) * 1000.0 / (len(ents) + len(rels))
    print(f"incremental upserts            {ms_e + ms_r:9.1f} ms   ({per_op:.1f} us per upsert)")
    ms, equal = timed(lambda: incremental.snapshot() == kg.snapshot())
    print(f"incremental == rebuild         {equal}   (snapshot compare {ms:.0f} ms)")

    with tempfile.TemporaryDirectory() as tmp:
        store = KnowledgeGraph(tmp)
        store.rebuild(ents, rels)
        ms, path = timed(lambda: store.save("bench"))
        print(f"save (pickle, atomic)          {ms:9.1f} ms   {path.stat().st_size / 2**20:6.1f} MiB")
        loaded = KnowledgeGraph(tmp)
        ms, result = timed(lambda: loaded.load("bench"))
        print(f"load                           {ms:9.1f} ms   status={result.status.value}")
        ms, gml = timed(store.export_graphml)
        print(f"export GraphML                 {ms:9.1f} ms   {gml.stat().st_size / 2**20:6.1f} MiB")

    starts = [ents[rng.randrange(len(ents))].uuid for _ in range(args.queries)]
    # the first pass fills the per-entity link cache (cold), the second runs the same starts warm
    runs = (
        ("traverse depth 3 (200, cold)", 200),
        ("traverse depth 3 (200, warm)", 200),
        ("traverse depth 3 (no limit)", 10**9),
    )
    for label, limit in runs:
        samples, counts = [], []
        for start in starts:
            ms, out = timed(lambda s=start, lim=limit: kg.traverse(s, depth=3, limit=lim))
            samples.append(ms)
            counts.append(out["count"])
        print(f"{label:30} {percentiles(samples)}   median results {statistics.median(counts):.0f}")
    samples = []
    for start in starts:
        ms, _ = timed(lambda s=start: kg.traverse(s, depth=2, limit=50))
        samples.append(ms)
    print(f"{'traverse depth 2 (limit 50)':30} {percentiles(samples)}")

    pairs = [(ents[rng.randrange(len(ents))].uuid, ents[rng.randrange(len(ents))].uuid) for _ in starts]
    samples = [timed(lambda p=pair: kg.shortest_path(*p))[0] for pair in pairs]
    print(f"{'shortest_path':30} {percentiles(samples)}")
    seeds = [[ents[rng.randrange(len(ents))].uuid for _ in range(3)] for _ in starts]
    samples, sizes = [], []
    for seed_set in seeds:
        ms, act = timed(lambda s=seed_set: kg.spread(s))
        samples.append(ms)
        sizes.append(len(act))
    print(
        f"{'spread (3 seeds, 3 hops)':30} {percentiles(samples)}   "
        f"median activated {statistics.median(sizes):.0f}"
    )
    samples = [timed(lambda s=seed_set: kg.reinforce(s, apply=False))[0] for seed_set in seeds]
    print(f"{'reinforce (3 entities)':30} {percentiles(samples)}")
    samples = [timed(lambda s=start: kg.resolve(kg.node_attrs(s)["name"].upper()))[0] for start in starts]
    print(f"{'resolve by name':30} {percentiles(samples)}")

    ms, _ = timed(lambda: analysis_graph(kg))
    print(f"analysis graph (undirected)    {ms:9.1f} ms   (built once per change, shared by the below)")
    algorithms = ["degree", "pagerank"] + ([] if args.skip_betweenness else ["betweenness"])
    for algorithm in algorithms:
        ms, top = timed(lambda a=algorithm: kg.central_entities(10, a))
        cached, _ = timed(lambda a=algorithm: kg.central_entities(10, a))
        extra = " (approximate, k-sampled)" if top and top[0]["approximate"] else ""
        print(f"centrality {algorithm:19} {ms:9.1f} ms   cached {cached:6.2f} ms{extra}")
    ms, groups = timed(kg.communities)
    cached, _ = timed(kg.communities)
    print(
        f"communities (louvain)          {ms:9.1f} ms   cached {cached:6.2f} ms   "
        f"{len(groups)} groups, largest {len(groups[0]) if groups else 0}"
    )
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    print(f"process max RSS                {rss:9.1f} MiB")
    print(json.dumps({"entities": len(ents), "relations": len(rels), "ok": bool(equal)}))


if __name__ == "__main__":
    main()
