"""The exact index's snapshot: a cold index mapped from it and caught up from the change feed answers
like one loaded from Tier 2; a corrupt, truncated, foreign or stale snapshot is ignored or caught up, a
forgotten chunk is never found through one, and a forget removes the files."""

from __future__ import annotations

import logging
import os
import shutil
import stat
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from hermes_memory.api.memory_api import MemoryAPI
from hermes_memory.scoping import ScopeView
from hermes_memory.tier2.store import Tier2
from hermes_memory.tier2.vectors import VectorStore, to_blob
from hermes_memory.tier3 import _exact, _exact_rows, _snapshot
from hermes_memory.tier3._exact import ExactIndex
from hermes_memory.tier3._indexer import vector_payload

MODEL, DIM = "test-model", 32
KINDS = ("episode", "episode_window", "fact")
FIELDS = ("chunk_id", "source_kind", "session_id", "source_uuid", "message_id", "timestamp")


@pytest.fixture(autouse=True)
def small_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    # Blocks of 64 rows: a few hundred rows span several blocks, a partly filled last one, and compaction.
    monkeypatch.setattr(_exact_rows, "BLOCK", 64)


@pytest.fixture
def tier2(tmp_path: Path) -> Iterator[Tier2]:
    store = Tier2.open(tmp_path / "t2.db", view=ScopeView.all())
    yield store
    store.close()


def _vectors(n: int, seed: int) -> npt.NDArray[np.float32]:
    rng = np.random.default_rng(seed)
    out = rng.standard_normal((n, DIM)).astype(np.float32)
    out /= np.linalg.norm(out, axis=1, keepdims=True)
    return out


def _insert(tier2: Tier2, vectors: npt.NDArray[np.float32], first: int) -> list[str]:
    """Chunks ``first``.. with these vectors; every 50th has an id that is no canonical UUID."""
    ids = [str(uuid.UUID(int=(first + i + 1) * 7919)) for i in range(len(vectors))]
    ids = [f"odd-{first + i}" if (first + i) % 50 == 0 else u for i, u in enumerate(ids)]
    with tier2.db.atomic() as conn:
        for i, (chunk_id, vector) in enumerate(zip(ids, vectors, strict=True)):
            n = first + i
            conn.execute(
                "INSERT INTO chunks(uuid, source_kind, source_uuid, session_id, message_id, text,"
                " content_hash, source_type, timestamp, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, 'session', ?, 0)",
                (chunk_id, KINDS[n % 3], f"src{n // 2}", f"s{n % 5}", n, f"text {n}", f"h{n}", n),
            )
            conn.execute(
                "INSERT INTO vectors(model_id, text_hash, dim, vector, created_at) VALUES (?, ?, ?, ?, 0)",
                (MODEL, f"h{n}", DIM, to_blob(vector)),
            )
    return ids


def _delete(tier2: Tier2, ids: list[str]) -> None:
    with tier2.db.atomic() as conn:
        conn.executemany("DELETE FROM chunks WHERE uuid = ?", [(u,) for u in ids])


def _index(tier2: Tier2, path: Path | None) -> ExactIndex:
    return ExactIndex(
        VectorStore(tier2.db), MODEL, DIM, loader=tier2.chunks.get_many, payload_of=vector_payload,
        float_rows=0, snapshot=path,
    )  # fmt: skip


def _answers(index: ExactIndex, queries: npt.NDArray[np.float32]) -> list[Any]:
    """Everything a recall could ask: per query, each kind's hits with held payloads, a session filter,
    a whole-payload search, an id filter, and the counts."""
    out: list[Any] = []
    for query in queries:
        views = {k: (10, {"source_kind": k, "scope": {"in": ["default"]}}) for k in KINDS}
        found = index.search_many(query, views, fields=FIELDS)
        out.append({k: [(h.id, round(h.score, 6), h.payload) for h in hits] for k, hits in found.items()})
        out.append([(h.id, round(h.score, 6)) for h in index.search(query, 7, {"session_id": "s2"})])
        out.append([(h.id, h.payload) for h in index.search(query, 3)])
        out.append([h.id for h in index.search(query, 5, {"chunk_id": {"in": ["odd-100", "odd-250"]}})])
    out.append([index.count(), index.count({"source_kind": "fact"}), index.count({"session_id": "s4"})])
    return out


def test_a_snapshot_caught_up_answers_like_a_load_from_tier2(tier2: Tier2, tmp_path: Path) -> None:
    path = _snapshot.snapshot_path(tmp_path / "tier3", MODEL)
    ids = _insert(tier2, _vectors(500, 1), 0)
    writer = _index(tier2, path)
    writer.refresh()
    _delete(tier2, ids[:200:2] + ids[300:420])  # more than a quarter: the writer compacts on refresh
    assert writer.save_snapshot() is True  # loaded from Tier 2: nothing to compare with, so written
    assert writer.save_snapshot() is False  # nothing changed since
    writer.close()
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700

    more = _insert(tier2, _vectors(150, 2), 500)
    _delete(tier2, ids[1:60:2] + more[:10])  # rows in the snapshot and rows added after it
    queries = np.concatenate((_vectors(6, 3), _vectors(500, 1)[[5, 250, 450]]))
    cold, fresh = _index(tier2, path), _index(tier2, None)
    try:
        # the cold index read only what changed since the snapshot: 140 new rows, 30 removed
        assert cold.refresh() == 140 + 30
        assert fresh.refresh() == 500 - 100 - 120 - 30 + 140  # every row
        assert _answers(cold, queries) == _answers(fresh, queries)
        # then both follow the same changes: more rows, and enough deletes for the cold one to compact
        # the rows it maps (copy-on-write: the file stays as written)
        later = _insert(tier2, _vectors(40, 4), 650)
        _delete(tier2, ids[200:300] + ids[420:480] + later[:5])
        assert _answers(cold, queries) == _answers(fresh, queries)
    finally:
        cold.close()
        fresh.close()
    again = _index(tier2, path)
    try:
        assert again.refresh() == 140 + 35 + 30 + 100 + 60  # the file was not changed by `cold`
        check = _index(tier2, None)
        assert _answers(again, queries) == _answers(check, queries)
        check.close()
    finally:
        again.close()


def _corrupt_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


def _truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 100])


def _garbage(path: Path) -> None:
    path.write_bytes(b"not a snapshot at all")


@pytest.mark.parametrize(
    "damage", [_corrupt_byte, _truncate, _garbage], ids=["flipped", "truncated", "garbage"]
)
def test_a_damaged_snapshot_is_ignored(
    tier2: Tier2, tmp_path: Path, damage: Any, caplog: pytest.LogCaptureFixture
) -> None:
    path = _snapshot.snapshot_path(tmp_path / "tier3", MODEL)
    _insert(tier2, _vectors(300, 1), 0)
    writer = _index(tier2, path)
    writer.refresh()  # loaded here first: an index never loaded writes nothing
    assert writer.save_snapshot() is True
    writer.close()
    damage(path)
    queries = _vectors(4, 5)
    cold, fresh = _index(tier2, path), _index(tier2, None)
    try:
        with caplog.at_level(logging.WARNING, logger=_exact.__name__):
            assert cold.refresh() == 300  # loaded from Tier 2
        assert [r.message for r in caplog.records if "snapshot ignored" in r.message]
        assert _answers(cold, queries) == _answers(fresh, queries)
    finally:
        cold.close()
        fresh.close()


def test_a_snapshot_of_another_store_or_model_is_ignored(
    tier2: Tier2, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = _snapshot.snapshot_path(tmp_path / "tier3", MODEL)
    other = Tier2.open(tmp_path / "other.db", view=ScopeView.all())
    try:
        _insert(other, _vectors(300, 1), 0)  # the same rows, ids and vectors: only its identity differs
        writer = _index(other, path)
        writer.refresh()
        assert writer.save_snapshot() is True
        writer.close()
    finally:
        other.close()
    _insert(tier2, _vectors(300, 1), 0)
    cold = _index(tier2, path)
    try:
        with caplog.at_level(logging.WARNING, logger=_exact.__name__):
            assert cold.refresh() == 300
        assert any("another store" in r.message for r in caplog.records)
    finally:
        cold.close()
    # a snapshot of this store's index under another model's name is not used for this model
    writer = _index(tier2, path)
    writer.refresh()
    assert writer.save_snapshot() is True
    writer.close()
    foreign = ExactIndex(
        VectorStore(tier2.db), "other-model", DIM, loader=tier2.chunks.get_many, payload_of=vector_payload,
        float_rows=0, snapshot=path,
    )  # fmt: skip
    try:
        assert foreign.refresh() == 0  # no vector of that model; the snapshot's rows are not taken
        assert foreign.size == 0
    finally:
        foreign.close()


def test_a_restored_store_does_not_trust_an_old_snapshot(tier2: Tier2, tmp_path: Path) -> None:
    path = _snapshot.snapshot_path(tmp_path / "tier3", MODEL)
    _insert(tier2, _vectors(300, 1), 0)
    writer = _index(tier2, path)
    writer.refresh()
    assert writer.save_snapshot() is True
    writer.close()
    with tier2.db.atomic() as conn:
        conn.execute("DELETE FROM vector_sync")  # what a restore does (the identity goes with the marks)
    cold = _index(tier2, path)
    try:
        assert cold.refresh() == 300
    finally:
        cold.close()


def test_a_forgotten_chunk_is_not_found_through_a_stale_snapshot(tier2: Tier2, tmp_path: Path) -> None:
    path = _snapshot.snapshot_path(tmp_path / "tier3", MODEL)
    vectors = _vectors(300, 1)
    ids = _insert(tier2, vectors, 0)
    writer = _index(tier2, path)
    writer.refresh()
    assert writer.save_snapshot() is True
    writer.close()
    with tier2.db.atomic() as conn:
        conn.execute("DELETE FROM chunks WHERE uuid = ?", (ids[42],))
        VectorStore(tier2.db).prune(conn, ())
    cold = _index(tier2, path)
    try:
        assert cold.refresh() == 1  # the snapshot was used, and its row removed from the tombstone
        assert f"chunk:{ids[42]}" not in {h.id for h in cold.search(vectors[42], 20)}
        assert cold.search(vectors[43], 1)[0].id == f"chunk:{ids[43]}"
        assert cold.save_snapshot(force=True) is True  # rewritten without the forgotten row
    finally:
        cold.close()
    meta, sections = _snapshot.read(path)
    assert meta["n"] == 299
    forgotten = uuid.UUID(ids[42]).int
    assert not ((sections["hi"] == forgotten >> 64) & (sections["lo"] == forgotten & (2**64 - 1))).any()


def test_a_small_or_unloaded_index_writes_no_snapshot(tier2: Tier2, tmp_path: Path) -> None:
    path = _snapshot.snapshot_path(tmp_path / "tier3", MODEL)
    _insert(tier2, _vectors(100, 1), 0)
    unloaded = _index(tier2, path)
    try:
        assert unloaded.save_snapshot(force=True) is False  # it never searched: no load for a snapshot
        assert unloaded.size == 0
    finally:
        unloaded.close()
    index = ExactIndex(
        VectorStore(tier2.db), MODEL, DIM, loader=tier2.chunks.get_many, payload_of=vector_payload,
        snapshot=path,
    )  # fmt: skip
    try:
        assert index.save_snapshot(force=True) is False  # float32 rows: it loads fast and scores exactly
    finally:
        index.close()
    assert not path.exists()


def test_a_forget_removes_the_snapshots(tmp_path: Path) -> None:
    opts = {"tier3.embedding_model": "hashing", "tier3.backend": "memory"}
    with MemoryAPI(hermes_home=tmp_path, **opts) as api:
        for i in range(4):
            api.remember_turn(f"I like colour number {i}", "Noted.", "s1", 1_700_000_000.0 + 60 * i)
        api.flush()
        api.embed_pending()
        sem = api.core.tiers.semantic()
        path = _snapshot.snapshot_path(sem.path, sem.model_id)
        writer = ExactIndex(
            sem.vector_store, sem.model_id, sem.cfg.embedding_dim, loader=api.tier2.chunks.get_many,
            payload_of=vector_payload, float_rows=0, snapshot=path,
        )  # fmt: skip
        writer.refresh()
        assert writer.save_snapshot() is True
        writer.close()
        stale = path.with_name(f".{path.name}.123.abcd.tmp")  # a temp file a killed writer left
        stale.write_bytes(b"x")
        episode = api.tier2.db.query("SELECT uuid FROM episodes ORDER BY id LIMIT 1")[0]["uuid"]
        result = api.forget(episode, confirm=True)
        assert result["success"], result["error"]
        assert not path.exists() and not stale.exists()


def test_a_chunk_deleted_while_a_snapshot_is_written_leaves_no_snapshot(
    tier2: Tier2, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _snapshot.snapshot_path(tmp_path / "tier3", MODEL)
    ids = _insert(tier2, _vectors(300, 1), 0)
    real_write = _snapshot.write

    def write_during_a_forget(*args: Any) -> int:
        size = real_write(*args)
        _delete(tier2, ids[:1])  # a forget commits after the index caught up and before the check
        return size

    monkeypatch.setattr(_snapshot, "write", write_during_a_forget)
    index = _index(tier2, path)
    try:
        assert index.save_snapshot() is False
    finally:
        index.close()
    assert not path.exists()


def test_a_mapped_snapshot_survives_its_replacement(tier2: Tier2, tmp_path: Path) -> None:
    path = _snapshot.snapshot_path(tmp_path / "tier3", MODEL)
    vectors = _vectors(300, 1)
    ids = _insert(tier2, vectors, 0)
    first = _index(tier2, path)
    first.refresh()
    assert first.save_snapshot() is True
    first.close()
    reader = _index(tier2, path)
    try:
        assert reader.refresh() == 0  # mapped from the file
        new = _insert(tier2, _vectors(100, 2), 300)
        writer = _index(tier2, path)
        writer.refresh()
        assert writer.save_snapshot() is False  # 100 rows caught up: below the margin
        assert writer.save_snapshot(force=True) is True  # another process renames a new file over it
        writer.close()
        assert reader.search(vectors[9], 1)[0].id == f"chunk:{ids[9]}"  # its mapping still reads
        assert reader.search(_vectors(100, 2)[3], 1)[0].id == f"chunk:{new[3]}"  # caught up meanwhile
    finally:
        reader.close()
    latest = _index(tier2, path)
    try:
        assert latest.refresh() == 0 and latest.size == 400
    finally:
        latest.close()


def test_the_idle_worker_and_close_write_the_snapshot_a_new_process_maps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_exact, "FLOAT_ROWS", 0)  # int8 from the first row: snapshots are written
    monkeypatch.setattr(_exact, "SNAPSHOT_MARGIN", 8)
    opts = {"tier3.embedding_model": "hashing", "tier3.backend": "memory"}
    query = "which colour did I like"
    with MemoryAPI(hermes_home=tmp_path, **opts) as api:
        for i in range(6):
            api.remember_turn(f"I like colour number {i}", "Noted.", "s1", 1_700_000_000.0 + 60 * i)
        api.flush()
        api.embed_pending()
        sem = api.core.tiers.semantic()
        path = _snapshot.snapshot_path(sem.path, sem.model_id)
        first = api.recall(query, tiers=["tier3"])
        assert first["success"], first["error"]
        assert not path.exists()  # recall writes nothing
        assert api.core.ingest.idle_upkeep() is False  # idle: the worker sleeps after writing it
        assert path.exists() and stat.S_IMODE(os.stat(path).st_mode) == 0o600
        written = path.stat().st_mtime_ns
        assert api.core.ingest.idle_upkeep() is False
        assert path.stat().st_mtime_ns == written  # nothing changed since: not written again
        for i in range(6, 12):
            api.remember_turn(f"I like colour number {i}", "Noted.", "s1", 1_700_000_000.0 + 60 * i)
        api.flush()
        api.embed_pending()
        after = api.recall(query, tiers=["tier3"])
    assert path.stat().st_mtime_ns != written  # close wrote it again: it changed by the margin
    with MemoryAPI(hermes_home=tmp_path, **opts) as api:
        sem = api.core.tiers.semantic()
        index = sem._exact_index()
        assert index.refresh() == 0  # mapped from the snapshot, nothing to catch up
        again = api.recall(query, tiers=["tier3"])
    # the same hits (scores within the drift of recall's recency weight between the two calls)
    assert [h["id"] for h in again["data"]["hits"]] == [h["id"] for h in after["data"]["hits"]]
    assert [h["score"] for h in again["data"]["hits"]] == pytest.approx(
        [h["score"] for h in after["data"]["hits"]]
    )


def test_an_older_copy_of_the_store_does_not_trust_a_newer_snapshot(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    db, old = tmp_path / "t2.db", tmp_path / "old.db"
    path = _snapshot.snapshot_path(tmp_path / "tier3", MODEL)
    store = Tier2.open(db, view=ScopeView.all())
    _insert(store, _vectors(300, 1), 0)
    VectorStore(store.db).ensure_identity()
    store.close()
    shutil.copy(db, old)  # a copy of the file, identity and all (not a restore, which drops it)
    store = Tier2.open(db, view=ScopeView.all())
    _insert(store, _vectors(100, 2), 300)
    writer = _index(store, path)
    writer.refresh()
    assert writer.save_snapshot() is True
    writer.close()
    store.close()
    shutil.copy(old, db)  # put back: the snapshot is ahead of it
    for suffix in ("-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    store = Tier2.open(db, view=ScopeView.all())
    try:
        cold = _index(store, path)
        with caplog.at_level(logging.WARNING, logger=_exact.__name__):
            assert cold.refresh() == 300
        cold.close()
        assert any("ahead of the store" in r.message for r in caplog.records)
        caplog.clear()
        _insert(store, _vectors(150, 3), 1000)  # grown past the snapshot's marks with other rows
        cold = _index(store, path)
        with caplog.at_level(logging.WARNING, logger=_exact.__name__):
            assert cold.refresh() == 450
        cold.close()
        assert any("another history" in r.message for r in caplog.records)
    finally:
        store.close()


def test_the_shared_exact_index_outlives_the_api_it_was_built_through(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Two MemoryAPIs on one store in one process share the exact index; the first one, through whose
    # database the index was loaded, closes while the other goes on recalling, writing a snapshot and
    # closing (the race a CI run of test_concurrent_turns hit: "memory database ... is closed").
    monkeypatch.setattr(_exact, "FLOAT_ROWS", 0)
    monkeypatch.setattr(_exact, "SNAPSHOT_MARGIN", 1)
    opts = {"tier3.embedding_model": "hashing", "tier3.backend": "memory"}
    first, second = MemoryAPI(hermes_home=tmp_path, **opts), MemoryAPI(hermes_home=tmp_path, **opts)
    try:
        for i in range(6):
            first.remember_turn(f"I like colour number {i}", "Noted.", "s1", 1_700_000_000.0 + 60 * i)
        first.flush()
        first.embed_pending()
        assert first.recall("which colour did I like", tiers=["tier3"])["data"]["hits"]  # loads it
        first.close()
        second.remember_turn("I like colour number 6", "Noted.", "s1", 1_700_000_400.0)
        second.flush()
        second.embed_pending()
        found = second.recall("colour number 6", tiers=["tier3"])
        assert found["success"] and not found["meta"].get("degraded"), found
        sem = second.core.tiers.semantic()
        assert sem.save_exact_snapshot(force=True) is True
    finally:
        first.close()
        second.close()
