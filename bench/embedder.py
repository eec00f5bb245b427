"""Query and batch embedding: `local` (MiniLM without torch, both runtimes) and sentence-transformers.

    python bench/embedder.py                          # local (both runtimes) and sentence-transformers
    python bench/embedder.py --queries 300 --texts 1024 --embedders local:numpy sentence-transformers
    python bench/embedder.py --embedders local:onnxruntime --batch-sizes 1 4 8 16 32 64

Each embedder runs in its own fresh interpreter, one after the other, so its load time and RSS are
its own (sentence-transformers brings torch; local must not). `sentence-transformers` runs the packaged
all-MiniLM-L6-v2 folder. Printed per embedder: threads (local's cap, torch's intra-op count), load
(import of hermes_memory + construct + first embed; "model s" leaves out the package import), RSS
after load and peak, whether torch was imported,
one-query latency p50/p95 (distinct LoCoMo questions, query cache off), and batch throughput in
texts/s and tokens/s over LoCoMo turns (tokens = word pieces actually run, i.e. cut at the 256-piece
window). Then the worst cosine between each pair of embedders' vectors of the same texts, and the
load average before and after. Times are wall clock on a shared machine: compare within one run.
With ``--batch-sizes``, each embedder is also run over the same texts with each forward-pass batch size
(one ``embed_document`` call, texts grouped by length inside it): texts/s and tokens/s per size.
"""

from __future__ import annotations

import argparse
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

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = Path("/work/shared/bench/locomo_dev.json")


def corpus(path: Path, n_queries: int, n_texts: int) -> tuple[list[str], list[str]]:
    """LoCoMo questions and turns when the file exists, else synthetic ones (same sizes)."""
    if path.exists():
        samples = json.loads(path.read_text(encoding="utf-8"))
        questions: list[str] = []
        turns: list[str] = []
        for sample in samples:
            questions += [q["question"] for q in sample.get("qa", []) if q.get("category") in (1, 2, 3, 4)]
            for key, session in sample["conversation"].items():
                if key.startswith("session_") and key.count("_") == 1 and isinstance(session, list):
                    turns += [f"{t['speaker']}: {t['text']}" for t in session]
        questions = list(dict.fromkeys(questions))  # distinct, so no cache could answer
    else:
        questions = [f"What did person {i} do on day {i % 31} of the trip?" for i in range(n_queries)]
        turns = [
            f"Speaker {i % 7}: I went hiking with my friend number {i} near lake {i % 13}."
            for i in range(n_texts)
        ]
    if len(questions) < n_queries or len(turns) < n_texts:
        raise SystemExit(
            f"need {n_queries} questions and {n_texts} turns, have {len(questions)}/{len(turns)}"
        )
    return questions[:n_queries], turns[:n_texts]


def pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def worker(args: argparse.Namespace) -> None:
    """Measure one embedder in this (fresh) process and print one JSON line."""
    questions, turns = corpus(args.data, args.queries, args.texts)
    started = time.perf_counter()
    from hermes_memory.tier3.embedder import make_embedder

    name, _, runtime = args.worker.partition(":")
    opts: dict[str, Any] = {"cache_size": 0}
    if runtime:
        opts["runtime"] = runtime
    if args.batch_size:
        opts["batch_size"] = args.batch_size
    torch_free = name in ("local", "minilm")
    if args.threads and torch_free:
        opts["threads"] = args.threads
    if name == "sentence-transformers":
        from hermes_memory.tier3.local_embedder import minilm_path

        opts["model"] = minilm_path()
    imported = time.perf_counter()
    emb = make_embedder(name, **opts)
    emb.embed_query(["warm up: load the model"])
    load_s = time.perf_counter() - started
    model_s = time.perf_counter() - imported
    rss_after_load = rss_mb()
    threads = opts.get("threads", 1) if torch_free else None
    if "torch" in sys.modules:
        threads = sys.modules["torch"].get_num_threads()

    times: list[float] = []
    for q in questions:
        t0 = time.perf_counter()
        emb.embed_query([q])
        times.append((time.perf_counter() - t0) * 1000.0)

    tokens = sum(min(emb.count_tokens(t), emb.max_tokens) for t in turns)
    t0 = time.perf_counter()
    vectors = emb.embed_document(turns)
    batch_s = time.perf_counter() - t0
    by_size = {}
    for size in args.batch_sizes if torch_free else []:
        sized = make_embedder(name, **{**opts, "batch_size": size})
        t0 = time.perf_counter()
        sized.embed_document(turns)
        took = time.perf_counter() - t0
        by_size[size] = {"texts_per_s": len(turns) / took, "tokens_per_s": tokens / took}
    query_vectors = emb.embed_query(questions[:50])
    np.save(args.vectors, np.concatenate([vectors, query_vectors]))
    print(
        json.dumps(
            {
                "embedder": args.worker,
                "load_s": load_s,
                "model_load_s": model_s,
                "rss_after_load_mb": rss_after_load,
                "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                "torch_imported": "torch" in sys.modules,
                "threads": threads,
                "query_p50_ms": pct(times, 50),
                "query_p95_ms": pct(times, 95),
                "query_mean_ms": statistics.fmean(times),
                "batch_texts": len(turns),
                "batch_tokens": tokens,
                "texts_per_s": len(turns) / batch_s,
                "tokens_per_s": tokens / batch_s,
                "by_batch_size": by_size,
            }
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--embedders",
        nargs="+",
        default=["local:onnxruntime", "local:numpy", "sentence-transformers"],
        help="registry names; local:RUNTIME picks its runtime",
    )
    parser.add_argument("--queries", type=int, default=200, help="single-text queries timed")
    parser.add_argument("--texts", type=int, default=512, help="texts embedded as one batch call")
    parser.add_argument("--batch-size", type=int, default=0, help="override each embedder's batch_size")
    parser.add_argument("--threads", type=int, default=0, help="override local's threads (default 1)")
    parser.add_argument(
        "--batch-sizes", type=int, nargs="*", default=[], help="forward-pass batch sizes to compare (local)"
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--vectors", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args)
        return

    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    env.setdefault("HF_HUB_OFFLINE", "1")
    load_before = os.getloadavg()
    results: list[dict[str, Any]] = []
    vectors: dict[str, np.ndarray] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.embedders:
            out = Path(tmp) / f"{name}.npy"
            cmd = [
                sys.executable,
                __file__,
                "--worker",
                name,
                "--vectors",
                str(out),
                "--data",
                str(args.data),
            ]
            for flag in ("queries", "texts", "batch_size", "threads"):
                cmd += ["--" + flag.replace("_", "-"), str(getattr(args, flag))]
            cmd += ["--batch-sizes", *map(str, args.batch_sizes)]
            proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
            if proc.returncode != 0:
                raise SystemExit(f"{name} failed:\n{proc.stderr}")
            results.append(json.loads(proc.stdout.strip().splitlines()[-1]))
            vectors[name] = np.load(out)
    load_after = os.getloadavg()

    print(
        f"load average before {load_before[0]:.2f} {load_before[1]:.2f}, "
        f"after {load_after[0]:.2f} {load_after[1]:.2f} ({os.cpu_count()} cores)"
    )
    print(f"{args.queries} single-text queries (distinct, cache off); one batch call of {args.texts} texts")
    header = (
        f"{'embedder':<18} {'thr':>3} {'load s':>7} {'model s':>7} {'RSS MB':>7} {'peak MB':>8} {'torch':>6} "
        f"{'q p50 ms':>9} {'q p95 ms':>9} {'texts/s':>8} {'tokens/s':>9}"
    )
    print(header)
    for r in results:
        torch = "yes" if r["torch_imported"] else "no"
        print(
            f"{r['embedder']:<18} {r['threads'] or '-':>3} {r['load_s']:>7.2f} {r['model_load_s']:>7.2f} "
            f"{r['rss_after_load_mb']:>7.0f} {r['peak_rss_mb']:>8.0f} "
            f"{torch:>6} {r['query_p50_ms']:>9.2f} {r['query_p95_ms']:>9.2f} {r['texts_per_s']:>8.1f} "
            f"{r['tokens_per_s']:>9.0f}"
        )
    for r in results:
        for size, rate in r["by_batch_size"].items():
            print(
                f"{r['embedder']:<18} forward-pass batch {size:>4}: {rate['texts_per_s']:>7.1f} texts/s "
                f"{rate['tokens_per_s']:>7.0f} tokens/s"
            )
    tokens = results[0]["batch_tokens"]
    print(f"batch: {tokens} word pieces in {args.texts} texts ({tokens / args.texts:.1f} per text)")
    names = list(vectors)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            cos = np.sum(vectors[a] * vectors[b], axis=1)
            print(f"cosine {a} vs {b} over {len(cos)} texts: min {cos.min():.6f}, mean {cos.mean():.6f}")
    print(json.dumps({"load_average": [load_before, load_after], "results": results}))


if __name__ == "__main__":
    main()
