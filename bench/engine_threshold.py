"""Where the ANN engine starts to pay: exact search (``ExactIndex``) vs the embedded engine, per size.

    python bench/engine_threshold.py --sizes 2000 10000 20000 50000 --queries 200

One thread each (the exact index caps BLAS at one thread; qdrant-edge searches a shard in the caller's
thread). Each query is searched as recall does: the three chunk kinds of one recall (``episode``,
``episode_window``, ``fact``), top 20 each, filtered by kind and scope. The exact index answers the
three from one matrix product (``search_many``), the engine runs three searches. The engine is
optimised (HNSW built) before timing. Vectors: random Gaussian, unit length (search time depends on
size and dimension, not on the data). Also prints the time and RSS of opening the engine's store.
"""

from __future__ import annotations

import argparse
import gc
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hermes_memory.tier2.chunks import ChunkRow
from hermes_memory.tier2.vectors import Marks
from hermes_memory.tier3._exact import ExactIndex
from hermes_memory.tier3._indexer import vector_payload
from hermes_memory.tier3.backend import make_backend

KINDS = ("episode", "episode_window", "fact")
DIM = 384


class _Frozen:
    """A feed that never changes: the index holds what ``_add`` gave it."""

    def heads(self) -> Marks:
        return Marks()


def _rows(n: int, rng: np.random.Generator) -> tuple[list[ChunkRow], np.ndarray]:
    vecs = rng.standard_normal((n, DIM)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    rows = [
        ChunkRow(
            uuid=f"c{i:07d}",
            source_kind=KINDS[i % 3],
            source_uuid=f"s{i // 3}",
            chunk_index=0,
            text="",
            content_hash=f"h{i}",
            source_type="session",
            session_id=f"sess{i // 50}",
            message_id=i,
            category=None,
            timestamp=float(i),
            scope="default",
        )
        for i in range(n)
    ]
    return rows, vecs


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[2000, 10000, 20000, 50000])
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--k", type=int, default=20)
    args = ap.parse_args()
    rng = np.random.default_rng(7)
    print(f"{'vectors':>8} {'exact p50':>10} {'exact p95':>10} {'engine p50':>11} {'engine p95':>11}"
          f" {'open s':>7} {'open MB':>8}  (ms per recall: 3 kind searches, top {args.k})")  # fmt: skip
    for n in args.sizes:
        rows, vecs = _rows(n, rng)
        queries = rng.standard_normal((args.queries, DIM)).astype(np.float32)
        queries /= np.linalg.norm(queries, axis=1, keepdims=True)
        index = ExactIndex(_Frozen(), "bench", DIM, loader=lambda _: {}, payload_of=vector_payload)  # type: ignore[arg-type]
        index._grow(n)
        index._add(list(zip(rows, vecs, strict=True)))
        fields = ("source_kind", "source_uuid")
        views = {k: {"source_kind": k, "scope": {"in": ["default"]}} for k in KINDS}
        exact: list[float] = []
        for q in queries:
            t = time.perf_counter()
            index.search_many(q, {k: (args.k, f) for k, f in views.items()}, fields=fields)
            exact.append(time.perf_counter() - t)
        tmp = Path(tempfile.mkdtemp(prefix="engine-threshold-"))
        try:
            engine = make_backend("qdrant", collection="memory_chunks", dim=DIM, path=str(tmp))
            for start in range(0, n, 2048):
                part = rows[start : start + 2048]
                engine.upsert([r.vector_id for r in part], vecs[start : start + 2048],
                              [vector_payload(r) for r in part])  # fmt: skip
            engine.optimize()  # type: ignore[attr-defined]
            engine.close()
            gc.collect()
            rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            t = time.perf_counter()
            engine = make_backend("qdrant", collection="memory_chunks", dim=DIM, path=str(tmp))
            opened = time.perf_counter() - t
            grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss0) / 1024
            ann: list[float] = []
            for q in queries:
                t = time.perf_counter()
                for f in views.values():
                    engine.search(q, limit=args.k, filters=f, fields=fields)
                ann.append(time.perf_counter() - t)
            engine.close()
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        cells = (_p(exact, 0.5), _p(exact, 0.95), _p(ann, 0.5), _p(ann, 0.95))
        print(f"{n:>8} " + " ".join(f"{c:>10.2f}" for c in cells) + f" {opened:>7.2f} {grown:>8.0f}")
        del index
    print(f"{args.queries} queries per size; open MB: growth of peak RSS (0 once an earlier size peaked)")


if __name__ == "__main__":
    main()
