"""The store-wide reads and writes of merging two entities into one (the ``consolidate`` job's entity
step, ``cron/entity_merge.py``, decides which pairs and what the kept entity becomes). Every write runs in
the caller's transaction (``conn``), so one merge commits whole or not at all."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from hermes_memory.records import Entity
from hermes_memory.tier2._util import dumps
from hermes_memory.tier2.db import Database
from hermes_memory.tier2.entities import _row_to_entity, name_key


@dataclass(frozen=True, slots=True)
class AliasCandidate:
    """Entity ``merged`` is named by one of ``kept``'s aliases (same scope and type)."""

    merged: str
    kept: str
    kept_n: int  # occurrence counts and row ids: which of two entities naming each other stays
    kept_id: int
    merged_n: int
    merged_id: int


@dataclass(frozen=True, slots=True)
class TypeCandidate:
    """Entities ``merged`` and ``kept`` share a name and a scope but not their type."""

    merged: str
    merged_type: str
    kept: str
    kept_type: str


@dataclass(frozen=True, slots=True)
class MergeSide:
    """One entity of a merge, with the columns the Entity record does not carry."""

    entity: Entity
    scope: str
    name_key: str


@dataclass(frozen=True, slots=True)
class MergeOutcome:
    """What moving the relations of a merged entity did."""

    relations_moved: int
    relations_absorbed: int
    relations_dropped: int
    touched_relations: tuple[str, ...]


class EntityMerges:
    """Entity merge reads and writes over one Tier 2 database (every scope)."""

    def __init__(self, db: Database):
        self._db = db

    def alias_candidates(self) -> list[AliasCandidate]:
        """Every (merged, kept) where merged's name is an alias key of kept, same scope and type, in
        merged then kept row order."""
        rows = self._db.query(
            "SELECT b.uuid AS merged, a.uuid AS kept, a.occurrence_count AS kept_n, a.id AS kept_id, "
            "b.occurrence_count AS merged_n, b.id AS merged_id "
            "FROM entities b JOIN entity_aliases k ON k.alias_key = b.name_key AND k.entity_uuid != b.uuid "
            "JOIN entities a ON a.uuid = k.entity_uuid "
            "WHERE a.scope = b.scope AND a.entity_type = b.entity_type ORDER BY b.id, a.id"
        )
        return [
            AliasCandidate(r["merged"], r["kept"], r["kept_n"], r["kept_id"], r["merged_n"], r["merged_id"])
            for r in rows
        ]

    def type_candidates(self) -> list[TypeCandidate]:
        """Every (merged, kept) of one name key and scope with different types, in row order."""
        rows = self._db.query(
            "SELECT b.uuid AS merged, b.entity_type AS merged_type, a.uuid AS kept, "
            "a.entity_type AS kept_type FROM entities b JOIN entities a ON a.name_key = b.name_key "
            "AND a.scope = b.scope AND a.entity_type != b.entity_type ORDER BY b.id, a.id"
        )
        return [TypeCandidate(r["merged"], r["merged_type"], r["kept"], r["kept_type"]) for r in rows]

    def side(self, conn: sqlite3.Connection, uuid: str) -> MergeSide | None:
        """The entity ``uuid`` as the caller's transaction sees it, or None when it is gone."""
        row = conn.execute("SELECT * FROM entities WHERE uuid = ?", (uuid,)).fetchone()
        return None if row is None else MergeSide(_row_to_entity(row), row["scope"], row["name_key"])

    def has_alias_key(self, conn: sqlite3.Connection, entity_uuid: str, key: str) -> bool:
        """Whether ``key`` is still one of the entity's alias keys (in the caller's transaction)."""
        found = conn.execute(
            "SELECT 1 FROM entity_aliases WHERE alias_key = ? AND entity_uuid = ?", (key, entity_uuid)
        ).fetchone()
        return found is not None

    def move_relations(self, conn: sqlite3.Connection, merged: str, kept: str, now: float) -> MergeOutcome:
        """Point ``merged``'s relations at ``kept``: one it already has absorbs the moved one (higher
        strength, evidence kept), one between the two (a self-loop once they are one) is dropped."""
        moved = absorbed = dropped = 0
        touched: list[str] = []
        rows = conn.execute(
            "SELECT * FROM relations WHERE from_entity_id = ? OR to_entity_id = ? ORDER BY id",
            (merged, merged),
        ).fetchall()
        for row in rows:
            src = kept if row["from_entity_id"] == merged else row["from_entity_id"]
            dst = kept if row["to_entity_id"] == merged else row["to_entity_id"]
            if src == dst:
                # "Bob is Robert" between the two names of one entity says nothing once they are one.
                conn.execute("DELETE FROM relations WHERE id = ?", (row["id"],))
                dropped += 1
                continue
            existing = conn.execute(
                "SELECT * FROM relations WHERE from_entity_id = ? AND to_entity_id = ? AND relation_type = ? "
                "AND id != ?",
                (src, dst, row["relation_type"], row["id"]),
            ).fetchone()
            if existing is not None:
                conn.execute(
                    "UPDATE relations SET strength = max(strength, ?), "
                    "evidence_fact_id = coalesce(evidence_fact_id, ?), updated_at = ? WHERE id = ?",
                    (row["strength"], row["evidence_fact_id"], now, existing["id"]),
                )
                conn.execute("DELETE FROM relations WHERE id = ?", (row["id"],))
                absorbed += 1
                touched.append(existing["uuid"])
            else:
                conn.execute(
                    "UPDATE relations SET from_entity_id = ?, to_entity_id = ?, updated_at = ? WHERE id = ?",
                    (src, dst, now, row["id"]),
                )
                moved += 1
                touched.append(row["uuid"])
        return MergeOutcome(moved, absorbed, dropped, tuple(dict.fromkeys(touched)))

    def copy_fact_links(self, conn: sqlite3.Connection, merged: str, kept: str) -> None:
        """Link ``kept`` to every fact ``merged`` is linked to."""
        conn.execute(
            "INSERT OR IGNORE INTO fact_entities(fact_uuid, entity_uuid) "
            "SELECT fact_uuid, ? FROM fact_entities WHERE entity_uuid = ?",
            (kept, merged),
        )

    def fold(
        self,
        conn: sqlite3.Connection,
        kept: Entity,
        merged: Entity,
        aliases: Iterable[str],
        metadata: dict[str, Any],
    ) -> None:
        """Write ``kept`` as the one entity left: ``aliases`` and ``metadata`` as given, ``merged``'s
        description if it had none, the wider first/last seen, both occurrence counts; then delete
        ``merged`` (its alias keys and copied fact links cascade) and rewrite ``kept``'s alias keys."""
        alias_list = list(aliases)
        conn.execute(
            "UPDATE entities SET aliases = ?, description = coalesce(description, ?), "
            "first_seen = min(first_seen, ?), last_seen = max(last_seen, ?), "
            "occurrence_count = occurrence_count + ?, metadata = ? WHERE uuid = ?",
            (
                dumps(alias_list), merged.description, merged.first_seen, merged.last_seen,
                merged.occurrence_count, dumps(metadata), kept.uuid,
            ),
        )  # fmt: skip
        conn.execute("DELETE FROM entities WHERE uuid = ?", (merged.uuid,))
        conn.execute("DELETE FROM entity_aliases WHERE entity_uuid = ?", (kept.uuid,))
        keys = {name_key(kept.name), *(name_key(alias) for alias in alias_list)}
        conn.executemany(
            "INSERT OR IGNORE INTO entity_aliases(alias_key, entity_uuid) VALUES (?, ?)",
            [(key, kept.uuid) for key in sorted(keys) if key],
        )


__all__ = ["AliasCandidate", "EntityMerges", "MergeOutcome", "MergeSide", "TypeCandidate"]
