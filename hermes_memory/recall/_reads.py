"""What recall reads from Tier 2 that only a commit can change, kept between the recalls of one store.

Recall asks for the same rows again and again: its candidates' row ids and neighbours, the turns
themselves, the ranking columns of candidate facts, the facts it shows, the turns a superseded fact was
extracted from. All of it changes only when a commit changes an episode or a fact (other than its access
counts). Such a commit moves ``tier2.recall_log.recall_generation`` (triggers on those rows, migration 11)
and logs the rows it changed (``recall_changes``, migration 12): the next recall drops those rows from
the cache and keeps the rest, so a live agent's turn costs the recall after it only the rows that turn
changed (its own row and its neighbour's, the facts it wrote or reinforced), not every row it had read.
When the changes cannot be told row by row (too many, already pruned, a turn moved to another session)
the cache starts over. ``Database.data_version`` (no commit at all since) spares even the generation
read; a commit that changes nothing recall reads (the worker flushing access counts, its queue and
vector bookkeeping) keeps everything. Commits by other processes count the same way.

Each recall takes the ``ReadsSnapshot`` at its start and reads through it: rows it finds are the rows it
would have read itself. A row read while a change to it was being applied is returned but not kept.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any, TypeVar

from hermes_memory.records import Fact
from hermes_memory.tier2 import Tier2
from hermes_memory.tier2.fact_history import current_facts
from hermes_memory.tier2.recall_log import RecallChange, recall_changes, recall_generation

#: (row id, uuid, previous row id, next row id in its session): ``EpisodeStore.recall_rows``.
EpisodeRow = tuple[int, str, int | None, int | None]
#: ``FactStore.ranking_rows`` of a fact believed when read: (importance, when, recorded_at, superseded_at,
#: expires_at).
RankRow = tuple[float, float, float | None, float | None, float | None]
# Entries per kind before a snapshot starts that kind over (a store far larger than one conversation).
_MAX_ENTRIES = 50_000
# Turns kept (row id -> what the engine worked out from a turn): they carry their text, so fewer.
_MAX_TURNS = 20_000
# Logged changes applied row by row at most; more start the cache over (an import, a restore).
_MAX_CHANGES = 5_000
_K = TypeVar("_K", bound=Hashable)
_V = TypeVar("_V")
_ABSENT: Any = object()  # not kept (None is kept: read, not there)


class ReadsSnapshot:
    """Tier 2 reads as of ``recall_generation`` ``generation`` (last seen at ``version``); thread-safe
    (two recalls may fill it side by side while a third applies a change)."""

    def __init__(self, tier2: Tier2, version: int, generation: int = -1):
        self.version = version
        self.generation = generation
        self._tier2 = tier2
        self._lock = threading.Lock()
        self._epoch = 0  # moves with every change applied: a read begun before it is not kept
        self._rows_by_id: dict[int, EpisodeRow | None] = {}
        self._rows_by_uuid: dict[str, EpisodeRow | None] = {}
        self._turns: dict[int, Any] = {}
        self._ranks: dict[str, RankRow | None] = {}
        self._facts: dict[str, tuple[Fact, int | None] | None] = {}
        self._superseded: dict[str, Fact | None] = {}
        self._settled: dict[str, tuple[int, Any]] = {}  # ``settled``: name -> (version, value)
        # ``settled_rows``: the version they were read at, and by kind each key's row (None: not there).
        self._settled_rows: tuple[int, dict[str, dict[Any, Any]]] = (version, {})

    def episode_rows(self, ids: Sequence[int], uuids: Sequence[str]) -> list[EpisodeRow]:
        """``EpisodeStore.recall_rows(ids, uuids)``, the same rows in the same order (by row id the ones
        found by id, then by uuid the others), reading only those not read before."""
        by_id = {i: row for i in ids if (row := self._rows_by_id.get(i, _ABSENT)) is not _ABSENT}
        by_uuid = {u: row for u in uuids if (row := self._rows_by_uuid.get(u, _ABSENT)) is not _ABSENT}
        # Every one read before, each asked once (a recall's usual case): nothing to read, nothing repeated.
        if not uuids and len(by_id) == len(ids):
            return [row for row_id in sorted(ids) if (row := by_id[row_id]) is not None]
        if not ids and len(by_uuid) == len(uuids):
            return [row for uuid in sorted(uuids) if (row := by_uuid[uuid]) is not None]
        missing_ids = [i for i in ids if i not in by_id]
        missing_uuids = [u for u in uuids if u not in by_uuid]
        if missing_ids or missing_uuids:
            epoch = self._epoch
            found = self._tier2.episodes.recall_rows(missing_ids, missing_uuids)
            read_ids: dict[int, EpisodeRow | None] = dict.fromkeys(missing_ids)
            read_uuids: dict[str, EpisodeRow | None] = dict.fromkeys(missing_uuids)
            for row in found:
                read_ids[row[0]] = row
                read_uuids[row[1]] = row
            by_id.update(read_ids)
            by_uuid.update(read_uuids)
            with self._lock:
                if self._epoch == epoch:
                    if max(len(self._rows_by_id) + len(read_ids),
                           len(self._rows_by_uuid) + len(read_uuids)) > _MAX_ENTRIES:  # fmt: skip
                        self._rows_by_id.clear()
                        self._rows_by_uuid.clear()
                    self._rows_by_id.update(read_ids)
                    self._rows_by_uuid.update(read_uuids)
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

    def settled(self, name: str, read: Callable[[], _V]) -> _V:
        """``read()`` (a statement about the store as a whole: its newest row, whether it holds a kind),
        kept under ``name`` while nothing at all is committed (the same ``version``)."""
        version = self.version
        kept = self._settled.get(name)
        if kept is not None and kept[0] == version:
            value: _V = kept[1]
            return value
        value = read()
        self._settled[name] = (version, value)
        return value

    def settled_rows(
        self, kind: str, keys: Sequence[_K], load: Callable[[list[_K]], Mapping[_K, _V]]
    ) -> dict[_K, _V]:
        """``load(keys)`` (rows whose changes recall's log does not name: events, entity cards, the
        facts linked to an entity), each key's row kept under ``kind`` while nothing at all is committed
        (the same ``version``), only the keys not kept read. By key, those found, in the order of
        ``keys``."""
        with self._lock:
            if self._settled_rows[0] != self.version:
                self._settled_rows = (self.version, {})
            kept = self._settled_rows[1].setdefault(kind, {})
        known = self._filled(kept, keys, load)
        return {key: row for key in dict.fromkeys(keys) if (row := known.get(key)) is not None}

    def turns(self, ids: Sequence[int], load: Callable[[list[int]], Mapping[int, _V]]) -> dict[int, _V]:
        """The turns with these row ids as ``load`` makes them (the engine's per-turn work, done once per
        version of a turn), loading only those not kept; a row id not found is left out."""
        kept = self._turns.get
        found = {row_id: turn for row_id in ids if (turn := kept(row_id)) is not None}
        if len(found) == len(ids):  # every turn kept (a recall's usual case): nothing to read
            return found
        known: dict[int, _V | None] = self._filled(self._turns, ids, load, _MAX_TURNS)
        return {row_id: turn for row_id in ids if (turn := known.get(row_id)) is not None}

    def believed_ranks(self, uuids: Sequence[str]) -> dict[str, RankRow]:
        """``FactStore.ranking_rows(uuids, None)``: what recall ranks each fact believed now by."""
        facts = self._tier2.facts
        known = self._filled(self._ranks, uuids, lambda missing: facts.ranking_rows(missing, None))
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
        known = self._filled(self._facts, uuids, self._tier2.facts.get_many_checked)
        out: dict[str, tuple[Fact, int | None]] = {}
        for uuid in uuids:
            entry = known.get(uuid)
            if entry is not None:
                out[uuid] = entry
        return out

    def current_of_many(self, facts: Sequence[Fact], *, max_steps: int = 20) -> dict[str, Fact | None]:
        """``FactStore.current_of_many(facts)``: the chains walked through the kept facts, the ends
        checked against the kept believed ones (``believed_ranks``, as ``active_uuids`` checks them).
        The chains of replacements not kept yet are read in one query (``FactStore.chains_checked``) and
        kept, so the walk reads no fact a step at a time."""
        first = sorted({str(f.superseded_by) for f in facts if f.superseded_by is not None})
        self._filled(self._facts, first, lambda missing: self._tier2.facts.chains_checked(missing, max_steps))

        def fetch(uuids: list[str]) -> dict[str, Fact]:
            return {uuid: fact for uuid, (fact, _) in self.facts_checked(uuids).items()}

        return current_facts(facts, fetch, self.believed_ranks, max_steps=max_steps)

    def superseded_sources(self, episode_uuids: Sequence[str]) -> dict[str, Fact]:
        """``FactStore.superseded_sources(episode_uuids)``."""
        kept = self._superseded.get
        found: dict[str, Fact] = {}
        for uuid in episode_uuids:  # every turn kept (a recall's usual case): one pass, nothing to read
            fact = kept(uuid, _ABSENT)
            if fact is _ABSENT:
                break
            if fact is not None:
                found[uuid] = fact
        else:
            return found
        known = self._filled(self._superseded, episode_uuids, self._tier2.facts.superseded_sources)
        out: dict[str, Fact] = {}
        for uuid in episode_uuids:
            fact = known.get(uuid)
            if fact is not None:
                out[uuid] = fact
        return out

    def forget(self, changes: Sequence[RecallChange]) -> None:
        """Drop the rows these logged changes touched (``recall_changes``): read again when asked."""
        with self._lock:
            self._epoch += 1
            for kind, key in changes:
                if kind == "episode":
                    row_id = int(key)
                    self._turns.pop(row_id, None)
                    row = self._rows_by_id.pop(row_id, None)
                    if row is not None:
                        self._rows_by_uuid.pop(row[1], None)
                elif kind == "turn":
                    row = self._rows_by_uuid.pop(str(key), None)
                    if row is not None:
                        self._rows_by_id.pop(row[0], None)
                        self._turns.pop(row[0], None)
                elif kind == "fact":
                    self._ranks.pop(str(key), None)
                    self._facts.pop(str(key), None)
                elif kind == "source":
                    self._superseded.pop(str(key), None)

    def _filled(
        self,
        known: dict[_K, _V | None],
        keys: Sequence[_K],
        load: Callable[[list[_K]], Mapping[_K, _V]],
        cap: int = _MAX_ENTRIES,
    ) -> dict[_K, _V | None]:
        """The ``keys`` from ``known``, those it lacked read by ``load`` (a key ``load`` does not find is
        None: read, not there) and kept unless a change was applied meanwhile, with any other row
        ``load`` gave beside them (a chain's later facts); a kind that would pass ``cap`` starts over
        with them."""
        out = {key: value for key in keys if (value := known.get(key, _ABSENT)) is not _ABSENT}
        if len(out) == len(keys):  # every key kept (a recall's usual case): nothing to read
            return out
        missing = [k for k in dict.fromkeys(keys) if k not in out]
        if missing:
            epoch = self._epoch
            found = load(missing)
            read: dict[_K, _V | None] = {key: found.get(key) for key in missing}
            out.update(read)
            read.update(found)
            with self._lock:
                if self._epoch == epoch:
                    if len(known) + len(read) > cap:
                        known.clear()
                    known.update(read)
        return out


class RecallReads:
    """The read cache of one store: the same ``ReadsSnapshot`` from recall to recall, with the rows a
    commit changed dropped (a new, empty one when the changes cannot be told row by row)."""

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
        if current is None:
            generation, changes = recall_generation(db), None
        else:  # something was committed: what recall reads changed only if the generation moved
            generation, changes = recall_changes(db, current.generation, _MAX_CHANGES)
        with self._lock:
            current = self._snapshot
            if current is None or (changes is None and generation != current.generation):
                current = self._snapshot = ReadsSnapshot(self._tier2, version, generation)
            elif generation > current.generation and changes is not None:
                current.forget(changes)
                current.generation = generation
                current.version = version
            elif generation == current.generation:
                current.version = version
            return current


__all__ = ["EpisodeRow", "RankRow", "ReadsSnapshot", "RecallReads"]
