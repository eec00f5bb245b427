"""The exact index's two scoring stages: every row's float32 cosine or sign-bit distance to the query,
then the int8 cosine of the nearest rows; and ranking the scored rows."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from hermes_memory.tier2.vectors import FloatArray
from hermes_memory.tier3 import _exact_rows
from hermes_memory.tier3._blas_threads import blas_thread_cap
from hermes_memory.tier3._exact_rows import IndexRows

# The second stage scores in full the best max(FULL_MIN * limit, FULL_SHARE of the matching rows,
# FULL_ALL) rows (on real MiniLM vectors 512 rows agree with scoring all of them, 256 do not quite).
FULL_MIN = 4
FULL_SHARE = 0.02
FULL_ALL = 512


def first_stage(held: IndexRows, query: FloatArray) -> tuple[npt.NDArray[Any], bool]:
    """Every row's cosine with the (rotated) query from its float32 row (True) while the index keeps
    them, else the Hamming distance of its sign bits to the query's (False, ``sign_distances``)."""
    if held.floats is None:
        return sign_distances(held, query), False
    block = _exact_rows.BLOCK
    cos = np.empty(held.n, dtype=np.float32)
    with blas_thread_cap().limit(1):
        for start in range(0, held.n, block):
            rows = min(block, held.n - start)
            np.matmul(held.floats[start // block][:rows], query, out=cos[start : start + rows])
    return cos, True


def sign_distances(held: IndexRows, query: FloatArray) -> npt.NDArray[np.uint16]:
    """The first stage: for every row, in how many dimensions its sign differs from the query's (the
    rotation makes the signs random hyperplanes: the distance estimates the angle over all
    dimensions, 48 bytes a row at 384-d, XOR and popcount)."""
    mine = held.sign_words(query[None, :])[0][:, None]
    out = np.empty(held.n, dtype=np.uint16)
    block = _exact_rows.BLOCK
    # A block's words at once, into buffers reused block after block (three passes over a block instead
    # of three per word, no new arrays).
    xor = np.empty((held.words, block), dtype=np.uint64)
    bits = np.empty((held.words, block), dtype=np.uint8)
    for start in range(0, held.n, block):
        rows = min(block, held.n - start)
        np.bitwise_xor(held.signs[start // block][:, :rows], mine, out=xor[:, :rows])
        _popcount(xor[:, :rows], bits[:, :rows])
        np.sum(bits[:, :rows], axis=0, dtype=np.uint16, out=out[start : start + rows])
    return out


def second_stage(
    held: IndexRows,
    query: FloatArray,
    distances: npt.NDArray[Any],
    candidates: npt.NDArray[np.intp],
    limit: int,
    everything: bool,
) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.float32]]:
    """The rows scored in full (of ``candidates``, the nearest by sign bits) and their scores."""
    if not everything and len(candidates) > FULL_ALL:
        full = max(FULL_MIN * limit, int(np.ceil(FULL_SHARE * len(candidates))), FULL_ALL)
        if full < len(candidates):
            candidates = _nearest(candidates, distances[candidates], full)
    return candidates, full_scores(held, query, candidates)


def full_scores(held: IndexRows, query: FloatArray, rows: npt.NDArray[np.intp]) -> npt.NDArray[np.float32]:
    """The second stage: the int8 cosine of ``rows`` as ``(1 + cos) / 2``."""
    cos = np.empty(len(rows), dtype=np.float32)
    sub = _exact_rows.SUB
    # One int8 and one float32 buffer for every pass (a recall scores a few thousand rows per view).
    small = np.empty((min(sub, len(rows)), held.dim), dtype=np.int8)
    wide = np.empty(small.shape, dtype=np.float32)
    with blas_thread_cap().limit(1):
        for start in range(0, len(rows), sub):
            at = rows[start : start + sub]
            count = len(at)
            held.gather8(at, small[:count])
            np.copyto(wide[:count], small[:count])
            np.matmul(wide[:count], query, out=cos[start : start + count])
    cos *= held.factor[rows]
    return scores(cos)


def ranked(
    rows: npt.NDArray[np.intp], scored: npt.NDArray[np.float32], k: int
) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.float32]]:
    """The best ``k`` of ``rows`` and their scores, best first (equal scores by insertion, also at the
    cut: the best ``k`` are the first ``k`` of any deeper ranking)."""
    if k < len(rows):
        cut = np.partition(scored, len(scored) - k)[len(scored) - k]  # the k-th best score
        above = np.flatnonzero(scored > cut)
        top = np.concatenate((above, np.flatnonzero(scored == cut)[: k - len(above)]))
        rows, scored = rows[top], scored[top]
    order = np.lexsort((rows, -scored))
    return rows[order], scored[order]


def scores(cos: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """Cosines as the engines give scores: ``(1 + cos) / 2`` in [0, 1]."""
    out: npt.NDArray[np.float32] = np.clip((1.0 + cos) / 2.0, 0.0, 1.0).astype(np.float32)
    return out


def _nearest(rows: npt.NDArray[np.intp], distances: npt.NDArray[np.uint16], k: int) -> npt.NDArray[np.intp]:
    """The ``k`` of ``rows`` with the smallest distances (small integers), in row order; among rows
    at the cut-off distance the first ones. The cut-off distance is selected by a partition (a quarter
    of the time of a histogram, which widened the distances to 64 bits first), nothing is sorted but
    the kept rows."""
    cut = int(np.partition(distances, k - 1)[k - 1])  # the distance at which the k-th row lies
    keep = np.flatnonzero(distances <= cut)  # ascending: ``rows`` stay in their order
    extra = len(keep) - k
    if extra > 0:  # the last rows at the cut-off distance go
        at_cut = np.flatnonzero(distances[keep] == cut)
        keep = np.delete(keep, at_cut[len(at_cut) - extra :])
    out: npt.NDArray[np.intp] = np.sort(rows[keep])  # already so for the matching rows (ascending)
    return out


def _popcount_table(words: npt.NDArray[np.uint64], out: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint8]:
    """Set bits per uint64 word into ``out`` (same shape), for numpy < 2 (no ``np.bitwise_count``): a
    table of 16-bit counts."""
    halves = np.ascontiguousarray(words).view(np.uint16).reshape(*words.shape, 4)
    np.sum(_BITS16[halves], axis=-1, dtype=np.uint8, out=out)
    return out


_BITS16 = np.array([bin(i).count("1") for i in range(1 << 16)], dtype=np.uint8)
_popcount: Callable[[npt.NDArray[np.uint64], npt.NDArray[np.uint8]], npt.NDArray[np.uint8]] = getattr(
    np, "bitwise_count", _popcount_table
)
