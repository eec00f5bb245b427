"""Qdrant's engine in process (qdrant-edge-py ``EdgeShard``): one shard per collection, no server.

Layout: ``{path}/{collection}/shard`` (the engine's files) and ``{path}/{collection}/hermes.json``
(our sidecar with the dim, so a reopen with another embedder fails with a clear message). A new shard
is built in ``{collection}/shard.new`` and renamed into place, so a kill during its creation leaves
nothing that would not open.

Ids: the engine takes ints/UUIDs only, so each string id maps to ``uuid5`` and is kept in the payload
under ``_hm_id``. Keyword, integer and float payload fields of the seed's collections get indexes.

When HNSW is built: only an explicit, blocking ``optimize()`` builds it, and qdrant-edge 0.9 holds
the GIL for the whole call (measured: a Python ticker thread got no turn during an 18 s optimize of
8k points on a loaded 2-core machine; ~2 s per 10k when idle). Inside the agent's process that
would freeze every thread, so it never happens on the write or read path:
  * ``upsert``/``search`` never optimize (unless ``optimize_every`` is set, for a dedicated indexing
    process); points wait in a plain segment that is searched exactly (~1 ms at 10k, a few ms at 50k);
  * ``close()`` optimizes when anything was written (a no-op unless a segment crossed the engine's
    indexing threshold, ~6.6k points of 384-d), i.e. at shutdown or in the maintenance CLI;
    ``optimize_on_close=False`` (or ``defer_optimize()`` before closing) turns that off (bench: 6 s for
    10k, 75 s for 50k on a loaded 2-core machine; exact search of 50k unindexed points still answers in
    ~6 ms): the Hermes provider defers it when its process was short-lived (a one-shot ``hermes -z``
    must not spend seconds at exit), and the ``embed_queue`` maintenance job builds it instead;
  * the owner may call ``optimize()`` when a pause is acceptable.
Segments are not merged until there are 8 (``default_segment_number=8``): with the default,
every optimize re-indexed everything (10k then 20k then 30k...), each build paying for all before it.

What a build costs (``_HNSW``): one indexing thread, so a close-time build never takes both cores from
the agent; and no per-payload-value subgraphs (``payload_m=0``): with them the engine built extra graphs
for every indexed keyword value with many points (source kind, scope, source type), which took half
of each build's time (60k points on a loaded 2-core machine: 321 s with them, 153 s without, peak RSS
the same). Filtered searches stay exact where a filter is selective (the payload index answers below
``full_scan_threshold`` points) and use the main graph where it is not (a source kind: 1/3 of the points).

The engine holds a WAL lock: one open per shard per machine. But an open that then fails on that lock
has already loaded (and may have tidied) the shard's segment files, under the feet of the process that
owns it (seen: "tracker_journal.dat is shorter than expected" in the owner's optimize on close). So we
take our own ``flock`` on ``{path}/{collection}.lock`` first, without blocking, and touch the shard only
when we own it; the OS releases it when the owner exits, even by SIGKILL. A second open (another process
or a second instance in this one) raises VectorStoreBusyError (a StorageError); share one backend
instance per collection.
"""

from __future__ import annotations

import fcntl
import importlib
import json
import logging
import os
import shutil
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy.typing as npt

from hermes_memory._fsync import fsync_dir
from hermes_memory.errors import (
    BackendError,
    ConfigError,
    ConflictError,
    DependencyMissingError,
    StorageError,
    VectorStoreBusyError,
)
from hermes_memory.security.permissions import private_dir, tighten_tree, write_private_text
from hermes_memory.tier3.backend import (
    ID_KEY,
    MEMORY_CHUNKS,
    Condition,
    VectorHit,
    check_collection_name,
    check_dim,
    check_fields,
    check_ids,
    check_limit,
    check_payloads,
    check_vectors,
    collection_spec,
    cosine_to_score,
    parse_filters,
    point_uuid,
    reindex_hint,
)

_UPSERT_BATCH = 1024
_META = "hermes.json"
_STAGING = "shard.new"  # where a new shard is built before it is renamed into place
_SEGMENTS = 8  # see module doc: fewer merges, each optimize indexes only the new segment
# HNSW build (see module doc): the engine's default m / ef_construct / full_scan_threshold, one thread,
# no payload subgraphs.
_HNSW = {
    "m": 16,
    "ef_construct": 100,
    "full_scan_threshold": 10_000,
    "max_indexing_threads": 1,
    "payload_m": 0,
}

log = logging.getLogger(__name__)


def to_filter(qe: Any, conditions: Sequence[Condition]) -> Any:
    """Translate validated conditions into a qdrant-edge ``Filter`` (None when there are none)."""
    if not conditions:
        return None
    must = []
    for cond in conditions:
        if cond.op == "eq":
            must.append(qe.FieldCondition(key=cond.field, match=qe.MatchValue(cond.value)))
        elif cond.op == "in":
            must.append(qe.FieldCondition(key=cond.field, match=qe.MatchAny(list(cond.values))))
        else:
            must.append(qe.FieldCondition(key=cond.field, range=qe.RangeFloat(**dict(cond.bounds))))
    return qe.Filter(must=must)


class QdrantEdgeBackend:
    """One embedded Qdrant shard (cosine) of fixed dim under ``{path}/{collection}``."""

    name = "qdrant"
    buffered = False

    def __init__(
        self,
        *,
        collection: str = MEMORY_CHUNKS,
        dim: int,
        path: str | Path | None = None,
        url: str | None = None,
        optimize_every: int | None = None,
        optimize_on_close: bool = True,
        recreate: bool = False,
    ) -> None:
        if url:
            raise ConfigError("qdrant-edge is embedded; for a server use backend 'qdrant-client' (url set)")
        if path is None:
            raise ConfigError("the qdrant backend needs tier3.path")
        if optimize_every is not None and optimize_every <= 0:
            raise ConfigError(f"optimize_every must be > 0 (or None), got {optimize_every}")
        self._collection = check_collection_name(collection)
        self._dim = check_dim(dim)
        self._optimize_every = optimize_every
        self._optimize_on_close = optimize_on_close
        try:
            self._qe = importlib.import_module("qdrant_edge")
        except ImportError as exc:
            raise DependencyMissingError(
                "the qdrant backend needs qdrant-edge-py: pip install 'hermes-memory-tiers[qdrant]'"
            ) from exc
        self._dir = Path(path).expanduser() / collection
        self._shard_dir = self._dir / "shard"
        self._lock = threading.RLock()
        self._pending = 0
        self._written = False  # anything upserted or deleted since open: close flushes only then
        self._closed = False
        self._owner = self._take_ownership()
        try:
            self._remove(collection=recreate)
            self._shard = self._open()
            self._tighten()
        except BaseException:
            os.close(self._owner)  # a failed open must not keep the store
            raise

    def _tighten(self) -> None:
        # The engine creates its files with the process umask (it takes no mode): owner-only after.
        try:
            tighten_tree(self._dir)
        except OSError as exc:
            raise StorageError(f"cannot make the qdrant store {self._dir} owner-only: {exc}") from exc

    def _take_ownership(self) -> int:
        lock_path = self._dir.with_name(f"{self._collection}.lock")
        try:
            private_dir(lock_path.parent)
            fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as exc:
            raise StorageError(f"cannot open the qdrant store lock {lock_path}: {exc}") from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            holder = _lock_holder(fd)
            os.close(fd)
            raise VectorStoreBusyError(
                f"qdrant collection {self._collection!r} at {self._dir} is already open, in another process "
                f"{f'(pid {holder}) ' if holder else ''}or backend (one process and one backend per shard)"
            ) from exc
        try:  # who holds it, for the message another process shows (informative only: not the lock)
            os.ftruncate(fd, 0)
            os.pwrite(fd, str(os.getpid()).encode(), 0)
        except OSError as exc:
            log.debug("cannot record the owner pid in %s: %s", lock_path, exc)
        return fd

    # ---------------------------------------------------------------- open / create

    def _remove(self, *, collection: bool) -> None:
        """Remove what a removal killed midway left and, with ``collection``, the collection itself.

        The collection is renamed aside before it is deleted, so a kill leaves all of it or none."""
        gone = self._dir.with_name(f"{self._collection}.gone")
        try:
            if gone.exists():
                shutil.rmtree(gone)
            if collection and self._dir.exists():
                os.replace(self._dir, gone)
                shutil.rmtree(gone)
        except OSError as exc:
            raise StorageError(f"cannot remove qdrant collection {self._dir}: {exc}") from exc

    def _stored_dim(self) -> int | None:
        meta = self._dir / _META
        if not meta.exists():
            return None
        try:
            return int(json.loads(meta.read_text())["dim"])
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise StorageError(f"cannot read {meta}: {exc}") from exc

    def _open(self) -> Any:
        qe = self._qe
        stored = self._stored_dim()
        if stored is not None and stored != self._dim:
            raise ConflictError(
                reindex_hint(f"qdrant collection {self._collection!r} at {self._dir}", stored, self._dim)
            )
        config = qe.EdgeConfig(
            vectors=qe.EdgeVectorParams(size=self._dim, distance=qe.Distance.Cosine),
            optimizers=qe.EdgeOptimizersConfig(default_segment_number=_SEGMENTS),
            hnsw_config=qe.HnswIndexConfig(**_HNSW),
        )
        try:
            if not (self._shard_dir / "edge_config.json").exists():
                self._create(config)
            shard = qe.EdgeShard.load(str(self._shard_dir), config)
        except Exception as exc:  # qdrant-edge raises bare Exception; translated here, at the boundary
            message = str(exc)
            if "WouldBlock" in message or "lock" in message.lower():
                raise VectorStoreBusyError(
                    f"qdrant shard {self._shard_dir} is already open (one process and one backend per shard)"
                ) from exc
            if "ncompatible" in message:
                raise ConflictError(
                    f"qdrant collection {self._collection!r} at {self._dir}: {message}; "
                    "run `hermes-memory reindex`"
                ) from exc
            raise StorageError(f"cannot open qdrant shard {self._shard_dir}: {message}") from exc
        if stored is None:
            self._write_meta()
        return shard

    def _create(self, config: Any) -> None:
        """Build an empty shard with its indexes beside its place, then move it in with one rename.

        The engine writes its segments before its config, so a process killed inside ``create`` left a
        directory that neither loads nor can be created over. Built aside, the shard directory is there
        complete or not at all. A shard directory without its config is such a leftover: nothing was
        ever written to it (writes start after the open), so it is removed; the vectors are derived from
        Tier 2 in any case.
        """
        staging = self._dir / _STAGING
        try:
            private_dir(self._dir)
            for leftover in (staging, self._shard_dir):
                if leftover.exists():
                    shutil.rmtree(leftover)
        except OSError as exc:
            raise StorageError(f"cannot prepare the qdrant store {self._dir}: {exc}") from exc
        shard = self._qe.EdgeShard.create(str(staging), config)
        try:
            self._create_indexes(shard)
            shard.flush()
        finally:
            shard.close()
        try:
            os.replace(staging, self._shard_dir)
            fsync_dir(self._dir)
        except OSError as exc:
            raise StorageError(f"cannot move the new qdrant shard into {self._shard_dir}: {exc}") from exc

    def _create_indexes(self, shard: Any) -> None:
        qe = self._qe
        spec = collection_spec(self._collection)
        typed = (
            [(f, qe.PayloadSchemaType.Keyword) for f in spec.keyword_fields]
            + [(f, qe.PayloadSchemaType.Integer) for f in spec.integer_fields]
            + [(f, qe.PayloadSchemaType.Float) for f in spec.float_fields]
        )
        for field, schema in typed:
            shard.update(qe.UpdateOperation.create_field_index(field, schema))

    def _write_meta(self) -> None:
        meta = self._dir / _META
        tmp = meta.with_suffix(".tmp")
        try:
            write_private_text(
                tmp, json.dumps({"dim": self._dim, "distance": "cosine", "collection": self._collection})
            )
            os.replace(tmp, meta)
        except OSError as exc:
            raise StorageError(f"cannot write {meta}: {exc}") from exc

    # ---------------------------------------------------------------- protocol

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def collection(self) -> str:
        return self._collection

    def _check_open(self) -> None:
        if self._closed:
            raise StorageError(f"qdrant backend for {self._collection!r} is closed")

    def _call(self, action: str, fn: Any, *args: Any) -> Any:
        try:
            return fn(*args)
        except Exception as exc:  # qdrant-edge raises bare Exception; translated here, at the boundary
            raise BackendError(f"qdrant-edge {action} failed at {self._shard_dir}: {exc}") from exc

    def upsert(
        self, ids: Sequence[str], vectors: npt.ArrayLike, payloads: Sequence[Mapping[str, Any]]
    ) -> None:
        """Insert or overwrite by id (runs ``optimize()`` only when ``optimize_every`` is set).

        Raises ValidationError for bad input, BackendError on engine failure, StorageError if closed.
        """
        qe = self._qe
        keys = check_ids(ids)
        vecs = check_vectors(vectors, self._dim, len(keys))
        clean = check_payloads(payloads, len(keys))
        points = [
            qe.Point(point_uuid(key), vec.tolist(), {**payload, ID_KEY: key})
            for key, vec, payload in zip(keys, vecs, clean, strict=True)
        ]
        with self._lock:
            self._check_open()
            for start in range(0, len(points), _UPSERT_BATCH):
                op = qe.UpdateOperation.upsert_points(points[start : start + _UPSERT_BATCH])
                self._call("upsert", self._shard.update, op)
            self._pending += len(points)
            self._written = True
            if self._optimize_every is not None and self._pending >= self._optimize_every:
                self._optimize_locked()

    def optimize(self) -> bool:
        """Build HNSW for segments past the indexing threshold (blocking).

        Raises BackendError on engine failure, StorageError if closed.
        """
        with self._lock:
            self._check_open()
            return self._optimize_locked()

    def _optimize_locked(self) -> bool:
        changed = bool(self._call("optimize", self._shard.optimize))
        self._pending = 0
        return changed

    def search(
        self,
        vector: npt.ArrayLike,
        limit: int = 10,
        filters: Mapping[str, Any] | None = None,
        *,
        fields: Sequence[str] | None = None,
    ) -> list[VectorHit]:
        """Top ``limit`` by cosine. Raises ValidationError, BackendError, StorageError if closed."""
        qe = self._qe
        query = check_vectors(vector, self._dim, 1)[0]
        check_limit(limit)
        flt = to_filter(qe, parse_filters(filters))
        wanted = check_fields(fields)
        request = qe.QueryRequest(
            limit=limit,
            query=qe.Query.Nearest(query.tolist()),
            filter=flt,
            # selected fields only: the engine then copies less per hit (measured: a filtered top-300 of
            # 53k chunks, ~10 ms with the whole payload, ~5 ms with two fields)
            with_payload=True if wanted is None else [*wanted, ID_KEY],
            with_vector=False,
        )
        with self._lock:
            self._check_open()
            points = self._call("search", self._shard.query, request)
        hits = []
        for point in points:
            payload = dict(point.payload or {})
            item = payload.pop(ID_KEY, None)
            if item is None:  # only then: reading ``point.id`` builds a uuid.UUID per hit
                item = point.id
            hits.append(VectorHit(str(item), cosine_to_score(float(point.score)), payload))
        return hits

    def delete(self, ids: Sequence[str]) -> int:
        """Remove by id; returns how many existed. Raises ValidationError, BackendError, StorageError."""
        qe = self._qe
        keys = check_ids(ids)
        if not keys:
            return 0
        uuids = [point_uuid(k) for k in keys]
        with self._lock:
            self._check_open()
            found = self._call("retrieve", self._shard.retrieve, uuids, False, False)
            if found:
                self._call("delete", self._shard.update, qe.UpdateOperation.delete_points(uuids))
                self._written = True
        return len(found)

    def count(self, filters: Mapping[str, Any] | None = None) -> int:
        """Points matching ``filters`` (exact). Raises ValidationError, BackendError, StorageError."""
        qe = self._qe
        flt = to_filter(qe, parse_filters(filters))
        with self._lock:
            self._check_open()
            return int(self._call("count", self._shard.count, qe.CountRequest(exact=True, filter=flt)))

    def health(self) -> dict[str, Any]:
        """Status dict incl. how many vectors are HNSW-indexed. Raises BackendError, StorageError."""
        with self._lock:
            self._check_open()
            info = self._call("info", self._shard.info)
        return {
            "ok": True,
            "backend": self.name,
            "collection": self._collection,
            "dim": self._dim,
            "count": int(info.points_count),
            "indexed_vectors": int(info.indexed_vectors_count),
            "segments": int(info.segments_count),
            "pending_since_optimize": self._pending,
            "path": str(self._shard_dir),
        }

    @property
    def optimize_on_close(self) -> bool:
        """Whether ``close`` builds the index for what was written (see ``defer_optimize``)."""
        return self._optimize_on_close

    def defer_optimize(self) -> None:
        """Leave the HNSW build to a later ``optimize()`` (another process's close, the ``embed_queue``
        maintenance job): this backend's ``close`` then only flushes and releases the store."""
        with self._lock:
            self._optimize_on_close = False

    def flush(self) -> None:
        """Nothing to do: every write is durable when its call returns."""

    def close(self) -> None:
        """Optimize if anything was written (unless disabled), flush what was written, release the WAL
        lock; idempotent. (An update is in the engine's WAL once ``upsert``/``delete`` returns, so a
        process that exits without closing loses nothing: the next open replays it.)

        Raises BackendError when the engine fails to flush or close.
        """
        with self._lock:
            if self._closed:
                return
            self._closed = True
            try:
                if self._pending and self._optimize_on_close:
                    self._optimize_locked()
                if self._written:  # nothing new: no fsync of segments this process never touched
                    self._call("flush", self._shard.flush)
            finally:
                # release the WAL lock even when optimize/flush failed, then our ownership
                try:
                    self._call("close", self._shard.close)
                    self._tighten()  # segments the engine wrote since open
                finally:
                    os.close(self._owner)


def store_owner(path: str | os.PathLike[str], collection: str = MEMORY_CHUNKS) -> int | None:
    """The pid of the process that has the embedded store ``{path}/{collection}`` open, or None when no
    process has (or it holds the store without having written its pid: then 0).

    A probe for ``status``: it takes a shared lock for an instant, so a process opening the store at that
    very moment may find it busy once (and retries as any busy open does).
    """
    lock_path = Path(path).expanduser() / f"{collection}.lock"
    try:
        fd = os.open(lock_path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise StorageError(f"cannot read the qdrant store lock {lock_path}: {exc}") from exc
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            return _lock_holder(fd) or 0
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def _lock_holder(fd: int) -> int | None:
    """The pid the process holding a store lock wrote into it, if it did."""
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


__all__ = ["ID_KEY", "QdrantEdgeBackend", "store_owner", "to_filter"]
