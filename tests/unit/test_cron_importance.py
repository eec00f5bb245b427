"""Importance (Engram): salience at encoding, Ebbinghaus decay, reinforcement by use, a salience floor."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator
from pathlib import Path

import pytest

from hermes_memory.cron import importance
from hermes_memory.cron.importance import DAY_S, DecayParams
from hermes_memory.errors import ValidationError
from hermes_memory.records import Fact
from hermes_memory.tier2 import Tier2

T0 = 1_700_000_000.0


@pytest.fixture
def tier2(tmp_path: Path) -> Iterator[Tier2]:
    store = Tier2.open(tmp_path / "t2.db")
    yield store
    store.close()


def fact(tier2: Tier2, salience: float = 0.5, **changes: object) -> Fact:
    """A stored fact, learned at T0 and never used (unless ``changes`` say otherwise)."""
    stored = tier2.facts.store(f"a fact with salience {salience}", importance=salience).fact
    fields: dict[str, object] = {"created_at": T0, "last_accessed": None, "access_count": 0, **changes}
    return dataclasses.replace(stored, **fields)  # type: ignore[arg-type]


def test_importance_decays_over_time(tier2: Tier2) -> None:
    f = fact(tier2, 0.8)
    scores = [importance.score(f, T0 + days * DAY_S) for days in (0, 1, 7, 30)]
    assert scores[0] == pytest.approx(0.8)
    assert scores == sorted(scores, reverse=True)
    assert len(set(scores)) == 4
    # Engram's rate: half-life ~6.9 days without use
    assert importance.score(f, T0 + 10 * math.log(2) * DAY_S) == pytest.approx(0.4)


def test_use_raises_importance_and_slows_forgetting(tier2: Tier2) -> None:
    unused = fact(tier2, 0.5)
    used = dataclasses.replace(unused, access_count=3, last_accessed=T0)
    later = T0 + 10 * DAY_S
    assert importance.score(used, later) > importance.score(unused, later)
    # stability grows with each use: retention after the same gap is higher
    assert importance.retention(10, 5) > importance.retention(10, 1) > importance.retention(10, 0)
    assert importance.stability_days(0) == 10.0 and importance.stability_days(2) == 30.0
    # the clock restarts at the last use
    recent = dataclasses.replace(unused, access_count=1, last_accessed=later)
    assert importance.score(recent, later) > importance.score(used, later)


def test_floor_keeps_a_trace_proportional_to_salience(tier2: Tier2) -> None:
    years = T0 + 3 * 365 * DAY_S
    assert importance.score(fact(tier2, 0.8), years) == pytest.approx(0.08)
    assert importance.score(fact(tier2, 0.3), years) == pytest.approx(0.03)
    assert importance.min_keeping_salience(0.05) == pytest.approx(0.5)
    assert importance.min_keeping_salience(0.05, DecayParams(floor=0.0)) == math.inf


def test_scores_stay_within_unit_interval(tier2: Tier2) -> None:
    hot = fact(tier2, 1.0, access_count=10_000, last_accessed=T0)
    assert importance.score(hot, T0) == 1.0
    assert importance.score(hot, T0 - 5 * DAY_S) == 1.0  # clock skew counts as no time passed
    assert importance.decayed(-3.0, -1, T0, T0 + DAY_S) == 0.0
    assert 0.0 <= importance.decayed(7.0, 0, T0, T0 + 1e9) <= 1.0


@pytest.mark.parametrize(
    "bad",
    [
        {"base_stability_days": 0.0},
        {"stability_growth": -1.0},
        {"reinforcement": -0.1},
        {"floor": 1.5},
        {"base_stability_days": math.nan},
    ],
)
def test_bad_decay_params_are_refused(bad: dict[str, float]) -> None:
    with pytest.raises(ValidationError):
        DecayParams(**bad)


def test_reinforce_records_one_use_per_fact(tier2: Tier2) -> None:
    a = tier2.facts.store("Maya adopted a beagle").fact
    b = tier2.facts.store("Maya works at Acme").fact
    assert importance.reinforce(tier2, [a.uuid, a.uuid, b.uuid, "no-such-fact"], at=T0 + 5) == 2
    again = tier2.facts.get(a.uuid, touch=False)
    assert (again.access_count, again.last_accessed) == (1, T0 + 5)
    # a reinforcement never moves last use backwards
    importance.reinforce(tier2, [a.uuid], at=T0)
    again = tier2.facts.get(a.uuid, touch=False)
    assert (again.access_count, again.last_accessed) == (2, T0 + 5)
    assert importance.reinforce(tier2, []) == 0
    assert importance.score(again, T0 + 5 + 20 * DAY_S) > importance.score(
        dataclasses.replace(again, access_count=0), T0 + 5 + 20 * DAY_S
    )
