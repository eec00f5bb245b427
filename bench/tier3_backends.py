"""Tier 3 bench: real MiniLM throughput/latency, and upsert + search latency per embedded backend.

    python bench/tier3_backends.py --sizes 10000 50000 --queries 100 --k 10

Vectors are real all-MiniLM-L6-v2 embeddings of synthetic, varied sentences. Sizes above the
number of embedded sentences (default 10k) are made by tiling those vectors with small Gaussian
noise, renormalised (the output says so). Recall@k is measured against exact numpy search.
Times are wall-clock on a shared machine: compare ratios within one run.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hermes_memory.tier3.backend import make_backend
from hermes_memory.tier3.embedder import make_embedder

Vecs = npt.NDArray[np.float32]

NAMES = ["Alice", "Bob", "Chen", "Dana", "Emil", "Farah", "Goran", "Hana", "Ivo", "Jun", "Kemal", "Lea"]
ACTS = [
    "adopted a puppy",
    "moved to a new flat",
    "started learning Rust",
    "booked a trip",
    "lost the car keys",
    "fixed the failing build",
    "ran a half marathon",
    "planted tomatoes",
    "changed jobs",
    "bought a bicycle",
    "cooked a curry for friends",
    "argued about the budget",
    "finished the quarterly report",
    "visited grandma",
    "upgraded the database",
    "switched to decaf",
    "repaired the dishwasher",
    "joined a choir",
]
PLACES = [
    "in Berlin",
    "at the office",
    "near the lake",
    "in Lisbon",
    "at home",
    "on the train",
    "in the garden",
    "at the gym",
    "in Osaka",
    "downtown",
    "at the clinic",
    "in the mountains",
]
TIMES = [
    "yesterday",
    "last week",
    "on Monday",
    "this morning",
    "in March",
    "after lunch",
    "two years ago",
    "today",
]
REASONS = [
    "because the old one broke",
    "to save money",
    "for the kids",
    "since the deadline moved",
    "after a long debate",
    "on a whim",
    "to feel healthier",
    "because a friend recommended it",
    "",
]
QUERIES = [
    "new dog",
    "moving house",
    "programming language",
    "holiday plans",
    "missing keys",
    "broken CI",
    "running race",
    "vegetable garden",
    "new employer",
    "cycling",
    "dinner party",
    "money disagreement",
    "report deadline",
    "family visit",
    "database migration",
    "coffee habits",
    "kitchen appliance",
    "singing",
]


def sentences(n: int, seed: int = 7) -> list[str]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        parts = [
            NAMES[rng.integers(len(NAMES))],
            ACTS[rng.integers(len(ACTS))],
            PLACES[rng.integers(len(PLACES))],
            TIMES[rng.integers(len(TIMES))],
            REASONS[rng.integers(len(REASONS))],
        ]
        out.append(" ".join(p for p in parts if p) + f" (note {i}).")
    return out


def pct(samples: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(samples) * 1000.0, q))


def timed(fn: Callable[[], Any]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def tile(base: Vecs, n: int, seed: int = 11) -> Vecs:
    if n <= len(base):
        return base[:n]
    rng = np.random.default_rng(seed)
    reps = -(-n // len(base))
    out = np.tile(base, (reps, 1))[:n].copy()
    out[len(base) :] += rng.normal(scale=0.02, size=(n - len(base), base.shape[1])).astype(np.float32)
    out /= np.linalg.norm(out, axis=1, keepdims=True)
    return out.astype(np.float32)


def bench_embedder(n_texts: int) -> tuple[Vecs, Any]:
    embedder = make_embedder("local", batch_size=64)
    load = timed(lambda: embedder.embed_document(["warm up the model"]))
    texts = sentences(n_texts)
    start = time.perf_counter()
    vecs = embedder.embed_document(texts)
    took = time.perf_counter() - start
    lat: list[float] = []
    for i in range(50):
        q = f"{QUERIES[i % len(QUERIES)]} {i}"  # distinct texts: no cache hits
        t0 = time.perf_counter()
        embedder.embed_query([q])
        lat.append(time.perf_counter() - t0)
    hit = timed(lambda: embedder.embed_query([f"{QUERIES[0]} 0"]))
    print("## Embedder: all-MiniLM-L6-v2 (sentence-transformers, CPU, offline)")
    print(f"first load + first embed: {load:.1f} s")
    print(f"throughput: {n_texts / took:.0f} texts/s ({n_texts} texts, batch 64, {took:.1f} s)")
    print(f"single query: p50 {pct(lat, 50):.1f} ms, p95 {pct(lat, 95):.1f} ms; LRU hit {hit * 1000:.3f} ms")
    print()
    return vecs, embedder


def measure(
    backend: Any,
    queries: Vecs,
    exact: npt.NDArray[np.int64],
    exact_f: npt.NDArray[np.int64],
    ids: list[str],
    k: int,
) -> dict[str, float]:
    flt = {"session_id": "s7"}
    plain: list[float] = []
    filtered: list[float] = []
    recall = recall_f = 0.0
    for qi, q in enumerate(queries):
        t0 = time.perf_counter()
        hits = backend.search(q, limit=k)
        plain.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        hits_f = backend.search(q, limit=k, filters=flt)
        filtered.append(time.perf_counter() - t0)
        recall += len({h.id for h in hits} & {ids[i] for i in exact[qi]}) / k
        recall_f += len({h.id for h in hits_f} & {ids[i] for i in exact_f[qi]}) / k
    return {
        "p50": pct(plain, 50),
        "p95": pct(plain, 95),
        "fp50": pct(filtered, 50),
        "fp95": pct(filtered, 95),
        "recall": recall / len(queries),
        "recall_f": recall_f / len(queries),
    }


def bench_backend(name: str, vecs: Vecs, queries: Vecs, k: int, root: Path) -> list[dict[str, Any]]:
    n = len(vecs)
    path = root / f"{name}-{n}"
    backend = make_backend(name, path=path, collection="memory_chunks", dim=vecs.shape[1])
    ids = [f"chunk:{i}" for i in range(n)]
    payloads = [
        {"session_id": f"s{i % 50}", "source_type": "session" if i % 3 else "fact", "timestamp": 1.7e9 + i}
        for i in range(n)
    ]
    start = time.perf_counter()
    for s in range(0, n, 1000):
        backend.upsert(ids[s : s + 1000], vecs[s : s + 1000], payloads[s : s + 1000])
    upsert = time.perf_counter() - start
    sims = queries @ vecs.T
    exact = np.argsort(-sims, axis=1)[:, :k]
    mask = np.arange(n) % 50 == 7
    exact_f = np.argsort(-np.where(mask[None, :], sims, -np.inf), axis=1)[:, :k]
    rows = [{"backend": name, "n": n, "state": "as written", "upsert_s": upsert, "optimize_s": None}]
    rows[0].update(measure(backend, queries, exact, exact_f, ids, k))
    if hasattr(backend, "optimize"):
        took = timed(backend.optimize)
        rows.append({"backend": name, "n": n, "state": "optimized", "upsert_s": None, "optimize_s": took})
        rows[1].update(measure(backend, queries, exact, exact_f, ids, k))
    backend.close()
    shutil.rmtree(path, ignore_errors=True)
    return rows


def embedded_vectors(n: int, cache: Path | None) -> tuple[Vecs, Any]:
    if cache is not None and cache.exists():
        vecs: Vecs = np.load(cache)[:n]
        print(f"(MiniLM vectors of {len(vecs)} sentences loaded from {cache})\n")
        return vecs, make_embedder("local")
    vecs, embedder = bench_embedder(n)
    if cache is not None:
        np.save(cache, vecs)
    return vecs, embedder


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 50_000])
    parser.add_argument("--embed", type=int, default=10_000, help="sentences embedded with MiniLM")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--backends", nargs="+", default=["memory", "chroma", "qdrant"])
    parser.add_argument("--cache", type=Path, help="a .npy to keep the MiniLM vectors between runs")
    args = parser.parse_args()

    print(f"# Tier 3 bench  (cpus={os.cpu_count()}, load avg {os.getloadavg()[0]:.1f} at start)")
    print()
    base, embedder = embedded_vectors(min(args.embed, max(args.sizes)), args.cache)
    qtexts = [f"{QUERIES[i % len(QUERIES)]} {NAMES[i % len(NAMES)]}" for i in range(args.queries)]
    queries = embedder.embed_query(qtexts)
    root = Path(tempfile.mkdtemp(prefix="hm-bench-"))
    rows: list[dict[str, Any]] = []
    try:
        for n in args.sizes:
            vecs = tile(base, n)
            note = "" if n <= len(base) else f" (tiled from {len(base)} MiniLM vectors + N(0, 0.02) noise)"
            print(f"size {n}{note}", flush=True)
            for name in args.backends:
                rows.extend(bench_backend(name, vecs, queries, args.k, root))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print()
    print(f"## Backends (k={args.k}, {args.queries} queries; filter = one of 50 sessions, 2% of points)")
    print(
        "| backend | n | state | upsert s | optimize s | p50 ms | p95 ms | filtered p50 | filtered p95 "
        "| recall@k | filtered recall@k |"
    )
    print("|" + "---|" * 11)
    for r in rows:
        upsert = "" if r["upsert_s"] is None else f"{r['upsert_s']:.2f}"
        optimize = "" if r["optimize_s"] is None else f"{r['optimize_s']:.2f}"
        print(
            f"| {r['backend']} | {r['n']} | {r['state']} | {upsert} | {optimize} "
            f"| {r['p50']:.2f} | {r['p95']:.2f} | {r['fp50']:.2f} | {r['fp95']:.2f} "
            f"| {r['recall']:.3f} | {r['recall_f']:.3f} |"
        )
    print()
    print("qdrant 'as written': points in plain segments, searched exactly (upsert never builds HNSW);")
    print("'optimized': after an explicit optimize(), which builds HNSW and holds the GIL while it runs.")


if __name__ == "__main__":
    main()
