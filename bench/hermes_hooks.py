"""Hermes hook latency of the nextlevel provider: sync_turn, prefetch (warm and cold), on_turn_start.

    python bench/hermes_hooks.py                          # 10k and 100k stored turns
    python bench/hermes_hooks.py --turns 10000 --queries 100 --json

What Hermes waits for: ``prefetch`` blocks the user's turn (goal: p95 <= 5 ms from a warm cache);
``sync_turn`` runs on Hermes' memory worker and should return in <= 1 ms (one durable queue insert);
``on_turn_start`` runs on the agent's main thread and only starts a background recall.

Pre-fill: each store is filled through the public write path, ``remember_turn`` + ``flush`` (the
ingestion worker stores episodes, chunks and extracted knowledge), with the hashing embedder (no
model needed) and the default vector backend (the embedded Qdrant engine); filled stores are kept
under ``--out`` and reused (filling 100k turns takes tens of minutes on 2 cores). Turns are seeded
synthetic small talk about people, places, projects, pets and plans, ten minutes apart, 40 turns per
session.

Measured per store, with a provider initialised the way Hermes does it:
* ``sync_turn``: ``--writes`` calls while the ingestion worker is busy with the previous ones.
* ``prefetch`` warm: the recall ``on_turn_start`` began has finished; prefetch renders from it (the
  session's "already shown" set is reset each time, so every call renders a full block).
* ``prefetch`` cold: nothing cached; prefetch starts the recall and waits at most ``prefetch_wait_ms``
  (150 ms). Reported with the share answered in time and the recall times behind it: the hot-path
  tiers (curated, Tier 2, Tier 3), the same before the embedder is loaded (curated, Tier 2), and every
  tier including the graph (what ``queue_prefetch`` runs in the background).
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hermes_memory.bench.traffic import exchange, question
from hermes_memory.hermes import registry
from hermes_memory.hermes.prefetch import HOT_TIERS, HOT_TIERS_WITH_VECTORS
from hermes_memory.hermes.provider import NextLevelProvider

SETTINGS = """\
memory:
  tier3:
    embedding_model: hashing
    backend: qdrant
"""


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def summary(values_ms: list[float]) -> dict[str, float]:
    return {
        "p50_ms": round(statistics.median(values_ms), 3),
        "p95_ms": round(pct(values_ms, 95), 3),
        "p99_ms": round(pct(values_ms, 99), 3),
        "max_ms": round(max(values_ms), 3),
    }


def open_provider(home: Path, session: str, wait_ms: int | None = None) -> NextLevelProvider:
    settings = SETTINGS if wait_ms is None else f"provider:\n  prefetch_wait_ms: {wait_ms}\n{SETTINGS}"
    (home / "nextlevel.yaml").write_text(settings, encoding="utf-8")
    provider = NextLevelProvider()
    provider.initialize(session, hermes_home=str(home), platform="cli", agent_identity="default")
    return provider


def prefill(home: Path, turns: int, seed: int) -> float:
    """Fill the store up to ``turns`` turns (reusing what is there); returns seconds spent."""
    home.mkdir(parents=True, exist_ok=True)
    provider = open_provider(home, "prefill")
    shared = registry.find(str(home), "default")
    assert shared is not None
    api = shared.api
    have = api.tier2.episodes.count() // 2
    rnd = random.Random(seed)
    for _ in range(have):
        exchange(rnd)  # keep the sequence identical to a fill from scratch
    started = time.monotonic()
    base = time.time() - turns * 600.0
    for i in range(have, turns):
        user, assistant = exchange(rnd)
        api.remember_turn(user, assistant, f"bench-{i // 40}", time_=base + i * 600.0)
        if (i + 1) % 2000 == 0:
            api.flush(timeout=None)
            rate = (i + 1 - have) / (time.monotonic() - started)
            print(f"  filled {i + 1}/{turns} turns ({rate:.0f} turns/s)", file=sys.stderr, flush=True)
    api.flush(timeout=None)
    provider.shutdown()
    return time.monotonic() - started


def measure(home: Path, turns: int, queries: int, writes: int, seed: int) -> dict[str, Any]:
    rnd = random.Random(seed + 1)
    questions = [question(rnd) for _ in range(queries)]
    out: dict[str, Any] = {"turns": turns}

    # Recall itself: every tier (the background recall of queue_prefetch), the hot-path tiers the turn
    # may wait for, and those before the embedder is loaded.
    provider = open_provider(home, "bench-recall", wait_ms=150)
    shared = registry.find(str(home), "default")
    assert shared is not None
    api = shared.api
    api.recall("warm up the caches", limit=8)
    variants = (
        ("recall_all_tiers", None),
        ("recall_hot_path", list(HOT_TIERS_WITH_VECTORS)),
        ("recall_before_embedder", list(HOT_TIERS)),
    )
    for label, tiers in variants:
        times = []
        for q in questions:
            t0 = time.perf_counter()
            result = api.recall(q, tiers=tiers, limit=8)
            times.append((time.perf_counter() - t0) * 1000)
            assert result["success"], result["error"]
        out[label] = summary(times)
        print(f"  {label}: {out[label]}", file=sys.stderr, flush=True)

    # Cold prefetch: nothing cached, the 150 ms budget applies.
    cold, answered = [], 0
    for i, q in enumerate(questions):
        provider.on_session_switch(f"cold-{i}", reset=True)
        t0 = time.perf_counter()
        block = provider.prefetch(f"{q} (variant {i})")
        cold.append((time.perf_counter() - t0) * 1000)
        answered += bool(block)
    out["prefetch_cold"] = {**summary(cold), "answered_in_budget": f"{answered}/{len(questions)}"}

    # Warm prefetch: the recall on_turn_start began has finished; prefetch renders it.
    warm, starts = [], []
    prefetcher = provider._prefetcher
    assert prefetcher is not None
    for i, q in enumerate(questions):
        t0 = time.perf_counter()
        provider.on_turn_start(i + 1, q)
        starts.append((time.perf_counter() - t0) * 1000)
        job = prefetcher._jobs[" ".join(q.split())]
        if job.wait(120) is None:
            continue
        provider.on_session_switch(f"warm-{i}", reset=True)
        t0 = time.perf_counter()
        provider.prefetch(q)
        warm.append((time.perf_counter() - t0) * 1000)
    out["prefetch_warm"] = summary(warm)
    out["on_turn_start"] = summary(starts)
    provider.shutdown()
    print(
        f"  prefetch: warm {out['prefetch_warm']}, cold {out['prefetch_cold']}", file=sys.stderr, flush=True
    )

    # sync_turn while the ingestion worker is busy with the turns queued just before.
    provider = open_provider(home, "bench-writes")
    times = []
    for _ in range(writes):
        user, assistant = exchange(rnd)
        t0 = time.perf_counter()
        provider.sync_turn(user, assistant, session_id="bench-writes")
        times.append((time.perf_counter() - t0) * 1000)
    out["sync_turn"] = summary(times)
    t0 = time.perf_counter()
    provider.shutdown()  # drains what the writes queued (Hermes allows 5 s)
    out["shutdown_s"] = round(time.perf_counter() - t0, 2)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--turns", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--writes", type=int, default=300)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "out" / "hermes_hooks")
    parser.add_argument("--fresh", action="store_true", help="refill the stores from scratch")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results = []
    for n in args.turns:
        home = args.out / f"turns_{n}"
        if args.fresh and home.exists():
            shutil.rmtree(home)
        print(f"store with {n} turns: {home}", file=sys.stderr, flush=True)
        filled = prefill(home, n, args.seed)
        result = measure(home, n, args.queries, args.writes, args.seed)
        result["prefill_s"] = round(filled, 1)
        results.append(result)
        print(json.dumps(result), file=sys.stderr, flush=True)
    if args.json:
        print(json.dumps(results, indent=2))
        return
    keys = ["prefetch_warm", "prefetch_cold", "recall_hot_path", "recall_before_embedder", "recall_all_tiers",
            "sync_turn", "on_turn_start"]  # fmt: skip
    print("| measure | turns | p50 ms | p95 ms | p99 ms | max ms | note |")
    print("|---|---|---|---|---|---|---|")
    for result in results:
        for key in keys:
            row = result[key]
            note = f"answered in budget {row['answered_in_budget']}" if "answered_in_budget" in row else ""
            print(f"| {key} | {result['turns']} | {row['p50_ms']} | {row['p95_ms']} | {row['p99_ms']} | "
                  f"{row['max_ms']} | {note} |")  # fmt: skip
        print(f"| shutdown drain after the writes | {result['turns']} | {result['shutdown_s']} s | | | | |")


if __name__ == "__main__":
    main()
