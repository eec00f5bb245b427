"""Episodes: raw conversation messages, verbatim, with full-text search."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hermes_memory.errors import ConflictError, NotFoundError
from hermes_memory.records import Episode
from hermes_memory.scoping import ScopeView
from hermes_memory.tier2._util import content_hash, dumps, loads_dict, new_uuid, now
from hermes_memory.tier2.audit import AuditLog
from hermes_memory.tier2.db import Database
from hermes_memory.tier2.search import bm25_to_score, fts_match, window, windowed
from hermes_memory.tier2.verdicts import episode_verdict


@dataclass(frozen=True)
class ScoredEpisode:
    episode: Episode
    score: float


#: ``EpisodeStore.turn_rows``: (row id, uuid, session id, role, speaker, text, timestamp, metadata as stored
#: (JSON), scope, threat verdict).
TurnRow = tuple[int, str, str, str, str | None, str, float, str, str, int | None]


# An episode's neighbours in its session (``recall_rows``): the row ids before and after it.
_PREV = (
    "(SELECT p.id FROM episodes p WHERE p.session_id = e.session_id AND p.scope = e.scope "
    "AND p.id < e.id ORDER BY p.id DESC LIMIT 1) AS prev"
)
_NEXT = (
    "(SELECT n.id FROM episodes n WHERE n.session_id = e.session_id AND n.scope = e.scope "
    "AND n.id > e.id ORDER BY n.id LIMIT 1) AS next"
)


def _row_to_episode(row: sqlite3.Row) -> Episode:
    return Episode(
        uuid=row["uuid"],
        session_id=row["session_id"],
        role=row["role"],
        speaker=row["speaker"],
        text=row["text"],
        timestamp=row["timestamp"],
        metadata=loads_dict(row["metadata"]),
        scope=row["scope"],
    )


class EpisodeStore:
    """Episodes of one ``ScopeView``: always written to its own scope, read from its readable scopes
    (episodes are never shared, so only its own ones exist there)."""

    def __init__(self, db: Database, audit: AuditLog, view: ScopeView):
        self._db = db
        self._audit = audit
        self._view = view

    def _scoped(self, column: str = "scope") -> tuple[str, list[str]]:
        return self._view.where(column)

    def add(
        self,
        conn: sqlite3.Connection,
        *,
        session_id: str,
        role: str,
        text: str,
        timestamp: float,
        speaker: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        uuid: str | None = None,
        actor: str = "session",
    ) -> Episode:
        """Insert one message (into the view's own scope) inside the caller's transaction. A given
        ``uuid`` makes it idempotent. Raises StorageError for the admin view, ConflictError when the
        uuid is taken in another scope."""
        scope = self._view.write_own
        uuid = uuid or new_uuid()
        existing = conn.execute("SELECT * FROM episodes WHERE uuid = ?", (uuid,)).fetchone()
        if existing is not None:
            if existing["scope"] != scope:
                raise ConflictError(f"episode id {uuid!r} is already used")
            return _row_to_episode(existing)
        conn.execute(
            "INSERT INTO episodes(uuid, session_id, role, speaker, text, timestamp, metadata, content_hash,"
            " created_at, scope, threat) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                uuid,
                session_id,
                role,
                speaker,
                text,
                timestamp,
                dumps(dict(metadata or {})),
                content_hash(text),
                now(),
                scope,
                episode_verdict(text, speaker, session_id, role, metadata),
            ),
        )
        self._audit.record(conn, action="episode_add", tier="tier2", actor=actor, target_uuid=uuid)
        return _row_to_episode(conn.execute("SELECT * FROM episodes WHERE uuid = ?", (uuid,)).fetchone())

    def previous(self, conn: sqlite3.Connection, episode: Episode) -> Episode | None:
        """The message before ``episode`` in its session (inside the caller's transaction)."""
        row = conn.execute(
            "SELECT p.* FROM episodes e JOIN episodes p ON p.session_id = e.session_id AND p.scope = e.scope "
            "AND p.id < e.id WHERE e.uuid = ? ORDER BY p.id DESC LIMIT 1",
            (episode.uuid,),
        ).fetchone()
        return None if row is None else _row_to_episode(row)

    def neighbours(self, ids: list[int]) -> dict[int, tuple[int | None, int | None]]:
        """(previous, next) episode row ids in the same session for each episode row id."""
        out: dict[int, tuple[int | None, int | None]] = {}
        scoped, sp = self._scoped("e.scope")
        rows = self._db.query_keys(
            "SELECT e.id, "
            "(SELECT p.id FROM episodes p WHERE p.session_id = e.session_id AND p.scope = e.scope "
            " AND p.id < e.id ORDER BY p.id DESC LIMIT 1) AS prev_id, "
            "(SELECT n.id FROM episodes n WHERE n.session_id = e.session_id AND n.scope = e.scope "
            " AND n.id > e.id ORDER BY n.id LIMIT 1) AS next_id "
            f"FROM episodes e WHERE e.id IN ({{keys}}) AND {scoped}",
            ids, sp, batch=400,
        )  # fmt: skip
        for r in rows:
            out[int(r["id"])] = (r["prev_id"], r["next_id"])
        return out

    def by_ids(self, ids: list[int]) -> dict[int, Episode]:
        out: dict[int, Episode] = {}
        scoped, sp = self._scoped()
        query = f"SELECT * FROM episodes WHERE id IN ({{keys}}) AND {scoped}"
        for r in self._db.query_keys(query, ids, sp, batch=400):
            out[int(r["id"])] = _row_to_episode(r)
        return out

    def recall_rows(
        self, ids: Sequence[int], uuids: Sequence[str]
    ) -> list[tuple[int, str, int | None, int | None]]:
        """(row id, uuid, previous row id, next row id in its session) of the view's episodes among
        ``ids`` and ``uuids``: one query, no text (recall's candidates; see ``turn_rows``). Those found by
        id come first, by row id, then the others by uuid (recall breaks ties in this order)."""
        scoped, sp = self._scoped("e.scope")
        if not ids or not uuids:  # one kind of key (a recall's usual case): no union to order
            key = "e.id" if ids else "e.uuid"
            rows = self._db.query(
                f"SELECT e.id, e.uuid, {_PREV}, {_NEXT} FROM episodes e "
                f"WHERE {key} IN (SELECT value FROM json_each(?)) AND {scoped} ORDER BY {key}",
                (json.dumps(list(ids or uuids)), *sp),
            )
            return [(int(r[0]), str(r[1]), r[2], r[3]) for r in rows]
        by_id = json.dumps(list(ids))
        rows = self._db.query(
            f"SELECT r.id, r.uuid, r.prev, r.next FROM (SELECT e.id, e.uuid, {_PREV}, {_NEXT}, "
            "e.id IN (SELECT value FROM json_each(?)) AS found "
            "FROM episodes e WHERE (e.id IN (SELECT value FROM json_each(?)) "
            f"OR e.uuid IN (SELECT value FROM json_each(?))) AND {scoped}) r "
            "ORDER BY r.found DESC, CASE WHEN r.found THEN r.id END, r.uuid",
            (by_id, by_id, json.dumps(list(uuids)), *sp),
        )
        return [(int(r[0]), str(r[1]), r[2], r[3]) for r in rows]

    def turn_rows(self, ids: Sequence[int]) -> list[TurnRow]:
        """The view's episodes among ``ids`` as ``TurnRow``s (their metadata as stored, their threat
        verdict: ``tier2.verdicts``), in one query. Recall loads a few hundred turns and shows a few: it
        makes an ``Episode`` only of those it shows (``recall.hits.Turn``)."""
        scoped, sp = self._scoped()
        rows = self._db.query(
            "SELECT id, uuid, session_id, role, speaker, text, timestamp, metadata, scope, threat "
            f"FROM episodes WHERE id IN (SELECT value FROM json_each(?)) AND {scoped}",
            (json.dumps(list(ids)), *sp),
        )
        return [(int(r[0]), r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9]) for r in rows]

    def ids_for(self, uuids: list[str]) -> dict[str, int]:
        out: dict[str, int] = {}
        scoped, sp = self._scoped()
        query = f"SELECT id, uuid FROM episodes WHERE uuid IN ({{keys}}) AND {scoped}"
        for r in self._db.query_keys(query, uuids, sp, batch=400):
            out[str(r["uuid"])] = int(r["id"])
        return out

    def in_range(
        self,
        start: float,
        end: float,
        *,
        speaker: str | None = None,
        limit: int = 200,
    ) -> list[int]:
        """Row ids of episodes with start <= timestamp < end (optionally by one speaker), oldest first."""
        scoped, sp = self._scoped()
        sql = f"SELECT id FROM episodes WHERE {scoped} AND timestamp >= ? AND timestamp < ?"
        params: list[Any] = [*sp, start, end]
        if speaker is not None:
            sql += " AND lower(speaker) = lower(?)"
            params.append(speaker)
        rows = self._db.query(sql + " ORDER BY timestamp, id LIMIT ?", [*params, limit])
        return [int(r["id"]) for r in rows]

    def last_row_id(self) -> int:
        """The highest episode row id of the store, in any scope (0 when empty): a bound on its size read
        from the end of the primary key."""
        row = self._db.query_one("SELECT max(id) FROM episodes")
        return 0 if row is None or row[0] is None else int(row[0])

    def latest_time(self) -> float | None:
        scoped, sp = self._scoped()
        row = self._db.query_one(f"SELECT max(timestamp) AS t FROM episodes WHERE {scoped}", sp)
        return None if row is None or row["t"] is None else float(row["t"])

    def speakers(self) -> list[str]:
        """The distinct speakers of the view's turns, in the order each first spoke (row id order)."""
        # The store's (speaker, scope) pairs stepped through their index, one probe each, and the first
        # turn of each pair the view reads (migration 17): ``SELECT DISTINCT`` read every turn of the view
        # (19-20 ms at 100k turns). The index leads with the speaker: one led by the scope would be taken
        # by every query with a scope term, and scan the scope's turns.
        rows = self._db.query(
            "WITH RECURSIVE s(speaker) AS (SELECT min(speaker) FROM episodes UNION ALL "
            "SELECT (SELECT min(e.speaker) FROM episodes e WHERE e.speaker > s.speaker) FROM s "
            "WHERE s.speaker IS NOT NULL), "
            "p(speaker, scope) AS (SELECT s.speaker, (SELECT min(e.scope) FROM episodes e "
            "WHERE e.speaker = s.speaker) FROM s WHERE s.speaker IS NOT NULL UNION ALL "
            "SELECT p.speaker, (SELECT min(e.scope) FROM episodes e WHERE e.speaker = p.speaker "
            "AND e.scope > p.scope) FROM p WHERE p.scope IS NOT NULL) "
            "SELECT p.speaker, p.scope, (SELECT min(e.id) FROM episodes e WHERE e.speaker = p.speaker "
            "AND e.scope = p.scope) AS first FROM p WHERE p.scope IS NOT NULL"
        )
        view = self._view
        first: dict[str, int] = {}
        for r in rows:
            if not view.can_read(str(r["scope"])):
                continue
            speaker, at = str(r["speaker"]), int(r["first"])
            if at < first.get(speaker, at + 1):
                first[speaker] = at
        return sorted(first, key=first.__getitem__)

    def get(self, uuid: str) -> Episode:
        """The episode with this uuid. Raises NotFoundError (also for one outside the view)."""
        scoped, sp = self._scoped()
        row = self._db.query_one(f"SELECT * FROM episodes WHERE uuid = ? AND {scoped}", (uuid, *sp))
        if row is None:
            raise NotFoundError(f"no episode with uuid {uuid!r}")
        return _row_to_episode(row)

    def search(self, query: str, *, limit: int = 10, session_id: str | None = None) -> list[ScoredEpisode]:
        """BM25-ranked episodes matching free text."""
        match = fts_match(query)
        if match is None:
            return []
        scoped, sp = self._scoped("e.scope")
        clauses, params = [scoped], [*sp]
        if session_id is not None:
            clauses.append("e.session_id = ?")
            params.append(session_id)
        rows = self._db.query(
            "SELECT e.*, bm25(episodes_fts) AS rank FROM episodes_fts JOIN episodes e "
            f"ON e.id = episodes_fts.rowid WHERE episodes_fts MATCH ? AND {' AND '.join(clauses)} "
            "ORDER BY rank LIMIT ?",
            [match, *params, limit],
        )
        return [ScoredEpisode(_row_to_episode(r), bm25_to_score(r["rank"])) for r in rows]

    def bm25_ranks(self, query: str, *, limit: int = 200) -> dict[int, float]:
        """Row id -> raw BM25 relevance (-bm25, higher is better) of the best-matching episodes."""
        match = fts_match(query)
        if match is None:
            return {}
        scoped, sp = self._scoped("e.scope")
        sql = (
            "SELECT e.id, -bm25(episodes_fts) AS s FROM episodes_fts "
            f"JOIN episodes e ON e.id = episodes_fts.rowid WHERE episodes_fts MATCH ? AND {scoped} "
        )
        bounded = window(self._db, "episodes_fts", "episodes", query)
        if bounded is None:
            # Ordered by the selected ``s`` (descending, as bm25 ascending): bm25 worked out once per row.
            rows = self._db.query(sql + "ORDER BY s DESC LIMIT ?", (match, *sp, limit))
            return {int(r["id"]): float(r["s"]) for r in rows}
        # Every term over the newest turns that match; the rare terms alone over every turn (their score
        # then lacks what the common terms would add: little, a common term's weight is low).
        rows = windowed(
            self._db, "episodes_fts", "episodes", "e", "e.id", scoped, match, bounded, sp, limit, pool=limit
        )
        return {int(r["bm_id"]): -float(r["bm"]) for r in rows}

    def latest(self, *, count: int = 10, before: float | None = None) -> list[Episode]:
        """The newest episodes (optionally before a time), oldest first."""
        scoped, sp = self._scoped()
        clauses: list[str] = [scoped]
        params: list[Any] = [*sp]
        if before is not None:
            clauses.append("timestamp < ?")
            params.append(before)
        rows = self._db.query(
            f"SELECT * FROM episodes WHERE {' AND '.join(clauses)} ORDER BY timestamp DESC, id DESC LIMIT ?",
            [*params, count],
        )
        return [_row_to_episode(r) for r in reversed(rows)]

    def not_summarised(
        self, *, extractor: str, session_id: str | None = None, before: float | None = None,
        limit: int = 200, newest: bool = False,
    ) -> list[Episode]:  # fmt: skip
        """The oldest episodes (``newest``: the newest; of one session, and/or before a time) that no
        unarchived fact made by ``extractor`` cites as a source (``fact_sources``), by session then time
        (``newest``: by time)."""
        scoped, sp = self._scoped("e.scope")
        clauses: list[str] = [scoped]
        params: list[Any] = [*sp]
        if session_id is not None:
            clauses.append("e.session_id = ?")
            params.append(session_id)
        if before is not None:
            clauses.append("e.timestamp < ?")
            params.append(before)
        order = "e.timestamp DESC, e.id DESC" if newest else "e.session_id, e.timestamp, e.id"
        rows = self._db.query(
            f"SELECT e.* FROM episodes e WHERE {' AND '.join(clauses)} AND NOT EXISTS ("
            "SELECT 1 FROM fact_sources s JOIN facts f ON f.id = s.fact_id WHERE s.episode_uuid = e.uuid "
            "AND f.extractor = ? AND f.is_archived = 0) "
            f"ORDER BY {order} LIMIT ?",
            [*params, extractor, limit],
        )
        found = [_row_to_episode(r) for r in rows]
        return found[::-1] if newest else found

    def count(self) -> int:
        scoped, sp = self._scoped()
        row = self._db.query_one(f"SELECT count(*) AS n FROM episodes WHERE {scoped}", sp)
        return int(row["n"]) if row else 0

    def has_session(self, session_id: str) -> bool:
        """Whether the view holds any turn of this session (one probe of the session index)."""
        scoped, sp = self._scoped()
        row = self._db.query_one(
            f"SELECT 1 FROM episodes WHERE session_id = ? AND {scoped} LIMIT 1", (session_id, *sp)
        )
        return row is not None

    def stored(self, conn: sqlite3.Connection, uuid: str) -> bool:
        """Whether an episode with this uuid is stored, in any scope, as the caller's transaction sees."""
        return conn.execute("SELECT 1 FROM episodes WHERE uuid = ?", (uuid,)).fetchone() is not None


__all__ = [
    "EpisodeStore",
    "ScoredEpisode",
    "TurnRow",
]
