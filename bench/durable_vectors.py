"""Durable vectors: exact search in a process that does not own the ANN engine, and reindex with reuse.

    python bench/durable_vectors.py --locomo 1          # LoCoMo conversation(s), real MiniLM
    python bench/durable_vectors.py --synthetic 100000  # 100k random 384-d vectors, no model

``--locomo N`` ingests the first N LoCoMo dev conversations (``remember_turn`` + ``flush``, the real
embedder), then measures, in a second process while this one owns qdrant-edge: the exact index's first
load, ``source_scores`` (recall's vector call: three chunk kinds, one query vector) and ``search``
latency (query embedding excluded; the queries are pre-embedded), with the owner's engine latency for
comparison; then ``reindex`` with the stored vectors (reuse) and after deleting them (re-embed all).

``--synthetic N`` writes N chunks with random unit vectors straight into Tier 2 (no model), then in a
fresh process builds the exact index and measures load time, peak RSS, ``source_scores``-style search
latency, a no-op refresh and an incremental refresh of 100 new chunks.
Times are wall-clock on a shared machine; the load average is printed.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np

DATA = Path("/work/shared/bench/locomo_dev.json")
KINDS = ("episode", "episode_window", "fact")


def _pct(values: list[float], q: float) -> float:
    return sorted(values)[min(len(values) - 1, int(q * len(values)))]


def _ms(values: list[float]) -> str:
    p50, p95 = statistics.median(values) * 1000, _pct(values, 0.95) * 1000
    return f"p50 {p50:.2f} ms, p95 {p95:.2f} ms (n={len(values)})"


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# ---------------------------------------------------------------- synthetic (100k)


def fill_synthetic(db_path: Path, n: int, dim: int, model_id: str) -> None:
    from hermes_memory.tier2.store import Tier2
    from hermes_memory.tier2.vectors import to_blob

    tier2 = Tier2.open(db_path)
    rng = np.random.default_rng(7)
    try:
        with tier2.db.atomic() as conn:
            for start in range(0, n, 10_000):
                rows, vecs = [], []
                for i in range(start, min(n, start + 10_000)):
                    digest = hashlib.sha256(f"text {i}".encode()).hexdigest()
                    kind = KINDS[i % 3]
                    rows.append((f"c{i:08d}", kind, f"s{i // 3}", f"text {i}", digest, "session",
                                 f"session{i % 500}", 1.7e9 + i, 1.7e9 + i))  # fmt: skip
                    v = rng.standard_normal(dim).astype(np.float32)
                    vecs.append((model_id, digest, dim, to_blob(v / np.linalg.norm(v)), 0.0))
                conn.executemany(
                    "INSERT INTO chunks(uuid, source_kind, source_uuid, text, content_hash, source_type,"
                    " session_id, timestamp, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    rows,
                )
                conn.executemany(
                    "INSERT INTO vectors(model_id, text_hash, dim, vector, created_at) "
                    "VALUES (?, ?, ?, ?, ?)",
                    vecs,
                )
            conn.execute("DELETE FROM embed_queue")
    finally:
        tier2.close()


def measure_synthetic(db_path: Path, dim: int, model_id: str, queries: int) -> dict[str, Any]:
    from hermes_memory.scoping import ScopeView
    from hermes_memory.tier2.store import Tier2
    from hermes_memory.tier2.vectors import VectorStore, to_blob
    from hermes_memory.tier3._exact import ExactIndex
    from hermes_memory.tier3._indexer import vector_payload

    base = _rss_mb()
    tier2 = Tier2.open(db_path, view=ScopeView.all())
    index = ExactIndex(VectorStore(tier2.db), model_id, dim, loader=tier2.chunks.get_many,
                       payload_of=vector_payload)  # fmt: skip
    t0 = time.perf_counter()
    index.refresh()
    load = time.perf_counter() - t0
    after_load = _rss_mb()
    rng = np.random.default_rng(11)
    lat: list[float] = []
    for _ in range(queries):
        q = rng.standard_normal(dim).astype(np.float32)
        t0 = time.perf_counter()
        for kind in KINDS:  # what source_scores asks: one vector, three kinds, scoped
            index.search(q, limit=50, filters={"scope": {"in": ["default"]}, "source_kind": kind},
                         fields=("source_kind", "source_uuid"))  # fmt: skip
        lat.append(time.perf_counter() - t0)
    noop = []
    for _ in range(200):
        t0 = time.perf_counter()
        index.refresh()
        noop.append(time.perf_counter() - t0)
    with tier2.db.atomic() as conn:  # another process adds 100 chunks with vectors
        for i in range(100):
            digest = hashlib.sha256(f"new {i}".encode()).hexdigest()
            conn.execute(
                "INSERT INTO chunks(uuid, source_kind, text, content_hash, source_type, timestamp,"
                " created_at) VALUES (?, 'episode', ?, ?, 'session', 0, 0)",
                (f"n{i}", f"new {i}", digest),
            )
            v = rng.standard_normal(dim).astype(np.float32)
            conn.execute(
                "INSERT INTO vectors(model_id, text_hash, dim, vector, created_at) VALUES (?, ?, ?, ?, 0)",
                (model_id, digest, dim, to_blob(v / np.linalg.norm(v))),
            )
    t0 = time.perf_counter()
    added = index.refresh()
    incremental = time.perf_counter() - t0
    out = {
        "chunks": index.count(), "load_s": round(load, 3), "rss_before_mb": round(base),
        "rss_after_load_mb": round(after_load), "rss_peak_mb": round(_rss_mb()),
        "matrix_mb": round(index.health()["matrix_bytes"] / 2**20), "source_scores_3_kinds": _ms(lat),
        "noop_refresh": _ms(noop), "refresh_100_new_ms": round(incremental * 1000, 2), "added": added,
    }  # fmt: skip
    tier2.close()
    return out


# ---------------------------------------------------------------- LoCoMo (real model)

SECOND = """
import functools, json, sys, time, statistics
sys.path.insert(0, sys.argv[3])
from hermes_memory import MemoryAPI
from hermes_memory.tier3._recallable import nearest, recallable, recallable_sources
home, queries = sys.argv[1], json.loads(sys.argv[2])
api = MemoryAPI(hermes_home=home)
sem = api.core.tiers.semantic()
assert sem.busy_reason() is not None, "the bench's owner process should hold the engine"
vecs = [sem.embedder.embed_query([q])[0] for q in queries]  # query embedding not timed
index = sem._searchable()
t0 = time.perf_counter(); index.refresh(); load = time.perf_counter() - t0
limits = {"episode": 50, "episode_window": 20, "fact": 50}
def timed(fn):
    out = []
    for v in vecs:
        t0 = time.perf_counter(); fn(v); out.append(time.perf_counter() - t0)
    return out
sources = functools.partial(recallable_sources, sem._tier2)
scores = timed(lambda v: [nearest(index, v, limits[k], sem._scoped_filters({"source_kind": k}),
                                  sources, fields=("source_kind", "source_uuid"))
                          for k in limits])
hits = functools.partial(recallable, sem._tier2)
search = timed(lambda v: nearest(index, v, 10, sem._scoped_filters(None), hits))
print(json.dumps({"load_s": load, "scores": scores, "search": search, "count": index.count()}))
api.close()
"""


def _turns(sample: dict[str, Any]) -> list[tuple[str, str, str, Any]]:
    """(text, session, speaker, time) of every turn, as the LoCoMo harness ingests them."""
    from hermes_memory.bench.locomo import turn_text, turns_of

    out = []
    for when, session, turn in turns_of(sample["conversation"]):
        text = turn_text(turn)
        if text:
            out.append((text, session, str(turn.get("speaker")), when))
    return out


def run_locomo(conversations: int, home: Path) -> dict[str, Any]:
    from hermes_memory import MemoryAPI
    from hermes_memory.tier3._recallable import nearest, recallable_sources

    data = json.loads(DATA.read_text())[:conversations]
    questions = [qa["question"] for conv in data for qa in conv["qa"]][:100]
    out: dict[str, Any] = {}
    with MemoryAPI(hermes_home=home) as api:
        t0 = time.perf_counter()
        turns = 0
        for sample in data:
            for text, session, speaker, when in _turns(sample):
                env = api.remember_message(text, session, when, speaker=speaker)
                assert env["success"], env
                turns += 1
        assert api.flush(3600)["data"]["drained"]
        out["turns"] = turns
        out["ingest_s"] = round(time.perf_counter() - t0, 1)
        sem = api.core.tiers.semantic()
        out["chunks"] = api.tier2.chunks.count()
        vecs = [sem.embedder.embed_query([q])[0] for q in questions]
        engine = sem.backend("memory_chunks")
        limits = {"episode": 50, "episode_window": 20, "fact": 50}
        lat = []
        for v in vecs:
            t1 = time.perf_counter()
            for k in limits:
                nearest(engine, v, limits[k], sem._scoped_filters({"source_kind": k}),
                        functools.partial(recallable_sources, sem._tier2),
                        fields=("source_kind", "source_uuid"))  # fmt: skip
            lat.append(time.perf_counter() - t1)
        out["owner_engine_source_scores"] = _ms(lat)
        root = str(Path(__file__).resolve().parents[1])
        proc = subprocess.run(
            [sys.executable, "-c", SECOND, str(home), json.dumps(questions), root],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        second = json.loads(proc.stdout)
        out["second_exact_load_s"] = round(second["load_s"], 3)
        out["second_exact_source_scores"] = _ms(second["scores"])
        out["second_exact_search10"] = _ms(second["search"])
        t1 = time.perf_counter()
        report = sem.reindex()
        out["reindex_reuse"] = {"s": round(time.perf_counter() - t1, 2), "embedded": report.embedded,
                                "upserted": report.upserted}  # fmt: skip
        with api.tier2.db.atomic() as conn:
            conn.execute("DELETE FROM vectors")
        t1 = time.perf_counter()
        report = sem.reindex()
        out["reindex_reembed"] = {"s": round(time.perf_counter() - t1, 2), "embedded": report.embedded,
                                  "upserted": report.upserted}  # fmt: skip
    return out


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--synthetic", type=int, default=0, help="chunks of random vectors (e.g. 100000)")
    parser.add_argument("--locomo", type=int, default=0, help="LoCoMo dev conversations with the real model")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--measure", help=argparse.SUPPRESS)  # internal: the measuring child process
    args = parser.parse_args()
    dim, model_id = 384, "sentence-transformers/all-MiniLM-L6-v2"
    if args.measure:
        print(json.dumps(measure_synthetic(Path(args.measure), dim, model_id, args.queries)))
        return 0
    print(f"load average: {os.getloadavg()}")
    with tempfile.TemporaryDirectory(prefix="hm-vectors-") as tmp:
        if args.synthetic:
            db = Path(tmp) / "tier2.db"
            t0 = time.perf_counter()
            fill_synthetic(db, args.synthetic, dim, model_id)
            print(f"filled {args.synthetic} chunks + vectors in {time.perf_counter() - t0:.1f} s")
            child = subprocess.run(
                [sys.executable, __file__, "--measure", str(db), "--queries", str(args.queries)],
                capture_output=True, text=True, check=True,
            )  # fmt: skip
            print(json.dumps(json.loads(child.stdout), indent=1))
        if args.locomo:
            print(json.dumps(run_locomo(args.locomo, Path(tmp) / "home"), indent=1))
    print(f"load average: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
