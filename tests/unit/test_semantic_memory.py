"""SemanticMemory on its own: indexing into Tier 2, draining the embed queue, search, hybrid, reindex.

Fast: the hashing embedder and (unless the behaviour is backend-specific) the in-process backend.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hermes_memory.config import Config, load_config
from hermes_memory.errors import BackendError, ConflictError, EmbeddingError
from hermes_memory.tier2 import Tier2
from hermes_memory.tier2.chunks import CHUNKS_COLLECTION, ENTITIES_COLLECTION
from hermes_memory.tier3.backend import BACKENDS as REGISTERED_BACKENDS
from hermes_memory.tier3.hashing_embedder import HashingEmbedder
from hermes_memory.tier3.memory_backend import MemoryBackend
from hermes_memory.tier3.semantic import SemanticMemory, backend_name

Opener = Callable[..., tuple[SemanticMemory, Tier2]]
BACKENDS = list(REGISTERED_BACKENDS)  # every registered backend (embedded or local mode)


def _config(home: Path, **overrides: Any) -> Config:
    # the engine answers at any size: these tests look into it
    base: dict[str, Any] = {
        "tier3.embedding_model": "hashing", "tier3.backend": "memory", "tier3.engine_min_vectors": 0
    }  # fmt: skip
    return load_config(hermes_home=home, **{**base, **overrides})


@pytest.fixture
def open_semantic(tmp_path: Path) -> Iterator[Opener]:
    """Open SemanticMemory over a Tier 2 in ``tmp_path``; everything opened is closed afterwards."""
    opened: list[tuple[SemanticMemory, Tier2]] = []

    def opener(*, tier2: Tier2 | None = None, **overrides: Any) -> tuple[SemanticMemory, Tier2]:
        cfg = _config(tmp_path, **overrides)
        t2 = tier2 if tier2 is not None else Tier2.open(cfg.db_path)
        sem = SemanticMemory(cfg.tier3, cfg.tier3_path, t2)
        opened.append((sem, t2))
        return sem, t2

    yield opener
    for sem, t2 in reversed(opened):
        sem.close()
        t2.close()


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port  # nothing listens here any more: connecting is refused at once


class NaNEmbedder(HashingEmbedder):
    """An embedder gone wrong: every value is NaN."""

    def _embed(self, texts: list[str], kind: Any) -> Any:
        return np.full((len(texts), self.dim), np.nan, dtype=np.float32)


def _fact(t2: Tier2, content: str, **kw: Any) -> Any:
    return t2.facts.store(content, **kw).fact


# ---------------------------------------------------------------- indexing and draining


def test_long_text_is_chunked_and_every_chunk_is_searchable(open_semantic: Opener) -> None:
    sem, t2 = open_semantic(**{"tier3.chunk_size": 12, "tier3.chunk_overlap": 2})
    text = " ".join(f"Sentence {i} talks about topic{i} in detail." for i in range(6))
    chunks = sem.index_text(text, source_kind="text", source_type="document", timestamp=1.0e9)
    assert len(chunks) > 1
    assert t2.embed_queue.count() == len(chunks)
    seen: list[tuple[int, int]] = []
    report = sem.drain(progress=lambda done, total: seen.append((done, total)))
    assert report.upserted == len(chunks) and report.remaining == 0
    assert seen[-1] == (len(chunks), len(chunks))
    assert sem.backend(CHUNKS_COLLECTION).count() == len(chunks)
    for chunk in chunks:
        hits = sem.search(chunk.text, limit=1).hits
        assert [h.id for h in hits] == [chunk.vector_id]


def test_drain_max_items_leaves_the_rest_pending(open_semantic: Opener) -> None:
    sem, t2 = open_semantic(**{"tier3.embed_batch_size": 2})
    for i in range(5):
        sem.index_text(f"note number {i}", source_kind="text", source_type="session", timestamp=1.0e9)
    report = sem.drain(max_items=3)
    assert (report.upserted, report.remaining) == (3, 2)
    assert sem.drain().upserted == 2
    assert t2.embed_queue.count() == 0


def test_a_crash_between_vector_write_and_dequeue_rewrites_without_duplicates(
    open_semantic: Opener, monkeypatch: pytest.MonkeyPatch
) -> None:
    sem, t2 = open_semantic()
    for i in range(4):
        sem.index_text(f"remembered thing {i}", source_kind="text", source_type="session", timestamp=1.0e9)

    def crash(items: Any) -> int:
        raise KeyboardInterrupt("killed after the vector write")

    monkeypatch.setattr(t2.embed_queue, "complete", crash)
    with pytest.raises(KeyboardInterrupt):
        sem.drain()
    assert t2.embed_queue.count() == 4  # nothing left the queue
    monkeypatch.undo()
    assert sem.drain().remaining == 0
    assert sem.backend(CHUNKS_COLLECTION).count() == 4 == t2.chunks.count()


def test_buffering_backend_is_flushed_before_rows_leave_the_queue(open_semantic: Opener) -> None:
    sem, t2 = open_semantic()
    chunks = sem.index_text("a durable memory", source_kind="text", source_type="session", timestamp=1.0e9)
    sem.drain()
    assert t2.embed_queue.count() == 0
    # a second reader of the same file (what a restart after SIGKILL would see) has the vector
    on_disk = MemoryBackend(collection=CHUNKS_COLLECTION, dim=sem.cfg.embedding_dim, path=sem.path / "memory")
    try:
        assert on_disk.count() == 1
        assert on_disk.search(sem.embedder.embed_query(["a durable memory"])[0], limit=1)[0].id == (
            chunks[0].vector_id
        )
    finally:
        on_disk.close()


def test_embedding_error_marks_attempts_and_keeps_rows(
    open_semantic: Opener, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        "hermes_memory.tier3._search_paths.make_embedder", lambda name, **opts: NaNEmbedder(dim=opts["dim"])
    )
    sem, t2 = open_semantic()
    sem.index_text("poisoned", source_kind="text", source_type="session", timestamp=1.0e9)
    for attempt in range(1, 6):
        with pytest.raises(EmbeddingError, match="NaN"):
            sem.drain()
        assert [i.attempts for i in t2.embed_queue.pending(10)] == [attempt]
    # retired after max_attempts: skipped, but never lost
    report = sem.drain()
    assert (report.upserted, report.remaining) == (0, 1)
    assert sem.backend(CHUNKS_COLLECTION).count() == 0


def test_unreachable_server_does_not_retire_rows(open_semantic: Opener) -> None:
    url = f"http://127.0.0.1:{_closed_port()}"
    sem, t2 = open_semantic(**{"tier3.backend": "chroma", "tier3.url": url, "tier3.timeout_s": 2.0})
    sem.index_text("wait for the server", source_kind="text", source_type="session", timestamp=1.0e9)
    for _ in range(6):
        with pytest.raises(BackendError, match=url):
            sem.drain()
    assert [i.attempts for i in t2.embed_queue.pending(10)] == [0]
    # the same queue drains into a working backend later
    local, _ = open_semantic(tier2=t2)
    assert local.drain().upserted == 1
    assert t2.embed_queue.count() == 0


def test_unindex_deletes_the_vector_after_drain(open_semantic: Opener) -> None:
    sem, t2 = open_semantic()
    fact = _fact(t2, "The boiler is serviced every March")
    sem.index_fact(fact)
    sem.drain()
    assert sem.backend(CHUNKS_COLLECTION).count() == 1
    with t2.db.atomic():
        assert sem.unindex("fact", fact.uuid) == 1
    report = sem.drain()
    assert report.deleted == 1
    assert sem.backend(CHUNKS_COLLECTION).count() == 0
    assert sem.search("boiler serviced March").hits == []


def test_entity_embedding_is_written_and_found(open_semantic: Opener) -> None:
    sem, t2 = open_semantic()
    entity = t2.entities.ensure("Grace Hopper", "person", description="computer scientist").entity
    sem.index_entity(entity)
    assert t2.embed_queue.count() == 1
    assert sem.drain().upserted == 1
    backend = sem.backend(ENTITIES_COLLECTION)
    hits = backend.search(sem.embedder.embed_query(["Grace Hopper"])[0], limit=1)
    assert hits[0].id == f"entity:{entity.uuid}"
    assert hits[0].payload["entity_name"] == "Grace Hopper"


# ---------------------------------------------------------------- what search returns


def test_superseded_and_expired_facts_are_not_recalled(open_semantic: Opener) -> None:
    sem, t2 = open_semantic()
    old = _fact(t2, "Alice lives in Berlin", subject="alice", predicate="lives_in", object="Berlin")
    new = t2.facts.store("Alice lives in Munich", subject="alice", predicate="lives_in", object="Munich")
    assert new.superseded == (old.uuid,)
    gone = _fact(t2, "Alice lives in a tent", expires_at=time.time() - 60.0)
    for fact in (old, new.fact, gone):
        sem.index_fact(fact)
    sem.drain()
    assert sem.backend(CHUNKS_COLLECTION).count() == 3  # vectors stay; recall hides them
    texts = [h.text for h in sem.search("Alice lives in", limit=10).hits]
    assert texts == ["Alice lives in Munich"]


def test_limit_is_filled_past_archived_top_hits(open_semantic: Opener) -> None:
    sem, t2 = open_semantic()
    query = "the orange cat sleeps on the sofa"
    for i in range(8):  # the closest matches, all archived
        fact = _fact(t2, f"{query} {i}")
        sem.index_fact(fact)
        t2.facts.delete(fact.uuid, soft=True)
    for text in ("an orange cat", "a sofa by the window", "the cat sleeps"):
        sem.index_fact(_fact(t2, text))
    sem.drain()
    hits = sem.search(query, limit=2).hits
    assert len(hits) == 2
    assert all(not h.text.startswith(query) for h in hits)


def test_min_score_drops_weak_hits(open_semantic: Opener) -> None:
    sem, _ = open_semantic()
    for text in ("quarterly tax return filed", "zebra crossing painted yellow"):
        sem.index_text(text, source_kind="text", source_type="session", timestamp=1.0e9)
    sem.drain()
    assert len(sem.search("quarterly tax return", limit=5).hits) == 2
    strict = sem.search("quarterly tax return", limit=5, min_score=0.8).hits
    assert [h.text for h in strict] == ["quarterly tax return filed"]
    assert all(h.score >= 0.8 for h in strict)


def test_hybrid_keyword_side_skips_archived_facts(open_semantic: Opener) -> None:
    sem, t2 = open_semantic()
    archived = _fact(t2, "zephyr router password is on the fridge")
    kept = _fact(t2, "zephyr is the name of the cat")
    for fact in (archived, kept):
        sem.index_fact(fact)
    sem.drain()
    t2.facts.delete(archived.uuid, soft=True)
    texts = [h.text for h in sem.hybrid("zephyr", limit=10).hits]
    assert texts == ["zephyr is the name of the cat"]


def test_hybrid_keyword_side_does_not_vote_on_words_most_chunks_share(open_semantic: Opener) -> None:
    # FTS5 floors the weight of a word in more than half the rows: such a match says nothing, and its
    # rank (shorter rows first) must not outvote the meaning side.
    sem, _ = open_semantic()
    for text in ("Maya works at Nordlicht Labs", "Maya adopted a beagle puppy", "Maya lives in Lisbon"):
        sem.index_text(text, source_kind="text", source_type="session", timestamp=1.0e9)
    sem.drain()
    common = sem.hybrid("Maya's dog", limit=10).hits
    assert common and all("bm25" not in h.metadata["ranks"] for h in common)
    rare = sem.hybrid("Maya's beagle", limit=10).hits
    assert rare[0].text == "Maya adopted a beagle puppy"
    assert rare[0].metadata["ranks"].get("bm25") == 1


def test_backend_name_turns_qdrant_with_url_into_qdrant_client(tmp_path: Path) -> None:
    cfg = _config(tmp_path, **{"tier3.backend": "qdrant", "tier3.url": "http://127.0.0.1:6333"}).tier3
    assert backend_name(cfg) == "qdrant-client"
    assert backend_name(cfg, "chroma") == "chroma"
    assert backend_name(_config(tmp_path, **{"tier3.backend": "qdrant"}).tier3) == "qdrant"


# ---------------------------------------------------------------- reindex and dimension changes


@pytest.mark.parametrize("backend", BACKENDS)
def test_reindex_rebuilds_every_collection_from_tier2(open_semantic: Opener, backend: str) -> None:
    sem, t2 = open_semantic(**{"tier3.backend": backend})
    texts = [f"memory {i}: the {w} is blue" for i, w in enumerate(["sky", "sea", "car", "door"])]
    for text in texts:
        sem.index_text(text, source_kind="text", source_type="session", timestamp=1.0e9)
    sem.index_entity(t2.entities.ensure("Ada", "person").entity)
    # an orphan vector (no Tier 2 row) must not survive a rebuild
    sem.backend(CHUNKS_COLLECTION).upsert(
        ["chunk:orphan"], sem.embedder.embed_document(["orphan"]), [{"scope": "default"}]
    )
    report = sem.reindex()
    assert (report.upserted, report.remaining) == (5, 0)
    assert sem.backend(CHUNKS_COLLECTION).count() == 4
    assert sem.backend(ENTITIES_COLLECTION).count() == 1
    assert sem.search(texts[2], limit=1).hits[0].text == texts[2]


@pytest.mark.parametrize("backend", BACKENDS)
def test_dimension_change_is_refused_naming_reindex(open_semantic: Opener, backend: str) -> None:
    sem, t2 = open_semantic(**{"tier3.backend": backend})
    sem.index_text("first embedder wrote this", source_kind="text", source_type="session", timestamp=1.0e9)
    sem.drain()
    sem.close()
    other, _ = open_semantic(tier2=t2, **{"tier3.backend": backend, "tier3.embedding_dim": 64})
    with pytest.raises(ConflictError, match="reindex"):
        other.search("first embedder")
    assert other.reindex().upserted == 1
    assert other.search("first embedder wrote this", limit=1).hits[0].text == "first embedder wrote this"
