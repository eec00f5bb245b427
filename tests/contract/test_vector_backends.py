"""The vector backend contract: the same test bodies run against every backend (see conftest.CASES)."""

from __future__ import annotations

import socket
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import pytest

from hermes_memory.errors import BackendError, ConfigError, ConflictError, StorageError, ValidationError
from hermes_memory.tier3.backend import (
    BACKENDS,
    ENTITY_EMBEDDINGS,
    VectorBackend,
    VectorHit,
    make_backend,
    resolve_backend,
)
from hermes_memory.tier3.chunks import chunk_payload, entity_payload
from hermes_memory.tier3.hashing_embedder import HashingEmbedder

if TYPE_CHECKING:
    from conftest import Case, CaseSpec

DIM = 8


def unit(rows: npt.ArrayLike) -> npt.NDArray[np.float32]:
    arr = np.asarray(rows, dtype=np.float32)
    out: npt.NDArray[np.float32] = (arr / np.linalg.norm(arr, axis=-1, keepdims=True)).astype(np.float32)
    return out


def random_unit(n: int, dim: int = DIM, seed: int = 0) -> npt.NDArray[np.float32]:
    return unit(np.random.default_rng(seed).normal(size=(n, dim)))


def assert_well_formed(hits: list[VectorHit]) -> None:
    scores = [h.score for h in hits]
    assert all(0.0 <= s <= 1.0 for s in scores), scores
    assert scores == sorted(scores, reverse=True), scores


# 12 points: 3 sessions x 2 source types, categories alternate, timestamps 100..111
def seed_points(backend: VectorBackend) -> tuple[list[str], npt.NDArray[np.float32]]:
    ids = [f"chunk:{i}" for i in range(12)]
    vecs = random_unit(12, seed=1)
    payloads = [
        chunk_payload(
            chunk_id=ids[i],
            text=f"turn number {i}",
            source_type="session" if i % 2 == 0 else "fact",
            timestamp=100.0 + i,
            session_id=f"s{i % 3}",
            message_id=i,
            category="preference" if i % 4 < 2 else "event",
            scope=f"agent-{i % 4}",
        )
        for i in range(12)
    ]
    backend.upsert(ids, vecs, payloads)
    return ids, vecs


def expected_ids(pred: Any) -> set[str]:
    out = set()
    for i in range(12):
        p = {
            "source_type": "session" if i % 2 == 0 else "fact",
            "timestamp": 100.0 + i,
            "session_id": f"s{i % 3}",
            "message_id": i,
            "category": "preference" if i % 4 < 2 else "event",
            "scope": f"agent-{i % 4}",
        }
        if pred(p):
            out.add(f"chunk:{i}")
    return out


FILTER_CASES = [
    pytest.param({"session_id": "s1"}, lambda p: p["session_id"] == "s1", id="session"),
    pytest.param({"source_type": {"eq": "fact"}}, lambda p: p["source_type"] == "fact", id="source_type"),
    pytest.param({"category": "event"}, lambda p: p["category"] == "event", id="category"),
    pytest.param(
        {"timestamp": {"gte": 103.0, "lte": 107.0}}, lambda p: 103 <= p["timestamp"] <= 107, id="time-range"
    ),
    pytest.param(
        {"timestamp": {"gt": 103, "lt": 107}}, lambda p: 103 < p["timestamp"] < 107, id="open-range"
    ),
    pytest.param({"session_id": {"in": ["s0", "s2"]}}, lambda p: p["session_id"] in ("s0", "s2"), id="in"),
    pytest.param({"message_id": {"in": [1, 5, 99]}}, lambda p: p["message_id"] in (1, 5), id="in-int"),
    pytest.param({"message_id": 4}, lambda p: p["message_id"] == 4, id="eq-int"),
    # what a scope view sends: its readable scopes, match-any (semantic search of a scoped agent)
    pytest.param(
        {"scope": {"in": ["agent-1", "agent-3"]}, "session_id": "s0"},
        lambda p: p["scope"] in ("agent-1", "agent-3") and p["session_id"] == "s0",
        id="scope-view",
    ),
    pytest.param(
        {"session_id": "s0", "source_type": "session", "timestamp": {"gte": 103.0}},
        lambda p: p["session_id"] == "s0" and p["source_type"] == "session" and p["timestamp"] >= 103,
        id="combined",
    ),
    pytest.param({"session_id": "nobody"}, lambda p: False, id="no-match"),
]


def test_search_finds_the_nearest_first_with_scores_in_unit_range(case: Case, collection_name: str) -> None:
    backend = case.open(collection=collection_name)
    _, vecs = seed_points(backend)
    hits = backend.search(vecs[5], limit=4)
    assert hits[0].id == "chunk:5"
    assert hits[0].score == pytest.approx(1.0, abs=1e-3)
    assert len(hits) == 4
    assert_well_formed(hits)
    assert hits[0].payload["session_id"] == "s2"
    assert hits[0].payload["message_id"] == 5
    assert hits[0].payload["timestamp"] == pytest.approx(105.0)


def test_search_order_and_scores_match_exact_cosine(case: Case, collection_name: str) -> None:
    backend = case.open(collection=collection_name)
    vecs = random_unit(200, seed=2)
    ids = [f"p{i}" for i in range(200)]
    backend.upsert(ids, vecs, [{"n": i} for i in range(200)])
    query = random_unit(1, seed=3)[0]
    cos = vecs @ query
    want = [ids[i] for i in np.argsort(-cos)[:10]]
    hits = backend.search(query, limit=10)
    assert [h.id for h in hits] == want
    for hit in hits:
        assert hit.score == pytest.approx((1 + cos[int(hit.id[1:])]) / 2, abs=1e-3)


def test_opposite_vector_scores_near_zero(case: Case, collection_name: str) -> None:
    backend = case.open(collection=collection_name)
    v = unit([[1.0] + [0.0] * (DIM - 1)])
    backend.upsert(["a", "b"], np.vstack([v, -v]), [{}, {}])
    hits = backend.search(v[0], limit=2)
    assert [h.id for h in hits] == ["a", "b"]
    assert hits[1].score == pytest.approx(0.0, abs=1e-3)
    assert_well_formed(hits)


def test_upsert_overwrites_vector_and_whole_payload(case: Case, collection_name: str) -> None:
    backend = case.open(collection=collection_name)
    v = random_unit(2, seed=4)
    backend.upsert(["a"], v[:1], [{"session_id": "s1", "category": "old"}])
    backend.upsert(["a"], v[1:], [{"session_id": "s2"}])
    assert backend.count() == 1
    hit = backend.search(v[1], limit=1)[0]
    assert hit.id == "a"
    assert hit.score == pytest.approx(1.0, abs=1e-3)
    assert hit.payload == {"session_id": "s2"}
    assert backend.count({"category": "old"}) == 0


def test_none_payload_values_are_dropped_everywhere(case: Case, collection_name: str) -> None:
    backend = case.open(collection=collection_name)
    backend.upsert(["a", "b"], random_unit(2), [{"fact_id": None, "x": "y"}, {}])
    by_id = {h.id: h.payload for h in backend.search(random_unit(1, seed=9)[0], limit=5)}
    assert by_id == {"a": {"x": "y"}, "b": {}}


@pytest.mark.parametrize(("filters", "pred"), FILTER_CASES)
def test_each_filter_kind_in_search_and_count(
    case: Case, collection_name: str, filters: Any, pred: Any
) -> None:
    backend = case.open(collection=collection_name)
    _, vecs = seed_points(backend)
    want = expected_ids(pred)
    hits = backend.search(vecs[0], limit=12, filters=filters)
    assert {h.id for h in hits} == want
    assert_well_formed(hits)
    assert backend.count(filters) == len(want)


def test_filtered_search_respects_limit_and_order(case: Case, collection_name: str) -> None:
    backend = case.open(collection=collection_name)
    _, vecs = seed_points(backend)
    hits = backend.search(vecs[3], limit=2, filters={"source_type": "fact"})
    assert hits[0].id == "chunk:3"
    assert len(hits) == 2
    assert all(h.payload["source_type"] == "fact" for h in hits)


BAD_FILTERS: list[Any] = [
    {"timestamp": {"between": [1, 2]}},
    {"session_id": {"ne": "s1"}},
    {"session_id": {"in": []}},
    {"session_id": {"in": ["a", 1]}},
    {"timestamp": {"gte": "yesterday"}},
    {"timestamp": 1.5},
    {"flag": True},
    {"bad field": "x"},
    {"session_id": {"eq": {"in": ["x"]}}},
    [("session_id", "s1")],
]


def test_invalid_filters_raise_validation_error(case: Case, collection_name: str) -> None:
    backend = case.open(collection=collection_name)
    seed_points(backend)
    for bad in BAD_FILTERS:
        with pytest.raises(ValidationError):
            backend.search(random_unit(1)[0], filters=bad)
        with pytest.raises(ValidationError):
            backend.count(bad)


def test_delete_returns_how_many_existed(case: Case, collection_name: str) -> None:
    backend = case.open(collection=collection_name)
    _, vecs = seed_points(backend)
    assert backend.delete(["chunk:1", "chunk:2", "missing"]) == 2
    assert backend.count() == 10
    assert backend.count({"session_id": "s1"}) == 3  # 1, 4, 7, 10 minus 1
    assert "chunk:1" not in {h.id for h in backend.search(vecs[1], limit=12)}
    assert backend.delete(["chunk:1"]) == 0
    assert backend.delete([]) == 0


def test_count_with_and_without_filter(case: Case, collection_name: str) -> None:
    backend = case.open(collection=collection_name)
    assert backend.count() == 0
    seed_points(backend)
    assert backend.count() == 12
    assert backend.count(None) == 12
    assert backend.count({}) == 12
    assert backend.count({"source_type": "session"}) == 6


def test_empty_collection_search_returns_nothing(case: Case, collection_name: str) -> None:
    backend = case.open(collection=collection_name)
    assert backend.search(random_unit(1)[0], limit=5) == []
    assert backend.search(random_unit(1)[0], limit=5, filters={"session_id": "s1"}) == []


def test_flush_is_part_of_the_protocol_and_leaves_the_backend_open(case: Case, collection_name: str) -> None:
    backend = case.open(collection=collection_name)
    assert isinstance(backend, VectorBackend)  # runtime check of every member, flush and buffered too
    assert isinstance(backend.buffered, bool)
    _, vecs = seed_points(backend)
    backend.flush()
    backend.flush()  # nothing new: still fine
    assert backend.count() == 12
    assert backend.search(vecs[3], limit=1)[0].id == "chunk:3"


def test_data_survives_close_and_reopen(case: Case, collection_name: str) -> None:
    durable = case.durable()
    backend = durable.open(collection=collection_name)
    _, vecs = seed_points(backend)
    backend.delete(["chunk:0"])
    backend.close()
    again = durable.open(collection=collection_name)
    assert again.count() == 11
    assert again.search(vecs[7], limit=1)[0].id == "chunk:7"
    assert again.count({"session_id": "s1"}) == 4


def test_wrong_dimension_on_upsert_and_search_is_a_validation_error(case: Case, collection_name: str) -> None:
    backend = case.open(collection=collection_name)
    with pytest.raises(ValidationError, match="dimension"):
        backend.upsert(["a"], random_unit(1, dim=DIM + 1), [{}])
    with pytest.raises(ValidationError, match="dimension"):
        backend.search(random_unit(1, dim=DIM - 1)[0])
    assert backend.count() == 0


def test_reopen_with_another_dimension_is_a_conflict_naming_reindex(case: Case, collection_name: str) -> None:
    durable = case.durable()
    backend = durable.open(collection=collection_name, dim=DIM)
    backend.upsert(["a"], random_unit(1), [{}])
    backend.close()
    with pytest.raises(ConflictError, match="hermes-memory reindex"):
        durable.open(collection=collection_name, dim=DIM * 2)


def test_recreate_drops_the_collection_and_may_change_dim(case: Case, collection_name: str) -> None:
    durable = case.durable()
    backend = durable.open(collection=collection_name, dim=DIM)
    backend.upsert(["a"], random_unit(1), [{}])
    backend.close()
    fresh = durable.open(collection=collection_name, dim=DIM * 2, recreate=True)
    assert fresh.count() == 0
    assert fresh.dim == DIM * 2
    fresh.upsert(["b"], random_unit(1, dim=DIM * 2), [{}])
    assert fresh.count() == 1


def test_bad_inputs_are_validation_errors(case: Case, collection_name: str) -> None:
    backend = case.open(collection=collection_name)
    v = random_unit(2)
    with pytest.raises(ValidationError):
        backend.upsert(["a", "a"], v, [{}, {}])
    with pytest.raises(ValidationError):
        backend.upsert(["a", "b"], v, [{}])
    with pytest.raises(ValidationError):
        backend.upsert(["a"], np.zeros((1, DIM)), [{}])
    with pytest.raises(ValidationError):
        backend.upsert(["a"], v[:1], [{"_hm_id": "x"}])
    with pytest.raises(ValidationError):
        backend.upsert(["a"], v[:1], [{"nested": {"a": 1}}])
    with pytest.raises(ValidationError):
        backend.search(v[0], limit=0)
    assert backend.count() == 0


def test_collections_on_one_location_are_independent(case: Case, collection_name: str) -> None:
    chunks = case.open(collection=collection_name)
    other = collection_name + "_e" if collection_name != "memory_chunks" else ENTITY_EMBEDDINGS
    entities = case.open(collection=other, dim=DIM * 2)
    seed_points(chunks)
    entities.upsert(
        ["entity:1"],
        random_unit(1, dim=DIM * 2),
        [entity_payload(entity_id="e1", entity_name="Rex", entity_type="pet", description="a puppy")],
    )
    assert chunks.count() == 12
    assert entities.count() == 1
    assert entities.count({"entity_type": "pet"}) == 1
    hit = entities.search(random_unit(1, dim=DIM * 2)[0], limit=3)[0]
    assert hit.payload == {
        "entity_id": "e1",
        "entity_name": "Rex",
        "entity_type": "pet",
        "description": "a puppy",
    }


def test_closed_backend_refuses_calls(case: Case, collection_name: str) -> None:
    backend = case.open(collection=collection_name)
    backend.close()
    backend.close()  # idempotent
    with pytest.raises(StorageError):
        backend.search(random_unit(1)[0])
    with pytest.raises(StorageError):
        backend.count()


def test_health_reports_the_collection(case: Case, collection_name: str) -> None:
    backend = case.open(collection=collection_name)
    seed_points(backend)
    health = backend.health()
    assert health["ok"] is True
    assert health["collection"] == collection_name
    assert health["dim"] == DIM
    assert health["count"] == 12


def test_hashing_embedder_texts_find_their_topic(case: Case, collection_name: str) -> None:
    embedder = HashingEmbedder(dim=64)
    texts = ["I adopted a puppy named Rex", "The quarterly report is due Friday", "Paris is lovely in spring"]
    backend = case.open(collection=collection_name, dim=64)
    backend.upsert(["t0", "t1", "t2"], embedder.embed_document(texts), [{"i": i} for i in range(3)])
    hits = backend.search(embedder.embed_query(["when is the quarterly report due"])[0], limit=3)
    assert hits[0].id == "t1"


def test_ten_thousand_vectors_each_query_finds_itself(case: Case, collection_name: str) -> None:
    n, dim = 10_000, 32
    backend = case.open(collection=collection_name, dim=dim)
    vecs = random_unit(n, dim=dim, seed=5)
    ids = [f"chunk:{i}" for i in range(n)]
    backend.upsert(ids, vecs, [{"session_id": f"s{i % 10}"} for i in range(n)])
    assert backend.count() == n
    for i in (0, 4_321, 9_999):
        hits = backend.search(vecs[i], limit=5)
        assert hits[0].id == ids[i]
        assert_well_formed(hits)
    hits = backend.search(vecs[7_777], limit=5, filters={"session_id": "s7"})
    assert hits[0].id == "chunk:7777"
    assert all(h.payload["session_id"] == "s7" for h in hits)


# ---------------------------------------------------------------- backend-specific contract points


def test_qdrant_edge_second_open_of_a_shard_is_a_storage_error(tmp_path: Any) -> None:
    first = make_backend("qdrant", path=tmp_path, collection="memory_chunks", dim=DIM)
    try:
        with pytest.raises(StorageError, match="already open"):
            make_backend("qdrant", path=tmp_path, collection="memory_chunks", dim=DIM)
    finally:
        first.close()
    reopened = make_backend("qdrant", path=tmp_path, collection="memory_chunks", dim=DIM)
    reopened.close()


def test_qdrant_edge_opens_over_a_shard_whose_creation_was_killed(tmp_path: Any) -> None:
    # The engine writes a new shard's segments before its config: a kill inside its create left a
    # directory that could neither be loaded nor created over, so the store never opened again.
    qe = pytest.importorskip("qdrant_edge")
    half = tmp_path / "memory_chunks" / "shard"
    params = qe.EdgeVectorParams(size=DIM, distance=qe.Distance.Cosine)
    shard = qe.EdgeShard.create(str(half), qe.EdgeConfig(vectors=params))
    shard.close()
    (half / "edge_config.json").unlink()
    (tmp_path / "memory_chunks" / "shard.new" / "segments").mkdir(parents=True)  # a build killed aside
    (tmp_path / "memory_chunks.gone" / "shard").mkdir(parents=True)  # a removal killed midway
    backend = make_backend("qdrant", path=tmp_path, collection="memory_chunks", dim=DIM)
    try:
        vecs = random_unit(3, seed=3)
        backend.upsert(["a", "b", "c"], vecs, [{"i": i} for i in range(3)])
        assert backend.search(vecs[1], limit=1)[0].id == "b"
    finally:
        backend.close()
    assert not (tmp_path / "memory_chunks" / "shard.new").exists()
    assert not (tmp_path / "memory_chunks.gone").exists()
    reopened = make_backend("qdrant", path=tmp_path, collection="memory_chunks", dim=DIM)
    try:
        assert reopened.count() == 3
    finally:
        reopened.close()


def test_qdrant_edge_optimizes_only_when_asked(tmp_path: Any) -> None:
    vecs = random_unit(600, seed=8)
    ids = [f"p{i}" for i in range(600)]
    lazy = make_backend("qdrant", path=tmp_path / "a", collection="memory_chunks", dim=DIM)
    try:
        lazy.upsert(ids, vecs, [{"i": i} for i in range(600)])
        assert lazy.health()["pending_since_optimize"] == 600  # writes never block on an index build
        assert lazy.search(vecs[42], limit=1)[0].id == "p42"
    finally:
        lazy.close()
    eager = make_backend(
        "qdrant", path=tmp_path / "b", collection="memory_chunks", dim=DIM, optimize_every=300
    )
    try:
        eager.upsert(ids, vecs, [{"i": i} for i in range(600)])
        assert eager.health()["pending_since_optimize"] == 0
        assert eager.search(vecs[42], limit=1)[0].id == "p42"
    finally:
        eager.close()


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port  # nothing listens once the socket is closed


# Every registered backend that talks to a server once a url is set (qdrant through its client).
URL_BACKENDS = [name for name in BACKENDS if BACKENDS[resolve_backend(name, "http://server")].server]


def test_every_registered_backend_has_a_contract_case(case_specs: dict[str, CaseSpec]) -> None:
    covered = {spec.backend for spec in case_specs.values()}
    assert set(BACKENDS) == covered, f"registered {sorted(BACKENDS)}, with a case {sorted(covered)}"


def test_the_url_backends_are_the_server_clients() -> None:
    # the parametrised test below runs over the server clients and what a url switches to one
    assert {resolve_backend(name, "http://server") for name in URL_BACKENDS} == {
        name for name, info in BACKENDS.items() if info.server
    }


@pytest.mark.parametrize("name", URL_BACKENDS)
def test_unreachable_server_is_a_backend_error_naming_the_url(name: str) -> None:
    url = f"http://127.0.0.1:{_closed_port()}"
    with pytest.raises(BackendError, match=url.replace(".", r"\.")):
        make_backend(name, url=url, collection="memory_chunks", dim=DIM, timeout=2.0)


def test_registry_rejects_unknown_names_and_options(tmp_path: Any) -> None:
    with pytest.raises(ConfigError, match="unknown vector backend"):
        make_backend("pinecone", collection="memory_chunks", dim=DIM)
    with pytest.raises(ConfigError):
        make_backend("memory", collection="memory_chunks", dim=DIM, colour="blue")
    with pytest.raises(ValidationError):
        make_backend("memory", collection="ab", dim=DIM)
    with pytest.raises(ConfigError):
        make_backend("memory", collection="memory_chunks", dim=0)
