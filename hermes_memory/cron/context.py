"""What a maintenance job works on: the profile's stores and config, handed over by the host (MemoryAPI)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal, TypeVar

from hermes_memory.config import Config
from hermes_memory.graph.service import GraphService
from hermes_memory.records import Fact
from hermes_memory.tier2 import Tier2
from hermes_memory.tier2._util import dumps, loads_list
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


def batches(items: Sequence[T], size: int | None = None) -> Iterable[Sequence[T]]:
    """Consecutive slices of at most ``size`` (default: ``BATCH``, read at call time) items."""
    step = BATCH if size is None else size
    for start in range(0, len(items), step):
        yield items[start : start + step]


def report(progress: Progress | None, done: int, total: int) -> None:
    if progress is not None:
        progress(done, total)


def replace_in_timeline(
    conn: sqlite3.Connection, column: Literal["related_entities", "related_facts"], old: str, new: str
) -> int:
    """Point timeline references (a JSON list column) from ``old`` to ``new``, in the caller's transaction.

    No foreign key can follow a JSON list, so merges rewrite them here. Returns how many events changed.
    """
    changed = 0
    # instr() is a cheap pre-filter: uuids are distinctive, so it only lets real references through.
    rows = conn.execute(f"SELECT id, {column} AS refs FROM timeline WHERE instr({column}, ?) > 0", (old,))
    for row in rows.fetchall():
        refs = loads_list(row["refs"])
        if old not in refs:
            continue
        updated = list(dict.fromkeys(new if ref == old else ref for ref in refs))
        conn.execute(f"UPDATE timeline SET {column} = ? WHERE id = ?", (dumps(updated), row["id"]))
        changed += 1
    return changed


__all__ = ["BATCH", "JobContext", "Progress", "batches", "replace_in_timeline", "report"]
