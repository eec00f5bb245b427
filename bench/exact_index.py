"""The exact index (``ExactIndex``) alone, per size: recall's three kind searches, float32 vs int8.

    python bench/exact_index.py --sizes 2500 16000 32000 64000 400000 --queries 200
    python bench/exact_index.py --home /tmp/scale100k/turns_100000_hashing_seed7/default/memory
    python bench/exact_index.py --cold /tmp/snap_home/default/memory --runs 3

Each query is searched as recall does: the three chunk kinds of one recall (``episode``,
``episode_window``, ``fact``), top 20 each, filtered by kind and scope, in one ``search_many``. Per
size it times both row formats (``float_rows`` forced: the float32 rows, or the int8 rows and their
two-stage scoring), prints the index's bytes, and the top-10 agreement of each with an exact float32
ranking in numpy: the share of the index's top-10 (per view) whose exact cosine reaches the exact
10th best, so a tie broken the other way (many chunks of a filled store repeat a text) is no miss.

Synthetic vectors: unit-length points around 2,000 random centres, for timing (their agreement is
pessimistic: past a query's few cluster mates every cosine is noise around 0, a near tie); ``--home``
reads a filled store's Tier 2 vectors instead (queries: stored vectors of random chunks plus a little
noise). Measured on 10,833 real all-MiniLM vectors of the LoCoMo dev turns with 300 real questions,
int8 agreement was 0.997; on the 100k-turn hashing store (many near-duplicate template sentences)
0.94. One BLAS thread, as the index runs.

``--cold`` times a cold process's first search on a filled store (each run a fresh subprocess: open the
store, build the index, one recall's ``search_many``; its RSS then and its peak): first with no
snapshot (the index loads every vector from Tier 2, then writes its snapshot under ``<home>/tier3``,
timed too), then from that snapshot (mapped, checked, caught up from the change feed). The snapshot is
removed again at the end. On the 100k-turn hashing store (260,181 chunk vectors; 2 cores, load average
~2.5): 6.7-8.4 s from Tier 2, 0.16-0.21 s from the snapshot (134 MB file, written in 0.4 s); RSS 212 MB
(148 MB of it the mapped file) against 230 MB; the same hits.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hermes_memory.tier2.chunks import ChunkRow
from hermes_memory.tier2.vectors import Marks
from hermes_memory.tier3._exact import ExactIndex
from hermes_memory.tier3._indexer import vector_payload

KINDS = ("episode", "episode_window", "fact")
DIM = 384
K = 20
TOL = 1e-6  # cosines this close to the 10th best count as ties


class _Frozen:
    """A feed that never changes: the index holds what ``_add`` gave it."""

    def heads(self) -> Marks:
        return Marks()


def synthetic(n: int, rng: np.random.Generator) -> tuple[list[ChunkRow], npt.NDArray[np.float32]]:
    centres = rng.standard_normal((2000, DIM)).astype(np.float32)
    vecs = centres[rng.integers(0, len(centres), n)] + 0.6 * rng.standard_normal((n, DIM)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    rows = [
        ChunkRow(
            uuid=str(uuid.UUID(int=int(rng.integers(1, 2**62)) << 64 | i)), source_kind=KINDS[i % 3],
            source_uuid=f"s{i // 3}", chunk_index=0, text="", content_hash=f"h{i}", source_type="session",
            session_id=f"sess{i // 50}", message_id=i, category=None, timestamp=float(i), scope="default",
        )
        for i in range(n)
    ]  # fmt: skip
    return rows, vecs


def stored(home: Path) -> tuple[list[ChunkRow], npt.NDArray[np.float32]]:
    """Every chunk vector of the store under ``home`` (a ``.../memory`` folder with tier2.db)."""
    from hermes_memory.tier2.db import SqliteDatabase
    from hermes_memory.tier2.vectors import VectorStore

    db = SqliteDatabase(home / "tier2.db")
    store = VectorStore(db)
    model = db.query_one("SELECT model_id FROM vectors LIMIT 1")
    if model is None:
        raise SystemExit(f"{home} holds no vectors")
    rows: list[ChunkRow] = []
    vecs: list[npt.NDArray[np.float32]] = []
    marks = Marks()
    while True:
        page = store.changes(str(model["model_id"]), DIM, marks)
        for chunk, vector in page.rows:
            rows.append(chunk)
            vecs.append(vector)
        marks = page.marks
        if not page.more:
            break
    db.close()
    return rows, np.stack(vecs)


def build(rows: list[ChunkRow], vecs: npt.NDArray[np.float32], float_rows: int) -> ExactIndex:
    feed: Any = _Frozen()
    index = ExactIndex(
        feed, "bench", DIM, loader=lambda _: {}, payload_of=vector_payload, float_rows=float_rows
    )
    index._rows.grow(len(rows))
    for start in range(0, len(rows), 4096):
        index._rows.add(list(zip(rows[start : start + 4096], vecs[start : start + 4096], strict=True)))
    return index


def reference(
    vecs: npt.NDArray[np.float32], kinds: npt.NDArray[Any], query: npt.NDArray[np.float32], k: int
) -> dict[str, tuple[npt.NDArray[np.float32], float]]:
    """Per kind: the exact float32 cosines of every row and the k-th best of the kind's rows."""
    cos = vecs @ query
    out = {}
    for kind in KINDS:
        mine = cos[kinds == kind]
        out[kind] = (cos, float(np.partition(mine, len(mine) - k)[len(mine) - k]))
    return out


def run(rows: list[ChunkRow], vecs: npt.NDArray[np.float32], queries: npt.NDArray[np.float32]) -> None:
    n = len(rows)
    kinds = np.array([r.source_kind for r in rows])
    at = {r.uuid: i for i, r in enumerate(rows)}
    scope = rows[0].scope
    views = {k: (K, {"source_kind": k, "scope": {"in": [scope]}}) for k in KINDS}
    fields = ("source_kind", "source_uuid", "chunk_id")
    refs = [reference(vecs, kinds, q, 10) for q in queries[:50]]
    for label, float_rows in (("float32", n), ("int8", 0)):
        index = build(rows, vecs, float_rows)
        times = []
        agree = []
        for i, q in enumerate(queries):
            t0 = time.perf_counter()
            found = index.search_many(q, views, fields=fields)
            times.append((time.perf_counter() - t0) * 1000)
            if i < len(refs):
                for kind, hits in found.items():
                    cos, kth = refs[i][kind]
                    got = [at[str(h.payload["chunk_id"])] for h in hits[:10]]
                    agree.append(sum(1 for g in got if cos[g] >= kth - TOL) / 10)
        times.sort()
        health = index.health()
        p50, p95 = statistics.median(times), times[int(0.95 * (len(times) - 1))]
        print(
            f"{n:>8} {label:>8} p50 {p50:7.2f} ms  p95 {p95:7.2f} ms  top-10 agreement "
            f"{statistics.mean(agree):.4f}  matrix {health['matrix_bytes'] / 2**20:6.1f} MB",
            flush=True,
        )
        index.close()


def _rss_mb() -> dict[str, float]:
    """This process's resident memory now, its peak, and the file-backed part (a mapped snapshot), MB."""
    fields = {}
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM", "RssFile", "RssAnon"):
                fields[key] = int(value.split()[0]) / 1024
    return fields


def cold_child(home: Path, use_snapshot: bool, save: bool) -> None:
    """One cold open: the store, the index (from its snapshot or from Tier 2), one recall's searches."""
    from hermes_memory.tier2.db import SqliteDatabase
    from hermes_memory.tier2.vectors import VectorStore
    from hermes_memory.tier3._snapshot import snapshot_path

    t0 = time.perf_counter()
    db = SqliteDatabase(home / "tier2.db")
    store = VectorStore(db)
    model = db.query_one("SELECT model_id FROM vectors LIMIT 1")
    scope = db.query_one("SELECT scope FROM chunks LIMIT 1")
    if model is None or scope is None:
        raise SystemExit(f"{home} holds no vectors")
    path = snapshot_path(home / "tier3", str(model["model_id"]))
    index = ExactIndex(
        store, str(model["model_id"]), DIM, loader=lambda _: {}, payload_of=vector_payload,
        snapshot=path if use_snapshot else None,
    )  # fmt: skip
    query = np.random.default_rng(3).standard_normal(DIM).astype(np.float32)
    views = {k: (K, {"source_kind": k, "scope": {"in": [str(scope["scope"])]}}) for k in KINDS}
    found = index.search_many(query / np.linalg.norm(query), views, fields=("source_kind", "chunk_id"))
    first = time.perf_counter() - t0
    out: dict[str, Any] = {"first_search_s": round(first, 3), "rows": index.size, **_rss_mb()}
    out["hits"] = [h.id for k in KINDS for h in found[k]]
    t1 = time.perf_counter()
    query2 = np.random.default_rng(4).standard_normal(DIM).astype(np.float32)
    index.search_many(query2 / np.linalg.norm(query2), views, fields=("source_kind", "chunk_id"))
    out["second_search_ms"] = round((time.perf_counter() - t1) * 1000, 2)
    if save:
        t2 = time.perf_counter()
        index._snapshot = path
        index.save_snapshot(force=True)
        out["save_s"] = round(time.perf_counter() - t2, 3)
        out["snapshot_mb"] = round(path.stat().st_size / 2**20, 1)
        out["after_save"] = _rss_mb()
    index.close()
    db.close()
    print(json.dumps(out))


def cold(home: Path, runs: int) -> None:
    from hermes_memory.tier3._snapshot import remove_snapshots

    def child(*flags: str) -> dict[str, Any]:
        cmd = [sys.executable, __file__, "--cold", str(home), "--child", *flags]
        done = subprocess.run(cmd, check=True, capture_output=True, text=True, env=os.environ)
        result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
        return result

    remove_snapshots(home / "tier3")
    hits = None
    try:
        for label, flags in (("from Tier 2", ("--no-snapshot",)), ("from snapshot", ())):
            for run in range(runs):
                extra = ("--save",) if label == "from Tier 2" and run == runs - 1 else ()
                r = child(*flags, *extra)
                same = "" if hits is None else f"  same hits {r['hits'] == hits}"
                hits = r["hits"] if hits is None else hits
                save = f"  save {r['save_s']:.2f} s ({r['snapshot_mb']} MB)" if "save_s" in r else ""
                print(
                    f"{label:>14}  rows {r['rows']}  open + first search {r['first_search_s']:6.3f} s  "
                    f"next {r['second_search_ms']:6.2f} ms  RSS {r['VmRSS']:5.0f} MB "
                    f"(file {r['RssFile']:.0f})  peak {r['VmHWM']:5.0f} MB{save}{same}",
                    flush=True,
                )
    finally:
        remove_snapshots(home / "tier3")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[2500, 16000, 32000, 64000])
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--home", type=Path, default=None, help="a filled store's memory folder (tier2.db)")
    ap.add_argument("--cold", type=Path, default=None, help="time cold opens of this memory folder")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--no-snapshot", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--save", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.cold is not None:
        if args.child:
            cold_child(args.cold, not args.no_snapshot, args.save)
        else:
            cold(args.cold, args.runs)
        return
    rng = np.random.default_rng(7)
    if args.home is not None:
        rows, vecs = stored(args.home)
        picks = vecs[rng.integers(0, len(vecs), args.queries)]
        queries = picks + 0.3 * rng.standard_normal(picks.shape).astype(np.float32) / np.sqrt(DIM)
        run(rows, vecs, (queries / np.linalg.norm(queries, axis=1, keepdims=True)).astype(np.float32))
        return
    for n in args.sizes:
        rows, vecs = synthetic(n, rng)
        picks = vecs[rng.integers(0, n, args.queries)]
        queries = picks + 0.5 * rng.standard_normal(picks.shape).astype(np.float32) / np.sqrt(DIM)
        run(rows, vecs, (queries / np.linalg.norm(queries, axis=1, keepdims=True)).astype(np.float32))


if __name__ == "__main__":
    main()
