"""Chroma: embedded (``PersistentClient(path)``) or a server (``HttpClient``) when a url is given.

Chroma never embeds here (``embedding_function=None``; we always pass vectors, so its default
embedder, which would download a model, is never reached). The collection uses cosine space; Chroma
reports distance = 1 - cos. Chroma's upsert merges metadata, so keys missing from the new payload
are explicitly cleared to keep "upsert overwrites" true.
"""

from __future__ import annotations

import importlib
import os
import socket
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import numpy.typing as npt

from hermes_memory.errors import (
    BackendError,
    ConfigError,
    ConflictError,
    DependencyMissingError,
    StorageError,
)
from hermes_memory.security.permissions import private_dir
from hermes_memory.tier3.backend import (
    MEMORY_CHUNKS,
    Condition,
    Payload,
    VectorHit,
    check_collection_name,
    check_dim,
    check_fields,
    check_ids,
    check_limit,
    check_payloads,
    check_vectors,
    cosine_to_score,
    parse_filters,
    reindex_hint,
    select_fields,
)

_DIM_KEY = "hermes_dim"
_OPS = {"gte": "$gte", "gt": "$gt", "lte": "$lte", "lt": "$lt"}


def to_where(conditions: Sequence[Condition]) -> dict[str, Any] | None:
    """Translate validated conditions into a Chroma ``where`` clause (None when there are none)."""
    clauses: list[dict[str, Any]] = []
    for cond in conditions:
        if cond.op == "eq":
            clauses.append({cond.field: {"$eq": cond.value}})
        elif cond.op == "in":
            clauses.append({cond.field: {"$in": list(cond.values)}})
        else:
            clauses.extend({cond.field: {_OPS[op]: bound}} for op, bound in cond.bounds)
    if not clauses:
        return None
    return clauses[0] if len(clauses) == 1 else {"$and": clauses}


# Chroma may share one HTTP client (and httpx session) between its clients of one server in a
# process; a session is closed only when the last backend using it closes.
_session_refs: dict[int, int] = {}
_session_lock = threading.Lock()


def _retain(session: Any) -> None:
    with _session_lock:
        _session_refs[id(session)] = _session_refs.get(id(session), 0) + 1


def _release(session: Any) -> bool:
    """Drop one reference; True when it was the last one."""
    with _session_lock:
        left = _session_refs.get(id(session), 1) - 1
        if left > 0:
            _session_refs[id(session)] = left
            return False
        _session_refs.pop(id(session), None)
        return True


def _probe(url: str, host: str, port: int, timeout: float) -> None:
    # Chroma's HTTP client has no timeout; a bounded TCP connect first turns "hangs" into a clear error.
    try:
        with socket.create_connection((host, port), timeout=timeout):
            pass
    except OSError as exc:
        raise BackendError(f"Chroma server {url} is unreachable: {exc}") from exc


class ChromaBackend:
    """One Chroma collection (cosine) of fixed dim; embedded at ``path`` or on the server at ``url``."""

    name = "chroma"
    buffered = False

    def __init__(
        self,
        *,
        collection: str = MEMORY_CHUNKS,
        dim: int,
        path: str | Path | None = None,
        url: str | None = None,
        api_key_env: str | None = None,
        timeout: float = 10.0,
        recreate: bool = False,
    ) -> None:
        self._collection_name = check_collection_name(collection)
        self._dim = check_dim(dim)
        self._closed = False
        self._sessions: list[Any] = []
        try:
            chromadb = importlib.import_module("chromadb")
            config = importlib.import_module("chromadb.config")
            errors = importlib.import_module("chromadb.errors")
            httpx = importlib.import_module("httpx")
        except ImportError as exc:
            raise DependencyMissingError(
                "the chroma backend needs chromadb: pip install 'hermes-memory-tiers[chroma]'"
            ) from exc
        self._errors: tuple[type[BaseException], ...] = (errors.ChromaError, httpx.HTTPError, ValueError)
        self._not_found: type[BaseException] = errors.NotFoundError
        settings = config.Settings(anonymized_telemetry=False)
        if url:
            self._where = url
            parts = urlsplit(url)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise ConfigError(f"chroma url must look like http://host:port, got {url!r}")
            port = parts.port or (443 if parts.scheme == "https" else 8000)
            _probe(url, parts.hostname, port, timeout)
            key = os.environ.get(api_key_env, "") if api_key_env else ""
            headers = {"x-chroma-token": key} if key else None
            with self._translate("connect"):
                self._client = chromadb.HttpClient(
                    host=parts.hostname,
                    port=port,
                    ssl=parts.scheme == "https",
                    headers=headers,
                    settings=settings,
                )
            # Chroma creates its httpx clients with timeout=None and never closes them: bound every
            # later request, and close them ourselves in close() (else their sockets leak).
            for owner in (self._client, getattr(self._client, "_admin_client", None)):
                session = getattr(getattr(owner, "_server", None), "_session", None)
                if session is not None:
                    session.timeout = httpx.Timeout(timeout)
                    _retain(session)
                    self._sessions.append(session)
        else:
            if path is None:
                raise ConfigError("the chroma backend needs tier3.path (embedded) or tier3.url (server)")
            self._where = str(Path(path).expanduser())
            try:
                private_dir(self._where)
            except OSError as exc:
                raise StorageError(f"cannot create chroma directory {self._where}: {exc}") from exc
            with self._translate("open"):
                self._client = chromadb.PersistentClient(path=self._where, settings=settings)
        try:
            self._col = self._open_collection(recreate)
            with self._translate("configure"):
                self._max_batch = int(self._client.get_max_batch_size())
        except BaseException:
            self.close()  # a failed open (e.g. dim conflict) must not leak the client or its sockets
            raise

    @contextmanager
    def _translate(self, action: str) -> Iterator[None]:
        try:
            yield
        except self._errors as exc:
            raise BackendError(f"chroma {action} failed at {self._where}: {exc}") from exc

    def _open_collection(self, recreate: bool) -> Any:
        with self._translate("open collection"):
            try:
                col = self._client.get_collection(self._collection_name, embedding_function=None)
            except self._not_found:
                col = None
            if col is not None and recreate:
                self._client.delete_collection(self._collection_name)
                col = None
            if col is None:
                return self._client.create_collection(
                    self._collection_name,
                    embedding_function=None,
                    configuration={"hnsw": {"space": "cosine"}},
                    metadata={_DIM_KEY: self._dim},
                )
        stored = (col.metadata or {}).get(_DIM_KEY)
        if stored is not None and int(stored) != self._dim:
            raise ConflictError(
                reindex_hint(
                    f"chroma collection {self._collection_name!r} at {self._where}", int(stored), self._dim
                )
            )
        return col

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def collection(self) -> str:
        return self._collection_name

    def _check_open(self) -> None:
        if self._closed:
            raise StorageError(f"chroma backend for {self._collection_name!r} is closed")

    def upsert(
        self, ids: Sequence[str], vectors: npt.ArrayLike, payloads: Sequence[Mapping[str, Any]]
    ) -> None:
        """Insert or overwrite by id, in batches Chroma accepts.

        Raises ValidationError for bad input, BackendError when Chroma fails, StorageError if closed.
        """
        keys = check_ids(ids)
        vecs = check_vectors(vectors, self._dim, len(keys))
        clean = check_payloads(payloads, len(keys))
        self._check_open()
        for start in range(0, len(keys), self._max_batch):
            stop = start + self._max_batch
            self._upsert_batch(keys[start:stop], vecs[start:stop], clean[start:stop])

    def _upsert_batch(self, keys: list[str], vecs: npt.NDArray[Any], clean: list[Payload]) -> None:
        with self._translate("upsert"):
            old = self._col.get(ids=keys, include=["metadatas"])
            previous = dict(zip(old["ids"], old["metadatas"] or [], strict=False))
            metadatas: list[dict[str, Any] | None] = []
            for key, payload in zip(keys, clean, strict=True):
                meta: dict[str, Any] = dict(payload)
                for stale in previous.get(key) or {}:
                    meta.setdefault(stale, None)  # None deletes the key in Chroma
                metadatas.append(meta or None)
            self._col.upsert(ids=keys, embeddings=vecs, metadatas=metadatas)

    def search(
        self,
        vector: npt.ArrayLike,
        limit: int = 10,
        filters: Mapping[str, Any] | None = None,
        *,
        fields: Sequence[str] | None = None,
    ) -> list[VectorHit]:
        """Top ``limit`` by cosine (HNSW, approximate). Raises ValidationError, BackendError, StorageError."""
        query = check_vectors(vector, self._dim, 1)
        check_limit(limit)
        where = to_where(parse_filters(filters))
        wanted = check_fields(fields)
        self._check_open()
        with self._translate("search"):
            # Chroma 1.x answers n_results > count (or > matches) with what it has, no warning;
            # it cannot select metadata keys, so only ``fields=()`` skips the metadatas
            res = self._col.query(
                query_embeddings=query,
                n_results=limit,
                where=where,
                include=["distances"] if wanted == () else ["metadatas", "distances"],
            )
        ids = res["ids"][0]
        distances = (res["distances"] or [[]])[0]
        metas = (res.get("metadatas") or [[None] * len(ids)])[0]
        hits = [
            VectorHit(item, cosine_to_score(1.0 - float(dist)), select_fields(meta or {}, wanted))
            for item, dist, meta in zip(ids, distances, metas, strict=True)
        ]
        hits.sort(key=lambda h: h.score, reverse=True)
        return hits

    def delete(self, ids: Sequence[str]) -> int:
        """Remove by id; returns how many existed. Raises ValidationError, BackendError, StorageError."""
        keys = check_ids(ids)
        self._check_open()
        if not keys:
            return 0
        with self._translate("delete"):
            existing = self._col.get(ids=keys, include=[])["ids"]
            if existing:
                self._col.delete(ids=list(existing))
        return len(existing)

    def count(self, filters: Mapping[str, Any] | None = None) -> int:
        """Points matching ``filters``. Raises ValidationError, BackendError, StorageError."""
        where = to_where(parse_filters(filters))
        self._check_open()
        with self._translate("count"):
            if where is None:
                return int(self._col.count())
            return len(self._col.get(where=where, include=[])["ids"])

    def health(self) -> dict[str, Any]:
        """Status dict. Raises BackendError when Chroma does not answer, StorageError if closed."""
        self._check_open()
        with self._translate("health"):
            self._client.heartbeat()
            count = int(self._col.count())
        return {
            "ok": True,
            "backend": self.name,
            "collection": self._collection_name,
            "dim": self._dim,
            "count": count,
            "location": self._where,
            "space": "cosine",
        }

    def flush(self) -> None:
        """Nothing to do: every write is durable when its call returns."""

    def close(self) -> None:
        """Release the client (Chroma refcounts clients per path); idempotent."""
        if self._closed:
            return
        self._closed = True
        close = getattr(self._client, "close", None)
        if close is not None:
            with self._translate("close"):
                close()
        for session in self._sessions:
            if _release(session):
                session.close()


__all__ = ["ChromaBackend", "to_where"]
