"""Merging entities that are one thing under two names: an entity whose name is another entity's alias
(same type, same scope) is folded into that entity; so is an entity whose name another entity of a more
specific type has ("Biscuit" typed "other" from a bare mention, "Biscuit" the pet from "my dog Biscuit").

One merge is one transaction: relations and fact links move to the kept entity (a relation it already
has absorbs the moved one; a relation between the two becomes a self-loop and is dropped), timeline
references follow, aliases are united, the merged entity is deleted, the audit log records both sides and
the entity embeddings are re-queued. The graph follows after the commit, through GraphService.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from hermes_memory.cron.context import JobContext
from hermes_memory.records import Relation
from hermes_memory.tier2.chunks import ENTITIES_COLLECTION
from hermes_memory.tier2.entities import better_type, dedupe_aliases
from hermes_memory.tier2.entity_merges import AliasCandidate, EntityMerges, MergeOutcome, TypeCandidate
from hermes_memory.tier2.upkeep import replace_in_timeline

# Each round merges every pair found; a chain (C is an alias of B, B of A) may need another round.
MAX_ROUNDS = 10


@dataclass(frozen=True, slots=True)
class EntityMerge:
    merged: str
    kept: str
    # One name, two guessed types: the more specific type is kept (``tier2.entities.better_type``).
    retyped: bool = False


def find_alias_merges(ctx: JobContext) -> list[EntityMerge]:
    """Pairs (merged, kept) where merged's name is one of kept's aliases, same type and scope.

    A name that is an alias of several entities is ambiguous and left alone. When two entities list each
    other's names, the one seen more often (then the older) is kept.
    """
    targets: dict[str, list[AliasCandidate]] = defaultdict(list)
    for row in EntityMerges(ctx.tier2.db).alias_candidates():
        targets[row.merged].append(row)
    pairs: dict[tuple[str, str], EntityMerge] = {}
    for merged, candidates in targets.items():
        if len(candidates) != 1:
            continue
        row = candidates[0]
        mutual = (row.kept, merged)
        if mutual in pairs:
            # Both name each other: keep the more frequent (then older) one as the survivor.
            kept_rank = (-row.kept_n, row.kept_id)
            merged_rank = (-row.merged_n, row.merged_id)
            if kept_rank < merged_rank:
                del pairs[mutual]
            else:
                continue
        pairs[(merged, row.kept)] = EntityMerge(merged, row.kept)
    return list(pairs.values())


def find_type_merges(ctx: JobContext) -> list[EntityMerge]:
    """Pairs (merged, kept) of one name in one scope where kept's type is more specific than merged's.

    A name with several more specific candidates of different types ("Jordan" the person and the place)
    is ambiguous and left alone.
    """
    targets: dict[str, list[TypeCandidate]] = defaultdict(list)
    for row in EntityMerges(ctx.tier2.db).type_candidates():
        if better_type(row.merged_type, row.kept_type):
            targets[row.merged].append(row)
    out = []
    for merged, candidates in targets.items():
        if len({row.kept_type for row in candidates}) == 1:
            out.append(EntityMerge(merged, candidates[0].kept, retyped=True))
    return out


def merge_entity(ctx: JobContext, pair: EntityMerge, now: float) -> MergeOutcome | None:
    """Fold ``pair.merged`` into ``pair.kept`` in one transaction, then update the graph.

    Returns None when the pair no longer applies (already merged, renamed or deleted meanwhile).
    Raises StorageError if Tier 2 fails (the transaction then leaves both entities as they were).
    """
    tier2 = ctx.tier2
    store = EntityMerges(tier2.db)
    with tier2.db.atomic() as conn:
        merged_side = store.side(conn, pair.merged)
        kept_side = store.side(conn, pair.kept)
        if kept_side is None or merged_side is None or kept_side.scope != merged_side.scope:
            return None
        a, b = kept_side.entity, merged_side.entity
        if pair.retyped:
            if kept_side.name_key != merged_side.name_key or not better_type(b.entity_type, a.entity_type):
                return None
        else:
            if a.entity_type != b.entity_type:
                return None
            if not store.has_alias_key(conn, a.uuid, merged_side.name_key):
                return None
        outcome = store.move_relations(conn, pair.merged, pair.kept, now)
        store.copy_fact_links(conn, pair.merged, pair.kept)
        replace_in_timeline(conn, "related_entities", pair.merged, pair.kept)
        aliases = dedupe_aliases(a.name, [*a.aliases, b.name, *b.aliases])
        # Deleting the merged entity cascades its alias keys and its (already copied) fact links.
        store.fold(conn, a, b, aliases, {**b.metadata, **a.metadata})
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
                "name": b.name,
                "aliases": {"old": a.aliases, "new": aliases},
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
