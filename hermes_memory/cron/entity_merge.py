"""Merging entities that are one thing under two names: an entity whose name is another entity's alias
(same type, same scope) is folded into that entity; so is an entity whose name another entity of a more
specific type has ("Biscuit" typed "other" from a bare mention, "Biscuit" the pet from "my dog Biscuit").

One merge is one transaction: relations and fact links move to the kept entity (a relation it already
has absorbs the moved one; a relation between the two becomes a self-loop and is dropped), timeline
references follow, aliases are united, the merged entity is deleted, the audit log records both sides and
the entity embeddings are re-queued. The graph follows after the commit, through GraphService.
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from hermes_memory.cron.context import JobContext, replace_in_timeline
from hermes_memory.records import Relation
from hermes_memory.tier2._util import dumps, loads_dict, loads_list
from hermes_memory.tier2.chunks import ENTITIES_COLLECTION
from hermes_memory.tier2.entities import better_type, dedupe_aliases, name_key

# Each round merges every pair found; a chain (C is an alias of B, B of A) may need another round.
MAX_ROUNDS = 10


@dataclass(frozen=True, slots=True)
class EntityMerge:
    merged: str
    kept: str
    # One name, two guessed types: the more specific type is kept (``tier2.entities.better_type``).
    retyped: bool = False


@dataclass(frozen=True, slots=True)
class MergeOutcome:
    relations_moved: int
    relations_absorbed: int
    relations_dropped: int
    touched_relations: tuple[str, ...]


def find_alias_merges(ctx: JobContext) -> list[EntityMerge]:
    """Pairs (merged, kept) where merged's name is one of kept's aliases, same type and scope.

    A name that is an alias of several entities is ambiguous and left alone. When two entities list each
    other's names, the one seen more often (then the older) is kept.
    """
    rows = ctx.tier2.db.query(
        "SELECT b.uuid AS merged, a.uuid AS kept, a.occurrence_count AS kept_n, a.id AS kept_id, "
        "b.occurrence_count AS merged_n, b.id AS merged_id "
        "FROM entities b JOIN entity_aliases k ON k.alias_key = b.name_key AND k.entity_uuid != b.uuid "
        "JOIN entities a ON a.uuid = k.entity_uuid "
        "WHERE a.scope = b.scope AND a.entity_type = b.entity_type ORDER BY b.id, a.id"
    )
    targets: dict[str, list[Any]] = defaultdict(list)
    for row in rows:
        targets[row["merged"]].append(row)
    pairs: dict[tuple[str, str], EntityMerge] = {}
    for merged, candidates in targets.items():
        if len(candidates) != 1:
            continue
        row = candidates[0]
        mutual = (row["kept"], merged)
        if mutual in pairs:
            # Both name each other: keep the more frequent (then older) one as the survivor.
            kept_rank = (-row["kept_n"], row["kept_id"])
            merged_rank = (-row["merged_n"], row["merged_id"])
            if kept_rank < merged_rank:
                del pairs[mutual]
            else:
                continue
        pairs[(merged, row["kept"])] = EntityMerge(merged, row["kept"])
    return list(pairs.values())


def find_type_merges(ctx: JobContext) -> list[EntityMerge]:
    """Pairs (merged, kept) of one name in one scope where kept's type is more specific than merged's.

    A name with several more specific candidates of different types ("Jordan" the person and the place)
    is ambiguous and left alone.
    """
    rows = ctx.tier2.db.query(
        "SELECT b.uuid AS merged, b.entity_type AS merged_type, a.uuid AS kept, a.entity_type AS kept_type "
        "FROM entities b JOIN entities a ON a.name_key = b.name_key AND a.scope = b.scope "
        "AND a.entity_type != b.entity_type ORDER BY b.id, a.id"
    )
    targets: dict[str, list[Any]] = defaultdict(list)
    for row in rows:
        if better_type(row["merged_type"], row["kept_type"]):
            targets[row["merged"]].append(row)
    out = []
    for merged, candidates in targets.items():
        if len({row["kept_type"] for row in candidates}) == 1:
            out.append(EntityMerge(merged, candidates[0]["kept"], retyped=True))
    return out


def _move_relations(conn: sqlite3.Connection, merged: str, kept: str, now: float) -> MergeOutcome:
    moved = absorbed = dropped = 0
    touched: list[str] = []
    rows = conn.execute(
        "SELECT * FROM relations WHERE from_entity_id = ? OR to_entity_id = ? ORDER BY id", (merged, merged)
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


def merge_entity(ctx: JobContext, pair: EntityMerge, now: float) -> MergeOutcome | None:
    """Fold ``pair.merged`` into ``pair.kept`` in one transaction, then update the graph.

    Returns None when the pair no longer applies (already merged, renamed or deleted meanwhile).
    Raises StorageError if Tier 2 fails (the transaction then leaves both entities as they were).
    """
    tier2 = ctx.tier2
    with tier2.db.atomic() as conn:
        b = conn.execute("SELECT * FROM entities WHERE uuid = ?", (pair.merged,)).fetchone()
        a = conn.execute("SELECT * FROM entities WHERE uuid = ?", (pair.kept,)).fetchone()
        if a is None or b is None or a["scope"] != b["scope"]:
            return None
        if pair.retyped:
            if a["name_key"] != b["name_key"] or not better_type(b["entity_type"], a["entity_type"]):
                return None
        else:
            if a["entity_type"] != b["entity_type"]:
                return None
            still_alias = conn.execute(
                "SELECT 1 FROM entity_aliases WHERE alias_key = ? AND entity_uuid = ?",
                (b["name_key"], a["uuid"]),
            ).fetchone()
            if still_alias is None:
                return None
        outcome = _move_relations(conn, pair.merged, pair.kept, now)
        conn.execute(
            "INSERT OR IGNORE INTO fact_entities(fact_uuid, entity_uuid) "
            "SELECT fact_uuid, ? FROM fact_entities WHERE entity_uuid = ?",
            (pair.kept, pair.merged),
        )
        replace_in_timeline(conn, "related_entities", pair.merged, pair.kept)
        aliases = dedupe_aliases(
            a["name"], [*loads_list(a["aliases"]), b["name"], *loads_list(b["aliases"])]
        )
        metadata = {**loads_dict(b["metadata"]), **loads_dict(a["metadata"])}
        conn.execute(
            "UPDATE entities SET aliases = ?, description = coalesce(description, ?), "
            "first_seen = min(first_seen, ?), last_seen = max(last_seen, ?), "
            "occurrence_count = occurrence_count + ?, metadata = ? WHERE uuid = ?",
            (
                dumps(aliases), b["description"], b["first_seen"], b["last_seen"], b["occurrence_count"],
                dumps(metadata), pair.kept,
            ),
        )  # fmt: skip
        # Deleting cascades the merged entity's alias keys and its (already copied) fact links.
        conn.execute("DELETE FROM entities WHERE uuid = ?", (pair.merged,))
        conn.execute("DELETE FROM entity_aliases WHERE entity_uuid = ?", (pair.kept,))
        keys = {name_key(a["name"]), *(name_key(alias) for alias in aliases)}
        conn.executemany(
            "INSERT OR IGNORE INTO entity_aliases(alias_key, entity_uuid) VALUES (?, ?)",
            [(key, pair.kept) for key in sorted(keys) if key],
        )
        if ctx.semantic is not None:
            tier2.embed_queue.enqueue(conn, ENTITIES_COLLECTION, pair.kept, "upsert")
            tier2.embed_queue.enqueue(conn, ENTITIES_COLLECTION, pair.merged, "delete")
        tier2.audit.record(
            conn,
            action="entity_merge",
            tier="tier2",
            actor=ctx.actor,
            target_uuid=pair.kept,
            diff={
                "merged": pair.merged,
                "name": b["name"],
                "aliases": {"old": loads_list(a["aliases"]), "new": aliases},
                "relations_moved": outcome.relations_moved,
                "relations_absorbed": outcome.relations_absorbed,
                "relations_dropped": outcome.relations_dropped,
            },
        )
        tier2.audit.record(
            conn,
            action="entity_delete",
            tier="tier2",
            actor=ctx.actor,
            target_uuid=pair.merged,
            diff={"merged_into": pair.kept},
        )
    if ctx.graph is not None:
        kept = tier2.entities.get(pair.kept)
        relations: list[Relation] = [tier2.relations.get(uuid) for uuid in outcome.touched_relations]
        ctx.graph.entity_removed(pair.merged)
        ctx.graph.entity_changed(kept)
        for relation in relations:
            ctx.graph.relation_changed(relation)
    return outcome


def merge_alias_entities(ctx: JobContext, now: float) -> dict[str, int]:
    """Merge every alias pair, round after round until none is left; returns counts."""
    merged = moved = absorbed = dropped = 0
    for _ in range(MAX_ROUNDS):
        pairs = [*find_type_merges(ctx), *find_alias_merges(ctx)]
        progressed = False
        for pair in pairs:
            outcome = merge_entity(ctx, pair, now)
            if outcome is None:
                continue
            progressed = True
            merged += 1
            moved += outcome.relations_moved
            absorbed += outcome.relations_absorbed
            dropped += outcome.relations_dropped
        if not progressed:
            break
    return {
        "entities_merged": merged,
        "relations_moved": moved,
        "relations_absorbed": absorbed,
        "relations_dropped": dropped,
    }


__all__ = [
    "EntityMerge",
    "MergeOutcome",
    "find_alias_merges",
    "find_type_merges",
    "merge_alias_entities",
    "merge_entity",
]
