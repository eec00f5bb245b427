"""Tier 3's worker side: drain the embed queue into the vector collections, and rebuild them from Tier 2.

``SemanticMemory.drain`` and ``SemanticMemory.reindex`` call these; they reach the embedder and the
collections only through the small ``Vectors`` seam, so nothing here opens anything on its own.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from hermes_memory.errors import EmbeddingError, HermesMemoryError, ValidationError
from hermes_memory.tier2 import Tier2
from hermes_memory.tier2.chunks import CHUNKS_COLLECTION, ENTITIES_COLLECTION, ChunkRow, QueueItem
from hermes_memory.tier3.backend import VectorBackend
from hermes_memory.tier3.chunks import chunk_payload, entity_payload
from hermes_memory.tier3.embedder import Embedder

Progress = Callable[[int, int], None]
# A buffering backend (one with ``flush()``, e.g. memory) makes vectors durable only when flushed, and a
# queue row may leave only once its vector is durable: such backends are flushed once per this many rows.
FLUSH_EVERY = 1024


@dataclass(frozen=True)
class DrainReport:
    upserted: int
    deleted: int
    failed: int
    remaining: int
    # True when another process holds the vector store: the rows stay queued for it.
    deferred: bool = False

    def to_dict(self) -> dict[str, int]:
        out = {
            "upserted": self.upserted,
            "deleted": self.deleted,
            "failed": self.failed,
            "remaining": self.remaining,
        }
        if self.deferred:  # only then: the usual report keeps its shape
            out["deferred"] = 1
        return out


class Vectors(Protocol):
    """What draining needs of ``SemanticMemory``: its lazily opened embedder and collections."""

    @property
    def embedder(self) -> Embedder: ...

    def backend(self, collection: str, *, recreate: bool = False) -> VectorBackend: ...

    def busy_reason(self) -> str | None: ...

    def opened_backends(self) -> list[VectorBackend]: ...


def drain(
    vectors: Vectors,
    tier2: Tier2,
    store: Tier2,
    *,
    batch: int,
    max_items: int | None = None,
    progress: Progress | None = None,
    max_attempts: int = 5,
) -> DrainReport:
    """Embed and write pending queue rows in batches until the queue is empty (or ``max_items``).

    ``tier2`` is the caller's view, ``store`` its store-wide (admin) view. A row leaves the queue only
    after its vector write is durable, so a crash loses nothing and a retry overwrites by id (no
    duplicate vectors). Raises what the embedder or backend raised; only item errors (EmbeddingError,
    ValidationError) count against a row's ``max_attempts`` — an unreachable server or a config
    problem must not retire rows that a later drain can write.
    """
    # Rows of every scope are drained (pending/complete/fail are store-wide); progress counts them all.
    queue = tier2.embed_queue
    pending_all = store.embed_queue.count()
    total = pending_all if max_items is None else min(max_items, pending_all)
    upserted = deleted = done = 0
    deferred = False
    while max_items is None or done < max_items:
        group = _group_size(vectors.opened_backends(), batch)
        size = group if max_items is None else min(group, max_items - done)
        items = queue.pending(size, max_attempts=max_attempts)
        if not items:
            break
        if vectors.busy_reason() is not None:
            deferred = True  # the process holding the store drains these rows
            break
        for start in range(0, len(items), batch):
            part = items[start : start + batch]
            try:
                up, de = _apply(vectors, store, part)
            except (EmbeddingError, ValidationError) as exc:
                queue.fail(part, str(exc))
                raise
            upserted += up
            deleted += de
            if progress is not None:
                progress(min(done + start + len(part), total), total)
        _flush(vectors.opened_backends())
        queue.complete(items)
        done += len(items)
    return DrainReport(upserted, deleted, 0, tier2.embed_queue.count(), deferred)


def requeue_all(vectors: Vectors, store: Tier2) -> None:
    """Empty every collection and queue every Tier 2 chunk and entity to be embedded again.

    Raises what opening the collections raised (VectorStoreBusyError, StorageError, BackendError,
    ConfigError).
    """
    for collection in (CHUNKS_COLLECTION, ENTITIES_COLLECTION):
        vectors.backend(collection, recreate=True)
    at = time.time()
    with store.db.atomic() as conn:
        store.embed_queue.clear(conn)
        for collection, table in ((CHUNKS_COLLECTION, "chunks"), (ENTITIES_COLLECTION, "entities")):
            conn.execute(
                "INSERT INTO embed_queue(collection, item_uuid, op, enqueued_at) "
                f"SELECT ?, uuid, 'upsert', ? FROM {table} ORDER BY id",
                (collection, at),
            )


def vector_payload(chunk: ChunkRow) -> dict[str, Any]:
    """The vector payload of a chunk (what filters see)."""
    return dict(chunk_payload(
        chunk_id=chunk.uuid, text=chunk.text, source_type=chunk.source_type,
        timestamp=chunk.timestamp, session_id=chunk.session_id, message_id=chunk.message_id,
        fact_id=chunk.source_uuid if chunk.source_kind == "fact" else None,
        category=chunk.category, scope=chunk.scope, content_hash=chunk.content_hash,
        extra={"source_kind": chunk.source_kind, "source_uuid": chunk.source_uuid or ""},
    ))  # fmt: skip


def _group_size(opened: Sequence[VectorBackend], batch: int) -> int:
    """Rows to take per queue round: one batch for write-through engines, more for buffering ones.

    Looks only at backends already open, so draining an empty queue opens nothing.
    """
    buffering = any(callable(getattr(b, "flush", None)) for b in opened)
    return max(batch, FLUSH_EVERY) if buffering else batch


def _flush(opened: Sequence[VectorBackend]) -> None:
    for backend in opened:
        flush = getattr(backend, "flush", None)
        if callable(flush):
            flush()


def _apply(vectors: Vectors, store: Tier2, items: Sequence[QueueItem]) -> tuple[int, int]:
    upserted = deleted = 0
    for collection in (CHUNKS_COLLECTION, ENTITIES_COLLECTION):
        mine = [i for i in items if i.collection == collection]
        if not mine:
            continue
        to_delete = [i.item_uuid for i in mine if i.op == "delete"]
        to_upsert = [i.item_uuid for i in mine if i.op == "upsert"]
        ids, texts, payloads, gone = _load(store, collection, to_upsert)
        backend = vectors.backend(collection)
        if ids:
            backend.upsert(ids, vectors.embedder.embed_document(texts), payloads)
            upserted += len(ids)
        stale = [*to_delete, *gone]
        if stale:
            prefix = "chunk:" if collection == CHUNKS_COLLECTION else "entity:"
            deleted += backend.delete([prefix + u for u in stale])
    return upserted, deleted


def _load(
    store: Tier2, collection: str, uuids: Sequence[str]
) -> tuple[list[str], list[str], list[dict[str, Any]], list[str]]:
    """Vector ids, texts and payloads for queued items; ``gone`` lists items deleted meanwhile."""
    ids: list[str] = []
    texts: list[str] = []
    payloads: list[dict[str, Any]] = []
    gone: list[str] = []
    if collection == CHUNKS_COLLECTION:
        rows = store.chunks.get_many(uuids)
        for uuid in uuids:
            chunk = rows.get(uuid)
            if chunk is None:
                gone.append(uuid)
                continue
            ids.append(chunk.vector_id)
            texts.append(chunk.text)
            payloads.append(vector_payload(chunk))
        return ids, texts, payloads, gone
    scopes = store.entities.scopes_of(uuids)
    for uuid in uuids:
        try:
            entity = store.entities.get(uuid)
        except HermesMemoryError:
            gone.append(uuid)
            continue
        ids.append(f"entity:{entity.uuid}")
        aliases = f" (also: {', '.join(entity.aliases)})" if entity.aliases else ""
        desc = f": {entity.description}" if entity.description else ""
        texts.append(f"{entity.name}{aliases}, {entity.entity_type}{desc}")
        payloads.append(dict(entity_payload(
            entity_id=entity.uuid, entity_name=entity.name, entity_type=entity.entity_type,
            description=entity.description, scope=scopes.get(entity.uuid),
        )))  # fmt: skip
    return ids, texts, payloads, gone
