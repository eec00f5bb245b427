"""Which path answers a vector search in this process, and the lazily opened parts behind it: the
embedder, the ANN engine's collections (one process owns them, taken together) and the exact index over
the Tier 2 vectors that answers below ``tier3.engine_min_vectors`` or while another process owns the
engine."""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from hermes_memory.config import Tier3Config
from hermes_memory.errors import ConfigError, StorageError, VectorStoreBusyError
from hermes_memory.tier2 import Tier2
from hermes_memory.tier2.chunks import CHUNKS_COLLECTION, ENTITIES_COLLECTION
from hermes_memory.tier2.vectors import Marks, VectorStore
from hermes_memory.tier3 import _indexer, _snapshot
from hermes_memory.tier3.backend import (
    VectorBackend,
    VectorHit,
    backend_info,
    make_backend,
    resolve_backend,
    store_owner,
)
from hermes_memory.tier3.embedder import Embedder, configured_options, make_embedder

if TYPE_CHECKING:  # numpy's exact index is imported when it is first built
    from hermes_memory.tier3._exact import ExactIndex

# An embedded vector store (qdrant-edge) admits one process. The others retry taking it at most this
# often (so the one holding it can close and hand over) and meanwhile leave embeddings queued for it.
BUSY_RETRY_S = 2.0
# The collections are taken together and in this order, so two processes never hold one each (then
# neither could drain the queue).
COLLECTIONS = (CHUNKS_COLLECTION, ENTITIES_COLLECTION)


class Searchable(Protocol):
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


_log = logging.getLogger(__name__)


def backend_name(cfg: Tier3Config, override: str | None = None) -> str:
    """The backend to open (``resolve_backend``: a server URL turns an embedded engine into its client)."""
    return resolve_backend(override or cfg.backend, cfg.url)


class SearchPaths:
    """The embedder, the engine's collections and the exact index of one profile, opened on first use;
    ``SemanticMemory`` builds on it."""

    def __init__(self, cfg: Tier3Config, path: Path, tier2: Tier2, *, backend: str | None = None) -> None:
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

    # -- which path answers a search ------------------------------------------------------------
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

    def _searchable(self) -> Searchable:
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

    # -- the exact index's snapshots ------------------------------------------------------------
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

    # -- taking the engine's store (one process owns it) ----------------------------------------
    def engine_holder(self) -> int | None:
        """The pid of another process holding this store's embedded engine (0 when it wrote none), or None
        when no other process does (this one may). Opens nothing. Raises StorageError."""
        with self._lock:
            if self._backends or backend_info(self._backend_name).owner is None:
                return None
        for collection in COLLECTIONS:
            owner = store_owner(self._backend_name, self.path / self._backend_name, collection)
            if owner is not None:
                return owner
        return None

    def _take_store(self, wanted: str) -> None:
        if self._busy is not None and time.monotonic() < self._busy_until:
            raise VectorStoreBusyError(self._busy)
        names = [c for c in COLLECTIONS if c not in self._backends]
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

    # -- sharing and closing --------------------------------------------------------------------
    def inherit_exact(self) -> None:
        """Have the shared exact index read Tier 2 through this view (``tier3.shared``: the view it was
        built through is being released and its database closes next)."""
        with self._lock:
            for index in self._exact.values():
                index.rebind(self.vector_store, self._store.chunks.get_many)

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


__all__ = ["BUSY_RETRY_S", "COLLECTIONS", "SearchPaths", "Searchable", "backend_name"]
