"""The vector backend seam: Protocol, VectorHit, the shared filter language, collections, registry.

A backend instance is one collection with a fixed dimension. Ids are our strings ("chunk:<uuid>").

Score: every backend reports ``score = (1 + cos) / 2`` clamped to [0, 1], higher = closer. It is a
monotone map of cosine similarity, so the order is the native order on every engine, and it does not
flatten all negative cosines to 0. (cos 0.4 -> 0.7, the seed's default ``min_score``.)

Payloads: flat mappings of str -> str | int | float | bool. ``None`` values are dropped (Chroma cannot
store them; absence is the same answer everywhere). Keys starting with "_" are reserved.

Filters (all conditions are ANDed)::

    {"session_id": "s1"}                         equality (str or int)
    {"source_type": {"eq": "session"}}           the same, spelled out
    {"category": {"in": ["a", "b"]}}             membership, all values str or all int
    {"timestamp": {"gte": 1.7e9, "lt": 1.8e9}}   numeric range with gte / gt / lte / lt
"""

from __future__ import annotations

import math
import os
import re
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from hermes_memory.errors import ConfigError, ValidationError
from hermes_memory.tier3.embedder import construct, load_attr

if TYPE_CHECKING:  # numpy is imported where used: a read that touches no vector never loads it
    import numpy as np
    import numpy.typing as npt


Scalar = str | int | float | bool
Payload = dict[str, Scalar]

MEMORY_CHUNKS = "memory_chunks"
ENTITY_EMBEDDINGS = "entity_embeddings"


@dataclass(frozen=True, slots=True)
class CollectionSpec:
    """A collection's payload fields; backends that index payloads use these lists."""

    name: str
    keyword_fields: tuple[str, ...]
    integer_fields: tuple[str, ...] = ()
    float_fields: tuple[str, ...] = ()
    text_fields: tuple[str, ...] = ()


# The seed's two collections (section 6.1) with scope added for per-profile/tenant filtering.
COLLECTIONS: dict[str, CollectionSpec] = {
    MEMORY_CHUNKS: CollectionSpec(
        MEMORY_CHUNKS,
        keyword_fields=(
            "chunk_id",
            "fact_id",
            "session_id",
            "source_type",
            "category",
            "content_hash",
            "scope",
            # recall searches each view (sentence / window / fact chunks) on its own
            "source_kind",
        ),
        integer_fields=("message_id",),
        float_fields=("timestamp",),
        text_fields=("text_preview",),
    ),
    ENTITY_EMBEDDINGS: CollectionSpec(
        ENTITY_EMBEDDINGS,
        keyword_fields=("entity_id", "entity_name", "entity_type", "scope"),
        text_fields=("description",),
    ),
}
TEXT_PREVIEW_CHARS = 200


def collection_spec(name: str) -> CollectionSpec:
    """The spec of a named collection; unknown names get an empty spec (no payload indexes)."""
    return COLLECTIONS.get(name, CollectionSpec(name, keyword_fields=()))


@dataclass(frozen=True, slots=True)
class VectorHit:
    """One search result: our id, score in [0, 1] (higher = closer), and the stored payload."""

    id: str
    score: float
    payload: Payload = field(default_factory=dict)


@runtime_checkable
class VectorBackend(Protocol):
    """One collection of fixed-dimension vectors with payloads, searched by cosine similarity."""

    name: str
    # True when writes are durable only after ``flush`` (the indexer then flushes in larger groups).
    buffered: bool

    @property
    def dim(self) -> int: ...

    @property
    def collection(self) -> str: ...

    def upsert(
        self, ids: Sequence[str], vectors: npt.ArrayLike, payloads: Sequence[Mapping[str, Any]]
    ) -> None:
        """Insert or overwrite points by id."""

    def search(
        self,
        vector: npt.ArrayLike,
        limit: int = 10,
        filters: Mapping[str, Any] | None = None,
        *,
        fields: Sequence[str] | None = None,
    ) -> list[VectorHit]:
        """The ``limit`` closest points matching ``filters``, best first; with ``fields`` each hit's
        payload holds only those keys (``()``: none, just id and score), else the whole payload."""

    def delete(self, ids: Sequence[str]) -> int:
        """Remove points by id; return how many existed."""

    def count(self, filters: Mapping[str, Any] | None = None) -> int:
        """Number of points (matching ``filters``)."""

    def health(self) -> dict[str, Any]:
        """A small status dict: backend, collection, dim, count, ok, and backend-specific keys."""

    def flush(self) -> None:
        """Make every write so far durable (a no-op for a backend that writes through)."""

    def close(self) -> None:
        """Persist and release resources; further calls raise."""


# ---------------------------------------------------------------- filters

Op = Literal["eq", "in", "range"]
_RANGE_OPS = ("gte", "gt", "lte", "lt")
_FIELD = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")


@dataclass(frozen=True, slots=True)
class Condition:
    """One validated filter condition; backends translate a tuple of these to their native form."""

    field: str
    op: Op
    value: Scalar | None = None
    values: tuple[str, ...] | tuple[int, ...] = ()
    bounds: tuple[tuple[str, float], ...] = ()  # (("gte", 1.0), ("lt", 2.0))


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _equality(key: str, value: Any) -> Condition:
    # No floats (exact float equality is a bug magnet: use a range) and no bools (qdrant-edge
    # turns True into 1 and then matches nothing).
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise ValidationError(f"filter {key!r}: equality needs a str or int, got {value!r}")
    return Condition(key, "eq", value=value)


def _parse_one(key: str, spec: Any) -> Condition:
    if not isinstance(spec, Mapping):
        return _equality(key, spec)
    ops = set(spec)
    if ops == {"eq"}:
        return _equality(key, spec["eq"])
    if ops == {"in"}:
        values = spec["in"]
        if isinstance(values, str | bytes) or not isinstance(values, Sequence) or not values:
            raise ValidationError(f"filter {key!r}: 'in' needs a non-empty list")
        items = list(values)
        if all(isinstance(v, str) for v in items):
            return Condition(key, "in", values=tuple(str(v) for v in items))
        if all(isinstance(v, int) and not isinstance(v, bool) for v in items):
            return Condition(key, "in", values=tuple(int(v) for v in items))
        raise ValidationError(f"filter {key!r}: 'in' values must be all str or all int")
    unknown = ops - set(_RANGE_OPS)
    if unknown or not ops:
        allowed = ["eq", "in", *_RANGE_OPS]
        raise ValidationError(f"filter {key!r}: unknown operator(s) {sorted(unknown)}; allowed: {allowed}")
    bounds = []
    for op in _RANGE_OPS:
        if op in spec:
            if not _is_number(spec[op]):
                raise ValidationError(f"filter {key!r}: {op} needs a finite number, got {spec[op]!r}")
            bounds.append((op, float(spec[op])))
    return Condition(key, "range", bounds=tuple(bounds))


def parse_filters(filters: Mapping[str, Any] | None) -> tuple[Condition, ...]:
    """Validate a filter mapping into conditions (empty tuple for None/{}).

    Raises ValidationError for a bad field name, unknown operator, or wrongly typed value.
    """
    if filters is None:
        return ()
    if not isinstance(filters, Mapping):
        raise ValidationError(f"filters must be a mapping, got {type(filters).__name__}")
    conditions = []
    for key, spec in filters.items():
        if not isinstance(key, str) or not _FIELD.match(key):
            raise ValidationError(f"filter field {key!r} is not a valid payload field name")
        conditions.append(_parse_one(key, spec))
    return tuple(conditions)


def check_fields(fields: Sequence[str] | None) -> tuple[str, ...] | None:
    """The payload keys a search returns, deduplicated (None: all of them).

    Raises ValidationError for a bare string or a name that is not a payload field name.
    """
    if fields is None:
        return None
    if isinstance(fields, str | bytes) or not isinstance(fields, Sequence):
        raise ValidationError("fields must be a sequence of payload field names, not a single string")
    out = tuple(dict.fromkeys(fields))
    for name in out:
        if not isinstance(name, str) or not _FIELD.match(name):
            raise ValidationError(f"field {name!r} is not a valid payload field name")
    return out


def select_fields(payload: Mapping[str, Any], fields: tuple[str, ...] | None) -> Payload:
    """A copy of ``payload`` with only ``fields`` (all of it for None); absent keys stay absent."""
    if fields is None:
        return dict(payload)
    return {key: payload[key] for key in fields if key in payload}


def _kind(value: object) -> str:
    # bool before int: True is an int in Python but never equals a stored 1 in the vector engines
    if isinstance(value, bool):
        return "bool"
    return type(value).__name__


def matches(payload: Mapping[str, Any], conditions: Sequence[Condition]) -> bool:
    """Evaluate conditions against one payload in Python (the in-process backend uses this).

    Equality and ``in`` compare values of the same kind only (str with str, int with int); ranges
    accept any number.
    """
    for cond in conditions:
        value = payload.get(cond.field)
        if value is None:
            return False
        if cond.op == "eq":
            ok = _kind(value) == _kind(cond.value) and value == cond.value
        elif cond.op == "in":
            ok = _kind(value) == _kind(cond.values[0]) and value in cond.values
        else:
            ok = _is_number(value) and all(_BOUND_CHECKS[op](float(value), b) for op, b in cond.bounds)
        if not ok:
            return False
    return True


_BOUND_CHECKS = {
    "gte": lambda v, b: v >= b,
    "gt": lambda v, b: v > b,
    "lte": lambda v, b: v <= b,
    "lt": lambda v, b: v < b,
}


# ---------------------------------------------------------------- input checks shared by backends

RESERVED_PREFIX = "_"
_ID_NAMESPACE = uuid.UUID("5d1f3c2e-8a4b-5e6f-9a0b-1c2d3e4f5a6b")


# Engines that take only int/UUID point ids (both Qdrant flavours) keep our string id under this key.
ID_KEY = "_hm_id"


def point_uuid(item_id: str) -> str:
    """The deterministic UUID (uuid5) a backend with uuid-only ids stores for our string id."""
    return str(uuid.uuid5(_ID_NAMESPACE, item_id))


def check_ids(ids: Sequence[str]) -> list[str]:
    """Ids as a list; raises ValidationError for a bare string, a blank id, or duplicates."""
    if isinstance(ids, str | bytes):
        raise ValidationError("ids must be a sequence of strings, not a single string")
    out = list(ids)
    for item in out:
        if not isinstance(item, str) or not item.strip():
            raise ValidationError(f"id {item!r} must be a non-empty string")
    if len(set(out)) != len(out):
        raise ValidationError("ids contain duplicates")
    return out


def check_vectors(vectors: npt.ArrayLike, dim: int, n: int | None = None) -> npt.NDArray[np.float32]:
    """Vectors as float32 (n, dim) with unit rows (a single 1-D vector becomes one row).

    Raises ValidationError for a wrong dimension or count, NaN/inf, or a zero vector.
    """
    import numpy as np

    try:
        arr = np.asarray(vectors, dtype=np.float32)
    except (TypeError, ValueError) as exc:
        raise ValidationError(f"vectors are not a numeric array: {exc}") from exc
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2 or arr.shape[1] != dim:
        raise ValidationError(f"vector dimension mismatch: collection dim is {dim}, got shape {arr.shape}")
    if n is not None and arr.shape[0] != n:
        raise ValidationError(f"got {arr.shape[0]} vectors for {n} ids")
    if not np.isfinite(arr).all():
        raise ValidationError("vectors contain NaN or infinite values")
    norms = np.linalg.norm(arr, axis=1, keepdims=True)
    if arr.shape[0] and float(norms.min()) == 0.0:
        raise ValidationError("a vector is all zeros (cosine is undefined)")
    out: npt.NDArray[np.float32] = (arr / norms).astype(np.float32) if arr.shape[0] else arr
    return out


def check_payloads(payloads: Sequence[Mapping[str, Any]], n: int) -> list[Payload]:
    """Payloads as plain dicts without None values; raises ValidationError for bad keys/values/count."""
    items = list(payloads)
    if len(items) != n:
        raise ValidationError(f"got {len(items)} payloads for {n} ids")
    out: list[Payload] = []
    for payload in items:
        if not isinstance(payload, Mapping):
            raise ValidationError(f"payload must be a mapping, got {type(payload).__name__}")
        clean: Payload = {}
        for key, value in payload.items():
            if not isinstance(key, str) or not key or key.startswith(RESERVED_PREFIX):
                raise ValidationError(f"payload key {key!r} is empty, not a string, or reserved ('_' prefix)")
            if value is None:
                continue
            if not isinstance(value, str | int | float | bool):
                raise ValidationError(f"payload {key!r}: {type(value).__name__} is not str/int/float/bool")
            if isinstance(value, float) and not math.isfinite(value):
                raise ValidationError(f"payload {key!r} is not finite")
            clean[key] = value
        out.append(clean)
    return out


def check_limit(limit: int) -> int:
    """Raises ValidationError unless ``limit`` is a positive int."""
    if isinstance(limit, bool) or not isinstance(limit, int) or limit <= 0:
        raise ValidationError(f"limit must be a positive integer, got {limit!r}")
    return limit


def cosine_to_score(cos: float) -> float:
    """The one score mapping all backends use: (1 + cos) / 2, clamped to [0, 1]."""
    return min(1.0, max(0.0, (1.0 + cos) / 2.0))


def check_collection_name(name: str) -> str:
    """Raises ValidationError unless the name is 3-63 chars of [A-Za-z0-9_-] (Chroma's rule, kept for all)."""
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_-]{1,61}[A-Za-z0-9]", name):
        raise ValidationError(f"collection name {name!r} must be 3-63 characters of letters, digits, _ or -")
    return name


def check_dim(dim: int) -> int:
    """Raises ConfigError unless ``dim`` is a positive int."""
    if isinstance(dim, bool) or not isinstance(dim, int) or dim <= 0:
        raise ConfigError(f"vector dim must be a positive integer, got {dim!r}")
    return dim


def reindex_hint(where: str, stored: int, wanted: int) -> str:
    """The ConflictError message for a collection opened with another dimension."""
    return (
        f"{where} holds {stored}-d vectors but the embedder produces {wanted}-d; "
        "run `hermes-memory reindex` to rebuild it with the new embedder"
    )


# ---------------------------------------------------------------- registry


@dataclass(frozen=True, slots=True)
class BackendInfo:
    """What the rest of the package needs to know about a backend without importing it."""

    target: str  # "module:Class", imported only when the backend is opened
    modules: tuple[str, ...]  # what Python must import for it (``hermes-memory status`` checks them)
    # A server client (``tier3.url``, ``api_key_env``, ``timeout_s``); without a url it keeps files too.
    server: bool = False
    folder_per_collection: bool = False  # its local mode locks its folder: one folder per collection
    summary: str | None = None  # the setup wizard offers it with this line (None: config only)
    # "module:function" giving the pid holding its embedded store (folder, collection), if it has one
    owner: str | None = None


# The only list of vector backend names: config, the CLI, the setup wizard, status and the contract
# suite derive theirs from it. Each backend keeps its files under ``tier3.path/<name>``.
BACKENDS: dict[str, BackendInfo] = {
    "qdrant": BackendInfo(
        "hermes_memory.tier3.qdrant_backend:QdrantEdgeBackend",
        ("qdrant_edge",),
        summary="the embedded Qdrant engine, no server (recommended)",
        owner="hermes_memory.tier3.qdrant_backend:store_owner",
    ),
    "chroma": BackendInfo(
        "hermes_memory.tier3.chroma_backend:ChromaBackend",
        ("chromadb",),
        server=True,
        summary="an embedded Chroma store",
    ),
    "memory": BackendInfo("hermes_memory.tier3.memory_backend:MemoryBackend", ()),
    "qdrant-client": BackendInfo(
        "hermes_memory.tier3.qdrant_client_backend:QdrantClientBackend",
        ("qdrant_client",),
        server=True,
        folder_per_collection=True,
    ),
}
DEFAULT_BACKEND = "qdrant"
# config `tier3.url` switches a backend to its client mode (DESIGN: `backend: qdrant` + `url: ...`)
_URL_ALIASES = {"qdrant": "qdrant-client"}


def resolve_backend(name: str, url: str | None) -> str:
    """The backend that opens for ``name`` (the one rule: with a server url, qdrant is qdrant-client)."""
    return _URL_ALIASES.get(name, name) if url else name


def backend_info(name: str) -> BackendInfo:
    """The registry entry of ``name``. Raises ConfigError for an unknown name."""
    info = BACKENDS.get(name)
    if info is None:
        raise ConfigError(f"unknown vector backend {name!r}; choose one of {sorted(BACKENDS)}")
    return info


def store_owner(name: str, folder: str | os.PathLike[str], collection: str = MEMORY_CHUNKS) -> int | None:
    """The pid of the process holding backend ``name``'s embedded store in ``folder`` (0 when it wrote
    none), or None when none does or the backend has no such store. Imports only that backend's module."""
    info = backend_info(name)
    if info.owner is None:
        return None
    owner: Any = load_attr(info.owner)
    found: int | None = owner(folder, collection)
    return found


def make_backend(name: str, *, collection: str, dim: int, **opts: Any) -> VectorBackend:
    """Open ``collection`` (vectors of ``dim``) on backend ``name``; with a url, qdrant -> qdrant-client.

    Common options: path, url, recreate. Raises ConfigError (unknown name/option),
    DependencyMissingError (extra absent), ConflictError (existing collection has another dim),
    BackendError (server unreachable), StorageError (path locked or unusable).
    """
    name = resolve_backend(name, opts.get("url"))
    backend: VectorBackend = construct(
        backend_info(name).target, "backend", name, {"collection": collection, "dim": dim, **opts}
    )
    return backend


__all__ = [
    "BACKENDS",
    "COLLECTIONS",
    "DEFAULT_BACKEND",
    "ENTITY_EMBEDDINGS",
    "ID_KEY",
    "MEMORY_CHUNKS",
    "TEXT_PREVIEW_CHARS",
    "BackendInfo",
    "CollectionSpec",
    "Condition",
    "Payload",
    "Scalar",
    "VectorBackend",
    "VectorHit",
    "backend_info",
    "check_collection_name",
    "check_dim",
    "check_fields",
    "check_ids",
    "check_limit",
    "check_payloads",
    "check_vectors",
    "collection_spec",
    "cosine_to_score",
    "make_backend",
    "matches",
    "parse_filters",
    "point_uuid",
    "reindex_hint",
    "resolve_backend",
    "select_fields",
    "store_owner",
]
