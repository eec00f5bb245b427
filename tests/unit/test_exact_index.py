"""The exact index over the Tier 2 vectors: exact float32 scores while small, int8 past ``float_rows``,
and the rows matching a filter kept between searches while rows come and go."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from hermes_memory.errors import ValidationError
from hermes_memory.scoping import ScopeView
from hermes_memory.tier2.store import Tier2
from hermes_memory.tier2.vectors import VectorStore, to_blob
from hermes_memory.tier3 import _exact, _exact_rows, _exact_scoring
from hermes_memory.tier3._exact import ExactIndex
from hermes_memory.tier3._indexer import vector_payload

MODEL, DIM = "test-model", 32
KINDS = ("episode", "episode_window", "fact")
# int8 rows score within this of the float32 cosine score (at 32 dimensions)
INT8_TOLERANCE = 3e-3


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
    """Chunks ``first``.. with these vectors (kinds and sessions by number); returns their uuids."""
    ids = [str(uuid.UUID(int=(first + i + 1) * 7919)) for i in range(len(vectors))]
    with tier2.db.atomic() as conn:
        for i, (chunk_id, vector) in enumerate(zip(ids, vectors, strict=True)):
            n = first + i
            conn.execute(
                "INSERT INTO chunks(uuid, source_kind, source_uuid, session_id, text, content_hash,"
                " source_type, timestamp, created_at) VALUES (?, ?, ?, ?, ?, ?, 'session', ?, 0)",
                (chunk_id, KINDS[n % 3], f"src{n}", f"s{n % 5}", f"text {n}", f"h{n}", n),
            )
            conn.execute(
                "INSERT INTO vectors(model_id, text_hash, dim, vector, created_at) VALUES (?, ?, ?, ?, 0)",
                (MODEL, f"h{n}", DIM, to_blob(vector)),
            )
    return ids


def _delete(tier2: Tier2, ids: list[str]) -> None:
    with tier2.db.atomic() as conn:
        conn.executemany("DELETE FROM chunks WHERE uuid = ?", [(u,) for u in ids])


def _index(tier2: Tier2, **opts: Any) -> ExactIndex:
    return ExactIndex(
        VectorStore(tier2.db), MODEL, DIM, loader=tier2.chunks.get_many, payload_of=vector_payload, **opts
    )


def _truth(
    ids: list[str], vectors: npt.NDArray[np.float32], query: npt.NDArray[np.float32], keep: list[bool], k: int
) -> list[tuple[str, float]]:
    """The float32 ranking in numpy: (chunk id, (1 + cos) / 2) of the best ``k`` kept rows."""
    cos = vectors @ query
    rows = [i for i in np.argsort(-cos, kind="stable") if keep[i]][:k]
    return [(f"chunk:{ids[i]}", float((1.0 + cos[i]) / 2.0)) for i in rows]


def _kinds_filter(kind: str) -> dict[str, Any]:
    return {"source_kind": kind, "scope": {"in": ["default"]}}


def test_a_small_index_scores_every_row_exactly_in_float32(tier2: Tier2) -> None:
    vectors = _vectors(300, 1)
    ids = _insert(tier2, vectors, 0)
    exact, quantised = _index(tier2), _index(tier2, float_rows=0)
    try:
        for query in _vectors(20, 2):
            views = {kind: (10, _kinds_filter(kind)) for kind in KINDS}
            found = exact.search_many(query, views, fields=("chunk_id",))
            rough = quantised.search_many(query, views, fields=("chunk_id",))
            for n, kind in enumerate(KINDS):
                want = _truth(ids, vectors, query, [i % 3 == n for i in range(len(ids))], 10)
                got = [(h.id, h.score) for h in found[kind]]
                assert [g[0] for g in got] == [w[0] for w in want]  # same hits, same order
                assert np.allclose([g[1] for g in got], [w[1] for w in want], atol=1e-6, rtol=0)
                # the int8 rows find the same hits (random vectors: no near ties at the 10th)
                assert {h.id for h in rough[kind]} <= {w[0] for w in _truth(
                    ids, vectors, query, [i % 3 == n for i in range(len(ids))], 12)}  # fmt: skip
                truth = dict(want)
                assert max(abs(h.score - truth.get(h.id, h.score)) for h in rough[kind]) <= INT8_TOLERANCE
            assert exact.search(query, limit=5) == found_all(exact, query)
    finally:
        exact.close()
        quantised.close()


def found_all(index: ExactIndex, query: npt.NDArray[np.float32]) -> list[Any]:
    return index.search_many(query, {"all": (5, None)})["all"]


def test_growing_past_float_rows_drops_the_float32_rows_and_keeps_the_hits(tier2: Tier2) -> None:
    vectors = _vectors(120, 3)
    ids = _insert(tier2, vectors[:60], 0)
    index = _index(tier2, float_rows=100)
    try:
        query = vectors[7]
        assert index.search(query, limit=1)[0].id == f"chunk:{ids[7]}"
        assert index.search(query, limit=1)[0].score == pytest.approx(1.0, abs=1e-6)  # float32: exact
        ids += _insert(tier2, vectors[60:], 60)
        index.refresh()
        assert index._rows.floats is None  # 120 rows > float_rows: int8 from now on
        assert index.health()["matrix_bytes"] == _exact_rows.BLOCK * (DIM + 8)  # int8 rows and sign bits
        for n in (7, 65, 119):
            best = index.search(vectors[n], limit=3)
            assert best[0].id == f"chunk:{ids[n]}"
            assert best[0].score == pytest.approx(1.0, abs=INT8_TOLERANCE)
            want = _truth(ids, vectors, vectors[n], [True] * len(ids), 3)
            assert [h.id for h in best] == [w[0] for w in want]
    finally:
        index.close()


@pytest.mark.parametrize("float_rows", [_exact.FLOAT_ROWS, 0], ids=["float32", "int8"])
def test_the_rows_matching_a_filter_follow_new_and_removed_rows(
    tier2: Tier2, float_rows: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_exact_rows, "BLOCK", 8)  # compaction after a few deletes, rows across blocks
    monkeypatch.setattr(_exact_scoring, "FULL_ALL", 2)  # int8: the second stage scores a shortlist
    vectors = _vectors(90, 4)
    ids = _insert(tier2, vectors[:40], 0)
    index = _index(tier2, float_rows=float_rows)
    keep = [True] * 90
    try:
        views = {
            "s1": (50, {"session_id": "s1"}),
            "facts": (2, {"source_kind": "fact", "session_id": {"in": ["s2", "s3"]}}),
            "old": (3, {"timestamp": {"lt": 30}}),
        }

        def check(rows: int) -> None:
            fresh = _index(tier2, float_rows=float_rows)  # matches every filter from scratch
            try:
                for query in (vectors[1], vectors[33]):
                    got = index.search_many(query, views, fields=("chunk_id", "session_id"))
                    assert got == fresh.search_many(query, views, fields=("chunk_id", "session_id"))
                    s1 = {h.id for h in got["s1"]}
                    assert s1 == {f"chunk:{ids[i]}" for i in range(rows) if i % 5 == 1 and keep[i]}
                    assert index.count({"session_id": "s1"}) == len(s1)
            finally:
                fresh.close()

        check(40)  # the first search matches every row
        check(40)  # the second one re-uses the matching rows
        ids += _insert(tier2, vectors[40:70], 40)
        check(70)  # new rows matched on their own
        epoch = index._rows.epoch
        gone = [i for i in range(70) if i % 10 == 0]
        _delete(tier2, [ids[i] for i in gone])
        for i in gone:
            keep[i] = False
        check(70)  # removed rows dropped from the kept matches (too few to compact)
        assert index._rows.epoch == epoch
        ids += _insert(tier2, vectors[70:], 70)
        _delete(tier2, [ids[i] for i in range(70) if i % 4 == 1])  # and enough of them to compact
        for i in range(70):
            keep[i] = keep[i] and i % 4 != 1
        check(90)
        assert index._rows.epoch > epoch  # rows moved: the kept matches were rebuilt
    finally:
        index.close()


@pytest.mark.parametrize("float_rows", [_exact.FLOAT_ROWS, 0], ids=["float32", "int8"])
def test_search_values_reads_what_search_many_returns(tier2: Tier2, float_rows: int) -> None:
    vectors = _vectors(900, seed=11)
    _insert(tier2, vectors, 0)
    index = _index(tier2, float_rows=float_rows)
    try:
        views: dict[str, tuple[int, dict[str, Any] | None]] = {
            kind: (limit, {"source_kind": kind}) for kind, limit in zip(KINDS, (60, 40, 20), strict=True)
        }
        views["one session"] = (30, {"session_id": "s2"})
        for query in _vectors(5, seed=12):
            hits = index.search_many(query, views, fields=("source_uuid",))
            values = index.search_values(query, views, "source_uuid")
            assert values == {
                name: [(str(h.payload.get("source_uuid") or ""), h.score) for h in found]
                for name, found in hits.items()
            }
            assert all(len(values[name] or ()) == limit for name, (limit, _) in views.items())
        with pytest.raises(ValidationError):
            index.search_values(vectors[0], views, "text")
    finally:
        index.close()
