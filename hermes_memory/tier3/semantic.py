"""Tier 3 as one unit: ``SemanticMemory`` indexes texts into Tier 2 and the embed queue, drains the queue
(in ``_indexer``), re-embeds a store made by another encoder, and answers semantic / hybrid search mapped
back to Tier 2 chunks. Which path answers a search (the engine or the exact index) is ``_search_paths``;
what of a hit may be recalled is ``_recallable``."""

from __future__ import annotations

import contextlib
import copy
import functools
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from operator import itemgetter
from pathlib import Path
from typing import Any

from hermes_memory.config import Tier3Config
from hermes_memory.errors import VectorStoreBusyError
from hermes_memory.records import Entity, Fact, Hit
from hermes_memory.tier2 import Tier2
from hermes_memory.tier2._util import content_hash
from hermes_memory.tier2.chunks import CHUNKS_COLLECTION, ENTITIES_COLLECTION, ChunkRow
from hermes_memory.tier2.leases import EMBEDDINGS
from hermes_memory.tier3 import _indexer

# Explicit re-exports: callers import the worker side's report and progress types from this module.
from hermes_memory.tier3._indexer import DrainReport as DrainReport
from hermes_memory.tier3._indexer import Progress as Progress
from hermes_memory.tier3._recallable import (
    MAX_FETCH,
    Believed,
    believed_sources,
    believed_values,
    chunk_hit,
    hidden_facts,
    live_chunks,
    nearest,
    recallable,
    recallable_sources,
    unit,
)
from hermes_memory.tier3._search_paths import BUSY_RETRY_S, COLLECTIONS, SearchPaths, backend_name
from hermes_memory.tier3.backend import VectorHit, check_limit, matches, parse_filters
from hermes_memory.tier3.chunks import chunk_text

RRF_K = 60
# FTS5 floors a word's IDF at 1e-6 when more than half the rows hold it, so a chunk matched only on such
# words scores ~1e-6 per word: its keyword rank orders rows by length, not by relevance, and casting it as
# an RRF vote would outvote the meaning side (every chunk about "Maya" for "Maya's dog").
UNINFORMATIVE_BM25 = 1e-4
# The payload keys recall reads per vector hit (``source_scores``): no text, no other metadata.
_SOURCE_FIELDS = ("source_kind", "source_uuid")
# The chunk kind of texts indexed on their own (``semantic_index``): no source, recall keys them by chunk.
_BY_CHUNK = "text"
# The exact index reads recall's fact view this many times deeper at once: superseded and archived facts
# keep their vectors and often fill its top hits, and a second pass costs more than a deeper first one.
FACT_DEPTH = 4


@dataclass(frozen=True)
class SemanticResult:
    hits: list[Hit]
    truncated: bool
    # Set when the vectors could not be used (held by another process): why, for the envelope's meta.
    degraded: str | None = None


_log = logging.getLogger(__name__)


class SemanticMemory(SearchPaths):
    """Embedder + vector collections for one profile. Nothing heavy happens until first use."""

    def __init__(self, cfg: Tier3Config, path: Path, tier2: Tier2, *, backend: str | None = None):
        super().__init__(cfg, path, tier2, backend=backend)
        self._model_checked = False  # whether this process has looked for vectors of another encoder

    # -- after a forget ---------------------------------------------------------------------------
    def prune_vectors(self) -> int:
        """Delete stored vectors no chunk or entity holds any more (after a forget: no vector of a
        forgotten text stays). Returns how many went. Raises StorageError."""
        store = self._store
        keep = {content_hash(_indexer.entity_text(e)) for e in store.entities.all()}
        with store.db.atomic() as conn:
            return self.vector_store.prune(conn, keep)

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
        for collection in COLLECTIONS:
            self._open(collection, recreate=True).close()
        with self._store.db.atomic() as conn:
            self.vector_store.reset_sync(conn, self.engine_key)

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
        (``requeue_if_another_model``). While another process holds the store's embedding lease
        (``tier2.leases``) nothing is embedded here and the report says ``elsewhere``: that process drains
        the queue. Raises what the embedder or backend raised (see ``_indexer.drain`` for which rows are
        retired; ``count_remaining``: ditto).
        """
        self.requeue_if_another_model()
        # Nothing queued (the idle worker's usual case): the engine is brought up to date without the lease.
        waiting = self._tier2.embed_queue.longer_than(0)
        with self._tier2.db.lease(EMBEDDINGS) if waiting else contextlib.nullcontext(True) as held:
            if not held:  # another process drains the queue now (any host of a shared store)
                remaining = self._tier2.embed_queue.count() if count_remaining else -1
                return DrainReport(0, 0, 0, remaining, elsewhere=True)
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
        keep = functools.partial(recallable, self._tier2)
        out = nearest(backend, vector, limit, wanted, keep, min_score=min_score)
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
        fact_depth = min(limits.get("fact", 0) * FACT_DEPTH, MAX_FETCH)
        if isinstance(backend, ExactIndex):  # every kind from one first-stage pass
            # Each view holds one kind, so only the source is read per hit. The index has just applied
            # Tier 2's deletions (its refresh reads the tombstones): every hit's chunk exists, only the
            # facts' belief is left to check (their hits go through ``nearest``, which refills).
            fields = ("source_uuid",)
            asked = {kind: (limits[kind], wanted) for kind, wanted in views.items()}
            if "fact" in asked:  # read deeper at once: hidden facts often fill the view's top hits
                asked["fact"] = (fact_depth, asked["fact"][1])
            plain = {k: v for k, v in asked.items() if k != _BY_CHUNK}
            read = backend.search_values(vector, plain, "source_uuid")
            unread = {k: v for k, v in asked.items() if read.get(k) is None}
            first = backend.search_many(vector, unread, fields=fields) if unread else {}
        for kind, wanted in views.items():
            best = out[kind]
            raw = first.get(kind)
            values = read.get(kind)
            if values is not None and kind == "fact" and isinstance(backend, ExactIndex):
                # the facts: the first of those read that are believed now (read deeper while hidden
                # ones took some), best first and clipped to [0, 1] like any view read in one pass
                check = believed or self._tier2.facts.active_uuids
                values = believed_values(backend, vector, limits[kind], wanted, values, check, fact_depth)
            if kind == _BY_CHUNK:  # no source: each chunk is its own
                if raw is not None:  # the exact index, just refreshed: every hit's chunk exists
                    found = [(h.id.removeprefix("chunk:"), unit(h.score)) for h in raw]
                else:
                    live = functools.partial(live_chunks, self._tier2)
                    found = nearest(backend, vector, limits[kind], wanted, live, fields=fields)
            elif values is not None:
                # Read in one pass (the facts' belief checked above; nothing of another kind is left
                # out, so ``nearest`` would return the search as it is). Scores in [0, 1], best first:
                # a source's first score is its best. Keys in the order first met, each given its first
                # score by writing the hits back to front (two C loops over a few hundred hits).
                best = out[kind] = dict.fromkeys(map(itemgetter(0), values), 0.0)
                best.update(reversed(values))
                best.pop("", None)  # a chunk without a source
                continue
            elif raw is not None and kind != "fact" and all(h.score >= 0.0 for h in raw):
                found = [(str(h.payload.get("source_uuid") or ""), unit(h.score)) for h in raw]
            else:
                keep = functools.partial(recallable_sources, self._tier2)
                if exact:
                    keep = functools.partial(believed_sources, self._tier2, kind=kind)
                found = nearest(backend, vector, limits[kind], wanted, keep, fields=fields, first=raw)
            for source, score in found:
                if source:
                    best[source] = max(best.get(source, 0.0), score)
        return out

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
        hidden = hidden_facts(self._tier2, (chunk for chunk, _ in found))
        out = [
            chunk_hit(chunk, score, "tier2")
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

    def hybrid(self, query: str, *, limit: int = 10, candidates: int = 50) -> SemanticResult:
        """BM25 over chunk text fused with vector search by reciprocal rank fusion.

        While another process holds the vector store, only the BM25 side runs (``degraded`` says so).
        """
        try:
            semantic = self.search(query, limit=candidates)
        except VectorStoreBusyError as exc:
            semantic = SemanticResult([], False, degraded=str(exc))
        found = self._tier2.chunks.search(query, limit=candidates)
        hidden = hidden_facts(self._tier2, (chunk for chunk, _ in found))
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
            hit = chunk_hit(chunk, score, "tier2")
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

    def view(self, tier2: Tier2) -> SemanticMemory:
        """The same embedder and open collections seen through another Tier 2 view (another scope of
        the same store, usually through another connection). Closing either closes the shared
        collections: ``tier3.shared`` counts the users and closes once."""
        other = copy.copy(self)  # shares the backends dict and its lock
        other._tier2 = tier2
        other._store = tier2.admin()
        return other


__all__ = [
    "BUSY_RETRY_S",
    "MAX_FETCH",
    "RRF_K",
    "UNINFORMATIVE_BM25",
    "SemanticMemory",
    "SemanticResult",
    "backend_name",
]
