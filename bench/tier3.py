"""Tier 3 end to end through MemoryAPI: ingest throughput, then search latency at the resulting size.

    python bench/tier3.py --n 2000 --backend qdrant      # qdrant | chroma | memory | qdrant-client
    python bench/tier3.py --n 200 --embedder hashing     # a quick smoke run without the model

Ingest = ``fact_store`` of N texts (Tier 2 write + chunk + embed-queue row, one transaction each),
then ``embed_pending`` (embed in batches with the real offline MiniLM, write vectors, dequeue).
The model is loaded before the clock starts (its load time is printed separately). Texts are LoCoMo
chat turns when /work/shared/bench/locomo_dev.json (or --data) exists, else synthetic sentences;
queries are the LoCoMo questions (categories 1-4) or synthetic ones, each asked once (three
disjoint sets for plain, filtered and hybrid search), so the query-embedding cache never answers.
Search latency includes embedding the query.
Raw per-backend vector search at 10k/50k lives in bench/tier3_backends.py.
Times are wall-clock on a shared machine: compare ratios within one run.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never a hub download, whatever the caller's env says

from hermes_memory.api.memory_api import MemoryAPI

DEFAULT_DATA = Path("/work/shared/bench/locomo_dev.json")
SESSIONS = 20  # facts are spread over this many session ids, for the filtered search

NAMES = ["Alice", "Bob", "Chen", "Dana", "Emil", "Farah", "Goran", "Hana", "Ivo", "Jun", "Kemal", "Lea"]
DOINGS = [
    "adopted a rescue dog",
    "moved into a flat near the river",
    "started learning to play the cello",
    "booked flights for the summer holiday",
    "fixed the flaky integration tests",
    "ran her first half marathon",
    "planted tomatoes and basil on the balcony",
    "switched teams to work on the billing service",
    "bought a second-hand road bike",
    "cooked a Thai curry for the neighbours",
    "finished the quarterly budget review",
    "visited grandparents in the countryside",
    "migrated the database to Postgres 16",
    "gave up coffee for a month",
    "joined a climbing gym downtown",
]
WHEN = ["last week", "on Saturday", "in March", "yesterday", "two years ago", "this morning", "after work"]
WHY = [
    "because the old one broke",
    "to spend more time outdoors",
    "after a long discussion with the team",
    "on a friend's recommendation",
    "since it was on sale",
    "to get ready for the new job",
]
QUESTIONS = [
    "Who has a new pet?",
    "Which database did they move to?",
    "What instrument is someone learning?",
    "Who does sports on weekends?",
    "What did they grow on the balcony?",
    "Where are they travelling this summer?",
    "Who changed teams at work?",
    "What did someone cook for friends?",
]


def synthetic_texts(n: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    out: list[str] = []
    seen: set[str] = set()
    while len(out) < n:
        text = f"{rng.choice(NAMES)} {rng.choice(DOINGS)} {rng.choice(WHEN)} {rng.choice(WHY)}."
        if len(seen) < len(NAMES) * len(DOINGS) * len(WHEN) * len(WHY) and text in seen:
            continue
        seen.add(text)
        out.append(text)
    return out


def synthetic_queries(n: int, seed: int = 11) -> list[str]:
    rng = random.Random(seed)
    return [f"{rng.choice(QUESTIONS)} ({rng.choice(NAMES)}, {rng.choice(WHEN)}) #{i}" for i in range(n)]


def locomo(path: Path) -> tuple[list[str], list[str]]:
    """Every turn text (with its image caption) and every category 1-4 question, in file order."""
    samples = json.loads(path.read_text(encoding="utf-8"))
    texts: list[str] = []
    questions: list[str] = []
    for sample in samples:
        conv = sample["conversation"]
        for key, turns in conv.items():
            if not key.startswith("session_") or key.count("_") != 1 or not isinstance(turns, list):
                continue
            for turn in turns:
                caption = f" [shares a photo: {turn['blip_caption']}]" if turn.get("blip_caption") else ""
                texts.append(f"{turn['speaker']}: {turn['text']}{caption}")
        questions += [q["question"] for q in sample.get("qa", []) if q.get("category") in (1, 2, 3, 4)]
    return texts, questions


def pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def latencies(queries: list[str], call: Callable[[str], dict[str, Any]]) -> dict[str, float]:
    times: list[float] = []
    for query in queries:
        started = time.perf_counter()
        env = call(query)
        times.append((time.perf_counter() - started) * 1000.0)
        if not env["success"]:
            raise SystemExit(f"query {query!r} failed: {env['error']}")
    return {"p50_ms": pct(times, 50), "p95_ms": pct(times, 95), "mean_ms": statistics.fmean(times)}


def run(args: argparse.Namespace, home: Path) -> dict[str, Any]:
    if args.data.exists() and not args.synthetic:
        texts, questions = locomo(args.data)
        source = f"LoCoMo turns ({args.data.name})"
        if len(texts) < args.n:
            texts += synthetic_texts(args.n - len(texts))
            source += " + synthetic"
    else:
        texts, questions, source = synthetic_texts(args.n), [], "synthetic sentences"
    texts = texts[: args.n]
    # three disjoint query sets (plain, filtered, hybrid), so the query-embedding cache never answers
    want = 3 * args.queries
    queries = list(dict.fromkeys(questions))[:want]
    queries += synthetic_queries(want - len(queries))
    plain, filtered, hybrid = (queries[i * args.queries : (i + 1) * args.queries] for i in range(3))

    settings: dict[str, Any] = {"tier3.backend": args.backend, "tier3.embedding_model": args.embedder}
    if args.batch:
        settings["tier3.embed_batch_size"] = args.batch
    result: dict[str, Any] = {
        "backend": args.backend,
        "embedder": args.embedder,
        "texts": source,
        "n": len(texts),
        "queries": args.queries,
        "torch_threads": args.torch_threads,
    }
    with MemoryAPI(hermes_home=home, **settings) as api:
        result["batch"] = api.config.tier3.embed_batch_size
        started = time.perf_counter()
        warm = api.semantic_search("warm up the embedder and open the backend", min_score=0.0)
        if not warm["success"]:
            raise SystemExit(f"cannot open tier 3: {warm['error']}")
        result["model_load_s"] = time.perf_counter() - started

        started = time.perf_counter()
        stored = 0
        for i, text in enumerate(texts):
            env = api.fact_store(text, source="session", source_id=f"s{i % SESSIONS}")
            stored += bool(env["success"] and env["data"]["created"])
        write_s = time.perf_counter() - started
        pending = api.stats()["data"]["tier3"]["embed_pending"]

        started = time.perf_counter()
        drained = api.embed_pending()
        embed_s = time.perf_counter() - started
        if not drained["success"]:
            raise SystemExit(f"embed_pending failed: {drained['error']}")
        chunks = drained["data"]["upserted"]
        result.update(
            stored=stored,
            chunks=chunks,
            pending_before_drain=pending,
            write_s=write_s,
            write_per_s=stored / write_s,
            embed_s=embed_s,
            embed_per_s=chunks / embed_s,
            end_to_end_per_s=stored / (write_s + embed_s),
        )
        stats = api.stats()["data"]["tier3"]
        result["vectors"] = stats.get("memory_chunks")

        rng = random.Random(3)
        result["search"] = latencies(plain, lambda q: api.semantic_search(q, limit=10, min_score=0.0))
        result["search_filtered"] = latencies(
            filtered,
            lambda q: api.semantic_search(
                q, limit=10, min_score=0.0, filters={"session_id": f"s{rng.randrange(SESSIONS)}"}
            ),
        )
        result["hybrid"] = latencies(hybrid, lambda q: api.semantic_hybrid(q, limit=10))
    return result


def render(r: dict[str, Any]) -> str:
    lines = [
        f"Tier 3 end to end — backend {r['backend']}, embedder {r['embedder']} (batch {r['batch']}, "
        f"torch threads {r['torch_threads'] or 'default'}), {r['texts']}",
        f"model load       {r['model_load_s']:.2f} s, with the backend open (before the clock)",
        f"fact_store       {r['stored']} facts in {r['write_s']:.2f} s  ({r['write_per_s']:,.0f}/s)",
        f"embed_pending    {r['chunks']} chunks in {r['embed_s']:.2f} s  ({r['embed_per_s']:,.0f}/s)",
        f"ingest e2e       {r['end_to_end_per_s']:,.0f} texts/s  ({r['vectors']} vectors stored)",
        "",
        f"| at {r['vectors']} vectors, {r['queries']} queries | p50 ms | p95 ms |",
        "|---|---|---|",
    ]
    for key, label in (
        ("search", "semantic_search (k=10)"),
        ("search_filtered", "semantic_search + session filter"),
        ("hybrid", "semantic_hybrid (k=10)"),
    ):
        lines.append(f"| {label} | {r[key]['p50_ms']:.1f} | {r[key]['p95_ms']:.1f} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=2000, help="texts to ingest")
    parser.add_argument(
        "--backend", default="qdrant", choices=["qdrant", "chroma", "memory", "qdrant-client"]
    )
    parser.add_argument("--embedder", default="local", choices=["local", "hashing"])
    parser.add_argument("--batch", type=int, help="embed batch size (default: tier3.embed_batch_size)")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="LoCoMo JSON for realistic texts")
    parser.add_argument("--synthetic", action="store_true", help="use synthetic texts even if --data exists")
    parser.add_argument("--home", type=Path, help="HERMES_HOME to fill (default: a temporary directory)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument(
        "--torch-threads",
        type=int,
        help="torch.set_num_threads(N) before the model loads (on a busy 2-core box, 1 beats 2 by ~3x)",
    )
    args = parser.parse_args()
    if args.n <= 0 or args.queries <= 0:
        parser.error("--n and --queries must be positive")
    if args.torch_threads:
        import torch  # only when asked: the hashing smoke run must not pay for torch

        torch.set_num_threads(args.torch_threads)
    if args.home:
        result = run(args, args.home)
    else:
        with tempfile.TemporaryDirectory(prefix="hermes-bench-tier3-") as tmp:
            result = run(args, Path(tmp))
    print(json.dumps(result, indent=2) if args.json else render(result))


if __name__ == "__main__":
    main()
