"""What a maintenance job works on: the profile's stores and config, handed over by the host (MemoryAPI)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from hermes_memory.config import Config
from hermes_memory.graph.service import GraphService
from hermes_memory.records import Fact
from hermes_memory.tier2 import Tier2
from hermes_memory.tier2.upkeep import FactUpkeep
from hermes_memory.tier3.semantic import SemanticMemory

# (done, total) after each batch, like SemanticMemory.drain's progress callback.
Progress = Callable[[int, int], None]
# How many items one job writes per transaction: large enough to be fast, small enough that an
# interrupted run loses little work (the rest is redone, idempotently, by the next run).
BATCH = 200

T = TypeVar("T")


@dataclass(frozen=True)
class JobContext:
    """The stores a job touches. ``semantic`` and ``graph`` are None when their tier is switched off.

    ``fact_removed`` is the host's removal path for a hard-deleted fact (MemoryAPI unindexes its chunks
    and queues their vector deletes); it runs inside the deleting transaction.
    """

    tier2: Tier2
    config: Config
    semantic: SemanticMemory | None = None
    graph: GraphService | None = None
    fact_removed: Callable[[Fact], None] | None = None
    actor: str = "cron"
    # False inside an agent process: the vector engine's index build holds the GIL for seconds, so it is
    # left to the process's close (long-lived stores build there) or to `hermes-memory maintain`.
    build_indexes: bool = True

    @property
    def upkeep(self) -> FactUpkeep:
        """The store-wide fact reads and writes of the jobs (every scope)."""
        return FactUpkeep(self.tier2.db)


def batches(items: Sequence[T], size: int | None = None) -> Iterable[Sequence[T]]:
    """Consecutive slices of at most ``size`` (default: ``BATCH``, read at call time) items."""
    step = BATCH if size is None else size
    for start in range(0, len(items), step):
        yield items[start : start + step]


def report(progress: Progress | None, done: int, total: int) -> None:
    if progress is not None:
        progress(done, total)


__all__ = ["BATCH", "JobContext", "Progress", "batches", "report"]
