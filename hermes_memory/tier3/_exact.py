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

The rooms: ``_exact_rows`` holds the rows and their columns, ``_exact_filters`` matches filters on the
columns, ``_exact_scoring`` runs the two stages, ``_exact_snapshot`` says what a snapshot holds; this
module keeps them in step with Tier 2 and answers searches.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from hermes_memory.errors import ValidationError
from hermes_memory.tier2.chunks import ChunkRow
from hermes_memory.tier2.vectors import FloatArray, Marks, VectorStore
from hermes_memory.tier3 import _exact_rows, _exact_snapshot, _snapshot
from hermes_memory.tier3._exact_filters import MatchingRows
from hermes_memory.tier3._exact_rows import CODED, HELD, IndexRows
from hermes_memory.tier3._exact_scoring import first_stage, ranked, scores, second_stage
from hermes_memory.tier3.backend import (
    Condition,
    VectorHit,
    check_fields,
    check_limit,
    check_vectors,
    matches,
    parse_filters,
    select_fields,
)

# Up to this many rows the index also keeps each row as float32 (1,536 B at 384-d, 24 MB at 16k) and
# scores every row exactly in one pass: a small store (LoCoMo-size: 2-3k rows) loses nothing to int8.
# Past it the float32 rows are dropped (for good, in this index) and the two stages above answer.
FLOAT_ROWS = 16384
# Rows added or removed since the index last loaded or wrote a snapshot before ``save_snapshot`` writes a
# new one (a catch-up of this many rows from Tier 2 costs ~0.1 s).
SNAPSHOT_MARGIN = 4096

_log = logging.getLogger(__name__)

PayloadOf = Callable[[ChunkRow], Mapping[str, Any]]
Loader = Callable[[Sequence[str]], Mapping[str, ChunkRow]]
# (chunk uuid, score, row) of a picked row
_Picked = list[tuple[str, float, int]]


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
        self._loader = loader
        self._payload_of = payload_of
        self._lock = threading.Lock()
        self._marks = Marks()
        # The store's ``data_version`` when the marks were last found equal to its heads (None: not yet):
        # while it holds, nothing was committed, so a refresh has nothing to read (not even the heads).
        self._version: int | None = None
        self._rows = IndexRows(dim, float_rows)
        self._matching = MatchingRows()
        # query -> the first stage for all rows (every row's score when the float32 rows answered)
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
        return self._rows.size

    def rebind(self, store: VectorStore, loader: Loader) -> None:
        """Read Tier 2 through ``store`` and ``loader`` from now on: the view this index was built
        through is closing while other users of the shared collections go on (``tier3.shared``). Waits
        for a search, load or snapshot in progress through the old view to finish first."""
        with self._lock:
            self._store = store
            self._loader = loader
            self._version = None  # another store's versions are not comparable

    # -- keeping up with Tier 2 -------------------------------------------------------------------
    def refresh(self) -> int:
        """Apply what changed in Tier 2 since the last refresh; returns the number of rows touched.

        Raises StorageError when Tier 2 cannot be read.
        """
        with self._lock:
            return self._refresh()

    def _refresh(self) -> int:
        """``refresh`` with the lock held."""
        version = self._store.data_version()  # read first: a commit after it moves it for the next refresh
        if version == self._version:
            return 0
        head = self._store.heads()
        if head == self._marks:
            self._version = version
            return 0
        held = self._rows
        if held.n == 0 and not self._snapshot_tried and self._snapshot is not None:
            self._snapshot_tried = True
            self._open_snapshot(self._snapshot, head)
        if held.n == 0:
            held.grow(head.chunk)  # a first load: room for every chunk id at once, no regrowth
        touched = 0
        while True:
            page = self._store.changes(self._model_id, self._dim, self._marks)
            touched += held.remove(page.removed)
            if page.rows:
                held.add(page.rows)
                touched += len(page.rows)
            self._marks = page.marks
            if not page.more:
                break
        if touched:
            self._last = None
            self._snapshot_touched += touched
        self._version = version if self._marks == head else None
        block = _exact_rows.BLOCK
        if held.dead > max(block, held.n // 4) or len(held.alive) > 2 * held.n + block:
            self._compact()  # deleted rows, or room for chunk ids that had no vector
        return touched

    def _compact(self) -> None:
        """Drop deleted rows (rows move: the kept matches and the last first stage go too)."""
        self._rows.compact()
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
            held = self._rows
            if held.floats is not None or held.size <= held.float_rows:
                return False
            if not force and self._snapshot_base is not None and self._snapshot_touched < SNAPSHOT_MARGIN:
                return False
            if held.dead:
                self._compact()
            marks = self._marks
            identity = self._store.ensure_identity()
            meta = _exact_snapshot.metadata(held, self._model_id, self._store, identity, marks)
            _snapshot.write(path, meta, _exact_snapshot.arrays(held))
            self._snapshot_base, self._snapshot_touched = marks, 0
        finally:
            self._lock.release()
        if self._store.heads().tombstone > marks.tombstone:
            # A chunk was deleted while this was written (maybe a forget, whose erasure may have removed
            # the snapshots already): no file may keep its vector.
            path.unlink(missing_ok=True)
            return False
        return True

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
            problem = _exact_snapshot.problem(self._rows, self._model_id, self._store, meta, sections, head)
        except (KeyError, TypeError, ValueError) as exc:
            problem = f"malformed metadata ({exc!r})"
        if problem is not None:
            self._ignore_snapshot(f"{path}: {problem}")
            return
        self._marks = _exact_snapshot.restore(self._rows, meta, sections)
        self._matching.clear()
        self._last = None
        self._snapshot_base, self._snapshot_touched = self._marks, 0

    def _ignore_snapshot(self, why: str) -> None:
        log = _log.debug if self._snapshot_warned else _log.warning
        self._snapshot_warned = True
        log("exact index: snapshot ignored, loading from Tier 2 (%s)", why)

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
        query = self._rows.rotated(unit)[0]
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
        query = self._rows.rotated(unit)[0]
        picks: dict[str, tuple[_Picked, tuple[Condition, ...], Any, int]] = {}
        with self._lock:
            heads = self._first_stage(query)
            for name, (limit, conditions) in parsed.items():
                picked, rest = self._pick(query, heads, conditions, limit)
                picks[name] = (picked, rest, wanted, limit)
        return {name: self._hits(*pick) for name, pick in picks.items()}

    def search_values(
        self, vector: npt.ArrayLike, views: Mapping[str, tuple[int, Mapping[str, Any] | None]], field: str
    ) -> dict[str, list[tuple[str, float]] | None]:
        """``search_many`` reduced to what recall reads: per view, each hit's ``field`` (a payload field
        the index holds as codes, e.g. ``source_uuid``; "" when the chunk has none) and score, best first,
        without building hits. A view whose filters need the loaded payloads maps to None (ask
        ``search_many``).

        Raises ValidationError for a field the index does not hold as codes, and what ``search`` raises.
        """
        if field not in CODED:
            raise ValidationError(f"search_values reads a coded field {sorted(CODED)}, not {field!r}")
        parsed = _parsed_views(views)
        unit = check_vectors(vector, self._dim)
        self.refresh()
        query = self._rows.rotated(unit)[0]
        out: dict[str, list[tuple[str, float]] | None] = {}
        with self._lock:
            first = self._first_stage(query)
            codes = self._rows.codes[field]
            for name, (limit, conditions) in parsed.items():
                rows, scored, rest = self._best_rows(query, first, conditions, limit)
                if rest:
                    out[name] = None
                    continue
                out[name] = list(zip(self._rows.named(field, codes[rows]), scored.tolist(), strict=True))
        return out

    def _first_stage(self, query: FloatArray) -> tuple[npt.NDArray[Any], bool]:
        """``_exact_scoring.first_stage`` of the query, kept for the next search of the same vector; full
        cosines as every row's score (``scores``: elementwise, so a view's rows read the values scoring
        them alone gives, and the rows are scored once for every view)."""
        key = query.tobytes()
        if self._last is not None and self._last[0] == key:
            return self._last[1], self._last[2]
        stage, full = first_stage(self._rows, query)
        if full:
            stage = scores(stage)
        self._last = (key, stage, full)  # recall searches one query vector once per chunk kind
        return stage, full

    def _pick(
        self,
        query: FloatArray,
        first: tuple[npt.NDArray[Any], bool],
        conditions: Sequence[Condition],
        limit: int,
    ) -> tuple[_Picked, tuple[Condition, ...]]:
        """(chunk uuid, score, row) of the rows matching the held conditions, best first (the first
        ``limit`` when no condition is left for the loaded payloads, else all of them), and the
        conditions left for the loaded payloads.

        The rows scored in full are the best ``max(FULL_MIN * limit, FULL_SHARE of the matching rows)``
        by their head cosine (all of them when there are few, or when conditions are left for the
        loaded payloads). ``first``: every row's score, ``(1 + cos) / 2``, when the float32 rows answered
        (True), else every row's sign-bit distance to the query (False)."""
        rows, scored, rest = self._best_rows(query, first, conditions, limit)
        chunk_id = self._rows.chunk_id
        return [(chunk_id(i), s, i) for i, s in zip(rows.tolist(), scored.tolist(), strict=True)], rest

    def _best_rows(
        self,
        query: FloatArray,
        first: tuple[npt.NDArray[Any], bool],
        conditions: Sequence[Condition],
        limit: int,
    ) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.float32], tuple[Condition, ...]]:
        """``_pick``'s rows and scores as arrays, best first, and the conditions left for the payloads."""
        stage, full_cosines = first
        candidates, rest = self._matching.rows(self._rows, tuple(conditions))
        if not len(candidates):
            return candidates, np.empty(0, dtype=np.float32), rest
        if full_cosines:
            scored = stage[candidates]
        else:
            candidates, scored = second_stage(self._rows, query, stage, candidates, limit, bool(rest))
        rows, best = ranked(candidates, scored, limit if not rest else len(candidates))
        return rows, best, rest

    def _hits(
        self,
        picked: _Picked,
        rest: tuple[Condition, ...],
        wanted: tuple[str, ...] | None,
        limit: int,
    ) -> list[VectorHit]:
        held = wanted is not None and set(wanted) <= HELD
        if not rest and held:
            return [
                VectorHit(f"chunk:{u}", s, self._rows.held_payload(at, wanted or ()))
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

    def count(self, filters: Mapping[str, Any] | None = None) -> int:
        """Chunks with a vector (matching ``filters`` on the held fields). Refreshes first."""
        conditions = parse_filters(filters)
        self.refresh()
        with self._lock:
            rows, _ = self._matching.rows(self._rows, conditions)
            return len(rows)

    def health(self) -> dict[str, Any]:
        with self._lock:
            return {
                "backend": self.name, "collection": self.collection, "dim": self._dim,
                "count": int(self._rows.alive[: self._rows.n].sum()), "ok": True,
                "matrix_bytes": sum(int(b.nbytes) for b in self._rows.blocks()),
            }  # fmt: skip

    def close(self) -> None:
        with self._lock:
            self._rows.clear()
            self._rows.epoch += 1
            self._marks = Marks()
            self._version = None
            self._matching.clear()
            self._last = None


def _parsed_views(
    views: Mapping[str, tuple[int, Mapping[str, Any] | None]],
) -> dict[str, tuple[int, tuple[Condition, ...]]]:
    """Each view's limit and parsed filters. Raises ValidationError for a bad limit or filter."""
    parsed = {}
    for name, (limit, filters) in views.items():
        check_limit(limit)
        parsed[name] = (limit, tuple(parse_filters(filters)))
    return parsed


__all__ = ["ExactIndex"]
