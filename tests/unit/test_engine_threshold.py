"""The ANN engine opens only once the store is big enough to need it (``tier3.engine_min_vectors``).

Below the threshold every process searches the Tier 2 vectors exactly: no engine files, no store lock,
entity rows complete with their Tier 2 vectors. The first search past it opens the engine, fills it
from Tier 2 (chunks through the feed, entities by a refill) and answers exactly as the exact index did.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hermes_memory.api.memory_api import MemoryAPI
from hermes_memory.config import load_config
from hermes_memory.hermes.status import search_path_text, store_state
from hermes_memory.tier2.chunks import ENTITIES_COLLECTION, EmbedQueue
from hermes_memory.tier2.vectors import VectorStore

FACTS = [
    "The garage door code is 2580",
    "Grandma's birthday is on the ninth of May",
    "The sailing club meets on Thursday evenings",
    "Oat milk is the only milk the kids drink",
    "The project deadline moved to the end of the quarter",
    "The dentist appointment is at nine on Monday",
    "Our neighbour's dog is called Biscuit",
    "The spare key is under the blue flower pot",
]
QUERIES = ["garage code", "birthday in May", "sailing Thursday", "milk for the kids", "spare key pot"]
PEOPLE = [("Marie Curie", "physicist and chemist"), ("Ada Lovelace", "mathematician")]


@pytest.fixture
def open_api(open_api: Callable[..., MemoryAPI]) -> Callable[..., MemoryAPI]:
    """The shared opener on the embedded Qdrant backend (whose engine the threshold keeps closed)."""

    def opener(**overrides: Any) -> MemoryAPI:
        return open_api(**{"tier3.backend": "qdrant", **overrides})

    return opener


def _ok(envelope: dict[str, Any]) -> Any:
    assert envelope["success"], envelope["error"]
    return envelope["data"]


def _engine_files(api: MemoryAPI) -> list[Path]:
    return list(api.config.tier3_path.rglob("*"))


def _top(api: MemoryAPI) -> dict[str, list[tuple[str, float]]]:
    return {
        q: [(h["id"], round(h["score"], 5)) for h in _ok(api.semantic_search(q, limit=3, min_score=0.0))]
        for q in QUERIES
    }


def _fill(api: MemoryAPI, facts: list[str]) -> None:
    for text in facts:
        _ok(api.fact_store(text))
    _ok(api.embed_pending())


def test_below_the_threshold_nothing_opens_the_engine(open_api: Any) -> None:
    api = open_api()  # the default threshold: a handful of facts is far below it
    _fill(api, FACTS)
    for name, description in PEOPLE:
        _ok(api.entity_ensure(name, "person", description=description))
    report = _ok(api.embed_pending())
    assert report["remaining"] == 0 and report["upserted"] == len(PEOPLE)  # entity rows do not wait

    found = _ok(api.semantic_search("garage code", limit=1, min_score=0.0))
    assert found[0]["text"] == FACTS[0]
    recalled = _ok(api.recall("garage code", tiers=["tier3"]))
    assert recalled["hits"] and recalled["hits"][0]["text"] == FACTS[0]
    tier3 = _ok(api.stats())["tier3"]
    limit = api.config.tier3.engine_min_vectors
    assert tier3["search"] == f"exact over {len(FACTS)} stored vectors (engine opens at {limit})"
    assert tier3["memory_chunks"] == len(FACTS)  # counted in the exact index: no engine collection opened
    findings = {f["check"]: f for f in _ok(api.doctor())["findings"]}
    assert findings["vectors:memory_chunks"]["status"] == "ok"
    assert findings["vectors:entity_embeddings"]["status"] == "ok"
    assert "exact over" in findings["vectors:memory_chunks"]["detail"]
    again = _ok(api.reindex())
    assert again["embedded"] == 0 and again["search"].startswith("exact over")
    assert _engine_files(api) == []  # no engine store, no lock file
    assert api.core.tiers.semantic().opened_backends() == []
    # `hermes-memory status`, store closed
    status = search_path_text(store_state(api.config).chunks, limit, "qdrant")
    assert status == f"exact over the stored vectors of {len(FACTS)} chunks (engine opens at {limit})"


def test_crossing_the_threshold_opens_and_fills_the_engine_with_the_exact_answers(open_api: Any) -> None:
    api = open_api(**{"tier3.engine_min_vectors": len(FACTS)})
    _fill(api, FACTS[:4])
    for name, description in PEOPLE:
        _ok(api.entity_ensure(name, "person", description=description))
    _ok(api.embed_pending())  # entity rows complete into Tier 2 only
    assert _top(api)["garage code"][0][0].startswith("chunk:")
    assert _engine_files(api) == []
    assert _ok(api.stats())["tier3"]["search"].startswith("exact over 4 stored vectors")

    _fill(api, FACTS[4:])  # the drain alone opens nothing: the next search does
    assert _engine_files(api) == []
    exact = open_api(**{"tier3.engine_min_vectors": 10**9})  # another reader that never opens it
    want = _top(exact)
    got = _top(api)
    assert got == want
    sem = api.core.tiers.semantic()
    assert _ok(api.stats())["tier3"]["search"] == "engine qdrant"
    assert _engine_files(api) != []
    tier3 = _ok(api.stats())["tier3"]
    assert tier3["memory_chunks"] == len(FACTS)
    # the entities completed without an engine were refilled from their Tier 2 vectors
    assert sem.backend(ENTITIES_COLLECTION).count() == len(PEOPLE) == tier3["entity_embeddings"]
    _ok(api.entity_ensure("Grace Hopper", "person", description="computer scientist"))
    _ok(api.embed_pending())  # from now on this process writes entities straight to its engine
    assert sem.backend(ENTITIES_COLLECTION).count() == len(PEOPLE) + 1
    assert _top(exact) == got  # the exact reader still agrees


def test_by_default_a_store_of_100k_turns_searches_exactly_in_every_process(tmp_path: Path) -> None:
    # 100k stored turns hold ~258k chunk vectors (hermes_memory.bench.fill): the exact index keeps them
    # in ~112 MB, where the engine would hold >= 0.9 KB a vector and build its HNSW in ~1 GB.
    assert load_config(hermes_home=tmp_path).tier3.engine_min_vectors >= 400_000


def test_below_the_threshold_nothing_counts_every_chunk_to_decide(
    open_api: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    api = open_api(**{"tier3.engine_min_vectors": 100})
    _fill(api, FACTS)
    counted: list[str] = []
    real = VectorStore.chunk_vectors

    def spy(self: VectorStore, model_id: str) -> int:
        counted.append(model_id)
        return real(self, model_id)

    monkeypatch.setattr(VectorStore, "chunk_vectors", spy)
    sem = api.core.tiers.semantic()
    assert not sem.uses_engine() and counted == []  # fewer chunk ids than the threshold: no count
    sem.cfg = dataclasses.replace(sem.cfg, engine_min_vectors=2)  # more chunk ids than that: counted
    assert sem.uses_engine() and len(counted) == 1


def test_the_worker_drains_a_backlog_without_counting_the_queue_per_batch(
    open_api: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    api = open_api(**{"tier3.embed_batch_size": 2})
    for text in FACTS:
        _ok(api.fact_store(text))
    assert _ok(api.pending())["embeddings"] == len(FACTS)  # four batches of two
    counts: list[int] = []
    real = EmbedQueue.count

    def spy(self: EmbedQueue) -> int:
        counts.append(1)
        return real(self)

    monkeypatch.setattr(EmbedQueue, "count", spy)
    assert api.core.ingest.drain_once()
    assert counts == []  # a batch that took fewer rows than asked ended the step
    monkeypatch.setattr(EmbedQueue, "count", real)
    assert _ok(api.pending())["embeddings"] == 0
    assert _ok(api.semantic_search("garage code", limit=1, min_score=0.0))[0]["text"] == FACTS[0]
