"""Chunks (every text Tier 3 embeds) and the durable embed queue. Tier 2 is Tier 3's source of truth:
a vector exists because a chunk row exists, and a queue row exists until the vector write committed."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from hermes_memory.tier2._util import content_hash, new_uuid, now
from hermes_memory.tier2.db import Database
from hermes_memory.tier2.search import bm25_to_score, fts_match

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


class EmbedQueue:
    """Pending vector writes. A row is removed only after its vector write succeeded."""

    def __init__(self, db: Database):
        self._db = db

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

    def count(self) -> int:
        row = self._db.query_one("SELECT count(*) AS n FROM embed_queue")
        return int(row["n"]) if row else 0

    def clear(self, conn: sqlite3.Connection, collection: str | None = None) -> None:
        if collection is None:
            conn.execute("DELETE FROM embed_queue")
        else:
            conn.execute("DELETE FROM embed_queue WHERE collection = ?", (collection,))


class ChunkStore:
    def __init__(self, db: Database, queue: EmbedQueue):
        self._db = db
        self._queue = queue

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
        scope: str = "default",
    ) -> list[ChunkRow]:
        """Insert the chunks of one source and enqueue their embeddings, in the caller's transaction."""
        out: list[ChunkRow] = []
        at = now()
        for index, text in enumerate(texts):
            uuid = new_uuid()
            conn.execute(
                "INSERT INTO chunks(uuid, source_kind, source_uuid, chunk_index, text, content_hash,"
                " source_type, session_id, message_id, category, timestamp, created_at, scope)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    uuid, source_kind, source_uuid, index, text, content_hash(text), source_type, session_id,
                    message_id, category, timestamp, at, scope,
                ),
            )  # fmt: skip
            self._queue.enqueue(conn, CHUNKS_COLLECTION, uuid, "upsert")
            out.append(
                ChunkRow(
                    uuid, source_kind, source_uuid, index, text, content_hash(text), source_type, session_id,
                    message_id, category, timestamp, scope,
                )
            )  # fmt: skip
        return out

    def remove_source(self, conn: sqlite3.Connection, source_kind: str, source_uuid: str) -> int:
        """Delete a source's chunks and enqueue deletion of their vectors (caller's transaction)."""
        rows = conn.execute(
            "SELECT uuid FROM chunks WHERE source_kind = ? AND source_uuid = ?", (source_kind, source_uuid)
        ).fetchall()
        for row in rows:
            self._queue.enqueue(conn, CHUNKS_COLLECTION, row["uuid"], "delete")
        conn.execute(
            "DELETE FROM chunks WHERE source_kind = ? AND source_uuid = ?", (source_kind, source_uuid)
        )
        return len(rows)

    def get_many(self, uuids: Sequence[str]) -> dict[str, ChunkRow]:
        found: dict[str, ChunkRow] = {}
        for start in range(0, len(uuids), 500):
            part = list(uuids[start : start + 500])
            marks = ",".join("?" * len(part))
            for row in self._db.query(f"SELECT * FROM chunks WHERE uuid IN ({marks})", part):
                found[row["uuid"]] = _row_to_chunk(row)
        return found

    def search(self, query: str, *, limit: int = 10, scope: str = "default") -> list[tuple[ChunkRow, float]]:
        """BM25-ranked chunks matching free text."""
        match = fts_match(query)
        if match is None:
            return []
        rows = self._db.query(
            "SELECT c.*, bm25(chunks_fts) AS rank FROM chunks_fts JOIN chunks c ON c.id = chunks_fts.rowid "
            "WHERE chunks_fts MATCH ? AND c.scope = ? ORDER BY rank LIMIT ?",
            (match, scope, limit),
        )
        return [(_row_to_chunk(r), bm25_to_score(r["rank"])) for r in rows]

    def iter_all(self, batch: int = 512) -> Iterator[list[ChunkRow]]:
        last = 0
        while True:
            rows = self._db.query("SELECT * FROM chunks WHERE id > ? ORDER BY id LIMIT ?", (last, batch))
            if not rows:
                return
            last = rows[-1]["id"]
            yield [_row_to_chunk(r) for r in rows]

    def count(self) -> int:
        row = self._db.query_one("SELECT count(*) AS n FROM chunks")
        return int(row["n"]) if row else 0
