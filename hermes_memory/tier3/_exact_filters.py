"""The backends' filter language evaluated on the exact index's column arrays, and the rows matching
each filter kept between searches (recall asks the same few views every time)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from hermes_memory.tier3._exact_rows import ID, PAYLOAD_KEYS, IndexRows
from hermes_memory.tier3.backend import Condition

# Filters whose matching rows are kept between searches (recall asks the same few views every time).
CACHED_FILTERS = 32


@dataclass(slots=True)
class _Matching:
    """The rows matching one filter as of ``epoch``, ``seen`` rows and ``removals`` removals."""

    epoch: int
    seen: int
    removals: int
    rows: npt.NDArray[np.intp]
    rest: tuple[Condition, ...]


class MatchingRows:
    """The rows matching a filter, by its conditions (the ``CACHED_FILTERS`` most recently used). New
    rows are matched on their own; removed rows are dropped from it on use; a new epoch of the rows
    (a compaction: rows move) starts it afresh."""

    def __init__(self) -> None:
        self._matching: dict[tuple[Condition, ...], _Matching] = {}

    def clear(self) -> None:
        self._matching.clear()

    def rows(
        self, held: IndexRows, conditions: tuple[Condition, ...]
    ) -> tuple[npt.NDArray[np.intp], tuple[Condition, ...]]:
        """The live rows matching the held fields' conditions (ascending), and the conditions left for
        loaded payloads. Kept per filter unless it asks for chunk ids: a search then matches only the
        rows added since the last one, and drops the rows removed since."""
        if any(c.field == ID for c in conditions):
            mask, rest = match(held, conditions)
            return np.flatnonzero(mask), rest
        n = held.n
        cached = self._matching.pop(conditions, None)
        if cached is None or cached.epoch != held.epoch:
            mask, rest = match(held, conditions)
            cached = _Matching(held.epoch, n, held.removals, np.flatnonzero(mask), rest)
        else:
            if cached.removals != held.removals:
                cached.rows = cached.rows[held.alive[cached.rows]]
                cached.removals = held.removals
            if cached.seen < n:
                mask, _ = match(held, conditions, cached.seen)
                cached.rows = np.concatenate((cached.rows, cached.seen + np.flatnonzero(mask)))
                cached.seen = n
        self._matching[conditions] = cached  # most recently used last
        while len(self._matching) > CACHED_FILTERS:
            del self._matching[next(iter(self._matching))]
        return cached.rows, cached.rest


def match(
    held: IndexRows, conditions: Sequence[Condition], start: int = 0
) -> tuple[npt.NDArray[np.bool_], tuple[Condition, ...]]:
    """Which of the rows from ``start`` on match the held fields' conditions (live rows only), and the
    conditions left for loaded payloads."""
    n = held.n
    mask = held.alive[start:n].copy()
    rest: list[Condition] = []
    for cond in conditions:
        if cond.field not in PAYLOAD_KEYS:
            mask[:] = False  # a field no chunk payload has: nothing matches (as in ``matches``)
        elif cond.field in held.codes:
            mask &= _coded(cond, held.codes[cond.field][start:n], held.vocab[cond.field])
        elif cond.field == ID:
            mask &= _id_match(held, cond)[start:]
        elif cond.field in held.numbers:
            values = held.numbers[cond.field][start:n]
            mask &= _number_match(cond, values, integer=cond.field == "message_id")
        else:
            rest.append(cond)
    return mask, tuple(rest)


def _coded(cond: Condition, codes: npt.NDArray[np.int32], vocab: Mapping[str, int]) -> npt.NDArray[np.bool_]:
    if cond.op == "range":
        return np.zeros(len(codes), dtype=bool)  # text is never in a numeric range
    values = [cond.value] if cond.op == "eq" else list(cond.values)
    wanted = [vocab[v] for v in values if isinstance(v, str) and v in vocab]
    if not wanted:
        return np.zeros(len(codes), dtype=bool)
    if len(wanted) == 1:
        same: npt.NDArray[np.bool_] = codes == wanted[0]
        return same
    return np.isin(codes, np.asarray(wanted, dtype=np.int32))


def _id_match(held: IndexRows, cond: Condition) -> npt.NDArray[np.bool_]:
    out = np.zeros(held.n, dtype=bool)
    if cond.op != "range":  # text is never in a numeric range
        values = [cond.value] if cond.op == "eq" else list(cond.values)
        rows = list(held.find(v for v in values if isinstance(v, str)).values())
        out[rows] = True
    return out


def _number_match(
    cond: Condition, values: npt.NDArray[np.float64], *, integer: bool
) -> npt.NDArray[np.bool_]:
    if cond.op == "range":
        mask = ~np.isnan(values)
        for op, bound in cond.bounds:
            mask &= _BOUNDS[op](values, bound)
        return mask
    # equality compares like kinds only: a float payload never equals, an int one only an int
    items = [cond.value] if cond.op == "eq" else list(cond.values)
    ints = [v for v in items if isinstance(v, int) and not isinstance(v, bool)]
    if not integer or not ints:
        return np.zeros(len(values), dtype=bool)
    return np.isin(values, np.asarray(ints, dtype=np.float64))


_BOUNDS: dict[str, Callable[[npt.NDArray[np.float64], float], npt.NDArray[np.bool_]]] = {
    "gte": lambda v, b: v >= b,
    "gt": lambda v, b: v > b,
    "lte": lambda v, b: v <= b,
    "lt": lambda v, b: v < b,
}
