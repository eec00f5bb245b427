"""The strongest relations of a few entities, as recall's entity cards show them (``EntityStore.cards``).

A card shows an entity's few strongest relations that are still believed: the other entity in the view
(first seen by then), the evidence fact not replaced. Whether a relation passes takes a read of the other
entity and of its evidence fact, and a well-known entity has hundreds of relations whose facts lie all
over the file: checking every one to keep five read most of recall's entity side at 100k turns. So the
relations are ranked on their own columns first and only the best few of each entity are checked; an
entity that keeps fewer than it may show from those is read again in full. The cards are the same.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from hermes_memory.scoping import ScopeView
from hermes_memory.tier2.db import Database

# A relation whose evidence fact ``ev`` a newer statement replaced by the time bound to ``?``
# (``replaced_by``) is no longer believed.
REPLACED = "(ev.superseded_by IS NOT NULL AND ev.superseded_at <= ?)"
# Relations checked per entity and card place before the entity is read in full: a relation fails its
# check when its fact was replaced or its other entity is outside the view, which few do.
CHECKED_PER_PLACE = 4

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
    checked = relations * CHECKED_PER_PLACE
    out, cut = _read(db, view, sorted(set(uuids)), recorded_by, checked)
    short = sorted(u for u in cut if len(out.get(u, ())) < relations)
    if short:  # more of their best relations failed the check than it left room for: every one of them
        out.update(_read(db, view, short, recorded_by, None)[0])
    return {u: found[:relations] for u, found in out.items() if found}


def _read(
    db: Database, view: ScopeView, uuids: list[str], recorded_by: float | None, checked: int | None
) -> tuple[dict[str, list[Relation]], set[str]]:
    """Each entity's believed relations among its best ``checked`` (None: all), best first; and the
    entities with more relations than were checked."""
    rscoped, rsp = view.where("r.scope")
    oscoped, osp = view.where("o.scope")
    rp: list[object] = [*rsp]
    op: list[object] = [*osp]
    if recorded_by is not None:
        rscoped, oscoped = f"{rscoped} AND r.created_at <= ?", f"{oscoped} AND o.first_seen <= ?"
        rp.append(recorded_by)
        op.append(recorded_by)
    wanted = json.dumps(uuids)
    # ``IN (SELECT value FROM json_each(?))``: an index probe per entity on either engine. The ranking
    # reads the relations' own rows only; the other entity and the evidence fact are read for the
    # relations within ``checked`` places of their entity (a row each, passing or not: ``ok``).
    bound = "WHERE l.pos <= ? " if checked is not None else ""
    limit = [checked] if checked is not None else []
    rows = db.query(
        "WITH l AS (SELECT u.*, row_number() OVER (PARTITION BY u.me ORDER BY u.strength DESC, u.rid, "
        "u.incoming) AS pos, count(*) OVER (PARTITION BY u.me) AS total FROM (SELECT r.from_entity_id "
        "AS me, r.relation_type AS kind, r.to_entity_id AS other, 0 AS incoming, r.strength AS strength, "
        "r.id AS rid, r.evidence_fact_id AS ev FROM relations r "
        f"WHERE r.from_entity_id IN (SELECT value FROM json_each(?)) AND {rscoped} "
        "UNION ALL SELECT r.to_entity_id, r.relation_type, r.from_entity_id, 1, r.strength, r.id, "
        "r.evidence_fact_id FROM relations r "
        f"WHERE r.to_entity_id IN (SELECT value FROM json_each(?)) AND {rscoped}) u), "
        f"c AS MATERIALIZED (SELECT * FROM l {bound}) "
        f"SELECT c.me, c.kind, c.incoming, o.name, c.total, (o.uuid IS NOT NULL AND {oscoped} "
        f"AND NOT {REPLACED}) AS ok FROM c LEFT JOIN entities o ON o.uuid = c.other "
        "LEFT JOIN facts ev ON ev.uuid = c.ev ORDER BY c.me, c.pos",
        (wanted, *rp, wanted, *rp, *limit, *op, replaced_by(recorded_by)),
    )
    out: dict[str, list[Relation]] = {}
    cut: set[str] = set()
    for me, kind, incoming, name, total, ok in rows:
        found = out.setdefault(str(me), [])
        if checked is not None and int(total) > checked:
            cut.add(str(me))
        if ok:
            found.append((f"<-{kind}" if incoming else str(kind), str(name)))
    return out, cut


__all__ = ["CHECKED_PER_PLACE", "REPLACED", "Relation", "replaced_by", "strongest_relations"]
