"""Importance of a fact over time, after Engram: salience at encoding, Ebbinghaus forgetting, reinforcement
by use.

    importance(f, t) = max( FLOOR · s,  min(1, s + α · ln(1 + n)) · exp(−Δt / S(n)) )
    S(n)             = S0 · (1 + G · n)

- ``s``  salience in [0, 1]: the fact's stored ``importance`` column, set once at encoding (extraction's
  salience, or the caller's ``importance=``). It is never overwritten by decay — decay is computed on
  read, so running the computation twice never compounds it.
- ``n``  how often the fact was used: ``access_count`` (reads bump it; recall reinforces what it returns).
- ``Δt`` days since the fact was last used (``last_accessed``), or since it was learned (``created_at``).
- ``exp(−Δt / S)`` Ebbinghaus retention. ``S0`` = 10 days is Engram's default decay rate λ = 0.1/day
  (half-life ≈ 6.9 days without use). Each use adds ``G · S0`` days of stability, so a fact recalled
  often fades ever more slowly (the spacing effect) instead of resetting to the same fast curve.
- ``α · ln(1 + n)`` Engram's Hebbian reinforcement term (α = 0.2 as in Engram's DecayConfig); here it
  raises the base that then decays, so use cannot make a fact important forever by itself.
- ``FLOOR · s`` keeps a trace proportional to salience: importance never falls below a tenth of it. With
  the default prune threshold (``limits.prune_importance_threshold`` = 0.05) facts encoded with salience
  ≥ 0.5 are never archived by decay; lower-salience facts (small talk, hedged remarks) fade unless used.

Engram's third term (β · emotional valence) has no input here: extraction folds emotional cues into
salience already.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

from hermes_memory.errors import ValidationError
from hermes_memory.records import Fact
from hermes_memory.tier2 import Tier2
from hermes_memory.tier2.upkeep import FactUpkeep

DAY_S = 86400.0


@dataclass(frozen=True)
class DecayParams:
    """The formula's constants (see the module docstring). Raises ValidationError when out of range."""

    base_stability_days: float = 10.0  # S0 = 1/λ with Engram's λ = 0.1 per day
    stability_growth: float = 1.0  # G: each use adds G·S0 days of stability
    reinforcement: float = 0.2  # α: Engram's reinforcement weight per (log) use
    floor: float = 0.1  # FLOOR: importance never drops below FLOOR × salience

    def __post_init__(self) -> None:
        if not self.base_stability_days > 0:
            raise ValidationError(f"base_stability_days must be > 0, got {self.base_stability_days!r}")
        for name in ("stability_growth", "reinforcement"):
            if not getattr(self, name) >= 0:
                raise ValidationError(f"{name} must be >= 0, got {getattr(self, name)!r}")
        if not 0.0 <= self.floor <= 1.0:
            raise ValidationError(f"floor must be within [0, 1], got {self.floor!r}")


DEFAULT_DECAY = DecayParams()


def stability_days(access_count: int, params: DecayParams = DEFAULT_DECAY) -> float:
    """S(n): how many days it takes the retention of a fact used ``access_count`` times to fall to 1/e."""
    return params.base_stability_days * (1.0 + params.stability_growth * max(0, access_count))


def retention(elapsed_days: float, access_count: int, params: DecayParams = DEFAULT_DECAY) -> float:
    """Ebbinghaus retention exp(−Δt / S(n)) in (0, 1]; a negative Δt (clock skew) counts as 0."""
    return math.exp(-max(0.0, elapsed_days) / stability_days(access_count, params))


def decayed(
    salience: float,
    access_count: int,
    last_used: float,
    now: float,
    params: DecayParams = DEFAULT_DECAY,
) -> float:
    """Importance in [0, 1] of a memory with this salience, use count and last use (Unix s) at ``now``."""
    s = min(1.0, max(0.0, salience))
    n = max(0, access_count)
    base = min(1.0, s + params.reinforcement * math.log1p(n))
    value = base * retention((now - last_used) / DAY_S, n, params)
    return min(1.0, max(params.floor * s, value))


def last_used(fact: Fact) -> float:
    """When a fact was last read, or else when it was learned."""
    if fact.last_accessed is not None:
        return fact.last_accessed
    return fact.created_at


def score(fact: Fact, now: float | None = None, params: DecayParams = DEFAULT_DECAY) -> float:
    """The fact's importance in [0, 1] at ``now`` (default: the current time). Never raises."""
    at = time.time() if now is None else now
    return decayed(fact.importance, fact.access_count, last_used(fact), at, params)


def min_keeping_salience(threshold: float, params: DecayParams = DEFAULT_DECAY) -> float:
    """The salience from which the floor alone keeps importance >= ``threshold`` (so decay never prunes)."""
    if params.floor <= 0:
        return math.inf
    return threshold / params.floor


def reinforce(tier2: Tier2, fact_uuids: Sequence[str], *, at: float | None = None) -> int:
    """Record one use of each fact (access_count + 1, last_accessed = ``at``) in one transaction.

    Returns how many facts were found. Recall calls this for what it returns; FactStore reads already do it.
    """
    when = time.time() if at is None else at
    unique = list(dict.fromkeys(fact_uuids))
    if not unique:
        return 0
    return FactUpkeep(tier2.db).reinforce(unique, when)


__all__ = [
    "DEFAULT_DECAY",
    "DecayParams",
    "decayed",
    "last_used",
    "min_keeping_salience",
    "reinforce",
    "retention",
    "score",
    "stability_days",
]
