"""The strongest relations of a few entities, as recall's entity cards show them (``EntityStore.cards``).

A card shows an entity's few strongest relations that are still believed: the other entity in the view
(first seen by then), the evidence fact not replaced. Whether a relation passes takes a read of the other
entity and of its evidence fact, and a well-known entity has hundreds of relations whose facts lie all
over the file: checking every one to keep five took most of recall's entity side at 100k turns (20 ms for
ten entities with 2,500 relations). So only the best few relations each way of each entity are checked;
an entity left with fewer passing ones than it may show, where there were more to check, is read again in
full. The cards are the same.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from hermes_memory.scoping import ScopeView
from hermes_memory.tier2.db import Database

# A relation whose evidence fact ``ev`` a newer statement replaced by the time bound to ``?``
# (``replaced_by``) is no longer believed.
REPLACED = "(ev.superseded_by IS NOT NULL AND ev.superseded_at <= ?)"
# Relations checked each way per card place before an entity is read in full: a relation fails its check
# when its fact was replaced or its other entity is outside the view, which few do.
CHECKED_PER_PLACE = 2

#: (relation type, prefixed ``<-`` when it points at the entity; the other entity's name)
Relation = tuple[str, str]


def replaced_by(recorded_by: float | None) -> float:
    """The time ``REPLACED`` is bound to: replaced by ``recorded_by``, else ever."""
    return recorded_by if recorded_by is not None else float("inf")


def strongest_relations(
    db: Database, view: ScopeView, uuids: Sequence[str], relations: int, recorded_by: float | None
) -> dict[str, list[Relation]]:
    """By entity uuid (those of ``uuids`` with any), its ``relations`` strongest believed relations, by
    strength then age (relation id), outgoing before incoming at a tie; with ``recorded_by``, only
    relations recorded by then, to entities first seen by then, and replaced by then."""
    if not uuids or relations < 1:
        return {}
    out, short = _read(db, view, sorted(set(uuids)), recorded_by, relations)
    if short:
        out.update(_read(db, view, sorted(short), recorded_by, None)[0])
    return {u: found[:relations] for u, found in out.items() if found}


def _read(
    db: Database, view: ScopeView, uuids: list[str], recorded_by: float | None, relations: int | None
) -> tuple[dict[str, list[Relation]], set[str]]:
    """Each entity's believed relations, best first: among its best ``relations * CHECKED_PER_PLACE``
    each way (every one with None). Also the entities to read in full: those with fewer than
    ``relations`` believed ones among the relations checked one way when there were more that way.

    Ranked by the relations' own columns, each way by one index probe per entity; the other entity and
    the evidence fact are read for the relations checked only (a row each, passing or not: ``ok``)."""
    rscoped, rsp = view.where("x.scope")
    oscoped, osp = view.where("o.scope")
    rp: list[object] = [*rsp]
    op: list[object] = [*osp]
    if recorded_by is not None:
        rscoped, oscoped = f"{rscoped} AND x.created_at <= ?", f"{oscoped} AND o.first_seen <= ?"
        rp.append(recorded_by)
        op.append(recorded_by)
    checked = relations * CHECKED_PER_PLACE if relations is not None else None
    limit, bound = ("LIMIT ?", [checked]) if checked is not None else ("", [])
    # Each way's best relation ids of one entity (``{end}``: the column naming it).
    order = f"ORDER BY x.strength DESC, x.id {limit}"
    best = f"SELECT x.id FROM relations x WHERE x.{{end}} = w.me AND {rscoped} {order}"
    rows = db.query(
        "WITH w AS (SELECT value AS me FROM json_each(?)), c AS MATERIALIZED ("
        "SELECT w.me AS me, 0 AS incoming, r.relation_type AS kind, r.to_entity_id AS other, "
        "r.strength AS strength, r.id AS rid, r.evidence_fact_id AS ev "
        f"FROM w JOIN relations r ON r.id IN ({best.format(end='from_entity_id')}) "
        "UNION ALL SELECT w.me, 1, r.relation_type, r.from_entity_id, r.strength, r.id, r.evidence_fact_id "
        f"FROM w JOIN relations r ON r.id IN ({best.format(end='to_entity_id')})) "
        f"SELECT c.me, c.kind, c.incoming, o.name, (o.uuid IS NOT NULL AND {oscoped} "
        f"AND NOT {REPLACED}) AS ok FROM c LEFT JOIN entities o ON o.uuid = c.other "
        "LEFT JOIN facts ev ON ev.uuid = c.ev ORDER BY c.me, c.strength DESC, c.rid, c.incoming",
        (json.dumps(uuids), *rp, *bound, *rp, *bound, *op, replaced_by(recorded_by)),
    )
    out: dict[str, list[Relation]] = {}
    seen: dict[tuple[str, int], list[int]] = {}  # (entity, way) -> [relations checked, believed]
    for me, kind, incoming, name, ok in rows:
        found = out.setdefault(str(me), [])
        way = seen.setdefault((str(me), int(incoming)), [0, 0])
        way[0] += 1
        if ok:
            way[1] += 1
            found.append((f"<-{kind}" if incoming else str(kind), str(name)))
    # A way that filled its limit may hold more: enough of its checked relations must have passed.
    short = {me for (me, _), (count, ok) in seen.items() if count == checked and relations and ok < relations}
    return out, short


__all__ = ["CHECKED_PER_PLACE", "REPLACED", "Relation", "replaced_by", "strongest_relations"]
