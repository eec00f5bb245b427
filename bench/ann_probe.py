"""Would an inverted-file index (IVF) beat the exact index's sign-bit first stage on real MiniLM vectors?

    python bench/ann_probe.py --texts 130000 --queries 300

The texts are sentences of the docstrings of Python's standard library (real English, found on any
machine with Python; 6-40 words, distinct), embedded with the default ``local`` all-MiniLM-L6-v2; the
queries are further such sentences, embedded as queries. For each, the exact top ``--k`` by cosine is
the truth. Then:
  * IVF: k-means centroids (``--lists``, fitted on a sample, 12 rounds), every vector in its nearest
    list, a query scored in full against the vectors of its ``nprobe`` nearest lists: recall@k, the
    share of vectors scored and the time per query;
  * the exact index's two stages (``tier3._exact_scoring``): the sign bits of the vectors turned by the
    index's own rotation (``_exact_rows.rotation``), the nearest share of them by Hamming distance scored
    in full (in float32 here, where the index scores int8 rows): recall@k per share;
  * with ``--hnsw`` (needs ``pip install faiss-cpu``, which the project does not depend on): a graph index
    (faiss HNSW, 32 links, vectors in 8-bit scalar quantisation), built on two threads and searched on
    one: recall@k, bytes a vector and time a query per ``efSearch``.
Numbers are wall clock on a shared machine; the recall figures are what matters.
"""

from __future__ import annotations

import argparse
import ast
import re
import statistics
import sys
import sysconfig
import time
from pathlib import Path

import numpy as np
import numpy.typing as npt

Floats = npt.NDArray[np.float32]


def docstring_sentences(limit: int) -> list[str]:
    """Distinct sentences (6-40 words) of the docstrings of the standard library's modules."""
    found: dict[str, None] = {}
    for path in sorted(Path(sysconfig.get_paths()["stdlib"]).rglob("*.py")):
        try:
            tree = ast.parse(path.read_text(encoding="utf-8", errors="ignore"))
        except (SyntaxError, ValueError):
            continue  # a test fixture written to fail to parse
        for node in ast.walk(tree):
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                doc = ast.get_docstring(node)
                for sentence in re.split(r"(?<=[.!?])\s+", " ".join((doc or "").split())):
                    if 6 <= len(sentence.split()) <= 40:
                        found.setdefault(sentence, None)
        if len(found) >= limit:
            break
    return list(found)[:limit]


def unit(rows: Floats) -> Floats:
    out: Floats = (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)
    return out


def recall_at(found: list[npt.NDArray[np.intp]], truth: npt.NDArray[np.intp]) -> float:
    k = truth.shape[1]
    shared = [len(set(f.tolist()) & set(t.tolist())) / k for f, t in zip(found, truth, strict=True)]
    return float(np.mean(shared))


def best(candidates: npt.NDArray[np.intp], scores: Floats, k: int) -> npt.NDArray[np.intp]:
    if len(candidates) <= k:
        return candidates
    out: npt.NDArray[np.intp] = candidates[np.argpartition(-scores, k)[:k]]
    return out


def ivf(x: Floats, queries: Floats, truth: npt.NDArray[np.intp], lists: int, probes: list[int]) -> None:
    rng = np.random.default_rng(0)
    started = time.perf_counter()
    centres = x[rng.choice(len(x), lists, replace=False)].copy()
    sample = x[rng.choice(len(x), min(len(x), 60 * lists), replace=False)]
    for _ in range(12):
        nearest = np.argmax(sample @ centres.T, axis=1)
        for j in range(lists):
            members = sample[nearest == j]
            if len(members):
                centres[j] = members.mean(axis=0)
        centres = unit(centres)
    step = 16384
    parts = [np.argmax(x[s : s + step] @ centres.T, axis=1) for s in range(0, len(x), step)]
    assigned = np.concatenate(parts)
    order = np.argsort(assigned, kind="stable")
    grouped = x[order]
    bounds = np.searchsorted(assigned[order], np.arange(lists + 1))
    built = time.perf_counter() - started
    k = truth.shape[1]
    for nprobe in probes:
        found, scored, took = [], [], []
        for q in queries:
            t0 = time.perf_counter()
            chosen = np.argpartition(-(centres @ q), nprobe)[:nprobe]
            rows = np.concatenate([np.arange(bounds[c], bounds[c + 1]) for c in chosen])
            top = best(rows, grouped[rows] @ q, k)
            took.append(time.perf_counter() - t0)
            found.append(order[top])
            scored.append(len(rows))
        share = statistics.mean(scored) / len(x)
        print(f"IVF {lists} lists (built in {built:.1f} s), nprobe {nprobe}: recall@{k} "
              f"{recall_at(found, truth):.3f}, {share:.1%} of the vectors scored, "
              f"{1e3 * statistics.median(took):.2f} ms")  # fmt: skip


def sign_bits(x: Floats, queries: Floats, truth: npt.NDArray[np.intp], shares: list[float]) -> None:
    from hermes_memory.tier3._exact_rows import rotation as index_rotation

    rotation = index_rotation(x.shape[1])
    bits = np.packbits((x @ rotation) > 0, axis=1)
    asked = np.packbits((queries @ rotation) > 0, axis=1)
    k = truth.shape[1]
    for share in shares:
        keep = max(k + 1, int(share * len(x)))
        found = []
        for q, mine in zip(queries, asked, strict=True):
            distance = np.unpackbits(bits ^ mine, axis=1).sum(axis=1)
            rows = np.argpartition(distance, keep)[:keep]
            found.append(best(rows, x[rows] @ q, k))
        print(f"sign bits, nearest {share:.1%} scored in full: recall@{k} {recall_at(found, truth):.3f}")


def hnsw(x: Floats, queries: Floats, truth: npt.NDArray[np.intp], efs: list[int]) -> None:
    import faiss  # type: ignore[import-not-found]

    index = faiss.IndexHNSWSQ(x.shape[1], faiss.ScalarQuantizer.QT_8bit, 32, faiss.METRIC_INNER_PRODUCT)
    index.train(x)
    faiss.omp_set_num_threads(2)
    started = time.perf_counter()
    index.add(x)
    built = time.perf_counter() - started
    faiss.omp_set_num_threads(1)
    size = len(faiss.serialize_index(index)) / len(x)
    k = truth.shape[1]
    for ef in efs:
        index.hnsw.efSearch = ef
        found, took = [], []
        for q in queries:
            t0 = time.perf_counter()
            _, rows = index.search(q[None, :], k)
            took.append(time.perf_counter() - t0)
            found.append(rows[0])
        share = recall_at(found, truth)
        print(f"HNSW 32 links, 8-bit (built in {built:.0f} s, {size:.0f} B a vector), efSearch {ef}: "
              f"recall@{k} {share:.3f}, {1e3 * statistics.median(took):.2f} ms")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--texts", type=int, default=130_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--k", type=int, default=20)
    parser.add_argument("--lists", type=int, nargs="+", default=[256, 1024])
    parser.add_argument("--probes", type=int, nargs="+", default=[8, 16, 32, 64])
    parser.add_argument("--shares", type=float, nargs="+", default=[0.005, 0.01, 0.02])
    parser.add_argument("--hnsw", type=int, nargs="*", metavar="EF", help="also faiss HNSW at these efSearch")
    args = parser.parse_args(argv)
    from hermes_memory.tier3.embedder import DEFAULT_EMBEDDER, make_embedder

    sentences = docstring_sentences(args.texts + args.queries)
    if len(sentences) < args.queries + 1000:
        parser.error(f"only {len(sentences)} sentences found in the standard library's docstrings")
    texts, asked = sentences[args.queries :], sentences[: args.queries]
    embedder = make_embedder(DEFAULT_EMBEDDER)
    started = time.perf_counter()
    x = unit(np.concatenate([np.asarray(embedder.embed_document(texts[s : s + 256]), dtype=np.float32)
                             for s in range(0, len(texts), 256)]))  # fmt: skip
    queries = unit(np.asarray(embedder.embed_query(asked), dtype=np.float32))
    print(f"{len(texts)} texts and {len(asked)} queries embedded in {time.perf_counter() - started:.0f} s")
    truth = np.argsort(-(queries @ x.T), axis=1)[:, : args.k]
    for lists in args.lists:
        ivf(x, queries, truth, lists, args.probes)
    sign_bits(x, queries, truth, args.shares)
    if args.hnsw is not None:
        hnsw(x, queries, truth, args.hnsw or [64, 128, 256])
    return 0


if __name__ == "__main__":
    sys.exit(main())
