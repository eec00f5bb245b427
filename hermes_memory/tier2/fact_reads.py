"""Fact lookups: by uuid, hash, entity and importance, what recall ranks by, counts, and the uses of
recalled facts (access counts, kept in memory by ``AccessLog`` until the writer side flushes them)."""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from typing import Any

from hermes_memory.errors import NotFoundError
from hermes_memory.records import Fact
from hermes_memory.scoping import ScopeView
from hermes_memory.tier2._util import now
from hermes_memory.tier2.db import Database
from hermes_memory.tier2.fact_rows import row_to_fact, visible_where
from hermes_memory.tier2.id_prefix import complete, is_prefix


class AccessLog:
    """Uses of recalled facts (access count, last access) kept in memory until the writer side flushes
    them in one transaction: recall itself never writes. Shared by every view of one Tier 2."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pending: dict[str, tuple[int, float]] = {}  # fact uuid -> (uses, last use)

    def record(self, uuids: Sequence[str], at: float) -> None:
        with self._lock:
            for uuid in uuids:
                uses, _ = self._pending.get(uuid, (0, at))
                self._pending[uuid] = (uses + 1, at)

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._pending)

    def flush(self, db: Database) -> int:
        """Write the recorded uses (no SQL when there are none); returns how many facts were updated.
        Raises StorageError (the uses stay recorded for the next flush)."""
        with self._lock:
            taken, self._pending = self._pending, {}
        if not taken:
            return 0
        try:
            with db.atomic() as conn:
                conn.executemany(
                    "UPDATE facts SET access_count = access_count + ?, "
                    "last_accessed = max(coalesce(last_accessed, 0), ?) WHERE uuid = ?",
                    [(uses, at, uuid) for uuid, (uses, at) in taken.items()],
                )
        except BaseException:
            self.record_all(taken)
            raise
        return len(taken)

    def record_all(self, uses: dict[str, tuple[int, float]]) -> None:
        with self._lock:
            for uuid, (count, at) in uses.items():
                old, last = self._pending.get(uuid, (0, at))
                self._pending[uuid] = (old + count, max(last, at))


class FactReads:
    """The reads every part of ``FactStore`` shares, within its ``ScopeView``: a fact outside the view's
    readable scopes is "not found"."""

    _db: Database
    _view: ScopeView
    accesses: AccessLog

    def _in_view(self, alias: str = "f", *, by_key: bool = False) -> tuple[str, list[str]]:
        return self._view.where(f"{alias}.scope", by_key=by_key)

    def get(self, uuid: str, *, touch: bool = True) -> Fact:
        """The fact with this uuid (archived or superseded included). Raises NotFoundError (also for a
        fact outside the view); a unique prefix of its uuid names it too (ValidationError when several
        facts share it)."""
        scoped, sp = self._in_view()
        if is_prefix(uuid):
            uuid = complete(self._db, "facts", *self._in_view("t"), uuid, "fact")
        if touch:
            with self._db.atomic() as conn:
                conn.execute(
                    "UPDATE facts AS f SET access_count = access_count + 1, last_accessed = ? "
                    f"WHERE f.uuid = ? AND {scoped}",
                    (now(), uuid, *sp),
                )
        row = self._db.query_one(f"SELECT * FROM facts f WHERE f.uuid = ? AND {scoped}", (uuid, *sp))
        if row is None:
            raise NotFoundError(f"no fact with uuid {uuid!r}")
        return row_to_fact(row)

    def get_many(self, uuids: Sequence[str]) -> dict[str, Fact]:
        """Facts by uuid in one query per 500 (unknown uuids are absent); access counts untouched."""
        scoped, sp = self._in_view(by_key=True)
        query = f"SELECT * FROM facts f WHERE f.uuid IN ({{keys}}) AND {scoped}"
        rows = self._db.query_keys(query, list(dict.fromkeys(uuids)), sp)
        return {row["uuid"]: row_to_fact(row) for row in rows}

    def get_many_checked(self, uuids: Sequence[str]) -> dict[str, tuple[Fact, int | None]]:
        """``get_many`` with each fact's threat verdict (``tier2.verdicts``), in one query."""
        scoped, sp = self._in_view(by_key=True)
        rows = self._db.query(
            f"SELECT * FROM facts f WHERE f.uuid IN (SELECT value FROM json_each(?)) AND {scoped}",
            (json.dumps(list(dict.fromkeys(uuids))), *sp),
        )
        return {row["uuid"]: (row_to_fact(row), row["threat"]) for row in rows}

    def chains_checked(self, uuids: Sequence[str], max_steps: int) -> dict[str, tuple[Fact, int | None]]:
        """``get_many_checked`` of these facts and of those that replaced them, step by step along their
        ``superseded_by`` chains (through facts in the view, at most ``max_steps`` facts a chain): a
        chain in one query instead of one per step."""
        scoped, sp = self._in_view(by_key=True)
        rows = self._db.query(
            "WITH RECURSIVE chain(uuid, step) AS (SELECT value, 1 FROM json_each(?) UNION "
            "SELECT f.superseded_by, c.step + 1 FROM chain c JOIN facts f ON f.uuid = c.uuid "
            f"WHERE f.superseded_by IS NOT NULL AND c.step < ? AND {scoped}) "
            f"SELECT * FROM facts f WHERE f.uuid IN (SELECT uuid FROM chain) AND {scoped}",
            (json.dumps(list(dict.fromkeys(uuids))), max_steps, *sp, *sp),
        )
        return {row["uuid"]: (row_to_fact(row), row["threat"]) for row in rows}

    def ranking_rows(
        self, uuids: Sequence[str], as_of: float | None
    ) -> dict[str, tuple[float, float, float | None, float | None, float | None]]:
        """What recall ranks a fact by, without loading it: uuid -> (importance, valid_from or
        created_at, recorded_at, superseded_at, expires_at), for the facts believed now (``as_of`` None)
        or, with ``as_of``, for every fact in the view (the caller checks what was believed then). One
        query."""
        scoped, sp = self._in_view(by_key=True)
        believed, params = visible_where(None, now()) if as_of is None else ("1 = 1", [])
        rows = self._db.query(
            "SELECT f.uuid, f.importance, coalesce(f.valid_from, f.created_at), f.recorded_at, "
            "f.superseded_at, f.expires_at "
            f"FROM facts f WHERE f.uuid IN (SELECT value FROM json_each(?)) AND {believed} AND {scoped}",
            (json.dumps(list(dict.fromkeys(uuids))), *params, *sp),
        )
        return {str(r[0]): (float(r[1]), float(r[2]), r[3], r[4], r[5]) for r in rows}

    def threats(self, uuids: Sequence[str]) -> dict[str, int | None]:
        """The threat verdict of each of these facts (absent: not in the view)."""
        scoped, sp = self._in_view(by_key=True)
        rows = self._db.query(
            "SELECT f.uuid, f.threat FROM facts f "
            f"WHERE f.uuid IN (SELECT value FROM json_each(?)) AND {scoped}",
            (json.dumps(list(dict.fromkeys(uuids))), *sp),
        )
        return {str(r[0]): r[1] for r in rows}

    def get_by_hash(self, digest: str) -> Fact | None:
        scoped, sp = self._in_view()
        row = self._db.query_one(
            f"SELECT * FROM facts f WHERE {scoped} AND f.content_hash = ? ORDER BY f.id LIMIT 1",
            (*sp, digest),
        )
        return None if row is None else row_to_fact(row)

    def touch(self, uuids: Sequence[str]) -> None:
        """Reinforce facts that were recalled: bump access count and last access."""
        self._touch(uuids, now())

    def note_recalled(self, uuids: Sequence[str]) -> None:
        """``touch`` without writing now: the uses are recorded in memory and written by the next
        ``Tier2.flush_accesses`` (the background worker, ``flush``, close). Writes nothing."""
        self.accesses.record(list(dict.fromkeys(uuids)), now())

    def _touch(self, uuids: Sequence[str], at: float) -> None:
        scoped, sp = self._in_view()
        with self._db.atomic() as conn:
            conn.executemany(
                "UPDATE facts AS f SET access_count = access_count + 1, last_accessed = ? "
                f"WHERE f.uuid = ? AND {scoped}",
                [(at, u, *sp) for u in uuids],
            )

    def active_uuids(self, uuids: Sequence[str]) -> set[str]:
        """The subset of ``uuids`` that are facts believed now (not archived, superseded or expired)."""
        if not uuids:
            return set()
        visible, params = visible_where(None, now())
        scoped, sp = self._in_view(by_key=True)
        rows = self._db.query(  # one statement text whatever the count: prepared once, not per call
            f"SELECT f.uuid FROM facts f WHERE f.uuid IN (SELECT value FROM json_each(?)) AND {visible} "
            f"AND {scoped}",
            (json.dumps(list(dict.fromkeys(uuids))), *params, *sp),
        )
        return {str(r[0]) for r in rows}

    def mirrored_containing(self, text: str, *, limit: int = 20) -> list[Fact]:
        """Believed facts mirrored from a curated entry (source ``memory``, or ``curated`` when read from
        the files at first activation) whose content contains ``text`` (case-sensitive, as the host's
        curated tool matches an entry)."""
        visible, params = visible_where(None, now())
        scoped, sp = self._in_view()
        rows = self._db.query(
            "SELECT * FROM facts f WHERE f.source_type IN ('memory', 'curated') AND instr(f.content, ?) > 0 "
            f"AND {visible} "
            f"AND {scoped} ORDER BY f.id LIMIT ?",
            [text, *params, *sp, limit],
        )
        return [row_to_fact(r) for r in rows]

    def believed_by_hash(self, digest: str, *, source_type: str | None = None) -> Fact | None:
        """The believed fact with this content hash (of this source type, if given), if any."""
        visible, params = visible_where(None, now())
        scoped, sp = self._in_view()
        source = "" if source_type is None else "AND f.source_type = ? "
        row = self._db.query_one(
            f"SELECT * FROM facts f WHERE f.content_hash = ? {source}AND {visible} AND {scoped} "
            "ORDER BY f.id LIMIT 1",
            [digest, *([source_type] if source_type is not None else []), *params, *sp],
        )
        return None if row is None else row_to_fact(row)

    def about_entities(self, entity_uuids: Sequence[str], *, per_entity: int = 20) -> dict[str, list[str]]:
        """For each entity, the uuids of the ``per_entity`` facts most recently linked to it (newest
        first), in one query bounded in SQL: each entity's links are read newest first from the index
        and the read stops after ``per_entity`` (an entity with thousands of facts costs the same)."""
        if not entity_uuids or per_entity < 1:
            return {}
        scoped, sp = self._in_view()
        part = (
            "SELECT * FROM (SELECT fe.entity_uuid, fe.fact_uuid FROM fact_entities fe "
            f"JOIN facts f ON f.uuid = fe.fact_uuid WHERE fe.entity_uuid = ? AND {scoped} "
            "ORDER BY fe.rowid DESC LIMIT ?) AS linked"
        )
        unique = list(dict.fromkeys(entity_uuids))
        out: dict[str, list[str]] = {uuid: [] for uuid in unique}
        for start in range(0, len(unique), 50):  # a compound SELECT has at most 500 terms
            batch = unique[start : start + 50]
            params: list[Any] = []
            for uuid in batch:
                params += [uuid, *sp, per_entity]
            for row in self._db.query(" UNION ALL ".join([part] * len(batch)), params):
                out[str(row[0])].append(str(row[1]))
        return out

    def about_entity(self, entity_uuid: str) -> list[Fact]:
        """Facts linked to an entity (fact_entities), oldest first."""
        scoped, sp = self._in_view()
        rows = self._db.query(
            "SELECT f.* FROM fact_entities fe JOIN facts f ON f.uuid = fe.fact_uuid "
            f"WHERE fe.entity_uuid = ? AND {scoped} ORDER BY f.recorded_at, f.id",
            (entity_uuid, *sp),
        )
        return [row_to_fact(r) for r in rows]

    def most_important(
        self,
        *,
        limit: int,
        categories: Sequence[str] | None = None,
        subjects: Sequence[str] = (),
        exclude_source_types: Sequence[str] = (),
        min_confidence: float = 0.0,
    ) -> list[Fact]:
        """Facts believed now, in ``categories`` or about one of ``subjects`` (case-insensitive), that
        the threat scan found clean, most important first (importance × confidence, then the newest).
        Does not count as a use (no access bump): for the system prompt, not for recall."""
        visible, params = visible_where(None, now())
        scoped, sp = self._in_view()
        clauses = [visible, scoped, "f.confidence >= ?", "f.threat = 0"]
        params += [*sp, min_confidence]
        about: list[str] = []
        if categories:
            about.append(f"f.category IN ({', '.join('?' * len(categories))})")
            params += list(categories)
        if subjects:
            about.append(f"lower(f.subject) IN ({', '.join('?' * len(subjects))})")
            params += [s.lower() for s in subjects]
        if about:
            clauses.append(f"({' OR '.join(about)})")
        if exclude_source_types:
            clauses.append(f"f.source_type NOT IN ({', '.join('?' * len(exclude_source_types))})")
            params += list(exclude_source_types)
        rows = self._db.query(
            f"SELECT f.* FROM facts f WHERE {' AND '.join(clauses)} "
            "ORDER BY f.importance * f.confidence DESC, f.updated_at DESC, f.id DESC LIMIT ?",
            [*params, limit],
        )
        return [row_to_fact(r) for r in rows]

    def count(self, *, active_only: bool = False) -> int:
        """Facts in the view (only those believed now with ``active_only``)."""
        scoped, sp = self._in_view()
        clauses: list[str] = [scoped]
        params: list[Any] = [*sp]
        if active_only:
            visible, extra = visible_where(None, now())
            clauses.append(visible)
            params += extra
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        row = self._db.query_one(f"SELECT count(*) AS n FROM facts f {where}", params)
        return int(row["n"]) if row else 0


__all__ = ["AccessLog", "FactReads"]
