"""The store-wide fact reads and writes of the maintenance jobs (consolidate, prune, importance): they
see every scope, like the jobs that call them (``cron/``). The jobs decide what to merge, close, archive
or delete; these methods only read and write, each write in the caller's transaction (``conn``) or in
one of its own."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from hermes_memory.tier2 import verdicts
from hermes_memory.tier2._util import dumps, loads_list
from hermes_memory.tier2.db import Database

# Believed now: not archived, not superseded, not ended, not expired (FactStore's visibility rule).
_ACTIVE = (
    "is_archived = 0 AND superseded_at IS NULL AND valid_to IS NULL "
    "AND (expires_at IS NULL OR expires_at > ?)"
)


@dataclass(frozen=True, slots=True)
class FactRow:
    """The columns consolidation decides on (an active fact)."""

    id: int
    uuid: str
    scope: str
    content: str
    content_hash: str
    subject: str | None
    predicate: str | None
    object: str | None
    valid_from: float | None
    recorded_at: float


@dataclass(frozen=True, slots=True)
class FadingFact:
    """The columns the importance decay is computed from (``cron.importance.decayed``)."""

    uuid: str
    importance: float
    access_count: int
    last_accessed: float | None
    created_at: float


def _is_active(row: sqlite3.Row, now: float) -> bool:
    return (
        not row["is_archived"]
        and row["superseded_at"] is None
        and row["valid_to"] is None
        and (row["expires_at"] is None or row["expires_at"] > now)
    )


def replace_in_timeline(
    conn: sqlite3.Connection, column: Literal["related_entities", "related_facts"], old: str, new: str
) -> int:
    """Point timeline references (a JSON list column) from ``old`` to ``new``, in the caller's transaction.

    No foreign key can follow a JSON list, so merges rewrite them here. Returns how many events changed.
    """
    changed = 0
    # instr() is a cheap pre-filter: uuids are distinctive, so it only lets real references through.
    rows = conn.execute(f"SELECT id, {column} AS refs FROM timeline WHERE instr({column}, ?) > 0", (old,))
    for row in rows.fetchall():
        refs = loads_list(row["refs"])
        if old not in refs:
            continue
        updated = list(dict.fromkeys(new if ref == old else ref for ref in refs))
        conn.execute(f"UPDATE timeline SET {column} = ? WHERE id = ?", (dumps(updated), row["id"]))
        changed += 1
    return changed


class FactUpkeep:
    """Store-wide fact maintenance over one Tier 2 database (every scope)."""

    def __init__(self, db: Database):
        self._db = db

    # -- consolidate ------------------------------------------------------------------------------
    def active(self, now: float) -> list[FactRow]:
        """Every fact believed at ``now``, oldest first (by recorded_at, then id)."""
        rows = self._db.query(
            "SELECT id, uuid, scope, content, content_hash, subject, predicate, object, valid_from, "
            f"recorded_at FROM facts WHERE {_ACTIVE} ORDER BY recorded_at, id",
            (now,),
        )
        return [
            FactRow(
                r["id"], r["uuid"], r["scope"], r["content"], r["content_hash"], r["subject"], r["predicate"],
                r["object"], r["valid_from"], r["recorded_at"],
            )
            for r in rows
        ]  # fmt: skip

    def merge_duplicate(self, conn: sqlite3.Connection, duplicate: str, kept: str, now: float) -> bool:
        """Archive ``duplicate`` into ``kept`` in the caller's transaction; False (nothing written) unless
        both are still active at ``now``.

        The kept fact gains the duplicate's source episodes, entity links, the higher confidence and
        salience (``importance``), the merged threat verdict, and one use plus the duplicate's: a
        restatement is a rehearsal. Relation evidence moves to it; the duplicate stays archived with
        ``superseded_by`` pointing at it. Timeline references, chunks and the audit row are the caller's.
        """
        dup = conn.execute("SELECT * FROM facts WHERE uuid = ?", (duplicate,)).fetchone()
        keep = conn.execute("SELECT * FROM facts WHERE uuid = ?", (kept,)).fetchone()
        if dup is None or keep is None or not _is_active(dup, now) or not _is_active(keep, now):
            return False
        episodes = list(
            dict.fromkeys([*loads_list(keep["source_episodes"]), *loads_list(dup["source_episodes"])])
        )
        used = [t for t in (keep["last_accessed"], dup["last_accessed"], dup["created_at"]) if t is not None]
        conn.execute(
            "UPDATE facts SET source_episodes = ?, confidence = max(confidence, ?), "
            "importance = max(importance, ?), access_count = access_count + ?, last_accessed = ?, "
            "updated_at = ?, threat = ? WHERE uuid = ?",
            (
                dumps(episodes), dup["confidence"], dup["importance"], dup["access_count"] + 1, max(used),
                now, verdicts.merged(keep["threat"], dup["threat"]), kept,
            ),
        )  # fmt: skip
        conn.execute(
            "UPDATE facts SET is_archived = 1, superseded_by = ?, updated_at = ? WHERE uuid = ?",
            (kept, now, duplicate),
        )
        conn.execute(
            "INSERT OR IGNORE INTO fact_entities(fact_uuid, entity_uuid) "
            "SELECT ?, entity_uuid FROM fact_entities WHERE fact_uuid = ?",
            (kept, duplicate),
        )
        conn.execute(
            "UPDATE relations SET evidence_fact_id = ? WHERE evidence_fact_id = ?", (kept, duplicate)
        )
        return True

    def close_superseded(
        self, conn: sqlite3.Connection, old: str, new: str, valid_to: float | None, now: float
    ) -> bool:
        """Close ``old`` as superseded by ``new`` (bitemporal: never deleted; ``valid_to`` default
        ``now``) in the caller's transaction; False (nothing written) unless both are active at ``now``."""
        old_row = conn.execute("SELECT * FROM facts WHERE uuid = ?", (old,)).fetchone()
        new_row = conn.execute("SELECT * FROM facts WHERE uuid = ?", (new,)).fetchone()
        if old_row is None or new_row is None or not _is_active(old_row, now) or not _is_active(new_row, now):
            return False
        conn.execute(
            "UPDATE facts SET valid_to = ?, superseded_at = ?, superseded_by = ?, updated_at = ? "
            "WHERE uuid = ?",
            (valid_to if valid_to is not None else now, now, new, now, old),
        )
        return True

    # -- prune ------------------------------------------------------------------------------------
    def expired(self, now: float) -> list[str]:
        """Facts past their TTL (superseded ones excepted), oldest expiry first."""
        rows = self._db.query(
            "SELECT uuid FROM facts WHERE expires_at IS NOT NULL AND expires_at <= ? "
            "AND superseded_at IS NULL ORDER BY expires_at, id",
            (now,),
        )
        return [r["uuid"] for r in rows]

    def archived_before(self, cutoff: float) -> list[str]:
        """Archived, not superseded facts last changed before ``cutoff``, oldest change first."""
        rows = self._db.query(
            "SELECT uuid FROM facts WHERE is_archived = 1 AND superseded_at IS NULL AND updated_at < ? "
            "ORDER BY updated_at, id",
            (cutoff,),
        )
        return [r["uuid"] for r in rows]

    def active_below(self, now: float, salience: float) -> list[FadingFact]:
        """Facts active at ``now`` whose stored salience (``importance``) is below ``salience``, by id."""
        rows = self._db.query(
            "SELECT uuid, importance, access_count, last_accessed, created_at FROM facts "
            "WHERE is_archived = 0 AND superseded_at IS NULL AND valid_to IS NULL "
            "AND (expires_at IS NULL OR expires_at > ?) AND importance < ? ORDER BY id",
            (now, salience),
        )
        return [
            FadingFact(r["uuid"], r["importance"], r["access_count"], r["last_accessed"], r["created_at"])
            for r in rows
        ]

    def active_count(self, now: float) -> int:
        """How many facts are believed at ``now``, store-wide."""
        row = self._db.query_one(f"SELECT count(*) AS n FROM facts WHERE {_ACTIVE}", (now,))
        return int(row["n"]) if row is not None else 0

    def active_archivable(self, now: float, kept_sources: Sequence[str]) -> list[FadingFact]:
        """Facts active at ``now`` whose source type is not one of ``kept_sources``, by id."""
        marks = ",".join("?" * len(kept_sources)) or "NULL"
        rows = self._db.query(
            "SELECT uuid, importance, access_count, last_accessed, created_at FROM facts "
            f"WHERE {_ACTIVE} AND source_type NOT IN ({marks}) ORDER BY id",
            (now, *kept_sources),
        )
        return [
            FadingFact(r["uuid"], r["importance"], r["access_count"], r["last_accessed"], r["created_at"])
            for r in rows
        ]

    def archive(self, conn: sqlite3.Connection, uuid: str, now: float) -> None:
        """Archive one fact at ``now`` in the caller's transaction (the audit row is the caller's)."""
        conn.execute("UPDATE facts SET is_archived = 1, updated_at = ? WHERE uuid = ?", (now, uuid))

    def superseded_count(self) -> int:
        """How many facts are closed by a newer one (kept as history)."""
        row = self._db.query_one("SELECT count(*) AS n FROM facts WHERE superseded_at IS NOT NULL")
        return int(row["n"]) if row is not None else 0

    # -- importance -------------------------------------------------------------------------------
    def reinforce(self, uuids: Sequence[str], at: float) -> int:
        """Record one use of each fact (access_count + 1, last_accessed never moved back) in one
        transaction. Returns how many facts were found."""
        with self._db.atomic() as conn:
            cur = conn.executemany(
                "UPDATE facts SET access_count = access_count + 1, "
                "last_accessed = max(coalesce(last_accessed, 0), ?) WHERE uuid = ?",
                [(at, uuid) for uuid in uuids],
            )
            return int(cur.rowcount)


__all__ = ["FactRow", "FactUpkeep", "FadingFact", "replace_in_timeline"]
