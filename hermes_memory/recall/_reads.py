"""What recall reads from Tier 2 that only a commit can change, kept between the recalls of one store.

Recall asks for the same rows again and again: its candidates' row ids and neighbours, the ranking
columns of candidate facts, the facts it shows, the turns a superseded fact was extracted from. All of it
changes only when a commit changes an episode or a fact (other than its access counts), so it is kept
while ``tier2.schema.recall_generation`` (bumped by triggers on those rows, migration 11) stays the same;
``Database.data_version`` (no commit at all since) spares even that read. A commit by this process or by
another one that changes what recall reads starts over; one that does not (the worker flushing access
counts, its queue and vector bookkeeping) keeps it. A store written between two recalls (a live agent's
turn) pays what it paid before; recalls of an unchanged store read only what they have not read
yet. Each recall takes one ``ReadsSnapshot`` at its start and reads through it: rows it finds are the
rows it would have read itself, and what it fills in stays with that version.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar

from hermes_memory.records import Fact
from hermes_memory.tier2 import Tier2
from hermes_memory.tier2.schema import recall_generation

#: (row id, uuid, previous row id, next row id in its session): ``EpisodeStore.recall_rows``.
EpisodeRow = tuple[int, str, int | None, int | None]
#: ``FactStore.ranking_rows`` of a fact believed when read: (importance, when, recorded_at, superseded_at,
#: expires_at).
RankRow = tuple[float, float, float | None, float | None, float | None]
# Entries per kind before a snapshot starts that kind over (a store far larger than one conversation).
_MAX_ENTRIES = 50_000
_V = TypeVar("_V")


class ReadsSnapshot:
    """Tier 2 reads of one ``recall_generation`` (last seen at ``version``); thread-safe (two recalls may
    fill it side by side)."""

    def __init__(self, tier2: Tier2, version: int, generation: int = -1):
        self.version = version
        self.generation = generation
        self._tier2 = tier2
        self._rows_by_id: dict[int, EpisodeRow | None] = {}
        self._rows_by_uuid: dict[str, EpisodeRow | None] = {}
        self._ranks: dict[str, RankRow | None] = {}
        self._facts: dict[str, tuple[Fact, int | None] | None] = {}
        self._superseded: dict[str, Fact | None] = {}

    def episode_rows(self, ids: Sequence[int], uuids: Sequence[str]) -> list[EpisodeRow]:
        """``EpisodeStore.recall_rows(ids, uuids)``, the same rows in the same order (by row id the ones
        found by id, then by uuid the others), reading only those not read before."""
        by_id, by_uuid = self._rows_by_id, self._rows_by_uuid
        missing_ids = [i for i in ids if i not in by_id]
        missing_uuids = [u for u in uuids if u not in by_uuid]
        if missing_ids or missing_uuids:
            if max(len(by_id) + len(missing_ids), len(by_uuid) + len(missing_uuids)) > _MAX_ENTRIES:
                by_id.clear()
                by_uuid.clear()
                missing_ids, missing_uuids = list(ids), list(uuids)
            found = self._tier2.episodes.recall_rows(missing_ids, missing_uuids)
            for row in found:
                by_id[row[0]] = row
                by_uuid[row[1]] = row
            for row_id in missing_ids:
                by_id.setdefault(row_id, None)
            for uuid in missing_uuids:
                by_uuid.setdefault(uuid, None)
        out: dict[int, EpisodeRow] = {}
        for row_id in sorted(ids):
            known = by_id.get(row_id)
            if known is not None:
                out[row_id] = known
        for uuid in sorted(uuids):
            known = by_uuid.get(uuid)
            if known is not None:
                out.setdefault(known[0], known)
        return list(out.values())

    def believed_ranks(self, uuids: Sequence[str]) -> dict[str, RankRow]:
        """``FactStore.ranking_rows(uuids, None)``: what recall ranks each fact believed now by."""
        known = _filled(self._ranks, uuids, lambda missing: self._tier2.facts.ranking_rows(missing, None))
        at = time.time()
        out: dict[str, RankRow] = {}
        for uuid in uuids:
            row = known.get(uuid)
            # A fact believed when read stops being believed when it expires; nothing else changes
            # without a commit (and a fact not believed then is not believed later either).
            if row is not None and (row[4] is None or row[4] > at):
                out[uuid] = row
        return out

    def facts_checked(self, uuids: Sequence[str]) -> dict[str, tuple[Fact, int | None]]:
        """``FactStore.get_many_checked(uuids)``: the facts in the view with their threat verdicts."""
        known = _filled(self._facts, uuids, self._tier2.facts.get_many_checked)
        out: dict[str, tuple[Fact, int | None]] = {}
        for uuid in uuids:
            entry = known.get(uuid)
            if entry is not None:
                out[uuid] = entry
        return out

    def superseded_sources(self, episode_uuids: Sequence[str]) -> dict[str, Fact]:
        """``FactStore.superseded_sources(episode_uuids)``."""
        known = _filled(self._superseded, episode_uuids, self._tier2.facts.superseded_sources)
        out: dict[str, Fact] = {}
        for uuid in episode_uuids:
            fact = known.get(uuid)
            if fact is not None:
                out[uuid] = fact
        return out


def _filled(
    known: dict[str, _V | None], keys: Sequence[str], load: Callable[[list[str]], Mapping[str, _V]]
) -> dict[str, _V | None]:
    """``known`` with the ``keys`` it lacked read by ``load`` (a key ``load`` does not find is kept as
    None: read, not there); a kind that would pass ``_MAX_ENTRIES`` starts over with these keys."""
    missing = [k for k in dict.fromkeys(keys) if k not in known]
    if missing:
        if len(known) + len(missing) > _MAX_ENTRIES:
            known.clear()
            missing = list(dict.fromkeys(keys))
        found = load(missing)
        for key in missing:
            known[key] = found.get(key)
    return known


class RecallReads:
    """The snapshot of the store's current ``recall_generation`` (a new, empty one after a commit that
    changed a row recall reads)."""

    def __init__(self, tier2: Tier2):
        self._tier2 = tier2
        self._lock = threading.Lock()
        self._snapshot: ReadsSnapshot | None = None

    def snapshot(self) -> ReadsSnapshot:
        """For one recall, taken at its start. Raises StorageError when Tier 2 cannot be read."""
        db = self._tier2.db
        version = db.data_version()
        with self._lock:
            current = self._snapshot
            if current is not None and current.version == version:
                return current
        # Something was committed: what recall reads changed only if the generation moved.
        generation = recall_generation(db)
        with self._lock:
            current = self._snapshot
            if current is None or current.generation != generation:
                current = self._snapshot = ReadsSnapshot(self._tier2, version, generation)
            else:
                current.version = version
            return current


__all__ = ["EpisodeRow", "RankRow", "ReadsSnapshot", "RecallReads"]
