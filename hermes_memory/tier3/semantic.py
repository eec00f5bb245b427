"""Tier 3 as one unit: the configured embedder and vector collections (opened lazily), the indexer that
drains the embed queue into them (in ``_indexer``), and semantic / hybrid search mapped back to Tier 2
chunks."""

from __future__ import annotations

import copy
import functools
import logging
import os
import threading
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from hermes_memory.config import Tier3Config
from hermes_memory.errors import ConfigError, StorageError, VectorStoreBusyError
from hermes_memory.records import Entity, Fact, Hit
from hermes_memory.tier2 import Tier2
from hermes_memory.tier2._util import content_hash
from hermes_memory.tier2.chunks import CHUNKS_COLLECTION, ENTITIES_COLLECTION, ChunkRow
from hermes_memory.tier2.vectors import Marks, VectorStore
from hermes_memory.tier3 import _indexer, _snapshot

# Explicit re-exports: callers import the worker side's report and progress types from this module.
from hermes_memory.tier3._indexer import DrainReport as DrainReport
from hermes_memory.tier3._indexer import Progress as Progress
from hermes_memory.tier3.backend import (
    VectorBackend,
    VectorHit,
    backend_info,
    check_limit,
    make_backend,
    matches,
    parse_filters,
    resolve_backend,
    store_owner,
)
from hermes_memory.tier3.chunks import chunk_text
from hermes_memory.tier3.embedder import Embedder, configured_options, make_embedder

if TYPE_CHECKING:  # numpy's exact index is imported when it is first built
    from hermes_memory.tier3._exact import ExactIndex

RRF_K = 60
# FTS5 floors a word's IDF at 1e-6 when more than half the rows hold it, so a chunk matched only on such
# words scores ~1e-6 per word: its keyword rank orders rows by length, not by relevance, and casting it as
# an RRF vote would outvote the meaning side (every chunk about "Maya" for "Maya's dog").
UNINFORMATIVE_BM25 = 1e-4
_T = TypeVar("_T")
# The payload keys recall reads per vector hit (``source_scores``): no text, no other metadata.
_SOURCE_FIELDS = ("source_kind", "source_uuid")
# The chunk kind of texts indexed on their own (``semantic_index``): no source, recall keys them by chunk.
_BY_CHUNK = "text"
# semantic_search over-fetches when archived/superseded facts fill the top hits, up to this many.
MAX_FETCH = 1000
# An embedded vector store (qdrant-edge) admits one process. The others retry taking it at most this
# often (so the one holding it can close and hand over) and meanwhile leave embeddings queued for it.
BUSY_RETRY_S = 2.0
# The collections are taken together and in this order, so two processes never hold one each (then
# neither could drain the queue).
_COLLECTIONS = (CHUNKS_COLLECTION, ENTITIES_COLLECTION)


class _Searchable(Protocol):
    """What searching needs of a collection: the ANN engine, or the exact index over Tier 2."""

    def search(
        self,
        vector: Any,
        limit: int = 10,
        filters: Mapping[str, Any] | None = None,
        *,
        fields: Sequence[str] | None = None,
    ) -> list[VectorHit]: ...


@dataclass
class _Mode:
    """Whether this process searches through the ANN engine (shared by every view of one store)."""

    engine: bool = False


@dataclass(frozen=True)
class SemanticResult:
    hits: list[Hit]
    truncated: bool
    # Set when the vectors could not be used (held by another process): why, for the envelope's meta.
    degraded: str | None = None


_log = logging.getLogger(__name__)


#: Which of these fact uuids are believed now (``FactStore.active_uuids``, or recall's cached answer).
Believed = Callable[[Sequence[str]], Collection[str]]


def _unit(score: float) -> float:
    """``score`` clipped to [0, 1] (``max(0.0, min(1.0, score))`` without two calls per hit)."""
    return score if 0.0 <= score <= 1.0 else (0.0 if score < 0.0 else 1.0)


def backend_name(cfg: Tier3Config, override: str | None = None) -> str:
    """The backend to open (``resolve_backend``: a server URL turns an embedded engine into its client)."""
    return resolve_backend(override or cfg.backend, cfg.url)


class SemanticMemory:
    """Embedder + vector collections for one profile. Nothing heavy happens until first use."""

    def __init__(self, cfg: Tier3Config, path: Path, tier2: Tier2, *, backend: str | None = None):
        self.cfg = cfg
        self.path = path
        self._tier2 = tier2
        # The collections and the embed queue are shared by every scope: draining and reindexing load
        # rows store-wide (each vector carries its own chunk's scope); searches go through ``_tier2``.
        self._store = tier2.admin()
        self._backend_name = backend_name(cfg, backend)
        self._lock = threading.RLock()
        # Loading a model takes seconds: its own lock, so closing the collections never waits for it.
        self._embedder_lock = threading.Lock()
        self._embedder: Embedder | None = None
        self._backends: dict[str, VectorBackend] = {}
        self._busy: str | None = None  # why the store could not be taken, until _busy_until
        self._busy_until = 0.0
        # While another process owns the engine, searches run exactly over the Tier 2 vectors; the
        # index lives here (shared by views, like the backends) until this process takes the engine.
        self._exact: dict[str, ExactIndex] = {}
        # How far the engine has caught up with the Tier 2 vectors, as this process last saw it.
        self._synced: dict[str, Marks] = {}
        # Below ``engine_min_vectors`` chunk vectors the exact index answers in every process and the
        # engine is never opened; once the store has grown past it, this process uses the engine.
        self._mode = _Mode(engine=cfg.engine_min_vectors <= 0)
        self._model_checked = False  # whether this process has looked for vectors of another encoder

    # -- lazily opened parts --------------------------------------------------------------------
    @property
    def backend_name(self) -> str:
        return self._backend_name

    @property
    def embedder(self) -> Embedder:
        with self._embedder_lock:
            if self._embedder is None:
                name = self.cfg.embedding_model
                embedder = make_embedder(name, **configured_options(name, self.cfg))
                if embedder.dim != self.cfg.embedding_dim:
                    raise ConfigError(
                        f"config key 'tier3.embedding_dim' is {self.cfg.embedding_dim} but embedder "
                        f"{self.cfg.embedding_model!r} produces {embedder.dim}-d vectors"
                    )
                self._embedder = embedder
            return self._embedder

    @property
    def model_id(self) -> str:
        """The identity of the configured embedder's vectors (builds the embedder, loads no model)."""
        return self.embedder.model_id

    @property
    def engine_key(self) -> str:
        """The name this store's ANN engine keeps its Tier 2 sync marks under (backend and location)."""
        where = self.cfg.url or os.path.realpath(os.path.expanduser(str(self.path)))
        return f"{self._backend_name}:{where}"

    @property
    def vector_store(self) -> VectorStore:
        return VectorStore(self._store.db)

    def backend(self, collection: str, *, recreate: bool = False) -> VectorBackend:
        """The open backend of a collection; the first call takes the store (every collection) and
        brings the chunk collection up to date with the Tier 2 vectors (repairing a crash between a
        Tier 2 commit and the engine write, or filling a new engine without embedding).

        Raises VectorStoreBusyError while another process holds the store (retried after
        ``BUSY_RETRY_S``); StorageError, BackendError or ConfigError when it cannot be opened.
        """
        with self._lock:
            if recreate and collection in self._backends:
                self._backends.pop(collection).close()
            if collection not in self._backends:
                if recreate:
                    self._backends[collection] = self._open(collection, recreate=True)
                    self._synced.clear()
                else:
                    self._take_store(collection)
                    self._exact.clear()  # this process owns the engine now
                    self._mode.engine = True
                    self._catch_up()
            return self._backends[collection]

    def _catch_up(self) -> None:
        """Bring a just opened engine up to date with Tier 2: an engine with no sync marks (new, or
        reset by a reindex while the exact index answered) starts empty and is filled from the stored
        vectors; the entity collection is refilled when entity rows completed without an engine."""
        feed = self.vector_store
        fresh = feed.sync_marks(self.engine_key, CHUNKS_COLLECTION, self.model_id) == Marks()
        if fresh and self._backends[CHUNKS_COLLECTION].count() > 0:
            self._backends.pop(CHUNKS_COLLECTION).close()
            self._backends[CHUNKS_COLLECTION] = self._open(CHUNKS_COLLECTION, recreate=True)
        _indexer.sync_entities(self, self._store)
        self._synced[CHUNKS_COLLECTION] = _indexer.sync_chunks(self, self._store, verify=True)

    def uses_engine(self) -> bool:
        """Whether this process searches through the ANN engine: the store holds at least
        ``tier3.engine_min_vectors`` chunk vectors, or the engine is open here already. Below that
        every process searches the stored vectors exactly and nothing opens (or imports) the engine.
        Once true it stays true in this process. Opens nothing; raises StorageError."""
        with self._lock:
            if self._mode.engine or self._backends:
                return True
            index = self._exact.get(CHUNKS_COLLECTION)
        if index is not None:
            size = index.size
        elif self.vector_store.heads().chunk < self.cfg.engine_min_vectors:
            return False  # fewer chunk ids than that (one index seek): no count of every chunk
        else:
            size = self.vector_store.chunk_vectors(self.model_id)
        with self._lock:
            self._mode.engine = self._mode.engine or size >= self.cfg.engine_min_vectors
            return self._mode.engine

    def search_path(self) -> str:
        """Which path answers vector searches here, for reindex, health, status and doctor: e.g.
        "exact over 1800 stored vectors (engine opens at 1000000)". Opens nothing; raises StorageError."""
        with self._lock:
            if CHUNKS_COLLECTION in self._backends:
                return f"engine {self._backend_name}"
            index = self._exact.get(CHUNKS_COLLECTION)
            busy = self._busy
        engine = self.uses_engine()
        n = index.size if index is not None else self.vector_store.chunk_vectors(self.model_id)
        if not engine:
            return f"exact over {n} stored vectors (engine opens at {self.cfg.engine_min_vectors})"
        if busy is not None:
            return f"exact over {n} stored vectors ({busy})"
        return f"engine {self._backend_name} over {n} stored vectors (opened on first search)"

    def _searchable(self) -> _Searchable:
        """The chunk collection to search: the engine when this process can hold it (caught up with the
        Tier 2 vectors first: other processes embed too), else the exact index over the Tier 2 vectors
        (the same hits, read by any number of processes).

        Below ``engine_min_vectors`` the exact index answers and the engine stays closed; the search
        that finds the store grown past it opens the engine (filled from the Tier 2 vectors).

        Raises StorageError, BackendError or ConfigError when the engine cannot be opened.
        """
        if not self.uses_engine():
            index = self._exact_index()
            index.refresh()
            if index.size < self.cfg.engine_min_vectors:
                return index
            with self._lock:
                self._mode.engine = True  # grown past the threshold: the engine takes over
        try:
            engine = self.backend(CHUNKS_COLLECTION)
        except VectorStoreBusyError:
            return self._exact_index()
        with self._lock:
            # One index seek when nothing is new; no Tier 2 write here (the drains record the marks).
            seen = self._synced.get(CHUNKS_COLLECTION)
            if self.vector_store.heads() != seen:
                reached = _indexer.sync_chunks(self, self._store, since=seen, persist=False)
                self._synced[CHUNKS_COLLECTION] = reached
        return engine

    def _exact_index(self) -> ExactIndex:
        from hermes_memory.tier3._exact import ExactIndex

        with self._lock:
            index = self._exact.get(CHUNKS_COLLECTION)
            if index is None:
                index = ExactIndex(
                    self.vector_store, self.model_id, self.cfg.embedding_dim,
                    loader=self._store.chunks.get_many, payload_of=_indexer.vector_payload,
                    snapshot=_snapshot.snapshot_path(self.path, self.model_id),
                )  # fmt: skip
                self._exact[CHUNKS_COLLECTION] = index
            return index

    def save_exact_snapshot(self, *, force: bool = False, wait: bool = True) -> bool:
        """Write the exact index's snapshot if this process holds one that changed enough since it was
        loaded or last written (``ExactIndex.save_snapshot``): a cold process then maps it instead of
        reading every stored vector. Off the recall path (close, an idle worker: ``wait=False`` skips it
        while a search or a load holds the index). Returns whether it wrote.

        Raises StorageError, OSError."""
        with self._lock:
            index = self._exact.get(CHUNKS_COLLECTION)
        return index.save_snapshot(force=force, wait=wait) if index is not None else False

    def drop_exact_snapshots(self) -> int:
        """Delete the exact index's snapshot files (after a forget: no file keeps a forgotten vector; the
        next writer writes them anew from Tier 2). Returns how many went. Raises StorageError."""
        try:
            return _snapshot.remove_snapshots(self.path)
        except OSError as exc:
            raise StorageError(f"cannot remove exact-index snapshots in {self.path}: {exc}") from exc

    def prune_vectors(self) -> int:
        """Delete stored vectors no chunk or entity holds any more (after a forget: no vector of a
        forgotten text stays). Returns how many went. Raises StorageError."""
        store = self._store
        keep = {content_hash(_indexer.entity_text(e)) for e in store.entities.all()}
        with store.db.atomic() as conn:
            return self.vector_store.prune(conn, keep)

    def engine_holder(self) -> int | None:
        """The pid of another process holding this store's embedded engine (0 when it wrote none), or None
        when no other process does (this one may). Opens nothing. Raises StorageError."""
        with self._lock:
            if self._backends or backend_info(self._backend_name).owner is None:
                return None
        for collection in _COLLECTIONS:
            owner = store_owner(self._backend_name, self.path / self._backend_name, collection)
            if owner is not None:
                return owner
        return None

    def purge_engine(self) -> None:
        """Rewrite the engine's collections from Tier 2 after a forget: an engine keeps deleted payloads in
        its WAL and segment files until a compaction nobody can force, so the collections are recreated
        and refilled (from stored vectors, nothing is embedded). An engine not used here (below
        ``engine_min_vectors``) is emptied, and refills when it is next opened; no engine files, nothing.

        Raises VectorStoreBusyError while another process holds the store; StorageError, BackendError.
        """
        if self.uses_engine():
            self.reindex()
            return
        if not self.cfg.url and not (self.path / self._backend_name).exists():
            return
        for collection in _COLLECTIONS:
            self._open(collection, recreate=True).close()
        with self._store.db.atomic() as conn:
            self.vector_store.reset_sync(conn, self.engine_key)

    def _take_store(self, wanted: str) -> None:
        if self._busy is not None and time.monotonic() < self._busy_until:
            raise VectorStoreBusyError(self._busy)
        names = [c for c in _COLLECTIONS if c not in self._backends]
        if wanted not in names:
            names.append(wanted)
        opened: list[str] = []
        try:
            for name in names:
                self._backends[name] = self._open(name)
                opened.append(name)
        except VectorStoreBusyError as exc:
            for name in opened:  # hand back what was taken: all or nothing
                self._backends.pop(name).close()
            self._busy = f"tier3: the vector store is open in another process ({exc})"
            self._busy_until = time.monotonic() + BUSY_RETRY_S
            raise VectorStoreBusyError(self._busy) from exc
        self._busy = None

    def busy_reason(self) -> str | None:
        """Why this process cannot use the vectors now (another process holds the store), else None.

        Takes the store when it is free; below ``engine_min_vectors`` nothing is opened and nothing is
        unavailable (None). Raises StorageError, BackendError or ConfigError when the store cannot be
        opened for another reason.
        """
        if not self.uses_engine():
            return None
        try:
            self.backend(CHUNKS_COLLECTION)
        except VectorStoreBusyError as exc:
            return str(exc)
        return None

    def opened_backends(self) -> list[VectorBackend]:
        """The backends opened so far (a snapshot); opens nothing. Raises nothing."""
        with self._lock:
            return list(self._backends.values())

    def _open(self, collection: str, *, recreate: bool = False) -> VectorBackend:
        opts: dict[str, Any] = {"collection": collection, "dim": self.cfg.embedding_dim}
        info = backend_info(self._backend_name)
        folder = self.path / self._backend_name
        if info.server and self.cfg.url:
            opts.update(url=self.cfg.url, timeout=self.cfg.timeout_s)
            if self.cfg.api_key_env:
                opts["api_key_env"] = self.cfg.api_key_env
        else:
            opts["path"] = str(folder / collection if info.folder_per_collection else folder)
        if recreate:
            opts["recreate"] = True
        return make_backend(self._backend_name, **opts)

    # -- writing (enqueue side: runs inside the caller's Tier 2 transaction) ----------------------
    def index_text(
        self,
        text: str,
        *,
        source_kind: str,
        source_type: str,
        timestamp: float,
        source_uuid: str | None = None,
        session_id: str | None = None,
        message_id: int | None = None,
        category: str | None = None,
        max_chunks: int | None = None,
    ) -> list[ChunkRow]:
        """Chunk a text into Tier 2 and enqueue its embeddings (one transaction); the chunks land in
        the view's own scope (a fact's chunks in its fact scope). ``max_chunks`` keeps only the first
        chunks (the embeddings one text may queue)."""
        pieces = [c.text for c in chunk_text(text, self.cfg.chunk_size, self.cfg.chunk_overlap)]
        if max_chunks is not None:
            pieces = pieces[: max(1, max_chunks)]
        with self._tier2.db.atomic() as conn:
            return self._tier2.chunks.add(
                conn, pieces, source_kind=source_kind, source_type=source_type, timestamp=timestamp,
                source_uuid=source_uuid, session_id=session_id, message_id=message_id, category=category,
            )  # fmt: skip

    def index_fact(self, fact: Fact) -> list[ChunkRow]:
        return self.index_text(
            fact.content, source_kind="fact", source_type="fact", timestamp=fact.created_at,
            source_uuid=fact.uuid, session_id=fact.source_id if fact.source_type == "session" else None,
            category=fact.category,
        )  # fmt: skip

    def unindex(self, source_kind: str, source_uuid: str) -> int:
        with self._tier2.db.atomic() as conn:
            return self._tier2.chunks.remove_source(conn, source_kind, source_uuid)

    def index_entity(self, entity: Entity) -> None:
        with self._tier2.db.atomic() as conn:
            self._tier2.embed_queue.enqueue(conn, ENTITIES_COLLECTION, entity.uuid, "upsert")

    # -- draining (worker side: ``_indexer`` does the work) ----------------------------------------
    def drain(
        self,
        *,
        max_items: int | None = None,
        progress: Progress | None = None,
        max_attempts: int = 5,
        count_remaining: bool = True,
    ) -> DrainReport:
        """Embed and write pending queue rows in batches until the queue is empty (or ``max_items``).

        The first drain of a process re-queues the whole store when it was embedded with another encoder
        (``requeue_if_another_model``). Raises what the embedder or backend raised (see
        ``_indexer.drain`` for which rows are retired; ``count_remaining``: ditto).
        """
        self.requeue_if_another_model()
        return _indexer.drain(
            self, self._tier2, self._store, batch=self.cfg.embed_batch_size, max_items=max_items,
            progress=progress, max_attempts=max_attempts, count_remaining=count_remaining,
        )  # fmt: skip

    def requeue_if_another_model(self) -> bool:
        """Once per process: when the store's vectors are another encoder's (``model_id`` differs, e.g.
        a store embedded by ``local-fp32`` opened with the int8 ``local``), queue every chunk and entity
        again, as ``reindex`` does, so the drains re-embed them (the worker, in the background). Until
        then keyword recall answers and vector search finds only what is re-embedded so far; nothing is
        refused and the old vectors stay (switching back finds them). Returns whether it queued.

        Raises StorageError; what opening the engine raises when this process uses it.
        """
        with self._lock:
            if self._model_checked:
                return False
            self._model_checked = True
            if not self.vector_store.embedded_by_another(self.model_id):
                return False
            _log.info(
                "the stored vectors are another encoder's, not %s: re-embedding the store in the background"
                " (keyword recall answers meanwhile)", self.model_id,
            )  # fmt: skip
            _indexer.requeue_all(self, self._store, engine=self.uses_engine())
            return True

    def reindex(self, *, progress: Progress | None = None) -> DrainReport:
        """Rebuild every collection from Tier 2 (e.g. after switching backend or embedder): stored
        vectors of the current model are reused, only texts without one are embedded. Below
        ``engine_min_vectors`` only the Tier 2 vectors are rebuilt; the engine refills from them when
        it is first opened."""
        with self._lock:
            self._model_checked = True  # everything is queued here: the drain need not look again
        _indexer.requeue_all(self, self._store, engine=self.uses_engine())
        return self.drain(progress=progress)

    # -- reading --------------------------------------------------------------------------------
    def search(
        self,
        query: str,
        *,
        limit: int = 10,
        min_score: float = 0.0,
        filters: Mapping[str, Any] | None = None,
    ) -> SemanticResult:
        """Chunks nearest to the query (of the view's readable scopes), as Tier 2 text.

        Raises ValidationError for bad filters.
        """
        wanted = self._scoped_filters(filters)
        parse_filters(wanted)  # validate before paying for an embedding
        truncated = self.embedder.truncates(query)
        vector = self.embedder.embed_query([query])[0]
        backend = self._searchable()
        out = self._nearest(backend, vector, limit, wanted, self._recallable, min_score=min_score)
        return SemanticResult(out, truncated)

    def source_scores(
        self, query: str, limits: Mapping[str, int], believed: Believed | None = None
    ) -> dict[str, dict[str, float]]:
        """Per chunk source kind, the best vector score of each source among the kind's nearest chunks.

        ``limits`` maps a ``source_kind`` ("episode", "episode_window", "fact", "text") to its top-k; the
        result maps it to ``{source uuid: best score}`` (for "text", chunks indexed on their own with no
        source, ``{chunk uuid: score}``) over exactly the chunks and scores that
        ``search(query, limit=k, filters={"source_kind": kind})`` returns (same scopes, hidden facts
        left out), but the query is embedded once and each hit loads two payload fields and no chunk
        text (recall's hot path). While another process holds the vector store the exact index over
        the Tier 2 vectors answers. ``believed`` tells which facts are believed now, as
        ``FactStore.active_uuids`` does (recall passes its read cache's; default: that query). Raises
        ValidationError for a bad kind or limit.
        """
        views = {kind: self._scoped_filters({"source_kind": kind}) for kind in limits}
        for kind, wanted in views.items():
            parse_filters(wanted)  # validate before paying for an embedding
            check_limit(limits[kind])
        out: dict[str, dict[str, float]] = {kind: {} for kind in views}
        if not views:
            return out
        from hermes_memory.tier3._exact import ExactIndex

        vector = self.embedder.embed_query([query])[0]
        backend = self._searchable()
        first: dict[str, list[VectorHit]] = {}
        exact = isinstance(backend, ExactIndex)
        fields: tuple[str, ...] = _SOURCE_FIELDS
        read: dict[str, list[tuple[str, float]] | None] = {}
        if isinstance(backend, ExactIndex):  # every kind from one first-stage pass
            # Each view holds one kind, so only the source is read per hit. The index has just applied
            # Tier 2's deletions (its refresh reads the tombstones): every hit's chunk exists, only the
            # facts' belief is left to check (their hits go through ``_nearest``, which refills).
            fields = ("source_uuid",)
            asked = {kind: (limits[kind], wanted) for kind, wanted in views.items()}
            plain = {k: v for k, v in asked.items() if k != _BY_CHUNK}
            read = backend.search_values(vector, plain, "source_uuid")
            unread = {k: v for k, v in asked.items() if read.get(k) is None}
            first = backend.search_many(vector, unread, fields=fields) if unread else {}
        for kind, wanted in views.items():
            best = out[kind]
            raw = first.get(kind)
            values = read.get(kind)
            if kind == _BY_CHUNK:  # no source: each chunk is its own
                if raw is not None:  # the exact index, just refreshed: every hit's chunk exists
                    found = [(h.id.removeprefix("chunk:"), _unit(h.score)) for h in raw]
                else:
                    found = self._nearest(backend, vector, limits[kind], wanted, self._live_chunks,
                                          fields=fields)  # fmt: skip
            elif values is not None and kind == "fact" and isinstance(backend, ExactIndex):
                check = believed or self._tier2.facts.active_uuids
                found = self._believed_values(backend, vector, limits[kind], wanted, values, check)
            elif values is not None:
                # Nothing of this kind is left out (no belief to check): ``_nearest`` would return the
                # search as it is, so it is read in one pass.
                found = [(source, _unit(score)) for source, score in values]
            elif raw is not None and kind != "fact" and all(h.score >= 0.0 for h in raw):
                found = [(str(h.payload.get("source_uuid") or ""), _unit(h.score)) for h in raw]
            else:
                keep = self._recallable_sources
                if exact:
                    keep = functools.partial(self._believed_sources, kind=kind)
                found = self._nearest(backend, vector, limits[kind], wanted, keep, fields=fields, first=raw)
            for source, score in found:
                if source:
                    best[source] = max(best.get(source, 0.0), score)
        return out

    def _nearest(
        self,
        backend: _Searchable,
        vector: Any,
        limit: int,
        wanted: Mapping[str, Any],
        keep: Callable[[list[VectorHit]], list[_T]],
        *,
        min_score: float = 0.0,
        fields: Sequence[str] | None = None,
        first: list[VectorHit] | None = None,
    ) -> list[_T]:
        """The first ``limit`` of the nearest hits that ``keep`` maps to recallable results (``first``:
        the search of ``limit`` hits, done already)."""
        cap = max(limit, MAX_FETCH)
        fetch = limit
        while True:
            if first is not None and fetch == limit:
                raw = first
            else:
                raw = backend.search(vector, limit=fetch, filters=wanted, fields=fields)
            out = keep([h for h in raw if h.score >= min_score])
            exhausted = len(raw) < fetch or fetch >= cap or (bool(raw) and raw[-1].score < min_score)
            if len(out) >= limit or exhausted:
                return out[:limit]
            # hidden facts (archived, superseded, expired) took some of the top hits: look further
            fetch = min(fetch * 4, cap)

    def _believed_values(
        self,
        index: ExactIndex,
        vector: Any,
        limit: int,
        wanted: Mapping[str, Any],
        first: list[tuple[str, float]],
        believed: Believed,
    ) -> list[tuple[str, float]]:
        """``_nearest`` with ``_believed_sources`` over the exact index's (source, score) values, without
        building hits: the first ``limit`` whose fact is believed now, searched 4x deeper (up to
        ``MAX_FETCH``) while hidden facts took some; ``first``: the ``limit`` nearest, read already."""
        cap, fetch, values = max(limit, MAX_FETCH), limit, first
        kept_now: set[str] = set()
        checked: set[str] = set()
        while True:
            fresh = [source for source, _ in values if source and source not in checked]
            kept_now.update(believed(fresh))
            checked.update(fresh)
            kept = [(source, score) for source, score in values if score >= 0.0]
            out = [(source, _unit(score)) for source, score in kept if source in kept_now]
            exhausted = len(values) < fetch or fetch >= cap or (bool(values) and values[-1][1] < 0.0)
            if len(out) >= limit or exhausted:
                return out[:limit]
            fetch = min(fetch * 4, cap)
            deeper = index.search_values(vector, {"fact": (fetch, wanted)}, "source_uuid")["fact"]
            if deeper is None:  # the view's filters need the loaded payloads (not the case for "fact")
                raise RuntimeError("the exact index could not read the fact view's values")
            values = deeper

    def lexical_search(
        self,
        query: str,
        *,
        limit: int = 10,
        filters: Mapping[str, Any] | None = None,
        reason: str | None = None,
    ) -> SemanticResult:
        """BM25 over chunk text with the same filters: ``search`` while the vectors are unavailable.

        The result carries ``reason`` as ``degraded``. Raises ValidationError for bad filters.
        """
        conditions = parse_filters(self._scoped_filters(filters))
        found = self._tier2.chunks.search(query, limit=min(max(limit * 4, 50), MAX_FETCH))
        hidden = self._hidden_facts(chunk for chunk, _ in found)
        out = [
            _chunk_hit(chunk, score, "tier2")
            for chunk, score in found
            if not (chunk.source_kind == "fact" and chunk.source_uuid in hidden)
            and matches(_indexer.vector_payload(chunk), conditions)
        ]
        return SemanticResult(out[:limit], False, degraded=reason)

    def _scoped_filters(self, filters: Mapping[str, Any] | None) -> dict[str, Any]:
        """The caller's filters with the view's scope condition (replacing any scope the caller gave:
        the view decides what is readable)."""
        wanted = dict(filters or {})
        view = self._tier2.view
        if view.admin:
            wanted.pop("scope", None)
        else:
            wanted["scope"] = {"in": list(view.readable)}
        return wanted

    def _recallable(self, hits: Sequence[VectorHit]) -> list[Hit]:
        chunks = self._tier2.chunks.get_many([h.id.removeprefix("chunk:") for h in hits])
        hidden = self._hidden_facts(chunks.values())
        out: list[Hit] = []
        for h in hits:
            chunk = chunks.get(h.id.removeprefix("chunk:"))
            if chunk is None:  # deleted in Tier 2, vector delete still queued
                continue
            if chunk.source_kind == "fact" and chunk.source_uuid in hidden:
                continue  # archived, superseded or expired facts keep their vector but are not recalled
            out.append(_chunk_hit(chunk, h.score, "tier3"))
        return out

    def _recallable_sources(self, hits: Sequence[VectorHit]) -> list[tuple[str, float]]:
        """``_recallable`` reduced to (source uuid or "", score) for hits carrying ``_SOURCE_FIELDS``:
        the same hits survive. A chunk row is never updated (only inserted and deleted) and its vector
        payload is written from it, so the payload's kind, source and scope (which the search filtered
        on) are the row's; Tier 2 is asked only whether the row still exists (and facts whether they
        are believed)."""
        live = self._tier2.chunks.existing([h.id.removeprefix("chunk:") for h in hits])
        facts = [h.payload.get("source_uuid") for h in hits if h.payload.get("source_kind") == "fact"]
        believed = self._tier2.facts.active_uuids([str(f) for f in facts if f])
        out: list[tuple[str, float]] = []
        for h in hits:
            if h.id.removeprefix("chunk:") not in live:  # deleted in Tier 2, vector delete still queued
                continue
            source = str(h.payload.get("source_uuid") or "")
            if h.payload.get("source_kind") == "fact" and source not in believed:
                continue  # archived, superseded or expired facts keep their vector but are not recalled
            out.append((source, max(0.0, min(1.0, h.score))))
        return out

    def _live_chunks(self, hits: Sequence[VectorHit]) -> list[tuple[str, float]]:
        """(chunk uuid, score) of the hits whose chunk still exists in Tier 2."""
        live = self._tier2.chunks.existing([h.id.removeprefix("chunk:") for h in hits])
        return [(u, _unit(h.score)) for h in hits if (u := h.id.removeprefix("chunk:")) in live]

    def _believed_sources(self, hits: Sequence[VectorHit], kind: str) -> list[tuple[str, float]]:
        """``_recallable_sources`` for hits of one source kind whose chunks are known to exist (the exact
        index, just refreshed): only facts are checked, for whether they are believed now."""
        found = [(str(h.payload.get("source_uuid") or ""), _unit(h.score)) for h in hits]
        if kind != "fact":
            return found
        believed = self._tier2.facts.active_uuids([source for source, _ in found if source])
        # archived, superseded or expired facts keep their vector but are not recalled
        return [(source, score) for source, score in found if source in believed]

    def _hidden_facts(self, chunks: Iterable[ChunkRow]) -> set[str | None]:
        """Source uuids of fact chunks whose fact is not believed now (archived, superseded, expired)."""
        facts = [c.source_uuid for c in chunks if c.source_kind == "fact"]
        believed = self._tier2.facts.active_uuids([f for f in facts if f])
        return {f for f in facts if f not in believed}

    def hybrid(self, query: str, *, limit: int = 10, candidates: int = 50) -> SemanticResult:
        """BM25 over chunk text fused with vector search by reciprocal rank fusion.

        While another process holds the vector store, only the BM25 side runs (``degraded`` says so).
        """
        try:
            semantic = self.search(query, limit=candidates)
        except VectorStoreBusyError as exc:
            semantic = SemanticResult([], False, degraded=str(exc))
        found = self._tier2.chunks.search(query, limit=candidates)
        hidden = self._hidden_facts(chunk for chunk, _ in found)
        keyword = [
            (c, s) for c, s in found
            if s > UNINFORMATIVE_BM25 and not (c.source_kind == "fact" and c.source_uuid in hidden)
        ]  # fmt: skip
        fused: dict[str, float] = {}
        by_id: dict[str, Hit] = {}
        ranks: dict[str, dict[str, int]] = {}
        for rank, hit in enumerate(semantic.hits):
            fused[hit.id] = fused.get(hit.id, 0.0) + 1.0 / (RRF_K + rank + 1)
            by_id[hit.id] = hit
            ranks.setdefault(hit.id, {})["vector"] = rank + 1
        for rank, (chunk, score) in enumerate(keyword):
            hit = _chunk_hit(chunk, score, "tier2")
            fused[hit.id] = fused.get(hit.id, 0.0) + 1.0 / (RRF_K + rank + 1)
            by_id.setdefault(hit.id, hit)
            ranks.setdefault(hit.id, {})["bm25"] = rank + 1
        best = 2.0 / (RRF_K + 1)  # first in both lists
        order = sorted(fused, key=lambda k: fused[k], reverse=True)[:limit]
        out = [
            Hit(
                id=k, score=round(min(1.0, fused[k] / best), 6), text=by_id[k].text, tier="multi",
                kind=by_id[k].kind, timestamp=by_id[k].timestamp, source_ids=by_id[k].source_ids,
                metadata={**by_id[k].metadata, "ranks": ranks[k]},
            )
            for k in order
        ]  # fmt: skip
        return SemanticResult(out, semantic.truncated, semantic.degraded)

    def health(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "backend": self._backend_name,
            "embedder": self.cfg.embedding_model,
            "dim": self.cfg.embedding_dim,
            "chunks": self._tier2.chunks.count(),
            "embed_pending": self._tier2.embed_queue.count(),
            "search": self.search_path(),
        }
        view = self._tier2.view
        # Vector counts of the view only (every vector carries its row's scope).
        scoped = None if view.admin else {"scope": {"in": list(view.readable)}}
        with self._lock:
            for name, backend in self._backends.items():
                out[name] = backend.count(scoped)
            engine_open = CHUNKS_COLLECTION in self._backends
        if not engine_open:  # the stored vectors this process searches exactly, of the view only
            out[CHUNKS_COLLECTION] = self._tier2.chunks.count_embedded(self.model_id)
        return out

    def inherit_exact(self) -> None:
        """Have the shared exact index read Tier 2 through this view (``tier3.shared``: the view it was
        built through is being released and its database closes next)."""
        with self._lock:
            for index in self._exact.values():
                index.rebind(self.vector_store, self._store.chunks.get_many)

    def view(self, tier2: Tier2) -> SemanticMemory:
        """The same embedder and open collections seen through another Tier 2 view (another scope of
        the same store, usually through another connection). Closing either closes the shared
        collections: ``tier3.shared`` counts the users and closes once."""
        other = copy.copy(self)  # shares the backends dict and its lock
        other._tier2 = tier2
        other._store = tier2.admin()
        return other

    def close(self) -> None:
        with self._lock:
            for backend in self._backends.values():
                backend.close()
            self._backends.clear()
            for index in self._exact.values():
                try:
                    index.save_snapshot()  # the next cold process maps it instead of loading Tier 2
                except (StorageError, OSError) as exc:
                    _log.warning("exact index: snapshot not written (%s)", exc)
                index.close()  # its matrix goes now, not when a reference cycle is collected
            self._exact.clear()


def _chunk_hit(chunk: ChunkRow, score: float, tier: str) -> Hit:
    sources = tuple(s for s in (chunk.source_uuid,) if s)
    return Hit(
        id=f"chunk:{chunk.uuid}",
        score=max(0.0, min(1.0, score)),
        text=chunk.text,
        tier=tier,
        kind=chunk.source_kind,
        timestamp=chunk.timestamp,
        source_ids=sources,
        metadata={
            "session_id": chunk.session_id,
            "source_type": chunk.source_type,
            "category": chunk.category,
            "chunk_index": chunk.chunk_index,
        },
    )


__all__ = [
    "BUSY_RETRY_S",
    "MAX_FETCH",
    "RRF_K",
    "UNINFORMATIVE_BM25",
    "SemanticMemory",
    "SemanticResult",
    "backend_name",
]
