"""Chunks (every text Tier 3 embeds) and the durable embed queue. Tier 2 is Tier 3's source of truth:
a vector exists because a chunk row exists, and a queue row exists until the vector write committed."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from hermes_memory.scoping import ScopeView
from hermes_memory.tier2._util import content_hash, new_uuid, now
from hermes_memory.tier2.db import Database
from hermes_memory.tier2.search import bm25_to_score, bm25_uuid_scores, fts_match

CHUNKS_COLLECTION = "memory_chunks"
ENTITIES_COLLECTION = "entity_embeddings"


@dataclass(frozen=True, slots=True)
class ChunkRow:
    uuid: str
    source_kind: str
    source_uuid: str | None
    chunk_index: int
    text: str
    content_hash: str
    source_type: str
    session_id: str | None
    message_id: int | None
    category: str | None
    timestamp: float
    scope: str

    @property
    def vector_id(self) -> str:
        return f"chunk:{self.uuid}"


@dataclass(frozen=True, slots=True)
class QueueItem:
    id: int
    collection: str
    item_uuid: str
    op: str
    attempts: int
    enqueued_at: float


def _row_to_chunk(row: sqlite3.Row) -> ChunkRow:
    return ChunkRow(
        uuid=row["uuid"],
        source_kind=row["source_kind"],
        source_uuid=row["source_uuid"],
        chunk_index=row["chunk_index"],
        text=row["text"],
        content_hash=row["content_hash"],
        source_type=row["source_type"],
        session_id=row["session_id"],
        message_id=row["message_id"],
        category=row["category"],
        timestamp=row["timestamp"],
        scope=row["scope"],
    )


# Stored turns with an episode text still queued for its vector (episodes carry their turn's id).
TURNS_BEHIND_SQL = (
    "SELECT count(DISTINCT json_extract(e.metadata, '$.turn_uuid')) AS n FROM embed_queue q "
    "CROSS JOIN chunks c ON c.uuid = q.item_uuid CROSS JOIN episodes e ON e.uuid = c.source_uuid "
    "WHERE q.collection = ? AND q.op = 'upsert' AND c.source_kind IN ('episode', 'episode_window')"
)


class EmbedQueue:
    """Pending vector writes. A row is removed only after its vector write succeeded.

    The queue is work, not memory: any agent's drain may write any row (each vector carries its
    chunk's scope). Only ``count`` is bound to the view, so it never counts another scope's items.
    """

    def __init__(self, db: Database, view: ScopeView):
        self._db = db
        self._view = view

    def enqueue(self, conn: sqlite3.Connection, collection: str, item_uuid: str, op: str = "upsert") -> None:
        """Add (or refresh) a pending write inside the caller's transaction.

        An upsert cancels a pending delete of the same item and vice versa.
        """
        other = "delete" if op == "upsert" else "upsert"
        conn.execute(
            "DELETE FROM embed_queue WHERE collection = ? AND item_uuid = ? AND op = ?",
            (collection, item_uuid, other),
        )
        conn.execute(
            "INSERT INTO embed_queue(collection, item_uuid, op, enqueued_at) VALUES (?, ?, ?, ?) "
            "ON CONFLICT(collection, item_uuid, op) DO UPDATE SET enqueued_at = excluded.enqueued_at",
            (collection, item_uuid, op, now()),
        )

    def pending(self, limit: int, *, max_attempts: int | None = None) -> list[QueueItem]:
        sql = "SELECT * FROM embed_queue"
        params: list[Any] = []
        if max_attempts is not None:
            sql += " WHERE attempts < ?"
            params.append(max_attempts)
        rows = self._db.query(sql + " ORDER BY id LIMIT ?", [*params, limit])
        return [
            QueueItem(r["id"], r["collection"], r["item_uuid"], r["op"], r["attempts"], r["enqueued_at"])
            for r in rows
        ]

    def complete(self, items: Sequence[QueueItem]) -> int:
        """Remove finished rows, unless they were re-enqueued meanwhile (then they stay pending)."""
        with self._db.atomic() as conn:
            removed = 0
            for item in items:
                cur = conn.execute(
                    "DELETE FROM embed_queue WHERE id = ? AND enqueued_at = ?", (item.id, item.enqueued_at)
                )
                removed += cur.rowcount
        return removed

    def fail(self, items: Sequence[QueueItem], error: str) -> None:
        with self._db.atomic() as conn:
            conn.executemany(
                "UPDATE embed_queue SET attempts = attempts + 1, last_error = ? WHERE id = ?",
                [(error[:2000], item.id) for item in items],
            )

    def longer_than(self, n: int) -> bool:
        """True when more than ``n`` rows are pending, store-wide (the queue is shared work; reads at most
        ``n + 1`` rows of the primary key)."""
        row = self._db.query_one("SELECT 1 AS x FROM embed_queue LIMIT 1 OFFSET ?", (n,))
        return row is not None

    def count(self) -> int:
        """Pending rows of items in the view (every row for the admin view).

        Driven by the queue: each row looks its item up by uuid (a unique index), so the cost follows
        the queue's length, never the number of chunks (an empty queue is one index probe).
        """
        if self._view.admin:
            row = self._db.query_one("SELECT count(*) AS n FROM embed_queue")
        else:
            chunk_scope, cp = self._view.where("c.scope", by_key=True)
            entity_scope, ep = self._view.where("e.scope", by_key=True)
            row = self._db.query_one(
                "SELECT (SELECT count(*) FROM embed_queue q CROSS JOIN chunks c ON c.uuid = q.item_uuid "
                f"WHERE q.collection = ? AND {chunk_scope}) + "
                "(SELECT count(*) FROM embed_queue q CROSS JOIN entities e ON e.uuid = q.item_uuid "
                f"WHERE q.collection = ? AND {entity_scope}) AS n",
                (CHUNKS_COLLECTION, *cp, ENTITIES_COLLECTION, *ep),
            )
        return int(row["n"]) if row else 0

    def turns_behind(self) -> int:
        """Stored turns of the view with a text still waiting for its vector: not yet found by meaning
        (keyword search finds them already). Driven by the queue, like ``count``."""
        chunk_scope, params = self._view.where("c.scope", by_key=True)
        row = self._db.query_one(TURNS_BEHIND_SQL + f" AND {chunk_scope}", (CHUNKS_COLLECTION, *params))
        return int(row["n"]) if row else 0

    def clear(self, conn: sqlite3.Connection, collection: str | None = None) -> None:
        if collection is None:
            conn.execute("DELETE FROM embed_queue")
        else:
            conn.execute("DELETE FROM embed_queue WHERE collection = ?", (collection,))

    def pending_in(self, collection: str, limit: int, *, max_attempts: int) -> list[QueueItem]:
        """Pending rows of one collection tried fewer than ``max_attempts`` times, oldest first."""
        rows = self._db.query(
            "SELECT * FROM embed_queue WHERE collection = ? AND attempts < ? ORDER BY id LIMIT ?",
            (collection, max_attempts, limit),
        )
        return [
            QueueItem(r["id"], r["collection"], r["item_uuid"], r["op"], r["attempts"], r["enqueued_at"])
            for r in rows
        ]

    def enqueue_everything(self, conn: sqlite3.Connection, at: float) -> None:
        """Queue an upsert of every chunk and every entity (all scopes), in row order, in the caller's
        transaction: a re-index from scratch."""
        for collection, table in ((CHUNKS_COLLECTION, "chunks"), (ENTITIES_COLLECTION, "entities")):
            conn.execute(
                "INSERT INTO embed_queue(collection, item_uuid, op, enqueued_at) "
                f"SELECT ?, uuid, 'upsert', ? FROM {table} ORDER BY id",
                (collection, at),
            )


class ChunkStore:
    """Chunks of one ``ScopeView``: chunks of facts go to its fact scope, every other chunk (episodes,
    indexed texts) to its own scope; reads see its readable scopes only."""

    def __init__(self, db: Database, queue: EmbedQueue, view: ScopeView):
        self._db = db
        self._queue = queue
        self._view = view

    def add(
        self,
        conn: sqlite3.Connection,
        texts: Sequence[str],
        *,
        source_kind: str,
        source_type: str,
        timestamp: float,
        source_uuid: str | None = None,
        session_id: str | None = None,
        message_id: int | None = None,
        category: str | None = None,
    ) -> list[ChunkRow]:
        """Insert the chunks of one source and enqueue their embeddings, in the caller's transaction.

        Raises StorageError for the admin view.
        """
        scope = self._view.write_facts if source_kind == "fact" else self._view.write_own
        at = now()
        out = [
            ChunkRow(
                uuid=new_uuid(),
                source_kind=source_kind,
                source_uuid=source_uuid,
                chunk_index=index,
                text=text,
                content_hash=content_hash(text),
                source_type=source_type,
                session_id=session_id,
                message_id=message_id,
                category=category,
                timestamp=timestamp,
                scope=scope,
            )
            for index, text in enumerate(texts)
        ]
        rows = [
            (c.uuid, source_kind, source_uuid, c.chunk_index, c.text, c.content_hash, source_type, session_id)
            for c in out
        ]
        conn.executemany(
            "INSERT INTO chunks(uuid, source_kind, source_uuid, chunk_index, text, content_hash,"
            " source_type, session_id, message_id, category, timestamp, created_at, scope)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(*r, message_id, category, timestamp, at, scope) for r in rows],
        )
        # New uuids: no pending write of them can exist, so their upserts are plain inserts.
        conn.executemany(
            "INSERT INTO embed_queue(collection, item_uuid, op, enqueued_at) VALUES (?, ?, 'upsert', ?)",
            [(CHUNKS_COLLECTION, c.uuid, at) for c in out],
        )
        return out

    def remove_source(self, conn: sqlite3.Connection, source_kind: str, source_uuid: str) -> int:
        """Delete a source's chunks (in the view) and enqueue deletion of their vectors (caller's
        transaction)."""
        scoped, sp = self._view.where("scope")
        rows = conn.execute(
            f"SELECT uuid FROM chunks WHERE source_kind = ? AND source_uuid = ? AND {scoped}",
            (source_kind, source_uuid, *sp),
        ).fetchall()
        for row in rows:
            self._queue.enqueue(conn, CHUNKS_COLLECTION, row["uuid"], "delete")
        conn.execute(
            f"DELETE FROM chunks WHERE source_kind = ? AND source_uuid = ? AND {scoped}",
            (source_kind, source_uuid, *sp),
        )
        return len(rows)

    def existing(self, uuids: Sequence[str]) -> set[str]:
        """The uuids of chunks that exist in the view (cheaper than ``get_many``: no rows are built)."""
        scoped, sp = self._view.where("scope", by_key=True)
        query = f"SELECT uuid FROM chunks WHERE uuid IN ({{keys}}) AND {scoped}"
        return {row[0] for row in self._db.query_keys(query, uuids, sp)}

    def get_many(self, uuids: Sequence[str]) -> dict[str, ChunkRow]:
        scoped, sp = self._view.where("scope", by_key=True)
        query = f"SELECT * FROM chunks WHERE uuid IN ({{keys}}) AND {scoped}"
        return {row["uuid"]: _row_to_chunk(row) for row in self._db.query_keys(query, uuids, sp)}

    def search(self, query: str, *, limit: int = 10) -> list[tuple[ChunkRow, float]]:
        """BM25-ranked chunks matching free text."""
        match = fts_match(query)
        if match is None:
            return []
        scoped, sp = self._view.where("c.scope")
        rows = self._db.query(
            "SELECT c.*, bm25(chunks_fts) AS rank FROM chunks_fts JOIN chunks c ON c.id = chunks_fts.rowid "
            f"WHERE chunks_fts MATCH ? AND {scoped} ORDER BY rank LIMIT ?",
            (match, *sp, limit),
        )
        return [(_row_to_chunk(r), bm25_to_score(r["rank"])) for r in rows]

    def has_kind(self, source_kind: str) -> bool:
        """Whether the view holds any chunk of ``source_kind`` (one probe of the source index)."""
        scoped, sp = self._view.where("scope")
        row = self._db.query_one(f"SELECT 1 FROM chunks WHERE source_kind = ? AND {scoped} LIMIT 1",
                                 (source_kind, *sp))  # fmt: skip
        return row is not None

    def has_message(self, session_id: str, message_id: int | None, *, source_type: str) -> bool:
        """Whether the view holds a chunk of ``source_type`` indexed from this session's message (one
        probe of the session index), so a message found again is not indexed twice."""
        scoped, sp = self._view.where("scope")
        row = self._db.query_one(
            f"SELECT 1 FROM chunks WHERE session_id = ? AND message_id IS ? AND source_type = ? AND {scoped} "
            "LIMIT 1",
            (session_id, message_id, source_type, *sp),
        )
        return row is not None

    def bm25_of_kind(self, query: str, source_kind: str, *, limit: int) -> dict[str, float]:
        """``search`` restricted to chunks of one source kind, as chunk uuid -> score, best first."""
        scoped, sp = self._view.where("t.scope")
        where = f"t.source_kind = ? AND {scoped}"
        return bm25_uuid_scores(self._db, "chunks_fts", "chunks", query, where, (source_kind, *sp), limit)

    def iter_all(self, batch: int = 512) -> Iterator[list[ChunkRow]]:
        last = 0
        scoped, sp = self._view.where("scope")
        while True:
            rows = self._db.query(
                f"SELECT * FROM chunks WHERE id > ? AND {scoped} ORDER BY id LIMIT ?", (last, *sp, batch)
            )
            if not rows:
                return
            last = rows[-1]["id"]
            yield [_row_to_chunk(r) for r in rows]

    def count(self) -> int:
        scoped, sp = self._view.where("scope")
        row = self._db.query_one(f"SELECT count(*) AS n FROM chunks WHERE {scoped}", sp)
        return int(row["n"]) if row else 0

    def count_embedded(self, model_id: str) -> int:
        """Chunks of the view whose text has a stored vector of ``model_id`` (what a vector search of
        this view can find), counted in SQL: one probe of the (model, hash) index per chunk."""
        scoped, sp = self._view.where("c.scope")
        row = self._db.query_one(
            f"SELECT count(*) AS n FROM chunks c WHERE {scoped} AND EXISTS "
            "(SELECT 1 FROM vectors v WHERE v.model_id = ? AND v.text_hash = c.content_hash)",
            (*sp, model_id),
        )
        return int(row["n"]) if row else 0


__all__ = [
    "CHUNKS_COLLECTION",
    "ENTITIES_COLLECTION",
    "TURNS_BEHIND_SQL",
    "ChunkRow",
    "ChunkStore",
    "EmbedQueue",
    "QueueItem",
]
