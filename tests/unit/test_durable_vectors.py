"""Vectors are Tier 2 data: embedded once per (model, text), reused by reindex and backend switches, the
engine catches up from Tier 2 after a crash, and a process that does not own the engine searches the
stored vectors exactly with the owner's answers.

Fast: the hashing embedder; the engine is the in-process one or qdrant-edge where ownership matters.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hermes_memory.api.memory_api import MemoryAPI
from hermes_memory.tier2._util import content_hash
from hermes_memory.tier2.db import SqliteDatabase
from hermes_memory.tier2.schema import MIGRATIONS, migrate
from hermes_memory.tier2.vectors import Marks, VectorStore
from hermes_memory.tier3 import _exact, _exact_rows, _indexer
from hermes_memory.tier3.embedder import Kind
from hermes_memory.tier3.hashing_embedder import HashingEmbedder
from hermes_memory.tier3.semantic import SemanticMemory

Opener = Callable[..., MemoryAPI]
FACTS = [
    "The garage door code is 2580",
    "Grandma's birthday is on the ninth of May",
    "The sailing club meets on Thursday evenings",
    "Oat milk is the only milk the kids drink",
    "The project deadline moved to the end of the quarter",
]
QUERIES = ["garage code", "birthday in May", "sailing Thursday", "milk for the kids", "deadline quarter"]


@pytest.fixture
def open_api(open_api: Opener) -> Opener:
    """The shared opener with the engine answering at any size (these tests look into it)."""

    def opener(**overrides: Any) -> MemoryAPI:
        return open_api(**{"tier3.engine_min_vectors": 0, **overrides})

    return opener


@pytest.fixture
def embedded(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every document text the hashing embedder embeds, in order (queries are not counted)."""
    texts: list[str] = []
    real = HashingEmbedder._embed

    def counting(self: HashingEmbedder, items: list[str], kind: Kind) -> Any:
        if kind == "document":
            texts.extend(items)
        return real(self, items, kind)

    monkeypatch.setattr(HashingEmbedder, "_embed", counting)
    return texts


def _ok(envelope: dict[str, Any]) -> Any:
    assert envelope["success"], envelope["error"]
    return envelope["data"]


def _fill(api: MemoryAPI) -> None:
    for fact in FACTS:
        _ok(api.fact_store(fact))
    _ok(api.semantic_index("Book the train to Hamburg", session_id="s1", wait=False))
    # the same text once normalised: one vector
    _ok(api.semantic_index("book the train to  Hamburg", session_id="s2", wait=False))


def _fact(api: MemoryAPI, text: str) -> str:
    fact = api.tier2.facts.get_by_hash(content_hash(text))
    assert fact is not None
    return fact.uuid


def _top(api: MemoryAPI) -> dict[str, list[tuple[str, float]]]:
    out = {}
    for query in [*QUERIES, "train Hamburg"]:
        # every chunk (no cut among equal scores); equal scores in text order (engines order ties freely)
        hits = _ok(api.semantic_search(query, limit=20, min_score=0.0))
        out[query] = sorted(((round(h["score"], 5), h["text"]) for h in hits), key=lambda x: (-x[0], x[1]))
    return out


def test_a_text_is_embedded_once_and_reindex_embeds_nothing(open_api: Opener, embedded: list[str]) -> None:
    api = open_api()
    _fill(api)
    report = _ok(api.embed_pending())
    assert report["embedded"] == len(FACTS) + 1  # the two train notes share one vector
    assert len(embedded) == len(FACTS) + 1
    before = _top(api)
    assert before["garage code"][0][1] == FACTS[0]

    again = _ok(api.reindex())
    assert (again["upserted"], again["embedded"], again["remaining"]) == (len(FACTS) + 2, 0, 0)
    assert len(embedded) == len(FACTS) + 1  # nothing was embedded again
    assert _top(api) == before
    assert _ok(api.stats())["tier3"]["memory_chunks"] == len(FACTS) + 2


def test_a_new_model_embeds_again_and_keeps_the_old_vectors(open_api: Opener, embedded: list[str]) -> None:
    first = open_api()
    _fill(first)
    _ok(first.embed_pending())
    first.close()
    second = open_api(**{"tier3.embedding_dim": 64})
    assert _ok(second.reindex())["embedded"] == len(FACTS) + 1  # hashing-64 is another model
    store = VectorStore(second.tier2.db)
    assert (store.count("hashing-384"), store.count("hashing-64")) == (len(FACTS) + 1, len(FACTS) + 1)


def test_a_store_of_another_encoder_is_re_embedded_by_the_next_drain(
    open_api: Opener, embedded: list[str]
) -> None:
    """No reindex asked: the first drain after an encoder switch (``local-fp32`` -> int8 ``local``; here
    hashing-384 -> hashing-64) queues the store again and re-embeds it; keyword recall answers before."""
    exact = {"tier3.engine_min_vectors": 10**6}  # the exact index answers, as in any store below 1M
    first = open_api(**exact)
    _fill(first)
    _ok(first.embed_pending())
    first.close()
    second = open_api(**exact, **{"tier3.embedding_dim": 64})
    assert _ok(second.semantic_search("garage code", min_score=0.0)) == []  # no vector of hashing-64 yet
    assert _ok(second.fact_query("garage"))[0]["content"] == FACTS[0]  # keywords answer meanwhile
    assert _ok(second.embed_pending())["embedded"] == len(FACTS) + 1
    assert _ok(second.semantic_search("garage code", limit=1, min_score=0.0))[0]["text"] == FACTS[0]
    store = VectorStore(second.tier2.db)
    assert (store.count("hashing-384"), store.count("hashing-64")) == (len(FACTS) + 1, len(FACTS) + 1)
    second.close()
    count = len(embedded)
    third = open_api(**exact, **{"tier3.embedding_dim": 64})
    assert _ok(third.embed_pending())["embedded"] == 0  # done once: not queued again
    assert len(embedded) == count


def test_a_backend_switch_fills_the_new_engine_from_tier2(open_api: Opener, embedded: list[str]) -> None:
    first = open_api()
    _fill(first)
    _ok(first.embed_pending())
    before = _top(first)
    first.close()
    count = len(embedded)
    second = open_api(backend="qdrant")
    assert _top(second) == before  # no reindex: the engine caught up from the stored vectors
    assert len(embedded) == count
    assert _ok(second.stats())["tier3"]["memory_chunks"] == len(FACTS) + 2


@pytest.mark.parametrize("backend", ["memory", "qdrant"])
def test_a_crash_after_the_tier2_commit_is_repaired_when_the_engine_opens(
    open_api: Opener, monkeypatch: pytest.MonkeyPatch, embedded: list[str], backend: str
) -> None:
    api = open_api(backend=backend)
    _fill(api)
    # The process dies right after the transaction that stored the vectors and completed the queue
    # rows: the engine never hears of them.
    monkeypatch.setattr(_indexer, "sync_chunks", lambda *args, **kwargs: 0)
    assert _ok(api.embed_pending())["remaining"] == 0
    assert _ok(api.semantic_search(FACTS[0], min_score=0.0)) == []  # the engine lacks them
    api.close()
    monkeypatch.undo()

    count = len(embedded)
    reopened = open_api(backend=backend)
    assert _ok(reopened.semantic_search("garage code", limit=1, min_score=0.0))[0]["text"] == FACTS[0]
    assert _ok(reopened.stats())["tier3"]["memory_chunks"] == len(FACTS) + 2  # each once, none lost
    assert _ok(reopened.embed_pending())["embedded"] == 0
    assert len(embedded) == count


def test_the_engine_follows_deletes_made_by_another_process(open_api: Opener) -> None:
    api = open_api(backend="qdrant")
    _fill(api)
    _ok(api.embed_pending())
    # another process forgets a fact: its chunk row goes, the tombstone stays
    with api.tier2.db.atomic() as conn:
        conn.execute("DELETE FROM chunks WHERE source_uuid = ?", (_fact(api, FACTS[2]),))
    _ok(api.embed_pending())
    hits = _ok(api.semantic_search("sailing Thursday", limit=10, min_score=0.0))
    assert FACTS[2] not in [h["text"] for h in hits]
    assert _ok(api.stats())["tier3"]["memory_chunks"] == len(FACTS) + 1


def _second(api: MemoryAPI) -> SemanticMemory:
    """Another Tier 3 on the same store, as a second process has it (the engine is taken)."""
    backend = api.core.tiers.semantic().backend_name
    return SemanticMemory(api.config.tier3, api.config.tier3_path, api.tier2, backend=backend)


# The exact index scores int8 rows: a score within this of the engine's float32 one.
INT8_TOLERANCE = 2e-3


def _same_hits(owner: SemanticMemory, other: SemanticMemory, filters: dict[str, Any] | None = None) -> None:
    for query in [*QUERIES, "train Hamburg", "nothing alike at all"]:
        # every matching chunk (no cut among equal scores): the same chunks, scores within the int8
        # tolerance, and the same order except among scores that close (int8 may reorder near ties)
        want = {h.id: h for h in owner.search(query, limit=20, filters=filters).hits}
        got = other.search(query, limit=20, filters=filters).hits
        assert sorted(h.id for h in got) == sorted(want), query
        for hit in got:
            assert abs(hit.score - want[hit.id].score) <= INT8_TOLERANCE, (query, hit.id)
            assert hit.text == want[hit.id].text
        theirs = [want[h.id].score for h in got]  # the owner's scores in the second process's order
        assert all(a >= b - 2 * INT8_TOLERANCE for a, b in itertools.pairwise(theirs)), query
        limits = {"fact": 10, "episode": 10}
        mine, theirs = owner.source_scores(query, limits), other.source_scores(query, limits)
        assert mine.keys() == theirs.keys() and all(mine[k].keys() == theirs[k].keys() for k in mine)


def test_a_process_without_the_engine_answers_exactly_like_the_owner(open_api: Opener) -> None:
    api = open_api(backend="qdrant")
    _fill(api)
    _ok(api.embed_pending())
    owner = api.core.tiers.semantic()
    other = _second(api)
    try:
        assert owner.busy_reason() is None and other.busy_reason() is not None
        _same_hits(owner, other)
        _same_hits(owner, other, {"source_kind": "fact"})
        _same_hits(owner, other, {"session_id": {"in": ["s2"]}})
        _same_hits(owner, other, {"timestamp": {"gte": 0}, "content_hash": {"eq": "no such hash"}})

        # the store changes under the second process: it follows (new rows, deleted rows)
        _ok(api.fact_store("The boat is moored at pier seven"))
        owner.unindex("fact", _fact(api, FACTS[0]))
        _ok(api.embed_pending())
        _same_hits(owner, other)
        hits = other.search("boat pier", limit=1).hits
        assert hits[0].text == "The boat is moored at pier seven"
        assert FACTS[0] not in [h.text for h in other.search("garage code", limit=10).hits]
    finally:
        other.close()


def test_the_change_feed_misses_no_vector_and_resumes_from_its_marks(open_api: Opener) -> None:
    api = open_api()
    _fill(api)
    store = VectorStore(api.tier2.db)
    page = store.changes("hashing-384", 384, Marks())
    assert page.rows == [] and not page.more  # nothing embedded yet
    _ok(api.embed_pending())
    seen: dict[str, int] = {}
    marks = page.marks
    while True:
        page = store.changes("hashing-384", 384, marks, page=2)
        for chunk, _ in page.rows:
            seen[chunk.uuid] = seen.get(chunk.uuid, 0) + 1
        marks = page.marks
        if not page.more:
            break
    assert len(seen) == len(FACTS) + 2 and set(seen.values()) == {1}
    assert marks == store.heads()
    assert store.changes("hashing-384", 384, marks).rows == []


def test_forget_leaves_no_vector_of_the_forgotten_text(open_api: Opener) -> None:
    api = open_api()
    _fill(api)
    _ok(api.embed_pending())
    store = VectorStore(api.tier2.db)
    before = store.count("hashing-384")
    _ok(api.forget(_fact(api, FACTS[1]), confirm=True))
    assert store.count("hashing-384") == before - 1


def test_migration_7_queues_existing_chunks_and_keeps_pending_deletes(tmp_path: Path) -> None:
    db = SqliteDatabase(tmp_path / "old.db")
    try:
        migrate(db, MIGRATIONS[:6])
        with db.atomic() as conn:
            conn.execute(
                "INSERT INTO chunks(uuid, source_kind, text, content_hash, source_type, timestamp,"
                " created_at) VALUES ('c1', 'episode', 'hello', 'h', 'session', 1, 1)"
            )
            conn.execute(
                "INSERT INTO embed_queue(collection, item_uuid, op, enqueued_at) "
                "VALUES ('memory_chunks', 'gone', 'delete', 1)"
            )
        assert migrate(db, MIGRATIONS[:7]) == [7]
        queued = db.query("SELECT item_uuid, op FROM embed_queue ORDER BY id")
        assert [(r[0], r[1]) for r in queued] == [("gone", "delete"), ("c1", "upsert")]
        assert [r[0] for r in db.query("SELECT chunk_uuid FROM chunk_tombstones")] == ["gone"]
    finally:
        db.close()



def test_the_exact_index_compacts_deleted_rows_across_blocks(
    open_api: Opener, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_exact_rows, "BLOCK", 4)  # many blocks from a few rows
    api = open_api(backend="qdrant")
    texts = [f"note {i}: {word} and more {word}" for i, word in enumerate(
        ["apple", "boat", "cello", "dune", "eagle", "fjord", "grape", "harbour", "igloo", "jungle", "kiwi"]
    )]  # fmt: skip
    for i, text in enumerate(texts):
        _ok(api.semantic_index(text, session_id=f"s{i}", wait=False))
    _ok(api.embed_pending())
    owner = api.core.tiers.semantic()
    other = _second(api)
    try:
        assert other.busy_reason() is not None
        _same_hits(owner, other)
        for i in range(0, len(texts), 2):  # delete every other note: more than a quarter of the rows
            with api.tier2.db.atomic() as conn:
                conn.execute("DELETE FROM chunks WHERE session_id = ?", (f"s{i}",))
        _ok(api.embed_pending())
        _same_hits(owner, other)
        kept = [h.text for h in other.search("cello boat harbour", limit=20).hits]
        assert sorted(kept) == sorted(texts[1::2])
    finally:
        other.close()


def test_an_import_brings_the_stored_vectors_along(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, embedded: list[str]
) -> None:
    settings = {"tier3.embedding_model": "hashing", "tier3.backend": "memory", "tier3.engine_min_vectors": 0}
    with MemoryAPI(hermes_home=tmp_path / "a", **settings) as source:
        _fill(source)
        _ok(source.embed_pending())
        document = _ok(source.export_json())
        before = _top(source)
    assert len(document["vectors"]) == len(FACTS) + 1
    count = len(embedded)
    with MemoryAPI(hermes_home=tmp_path / "b", **settings) as target:
        _ok(target.import_json(document, merge=False))
        assert _ok(target.embed_pending())["embedded"] == 0
        assert len(embedded) == count
        assert _top(target) == before

    broken = {**document, "vectors": [{**document["vectors"][0], "vector": "AAAA"}]}
    with MemoryAPI(hermes_home=tmp_path / "c", **settings) as other:
        failed = other.import_json(broken)
        assert not failed["success"] and "finite float32" in failed["error"]


def test_a_process_without_the_engine_embeds_its_chunks_and_the_owner_catches_up(
    open_api: Opener, embedded: list[str]
) -> None:
    api = open_api(backend="qdrant")
    _fill(api)
    _ok(api.embed_pending())
    owner = api.core.tiers.semantic()
    other = _second(api)
    try:
        assert other.busy_reason() is not None
        _ok(api.semantic_index("The lighthouse keeper retired in spring", session_id="s9", wait=False))
        _ok(api.entity_ensure("Hamburg", "place"))
        report = other.drain()
        # its chunk is embedded into Tier 2 here; the entity's vector goes to the holder's collection
        assert (report.embedded, report.deferred, report.remaining) == (1, True, 1)
        assert embedded[-1] == "The lighthouse keeper retired in spring"
        assert other.search("lighthouse keeper", limit=1).hits[0].text.startswith("The lighthouse")
        # the holder has not drained; its engine catches up from Tier 2 before it searches
        assert owner.search("lighthouse keeper", limit=1).hits[0].text.startswith("The lighthouse")
        _same_hits(owner, other)
        assert owner.drain().remaining == 0  # the entity, by the holder
    finally:
        other.close()


def test_the_exact_index_keeps_any_chunk_id_through_deletes_and_compaction(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hermes_memory.scoping import ScopeView
    from hermes_memory.tier2.store import Tier2
    from hermes_memory.tier2.vectors import to_blob
    from hermes_memory.tier3._indexer import vector_payload

    monkeypatch.setattr(_exact_rows, "BLOCK", 4)  # compaction after a few deletes, rows across blocks
    model, dim = "test-model", 8
    # canonical UUIDs (held as two integers) and ids that are not (held as strings), the nil UUID too
    ids = [
        "c1", "Upper-Case", "00000000-0000-0000-0000-000000000000", "{0b3e6fdc-c98b-4500-aa13-97eebc91366a}",
        "0b3e6fdc-c98b-4500-aa13-97eebc91366a", "00000000-0000-0000-0000-000000000001",
        "ffffffff-ffff-4fff-bfff-ffffffffffff", "5c0cbb8e-3e05-4c48-9d1e-4a3b4a6bd1e2", "plain-9", "x",
    ]  # fmt: skip
    tier2 = Tier2.open(tmp_path / "t2.db", view=ScopeView.all())
    vectors = np.eye(dim, dtype=np.float32)[[i % dim for i in range(len(ids))]]
    vectors += 0.01 * np.arange(len(ids), dtype=np.float32)[:, None]  # no two alike
    with tier2.db.atomic() as conn:
        for i, uuid in enumerate(ids):
            conn.execute(
                "INSERT INTO chunks(uuid, source_kind, source_uuid, text, content_hash, source_type,"
                " timestamp, created_at) VALUES (?, 'episode', ?, ?, ?, 'session', ?, 0)",
                (uuid, f"src{i % 3}", f"text {i}", f"h{i}", i),
            )
            conn.execute(
                "INSERT INTO vectors(model_id, text_hash, dim, vector, created_at) VALUES (?, ?, ?, ?, 0)",
                (model, f"h{i}", dim, to_blob(vectors[i])),
            )
    index = _exact.ExactIndex(
        VectorStore(tier2.db), model, dim, loader=tier2.chunks.get_many, payload_of=vector_payload
    )
    try:
        fields = ("chunk_id", "source_uuid")
        for i, uuid in enumerate(ids):
            best = index.search(vectors[i], limit=1, fields=fields)[0]
            assert best.id == f"chunk:{uuid}"
            assert best.payload == {"chunk_id": uuid, "source_uuid": f"src{i % 3}"}
        picked = index.search(vectors[0], limit=10, filters={"chunk_id": {"in": [ids[2], ids[4], "nope"]}})
        assert sorted(h.id for h in picked) == sorted(f"chunk:{u}" for u in (ids[2], ids[4]))
        assert index.count({"source_uuid": "src1"}) == len(ids[1::3])

        gone = ids[::2]  # odd and canonical ones: more than BLOCK rows, so the index compacts
        with tier2.db.atomic() as conn:
            conn.executemany("DELETE FROM chunks WHERE uuid = ?", [(u,) for u in gone])
        assert index.refresh() == len(gone)
        assert index.size == index.count() == len(ids) - len(gone)
        found = {h.id for h in index.search(vectors[0], limit=20, fields=fields)}
        assert found == {f"chunk:{u}" for u in ids[1::2]}
        assert index.search(vectors[0], limit=5, filters={"chunk_id": ids[4]}) == []
        for i, uuid in enumerate(ids):
            if uuid not in gone:
                assert index.search(vectors[i], limit=1, filters={"chunk_id": uuid})[0].id == f"chunk:{uuid}"
    finally:
        index.close()
        tier2.close()
