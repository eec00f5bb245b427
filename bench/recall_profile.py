"""Where a recall's time goes: one LoCoMo conversation ingested, then its questions recalled under cProfile.

    python bench/recall_profile.py --conversation 0 --recalls 50 [--embedder local] [--home ROOT]

The conversation's turns go in through ``remember_message`` exactly as in ``hermes_memory.bench.locomo``
(never the summaries); the filled store is kept under ``--home ROOT`` (``ROOT/conv-<n>``) and re-used on
the next run (delete the folder to refill). Then the first ``--recalls`` questions (categories 1-4) are
asked three times:
  * timed, as ``MemoryAPI.recall`` runs them (the query embedding included; each question once, so no
    query-embedding cache answers), with the query embedding timed on its own;
  * timed again with each query's vector computed beforehand: recall's own work, with the SQL statements
    each one ran (top level, not FTS5's internal ones);
  * that pass once more under cProfile: the functions with the most cumulative time.
Numbers are wall-clock on a shared machine: compare runs of this script with each other. (LoCoMo scores
of a settings change: ``bench/locomo_research.py --set``.)
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import shutil
import sqlite3
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never a hub download, whatever the caller's env says

from hermes_memory.api.memory_api import MemoryAPI
from hermes_memory.bench.locomo import (
    CATEGORIES,
    ingest,
)

DEFAULT_DATA = Path("/work/shared/bench/locomo_dev.json")


def fill(home: Path, sample: dict[str, Any], overrides: dict[str, Any]) -> int:
    """Ingest every turn of one conversation into a fresh store at ``home``; returns the turn count."""
    with MemoryAPI(hermes_home=home, actor="bench", **overrides) as api:
        return ingest(api, sample)


def filled(data: list[dict[str, Any]], index: int, root: Path, overrides: dict[str, Any]) -> Path:
    """The store of conversation ``index`` under ``root``, filled on first use."""
    home = root / f"conv-{index}"
    if not (home / "filled").exists():
        shutil.rmtree(home, ignore_errors=True)
        t0 = time.perf_counter()
        turns = fill(home, data[index], overrides)
        (home / "filled").write_text(str(turns), encoding="utf-8")
        print(f"filled {home}: {turns} turns in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    return home


def questions(sample: dict[str, Any], n: int) -> list[str]:
    out = [str(qa["question"]) for qa in sample["qa"] if str(qa.get("category")) in CATEGORIES]
    return out[:n]


class _PreEmbedded:
    """The embedder with each question's vector computed beforehand: recall's own work, timed apart from
    the query embedding (which is timed on its own)."""

    def __init__(self, inner: Any, vectors: dict[str, Any]):
        self._inner = inner
        self._vectors = vectors

    def embed_query(self, texts: list[str]) -> Any:
        if len(texts) == 1 and texts[0] in self._vectors:
            return self._vectors[texts[0]][None, :]
        return self._inner.embed_query(texts)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def timed(api: MemoryAPI, asked: list[str]) -> tuple[list[float], list[int]]:
    """Wall time (ms) and SQL statement count (top level, not FTS5's own) of each recall."""
    counts: list[int] = []
    statements = [0]

    def trace(sql: str) -> None:
        if not sql.startswith("--"):
            statements[0] += 1

    conns = _connections(api)
    for conn in conns:
        conn.set_trace_callback(trace)
    lat: list[float] = []
    try:
        for question in asked:
            statements[0] = 0
            t0 = time.perf_counter()
            env = api.recall(question, limit=30)
            lat.append((time.perf_counter() - t0) * 1000.0)
            if not env["success"]:
                raise RuntimeError(f"recall failed: {env['error']}")
            counts.append(statements[0])
    finally:
        for conn in conns:
            conn.set_trace_callback(None)
    return lat, counts


def _connections(api: MemoryAPI) -> list[sqlite3.Connection]:
    """The writer and every read connection opened so far (recall reads through the pool)."""
    db = api.tier2.db
    return [db._conn, *(c for c in db._readers if isinstance(c, sqlite3.Connection))]


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", default=str(DEFAULT_DATA))
    parser.add_argument("--conversation", type=int, default=0)
    parser.add_argument("--recalls", type=int, default=50)
    parser.add_argument("--embedder", default=None, help="override tier3.embedding_model (default: config)")
    parser.add_argument("--home", default=None, help="keep (and re-use) the filled store here")
    parser.add_argument("--top", type=int, default=45, help="functions to print")
    parser.add_argument("--json", dest="json_out", help="write the timings here")
    args = parser.parse_args(argv)
    data = json.loads(Path(args.data).read_text(encoding="utf-8"))
    sample = data[args.conversation]
    overrides: dict[str, Any] = {}
    if args.embedder:
        overrides["tier3.embedding_model"] = args.embedder
    root = Path(args.home) if args.home else Path("/tmp/hm-recall-profile")
    home = filled(data, args.conversation, root, overrides)
    asked = questions(sample, args.recalls)
    with MemoryAPI(hermes_home=home, actor="bench", **overrides) as api:
        api.recall("warm up the model and the store", limit=30)  # the model load is not a recall
        sem = api.core.tiers.sem
        assert sem is not None
        lat, _ = timed(api, asked)  # full recalls, each question embedded once
        stripped = {api.core.recall_engine()._heard(q).stripped for q in asked}
        real = sem.embedder
        embed_ms: list[float] = []
        vectors: dict[str, Any] = {}
        for text in sorted(stripped):
            t0 = time.perf_counter()
            vectors[text] = real.embed_query([text + " "])[0]  # not the cached vector of the pass above
            embed_ms.append((time.perf_counter() - t0) * 1000.0)
            vectors[text] = real.embed_query([text])[0]
        sem._embedder = _PreEmbedded(real, vectors)
        own, own_counts = timed(api, asked)
        profiler = cProfile.Profile()
        profiler.enable()
        for question in asked:
            api.recall(question, limit=30)
        profiler.disable()
        sem._embedder = real
    load = os.getloadavg()
    summary = {
        "conversation": sample.get("sample_id"),
        "recalls": len(asked),
        "recall_p50_ms": round(statistics.median(lat), 2),
        "recall_p95_ms": round(pct(lat, 0.95), 2),
        "query_embedding_p50_ms": round(statistics.median(embed_ms), 2),
        "query_embedding_p95_ms": round(pct(embed_ms, 0.95), 2),
        "recall_without_embedding_p50_ms": round(statistics.median(own), 2),
        "recall_without_embedding_p95_ms": round(pct(own, 0.95), 2),
        "sql_statements_per_recall": round(statistics.fmean(own_counts), 1),
        "load_average": [round(x, 2) for x in load],
    }
    print(json.dumps(summary, indent=2))
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    stats.sort_stats("cumulative").print_stats(args.top)
    # Where the two recall entry points spend their time, callee by callee.
    stats.print_callees(r"core/recall.py:\d+\(query\)|engine.py:\d+\(recall\)")
    text = out.getvalue()
    # Per recall, in ms: pstats prints seconds for the whole run.
    print(f"(cProfile of the {len(asked)} recalls without embedding; divide by {len(asked)} for one)")
    print(text)
    if args.json_out:
        Path(args.json_out).write_text(json.dumps({**summary, "latencies_ms": lat}, indent=2) + "\n", "utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
