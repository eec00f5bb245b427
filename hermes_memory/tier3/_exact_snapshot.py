"""What of the exact index a snapshot holds: its rows as sections and metadata, the checks a snapshot
must pass to stand for a store's index, and taking its rows back (the file format is ``_snapshot``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from hermes_memory.tier2.vectors import Marks, VectorStore
from hermes_memory.tier3 import _exact_rows, _snapshot
from hermes_memory.tier3._exact_rows import CODED, NUMBERS, IndexRows, rotation


def metadata(
    held: IndexRows, model_id: str, store: VectorStore, identity: str, marks: Marks
) -> dict[str, Any]:
    """The snapshot's metadata: what it was written for and at, and the rows' names and odd ids."""
    return {
        "model_id": model_id, "dim": held.dim, "words": held.words, "block": _exact_rows.BLOCK,
        "identity": identity,
        "marks": [marks.chunk, marks.vector, marks.tombstone],
        "fingerprint": store.fingerprint(marks),
        "n": held.n, "names": held.names, "odd": sorted(held.odd.items()),
    }  # fmt: skip


def arrays(held: IndexRows) -> _snapshot.Sections:
    """The rows' arrays, by section name (a compacted index: every row is live)."""
    block = _exact_rows.BLOCK
    n, blocks = held.n, -(-held.n // block)
    order = np.argsort(held.hi[:n], kind="stable")
    out: dict[str, tuple[str, tuple[int, ...], Iterable[npt.NDArray[Any]]]] = {
        "rows8": ("|i1", (blocks * block, held.dim), held.rows8[:blocks]),
        "signs": ("<u8", (blocks, held.words, block), held.signs[:blocks]),
        "factor": ("<f4", (n,), [held.factor[:n]]),
        "hi": ("<u8", (n,), [held.hi[:n]]),
        "lo": ("<u8", (n,), [held.lo[:n]]),
        "sorted_at": ("<i8", (n,), [order]),
        "rotation": ("<f4", (held.dim, held.dim), [held.rotation if held.rotation is not None
                                                    else rotation(held.dim)]),
    }  # fmt: skip
    for field in CODED:
        out[f"code.{field}"] = ("<i4", (n,), [held.codes[field][:n]])
    for field in NUMBERS:
        out[f"number.{field}"] = ("<f8", (n,), [held.numbers[field][:n]])
    return out


def problem(
    held: IndexRows,
    model_id: str,
    store: VectorStore,
    meta: Mapping[str, Any],
    sections: Mapping[str, npt.NDArray[Any]],
    head: Marks,
) -> str | None:
    """Why the snapshot cannot stand for this store's index (None: it can). Raises KeyError, TypeError
    or ValueError for malformed metadata."""
    block = _exact_rows.BLOCK
    mine = {"model_id": model_id, "dim": held.dim, "words": held.words, "block": block}
    for key, value in mine.items():
        if meta[key] != value:
            return f"written for {key} {meta[key]!r}, this index has {value!r}"
    n = int(meta["n"])
    if n <= held.float_rows:
        return f"{n} rows: the index scores this few rows in float32"
    identity = store.identity()
    if identity is None or meta["identity"] != identity:
        return "written for another store (or before a restore)"
    marks = Marks(*(int(m) for m in meta["marks"]))
    if marks.chunk > head.chunk or marks.vector > head.vector or marks.tombstone > head.tombstone:
        return f"written at {marks}, ahead of the store ({head})"
    if meta["fingerprint"] != store.fingerprint(marks):
        return "written from another history of the store"
    blocks = -(-n // block)
    shapes = {
        "rows8": (blocks * block, held.dim), "signs": (blocks, held.words, block),
        "rotation": (held.dim, held.dim),
    }  # fmt: skip
    for name in ("factor", "hi", "lo", "sorted_at", *(f"code.{f}" for f in CODED),
                 *(f"number.{f}" for f in NUMBERS)):  # fmt: skip
        shapes[name] = (n,)
    for name, shape in shapes.items():
        if name not in sections or sections[name].shape != shape:
            return f"section {name} missing or not of shape {shape}"
    order = sections["sorted_at"]
    if n and (int(order.min()) < 0 or int(order.max()) >= n):
        return "row order out of range"
    for field in CODED:
        names = meta["names"][field]
        if not isinstance(names, list) or len(set(names)) != len(names):
            return f"the names of {field} are not distinct"
        codes = sections[f"code.{field}"]
        if n and (int(codes.min()) < -1 or int(codes.max()) >= len(meta["names"][field])):
            return f"codes of {field} out of range"
    if any(not 0 <= int(at) < n for at, _ in meta["odd"]):
        return "odd ids out of range"
    return None


def restore(held: IndexRows, meta: Mapping[str, Any], sections: Mapping[str, npt.NDArray[Any]]) -> Marks:
    """Hold the snapshot's rows (views of its copy-on-write mapping: pages are read when touched), in a
    new epoch. Returns the feed marks it was written at."""
    block = _exact_rows.BLOCK
    n = int(meta["n"])
    blocks = -(-n // block)
    rows8, signs = sections["rows8"], sections["signs"]
    held.rows8 = [rows8[b * block : (b + 1) * block] for b in range(blocks)]
    held.whole8 = rows8[: blocks * block]
    held.signs = [signs[b] for b in range(blocks)]
    held.floats = None
    # the one its rows were turned by (an empty index has none), held in float64 as built
    held.rotation = sections["rotation"].astype(np.float64)
    held.alive = np.ones(n, dtype=bool)
    held.factor = sections["factor"]
    held.codes = {f: sections[f"code.{f}"] for f in CODED}
    held.names = {f: list(meta["names"][f]) for f in CODED}  # JSON strings (CRC-checked)
    held.vocab = {f: dict(zip(v, range(len(v)), strict=True)) for f, v in held.names.items()}
    held.hi, held.lo = sections["hi"], sections["lo"]
    held.odd = {int(at): str(uuid) for at, uuid in meta["odd"]}
    held.odd_at = {uuid: at for at, uuid in held.odd.items()}
    held.sorted_at = sections["sorted_at"].astype(np.intp, copy=False)
    held.sorted_hi, held.indexed = held.hi[held.sorted_at], n
    held.numbers = {f: sections[f"number.{f}"] for f in NUMBERS}
    held.n, held.dead = n, 0
    held.epoch += 1
    return Marks(*(int(m) for m in meta["marks"]))
