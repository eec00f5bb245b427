"""Research harness: tune recall's search settings on LoCoMo with the engine itself (no copy of its scorer).

Every variant is a ``recall`` config section (a preset from ``hermes_memory.recall.settings.PRESETS``
plus overrides of single ``RecallSettings`` fields) run through ``MemoryAPI.recall`` on stores filled
once, so what is measured here is what ships. Ingest and metric as ``hermes_memory.bench.locomo`` (turns
only, never the summaries; top-k distinct dia_ids, recall@k and hit@k, categories 1-4).

    python bench/locomo_research.py --data ../shared/bench/locomo_dev.json            # the preset
    python bench/locomo_research.py --set w_bm25=0.5 --set neighbour=0.3              # try a change
    python bench/locomo_research.py --ablate      # each weight switched off in turn (tune/held/all)
    python bench/locomo_research.py --grid        # coordinate search on the tune split
    python bench/locomo_research.py --loo         # leave-one-conversation-out beside the plain figure

Stores are filled once under --root (default /tmp/locomo_research_stores) and reused.

``--loo``: for each of the five conversations, the coordinate search (``GRID``, ``--loo-rounds`` rounds)
chooses the settings on the other four and the fifth is scored with them; the five held-out scores are
pooled over their questions and printed beside the plain figure (the preset on all five). A gain that
only fits the dev set shows as a leave-one-out figure below the plain one. Each variant is run once per
conversation and shared by the folds (``Runs``): the whole ``GRID``, one round, took 248 runs of one
conversation, 10 min at load 2.4 (two rounds would roughly double it). ``--loo-keys w_bm25`` searches
one field only (a smoke run: 20 runs, under a minute).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
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
    "- subject prior": {"subject_boost": 0.0},
    "- list: other speaker down": {"list_other_speaker_penalty": 0.0},
    "- superseded penalty": {"superseded_penalty": 0.0},
    "- thread pull (same speaker two away)": {"thread_pull": 0.0},
    "- guess without its frame": {"inference_statement": 1},
    "- session cohesion": {"session_cohesion": 0.0},
    "- category -> instance phrases": {"instance_prior": 0.0},
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
    "subject_boost": [0.0, 0.5, 1.0],
    "list_other_speaker_penalty": [0.0, 0.3, 0.6],
    "thread_pull": [0.0, 0.1, 0.2, 0.3],
    "inference_statement": [1, 2],
    "session_cohesion": [0.0, 0.1, 0.2, 0.3],
    "cohesion_seeds": [2, 3, 5],
    "instance_prior": [0.0, 0.1, 0.2, 0.3],
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

    def key(self) -> tuple[str, tuple[tuple[str, float], ...]]:
        """What the variant runs: its preset and the overrides that differ from it (an override to the
        preset's own value runs the preset)."""
        preset = PRESETS[self.preset]
        return self.preset, tuple((k, v) for k, v in self.overrides if getattr(preset, k) != v)


# Per-question rows (hit@k, recall@k) by category.
Rows = dict[str, list[dict[str, float]]]


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


def conversation_rows(sample: dict[str, Any], root: Path, variant: Variant, stats: Stats) -> Rows:
    """The rows of one conversation's questions recalled with ``variant``."""
    rows: Rows = {cat: [] for cat in CATEGORIES}
    with MemoryAPI(hermes_home=filled(sample, root), actor="bench", **variant.config()) as api:
        episode_dia = dia_by_episode(api)
        for qa in sample["qa"]:
            answer = ask(api, qa, episode_dia, KS, stats)
            if answer is not None:
                rows[answer.category].append(answer.row)
    return rows


def pool(parts: Iterable[Rows]) -> Rows:
    """Rows of several conversations as one set of questions."""
    out: Rows = {cat: [] for cat in CATEGORIES}
    for part in parts:
        for cat in CATEGORIES:
            out[cat].extend(part.get(cat, ()))
    return out


def report(rows: Rows, stats: Stats | None = None) -> dict[str, Any]:
    """recall@k / hit@k overall (every question counts once) and per category; the recalls' p50."""
    every = [row for cat in CATEGORIES for row in rows[cat]]
    latencies = stats.latencies_ms if stats is not None else []
    return {
        "overall": summarise(every, KS),
        "per_category": {cat: summarise(rows[cat], KS) for cat in CATEGORIES},
        "latency_p50_ms": round(statistics.median(latencies), 2) if latencies else 0.0,
    }


def evaluate(
    data: Sequence[dict[str, Any]], root: Path, variant: Variant, ids: Sequence[str] | None = None
) -> dict[str, Any]:
    """recall@k / hit@k of ``variant`` overall and per category, with each recall's wall time."""
    stats = Stats()
    parts = [conversation_rows(sample, root, variant, stats) for sample in data
             if ids is None or sample.get("sample_id") in ids]  # fmt: skip
    return report(pool(parts), stats)


class Runs:
    """Each variant's rows per conversation, recalled once and then reused (the leave-one-out folds
    search overlapping splits and often try the same variants)."""

    def __init__(self, data: Sequence[dict[str, Any]], root: Path):
        self._samples = {str(sample.get("sample_id")): sample for sample in data}
        self._root = root
        self._rows: dict[tuple[Any, str], Rows] = {}
        self.stats = Stats()

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(self._samples)

    @property
    def recalled(self) -> int:
        """How many (variant, conversation) runs were recalled (the rest came from the cache)."""
        return len(self._rows)

    def rows(self, variant: Variant, sample_id: str) -> Rows:
        key = (variant.key(), sample_id)
        if key not in self._rows:
            self._rows[key] = conversation_rows(self._samples[sample_id], self._root, variant, self.stats)
        return self._rows[key]


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


def coordinate_search(
    score: Callable[[Variant], float],
    base: Variant,
    space: Mapping[str, Sequence[float]],
    rounds: int,
    say: Callable[[str], None] | None = None,
) -> tuple[Variant, float]:
    """Coordinate search from ``base``: each field of ``space`` in turn takes the value (the preset's own
    or one of its list) that raises ``score`` most, ``rounds`` times over. The best variant and score."""
    preset = PRESETS[base.preset]
    best, best_obj = base, score(base)
    for rnd in range(rounds):
        for key, values in space.items():
            for value in [getattr(preset, key), *values]:
                cand = best.changed(**{key: value})
                obj = score(cand)
                if obj > best_obj + 1e-9:
                    best, best_obj = cand, obj
            if say is not None:
                say(f"round {rnd} {key:<22} -> {best.label:<60} obj {best_obj:.4f}")
    return best, best_obj


def grid(data: Sequence[dict[str, Any]], root: Path, base: Variant) -> Variant:
    """Coordinate search over ``GRID`` on the tune split only."""
    best, _ = coordinate_search(
        lambda v: objective(evaluate(data, root, v, TUNE_IDS)), base, GRID, 2, lambda s: print(s, flush=True)
    )
    return best


@dataclass(frozen=True)
class Fold:
    held_out: str
    tuned_on: tuple[str, ...]
    chosen: Variant


def leave_one_out(
    ids: Sequence[str],
    choose: Callable[[tuple[str, ...]], Variant],
    rows_of: Callable[[Variant, str], Rows],
) -> tuple[list[Fold], Rows]:
    """One fold per conversation: ``choose`` picks a variant on the other conversations, ``rows_of``
    scores the held-out one with it. The folds and the held-out rows pooled over their questions."""
    folds: list[Fold] = []
    parts: list[Rows] = []
    for held in ids:
        tuned_on = tuple(i for i in ids if i != held)
        chosen = choose(tuned_on)
        folds.append(Fold(held, tuned_on, chosen))
        parts.append(rows_of(chosen, held))
    return folds, pool(parts)


def tuned_on(runs: Runs, base: Variant, space: Mapping[str, Sequence[float]], rounds: int
             ) -> Callable[[tuple[str, ...]], Variant]:  # fmt: skip
    """The coordinate search on the given conversations, through ``runs``."""

    def choose(ids: tuple[str, ...]) -> Variant:
        best, obj = coordinate_search(
            lambda v: objective(report(pool(runs.rows(v, i) for i in ids))), base, space, rounds
        )
        print(f"tuned on {','.join(ids)}: {best.label} (objective {obj:.4f}; {runs.recalled} runs so far)",
              flush=True)  # fmt: skip
        return best

    return choose


def fmt_loo(plain: dict[str, Any], loo: dict[str, Any]) -> str:
    """Plain and leave-one-out recall@10 and hit@5 per category and overall, with the differences."""
    lines = [f"{'':<8} {'n':>4}   {'rec@10':>6} {'loo':>6} {'diff':>7}   {'hit@5':>6} {'loo':>6} {'diff':>7}"]
    rows = [*(("cat " + c, plain["per_category"][c], loo["per_category"][c]) for c in CATEGORIES),
            ("all", plain["overall"], loo["overall"])]  # fmt: skip
    for name, p, o in rows:
        r, h = (float(o[m]) - float(p[m]) for m in ("recall@10", "hit@5"))
        lines.append(
            f"{name:<8} {int(p['n']):>4}   {p['recall@10']:6.4f} {o['recall@10']:6.4f} {r:+7.4f}   "
            f"{p['hit@5']:6.4f} {o['hit@5']:6.4f} {h:+7.4f}"
        )
    return "\n".join(lines)


def run_loo(runs: Runs, base: Variant, space: Mapping[str, Sequence[float]], rounds: int) -> dict[str, Any]:
    """The plain figure (``base`` on every conversation) and the leave-one-out one, printed and returned."""
    t0 = time.perf_counter()
    plain = report(pool(runs.rows(base, i) for i in runs.ids))
    folds, held = leave_one_out(runs.ids, tuned_on(runs, base, space, rounds), runs.rows)
    loo = report(held)
    for fold in folds:
        mine = report(runs.rows(fold.chosen, fold.held_out))["overall"]["recall@10"]
        theirs = report(runs.rows(base, fold.held_out))["overall"]["recall@10"]
        print(f"held out {fold.held_out}: recall@10 {mine:.4f} with {fold.chosen.label} "
              f"({theirs:.4f} with {base.label})")  # fmt: skip
    print(f"plain: {base.label} on all five; leave-one-out: settings chosen on four, the fifth scored")
    print(fmt_loo(plain, loo))
    elapsed = time.perf_counter() - t0
    print(f"{runs.recalled} (variant, conversation) runs, {elapsed:.0f} s; load average {os.getloadavg()}")
    sides = [(c, plain["per_category"][c], loo["per_category"][c]) for c in CATEGORIES]
    sides.append(("overall", plain["overall"], loo["overall"]))
    folds_out = [
        {"held_out": f.held_out, "tuned_on": list(f.tuned_on), "chosen": dict(f.chosen.overrides)}
        for f in folds
    ]
    return {
        "plain": plain,
        "leave_one_out": loo,
        "difference": {
            name: {m: round(float(o[m]) - float(p[m]), 4) for m in o if m != "n"} for name, p, o in sides
        },
        "folds": folds_out,
        "space": {k: list(v) for k, v in space.items()},
        "rounds": rounds,
        "runs": runs.recalled,
        "seconds": round(elapsed, 1),
    }


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
    ap.add_argument("--loo", action="store_true", help="leave-one-conversation-out beside the plain figure")
    ap.add_argument("--loo-rounds", type=int, default=1, help="coordinate search rounds per fold (1)")
    ap.add_argument("--loo-keys", default="", help="comma-separated GRID fields to search (default: all)")
    ap.add_argument("--json", type=Path)
    a = ap.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

    data = json.loads(a.data.read_text(encoding="utf-8"))
    held = tuple(str(s.get("sample_id")) for s in data if s.get("sample_id") not in TUNE_IDS)
    base = Variant(a.preset, a.preset).changed(**parse_set(a.set))
    out: dict[str, Any] = {}
    if a.loo:
        keys = [k for k in a.loo_keys.split(",") if k] or list(GRID)
        unknown = sorted(set(keys) - set(GRID))
        if unknown or a.loo_rounds < 1:
            raise SystemExit(f"--loo-keys: choose from {', '.join(GRID)}; --loo-rounds >= 1 (got {unknown})")
        out = run_loo(Runs(data, a.root), base, {k: GRID[k] for k in keys}, a.loo_rounds)
    elif a.ablate:
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
