"""A Qdrant server or cluster through qdrant-client (``url``), or its in-process modes for tests.

``url`` is the production mode (scale beyond one machine). ``location=":memory:"`` and ``path=`` are
qdrant-client's local modes: same client API, exact brute force in Python, slow past ~20k points —
for tests only, never a default. Ids map to ``uuid5`` like the embedded engine; the original id is
kept in the payload under ``_hm_id``. The API key is read from the env var named by ``api_key_env``.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy.typing as npt

from hermes_memory.errors import (
    BackendError,
    ConfigError,
    ConflictError,
    DependencyMissingError,
    StorageError,
    VectorStoreBusyError,
)
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

_UPSERT_BATCH = 512


def to_filter(models: Any, conditions: Sequence[Condition]) -> Any:
    """Translate validated conditions into a qdrant-client ``models.Filter`` (None when there are none)."""
    if not conditions:
        return None
    must = []
    for cond in conditions:
        if cond.op == "eq":
            must.append(models.FieldCondition(key=cond.field, match=models.MatchValue(value=cond.value)))
        elif cond.op == "in":
            must.append(models.FieldCondition(key=cond.field, match=models.MatchAny(any=list(cond.values))))
        else:
            must.append(models.FieldCondition(key=cond.field, range=models.Range(**dict(cond.bounds))))
    return models.Filter(must=must)


class QdrantClientBackend:
    """One Qdrant collection (cosine) of fixed dim, on a server (``url``) or in qdrant-client's local mode."""

    name = "qdrant-client"
    buffered = False

    def __init__(
        self,
        *,
        collection: str = MEMORY_CHUNKS,
        dim: int,
        url: str | None = None,
        location: str | None = None,
        path: str | Path | None = None,
        api_key_env: str | None = None,
        timeout: float = 10.0,
        recreate: bool = False,
    ) -> None:
        self._collection = check_collection_name(collection)
        self._dim = check_dim(dim)
        self._closed = False
        if sum(x is not None for x in (url, location, path)) != 1:
            raise ConfigError("qdrant-client needs exactly one of url (server), location=':memory:' or path")
        try:
            qc = importlib.import_module("qdrant_client")
            self._models = importlib.import_module("qdrant_client.models")
            exceptions = importlib.import_module("qdrant_client.http.exceptions")
            httpx = importlib.import_module("httpx")
        except ImportError as exc:
            raise DependencyMissingError(
                "the qdrant-client backend needs qdrant-client: pip install 'hermes-memory-tiers[qdrant]'"
            ) from exc
        self._errors: tuple[type[BaseException], ...] = (exceptions.ApiException, httpx.HTTPError, OSError)
        self._remote = url is not None
        if url is not None:
            self._where = url
            key = os.environ.get(api_key_env, "") if api_key_env else ""
            # check_compatibility=False: the version probe would warn (not raise) when the server is down
            self._client = qc.QdrantClient(
                url=url, api_key=key or None, timeout=max(1, round(timeout)), check_compatibility=False
            )
        elif location is not None:
            if location != ":memory:":
                raise ConfigError(
                    f"qdrant-client location must be ':memory:' (or use url/path), got {location!r}"
                )
            self._where = location
            self._client = qc.QdrantClient(location=location)
        else:
            self._where = str(Path(str(path)).expanduser())
            self._client = self._local_client(qc, self._where)
        try:
            self._open_collection(recreate)
        except BaseException:
            self.close()  # a failed open (e.g. dim conflict) must not keep the client or its file lock
            raise

    def _local_client(self, qc: Any, where: str) -> Any:
        try:
            return qc.QdrantClient(path=where)
        # qdrant-client's file lock: "Storage folder ... is already accessed by another instance"
        except RuntimeError as exc:
            raise VectorStoreBusyError(f"qdrant local storage {where} is already open: {exc}") from exc

    def _call(self, action: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except self._errors as exc:
            raise BackendError(f"qdrant {action} failed at {self._where}: {exc}") from exc

    def _open_collection(self, recreate: bool) -> None:
        models = self._models
        name = self._collection
        exists = bool(self._call("connect", self._client.collection_exists, name))
        if exists and recreate:
            self._call("drop collection", self._client.delete_collection, name)
            exists = False
        if exists:
            info = self._call("read collection", self._client.get_collection, name)
            stored = info.config.params.vectors.size
            if int(stored) != self._dim:
                raise ConflictError(
                    reindex_hint(f"qdrant collection {name!r} at {self._where}", int(stored), self._dim)
                )
            return
        params = models.VectorParams(size=self._dim, distance=models.Distance.COSINE)
        self._call("create collection", self._client.create_collection, name, vectors_config=params)
        if self._remote:
            # local mode ignores payload indexes and warns about it, so only a server gets them
            spec = collection_spec(name)
            typed = (
                [(f, models.PayloadSchemaType.KEYWORD) for f in spec.keyword_fields]
                + [(f, models.PayloadSchemaType.INTEGER) for f in spec.integer_fields]
                + [(f, models.PayloadSchemaType.FLOAT) for f in spec.float_fields]
            )
            for field, schema in typed:
                self._call("index", self._client.create_payload_index, name, field, field_schema=schema)

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def collection(self) -> str:
        return self._collection

    def _check_open(self) -> None:
        if self._closed:
            raise StorageError(f"qdrant-client backend for {self._collection!r} is closed")

    def upsert(
        self, ids: Sequence[str], vectors: npt.ArrayLike, payloads: Sequence[Mapping[str, Any]]
    ) -> None:
        """Insert or overwrite by id. Raises ValidationError, BackendError, StorageError if closed."""
        keys = check_ids(ids)
        vecs = check_vectors(vectors, self._dim, len(keys))
        clean = check_payloads(payloads, len(keys))
        self._check_open()
        points = [
            self._models.PointStruct(id=point_uuid(k), vector=v.tolist(), payload={**p, ID_KEY: k})
            for k, v, p in zip(keys, vecs, clean, strict=True)
        ]
        for start in range(0, len(points), _UPSERT_BATCH):
            batch = points[start : start + _UPSERT_BATCH]
            self._call("upsert", self._client.upsert, self._collection, points=batch, wait=True)

    def search(
        self,
        vector: npt.ArrayLike,
        limit: int = 10,
        filters: Mapping[str, Any] | None = None,
        *,
        fields: Sequence[str] | None = None,
    ) -> list[VectorHit]:
        """Top ``limit`` by cosine. Raises ValidationError, BackendError, StorageError if closed."""
        query = check_vectors(vector, self._dim, 1)[0]
        check_limit(limit)
        flt = to_filter(self._models, parse_filters(filters))
        wanted = check_fields(fields)
        self._check_open()
        res = self._call(
            "search",
            self._client.query_points,
            self._collection,
            query=query.tolist(),
            limit=limit,
            query_filter=flt,
            with_payload=True if wanted is None else [*wanted, ID_KEY],
        )
        hits = []
        for point in res.points:
            payload = dict(point.payload or {})
            item = str(payload.pop(ID_KEY, point.id))
            hits.append(VectorHit(item, cosine_to_score(float(point.score)), payload))
        return hits

    def delete(self, ids: Sequence[str]) -> int:
        """Remove by id; returns how many existed. Raises ValidationError, BackendError, StorageError."""
        keys = check_ids(ids)
        self._check_open()
        if not keys:
            return 0
        uuids = [point_uuid(k) for k in keys]
        found = self._call(
            "retrieve", self._client.retrieve, self._collection, uuids, with_payload=False, with_vectors=False
        )
        if found:
            selector = self._models.PointIdsList(points=[p.id for p in found])
            self._call("delete", self._client.delete, self._collection, points_selector=selector, wait=True)
        return len(found)

    def count(self, filters: Mapping[str, Any] | None = None) -> int:
        """Points matching ``filters`` (exact). Raises ValidationError, BackendError, StorageError."""
        flt = to_filter(self._models, parse_filters(filters))
        self._check_open()
        res = self._call("count", self._client.count, self._collection, count_filter=flt, exact=True)
        return int(res.count)

    def health(self) -> dict[str, Any]:
        """Status dict. Raises BackendError when the server does not answer, StorageError if closed."""
        self._check_open()
        count = self.count()
        return {
            "ok": True,
            "backend": self.name,
            "collection": self._collection,
            "dim": self._dim,
            "count": count,
            "location": self._where,
            "exact": not self._remote,
        }

    def flush(self) -> None:
        """Nothing to do: every write is durable when its call returns."""

    def close(self) -> None:
        """Release the client (and the local-mode file lock); idempotent. Raises BackendError."""
        if self._closed:
            return
        self._closed = True
        self._call("close", self._client.close)


__all__ = ["ID_KEY", "QdrantClientBackend", "to_filter"]
