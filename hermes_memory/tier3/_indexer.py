"""Tier 3's worker side: drain the embed queue into Tier 2 vectors and the collections, and rebuild the
collections from Tier 2 (reusing the stored vectors).

``SemanticMemory.drain`` and ``SemanticMemory.reindex`` call these; they reach the embedder and the
collections only through the small ``Vectors`` seam, so nothing here opens anything on its own.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from hermes_memory.errors import EmbeddingError, HermesMemoryError, ValidationError
from hermes_memory.records import Entity
from hermes_memory.tier2 import Tier2
from hermes_memory.tier2._util import content_hash
from hermes_memory.tier2.chunks import CHUNKS_COLLECTION, ENTITIES_COLLECTION, ChunkRow, QueueItem
from hermes_memory.tier2.vectors import FEED_PAGE, FloatArray, Marks, VectorStore
from hermes_memory.tier3.backend import VectorBackend
from hermes_memory.tier3.chunks import chunk_payload, entity_payload
from hermes_memory.tier3.embedder import Embedder

Progress = Callable[[int, int], None]
# A buffering backend (``buffered``, e.g. memory) makes vectors durable only when flushed, and a
# queue row may leave only once its vector is durable: such backends are flushed once per this many rows.
FLUSH_EVERY = 1024


@dataclass(frozen=True)
class DrainReport:
    upserted: int
    deleted: int
    failed: int
    # Queue rows still pending in the caller's view (-1: not counted, ``count_remaining=False``).
    remaining: int
    # True when another process holds the vector store: its entity rows stay queued for it (chunk
    # vectors go to Tier 2 from any process).
    deferred: bool = False
    # Texts embedded (the rest reused a stored vector of the same model and text).
    embedded: int = 0
    # Queue rows this drain took (and completed): fewer than it asked for means the queue ran dry.
    taken: int = 0
    # True when another process held the store's embedding lease (``tier2.leases``): it drains the queue.
    elsewhere: bool = False

    def to_dict(self) -> dict[str, int]:
        out = {
            "upserted": self.upserted,
            "deleted": self.deleted,
            "failed": self.failed,
            "remaining": self.remaining,
            "embedded": self.embedded,
        }
        if self.deferred:  # only then: the usual report keeps its shape
            out["deferred"] = 1
        if self.elsewhere:
            out["elsewhere"] = 1
        return out


class Vectors(Protocol):
    """What draining needs of ``SemanticMemory``: its lazily opened embedder and collections, the Tier 2
    vectors, and the name its engine's sync marks are kept under."""

    @property
    def embedder(self) -> Embedder: ...

    @property
    def model_id(self) -> str: ...

    @property
    def engine_key(self) -> str: ...

    @property
    def vector_store(self) -> VectorStore: ...

    def backend(self, collection: str, *, recreate: bool = False) -> VectorBackend: ...

    def busy_reason(self) -> str | None: ...

    def uses_engine(self) -> bool: ...

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
    count_remaining: bool = True,
) -> DrainReport:
    """Embed pending queue rows in batches until the queue is empty (or ``max_items``), then bring the
    engine up to date from Tier 2. A process without the engine embeds the chunk rows into Tier 2 and
    leaves the entity rows to the engine's holder (``deferred``). Below ``engine_min_vectors`` (no
    process uses the engine) every row completes with its Tier 2 vector only: chunks reach the engine
    through the feed and entities by a refill (``sync_entities``) when the engine is first opened.

    ``tier2`` is the caller's view, ``store`` its store-wide (admin) view. Only texts without a stored
    vector of the embedder's ``model_id`` are embedded; the new vectors are written in the transaction
    that completes their queue rows, and the chunk collection is then synced from the Tier 2 feed
    (``sync_chunks``), so a crash between the two is repaired by the next sync and nothing is lost or
    duplicated. Entity vectors go to their collection before the rows complete (a crash re-runs them;
    writes by id are idempotent). Raises what the embedder or backend raised; only item errors
    (EmbeddingError, ValidationError) count against a row's ``max_attempts`` — an unreachable server
    or a config problem must not retire rows that a later drain can write. ``count_remaining=False``
    skips counting what is left (a count in a scoped view visits every queued row: a worker draining a
    big backlog batch by batch must not pay it per batch; it reads ``taken`` instead).
    """
    # Rows of every scope are drained (pending/complete/fail are store-wide); progress counts them all.
    queue = tier2.embed_queue
    total = 0
    if progress is not None:
        pending_all = store.embed_queue.count()
        total = pending_all if max_items is None else min(max_items, pending_all)
    upserted = deleted = embedded = done = 0
    deferred = False
    while max_items is None or done < max_items:
        group = _group_size(vectors.opened_backends(), batch)
        size = group if max_items is None else min(group, max_items - done)
        items = queue.pending(size, max_attempts=max_attempts)
        if not items:
            break
        engine = vectors.uses_engine()
        owner = engine and vectors.busy_reason() is None
        if engine and not owner:
            # Another process holds the engine: embed the chunks into Tier 2 anyway (every process
            # searches them, and the holder's engine catches up from the feed); entity vectors are
            # written to their collection directly, so their rows stay queued for the holder.
            items = _pending_chunks(store, size, max_attempts)
            if not items:
                deferred = True
                break
        for start in range(0, len(items), batch):
            part = items[start : start + batch]
            try:
                work = _prepare(vectors, store, part)
            except (EmbeddingError, ValidationError) as exc:
                queue.fail(part, str(exc))
                raise
            if owner:
                _write_entities(vectors, work)
            unsent = not engine and any(i.collection == ENTITIES_COLLECTION for i in part)
            with store.db.atomic() as conn:
                vectors.vector_store.put(conn, vectors.model_id, work.new)
                if unsent:  # no engine got these: the next one to open refills its entities
                    vectors.vector_store.bump_entity_generation(conn)
                queue.complete(part)
            upserted += work.upserted
            deleted += work.deleted
            embedded += len(work.new)
            if progress is not None:
                progress(min(done + start + len(part), total), total)
        done += len(items)
        if owner:
            sync_chunks(vectors, store)  # the engine follows group by group, not only at the end
    if not deferred and not done and _chunks_open(vectors):
        sync_chunks(vectors, store)  # nothing queued here; other processes may have written or deleted
    if _chunks_open(vectors):
        sync_entities(vectors, store)  # a process without the engine may have completed entity rows
    remaining = tier2.embed_queue.count() if count_remaining else -1
    return DrainReport(upserted, deleted, 0, remaining, deferred, embedded, done)


def sync_chunks(
    vectors: Vectors, store: Tier2, *, verify: bool = False, persist: bool = True, since: Marks | None = None
) -> Marks:
    """Bring the chunk collection up to date with the Tier 2 vectors from its sync marks (a crash after
    a Tier 2 commit and before the engine write, a backend switch, a restore: all are this catch-up).

    Upserts are by id and deletes idempotent, so re-applying a page is harmless; the marks move only
    after the page is durable in the engine. ``verify`` (on opening the engine) rebuilds an engine that
    is empty while its marks say otherwise. Without ``persist`` (the search path, which writes nothing
    to Tier 2) the marks are not stored: a later sync repeats the pages, harmlessly; ``since`` starts
    from marks this process reached before instead of the stored ones. Returns the marks reached.
    Raises what the backend raised.
    """
    import numpy as np

    backend = vectors.backend(CHUNKS_COLLECTION)
    feed = vectors.vector_store
    model, key, dim = vectors.model_id, vectors.engine_key, backend.dim
    marks = since if since is not None else feed.sync_marks(key, CHUNKS_COLLECTION, model)
    if verify and marks != Marks() and backend.count() == 0:
        marks = Marks()  # the engine's files were removed behind our back: rebuild it
    while True:
        page = feed.changes(model, dim, marks)
        if page.removed:
            backend.delete(["chunk:" + u for u in page.removed])
        if page.rows:
            backend.upsert(
                [c.vector_id for c, _ in page.rows],
                np.stack([v for _, v in page.rows]),
                [vector_payload(c) for c, _ in page.rows],
            )
        if page.marks != marks and persist:
            _flush([backend])
            feed.set_sync_marks(key, CHUNKS_COLLECTION, model, page.marks)
        marks = page.marks
        if not page.more:
            return marks


def sync_entities(vectors: Vectors, store: Tier2) -> None:
    """Refill the entity collection from the Tier 2 vectors when entity rows were completed without an
    engine since it was last filled (their vectors reached Tier 2 only). Entities without a stored
    vector still have their queue rows (a row completes only with its vector), so a later drain
    writes them. Raises what the backend raised; StorageError.
    """
    import numpy as np

    feed = vectors.vector_store
    model, key = vectors.model_id, vectors.engine_key
    generation = feed.entity_generation()
    if feed.entity_mark(key, model) == generation:
        return
    backend = vectors.backend(ENTITIES_COLLECTION, recreate=True)
    entities = store.entities.all()
    for start in range(0, len(entities), FEED_PAGE):
        part = entities[start : start + FEED_PAGE]
        digests = [content_hash(entity_text(e)) for e in part]
        have = feed.get_many(model, digests, backend.dim)
        scopes = store.entities.scopes_of([e.uuid for e in part])
        ready = [(e, have[d]) for e, d in zip(part, digests, strict=True) if d in have]
        if ready:
            backend.upsert(
                [f"entity:{e.uuid}" for e, _ in ready],
                np.stack([v for _, v in ready]),
                [dict(entity_payload(
                    entity_id=e.uuid, entity_name=e.name, entity_type=e.entity_type,
                    description=e.description, scope=scopes.get(e.uuid),
                )) for e, _ in ready],
            )  # fmt: skip
    _flush([backend])
    feed.set_entity_mark(key, model, generation)


def requeue_all(vectors: Vectors, store: Tier2, *, engine: bool = True) -> None:
    """Empty every collection and queue every chunk and entity again: ``drain`` then embeds only the
    texts without a stored vector of the current model and fills the collections from Tier 2 (the
    queue rows drive its progress and report; the stored vectors make them cheap). Without ``engine``
    (below ``engine_min_vectors``) the engine is not opened: its sync marks are forgotten, so it
    starts empty and refills from Tier 2 when it is first opened.

    Raises what opening the collections raised (VectorStoreBusyError, StorageError, BackendError,
    ConfigError).
    """
    for collection in (CHUNKS_COLLECTION, ENTITIES_COLLECTION) if engine else ():
        vectors.backend(collection, recreate=True)
    at = time.time()
    with store.db.atomic() as conn:
        vectors.vector_store.reset_sync(conn, vectors.engine_key)
        store.embed_queue.clear(conn)
        store.embed_queue.enqueue_everything(conn, at)


def vector_payload(chunk: ChunkRow) -> dict[str, Any]:
    """The vector payload of a chunk (what filters see)."""
    return dict(chunk_payload(
        chunk_id=chunk.uuid, text=chunk.text, source_type=chunk.source_type,
        timestamp=chunk.timestamp, session_id=chunk.session_id, message_id=chunk.message_id,
        fact_id=chunk.source_uuid if chunk.source_kind == "fact" else None,
        category=chunk.category, scope=chunk.scope, content_hash=chunk.content_hash,
        extra={"source_kind": chunk.source_kind, "source_uuid": chunk.source_uuid or ""},
    ))  # fmt: skip


def entity_text(entity: Entity) -> str:
    """The text an entity is embedded from."""
    aliases = f" (also: {', '.join(entity.aliases)})" if entity.aliases else ""
    desc = f": {entity.description}" if entity.description else ""
    return f"{entity.name}{aliases}, {entity.entity_type}{desc}"


def _group_size(opened: Sequence[VectorBackend], batch: int) -> int:
    """Rows to take per queue round: one batch for write-through engines, more for buffering ones.

    Looks only at backends already open, so draining an empty queue opens nothing.
    """
    buffering = any(b.buffered for b in opened)
    return max(batch, FLUSH_EVERY) if buffering else batch


def _pending_chunks(store: Tier2, limit: int, max_attempts: int) -> list[QueueItem]:
    """Pending chunk rows only (what a process without the engine can complete), oldest first."""
    return store.embed_queue.pending_in(CHUNKS_COLLECTION, limit, max_attempts=max_attempts)


def _chunks_open(vectors: Vectors) -> bool:
    return any(b.collection == CHUNKS_COLLECTION for b in vectors.opened_backends())


def _flush(opened: Sequence[VectorBackend]) -> None:
    for backend in opened:
        backend.flush()


@dataclass
class _Work:
    """One batch of queue rows made ready: the vectors to store (by text hash), the entity writes."""

    new: dict[str, FloatArray]
    entity_ids: list[str]
    entity_vectors: list[FloatArray]
    entity_payloads: list[dict[str, Any]]
    entity_deletes: list[str]
    upserted: int = 0
    deleted: int = 0


def _prepare(vectors: Vectors, store: Tier2, items: Sequence[QueueItem]) -> _Work:
    """Load the rows' texts, embed the ones with no stored vector (each distinct text once)."""
    model = vectors.model_id
    chunk_ups = [i.item_uuid for i in items if i.collection == CHUNKS_COLLECTION and i.op == "upsert"]
    entity_ups = [i.item_uuid for i in items if i.collection == ENTITIES_COLLECTION and i.op == "upsert"]
    work = _Work({}, [], [], [], [i.item_uuid for i in items if i.collection == ENTITIES_COLLECTION
                                   and i.op == "delete"])  # fmt: skip
    # chunk deletes need nothing here: the chunk row's tombstone reaches every engine through the feed
    work.deleted = sum(1 for i in items if i.op == "delete")
    texts: dict[str, str] = {}  # hash -> one text with that hash
    chunks = store.chunks.get_many(chunk_ups)
    for chunk in chunks.values():
        texts.setdefault(chunk.content_hash, chunk.text)
    entities: list[tuple[Entity, str]] = []
    for uuid in entity_ups:
        try:
            entity = store.entities.get(uuid)
        except HermesMemoryError:
            work.entity_deletes.append(uuid)  # deleted meanwhile
            continue
        text = entity_text(entity)
        entities.append((entity, content_hash(text)))
        texts.setdefault(content_hash(text), text)
    work.upserted = len(chunks) + len(entities)
    missing = vectors.vector_store.missing(model, list(texts))
    todo = [h for h in texts if h in missing]
    if todo:
        fresh = vectors.embedder.embed_document([texts[h] for h in todo])
        work.new = dict(zip(todo, fresh, strict=True))
    if entities:
        dim = vectors.embedder.dim
        have = {**vectors.vector_store.get_many(model, [h for _, h in entities], dim), **work.new}
        scopes = store.entities.scopes_of([e.uuid for e, _ in entities])
        for entity, digest in entities:
            work.entity_ids.append(f"entity:{entity.uuid}")
            work.entity_vectors.append(have[digest])
            work.entity_payloads.append(dict(entity_payload(
                entity_id=entity.uuid, entity_name=entity.name, entity_type=entity.entity_type,
                description=entity.description, scope=scopes.get(entity.uuid),
            )))  # fmt: skip
    return work


def _write_entities(vectors: Vectors, work: _Work) -> None:
    """Entity vectors go to their collection before their queue rows complete (see ``drain``)."""
    import numpy as np

    if not work.entity_ids and not work.entity_deletes:
        return
    backend = vectors.backend(ENTITIES_COLLECTION)
    if work.entity_ids:
        backend.upsert(work.entity_ids, np.stack(work.entity_vectors), work.entity_payloads)
    if work.entity_deletes:
        backend.delete([f"entity:{u}" for u in work.entity_deletes])
    _flush([backend])
