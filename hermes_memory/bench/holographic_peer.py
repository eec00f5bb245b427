"""Hermes' bundled ``holographic`` memory provider, driven directly, as the peer of the benchmarks.

It ships inside ``hermes-agent`` (``plugins/memory/holographic``): an SQLite fact store (FTS5, entity
links, one HRR vector per fact) and a ``FactRetriever`` whose ``search`` is what its provider's
``prefetch`` and ``fact_store(action="search")`` call. Holographic never stores turns on its own
(``sync_turn`` is a no-op; facts come from tool calls), so the bench stores every turn as one fact
(``"<speaker>: <text>"``) through ``MemoryStore.add_fact`` — the path its tool uses — with the
provider's default settings (trust 0.5, HRR dim 1024, HRR weight 0.3, no decay, min trust 0.3).

Its hits map back to turns exactly: ``add_fact`` returns the fact id, so each fact id knows the turn
ids whose text it holds (identical texts are one fact, standing for all of their turns).
"""

from __future__ import annotations

import importlib
import logging
import os
from pathlib import Path
from typing import Any

from hermes_memory.errors import DependencyMissingError

# The holographic provider's defaults (plugins/memory/holographic/__init__.py, initialize()).
DEFAULT_TRUST = 0.5
HRR_DIM = 1024
HRR_WEIGHT = 0.3
MIN_TRUST = 0.3
_HRR_LOGGER = "plugins.memory.holographic.holographic"


class _CapacityWarnings(logging.Filter):
    """Counts (and keeps off the console) holographic's "HRR storage near capacity" warning, which
    its store logs on every fact added once a category holds a few hundred facts."""

    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def filter(self, record: logging.LogRecord) -> bool:
        if record.getMessage().startswith("HRR storage near capacity"):
            self.count += 1
            return False
        return True


def _modules() -> tuple[Any, Any]:
    # Imported by name: hermes-agent ships no type information, and it is optional here.
    try:
        store = importlib.import_module("plugins.memory.holographic.store")
        retrieval = importlib.import_module("plugins.memory.holographic.retrieval")
    except ImportError as exc:
        raise DependencyMissingError(
            f"Hermes' holographic provider is not importable ({exc}); install hermes-agent "
            "(pip install -e '.[hermes]')"
        ) from exc
    return store.MemoryStore, retrieval.FactRetriever


class HolographicPeer:
    """One holographic store in ``db_path`` holding turns as facts; ``search`` returns turn ids.

    Raises DependencyMissingError when hermes-agent is not installed.
    """

    def __init__(self, db_path: str | os.PathLike[str]) -> None:
        store_cls, retriever_cls = _modules()
        self.db_path = Path(db_path)
        self._store = store_cls(db_path=str(self.db_path), default_trust=DEFAULT_TRUST, hrr_dim=HRR_DIM)
        self._retriever = retriever_cls(
            store=self._store, temporal_decay_half_life=0, hrr_weight=HRR_WEIGHT, hrr_dim=HRR_DIM
        )
        self._turns_of_fact: dict[int, list[str]] = {}
        self._warnings = _CapacityWarnings()
        logging.getLogger(_HRR_LOGGER).addFilter(self._warnings)

    @property
    def capacity_warnings(self) -> int:
        """How many times holographic warned that its HRR memory bank is near capacity."""
        return self._warnings.count

    def add_turn(self, turn_id: str, text: str) -> int:
        """Store one turn's text as a fact; returns its fact id. Raises ValueError for empty text."""
        fact_id = int(self._store.add_fact(text))
        turns = self._turns_of_fact.setdefault(fact_id, [])
        if turn_id not in turns:
            turns.append(turn_id)
        return fact_id

    def search_facts(self, query: str, limit: int = 10) -> list[dict[str, Any]]:
        """What holographic's own search returns (its provider's defaults), best first."""
        results: list[dict[str, Any]] = self._retriever.search(query, min_trust=MIN_TRUST, limit=limit)
        return results

    def turn_ids(self, facts: list[dict[str, Any]], k: int) -> list[str]:
        """The first k distinct turn ids the facts stand for, in rank order.

        Raises KeyError for a fact this peer did not store (the store must be this bench's own).
        """
        out: list[str] = []
        for fact in facts:
            for turn_id in self._turns_of_fact[int(fact["fact_id"])]:
                if turn_id not in out:
                    out.append(turn_id)
                    if len(out) == k:
                        return out
        return out

    def search(self, query: str, k: int = 10) -> list[str]:
        """The turn ids of holographic's top-k search results."""
        return self.turn_ids(self.search_facts(query, limit=k), k)

    def close(self) -> None:
        logging.getLogger(_HRR_LOGGER).removeFilter(self._warnings)
        self._store.close()

    def __enter__(self) -> HolographicPeer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ = ["HolographicPeer"]
