"""Facts: dedup by content hash, bitemporal supersession, TTL, access tracking, soft and hard delete."""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hermes_memory.errors import NotFoundError, ValidationError
from hermes_memory.records import Fact
from hermes_memory.scoping import ScopeView
from hermes_memory.tier2 import verdicts
from hermes_memory.tier2._util import content_hash, dumps, loads_list, new_uuid, now
from hermes_memory.tier2.audit import AuditLog
from hermes_memory.tier2.db import Database
from hermes_memory.tier2.id_prefix import complete, is_prefix
from hermes_memory.tier2.search import (
    Window,
    bm25_to_score,
    fts_match,
    fts_terms,
    ranked_in_fts,
    window,
    windowed,
)
from hermes_memory.tier2.verdicts import fact_verdict

_UPDATABLE = frozenset({"content", "category", "confidence", "expires_at", "importance", "valid_from"})


@dataclass(frozen=True)
class StoredFact:
    fact: Fact
    created: bool
    superseded: tuple[str, ...] = ()


@dataclass(frozen=True)
class ScoredFact:
    fact: Fact
    score: float


def _row_to_fact(row: sqlite3.Row) -> Fact:
    return Fact(
        uuid=row["uuid"],
        content=row["content"],
        content_hash=row["content_hash"],
        category=row["category"],
        confidence=row["confidence"],
        source_type=row["source_type"],
        source_id=row["source_id"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        expires_at=row["expires_at"],
        access_count=row["access_count"],
        last_accessed=row["last_accessed"],
        is_archived=bool(row["is_archived"]),
        valid_from=row["valid_from"],
        valid_to=row["valid_to"],
        recorded_at=row["recorded_at"],
        superseded_at=row["superseded_at"],
        superseded_by=row["superseded_by"],
        subject=row["subject"],
        predicate=row["predicate"],
        object=row["object"],
        source_episodes=loads_list(row["source_episodes"]),
        extractor=row["extractor"],
        importance=row["importance"],
        scope=row["scope"],
    )


def subject_names(subject: str) -> tuple[str, ...]:
    """The lower-cased spellings of one subject: with and without a leading "the"."""
    name = " ".join(subject.casefold().split())
    bare = name.removeprefix("the ")
    return tuple(dict.fromkeys((name, bare, f"the {bare}")))


def _visible(as_of: float | None, at: float, valid: float | None = None) -> tuple[str, list[Any]]:
    """SQL (on alias f) selecting facts that are believed now, or were believed at ``as_of``; with
    ``valid`` (bitemporal): facts that were TRUE at ``valid`` according to what was known at ``as_of``
    (default now) — see ``true_at``."""
    if valid is not None:
        return true_at(valid, as_of if as_of is not None else at)
    if as_of is None:
        return (
            "f.is_archived = 0 AND f.superseded_at IS NULL AND f.valid_to IS NULL "
            "AND (f.expires_at IS NULL OR f.expires_at > ?)",
            [at],
        )
    return (
        "f.is_archived = 0 AND f.recorded_at <= ? AND (f.superseded_at IS NULL OR f.superseded_at > ?)",
        [as_of, as_of],
    )


def true_at(valid: float, known: float) -> tuple[str, list[Any]]:
    """SQL (on alias f) selecting the facts true at world time ``valid`` as known at system time
    ``known``: recorded by ``known``, not archived, valid from at or before ``valid`` and not ended by
    then. A fact's end (``valid_to``) counts only once it was known: a fact closed by a supersession
    recorded after ``known`` was still open-ended then; an end given when the fact was stated (a
    ``valid_to`` without supersession) was known from the start."""
    return (
        "f.is_archived = 0 AND f.recorded_at <= ? AND coalesce(f.valid_from, f.recorded_at) <= ? "
        "AND (f.valid_to IS NULL OR f.valid_to > ? OR f.superseded_at > ?)",
        [known, valid, valid, known],
    )


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


class FactStore:
    """CRUD and search for facts. Writes run in one transaction together with their audit entry.

    Bound to a ``ScopeView``: reads see only its readable scopes (a fact outside is "not found"),
    new facts go to its ``fact_scope``.
    """

    def __init__(
        self,
        db: Database,
        audit: AuditLog,
        view: ScopeView,
        *,
        auto_dedupe: bool = True,
        accesses: AccessLog | None = None,
    ):
        self._db = db
        self._audit = audit
        self._view = view
        self._auto_dedupe = auto_dedupe
        # The last ``tier2.search.window`` asked for, while nothing is committed: recall asks twice per
        # query (``bm25_scores``, ``superseded_matching``). (data_version, query) -> window.
        self._last_window: tuple[tuple[int, str], Window | None] | None = None
        self.accesses = accesses if accesses is not None else AccessLog()

    @property
    def auto_dedupe(self) -> bool:
        return self._auto_dedupe

    def _in_view(self, alias: str = "f", *, by_key: bool = False) -> tuple[str, list[str]]:
        return self._view.where(f"{alias}.scope", by_key=by_key)

    def store(
        self,
        content: str,
        *,
        category: str = "general",
        confidence: float = 1.0,
        source_type: str = "user",
        source_id: str | None = None,
        actor: str = "user",
        expires_at: float | None = None,
        valid_from: float | None = None,
        subject: str | None = None,
        predicate: str | None = None,
        object: str | None = None,
        exclusive: bool = True,
        source_episodes: Sequence[str] = (),
        extractor: str = "manual",
        importance: float = 0.5,
        entity_uuids: Iterable[str] = (),
        valid_to: float | None = None,
        by_valid_time: bool = False,
    ) -> StoredFact:
        """Store a fact, or return the active fact with the same normalised content.

        With subject, predicate and object set and ``exclusive`` true, an active fact with the same
        subject and predicate but another object is superseded (closed, never deleted).

        ``by_valid_time`` (``assert_fact``: a statement with its world time): only facts whose valid
        interval overlaps the new one's conflict; one that began earlier (or at the same time: a
        correction) is closed at the new one's ``valid_from`` and superseded, and when the conflicting
        fact began later, the new one is the
        older value: it ends (``valid_to``) where that one begins and supersedes nothing. A duplicate is
        then only the same content with the same valid interval.
        """
        at = now()
        digest = content_hash(content)
        scope = self._view.write_facts
        with self._db.atomic() as conn:
            if self._auto_dedupe:
                # An expired fact is not "known" any more: restating it must make it visible again.
                same_time = ""
                if by_valid_time:
                    same_time = "AND coalesce(f.valid_from, f.recorded_at) = ? AND f.valid_to IS ? "
                existing = conn.execute(
                    "SELECT * FROM facts f WHERE f.scope = ? AND f.content_hash = ? AND f.is_archived = 0 "
                    f"AND f.superseded_at IS NULL AND (f.expires_at IS NULL OR f.expires_at > ?) {same_time}"
                    "ORDER BY f.id LIMIT 1",
                    (scope, digest, at,
                     *((valid_from if valid_from is not None else at, valid_to) if by_valid_time else ())),
                ).fetchone()  # fmt: skip
                if existing is not None:
                    fact = self._merge_duplicate(conn, existing, confidence, source_episodes, actor, at)
                    self._link_entities(conn, fact.uuid, entity_uuids)
                    closed: tuple[str, ...] = ()
                    if subject and predicate and object and not existing["predicate"]:
                        # The same statement, now understood (a mirrored note, then its extraction): it
                        # gets its subject/predicate/object and replaces what it contradicts.
                        conn.execute(
                            "UPDATE facts SET subject = ?, predicate = ?, object = ? WHERE id = ?",
                            (subject, predicate, object, existing["id"]),
                        )
                        if exclusive:
                            closed = tuple(
                                self._supersede_conflicts(
                                    conn, fact.uuid, subject, predicate, object, scope, at, actor, valid_from
                                )
                            )
                        row = conn.execute("SELECT * FROM facts WHERE id = ?", (existing["id"],)).fetchone()
                        fact = _row_to_fact(row)
                    return StoredFact(fact=fact, created=False, superseded=closed)
            uuid = new_uuid()
            sources = list(dict.fromkeys(source_episodes))
            conn.execute(
                "INSERT INTO facts(uuid, content, content_hash, category, confidence, source_type, source_id,"
                " created_at, updated_at, expires_at, recorded_at, valid_from, subject, predicate, object,"
                " source_episodes, extractor, importance, scope, threat, valid_to)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    uuid,
                    content,
                    digest,
                    category,
                    confidence,
                    source_type,
                    source_id,
                    at,
                    at,
                    expires_at,
                    at,
                    valid_from if valid_from is not None else at,
                    subject,
                    predicate,
                    object,
                    dumps(sources),
                    extractor,
                    importance,
                    scope,
                    fact_verdict(content, category, source_type, source_id, sources),
                    valid_to,
                ),
            )
            superseded: list[str] = []
            if exclusive and subject and predicate and object and by_valid_time:
                start = valid_from if valid_from is not None else at
                superseded = self._supersede_in_valid_time(
                    conn, uuid, (subject, predicate, object), scope, (start, valid_to), at, actor
                )
            elif exclusive and subject and predicate and object:
                superseded = self._supersede_conflicts(
                    conn, uuid, subject, predicate, object, scope, at, actor, valid_from
                )
            self._link_entities(conn, uuid, entity_uuids)
            self._audit.record(
                conn,
                action="fact_store",
                tier="tier2",
                actor=actor,
                target_uuid=uuid,
                diff={
                    "new": {"content": content, "category": category, "confidence": confidence},
                    "superseded": superseded,
                },
            )
            row = conn.execute("SELECT * FROM facts WHERE uuid = ?", (uuid,)).fetchone()
        return StoredFact(fact=_row_to_fact(row), created=True, superseded=tuple(superseded))

    def _merge_duplicate(
        self,
        conn: sqlite3.Connection,
        row: sqlite3.Row,
        confidence: float,
        source_episodes: Sequence[str],
        actor: str,
        at: float,
    ) -> Fact:
        known = loads_list(row["source_episodes"])
        episodes = list(dict.fromkeys([*known, *source_episodes]))
        seen = set(known)
        added = [e for e in episodes if e not in seen]
        threat = verdicts.merged(row["threat"], verdicts.verdict(added)) if added else row["threat"]
        new_conf = max(float(row["confidence"]), confidence)
        conn.execute(
            "UPDATE facts SET confidence = ?, source_episodes = ?, updated_at = ?, threat = ? WHERE id = ?",
            (new_conf, dumps(episodes), at, threat, row["id"]),
        )
        self._audit.record(
            conn,
            action="fact_dedupe",
            tier="tier2",
            actor=actor,
            target_uuid=row["uuid"],
            diff={"old": {"confidence": row["confidence"]}, "new": {"confidence": new_conf}},
        )
        merged = conn.execute("SELECT * FROM facts WHERE id = ?", (row["id"],)).fetchone()
        return _row_to_fact(merged)

    def _supersede_conflicts(
        self,
        conn: sqlite3.Connection,
        new_uuid_: str,
        subject: str,
        predicate: str,
        obj: str,
        scope: str,
        at: float,
        actor: str,
        valid_from: float | None,
    ) -> list[str]:
        # "the user" and "user" (and "The user") name one subject: how a statement was phrased must not
        # decide whether it replaces the older one.
        names = subject_names(subject)
        spelled = ",".join("?" * len(names))
        rows = conn.execute(
            f"SELECT uuid, object FROM facts WHERE scope = ? AND lower(subject) IN ({spelled}) "
            "AND lower(predicate) = lower(?) AND uuid != ? AND is_archived = 0 AND superseded_at IS NULL",
            (scope, *names, predicate, new_uuid_),
        ).fetchall()
        closed: list[str] = []
        for row in rows:
            if (row["object"] or "").casefold() == obj.casefold():
                continue
            conn.execute(
                "UPDATE facts SET valid_to = ?, superseded_at = ?, superseded_by = ?, updated_at = ? "
                "WHERE uuid = ?",
                (valid_from if valid_from is not None else at, at, new_uuid_, at, row["uuid"]),
            )
            self._audit.record(
                conn,
                action="fact_supersede",
                tier="tier2",
                actor=actor,
                target_uuid=row["uuid"],
                diff={"superseded_by": new_uuid_},
            )
            closed.append(row["uuid"])
        return closed

    def _supersede_in_valid_time(
        self,
        conn: sqlite3.Connection,
        new_uuid_: str,
        triple: tuple[str, str, str],
        scope: str,
        interval: tuple[float, float | None],
        at: float,
        actor: str,
    ) -> list[str]:
        """``store(by_valid_time=True)``'s conflicts: the believed facts with the same subject and
        predicate, another object and a valid interval overlapping ``interval``."""
        subject, predicate, obj = triple
        start, end = interval
        names = subject_names(subject)
        spelled = ",".join("?" * len(names))
        rows = conn.execute(
            "SELECT uuid, object, coalesce(valid_from, recorded_at) AS since, valid_to FROM facts "
            f"WHERE scope = ? AND lower(subject) IN ({spelled}) AND lower(predicate) = lower(?) "
            "AND uuid != ? AND is_archived = 0 AND superseded_at IS NULL",
            (scope, *names, predicate, new_uuid_),
        ).fetchall()
        closed: list[str] = []
        new_end = end
        for row in rows:
            since, until = float(row["since"]), row["valid_to"]
            overlaps = (until is None or until > start) and (end is None or since < end)
            if (row["object"] or "").casefold() == obj.casefold() or not overlaps:
                continue
            if since > start:  # the new statement is the older value: it ends where this one begins
                new_end = since if new_end is None else min(new_end, since)
                continue
            conn.execute(
                "UPDATE facts SET valid_to = ?, superseded_at = ?, superseded_by = ?, updated_at = ? "
                "WHERE uuid = ?",
                (start if until is None else min(float(until), start), at, new_uuid_, at, row["uuid"]),
            )
            self._audit.record(
                conn, action="fact_supersede", tier="tier2", actor=actor, target_uuid=row["uuid"],
                diff={"superseded_by": new_uuid_, "valid_to": start, "was_valid_to": until},
            )  # fmt: skip
            closed.append(row["uuid"])
        if new_end != end:
            conn.execute("UPDATE facts SET valid_to = ? WHERE uuid = ?", (new_end, new_uuid_))
        return closed

    def _link_entities(self, conn: sqlite3.Connection, fact_uuid: str, entity_uuids: Iterable[str]) -> None:
        for entity_uuid in entity_uuids:
            conn.execute(
                "INSERT OR IGNORE INTO fact_entities(fact_uuid, entity_uuid) VALUES (?, ?)",
                (fact_uuid, entity_uuid),
            )

    # -- reads ----------------------------------------------------------------------------------
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
        return _row_to_fact(row)

    def get_many(self, uuids: Sequence[str]) -> dict[str, Fact]:
        """Facts by uuid in one query per 500 (unknown uuids are absent); access counts untouched."""
        scoped, sp = self._in_view(by_key=True)
        query = f"SELECT * FROM facts f WHERE f.uuid IN ({{keys}}) AND {scoped}"
        rows = self._db.query_keys(query, list(dict.fromkeys(uuids)), sp)
        return {row["uuid"]: _row_to_fact(row) for row in rows}

    def get_many_checked(self, uuids: Sequence[str]) -> dict[str, tuple[Fact, int | None]]:
        """``get_many`` with each fact's threat verdict (``tier2.verdicts``), in one query."""
        scoped, sp = self._in_view(by_key=True)
        rows = self._db.query(
            f"SELECT * FROM facts f WHERE f.uuid IN (SELECT value FROM json_each(?)) AND {scoped}",
            (json.dumps(list(dict.fromkeys(uuids))), *sp),
        )
        return {row["uuid"]: (_row_to_fact(row), row["threat"]) for row in rows}

    def ranking_rows(
        self, uuids: Sequence[str], as_of: float | None
    ) -> dict[str, tuple[float, float, float | None, float | None, float | None]]:
        """What recall ranks a fact by, without loading it: uuid -> (importance, valid_from or
        created_at, recorded_at, superseded_at, expires_at), for the facts believed now (``as_of`` None)
        or, with ``as_of``, for every fact in the view (the caller checks what was believed then). One
        query."""
        scoped, sp = self._in_view(by_key=True)
        believed, params = _visible(None, now()) if as_of is None else ("1", [])
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
        return None if row is None else _row_to_fact(row)

    def query(
        self,
        query: str | None = None,
        *,
        category: str | None = None,
        limit: int = 10,
        min_confidence: float = 0.0,
        as_of: float | None = None,
        touch: bool = True,
        valid_at: float | None = None,
    ) -> list[ScoredFact]:
        """Facts matching free text (BM25-ranked) and filters; without text, the most recent first.

        Only facts believed now (or at ``as_of``) are returned; with ``valid_at``, the facts true then
        as known at ``as_of`` (default now; ``true_at``). Reading bumps access counts.
        """
        at = now()
        visible, params = _visible(as_of, at, valid_at)
        scoped, sp = self._in_view()
        clauses = [visible, scoped, "f.confidence >= ?"]
        params += [*sp, min_confidence]
        if category is not None:
            clauses.append("f.category = ?")
            params.append(category)
        match = fts_match(query) if query else None
        if query and match is None:
            return []
        if match is not None:
            # Ranked inside FTS5 alone first (BM25 over the bare index costs ~40% less than over the
            # join), then filtered; the whole join only when the filters leave fewer than ``limit``: the
            # answer is the same either way, only the cost differs (``tier2.search.ranked_in_fts``).
            rows = self._ranked("f.*", " AND ".join(clauses), match, params, limit)
            results = [ScoredFact(_row_to_fact(r), bm25_to_score(r["bm"])) for r in rows]
        else:
            sql = f"SELECT f.* FROM facts f WHERE {' AND '.join(clauses)} ORDER BY f.created_at DESC LIMIT ?"
            rows = self._db.query(sql, [*params, limit])
            results = [ScoredFact(_row_to_fact(r), 1.0) for r in rows]
        if touch and results:
            self._touch([r.fact.uuid for r in results], at)
        return results

    def bm25_scores(
        self, query: str, *, limit: int = 10, as_of: float | None = None, valid_at: float | None = None
    ) -> dict[str, float]:
        """``query(query, limit=limit, as_of=as_of, valid_at=valid_at, touch=False)`` as uuid -> score,
        best first, without loading the facts (recall ranks them first and loads only those that make
        its list)."""
        match = fts_match(query)
        if match is None:
            return {}
        visible, params = _visible(as_of, now(), valid_at)
        scoped, sp = self._in_view()
        where = f"{visible} AND {scoped} AND f.confidence >= ?"
        params += [*sp, 0.0]
        bounded = self._window(query)
        if bounded is not None:  # at scale: see ``tier2.search.window``
            ranked = self._windowed("f.uuid", where, match, bounded, params, limit)
            return {str(r["uuid"]): bm25_to_score(r["bm"]) for r in ranked}
        rows = self._ranked("f.uuid", where, match, params, limit)  # as ``query`` ranks them
        return {str(r["uuid"]): bm25_to_score(r["bm"]) for r in rows}

    def near(self, text: str, *, limit: int = 20, key_terms: int = 3) -> list[str]:
        """The contents of the newest ``limit`` believed facts that contain the ``key_terms`` longest words
        of ``text`` (long words are the rare ones, so these are its candidate near-copies; the caller
        compares them). Bounded at any size: read in the index's own (rowid) order, never ranked — it
        runs on every hand-written fact (salience's novelty)."""
        terms = sorted(fts_terms(text), key=len, reverse=True)[:key_terms]
        match = fts_match(" ".join(terms), mode="and") if terms else None
        if match is None:
            return []
        visible, params = _visible(None, now())
        scoped, sp = self._in_view()
        rows = self._db.query(
            "SELECT f.content FROM facts_fts JOIN facts f ON f.id = facts_fts.rowid "
            f"WHERE facts_fts MATCH ? AND {visible} AND {scoped} ORDER BY facts_fts.rowid DESC LIMIT ?",
            [match, *params, *sp, limit],
        )
        return [str(r[0]) for r in rows]

    def superseded_matching(self, query: str, *, limit: int = 20) -> list[Fact]:
        """Superseded facts (a later fact replaced them) that match free text, best BM25 match first.

        What the memory no longer believes on the topic of a question: recall uses their source turns to
        rank a superseded statement below the current one.
        """
        match = fts_match(query)
        if match is None:
            return []
        scoped, sp = self._in_view()
        bounded = self._window(query)
        if bounded is not None:  # at scale: see ``tier2.search.window``
            where = f"f.superseded_at IS NOT NULL AND {scoped}"
            return [_row_to_fact(r) for r in self._windowed("f.*", where, match, bounded, sp, limit)]
        rows = self._db.query(
            "SELECT f.* FROM facts_fts JOIN facts f ON f.id = facts_fts.rowid "
            f"WHERE facts_fts MATCH ? AND f.superseded_at IS NOT NULL AND {scoped} "
            "ORDER BY bm25(facts_fts) LIMIT ?",
            [match, *sp, limit],
        )
        return [_row_to_fact(r) for r in rows]

    def _window(self, query: str) -> Window | None:
        key = (self._db.data_version(), query)
        last = self._last_window
        if last is not None and last[0] == key:
            return last[1]
        found = window(self._db, "facts_fts", "facts", query)
        self._last_window = (key, found)
        return found

    def _ranked(
        self, columns: str, where: str, match: str, params: Sequence[Any], limit: int
    ) -> list[sqlite3.Row]:
        """The best ``limit`` facts matching ``match`` and ``where`` (on alias f; ``params`` its
        parameters), as ``columns`` and ``bm`` (bm25), best first (``tier2.search.ranked_in_fts``)."""
        pool = max(limit * 5, 50)
        return ranked_in_fts(
            self._db, "facts_fts", "facts", "f", columns, where, match, None, params, limit, pool=pool
        )

    def _windowed(
        self, columns: str, where: str, match: str, bounded: Window, params: Sequence[Any], limit: int
    ) -> list[sqlite3.Row]:
        """``_ranked`` at scale (``tier2.search.windowed``)."""
        pool = max(limit * 5, 50)
        return windowed(
            self._db, "facts_fts", "facts", "f", columns, where, match, bounded, params, limit, pool=pool
        )

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
        visible, params = _visible(None, now())
        scoped, sp = self._in_view(by_key=True)
        rows = self._db.query(  # one statement text whatever the count: prepared once, not per call
            f"SELECT f.uuid FROM facts f WHERE f.uuid IN (SELECT value FROM json_each(?)) AND {visible} "
            f"AND {scoped}",
            (json.dumps(list(dict.fromkeys(uuids))), *params, *sp),
        )
        return {str(r[0]) for r in rows}

    def superseded_by(self, uuid: str) -> list[Fact]:
        """Facts that ``uuid`` superseded (closed because it contradicted them)."""
        scoped, sp = self._in_view()
        rows = self._db.query(
            f"SELECT * FROM facts f WHERE f.superseded_by = ? AND {scoped} ORDER BY f.recorded_at, f.id",
            (uuid, *sp),
        )
        return [_row_to_fact(r) for r in rows]

    def mirrored_containing(self, text: str, *, limit: int = 20) -> list[Fact]:
        """Believed facts mirrored from a curated entry (source ``memory``, or ``curated`` when read from
        the files at first activation) whose content contains ``text`` (case-sensitive, as the host's
        curated tool matches an entry)."""
        visible, params = _visible(None, now())
        scoped, sp = self._in_view()
        rows = self._db.query(
            "SELECT * FROM facts f WHERE f.source_type IN ('memory', 'curated') AND instr(f.content, ?) > 0 "
            f"AND {visible} "
            f"AND {scoped} ORDER BY f.id LIMIT ?",
            [text, *params, *sp, limit],
        )
        return [_row_to_fact(r) for r in rows]

    def believed_by_hash(self, digest: str, *, source_type: str | None = None) -> Fact | None:
        """The believed fact with this content hash (of this source type, if given), if any."""
        visible, params = _visible(None, now())
        scoped, sp = self._in_view()
        source = "" if source_type is None else "AND f.source_type = ? "
        row = self._db.query_one(
            f"SELECT * FROM facts f WHERE f.content_hash = ? {source}AND {visible} AND {scoped} "
            "ORDER BY f.id LIMIT 1",
            [digest, *([source_type] if source_type is not None else []), *params, *sp],
        )
        return None if row is None else _row_to_fact(row)

    def superseded_sources(self, episode_uuids: Sequence[str]) -> dict[str, Fact]:
        """For each of these turns whose statement the memory has since superseded: the superseded fact
        extracted from it (the most recently superseded one when there are several)."""
        if not episode_uuids:
            return {}
        scoped, sp = self._in_view()
        # Through ``fact_sources`` (migration 11): only the links of these turns are read, whatever the
        # number of superseded facts (CROSS JOIN: links first, as the planner may not guess). One statement
        # text whatever the count: prepared once, not per call.
        rows = self._db.query(
            "SELECT f.*, s.episode_uuid AS episode "
            "FROM fact_sources s CROSS JOIN facts f ON f.id = s.fact_id "
            "WHERE s.episode_uuid IN (SELECT value FROM json_each(?)) AND f.superseded_at IS NOT NULL "
            f"AND f.is_archived = 0 AND {scoped} ORDER BY f.superseded_at, f.id",
            (json.dumps(list(dict.fromkeys(episode_uuids))), *sp),
        )
        return {row["episode"]: _row_to_fact(row) for row in rows}

    def current_of(self, fact: Fact, *, max_steps: int = 20) -> Fact | None:
        """The fact believed now that (directly or through a chain) superseded ``fact``; None when the
        chain ends in a fact that is no longer believed (archived, expired) or leaves the view."""
        seen = {fact.uuid}
        current = fact
        for _ in range(max_steps):
            if current.superseded_by is None:
                break
            nxt = self.get_many([current.superseded_by]).get(current.superseded_by)
            if nxt is None or nxt.uuid in seen:
                return None
            seen.add(nxt.uuid)
            current = nxt
        if current.uuid == fact.uuid or not self.active_uuids([current.uuid]):
            return None
        return current

    def current_of_many(self, facts: Sequence[Fact], *, max_steps: int = 20) -> dict[str, Fact | None]:
        """``current_of`` of each fact, by its uuid: the chains are walked side by side, one query per
        step for all of them (recall marks up to 30 hits at once)."""
        return current_facts(facts, self.get_many, self.active_uuids, max_steps=max_steps)

    def supersede(
        self, uuid: str, by_uuid: str, *, actor: str = "user", valid_to: float | None = None,
        reason: str | None = None,
    ) -> bool:
        """Close a believed fact as replaced by ``by_uuid`` (bitemporal: it stays, with ``valid_to`` —
        ``valid_to`` when given, the new statement's world time, else now — ``superseded_at`` and
        ``superseded_by`` set). Returns False when it was not believed any more.
        Raises NotFoundError when either fact is unknown in this view."""
        at = now()
        scoped, sp = self._in_view()
        with self._db.atomic() as conn:
            for wanted in (uuid, by_uuid):
                if (
                    conn.execute(
                        f"SELECT 1 FROM facts f WHERE f.uuid = ? AND {scoped}", (wanted, *sp)
                    ).fetchone()
                    is None
                ):
                    raise NotFoundError(f"no fact with uuid {wanted!r}")
            cur = conn.execute(
                "UPDATE facts SET valid_to = ?, superseded_at = ?, superseded_by = ?, updated_at = ? "
                "WHERE uuid = ? AND is_archived = 0 AND superseded_at IS NULL",
                (valid_to if valid_to is not None else at, at, by_uuid, at, uuid),
            )
            if cur.rowcount == 0:
                return False
            self._audit.record(
                conn, action="fact_supersede", tier="tier2", actor=actor, target_uuid=uuid,
                diff={"superseded_by": by_uuid, **({"reason": reason} if reason else {})},
            )  # fmt: skip
        return True

    def believed_about(self, names: Sequence[str], *, limit: int = 200) -> list[Fact]:
        """Believed facts whose subject is one of ``names`` or one of their things ("user's phone"), newest
        first."""
        scoped, sp = self._in_view()
        spelled = [n for name in names for n in subject_names(name)]
        if not spelled:
            return []
        marks = ",".join("?" * len(spelled))
        likes = " OR ".join(["lower(f.subject) LIKE ?"] * len(spelled))
        rows = self._db.query(
            f"SELECT * FROM facts f WHERE {scoped} AND f.is_archived = 0 AND f.superseded_at IS NULL "
            f"AND f.valid_to IS NULL AND (lower(f.subject) IN ({marks}) OR {likes}) "
            "ORDER BY coalesce(f.valid_from, f.recorded_at) DESC, f.id DESC LIMIT ?",
            (*sp, *spelled, *[f"{n}'s %" for n in spelled], limit),
        )
        return [_row_to_fact(r) for r in rows]

    def superseded(self, *, limit: int = 50) -> list[Fact]:
        """Facts closed by a contradicting newer fact, most recently superseded first."""
        scoped, sp = self._in_view()
        rows = self._db.query(
            f"SELECT * FROM facts f WHERE {scoped} AND f.superseded_at IS NOT NULL AND f.is_archived = 0 "
            "ORDER BY f.superseded_at DESC, f.id DESC LIMIT ?",
            (*sp, limit),
        )
        return [_row_to_fact(r) for r in rows]

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
            "ORDER BY fe.rowid DESC LIMIT ?)"
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
        return [_row_to_fact(r) for r in rows]

    def history(
        self, subject: str, *, known: float | None = None, valid_at: float | None = None
    ) -> list[Fact]:
        """Every fact about a subject, superseded ones included, oldest first; with ``known``, only
        those recorded by then; with ``valid_at``, only those true then as known at ``known`` (default
        now; ``true_at``)."""
        scoped, sp = self._in_view()
        when, wp = "1 = 1", list[Any]()
        if valid_at is not None:
            when, wp = true_at(valid_at, known if known is not None else now())
        elif known is not None:
            when, wp = "f.recorded_at <= ?", [known]
        rows = self._db.query(
            f"SELECT * FROM facts f WHERE {scoped} AND lower(f.subject) = lower(?) AND {when} "
            "ORDER BY f.recorded_at, f.id",
            (*sp, subject, *wp),
        )
        return [_row_to_fact(r) for r in rows]

    def true_at_uuids(self, uuids: Sequence[str], valid_at: float, known: float | None) -> set[str]:
        """The subset of ``uuids`` true at ``valid_at`` as known at ``known`` (default now; ``true_at``)."""
        if not uuids:
            return set()
        when, wp = true_at(valid_at, known if known is not None else now())
        scoped, sp = self._in_view(by_key=True)
        rows = self._db.query(
            f"SELECT f.uuid FROM facts f WHERE f.uuid IN (SELECT value FROM json_each(?)) AND {when} "
            f"AND {scoped}",
            (json.dumps(list(dict.fromkeys(uuids))), *wp, *sp),
        )
        return {str(r[0]) for r in rows}

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
        visible, params = _visible(None, now())
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
        return [_row_to_fact(r) for r in rows]

    def count(self, *, active_only: bool = False) -> int:
        """Facts in the view (only those believed now with ``active_only``)."""
        scoped, sp = self._in_view()
        clauses: list[str] = [scoped]
        params: list[Any] = [*sp]
        if active_only:
            visible, extra = _visible(None, now())
            clauses.append(visible)
            params += extra
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        row = self._db.query_one(f"SELECT count(*) AS n FROM facts f {where}", params)
        return int(row["n"]) if row else 0

    # -- writes ---------------------------------------------------------------------------------
    def update(self, uuid: str, *, actor: str = "user", **fields: Any) -> Fact:
        """Change content, category, confidence, expires_at, importance or valid_from.

        Raises ValidationError for other fields and NotFoundError for an unknown uuid.
        """
        unknown = sorted(set(fields) - _UPDATABLE)
        if unknown:
            raise ValidationError(
                f"cannot update fact field(s) {', '.join(unknown)}; allowed: {', '.join(sorted(_UPDATABLE))}"
            )
        if not fields:
            raise ValidationError("fact_update needs at least one field to change")
        scoped, sp = self._in_view()
        with self._db.atomic() as conn:
            row = conn.execute(f"SELECT * FROM facts f WHERE f.uuid = ? AND {scoped}", (uuid, *sp)).fetchone()
            if row is None:
                raise NotFoundError(f"no fact with uuid {uuid!r}")
            values = dict(fields)
            if "content" in values:
                values["content_hash"] = content_hash(values["content"])
            values["updated_at"] = now()
            values["threat"] = fact_verdict(
                values.get("content", row["content"]), values.get("category", row["category"]),
                row["source_type"], row["source_id"], loads_list(row["source_episodes"]),
            )  # fmt: skip
            assignments = ", ".join(f"{k} = ?" for k in values)
            conn.execute(f"UPDATE facts SET {assignments} WHERE uuid = ?", [*values.values(), uuid])
            self._audit.record(
                conn,
                action="fact_update",
                tier="tier2",
                actor=actor,
                target_uuid=uuid,
                diff={"old": {k: row[k] for k in fields}, "new": fields},
            )
            new_row = conn.execute("SELECT * FROM facts WHERE uuid = ?", (uuid,)).fetchone()
        return _row_to_fact(new_row)

    def delete(self, uuid: str, *, soft: bool = True, actor: str = "user") -> bool:
        """Archive (soft) or remove (hard) a fact. Raises NotFoundError for an unknown uuid."""
        scoped, sp = self._in_view()
        with self._db.atomic() as conn:
            row = conn.execute(
                f"SELECT f.id, f.is_archived, f.scope FROM facts f WHERE f.uuid = ? AND {scoped}", (uuid, *sp)
            ).fetchone()
            if row is None:
                raise NotFoundError(f"no fact with uuid {uuid!r}")
            if soft:
                conn.execute("UPDATE facts SET is_archived = 1, updated_at = ? WHERE uuid = ?", (now(), uuid))
            else:
                conn.execute("DELETE FROM facts WHERE uuid = ?", (uuid,))
            # The audit log keeps that a deletion happened, never the deleted content.
            self._audit.record(
                conn,
                action="fact_delete",
                tier="tier2",
                actor=actor,
                target_uuid=uuid,
                diff={"soft": soft},
                scope=row["scope"],
            )
        return True

    def deduplicate(self, *, actor: str = "cron") -> int:
        """Archive active duplicates (same scope and hash, never across scopes), keeping the oldest;
        returns how many merged."""
        merged = 0
        scoped, sp = self._in_view()
        with self._db.atomic() as conn:
            groups = conn.execute(
                f"SELECT f.scope, f.content_hash FROM facts f WHERE {scoped} AND f.is_archived = 0 "
                "AND f.superseded_at IS NULL GROUP BY f.scope, f.content_hash HAVING count(*) > 1",
                sp,
            ).fetchall()
            for group in groups:
                rows = conn.execute(
                    "SELECT * FROM facts WHERE scope = ? AND content_hash = ? AND is_archived = 0 "
                    "AND superseded_at IS NULL ORDER BY id",
                    (group["scope"], group["content_hash"]),
                ).fetchall()
                keep, dups = rows[0], rows[1:]
                for dup in dups:
                    self._merge_duplicate(
                        conn, keep, dup["confidence"], loads_list(dup["source_episodes"]), actor, now()
                    )
                    keep = conn.execute("SELECT * FROM facts WHERE id = ?", (keep["id"],)).fetchone()
                    conn.execute(
                        "UPDATE facts SET is_archived = 1, superseded_by = ?, updated_at = ? WHERE id = ?",
                        (keep["uuid"], now(), dup["id"]),
                    )
                    merged += 1
        return merged



def current_facts(
    facts: Sequence[Fact],
    fetch: Callable[[list[str]], Mapping[str, Fact]],
    believed: Callable[[list[str]], Collection[str]],
    *,
    max_steps: int = 20,
) -> dict[str, Fact | None]:
    """The believed fact at the end of each fact's ``superseded_by`` chain (None when the chain breaks,
    loops or ends in a fact not believed, or the fact was never replaced), by uuid: the chains walked side
    by side, ``fetch`` reading each step's next facts at once, ``believed`` checking the ends."""
    walking: dict[str, tuple[Fact, set[str]]] = {f.uuid: (f, {f.uuid}) for f in facts}
    out: dict[str, Fact | None] = {}
    for _ in range(max_steps):
        moving = {u: walked for u, walked in walking.items() if walked[0].superseded_by is not None}
        if not moving:
            break
        found = fetch(list(dict.fromkeys(str(c.superseded_by) for c, _ in moving.values())))
        for uuid, (current, seen) in moving.items():
            nxt = found.get(str(current.superseded_by))
            if nxt is None or nxt.uuid in seen:
                out[uuid] = None
                del walking[uuid]
                continue
            seen.add(nxt.uuid)
            walking[uuid] = (nxt, seen)
    ends = [current.uuid for uuid, (current, _) in walking.items() if current.uuid != uuid]
    active = believed(ends) if ends else ()
    for uuid, (current, _) in walking.items():
        out[uuid] = current if current.uuid != uuid and current.uuid in active else None
    return out

__all__ = [
    "AccessLog",
    "FactStore",
    "ScoredFact",
    "StoredFact",
    "current_facts",
    "subject_names",
    "true_at",
]
