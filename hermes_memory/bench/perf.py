"""Every performance target of issue 13 in one table, next to Hermes' holographic provider.

    python -m hermes_memory.bench.perf --quick                  # a few minutes
    python -m hermes_memory.bench.perf --scale 100000 --json OUT  # the full run (long: fill + LoCoMo dev)
    python -m hermes_memory.bench.perf --only scale --scale 10000  # one part

Each part runs in its own fresh interpreter (``_perf_phases``), one after the other, so model loads
and peak RSS belong to one part; the load average is printed before and after.

* LoCoMo conversations (``--conversations``, from ``--data``): every turn into a fresh store of ours
  through ``remember_message`` (as ``hermes_memory.bench.locomo`` does; turns only, never the
  summaries), ``ingest_pending`` (the write path: Tier 2 + extraction, no embedding), then ``flush``
  (embedding on the batch path); the same turns into Hermes' holographic provider as facts (see
  ``holographic_peer``). Every category 1-4 question is timed against both — ours is ``recall`` with
  30 hits, the query embedding included — and scored recall@10 with the turn-level metric.
* The default embedder alone: model load (construct + first query) and one-query latency.
* At ``--scale N`` stored exchanges (filled once per N and embedder under ``--scale-dir``, reused):
  recall over every tier without a worker, with the provider's worker idle, and while it ingests (one
  ``sync_turn`` before each recall); the idle worker's CPU per second (one cycle a second); RSS after
  the recalls and the peaks of the measuring and filling processes.
* ``hermes -z`` with and without the provider (``oneshot``), and LoCoMo dev recall@10 (the
  ``hermes_memory.bench.locomo`` harness over all of ``--data``; ``--skip-locomo``, and off in quick).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from hermes_memory.bench._proc import run_measured
from hermes_memory.bench.perf_report import Row, Target, fmt_number, format_table, latency_row

DEFAULT_DATA = Path("/work/shared/bench/locomo_dev.json")
DEFAULT_SCALE_DIR = Path(tempfile.gettempdir()) / "hermes-memory-perf"
# LoCoMo dev recall@10 before issue 13 (docs/benchmarks.md, "Recall quality — LoCoMo dev": 0.8209).
LOCOMO_BEFORE = 0.821
# What the issue measured before the change, for the notes.
BEFORE_TEXTS_PER_TURN, BEFORE_TOKENS_PER_TURN = 4.2, 132
# The parts, in the order they run (``--only``).
PARTS = ("conversations", "embedder", "scale", "oneshot", "locomo")


def _phase(name: str, opts: dict[str, Any], timeout: float | None = None) -> dict[str, Any]:
    """Run one phase in a fresh interpreter; its JSON plus ``_wall_s`` and ``_peak_rss_mb``.

    Raises RuntimeError when the phase fails."""
    print(f"[perf] {name} ...", file=sys.stderr, flush=True)
    done = run_measured(
        [sys.executable, "-m", "hermes_memory.bench._perf_phases", name, json.dumps(opts)],
        timeout=timeout,
        pass_stderr=True,
    )
    if done.returncode != 0:
        raise RuntimeError(f"phase {name} exited {done.returncode}")
    lines = done.stdout.strip().splitlines()
    if not lines:
        raise RuntimeError(f"phase {name} printed nothing")
    result: dict[str, Any] = json.loads(lines[-1])
    result["_wall_s"] = round(done.wall_s, 1)
    result["_peak_rss_mb"] = round(done.peak_rss_mb, 1)
    print(
        f"[perf] {name}: {done.wall_s:.1f} s, peak RSS {done.peak_rss_mb:.0f} MB", file=sys.stderr, flush=True
    )
    return result


def _locomo_dev(data: Path) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "locomo.json"
        print("[perf] LoCoMo dev (hermes_memory.bench.locomo) ...", file=sys.stderr, flush=True)
        done = run_measured(
            [sys.executable, "-m", "hermes_memory.bench.locomo", "--data", str(data), "--json", str(out)],
            pass_stderr=True,
        )
        if done.returncode != 0:
            raise RuntimeError(f"the LoCoMo harness exited {done.returncode}")
        result: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    result["_wall_s"] = round(done.wall_s, 1)
    return result


def _per_s(count: float, seconds: float) -> float | None:
    return count / seconds if seconds > 0 else None


def locomo_rows(res: dict[str, Any]) -> list[Row]:
    ours, holo = res["ours"], res["holographic"]
    convs = ", ".join(res["conversations"])
    n = ours["questions"]
    rows = [
        latency_row(
            f"recall incl. query embedding, LoCoMo {convs} ({n} questions), p50 / p95",
            ours["latency_ms"],
            15,
            40,
            peer=holo["latency_ms"],
            note="ours: recall, 30 hits; holographic: FactRetriever.search, 10 facts",
        ),
        Row(
            f"retrieval recall@{res['k']}, same questions (turn level)",
            ours["recall_at_k"],
            peer=holo["recall_at_k"],
            note="holographic: one fact per turn, its hits mapped to their turns"
            + (
                f"; it warned {holo['hrr_capacity_warnings']} times that its HRR bank is near capacity"
                if holo.get("hrr_capacity_warnings")
                else ""
            ),
        ),
    ]
    split = embedding_split_row(
        f"query embedding alone / recall after it, p50, LoCoMo {convs}",
        ours.get("query_embedding_ms"),
        ours.get("after_embedding_ms"),
        2.0,
        "ours: each recall's query texts embedded again alone (model pass, no cache) right after it; "
        "after = recall minus that",
    )
    if split is not None:
        rows.append(split)
    if ours.get("after_embedding_ms") and holo["latency_ms"]["p50"]:
        ratio = ours["latency_ms"]["p50"] / holo["latency_ms"]["p50"]
        rows.append(
            Row(
                "recall p50, ours / holographic's",
                round(ratio, 3),
                targets=(Target("<=", 0.25),),
                note=f"{ours['latency_ms']['p50']} / {holo['latency_ms']['p50']} ms, same run",
            )
        )
    ing = ours["ingest"]
    turns = ing["turns"]
    write_s = ing["enqueue_s"] + ing["write_s"]
    note = "remember_message + ingest_pending (Tier 2 + extraction)"
    if ing["embedded_during_write_texts"]:
        note += f"; {ing['embedded_during_write_texts']} texts were embedded during it"
    rows.append(
        Row(
            "ingest, write path without embedding",
            _per_s(turns, write_s),
            "turns/s",
            (Target(">=", 200),),
            peer=_per_s(holo["turns"], holo["ingest_s"]),
            note=note + "; holographic: add_fact",
        )
    )
    rows.append(
        Row(
            "ingest with the real embedder, batch path",
            _per_s(turns, write_s + ing["embed_phase_s"]),
            "turns/s",
            (Target(">=", 20),),
            note="the above + flush (every queued embedding)"
            + (f"; peak RSS of this part {res['_peak_rss_mb']:.0f} MB" if "_peak_rss_mb" in res else ""),
        )
    )
    if ing["embedded_texts"]:
        texts, tokens = ing["embedded_texts"] / turns, ing["embedded_tokens"] / turns
        rows.append(
            Row(
                "embedded per turn: texts / model tokens",
                f"{texts:.2f} / {tokens:.0f}",
                note=f"before: {BEFORE_TEXTS_PER_TURN} / {BEFORE_TOKENS_PER_TURN}",
            )
        )
        rows.append(
            Row(
                "embedder on the batch path",
                _per_s(ing["embedded_tokens"], ing["embedded_seconds"]),
                "tokens/s",
                note=f"{_per_s(ing['embedded_texts'], ing['embedded_seconds']):.0f} texts/s; "
                f"{ing['embedded_seconds'] / (write_s + ing['embed_phase_s']) * 100:.0f}% of ingest time",
            )
        )
    else:
        rows.append(
            Row("embedded per turn: texts / model tokens", None, note=ours.get("instrument_note", ""))
        )
    return rows


def embedding_split_row(
    measure: str,
    embedding: dict[str, float] | None,
    after: dict[str, float] | None,
    most: float,
    note: str,
) -> Row | None:
    """``query embedding p50 / recall after it p50 ms (ratio)``, the ratio checked against ``most``;
    None when the part measured no query embedding."""
    if not embedding or not after:
        return None
    ratio = after["p50"] / embedding["p50"] if embedding["p50"] > 0 else float("nan")
    return Row(
        measure,
        f"{fmt_number(embedding['p50'])} / {fmt_number(after['p50'])} ms ({ratio:.2f}x)",
        targets=(Target("<=", most),),
        checks=(ratio,),
        note=f"{note}; after p95 {fmt_number(after['p95'])} ms",
    )


def embedder_rows(res: dict[str, Any]) -> list[Row]:
    q = res["query_ms"]
    torch = "torch imported" if res["torch_imported"] else "no torch"
    return [
        Row(
            f"one query embedding ({res['embedder']}), p50 / p95",
            f"{fmt_number(q['p50'])} / {fmt_number(q['p95'])}",
            "ms",
            (Target("<=", 7),),
            checks=(q["p50"],),
            note=f"{q['n']} distinct LoCoMo questions, cache off",
        ),
        Row(
            "model load (construct + first query)",
            res["load_s"],
            "s",
            (Target("<=", 0.5),),
            note=f"RSS {res['rss_after_load_mb']:.0f} MB after load, "
            f"peak {res['_peak_rss_mb']:.0f} MB; {torch}",
        ),
    ]


def scale_rows(res: dict[str, Any], fill: dict[str, Any], n: int, embedder: str) -> list[Row]:
    where = f"{n:,} turns ({embedder})"
    goal = "" if n >= 100_000 else "; the targets are for 100k"
    rows = [
        latency_row(
            f"recall all tiers at {where}, no worker",
            res["standalone_ms"],
            30,
            80,
            note=f"recall, 10 hits, {res['episodes']:,} episodes{goal}"
            + ("; each recall pays a real all-MiniLM query embedding" if res.get("query_embedding") else "")
            + (f"; vector search: {res['search_path']}" if res.get("search_path") else ""),
        ),
    ]
    split = embedding_split_row(
        f"... query embedding alone / recall after it, p50, no worker ({where})",
        res.get("standalone_query_embedding_ms"),
        res.get("standalone_after_embedding_ms"),
        3.0,
        "the real all-MiniLM query embedding of each recall, again alone right after it; "
        "after = recall minus that",
    )
    rows += [split] if split is not None else []
    rows += [
        latency_row("... provider's worker alive, idle", res["worker_idle_ms"], 30, 80),
        latency_row(
            "... while the worker ingests (sync_turn before each recall)", res["worker_ingesting_ms"], 30, 80
        ),
    ]
    cpu = res.get("worker_idle_cpu_ms_per_s")
    step = res.get("idle_step_ms")
    rows.append(
        Row(
            f"idle worker cycle at {where}",
            cpu,
            "ms",
            (Target("<=", 1),),
            note="worker thread CPU per second (one cycle a second, schedstat)"
            + (f"; one idle step called directly p50 {fmt_number(step['p50'])} ms" if step else "")
            + (f"; {res['worker_note']}" if res.get("worker_note") else ""),
        )
    )
    peak = max(res["_peak_rss_mb"], fill.get("_peak_rss_mb", 0.0))
    rows.append(
        Row(
            f"RSS at {where}: after recalls / peak",
            f"{res['rss_mb']:.0f} / {peak:.0f}",
            "MB",
            (Target("<=", 600),),
            checks=(peak,),
            note=f"peak of the measuring process {res['_peak_rss_mb']:.0f} MB "
            f"(shutdown {res['shutdown_s']} s)"
            + (
                f", of the filling process {fill['_peak_rss_mb']:.0f} MB"
                if "_peak_rss_mb" in fill
                else ", store filled earlier (its peak not re-measured)"
            ),
        )
    )
    return rows


def oneshot_rows(res: dict[str, Any]) -> list[Row]:
    w, wo, cold = res["with"], res["without"], res["cold_meaning"]
    return [
        Row(
            "hermes -z wall, with / without the provider (ratio)",
            f"{w['wall_s']} / {wo['wall_s']} s ({res['wall_ratio']}x)",
            targets=(Target("<=", 1.3),),
            checks=(res["wall_ratio"],),
            note=f"median of {res['runs']} alternating runs",
        ),
        Row(
            "hermes -z peak RSS, with / without (extra MB)",
            f"{w['peak_rss_mb']:.0f} / {wo['peak_rss_mb']:.0f} MB (+{res['extra_peak_rss_mb']:.0f})",
            targets=(Target("<=", 250),),
            checks=(res["extra_peak_rss_mb"],),
        ),
        Row(
            "cold process: first prefetch recalls by meaning",
            "yes" if cold["names_ana"] else "no",
            expect=True,
            note=f"{cold['question']!r} after {cold['seed']!r}; block attached: {cold['block_attached']}",
        ),
    ]


def locomo_dev_row(res: dict[str, Any]) -> Row:
    lat = res["latency_ms"]
    return Row(
        f"LoCoMo dev recall@10 ({res['conversations']} conversations, {res['overall']['n']} questions)",
        res["overall"]["recall@10"],
        targets=(Target(">=", LOCOMO_BEFORE),),
        note=f"before: {LOCOMO_BEFORE}; recall p50 / p95 {lat['p50']} / {lat['p95']} ms; "
        f"ingest {res['ingest_ms_per_turn']} ms/turn; {res['_wall_s']:.0f} s",
    )


def _args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m hermes_memory.bench.perf",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--quick", action="store_true", help="small sizes, no LoCoMo dev run (minutes)")
    parser.add_argument(
        "--scale",
        type=int,
        default=None,
        help="stored exchanges for the at-scale part (default 2,000; quick 500); 0 skips it",
    )
    parser.add_argument(
        "--scale-embedder",
        default="hashing",
        help="embedder that fills and queries the "
        "at-scale store (default hashing: a 100k fill with the real model takes hours)",
    )
    parser.add_argument("--scale-dir", type=Path, default=DEFAULT_SCALE_DIR, help="filled stores, reused")
    parser.add_argument(
        "--conversations",
        type=int,
        default=None,
        help="LoCoMo conversations timed against holographic (default 2; quick 1)",
    )
    parser.add_argument(
        "--queries", type=int, default=None, help="queries per at-scale measure (100; quick 40)"
    )
    parser.add_argument("--oneshot-runs", type=int, default=None, help="hermes -z runs each way (3; quick 1)")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--skip-locomo", action="store_true", help="skip the LoCoMo dev recall@10 run")
    parser.add_argument("--skip-oneshot", action="store_true", help="skip the hermes -z comparison")
    parser.add_argument(
        "--only", nargs="+", choices=PARTS, default=None, help="run only these parts (the skips still apply)"
    )
    parser.add_argument("--json", dest="json_out", type=Path, help="also write every number here")
    args = parser.parse_args(argv)
    quick = args.quick
    args.scale = (500 if quick else 2000) if args.scale is None else args.scale
    args.conversations = (1 if quick else 2) if args.conversations is None else args.conversations
    args.queries = (40 if quick else 100) if args.queries is None else args.queries
    args.oneshot_runs = (1 if quick else 3) if args.oneshot_runs is None else args.oneshot_runs
    parts = set(args.only or PARTS)
    if args.skip_locomo or quick:
        parts.discard("locomo")
    if args.skip_oneshot:
        parts.discard("oneshot")
    if args.scale == 0:
        parts.discard("scale")
    args.parts = [p for p in PARTS if p in parts]
    if args.scale < 0 or args.conversations < 1 or args.queries < 1 or args.oneshot_runs < 1:
        parser.error("--scale must be >= 0 and --conversations/--queries/--oneshot-runs >= 1")
    if not args.data.exists():
        parser.error(f"--data {args.data} does not exist")
    return args


def main(argv: list[str] | None = None) -> int:
    args = _args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    started = time.monotonic()
    load_before = os.getloadavg()
    results: dict[str, Any] = {
        "started": datetime.now(UTC).isoformat(timespec="seconds"),
        "args": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
    }
    rows: list[Row] = []

    if "conversations" in args.parts:
        loc = _phase("locomo", {"data": str(args.data), "conversations": args.conversations, "k": 10})
        results["locomo_conversations"] = loc
        rows += locomo_rows(loc)

    if "embedder" in args.parts:
        emb = _phase("embedder", {"data": str(args.data), "queries": args.queries * 2})
        results["embedder"] = emb
        rows += embedder_rows(emb)

    if "scale" in args.parts:
        home = args.scale_dir / f"turns_{args.scale}_{args.scale_embedder}_seed{args.seed}"
        fill_opts = {
            "home": str(home),
            "turns": args.scale,
            "embedder": args.scale_embedder,
            "seed": args.seed,
        }
        fill = _phase("fill", fill_opts)
        if fill["reused"]:
            fill.pop("_peak_rss_mb")  # nothing was filled in this run
        results["fill"] = fill
        idle_s = 3.0 if args.quick else 10.0
        scale = _phase(
            "scale", {"home": str(home), "queries": args.queries, "seed": args.seed, "idle_s": idle_s}
        )
        results["scale"] = scale
        rows += scale_rows(scale, fill, args.scale, args.scale_embedder)

    if "oneshot" in args.parts:
        from hermes_memory.bench.oneshot import oneshot_compare

        print("[perf] hermes -z with / without the provider ...", file=sys.stderr, flush=True)
        one = oneshot_compare(args.oneshot_runs)
        results["oneshot"] = one
        rows += oneshot_rows(one)

    if "locomo" in args.parts:
        dev = _locomo_dev(args.data)
        results["locomo_dev"] = dev
        rows.append(locomo_dev_row(dev))

    load_after = os.getloadavg()
    results["load_average"] = {"before": load_before, "after": load_after, "cores": os.cpu_count()}
    results["wall_s"] = round(time.monotonic() - started, 1)
    print(
        f"hermes-memory perf, {results['started']}: {os.cpu_count()} cores, load average before "
        f"{load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f}, after {load_after[0]:.2f} "
        f"{load_after[1]:.2f} {load_after[2]:.2f}; {results['wall_s']:.0f} s"
    )
    if "fill" in results:
        fill = results["fill"]
        when = "filled earlier, reused" if fill["reused"] else f"filled in this run, {fill['_wall_s']:.0f} s"
        print(f"at-scale store: {args.scale:,} turns, embedder {args.scale_embedder} ({when}): {fill['how']}")
    print(format_table(rows))
    results["rows"] = [
        {
            "measure": r.measure,
            "ours": r.ours,
            "unit": r.unit,
            "targets": [str(t) for t in r.targets],
            "met": r.verdict(),
            "holographic": r.peer,
            "note": r.note,
        }
        for r in rows
    ]
    if args.json_out:
        args.json_out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())


__all__ = [
    "DEFAULT_DATA",
    "DEFAULT_SCALE_DIR",
    "LOCOMO_BEFORE",
    "PARTS",
    "embedder_rows",
    "embedding_split_row",
    "locomo_dev_row",
    "locomo_rows",
    "main",
    "oneshot_rows",
    "scale_rows",
]
