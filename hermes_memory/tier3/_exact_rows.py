"""The exact index's rows: int8 matrix blocks, sign bits, float32 rows while few, and the column arrays
filters read; adding, finding, removing and compacting them (``tier3._exact`` searches them)."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from hermes_memory.tier2.chunks import ChunkRow
from hermes_memory.tier2.vectors import FloatArray
from hermes_memory.tier3._blas_threads import blas_thread_cap
from hermes_memory.tier3.backend import Payload, check_vectors

# Payload fields held as dictionary codes (few distinct values, filtered on by recall).
# source_uuid too: a source has a few chunks, and a code is 4 bytes where a string is ~85.
CODED = ("scope", "source_kind", "source_type", "category", "session_id", "fact_id", "source_uuid")
# The chunk id, held as two uint64 halves of its UUID (a string only for an id that is not one).
ID = "chunk_id"
NUMBERS = ("timestamp", "message_id")
# Every key of a chunk's payload (``_indexer.vector_payload``); the ones not held above are checked on
# the loaded chunk rows of candidate hits only.
PAYLOAD_KEYS = frozenset((*CODED, ID, *NUMBERS, "content_hash", "text_preview"))
HELD = frozenset((*CODED, ID, *NUMBERS))
# Rows per matrix block (3 MB at 384-d).
BLOCK = 8192
# Rows per float32 pass of the second stage (1.5 MB at 384-d); also the fewest rows added since the id
# order was last sorted that make a look-up by id sort it again.
SUB = 1024


class IndexRows:
    """The chunk vectors and held payload columns of one ``ExactIndex`` (not locked: the index holds
    its lock around every use).

    Row r lives in block r // BLOCK (its int8 row in ``rows8``, its sign bits in column r % BLOCK of
    ``signs``, word by word so the first stage reads each word of every row contiguously): growing adds
    a block and never copies the matrix. ``factor[r] = 1 / |q_r|`` turns a dot product into a cosine.
    """

    def __init__(self, dim: int, float_rows: int) -> None:
        self.dim = dim
        self.words = -(-dim // 64)  # uint64 words of a row's sign bits
        # The fixed rotation: built on first use (a QR of dim x dim), or taken from a snapshot (the one
        # its rows were turned by).
        self.rotation: npt.NDArray[np.float64] | None = None
        self.float_rows = float_rows
        self.epoch = 0  # a compaction (rows move) or a restore starts a new one
        self.removals = 0
        self.clear()

    def clear(self) -> None:
        """Hold no rows (the rotation and the epoch count stay)."""
        self.n = 0
        self.dead = 0
        self.rows8: list[npt.NDArray[np.int8]] = []
        # The leading blocks of ``rows8`` as one array when they lie back to back (a snapshot's section, a
        # first load's allocation): a gather of rows below ``len(whole8)`` is then one call, not one per
        # block (a recall gathers a few thousand rows spread over every block).
        self.whole8: npt.NDArray[np.int8] | None = None
        self.signs: list[npt.NDArray[np.uint64]] = []
        # The unit rows as float32 while the index holds at most ``float_rows`` rows (then None).
        self.floats: list[npt.NDArray[np.float32]] | None = [] if self.float_rows > 0 else None
        self.alive = np.zeros(0, dtype=bool)
        self.factor = np.zeros(0, dtype=np.float32)
        self.codes = {f: np.zeros(0, dtype=np.int32) for f in CODED}
        self.vocab: dict[str, dict[str, int]] = {f: {} for f in CODED}
        self.names: dict[str, list[str]] = {f: [] for f in CODED}
        # ``named``: each field's names (the list they were made from) as an object array, "" last.
        self._name_arrays: dict[str, tuple[list[str], npt.NDArray[Any]]] = {}
        # Chunk ids: row r's UUID is (hi[r] << 64) | lo[r]; an id that is no canonical UUID string (or
        # the nil UUID) has halves 0 and lives in odd/odd_at. Look-ups by id go through sorted_hi
        # /sorted_at (rows below ``indexed``, ordered by hi) plus a scan of the rows added since.
        self.hi = np.zeros(0, dtype=np.uint64)
        self.lo = np.zeros(0, dtype=np.uint64)
        self.odd: dict[int, str] = {}
        self.odd_at: dict[str, int] = {}
        self.sorted_hi = np.zeros(0, dtype=np.uint64)
        self.sorted_at = np.zeros(0, dtype=np.intp)
        self.indexed = 0
        self.numbers = {f: np.zeros(0, dtype=np.float64) for f in NUMBERS}

    @property
    def size(self) -> int:
        """Live rows."""
        return self.n - self.dead

    def blocks(self) -> list[npt.NDArray[Any]]:
        return [*self.rows8, *self.signs, *(self.floats or ())]

    def rotated(self, vectors: npt.ArrayLike) -> FloatArray:
        """Unit rows turned by the index's fixed rotation (cosines unchanged): every dimension then
        carries a like share of a vector, whatever the embedder (hashing vectors are sparse), so the
        first stage's ``HEAD`` dimensions rank fairly and int8 steps are even."""
        unit = check_vectors(vectors, self.dim)
        if self.rotation is None:
            self.rotation = rotation(self.dim)
        # In float64, then rounded: a float32 product may differ in its last bit with the batch it is in
        # (seen with OpenBLAS on AMD EPYC), and a row's int8 step with it; rounded from float64, a vector
        # turns the same alone, in a load's batch or in a refresh's.
        with blas_thread_cap().limit(1):
            out: FloatArray = (unit.astype(np.float64) @ self.rotation).astype(np.float32)
        return out

    # -- ids ----------------------------------------------------------------------------------------
    def find(self, uuids: Iterable[str]) -> dict[str, int]:
        """The live row of each of ``uuids`` that has one."""
        out: dict[str, int] = {}
        keys: dict[tuple[int, int], str] = {}
        for uuid in uuids:
            key = halves(uuid)
            if key is None:
                at = self.odd_at.get(uuid)
                if at is not None:
                    out[uuid] = at
            else:
                keys[key] = uuid
        if not keys:
            return out
        n = self.n
        if n - self.indexed > max(SUB, n // 8):
            order = np.argsort(self.hi[:n], kind="stable")
            self.sorted_hi, self.sorted_at, self.indexed = self.hi[order], order, n
        his = np.fromiter((k[0] for k in keys), dtype=np.uint64, count=len(keys))
        left = np.searchsorted(self.sorted_hi, his, "left")
        right = np.searchsorted(self.sorted_hi, his, "right")
        rows = [int(a) for i in np.flatnonzero(right > left) for a in self.sorted_at[left[i] : right[i]]]
        tail = self.hi[self.indexed : n]
        rows += (self.indexed + np.flatnonzero(np.isin(tail, his))).tolist()
        for at in rows:
            hit = keys.get((int(self.hi[at]), int(self.lo[at])))
            if hit is not None and self.alive[at]:
                out[hit] = at
        return out

    def chunk_id(self, at: int) -> str:
        odd = self.odd.get(at)
        if odd is not None:
            return odd
        h = f"{int(self.hi[at]):016x}{int(self.lo[at]):016x}"  # str(UUID(int=...)), 4x faster
        return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"

    # -- the held payload ------------------------------------------------------------------------------
    def held_payload(self, at: int, wanted: Iterable[str]) -> Payload:
        out: Payload = {}
        for field in wanted:
            value = self.value(field, at)
            if value is not None:
                out[field] = value
        return out

    def named(self, field: str, codes: npt.NDArray[np.int32]) -> list[str]:
        """The value of each of ``codes`` of the coded ``field``, "" for -1 (a row without one): one gather
        over the names as an array (code -1 reads the "" after them), made again only once a name was added
        or the names replaced (recall reads the source of a few hundred rows per view)."""
        names = self.names[field]
        held = self._name_arrays.get(field)
        if held is None or held[0] is not names or len(held[1]) != len(names) + 1:
            held = self._name_arrays[field] = (names, np.array([*names, ""], dtype=object))
        found: list[str] = held[1][codes].tolist()
        return found

    def value(self, field: str, at: int) -> str | int | float | None:
        if field in self.codes:
            code = int(self.codes[field][at])
            if code < 0:
                return None
            return self.names[field][code]
        if field == ID:
            return self.chunk_id(at)
        number = float(self.numbers[field][at])
        if np.isnan(number):
            return None
        return int(number) if field == "message_id" else number

    # -- changes ----------------------------------------------------------------------------------------
    def remove(self, uuids: Sequence[str]) -> int:
        """Mark the rows of ``uuids`` deleted; returns how many were held."""
        found = self.find(uuids)
        for uuid, at in found.items():
            self.alive[at] = False
            self.odd_at.pop(uuid, None)
        self.dead += len(found)
        self.removals += len(found)
        return len(found)

    def grow(self, need: int) -> None:
        """Make room for ``need`` rows."""
        if not self.rows8 and need > 0:  # the first blocks (a first load's: all of them) in one array
            count = -(-need // BLOCK)
            self.whole8 = np.zeros((count * BLOCK, self.dim), dtype=np.int8)
            self.rows8 = [self.whole8[b * BLOCK : (b + 1) * BLOCK] for b in range(count)]
            self.signs = [np.zeros((self.words, BLOCK), dtype=np.uint64) for _ in range(count)]
        while len(self.rows8) * BLOCK < need:
            self.rows8.append(np.zeros((BLOCK, self.dim), dtype=np.int8))
            self.signs.append(np.zeros((self.words, BLOCK), dtype=np.uint64))
        if need <= len(self.alive):
            return
        new = max(need, len(self.alive) + len(self.alive) // 2, BLOCK)  # the small per-row columns
        self.alive = _resized(self.alive, new, False)
        self.factor = _resized(self.factor, new, 0.0)
        self.codes = {f: _resized(a, new, -1) for f, a in self.codes.items()}
        self.hi = _resized(self.hi, new, 0)
        self.lo = _resized(self.lo, new, 0)
        self.numbers = {f: _resized(a, new, np.nan) for f, a in self.numbers.items()}

    def add(self, rows: Sequence[tuple[ChunkRow, FloatArray]]) -> None:
        """Hold the chunks of ``rows`` not held yet, with their vectors."""
        fresh: dict[str, tuple[ChunkRow, FloatArray]] = {}
        held = self.find(chunk.uuid for chunk, _ in rows)
        for chunk, vector in rows:
            # a chunk may come twice (the feed's guarantee is "none missed"): its vector is the same
            if chunk.uuid not in held:
                fresh.setdefault(chunk.uuid, (chunk, vector))
        if not fresh:
            return
        start = self.n
        self.grow(start + len(fresh))
        unit = self.rotated(np.stack([v for _, v in fresh.values()]))
        scale = np.abs(unit).max(axis=1, keepdims=True) / 127.0
        quantised = np.rint(unit / scale).astype(np.int8)  # |x / s| <= 127: no overflow
        norms = np.linalg.norm(quantised.astype(np.float32), axis=1)
        self.factor[start : start + len(fresh)] = 1.0 / norms  # the max entry is +-127: never zero
        put_rows(self.rows8, start, quantised)
        self._put_signs(start, self.sign_words(unit))
        self._put_floats(start, unit)
        chunks = [chunk for chunk, _ in fresh.values()]
        stop = start + len(chunks)
        keys = [halves(chunk.uuid) for chunk in chunks]
        self.hi[start:stop] = np.array([0 if k is None else k[0] for k in keys], dtype=np.uint64)
        self.lo[start:stop] = np.array([0 if k is None else k[1] for k in keys], dtype=np.uint64)
        for offset, (chunk, key) in enumerate(zip(chunks, keys, strict=True)):
            if key is None:
                self.odd[start + offset] = chunk.uuid
                self.odd_at[chunk.uuid] = start + offset
        self.alive[start:stop] = True
        columns: dict[str, list[str | None]] = {
            "scope": [c.scope for c in chunks], "source_kind": [c.source_kind for c in chunks],
            "source_type": [c.source_type for c in chunks], "category": [c.category for c in chunks],
            "session_id": [c.session_id for c in chunks],
            "fact_id": [c.source_uuid if c.source_kind == "fact" else None for c in chunks],
            "source_uuid": [c.source_uuid or "" for c in chunks],
        }  # fmt: skip
        for field, values in columns.items():
            vocab = self.vocab[field]
            self.codes[field][start:stop] = [
                -1 if v is None else vocab[v] if v in vocab else self._code(field, v) for v in values
            ]
        self.numbers["timestamp"][start:stop] = [float(c.timestamp) for c in chunks]
        self.numbers["message_id"][start:stop] = [
            np.nan if c.message_id is None else float(c.message_id) for c in chunks
        ]
        self.n = stop

    def gather8(self, at: npt.NDArray[np.intp], out: npt.NDArray[np.int8]) -> npt.NDArray[np.int8]:
        """The int8 rows ``at`` written into ``out`` (``len(at)`` rows): ``get_rows`` of ``rows8``, in one
        call while every row lies in ``whole8``."""
        whole = self.whole8
        if whole is not None and len(at) and int(at.max()) < len(whole):
            np.take(whole, at, axis=0, out=out)
            return out
        return get_rows(self.rows8, at, out=out)

    def sign_words(self, unit: FloatArray) -> npt.NDArray[np.uint64]:
        """Each row's sign bits (x > 0) as ``words`` little-endian uint64 words, shape (rows, words)."""
        packed = np.packbits(unit > 0, axis=1, bitorder="little")
        padded = np.zeros((len(unit), self.words * 8), dtype=np.uint8)
        padded[:, : packed.shape[1]] = packed
        return padded.view("<u8").astype(np.uint64)

    def _put_signs(self, start: int, words: npt.NDArray[np.uint64]) -> None:
        done = 0
        while done < len(words):
            block, offset = divmod(start + done, BLOCK)
            take = min(BLOCK - offset, len(words) - done)
            self.signs[block][:, offset : offset + take] = words[done : done + take].T
            done += take

    def _put_floats(self, start: int, unit: FloatArray) -> None:
        """Keep the float32 rows while the index is small; drop them for good once it is not."""
        if self.floats is None:
            return
        if start + len(unit) > self.float_rows:
            self.floats = None
            return
        while len(self.floats) * BLOCK < start + len(unit):
            self.floats.append(np.zeros((BLOCK, self.dim), dtype=np.float32))
        put_rows(self.floats, start, unit)

    def _code(self, field: str, value: str) -> int:
        vocab = self.vocab[field]
        code = vocab.get(value)
        if code is None:
            code = vocab[value] = len(vocab)
            self.names[field].append(value)
        return code

    def compact(self) -> None:
        """Drop deleted rows in place, block by block (a row only moves down, so its source is read
        before anything overwrites it): no second matrix is ever held. Starts a new epoch."""
        keep = np.flatnonzero(self.alive[: self.n])
        for start in range(0, len(keep), BLOCK):
            part = keep[start : start + BLOCK]
            matrices: list[Sequence[npt.NDArray[Any]]] = [self.rows8]
            if self.floats:
                matrices.append(self.floats)
            for blocks in matrices:
                put_rows(blocks, start, get_rows(blocks, part))
            which, at = np.divmod(part, BLOCK)
            words = np.empty((len(part), self.words), dtype=np.uint64)
            for block in np.unique(which):
                mine = which == block
                words[mine] = self.signs[int(block)][:, at[mine]].T
            self._put_signs(start, words)
        kept = -(-len(keep) // BLOCK)
        del self.rows8[kept:], self.signs[kept:]
        if self.whole8 is not None:
            self.whole8 = self.whole8[: kept * BLOCK]
        if self.floats is not None:
            del self.floats[kept:]
        self.alive = np.ones(len(keep), dtype=bool)
        self.factor = self.factor[keep]
        self.codes = {f: a[keep] for f, a in self.codes.items()}
        self.hi, self.lo = self.hi[keep], self.lo[keep]
        moved = {int(old): new for new, old in enumerate(keep.tolist())}
        self.odd = {moved[at]: uuid for at, uuid in self.odd.items() if at in moved}
        self.odd_at = {uuid: at for at, uuid in self.odd.items()}
        self.sorted_hi, self.sorted_at, self.indexed = self.hi[:0], self.sorted_at[:0], 0  # on use
        self.numbers = {f: a[keep] for f, a in self.numbers.items()}
        self.n = len(keep)
        self.dead = 0
        self.epoch += 1


def put_rows(blocks: Sequence[npt.NDArray[Any]], start: int, rows: npt.NDArray[Any]) -> None:
    """Write ``rows`` from row ``start`` on across ``blocks``."""
    done = 0
    while done < len(rows):
        block, offset = divmod(start + done, BLOCK)
        take = min(BLOCK - offset, len(rows) - done)
        blocks[block][offset : offset + take] = rows[done : done + take]
        done += take


def get_rows(
    blocks: Sequence[npt.NDArray[Any]], at: npt.NDArray[np.intp], *, out: npt.NDArray[Any] | None = None
) -> npt.NDArray[Any]:
    """Rows ``at`` of ``blocks``, as one array (written into ``out`` when given: ``len(at)`` rows of the
    blocks' width and type)."""
    if out is None:
        out = np.empty((len(at), blocks[0].shape[1]), dtype=blocks[0].dtype)
    if not len(at):
        return out
    which = at // BLOCK
    if bool((at[1:] < at[:-1]).any()):
        for block in np.unique(which):
            mine = which == block
            out[mine] = blocks[int(block)][at[mine] % BLOCK]
        return out
    # rows in order (the callers' case): each block's rows are one slice of ``at``, copied straight into
    # ``out`` (no array in between)
    edges = np.flatnonzero(np.diff(which)) + 1
    for lo, hi in zip([0, *edges.tolist()], [*edges.tolist(), len(at)], strict=True):
        np.take(blocks[int(which[lo])], at[lo:hi] % BLOCK, axis=0, out=out[lo:hi])
    return out


@functools.cache
def rotation(dim: int) -> npt.NDArray[np.float64]:
    """A fixed random orthogonal ``dim`` x ``dim`` matrix (seeded: the same in every process): float32
    values (what a snapshot keeps, so a snapshot's rotation is this one exactly) held in float64, the
    precision vectors are turned in (``IndexRows.rotated``)."""
    gauss = np.random.default_rng(13).standard_normal((dim, dim))
    with blas_thread_cap().limit(1):  # once per process; more threads only contend with the agent
        q, r = np.linalg.qr(gauss)
    out: npt.NDArray[np.float64] = (q * np.sign(np.diag(r))).astype(np.float32).astype(np.float64)
    return out


def _resized(arr: npt.NDArray[Any], size: int, fill: Any) -> npt.NDArray[Any]:
    out = np.full(size, fill, dtype=arr.dtype)
    out[: len(arr)] = arr
    return out


def halves(chunk_id: str) -> tuple[int, int] | None:
    """The two uint64 halves of a canonical (lower-case, hyphenated, non-nil) UUID string, else None."""
    if not _CANONICAL.fullmatch(chunk_id):
        return None
    value = int(chunk_id.replace("-", ""), 16)
    if value == 0:
        return None
    return value >> 64, value & 0xFFFF_FFFF_FFFF_FFFF


# What str(uuid.UUID(...)) gives: an id of this form round-trips through its two halves.
_CANONICAL = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
