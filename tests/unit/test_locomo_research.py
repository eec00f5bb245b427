"""The leave-one-conversation-out logic of ``bench/locomo_research.py`` with stub scores (no store, no
recall): each fold chooses on the other conversations only, scores the held-out one with its choice,
and the held-out rows are pooled over questions."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

_PATH = Path(__file__).resolve().parents[2] / "bench" / "locomo_research.py"


@pytest.fixture(scope="module")
def research() -> ModuleType:
    spec = importlib.util.spec_from_file_location("locomo_research", _PATH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["locomo_research"] = module  # dataclasses resolve their module by name
    spec.loader.exec_module(module)
    return module


def _rows(recall: float, n: int = 1, cat: str = "1") -> dict[str, list[dict[str, float]]]:
    row = {"hit@5": float(recall > 0), "recall@5": recall, "hit@10": float(recall > 0), "recall@10": recall}
    out: dict[str, list[dict[str, float]]] = {c: [] for c in ("1", "2", "3", "4")}
    out[cat] = [dict(row) for _ in range(n)]
    return out


def test_each_fold_chooses_on_the_other_four_and_scores_the_fifth(research: ModuleType) -> None:
    ids = ("a", "b", "c", "d", "e")
    chosen_on: list[tuple[str, ...]] = []
    scored: list[tuple[str, str]] = []

    def choose(train: tuple[str, ...]) -> object:
        chosen_on.append(train)
        left_out = (set(ids) - set(train)).pop()
        return research.Variant(f"without {left_out}")

    def rows_of(variant: object, sample_id: str) -> dict[str, list[dict[str, float]]]:
        scored.append((variant.label, sample_id))  # type: ignore[attr-defined]
        return _rows(1.0 if sample_id == "a" else 0.0, n=1 if sample_id == "a" else 3)

    folds, pooled = research.leave_one_out(ids, choose, rows_of)
    assert [f.held_out for f in folds] == list(ids)
    assert chosen_on == [tuple(i for i in ids if i != held) for held in ids]
    assert all(f.held_out not in f.tuned_on and len(f.tuned_on) == 4 for f in folds)
    # The held-out conversation, and only it, is scored with the variant chosen without it.
    assert scored == [(f"without {held}", held) for held in ids]
    # Pooled by question: 1 of 13 questions found, not the mean of the five conversations' means (0.2).
    assert len(pooled["1"]) == 13
    assert research.report(pooled)["overall"]["recall@10"] == round(1 / 13, 4)


def test_a_setting_that_fits_only_the_dev_set_shows_in_the_leave_one_out_figure(research: ModuleType) -> None:
    """Conversation "e" (10 questions) alone prefers w_bm25=0.7; "a".."d" (1 question each) prefer the
    preset. Tuned on all five, 0.7 wins (12/14 found); left out, "e" gets the preset the other four
    chose, and each of "a".."d" gets 0.7 (chosen with "e"): every held-out question scores 0.5."""
    ids = ("a", "b", "c", "d", "e")

    def rows_of(variant: object, sample_id: str) -> dict[str, list[dict[str, float]]]:
        bm25 = dict(variant.overrides).get("w_bm25", 0.35)  # type: ignore[attr-defined]
        likes = 0.7 if sample_id == "e" else 0.35
        return _rows(1.0 if bm25 == likes else 0.5, n=10 if sample_id == "e" else 1)

    def tuned(train: tuple[str, ...]) -> object:
        def score(v: object) -> float:
            return float(research.report(research.pool(rows_of(v, i) for i in train))["overall"]["recall@10"])

        best, _ = research.coordinate_search(score, research.Variant("default"), {"w_bm25": [0.25, 0.7]}, 1)
        return best

    assert dict(tuned(ids).overrides) == {"w_bm25": 0.7}  # type: ignore[attr-defined]
    folds, pooled = research.leave_one_out(ids, tuned, rows_of)
    assert [dict(f.chosen.overrides).get("w_bm25", 0.35) for f in folds] == [0.7, 0.7, 0.7, 0.7, 0.35]
    plain = research.report(research.pool(rows_of(research.Variant("default"), i) for i in ids))
    assert plain["overall"]["recall@10"] == round(9 / 14, 4)
    assert research.report(pooled)["overall"]["recall@10"] == 0.5


def test_an_override_to_the_presets_own_value_runs_the_preset(research: ModuleType) -> None:
    base = research.Variant("default")
    assert base.changed(w_bm25=0.35).key() == base.key()
    assert base.changed(w_bm25=0.5).key() != base.key()
