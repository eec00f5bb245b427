"""The exact index's two scoring stages, computed block by block into reused buffers, give what scoring
each row on its own gives: the sign-bit distances (also through the popcount table numpy < 2 uses) and
the int8 cosines of rows spread over several blocks and passes."""

from __future__ import annotations

import numpy as np

from hermes_memory.tier3 import _exact_rows, _exact_scoring
from hermes_memory.tier3._exact_rows import IndexRows

DIM = 384


def _rows(n: int) -> IndexRows:
    """``n`` random rows (more than a block), as ``IndexRows.add`` would hold them."""
    rng = np.random.default_rng(5)
    held = IndexRows(DIM, float_rows=0)
    held.grow(n)
    held.n = n
    for block in range(len(held.rows8)):
        held.rows8[block][:] = rng.integers(-127, 128, size=held.rows8[block].shape, dtype=np.int8)
        held.signs[block][:] = rng.integers(0, 2**63, size=held.signs[block].shape, dtype=np.uint64)
    for block in range(len(held.rows8)):  # 1 / |row|: a unit query's products are cosines
        rows = held.rows8[block].astype(np.float32)
        start = block * _exact_rows.BLOCK
        count = min(_exact_rows.BLOCK, n - start)
        held.factor[start : start + count] = 1.0 / np.linalg.norm(rows[:count], axis=1)
    return held


def test_sign_distances_count_the_differing_bits_of_every_row() -> None:
    n = _exact_rows.BLOCK + 321
    held = _rows(n)
    query = np.random.default_rng(6).standard_normal(DIM).astype(np.float32)
    mine = held.sign_words(query[None, :])[0]
    got = _exact_scoring.sign_distances(held, query)
    for r in (0, 1, 4095, _exact_rows.BLOCK - 1, _exact_rows.BLOCK, n - 1):
        block, at = divmod(r, _exact_rows.BLOCK)
        words = held.signs[block][:, at] ^ mine
        assert got[r] == sum(bin(int(w)).count("1") for w in words), r
    assert got.dtype == np.uint16 and len(got) == n


def test_the_popcount_table_counts_as_numpy_does() -> None:
    words = np.random.default_rng(7).integers(0, 2**63, size=(6, 1000), dtype=np.uint64)
    words[0, :3] = [0, np.iinfo(np.uint64).max, 1]
    out = np.empty(words.shape, dtype=np.uint8)
    table = _exact_scoring._popcount_table(words, out)
    expected = np.array([[bin(int(w)).count("1") for w in row] for row in words], dtype=np.uint8)
    assert np.array_equal(table, expected)


def test_full_scores_equal_each_rows_own_cosine() -> None:
    n = 2 * _exact_rows.BLOCK + 50
    held = _rows(n)
    query = np.random.default_rng(8).standard_normal(DIM).astype(np.float32)
    query /= np.linalg.norm(query)
    picked = np.random.default_rng(9).choice(n, 2 * _exact_rows.SUB + 17, replace=False)
    rows = np.sort(picked).astype(np.intp)
    got = _exact_scoring.full_scores(held, query, rows)
    cos = np.array(
        [
            np.float32(held.rows8[r // _exact_rows.BLOCK][r % _exact_rows.BLOCK].astype(np.float32) @ query)
            * held.factor[r]
            for r in rows
        ],
        dtype=np.float32,
    )
    assert np.allclose(got, _exact_scoring.scores(cos), rtol=0, atol=1e-6)
    assert float(np.ptp(got)) > 0.1  # cosines spread, not clipped
    assert np.array_equal(_exact_scoring.full_scores(held, query, rows[:0]), np.empty(0, dtype=np.float32))


def test_nearest_keeps_the_closest_rows_and_the_first_ones_at_the_cut() -> None:
    rng = np.random.default_rng(10)
    rows = np.sort(rng.choice(50_000, 5_000, replace=False)).astype(np.intp)
    distances = rng.integers(150, 230, size=len(rows)).astype(np.uint16)  # many rows at each distance
    for k in (1, 37, 512, 2_000, 4_999):
        # a stable sort by distance keeps equal distances in row order: its first k are the rows wanted
        expected = np.sort(rows[np.argsort(distances, kind="stable")[:k]])
        got = _exact_scoring._nearest(rows, distances, k)
        assert np.array_equal(got, expected), k
    shuffled = rng.permutation(len(rows))  # rows in any order: the first ones met at the cut stay
    got = _exact_scoring._nearest(rows[shuffled], distances[shuffled], 700)
    expected = np.sort(rows[shuffled][np.argsort(distances[shuffled], kind="stable")[:700]])
    assert np.array_equal(got, expected)


def test_rows_are_gathered_alike_from_the_first_blocks_array_and_from_blocks_added_later() -> None:
    held = _rows(_exact_rows.BLOCK + 10)  # the first blocks: one array
    assert held.whole8 is not None and len(held.whole8) == 2 * _exact_rows.BLOCK
    held.grow(3 * _exact_rows.BLOCK + 5)  # a block of its own
    held.rows8[2][:] = np.random.default_rng(11).integers(-127, 128, size=held.rows8[2].shape, dtype=np.int8)
    at = np.array(
        [0, 5, _exact_rows.BLOCK - 1, _exact_rows.BLOCK + 3, 2 * _exact_rows.BLOCK + 7], dtype=np.intp
    )
    for rows in (at[:3], at, at[::-1]):
        got = held.gather8(rows, np.empty((len(rows), DIM), dtype=np.int8))
        expected = np.stack([held.rows8[r // _exact_rows.BLOCK][r % _exact_rows.BLOCK] for r in rows])
        assert np.array_equal(got, expected)
    assert held.rows8[0].base is held.whole8.base or held.rows8[0].base is held.whole8
