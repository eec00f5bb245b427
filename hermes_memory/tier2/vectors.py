"""Durable vectors: every embedding is Tier 2 data, keyed by (embedder ``model_id``, text hash).

A chunk finds its vector through its ``content_hash`` (an entity through the hash of its embed text), so
a text is embedded once per model, and reindex, backend switch, restore and import are joins. Vectors
are written in the transaction that completes their embed-queue rows (``put`` takes the caller's
connection).

The ANN engines and the exact index of other processes follow the store through ``changes``: a change
feed of chunks that gained a vector and chunks that were deleted, read from high-water marks
(``Marks``) of three append-only id sequences, so a reader that crashed or fell behind catches up from
its marks and never loses or duplicates a vector. An engine's marks are stored in ``vector_sync``.
"""

from __future__ import annotations

import sqlite3
import time
import uuid
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeAlias

from hermes_memory.errors import StorageError
from hermes_memory.tier2.chunks import ChunkRow, _row_to_chunk
from hermes_memory.tier2.db import Database

if TYPE_CHECKING:  # numpy is imported where used: a read that touches no vector never loads it
    import numpy as np
    import numpy.typing as npt


FloatArray: TypeAlias = "npt.NDArray[np.float32]"
_ENTITIES = "entity_embeddings"
# The row of ``vector_sync`` counting entity completions without an engine (no engine is named '').
_ENTITY_GENERATION = ("", _ENTITIES)
# The row of ``vector_sync`` holding the store's identity (in its model_id column; see ``identity``).
_IDENTITY = ("", "store_identity")
# Rows per feed page: bounds the memory of a full engine build (page * dim * 4 bytes of vectors).
FEED_PAGE = 2048


@dataclass(frozen=True, slots=True)
class Marks:
    """How far a reader of the feed has come: the last chunk id, vector id and tombstone id it applied."""

    chunk: int = 0
    vector: int = 0
    tombstone: int = 0


@dataclass(frozen=True, slots=True)
class Changes:
    """One page of the feed: chunks whose vector is now stored (with it), uuids of deleted chunks, the
    marks to resume from, and whether more pages follow."""

    rows: list[tuple[ChunkRow, FloatArray]]
    removed: list[str]
    marks: Marks
    more: bool


def to_blob(vector: FloatArray) -> bytes:
    import numpy as np

    return np.ascontiguousarray(vector, dtype="<f4").tobytes()


def from_blob(blob: bytes, dim: int) -> FloatArray:
    import numpy as np

    out: FloatArray = np.frombuffer(blob, dtype="<f4").astype(np.float32, copy=False)
    if out.shape != (dim,):
        raise StorageError(f"a stored vector has {out.shape[0]} values, expected {dim}")
    return out


class VectorStore:
    """The ``vectors`` table and its change feed. Store-wide: scopes are the chunks' business (a vector
    is the embedding of a text, whoever wrote it)."""

    def __init__(self, db: Database):
        self._db = db

    # -- the vectors ------------------------------------------------------------------------------
    def get_many(self, model_id: str, hashes: Sequence[str], dim: int) -> dict[str, FloatArray]:
        """Stored vectors of ``model_id`` by text hash (hashes without one are absent)."""
        rows = self._db.query_keys(
            "SELECT text_hash, vector FROM vectors WHERE text_hash IN ({keys}) AND model_id = ?",
            list(dict.fromkeys(hashes)),
            (model_id,),
        )
        return {row[0]: from_blob(row[1], dim) for row in rows}

    def embedded_by_another(self, model_id: str) -> bool:
        """Whether the store's oldest chunk has a stored vector of another model and none of ``model_id``:
        the store was embedded with another encoder (a drain re-embeds oldest first, so this turns false
        as soon as a re-embedding has started). One index probe when it has one of ``model_id``; else one
        pass over the (model, hash) index."""
        row = self._db.query_one(
            "SELECT c.content_hash AS h, EXISTS (SELECT 1 FROM vectors v WHERE v.model_id = ? "
            "AND v.text_hash = c.content_hash) AS ours FROM chunks c ORDER BY c.id LIMIT 1",
            (model_id,),
        )
        if row is None or row["ours"]:
            return False
        other = self._db.query_one(
            "SELECT 1 AS x FROM vectors WHERE text_hash = ? AND model_id != ? LIMIT 1", (row["h"], model_id)
        )
        return other is not None

    def missing(self, model_id: str, hashes: Sequence[str]) -> set[str]:
        """The hashes with no stored vector of ``model_id``."""
        wanted = list(dict.fromkeys(hashes))
        found = self._db.query_keys(
            "SELECT text_hash FROM vectors WHERE text_hash IN ({keys}) AND model_id = ?", wanted, (model_id,)
        )
        have = {row[0] for row in found}
        return {h for h in wanted if h not in have}

    def put(self, conn: sqlite3.Connection, model_id: str, vectors: Mapping[str, FloatArray]) -> int:
        """Store vectors by text hash in the caller's transaction; a hash already stored keeps its
        vector (same model, same text). Returns how many were new."""
        at = time.time()
        cursor = conn.executemany(
            "INSERT OR IGNORE INTO vectors(model_id, text_hash, dim, vector, created_at) "
            "VALUES (?, ?, ?, ?, ?)",
            [(model_id, h, int(v.shape[-1]), to_blob(v), at) for h, v in vectors.items()],
        )
        return max(0, cursor.rowcount)  # over every row of executemany, on both engines

    def count(self, model_id: str) -> int:
        row = self._db.query_one("SELECT count(*) AS n FROM vectors WHERE model_id = ?", (model_id,))
        return int(row["n"]) if row else 0

    def chunk_vectors(self, model_id: str) -> int:
        """Chunks whose text has a stored vector of ``model_id`` (what the exact index or the engine
        searches): one probe of the (model, hash) index per chunk."""
        row = self._db.query_one(
            "SELECT count(*) AS n FROM chunks c WHERE EXISTS "
            "(SELECT 1 FROM vectors v WHERE v.model_id = ? AND v.text_hash = c.content_hash)",
            (model_id,),
        )
        return int(row["n"]) if row else 0

    def prune(self, conn: sqlite3.Connection, keep: Collection[str]) -> int:
        """Delete vectors (of every model) whose text no chunk holds and that are not in ``keep`` (the
        entities' embed-text hashes), in the caller's transaction: forgotten text leaves no vector."""
        found = conn.execute(
            "SELECT v.id, v.text_hash FROM vectors v "
            "WHERE NOT EXISTS (SELECT 1 FROM chunks c WHERE c.content_hash = v.text_hash)"
        ).fetchall()
        gone = [(row[0],) for row in found if row[1] not in keep]
        conn.executemany("DELETE FROM vectors WHERE id = ?", gone)
        return len(gone)

    # -- the change feed --------------------------------------------------------------------------
    def data_version(self) -> int:
        """``Database.data_version`` of the store: it stays the same while nothing is committed, and so do
        the heads."""
        return self._db.data_version()

    def heads(self) -> Marks:
        """The newest ids of chunks, vectors and tombstones (three index seeks): a reader whose marks
        equal these has nothing to catch up."""
        row = self._db.query_one(
            "SELECT (SELECT max(id) FROM chunks), (SELECT max(id) FROM vectors), "
            "(SELECT max(id) FROM chunk_tombstones)"
        )
        if row is None:
            return Marks()
        return Marks(int(row[0] or 0), int(row[1] or 0), int(row[2] or 0))

    def changes(self, model_id: str, dim: int, since: Marks, *, page: int = FEED_PAGE) -> Changes:
        """The next page of the feed after ``since``.

        Deleted chunks first (all of them: a tombstone is a few bytes). Then chunks that existed at
        ``since`` and whose vector arrived later (new vector ids joined to old chunks), then chunks newer
        than ``since`` that have a vector now. Ids only grow and a vector is written after its chunk, so
        a chunk without a vector now gets one with an id above ``heads().vector``: the next call finds
        it. A chunk may come twice (upserts by id are idempotent); none is missed.
        """
        head = self.heads()
        removed: list[str] = []
        tomb = since.tombstone
        if head.tombstone > tomb:
            found = self._db.query(
                "SELECT id, chunk_uuid FROM chunk_tombstones WHERE id > ? AND id <= ? ORDER BY id",
                (tomb, head.tombstone),
            )
            removed = [r["chunk_uuid"] for r in found]
            tomb = head.tombstone
        if head.vector > since.vector and since.chunk == 0:
            since = Marks(0, head.vector, since.tombstone)  # no old chunk to join: (a) finds them all
        if head.vector > since.vector:
            ids = self._db.query(
                # ``+model_id``: walk the id range (the model index would visit every vector of the model)
                "SELECT id FROM vectors WHERE +model_id = ? AND id > ? AND id <= ? ORDER BY id LIMIT ?",
                (model_id, since.vector, head.vector, page),
            )
            full = len(ids) == page
            upto = int(ids[-1]["id"]) if full else head.vector
            rows = self._db.query(
                # CROSS JOIN keeps this loop order: new vectors by id range, their chunks by hash
                "SELECT c.*, v.vector AS _vector FROM vectors v "
                "CROSS JOIN chunks c ON c.content_hash = v.text_hash "
                "WHERE +v.model_id = ? AND v.id > ? AND v.id <= ? AND c.id <= ? ORDER BY c.id",
                (model_id, since.vector, upto, since.chunk),
            )
            marks = Marks(since.chunk, upto, tomb)
            return Changes(self._rows(rows, dim), removed, marks, full or head.chunk > since.chunk)
        if head.chunk > since.chunk:
            rows = self._db.query(
                # new chunks by id range, each one's vector by (model, hash)
                "SELECT c.*, v.vector AS _vector FROM chunks c "
                "CROSS JOIN vectors v ON v.model_id = ? AND v.text_hash = c.content_hash "
                "WHERE c.id > ? AND c.id <= ? ORDER BY c.id LIMIT ?",
                (model_id, since.chunk, head.chunk, page),
            )
            full = len(rows) == page
            upto = int(rows[-1]["id"]) if full else head.chunk
            return Changes(self._rows(rows, dim), removed, Marks(upto, since.vector, tomb), full)
        return Changes([], removed, Marks(since.chunk, since.vector, tomb), False)

    @staticmethod
    def _rows(rows: Sequence[sqlite3.Row], dim: int) -> list[tuple[ChunkRow, FloatArray]]:
        return [(_row_to_chunk(r), from_blob(r["_vector"], dim)) for r in rows]

    # -- the store's identity and fingerprint (for caches of the feed kept outside it) -------------
    def identity(self) -> str | None:
        """The random id this store was given when a cache of its vectors was first written (None before
        that). A restore, or a store replaced by another file, has another one (or none): a cache of the
        old store's vectors never matches it."""
        row = self._db.query_one(
            "SELECT model_id FROM vector_sync WHERE engine = ? AND collection = ?", _IDENTITY
        )
        return str(row[0]) if row is not None else None

    def ensure_identity(self) -> str:
        """The store's identity, created (a random UUID) if it has none yet."""
        with self._db.atomic() as conn:
            conn.execute(
                "INSERT OR IGNORE INTO vector_sync(engine, collection, model_id) VALUES (?, ?, ?)",
                (*_IDENTITY, str(uuid.uuid4())),
            )
            row = conn.execute(
                "SELECT model_id FROM vector_sync WHERE engine = ? AND collection = ?", _IDENTITY
            ).fetchone()
        return str(row[0])

    def fingerprint(self, marks: Marks) -> str:
        """What the store held at ``marks``: the hash of the newest vector and the uuid of the newest
        tombstone at or below them (two index seeks; both rows outlive the chunks, which a session's
        ingest replaces). A cache written at ``marks`` whose fingerprint differs was written from another
        history of the store (an older copy of the file put back and grown since)."""
        row = self._db.query_one(
            "SELECT (SELECT text_hash FROM vectors WHERE id <= ? ORDER BY id DESC LIMIT 1), "
            "(SELECT chunk_uuid FROM chunk_tombstones WHERE id <= ? ORDER BY id DESC LIMIT 1)",
            (marks.vector, marks.tombstone),
        )
        values = (None, None) if row is None else (row[0], row[1])
        return "|".join("" if v is None else str(v) for v in values)

    # -- engine high-water marks ------------------------------------------------------------------
    def sync_marks(self, engine: str, collection: str, model_id: str) -> Marks:
        """How far ``engine``'s collection has caught up with the feed of ``model_id`` (zero marks when
        it never synced or last synced another model)."""
        row = self._db.query_one(
            "SELECT model_id, chunk_mark, vector_mark, tombstone_mark FROM vector_sync "
            "WHERE engine = ? AND collection = ?",
            (engine, collection),
        )
        if row is None or row["model_id"] != model_id:
            return Marks()
        return Marks(int(row["chunk_mark"]), int(row["vector_mark"]), int(row["tombstone_mark"]))

    def set_sync_marks(self, engine: str, collection: str, model_id: str, marks: Marks) -> None:
        """Record that ``engine``'s collection holds everything of the feed up to ``marks`` (call only
        once its writes are durable)."""
        with self._db.atomic() as conn:
            conn.execute(
                "INSERT INTO vector_sync(engine, collection, model_id, chunk_mark, vector_mark, "
                "tombstone_mark) "
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(engine, collection) DO UPDATE SET "
                "model_id = excluded.model_id, chunk_mark = excluded.chunk_mark, "
                "vector_mark = excluded.vector_mark, tombstone_mark = excluded.tombstone_mark",
                (engine, collection, model_id, marks.chunk, marks.vector, marks.tombstone),
            )

    # -- entity collections: refilled from Tier 2 after entity rows completed without an engine ------
    def entity_generation(self) -> int:
        """How many times entity rows were completed into Tier 2 only (no engine open): an engine
        whose entity mark is below this refills its entity collection from Tier 2."""
        row = self._db.query_one(
            "SELECT chunk_mark FROM vector_sync WHERE engine = ? AND collection = ?", _ENTITY_GENERATION
        )
        return int(row[0]) if row else 0

    def bump_entity_generation(self, conn: sqlite3.Connection) -> None:
        """Record, in the caller's transaction (the one completing the entity rows), that entity
        vectors were stored without reaching any engine."""
        conn.execute(
            "INSERT INTO vector_sync(engine, collection, model_id, chunk_mark) VALUES (?, ?, '', 1) "
            "ON CONFLICT(engine, collection) DO UPDATE SET chunk_mark = vector_sync.chunk_mark + 1",
            _ENTITY_GENERATION,
        )

    def entity_mark(self, engine: str, model_id: str) -> int | None:
        """The entity generation ``engine``'s entity collection was last filled at (None: never, or
        with another model's vectors)."""
        row = self._db.query_one(
            "SELECT model_id, chunk_mark FROM vector_sync WHERE engine = ? AND collection = ?",
            (engine, _ENTITIES),
        )
        if row is None or row["model_id"] != model_id:
            return None
        return int(row["chunk_mark"])

    def set_entity_mark(self, engine: str, model_id: str, generation: int) -> None:
        """Record that ``engine``'s entity collection holds every entity vector of ``generation``."""
        self.set_sync_marks(engine, _ENTITIES, model_id, Marks(chunk=generation))

    def reset_sync(self, conn: sqlite3.Connection, engine: str | None = None) -> None:
        """Forget how far an engine (every engine for None) has synced: it rebuilds from the feed."""
        if engine is None:
            conn.execute("DELETE FROM vector_sync")
        else:
            conn.execute("DELETE FROM vector_sync WHERE engine = ?", (engine,))


__all__ = ["FEED_PAGE", "Changes", "Marks", "VectorStore", "from_blob", "to_blob"]
