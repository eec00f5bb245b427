"""Exact vector search over the Tier 2 vectors: what every process searches below
``tier3.engine_min_vectors`` (the default: up to 1M chunk vectors), and a process that does not own the
ANN engine above it.

An embedded engine (qdrant-edge) admits one process; the index answers ``search`` from the chunk
vectors of the current model, kept in step with Tier 2 through the change feed
(``VectorStore.changes``: new chunk/vector ids above the marks, deletions from the tombstones), so a
refresh costs three index seeks when nothing changed. Filters are the backends' filter language
evaluated on column arrays (the rows matching a filter are kept between searches and extended with
new rows), so a hit set equals the engine's (which is exact too below its indexing threshold, and
within HNSW's recall above it).

Rows: up to ``FLOAT_ROWS`` rows each is also held as float32 and every search scores every row exactly
(a small store loses nothing to quantisation). Past it only int8 rows are held: every vector is first
turned by a fixed random rotation (cosines unchanged; every dimension then carries a like share of
it), then quantised as ``q = rint(x / s)`` with ``s = max|x| / 127`` and scored by the cosine of ``q``
(``q . query / |q|``), with its sign bits beside it. Scoring is two-stage: the Hamming distance of every
row's sign bits to the query's (random-hyperplane hashing: XOR and popcount over 48 bytes a row), then
the int8 cosine of the nearest ``max(4 * limit, 2% of the matching rows, FULL_ALL)`` of them (top-10
agrees with float32 on 99.7% of hits on real MiniLM vectors; ``bench/exact_index.py``). Memory: 388 +
48 B a row at 384-d (112 MB at 258k chunks, i.e. 100k stored turns) in blocks of ``BLOCK`` rows
(growing never copies the matrix; deleted rows are compacted in place), plus a few small column arrays.

Snapshot: an index given a ``snapshot`` path maps its arrays from that file on its first refresh
(``tier3._snapshot``: checked whole, then against the store: model, dim, the store's identity, the feed
marks it was written at and the store's fingerprint there; its rows come with the rotation they were
turned by, so a cold process computes none) and catches up from the change feed like any refresh, so it
then holds what a load from Tier 2 would; a snapshot that fails a check is
ignored (logged once) and the index loads from Tier 2. ``save_snapshot`` writes one (off the recall
path: at close, or when the index changed by ``SNAPSHOT_MARGIN`` rows since it last loaded or wrote one).
Only int8 indexes are snapshotted (more than ``float_rows`` rows; a smaller store loads in well under a
second from Tier 2 and is scored in float32).
"""

from __future__ import annotations

import functools
import logging
import re
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from hermes_memory.errors import ValidationError
from hermes_memory.tier2.chunks import ChunkRow
from hermes_memory.tier2.vectors import FloatArray, Marks, VectorStore
from hermes_memory.tier3 import _snapshot
from hermes_memory.tier3._blas_threads import blas_thread_cap
from hermes_memory.tier3.backend import (
    Condition,
    Payload,
    VectorHit,
    check_fields,
    check_limit,
    check_vectors,
    matches,
    parse_filters,
    select_fields,
)

# Payload fields held as dictionary codes (few distinct values, filtered on by recall).
# source_uuid too: a source has a few chunks, and a code is 4 bytes where a string is ~85.
_CODED = ("scope", "source_kind", "source_type", "category", "session_id", "fact_id", "source_uuid")
# The chunk id, held as two uint64 halves of its UUID (a string only for an id that is not one).
_ID = "chunk_id"
_NUMBERS = ("timestamp", "message_id")
# Every key of a chunk's payload (``_indexer.vector_payload``); the ones not held above are checked on
# the loaded chunk rows of candidate hits only.
_PAYLOAD_KEYS = frozenset((*_CODED, _ID, *_NUMBERS, "content_hash", "text_preview"))
_HELD = frozenset((*_CODED, _ID, *_NUMBERS))
# Rows per matrix block (3 MB at 384-d).
BLOCK = 8192
# Rows per float32 pass of the second stage (1.5 MB at 384-d).
SUB = 1024
# The second stage scores in full the best max(FULL_MIN * limit, FULL_SHARE of the matching rows,
# FULL_ALL) rows (on real MiniLM vectors 512 rows agree with scoring all of them, 256 do not quite).
FULL_MIN = 4
FULL_SHARE = 0.02
FULL_ALL = 512
# Up to this many rows the index also keeps each row as float32 (1,536 B at 384-d, 24 MB at 16k) and
# scores every row exactly in one pass: a small store (LoCoMo-size: 2-3k rows) loses nothing to int8.
# Past it the float32 rows are dropped (for good, in this index) and the two stages above answer.
FLOAT_ROWS = 16384
# Filters whose matching rows are kept between searches (recall asks the same few views every time).
CACHED_FILTERS = 32
# Rows added or removed since the index last loaded or wrote a snapshot before ``save_snapshot`` writes a
# new one (a catch-up of this many rows from Tier 2 costs ~0.1 s).
SNAPSHOT_MARGIN = 4096

_log = logging.getLogger(__name__)

PayloadOf = Callable[[ChunkRow], Mapping[str, Any]]
Loader = Callable[[Sequence[str]], Mapping[str, ChunkRow]]


class ExactIndex:
    """The chunk vectors of one model, searched exactly; a read-only ``VectorBackend`` look-alike.

    ``loader`` maps chunk uuids to rows (store-wide) and ``payload_of`` builds a row's payload the way
    the engine stores it; both are used only for hits whose whole payload is asked for.
    """

    name = "exact"

    def __init__(
        self,
        store: VectorStore,
        model_id: str,
        dim: int,
        *,
        loader: Loader,
        payload_of: PayloadOf,
        float_rows: int | None = None,
        snapshot: Path | None = None,
    ) -> None:
        float_rows = FLOAT_ROWS if float_rows is None else float_rows
        self._store = store
        self._model_id = model_id
        self._dim = dim
        self._words = -(-dim // 64)  # uint64 words of a row's sign bits
        # The fixed rotation: built on first use (a QR of dim x dim), or taken from a snapshot (the one
        # its rows were turned by).
        self._rotation: npt.NDArray[np.float64] | None = None
        self._loader = loader
        self._payload_of = payload_of
        self._lock = threading.Lock()
        self._marks = Marks()
        self._n = 0
        self._dead = 0
        # Row r lives in block r // BLOCK (its int8 row in _rows8, its sign bits in column r % BLOCK of
        # _signs, word by word so the first stage reads each word of every row contiguously): growing adds
        # a block and never copies the matrix. _factor[r] = 1 / |q_r| turns a dot product into a cosine.
        self._rows8: list[npt.NDArray[np.int8]] = []
        self._signs: list[npt.NDArray[np.uint64]] = []
        # The unit rows as float32 while the index holds at most ``float_rows`` rows (then None).
        self._float_rows = float_rows
        self._floats: list[npt.NDArray[np.float32]] | None = [] if float_rows > 0 else None
        self._alive = np.zeros(0, dtype=bool)
        self._factor = np.zeros(0, dtype=np.float32)
        self._codes = {f: np.zeros(0, dtype=np.int32) for f in _CODED}
        self._vocab: dict[str, dict[str, int]] = {f: {} for f in _CODED}
        self._names: dict[str, list[str]] = {f: [] for f in _CODED}
        # Chunk ids: row r's UUID is (_hi[r] << 64) | _lo[r]; an id that is no canonical UUID string
        # (or the nil UUID) has halves 0 and lives in _odd/_odd_at. Lookups by id go through _sorted_hi
        # /_sorted_at (rows below _indexed, ordered by _hi) plus a scan of the rows added since.
        self._hi = np.zeros(0, dtype=np.uint64)
        self._lo = np.zeros(0, dtype=np.uint64)
        self._odd: dict[int, str] = {}
        self._odd_at: dict[str, int] = {}
        self._sorted_hi = np.zeros(0, dtype=np.uint64)
        self._sorted_at = np.zeros(0, dtype=np.intp)
        self._indexed = 0
        self._numbers = {f: np.zeros(0, dtype=np.float64) for f in _NUMBERS}
        # The rows matching a filter, by its conditions: (epoch, rows seen, removals seen, rows, the
        # conditions left for loaded payloads). New rows are matched on their own; removed rows are
        # dropped from it on use; a compaction (rows move) starts a new epoch.
        self._matching: dict[tuple[Condition, ...], _Matching] = {}
        self._epoch = 0
        self._removals = 0
        # query -> the first stage for all rows (full cosines when the float32 rows answered)
        self._last: tuple[bytes, npt.NDArray[Any], bool] | None = None
        # The snapshot file; the marks of the snapshot this index last loaded or wrote (None: none) and
        # the rows touched since; whether the first refresh tried it; whether a bad one was logged.
        self._snapshot = snapshot
        self._snapshot_base: Marks | None = None
        self._snapshot_touched = 0
        self._snapshot_tried = False
        self._snapshot_warned = False

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def collection(self) -> str:
        return "memory_chunks"

    @property
    def marks(self) -> Marks:
        return self._marks

    @property
    def size(self) -> int:
        """Chunk vectors held as of the last refresh."""
        return self._n - self._dead

    def rebind(self, store: VectorStore, loader: Loader) -> None:
        """Read Tier 2 through ``store`` and ``loader`` from now on: the view this index was built
        through is closing while other users of the shared collections go on (``tier3.shared``). Waits
        for a search, load or snapshot in progress through the old view to finish first."""
        with self._lock:
            self._store = store
            self._loader = loader

    # -- keeping up with Tier 2 -------------------------------------------------------------------
    def refresh(self) -> int:
        """Apply what changed in Tier 2 since the last refresh; returns the number of rows touched.

        Raises StorageError when Tier 2 cannot be read.
        """
        with self._lock:
            return self._refresh()

    def _refresh(self) -> int:
        """``refresh`` with the lock held."""
        head = self._store.heads()
        if head == self._marks:
            return 0
        if self._n == 0 and not self._snapshot_tried and self._snapshot is not None:
            self._snapshot_tried = True
            self._open_snapshot(self._snapshot, head)
        if self._n == 0:
            self._grow(head.chunk)  # a first load: room for every chunk id at once, no regrowth
        touched = 0
        while True:
            page = self._store.changes(self._model_id, self._dim, self._marks)
            touched += self._remove(page.removed)
            if page.rows:
                self._add(page.rows)
                touched += len(page.rows)
            self._marks = page.marks
            if not page.more:
                break
        if touched:
            self._last = None
            self._snapshot_touched += touched
        if self._dead > max(BLOCK, self._n // 4) or len(self._alive) > 2 * self._n + BLOCK:
            self._compact()  # deleted rows, or room for chunk ids that had no vector
        return touched

    def _remove(self, uuids: Sequence[str]) -> int:
        found = self._find(uuids)
        for uuid, at in found.items():
            self._alive[at] = False
            self._odd_at.pop(uuid, None)
        self._dead += len(found)
        self._removals += len(found)
        return len(found)

    def _find(self, uuids: Iterable[str]) -> dict[str, int]:
        """The live row of each of ``uuids`` that has one."""
        out: dict[str, int] = {}
        keys: dict[tuple[int, int], str] = {}
        for uuid in uuids:
            key = _halves(uuid)
            if key is None:
                at = self._odd_at.get(uuid)
                if at is not None:
                    out[uuid] = at
            else:
                keys[key] = uuid
        if not keys:
            return out
        n = self._n
        if n - self._indexed > max(SUB, n // 8):
            order = np.argsort(self._hi[:n], kind="stable")
            self._sorted_hi, self._sorted_at, self._indexed = self._hi[order], order, n
        his = np.fromiter((k[0] for k in keys), dtype=np.uint64, count=len(keys))
        left = np.searchsorted(self._sorted_hi, his, "left")
        right = np.searchsorted(self._sorted_hi, his, "right")
        rows = [int(a) for i in np.flatnonzero(right > left) for a in self._sorted_at[left[i] : right[i]]]
        tail = self._hi[self._indexed : n]
        rows += (self._indexed + np.flatnonzero(np.isin(tail, his))).tolist()
        for at in rows:
            hit = keys.get((int(self._hi[at]), int(self._lo[at])))
            if hit is not None and self._alive[at]:
                out[hit] = at
        return out

    def _chunk_id(self, at: int) -> str:
        odd = self._odd.get(at)
        if odd is not None:
            return odd
        h = f"{int(self._hi[at]):016x}{int(self._lo[at]):016x}"  # str(UUID(int=...)), 4x faster
        return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"

    def _grow(self, need: int) -> None:
        while len(self._rows8) * BLOCK < need:
            self._rows8.append(np.zeros((BLOCK, self._dim), dtype=np.int8))
            self._signs.append(np.zeros((self._words, BLOCK), dtype=np.uint64))
        if need <= len(self._alive):
            return
        new = max(need, len(self._alive) + len(self._alive) // 2, BLOCK)  # the small per-row columns
        self._alive = _resized(self._alive, new, False)
        self._factor = _resized(self._factor, new, 0.0)
        self._codes = {f: _resized(a, new, -1) for f, a in self._codes.items()}
        self._hi = _resized(self._hi, new, 0)
        self._lo = _resized(self._lo, new, 0)
        self._numbers = {f: _resized(a, new, np.nan) for f, a in self._numbers.items()}

    def _add(self, rows: Sequence[tuple[ChunkRow, FloatArray]]) -> None:
        fresh: dict[str, tuple[ChunkRow, FloatArray]] = {}
        held = self._find(chunk.uuid for chunk, _ in rows)
        for chunk, vector in rows:
            # a chunk may come twice (the feed's guarantee is "none missed"): its vector is the same
            if chunk.uuid not in held:
                fresh.setdefault(chunk.uuid, (chunk, vector))
        if not fresh:
            return
        start = self._n
        self._grow(start + len(fresh))
        unit = self._rotated(np.stack([v for _, v in fresh.values()]))
        scale = np.abs(unit).max(axis=1, keepdims=True) / 127.0
        quantised = np.rint(unit / scale).astype(np.int8)  # |x / s| <= 127: no overflow
        norms = np.linalg.norm(quantised.astype(np.float32), axis=1)
        self._factor[start : start + len(fresh)] = 1.0 / norms  # the max entry is +-127: never zero
        self._put_rows(self._rows8, start, quantised)
        self._put_signs(start, self._sign_words(unit))
        self._put_floats(start, unit)
        chunks = [chunk for chunk, _ in fresh.values()]
        stop = start + len(chunks)
        keys = [_halves(chunk.uuid) for chunk in chunks]
        self._hi[start:stop] = np.array([0 if k is None else k[0] for k in keys], dtype=np.uint64)
        self._lo[start:stop] = np.array([0 if k is None else k[1] for k in keys], dtype=np.uint64)
        for offset, (chunk, key) in enumerate(zip(chunks, keys, strict=True)):
            if key is None:
                self._odd[start + offset] = chunk.uuid
                self._odd_at[chunk.uuid] = start + offset
        self._alive[start:stop] = True
        columns: dict[str, list[str | None]] = {
            "scope": [c.scope for c in chunks], "source_kind": [c.source_kind for c in chunks],
            "source_type": [c.source_type for c in chunks], "category": [c.category for c in chunks],
            "session_id": [c.session_id for c in chunks],
            "fact_id": [c.source_uuid if c.source_kind == "fact" else None for c in chunks],
            "source_uuid": [c.source_uuid or "" for c in chunks],
        }  # fmt: skip
        for field, values in columns.items():
            vocab = self._vocab[field]
            self._codes[field][start:stop] = [
                -1 if v is None else vocab[v] if v in vocab else self._code(field, v) for v in values
            ]
        self._numbers["timestamp"][start:stop] = [float(c.timestamp) for c in chunks]
        self._numbers["message_id"][start:stop] = [
            np.nan if c.message_id is None else float(c.message_id) for c in chunks
        ]
        self._n = stop

    def _sign_words(self, unit: FloatArray) -> npt.NDArray[np.uint64]:
        """Each row's sign bits (x > 0) as ``words`` little-endian uint64 words, shape (rows, words)."""
        packed = np.packbits(unit > 0, axis=1, bitorder="little")
        padded = np.zeros((len(unit), self._words * 8), dtype=np.uint8)
        padded[:, : packed.shape[1]] = packed
        return padded.view("<u8").astype(np.uint64)

    def _put_signs(self, start: int, words: npt.NDArray[np.uint64]) -> None:
        done = 0
        while done < len(words):
            block, offset = divmod(start + done, BLOCK)
            take = min(BLOCK - offset, len(words) - done)
            self._signs[block][:, offset : offset + take] = words[done : done + take].T
            done += take

    def _put_floats(self, start: int, unit: FloatArray) -> None:
        """Keep the float32 rows while the index is small; drop them for good once it is not."""
        if self._floats is None:
            return
        if start + len(unit) > self._float_rows:
            self._floats = None
            return
        while len(self._floats) * BLOCK < start + len(unit):
            self._floats.append(np.zeros((BLOCK, self._dim), dtype=np.float32))
        self._put_rows(self._floats, start, unit)

    def _code(self, field: str, value: str) -> int:
        vocab = self._vocab[field]
        code = vocab.get(value)
        if code is None:
            code = vocab[value] = len(vocab)
            self._names[field].append(value)
        return code

    @staticmethod
    def _put_rows(blocks: Sequence[npt.NDArray[Any]], start: int, rows: npt.NDArray[Any]) -> None:
        done = 0
        while done < len(rows):
            block, offset = divmod(start + done, BLOCK)
            take = min(BLOCK - offset, len(rows) - done)
            blocks[block][offset : offset + take] = rows[done : done + take]
            done += take

    @staticmethod
    def _get_rows(blocks: Sequence[npt.NDArray[Any]], at: npt.NDArray[np.intp]) -> npt.NDArray[Any]:
        out = np.empty((len(at), blocks[0].shape[1]), dtype=blocks[0].dtype)
        if not len(at):
            return out
        which = at // BLOCK
        if bool((at[1:] < at[:-1]).any()):
            for block in np.unique(which):
                mine = which == block
                out[mine] = blocks[int(block)][at[mine] % BLOCK]
            return out
        # rows in order (the callers' case): each block's rows are one slice of ``at``
        edges = np.flatnonzero(np.diff(which)) + 1
        for lo, hi in zip([0, *edges.tolist()], [*edges.tolist(), len(at)], strict=True):
            out[lo:hi] = blocks[int(which[lo])][at[lo:hi] % BLOCK]
        return out

    def _compact(self) -> None:
        """Drop deleted rows in place, block by block (a row only moves down, so its source is read
        before anything overwrites it): no second matrix is ever held."""
        keep = np.flatnonzero(self._alive[: self._n])
        for start in range(0, len(keep), BLOCK):
            part = keep[start : start + BLOCK]
            matrices: list[Sequence[npt.NDArray[Any]]] = [self._rows8]
            if self._floats:
                matrices.append(self._floats)
            for blocks in matrices:
                self._put_rows(blocks, start, self._get_rows(blocks, part))
            which, at = np.divmod(part, BLOCK)
            words = np.empty((len(part), self._words), dtype=np.uint64)
            for block in np.unique(which):
                mine = which == block
                words[mine] = self._signs[int(block)][:, at[mine]].T
            self._put_signs(start, words)
        kept = -(-len(keep) // BLOCK)
        del self._rows8[kept:], self._signs[kept:]
        if self._floats is not None:
            del self._floats[kept:]
        self._alive = np.ones(len(keep), dtype=bool)
        self._factor = self._factor[keep]
        self._codes = {f: a[keep] for f, a in self._codes.items()}
        self._hi, self._lo = self._hi[keep], self._lo[keep]
        moved = {int(old): new for new, old in enumerate(keep.tolist())}
        self._odd = {moved[at]: uuid for at, uuid in self._odd.items() if at in moved}
        self._odd_at = {uuid: at for at, uuid in self._odd.items()}
        self._sorted_hi, self._sorted_at, self._indexed = self._hi[:0], self._sorted_at[:0], 0  # on use
        self._numbers = {f: a[keep] for f, a in self._numbers.items()}
        self._n = len(keep)
        self._dead = 0
        self._epoch += 1
        self._matching.clear()
        self._last = None

    # -- the snapshot -----------------------------------------------------------------------------
    def save_snapshot(self, *, force: bool = False, wait: bool = True) -> bool:
        """Write this index to its snapshot file after catching up with Tier 2 (deleted rows compacted
        away first: a forgotten chunk's vector is never written). Only an index that was loaded here and
        holds int8 rows, and unless ``force`` only when it loaded or wrote no snapshot yet or changed by
        ``SNAPSHOT_MARGIN`` rows since. Not for the recall path: it holds the index's lock while it
        writes (~0.2-0.4 s at 259k rows); ``wait=False`` gives up at once when a search or a load holds
        it. Returns whether it wrote one.

        Raises StorageError when Tier 2 cannot be read or written (the store's identity), OSError when
        the file cannot be written.
        """
        path = self._snapshot
        if path is None or not self._lock.acquire(blocking=wait):
            return False
        try:
            if self._marks == Marks():
                return False  # never loaded here: nothing to write (and no load for it)
            self._refresh()
            if self._floats is not None or self.size <= self._float_rows:
                return False
            if not force and self._snapshot_base is not None and self._snapshot_touched < SNAPSHOT_MARGIN:
                return False
            if self._dead:
                self._compact()
            marks = self._marks
            meta = self._snapshot_meta(self._store.ensure_identity(), marks)
            _snapshot.write(path, meta, self._snapshot_sections())
            self._snapshot_base, self._snapshot_touched = marks, 0
        finally:
            self._lock.release()
        if self._store.heads().tombstone > marks.tombstone:
            # A chunk was deleted while this was written (maybe a forget, whose erasure may have removed
            # the snapshots already): no file may keep its vector.
            path.unlink(missing_ok=True)
            return False
        return True

    def _snapshot_meta(self, identity: str, marks: Marks) -> dict[str, Any]:
        return {
            "model_id": self._model_id, "dim": self._dim, "words": self._words, "block": BLOCK,
            "identity": identity,
            "marks": [marks.chunk, marks.vector, marks.tombstone],
            "fingerprint": self._store.fingerprint(marks),
            "n": self._n, "names": self._names, "odd": sorted(self._odd.items()),
        }  # fmt: skip

    def _snapshot_sections(self) -> _snapshot.Sections:
        n, blocks = self._n, -(-self._n // BLOCK)
        order = np.argsort(self._hi[:n], kind="stable")
        out: dict[str, tuple[str, tuple[int, ...], Iterable[npt.NDArray[Any]]]] = {
            "rows8": ("|i1", (blocks * BLOCK, self._dim), self._rows8[:blocks]),
            "signs": ("<u8", (blocks, self._words, BLOCK), self._signs[:blocks]),
            "factor": ("<f4", (n,), [self._factor[:n]]),
            "hi": ("<u8", (n,), [self._hi[:n]]),
            "lo": ("<u8", (n,), [self._lo[:n]]),
            "sorted_at": ("<i8", (n,), [order]),
            "rotation": ("<f4", (self._dim, self._dim), [self._rotation if self._rotation is not None
                                                          else _rotation(self._dim)]),
        }  # fmt: skip
        for field in _CODED:
            out[f"code.{field}"] = ("<i4", (n,), [self._codes[field][:n]])
        for field in _NUMBERS:
            out[f"number.{field}"] = ("<f8", (n,), [self._numbers[field][:n]])
        return out

    def _open_snapshot(self, path: Path, head: Marks) -> None:
        """Take the index's rows from the snapshot at ``path`` if it passes every check (else log why, once,
        and leave the index empty: the caller loads from Tier 2). Called with the lock held."""
        try:
            meta, sections = _snapshot.read(path)
        except FileNotFoundError:
            return
        except (_snapshot.SnapshotError, OSError) as exc:
            self._ignore_snapshot(str(exc))
            return
        try:
            problem = self._snapshot_problem(meta, sections, head)
        except (KeyError, TypeError, ValueError) as exc:
            problem = f"malformed metadata ({exc!r})"
        if problem is not None:
            self._ignore_snapshot(f"{path}: {problem}")
            return
        self._restore(meta, sections)

    def _ignore_snapshot(self, why: str) -> None:
        log = _log.debug if self._snapshot_warned else _log.warning
        self._snapshot_warned = True
        log("exact index: snapshot ignored, loading from Tier 2 (%s)", why)

    def _snapshot_problem(
        self, meta: Mapping[str, Any], sections: Mapping[str, npt.NDArray[Any]], head: Marks
    ) -> str | None:
        """Why the snapshot cannot stand for this store's index (None: it can)."""
        mine = {"model_id": self._model_id, "dim": self._dim, "words": self._words, "block": BLOCK}
        for key, value in mine.items():
            if meta[key] != value:
                return f"written for {key} {meta[key]!r}, this index has {value!r}"
        n = int(meta["n"])
        if n <= self._float_rows:
            return f"{n} rows: the index scores this few rows in float32"
        identity = self._store.identity()
        if identity is None or meta["identity"] != identity:
            return "written for another store (or before a restore)"
        marks = Marks(*(int(m) for m in meta["marks"]))
        if marks.chunk > head.chunk or marks.vector > head.vector or marks.tombstone > head.tombstone:
            return f"written at {marks}, ahead of the store ({head})"
        if meta["fingerprint"] != self._store.fingerprint(marks):
            return "written from another history of the store"
        blocks = -(-n // BLOCK)
        shapes = {
            "rows8": (blocks * BLOCK, self._dim), "signs": (blocks, self._words, BLOCK),
            "rotation": (self._dim, self._dim),
        }  # fmt: skip
        for name in ("factor", "hi", "lo", "sorted_at", *(f"code.{f}" for f in _CODED),
                     *(f"number.{f}" for f in _NUMBERS)):  # fmt: skip
            shapes[name] = (n,)
        for name, shape in shapes.items():
            if name not in sections or sections[name].shape != shape:
                return f"section {name} missing or not of shape {shape}"
        order = sections["sorted_at"]
        if n and (int(order.min()) < 0 or int(order.max()) >= n):
            return "row order out of range"
        for field in _CODED:
            names = meta["names"][field]
            if not isinstance(names, list) or len(set(names)) != len(names):
                return f"the names of {field} are not distinct"
            codes = sections[f"code.{field}"]
            if n and (int(codes.min()) < -1 or int(codes.max()) >= len(meta["names"][field])):
                return f"codes of {field} out of range"
        if any(not 0 <= int(at) < n for at, _ in meta["odd"]):
            return "odd ids out of range"
        return None

    def _restore(self, meta: Mapping[str, Any], sections: Mapping[str, npt.NDArray[Any]]) -> None:
        """Hold the snapshot's rows (views of its copy-on-write mapping: pages are read when touched)."""
        n = int(meta["n"])
        blocks = -(-n // BLOCK)
        rows8, signs = sections["rows8"], sections["signs"]
        self._rows8 = [rows8[b * BLOCK : (b + 1) * BLOCK] for b in range(blocks)]
        self._signs = [signs[b] for b in range(blocks)]
        self._floats = None
        # the one its rows were turned by (an empty index has none), held in float64 as built
        self._rotation = sections["rotation"].astype(np.float64)
        self._alive = np.ones(n, dtype=bool)
        self._factor = sections["factor"]
        self._codes = {f: sections[f"code.{f}"] for f in _CODED}
        self._names = {f: list(meta["names"][f]) for f in _CODED}  # JSON strings (CRC-checked)
        self._vocab = {f: dict(zip(v, range(len(v)), strict=True)) for f, v in self._names.items()}
        self._hi, self._lo = sections["hi"], sections["lo"]
        self._odd = {int(at): str(uuid) for at, uuid in meta["odd"]}
        self._odd_at = {uuid: at for at, uuid in self._odd.items()}
        self._sorted_at = sections["sorted_at"].astype(np.intp, copy=False)
        self._sorted_hi, self._indexed = self._hi[self._sorted_at], n
        self._numbers = {f: sections[f"number.{f}"] for f in _NUMBERS}
        self._n, self._dead = n, 0
        self._epoch += 1
        self._matching.clear()
        self._last = None
        self._marks = Marks(*(int(m) for m in meta["marks"]))
        self._snapshot_base, self._snapshot_touched = self._marks, 0

    # -- searching --------------------------------------------------------------------------------
    def search(
        self,
        vector: npt.ArrayLike,
        limit: int = 10,
        filters: Mapping[str, Any] | None = None,
        *,
        fields: Sequence[str] | None = None,
    ) -> list[VectorHit]:
        """The ``limit`` nearest chunks matching ``filters``, best first (scores as the engines give
        them: ``(1 + cos) / 2``). Refreshes from Tier 2 first.

        Raises ValidationError for a bad vector, limit, filter or field; StorageError when Tier 2
        cannot be read.
        """
        check_limit(limit)
        conditions = parse_filters(filters)
        wanted = check_fields(fields)
        unit = check_vectors(vector, self._dim)
        self.refresh()  # first: a cold index may take its rotation from its snapshot
        query = self._rotated(unit)[0]
        with self._lock:
            picked, rest = self._pick(query, self._first_stage(query), conditions, limit)
        return self._hits(picked, rest, wanted, limit)

    def search_many(
        self,
        vector: npt.ArrayLike,
        views: Mapping[str, tuple[int, Mapping[str, Any] | None]],
        *,
        fields: Sequence[str] | None = None,
    ) -> dict[str, list[VectorHit]]:
        """``search`` for several ``(limit, filters)`` views of one query vector: one refresh and one
        first-stage pass, then each view's rows are scored in full and ranked (recall's per-kind
        searches). Returns the hits by view name, each list equal to ``search(vector, limit, filters,
        fields=fields)``.

        Raises what ``search`` raises.
        """
        wanted = check_fields(fields)
        parsed = _parsed_views(views)
        unit = check_vectors(vector, self._dim)
        self.refresh()
        query = self._rotated(unit)[0]
        picks: dict[str, tuple[list[tuple[str, float, int]], tuple[Condition, ...], Any, int]] = {}
        with self._lock:
            heads = self._first_stage(query)
            for name, (limit, conditions) in parsed.items():
                picked, rest = self._pick(query, heads, conditions, limit)
                picks[name] = (picked, rest, wanted, limit)
        return {name: self._hits(*pick) for name, pick in picks.items()}

    def _rotated(self, vectors: npt.ArrayLike) -> FloatArray:
        """Unit rows turned by the index's fixed rotation (cosines unchanged): every dimension then
        carries a like share of a vector, whatever the embedder (hashing vectors are sparse), so the
        first stage's ``HEAD`` dimensions rank fairly and int8 steps are even."""
        unit = check_vectors(vectors, self._dim)
        if self._rotation is None:
            self._rotation = _rotation(self._dim)
        # In float64, then rounded: a float32 product may differ in its last bit with the batch it is in
        # (seen with OpenBLAS on AMD EPYC), and a row's int8 step with it; rounded from float64, a vector
        # turns the same alone, in a load's batch or in a refresh's.
        with blas_thread_cap().limit(1):
            out: FloatArray = (unit.astype(np.float64) @ self._rotation).astype(np.float32)
        return out

    def _pick(
        self,
        query: FloatArray,
        first: tuple[npt.NDArray[Any], bool],
        conditions: Sequence[Condition],
        limit: int,
    ) -> tuple[list[tuple[str, float, int]], tuple[Condition, ...]]:
        """(chunk uuid, score, row) of the rows matching the held conditions, best first (the first
        ``limit`` when no condition is left for the loaded payloads, else all of them), and the
        conditions left for the loaded payloads.

        The rows scored in full are the best ``max(FULL_MIN * limit, FULL_SHARE of the matching rows)``
        by their head cosine (all of them when there are few, or when conditions are left for the
        loaded payloads). ``first``: every row's full cosine when the float32 rows answered (True), else
        every row's sign-bit distance to the query (False)."""
        rows, ranked, rest = self._best_rows(query, first, conditions, limit)
        return [(self._chunk_id(i), s, i) for i, s in zip(rows.tolist(), ranked.tolist(), strict=True)], rest

    def _best_rows(
        self,
        query: FloatArray,
        first: tuple[npt.NDArray[Any], bool],
        conditions: Sequence[Condition],
        limit: int,
    ) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.float32], tuple[Condition, ...]]:
        """``_pick``'s rows and scores as arrays, best first, and the conditions left for the payloads."""
        stage, full_cosines = first
        candidates, rest = self._matching_rows(tuple(conditions))
        if not len(candidates):
            return candidates, np.empty(0, dtype=np.float32), rest
        if full_cosines:
            scores = _scores(stage[candidates])
        else:
            candidates, scores = self._second_stage(query, stage, candidates, limit, bool(rest))
        rows, ranked = self._ranked(candidates, scores, limit if not rest else len(candidates))
        return rows, ranked, rest

    def search_values(
        self, vector: npt.ArrayLike, views: Mapping[str, tuple[int, Mapping[str, Any] | None]], field: str
    ) -> dict[str, list[tuple[str, float]] | None]:
        """``search_many`` reduced to what recall reads: per view, each hit's ``field`` (a payload field
        the index holds as codes, e.g. ``source_uuid``; "" when the chunk has none) and score, best first,
        without building hits. A view whose filters need the loaded payloads maps to None (ask
        ``search_many``).

        Raises ValidationError for a field the index does not hold as codes, and what ``search`` raises.
        """
        if field not in _CODED:
            raise ValidationError(f"search_values reads a coded field {sorted(_CODED)}, not {field!r}")
        parsed = _parsed_views(views)
        unit = check_vectors(vector, self._dim)
        self.refresh()
        query = self._rotated(unit)[0]
        out: dict[str, list[tuple[str, float]] | None] = {}
        with self._lock:
            first = self._first_stage(query)
            codes, names = self._codes[field], self._names[field]
            for name, (limit, conditions) in parsed.items():
                rows, scores, rest = self._best_rows(query, first, conditions, limit)
                if rest:
                    out[name] = None
                    continue
                out[name] = [
                    (names[c] if c >= 0 else "", s)
                    for c, s in zip(codes[rows].tolist(), scores.tolist(), strict=True)
                ]
        return out

    def _second_stage(
        self,
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
        return candidates, self._full_scores(query, candidates)

    @staticmethod
    def _ranked(
        rows: npt.NDArray[np.intp], scores: npt.NDArray[np.float32], k: int
    ) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.float32]]:
        """The best ``k`` of ``rows`` and their scores, best first (equal scores by insertion)."""
        if k < len(rows):
            top = np.argpartition(scores, len(scores) - k)[len(scores) - k :]
            rows, scores = rows[top], scores[top]
        order = np.lexsort((rows, -scores))
        return rows[order], scores[order]

    def _first_stage(self, query: FloatArray) -> tuple[npt.NDArray[Any], bool]:
        """Every row's cosine with the query from its float32 row (True) while the index keeps them,
        else the Hamming distance of its sign bits to the query's (False, ``_sign_distances``)."""
        key = query.tobytes()
        if self._last is not None and self._last[0] == key:
            return self._last[1], self._last[2]
        cos: npt.NDArray[Any]
        if self._floats is None:
            cos, full = self._sign_distances(query), False
        else:
            cos, full = np.empty(self._n, dtype=np.float32), True
            with blas_thread_cap().limit(1):
                for start in range(0, self._n, BLOCK):
                    rows = min(BLOCK, self._n - start)
                    np.matmul(self._floats[start // BLOCK][:rows], query, out=cos[start : start + rows])
        self._last = (key, cos, full)  # recall searches one query vector once per chunk kind
        return cos, full

    def _sign_distances(self, query: FloatArray) -> npt.NDArray[np.uint16]:
        """The first stage: for every row, in how many dimensions its sign differs from the query's (the
        rotation makes the signs random hyperplanes: the distance estimates the angle over all
        dimensions, 48 bytes a row at 384-d, XOR and popcount)."""
        mine = self._sign_words(query[None, :])[0]
        out = np.zeros(self._n, dtype=np.uint16)
        for start in range(0, self._n, BLOCK):
            rows = min(BLOCK, self._n - start)
            block = self._signs[start // BLOCK]
            acc = out[start : start + rows]
            for word in range(self._words):
                acc += _popcount(block[word, :rows] ^ mine[word])
        return out

    def _full_scores(self, query: FloatArray, rows: npt.NDArray[np.intp]) -> npt.NDArray[np.float32]:
        """The second stage: the int8 cosine of ``rows`` as ``(1 + cos) / 2``."""
        cos = np.empty(len(rows), dtype=np.float32)
        with blas_thread_cap().limit(1):
            for start in range(0, len(rows), SUB):
                at = rows[start : start + SUB]
                full = self._get_rows(self._rows8, at).astype(np.float32)
                cos[start : start + len(at)] = (full @ query) * self._factor[at]
        return _scores(cos)

    def _hits(
        self,
        picked: list[tuple[str, float, int]],
        rest: tuple[Condition, ...],
        wanted: tuple[str, ...] | None,
        limit: int,
    ) -> list[VectorHit]:
        held = wanted is not None and set(wanted) <= _HELD
        if not rest and held:
            return [
                VectorHit(f"chunk:{u}", s, self._held_payload(at, wanted or ()))
                for u, s, at in picked[:limit]
            ]
        out: list[VectorHit] = []
        step = max(limit, 64)
        for start in range(0, len(picked), step):
            part = picked[start : start + step]
            rows = self._loader([u for u, _, _ in part])
            for uuid, score, _ in part:
                chunk = rows.get(uuid)
                if chunk is None:  # deleted since the last refresh
                    continue
                payload = dict(self._payload_of(chunk))
                if rest and not matches(payload, rest):
                    continue
                out.append(VectorHit(f"chunk:{uuid}", score, select_fields(payload, wanted)))
                if len(out) >= limit:
                    return out
        return out

    def _held_payload(self, at: int, wanted: Iterable[str]) -> Payload:
        out: Payload = {}
        for field in wanted:
            value = self._value(field, at)
            if value is not None:
                out[field] = value
        return out

    def _value(self, field: str, at: int) -> str | int | float | None:
        if field in self._codes:
            code = int(self._codes[field][at])
            if code < 0:
                return None
            return self._names[field][code]
        if field == _ID:
            return self._chunk_id(at)
        number = float(self._numbers[field][at])
        if np.isnan(number):
            return None
        return int(number) if field == "message_id" else number

    def _matching_rows(
        self, conditions: tuple[Condition, ...]
    ) -> tuple[npt.NDArray[np.intp], tuple[Condition, ...]]:
        """The live rows matching the held fields' conditions (ascending), and the conditions left for
        loaded payloads. Kept per filter (``CACHED_FILTERS``) unless it asks for chunk ids: a search
        then matches only the rows added since the last one, and drops the rows removed since."""
        if any(c.field == _ID for c in conditions):
            mask, rest = self._mask(conditions)
            return np.flatnonzero(mask), rest
        n = self._n
        cached = self._matching.pop(conditions, None)
        if cached is None or cached.epoch != self._epoch:
            mask, rest = self._mask(conditions)
            cached = _Matching(self._epoch, n, self._removals, np.flatnonzero(mask), rest)
        else:
            if cached.removals != self._removals:
                cached.rows = cached.rows[self._alive[cached.rows]]
                cached.removals = self._removals
            if cached.seen < n:
                mask, _ = self._mask(conditions, cached.seen)
                cached.rows = np.concatenate((cached.rows, cached.seen + np.flatnonzero(mask)))
                cached.seen = n
        self._matching[conditions] = cached  # most recently used last
        while len(self._matching) > CACHED_FILTERS:
            del self._matching[next(iter(self._matching))]
        return cached.rows, cached.rest

    def _mask(
        self, conditions: Sequence[Condition], start: int = 0
    ) -> tuple[npt.NDArray[np.bool_], tuple[Condition, ...]]:
        """Which of the rows from ``start`` on match the held fields' conditions (live rows only), and
        the conditions left for loaded payloads."""
        n = self._n
        mask = self._alive[start:n].copy()
        rest: list[Condition] = []
        for cond in conditions:
            if cond.field not in _PAYLOAD_KEYS:
                mask[:] = False  # a field no chunk payload has: nothing matches (as in ``matches``)
            elif cond.field in self._codes:
                mask &= self._coded(cond, self._codes[cond.field][start:n], self._vocab[cond.field])
            elif cond.field == _ID:
                mask &= self._id_match(cond, n)[start:]
            elif cond.field in self._numbers:
                values = self._numbers[cond.field][start:n]
                mask &= _number_match(cond, values, integer=cond.field == "message_id")
            else:
                rest.append(cond)
        return mask, tuple(rest)

    @staticmethod
    def _coded(
        cond: Condition, codes: npt.NDArray[np.int32], vocab: Mapping[str, int]
    ) -> npt.NDArray[np.bool_]:
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

    def _id_match(self, cond: Condition, n: int) -> npt.NDArray[np.bool_]:
        out = np.zeros(n, dtype=bool)
        if cond.op != "range":  # text is never in a numeric range
            values = [cond.value] if cond.op == "eq" else list(cond.values)
            rows = list(self._find(v for v in values if isinstance(v, str)).values())
            out[rows] = True
        return out

    def count(self, filters: Mapping[str, Any] | None = None) -> int:
        """Chunks with a vector (matching ``filters`` on the held fields). Refreshes first."""
        conditions = parse_filters(filters)
        self.refresh()
        with self._lock:
            rows, _ = self._matching_rows(conditions)
            return len(rows)

    def health(self) -> dict[str, Any]:
        with self._lock:
            return {
                "backend": self.name, "collection": self.collection, "dim": self._dim,
                "count": int(self._alive[: self._n].sum()), "ok": True,
                "matrix_bytes": sum(int(b.nbytes) for b in self._blocks()),
            }  # fmt: skip

    def _blocks(self) -> list[npt.NDArray[Any]]:
        return [*self._rows8, *self._signs, *(self._floats or ())]

    def close(self) -> None:
        with self._lock:
            self._rows8, self._signs = [], []
            self._floats = [] if self._float_rows > 0 else None
            self._n = self._dead = 0
            self._alive = np.zeros(0, dtype=bool)
            self._factor = np.zeros(0, dtype=np.float32)
            self._codes = {f: np.zeros(0, dtype=np.int32) for f in _CODED}
            self._vocab = {f: {} for f in _CODED}
            self._names = {f: [] for f in _CODED}
            self._hi = np.zeros(0, dtype=np.uint64)
            self._lo = np.zeros(0, dtype=np.uint64)
            self._numbers = {f: np.zeros(0, dtype=np.float64) for f in _NUMBERS}
            self._odd.clear()
            self._odd_at.clear()
            self._sorted_hi, self._sorted_at, self._indexed = self._hi[:0], self._sorted_at[:0], 0
            self._marks = Marks()
            self._epoch += 1
            self._matching.clear()
            self._last = None


@dataclass(slots=True)
class _Matching:
    """The rows matching one filter as of ``epoch``, ``seen`` rows and ``removals`` removals."""

    epoch: int
    seen: int
    removals: int
    rows: npt.NDArray[np.intp]
    rest: tuple[Condition, ...]


def _nearest(rows: npt.NDArray[np.intp], distances: npt.NDArray[np.uint16], k: int) -> npt.NDArray[np.intp]:
    """The ``k`` of ``rows`` with the smallest distances (small integers), in row order; among rows
    at the cut-off distance the first ones. A histogram instead of a partition: one pass, no sort."""
    counts = np.cumsum(np.bincount(distances))
    cut = int(np.searchsorted(counts, k))  # the distance at which the k-th row lies
    below = rows[distances < cut]
    at_cut = rows[distances == cut][: k - len(below)]
    out: npt.NDArray[np.intp] = np.sort(np.concatenate((below, at_cut)))
    return out


def _popcount_table(words: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint8]:
    """Set bits per uint64 word, for numpy < 2 (no ``np.bitwise_count``): a table of 16-bit counts."""
    halves = np.ascontiguousarray(words).view(np.uint16).reshape(len(words), 4)
    out: npt.NDArray[np.uint8] = _BITS16[halves].sum(axis=1, dtype=np.uint8)
    return out


_BITS16 = np.array([bin(i).count("1") for i in range(1 << 16)], dtype=np.uint8)
_popcount: Callable[[npt.NDArray[np.uint64]], npt.NDArray[np.uint8]] = getattr(
    np, "bitwise_count", _popcount_table
)


@functools.cache
def _rotation(dim: int) -> npt.NDArray[np.float64]:
    """A fixed random orthogonal ``dim`` x ``dim`` matrix (seeded: the same in every process): float32
    values (what a snapshot keeps, so a snapshot's rotation is this one exactly) held in float64, the
    precision vectors are turned in (``ExactIndex._rotated``)."""
    gauss = np.random.default_rng(13).standard_normal((dim, dim))
    with blas_thread_cap().limit(1):  # once per process; more threads only contend with the agent
        q, r = np.linalg.qr(gauss)
    out: npt.NDArray[np.float64] = (q * np.sign(np.diag(r))).astype(np.float32).astype(np.float64)
    return out


def _scores(cos: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """Cosines as the engines give scores: ``(1 + cos) / 2`` in [0, 1]."""
    out: npt.NDArray[np.float32] = np.clip((1.0 + cos) / 2.0, 0.0, 1.0).astype(np.float32)
    return out


def _parsed_views(
    views: Mapping[str, tuple[int, Mapping[str, Any] | None]],
) -> dict[str, tuple[int, tuple[Condition, ...]]]:
    """Each view's limit and parsed filters. Raises ValidationError for a bad limit or filter."""
    parsed = {}
    for name, (limit, filters) in views.items():
        check_limit(limit)
        parsed[name] = (limit, tuple(parse_filters(filters)))
    return parsed


def _resized(arr: npt.NDArray[Any], size: int, fill: Any) -> npt.NDArray[Any]:
    out = np.full(size, fill, dtype=arr.dtype)
    out[: len(arr)] = arr
    return out


def _halves(chunk_id: str) -> tuple[int, int] | None:
    """The two uint64 halves of a canonical (lower-case, hyphenated, non-nil) UUID string, else None."""
    if not _CANONICAL.fullmatch(chunk_id):
        return None
    value = int(chunk_id.replace("-", ""), 16)
    if value == 0:
        return None
    return value >> 64, value & 0xFFFF_FFFF_FFFF_FFFF


# What str(uuid.UUID(...)) gives: an id of this form round-trips through its two halves.
_CANONICAL = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


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

__all__ = ["ExactIndex"]
