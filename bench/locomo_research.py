"""Research harness: tune recall's search settings on LoCoMo with the engine itself (no copy of its scorer).

Every variant is a ``recall`` config section (a preset from ``hermes_memory.recall.settings.PRESETS``
plus overrides of single ``RecallSettings`` fields) run through ``MemoryAPI.recall`` on stores filled
once, so what is measured here is what ships. Ingest and metric as ``hermes_memory.bench.locomo`` (turns
only, never the summaries; top-k distinct dia_ids, recall@k and hit@k, categories 1-4).

    python bench/locomo_research.py --data ../shared/bench/locomo_dev.json            # the preset
    python bench/locomo_research.py --set w_bm25=0.5 --set neighbour=0.3              # try a change
    python bench/locomo_research.py --ablate      # each weight switched off in turn (tune/held/all)
    python bench/locomo_research.py --grid        # coordinate search on the tune split

Stores are filled once under --root (default /tmp/locomo_research_stores) and reused.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hermes_memory.api.memory_api import MemoryAPI
from hermes_memory.bench.locomo import (
    CATEGORIES,
    Stats,
    ask,
    dia_by_episode,
    ingest,
    summarise,
)
from hermes_memory.recall.settings import DEFAULT_PRESET, PRESETS, setting_fields

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "bench" / "locomo_dev.json"
DEFAULT_ROOT = Path("/tmp/locomo_research_stores")
TUNE_IDS = ("conv-26", "conv-30", "conv-41")  # tune on these, report the rest as held-out
KS = (5, 10)

# One component off at a time (settings overrides).
ABLATIONS: dict[str, dict[str, float]] = {
    "- BM25": {"w_bm25": 0.0},
    "- sentence vectors": {"w_sentence": 0.0},
    "- window vectors": {"w_window": 0.0},
    "- all turn vectors (BM25 + priors)": {"w_sentence": 0.0, "w_window": 0.0},
    "- facts": {"w_fact": 0.0},
    "- graph": {"w_graph": 0.0},
    "- timeline": {"w_timeline": 0.0},
    "- speaker prior": {"speaker_boost": 0.0},
    "- date anchor": {"date_boost": 0.0},
    "- neighbour pull": {"neighbour": 0.0},
    "- diversity": {"diversity": 0.0},
    "- list sessions": {"list_sessions": 0.0},
    "- question-turn penalty": {"question_turn_penalty": 0.0},
    "- answer-type boost": {"answer_type_boost": 0.0},
    "- superseded penalty": {"superseded_penalty": 0.0},
}
# The coordinate search's values per field (the preset's own value is always tried too).
GRID: dict[str, list[float]] = {
    "w_bm25": [0.25, 0.35, 0.5, 0.7],
    "w_sentence": [0.3, 0.5, 0.7],
    "w_window": [0.3, 0.5, 0.7],
    "w_fact": [0.4, 0.6, 0.8],
    "speaker_boost": [1.0, 1.5, 2.0],
    "date_boost": [0.3, 0.6, 1.0],
    "neighbour": [0.2, 0.3, 0.4, 0.5],
    "fact_scale": [0.6, 0.8, 1.0],
    "diversity": [0.2, 0.4, 0.6],
}


@dataclass(frozen=True)
class Variant:
    """A ``recall`` config section: a preset and overrides of single settings."""

    label: str
    preset: str = DEFAULT_PRESET
    overrides: tuple[tuple[str, float], ...] = ()

    def config(self) -> dict[str, Any]:
        return {"recall": {"preset": self.preset, "overrides": dict(self.overrides)}}

    def changed(self, **changes: float) -> Variant:
        merged = {**dict(self.overrides), **changes}
        text = ", ".join(f"{k}={v:g}" for k, v in sorted(merged.items()))
        return Variant(text or self.preset, self.preset, tuple(sorted(merged.items())))


def filled(sample: dict[str, Any], root: Path) -> Path:
    """The store of one conversation under ``root``, filled on first use (recall settings do not change
    what is stored, so every variant reads the same store)."""
    home = root / str(sample.get("sample_id", "conv"))
    if not (home / "filled").exists():
        shutil.rmtree(home, ignore_errors=True)
        t0 = time.perf_counter()
        with MemoryAPI(hermes_home=home, actor="bench") as api:
            turns = ingest(api, sample)
        (home / "filled").write_text(str(turns), encoding="utf-8")
        print(f"filled {home}: {turns} turns in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    return home


def evaluate(
    data: Sequence[dict[str, Any]], root: Path, variant: Variant, ids: Sequence[str] | None = None
) -> dict[str, Any]:
    """recall@k / hit@k of ``variant`` overall and per category, with each recall's wall time."""
    stats = Stats()
    rows: dict[str, list[dict[str, float]]] = {cat: [] for cat in CATEGORIES}
    for sample in data:
        if ids is not None and sample.get("sample_id") not in ids:
            continue
        with MemoryAPI(hermes_home=filled(sample, root), actor="bench", **variant.config()) as api:
            episode_dia = dia_by_episode(api)
            for qa in sample["qa"]:
                answer = ask(api, qa, episode_dia, KS, stats)
                if answer is not None:
                    rows[answer.category].append(answer.row)
    every = [row for cat in CATEGORIES for row in rows[cat]]
    return {
        "overall": summarise(every, KS),
        "per_category": {cat: summarise(rows[cat], KS) for cat in CATEGORIES},
        "latency_p50_ms": round(statistics.median(stats.latencies_ms), 2) if stats.latencies_ms else 0.0,
    }


def objective(res: dict[str, Any]) -> float:
    """Overall recall@10 plus a penalty for the weakest category (every category must reach 0.60)."""
    worst = min(float(res["per_category"][c]["recall@10"]) for c in CATEGORIES)
    return float(res["overall"]["recall@10"]) + 0.5 * min(0.0, worst - 0.60) + 0.1 * worst


def fmt(res: dict[str, Any], label: str) -> str:
    lines = [f"{label:<40} {'n':>4} {'hit@5':>6} {'rec@5':>6} {'hit@10':>6} {'rec@10':>6}"]
    for name, r in [*(("cat " + c, res["per_category"][c]) for c in CATEGORIES), ("all", res["overall"])]:
        lines.append(
            f"  {name:<38} {int(r['n']):>4} {r['hit@5']:6.4f} {r['recall@5']:6.4f} "
            f"{r['hit@10']:6.4f} {r['recall@10']:6.4f}"
        )
    return "\n".join(lines)


def grid(data: Sequence[dict[str, Any]], root: Path, base: Variant) -> Variant:
    """Coordinate search over ``GRID`` on the tune split only."""
    preset = PRESETS[base.preset]
    best, best_obj = base, objective(evaluate(data, root, base, TUNE_IDS))
    for rnd in range(2):
        for key, values in GRID.items():
            for value in [getattr(preset, key), *values]:
                cand = best.changed(**{key: value})
                obj = objective(evaluate(data, root, cand, TUNE_IDS))
                if obj > best_obj + 1e-9:
                    best, best_obj = cand, obj
            print(f"round {rnd} {key:<22} -> {best.label:<60} obj {best_obj:.4f}", flush=True)
    return best


def parse_set(items: Sequence[str]) -> dict[str, float]:
    known = setting_fields()
    out: dict[str, float] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep or key not in known:
            raise SystemExit(f"--set {item!r}: expected FIELD=NUMBER with FIELD one of {', '.join(known)}")
        out[key] = known[key](raw)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--root", type=Path, default=DEFAULT_ROOT, help="where the filled stores are kept")
    ap.add_argument("--preset", default=DEFAULT_PRESET, choices=sorted(PRESETS))
    ap.add_argument("--set", action="append", default=[], help="FIELD=NUMBER: override one setting")
    ap.add_argument("--grid", action="store_true", help="tune the settings on the tune split")
    ap.add_argument("--ablate", action="store_true", help="each component off in turn")
    ap.add_argument("--json", type=Path)
    a = ap.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

    data = json.loads(a.data.read_text(encoding="utf-8"))
    held = tuple(str(s.get("sample_id")) for s in data if s.get("sample_id") not in TUNE_IDS)
    base = Variant(a.preset, a.preset).changed(**parse_set(a.set))
    out: dict[str, Any] = {}
    if a.ablate:
        print(f"{'variant':<40} {'tune':>6} {'held':>6} {'all':>6}   c1     c2     c3     c4   (recall@10)")
        for label, change in [(base.label, {}), *ABLATIONS.items()]:
            variant = base.changed(**change)
            r = [evaluate(data, a.root, variant, ids) for ids in (TUNE_IDS, held, None)]
            cats = " ".join(f"{r[2]['per_category'][c]['recall@10']:.3f}" for c in CATEGORIES)
            print(f"{label:<40} {r[0]['overall']['recall@10']:.4f} {r[1]['overall']['recall@10']:.4f} "
                  f"{r[2]['overall']['recall@10']:.4f}   {cats}", flush=True)  # fmt: skip
            out[label] = r[2]
    else:
        variant = grid(data, a.root, base) if a.grid else base
        for label, ids in (("tune", TUNE_IDS), ("held-out", held), ("all", None)):
            res = evaluate(data, a.root, variant, ids)
            print(fmt(res, f"{variant.label} [{label}]"))
            print(f"  recall p50 {res['latency_p50_ms']} ms")
            out[f"{variant.label}|{label}"] = res
    if a.json:
        a.json.write_text(json.dumps(out, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
