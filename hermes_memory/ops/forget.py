"""Forget (GDPR erasure): find every Tier 2 row and curated entry that mentions an entity or belongs to
one record, and remove it in one transaction. The same transaction records the erasure
(``ops.erasure``): what is left to purge — curated entries, vectors, the engine's files, graph files,
compaction — is finished after the commit, or after a crash on the next open.

Matching is case-insensitive on whole words (``Ann`` matches "ann's" but not "Anne"); a row whose text
mentions the name is removed whole — text is never rewritten, so no partial sentence survives.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from hermes_memory.errors import NotFoundError, ValidationError
from hermes_memory.ops import mentions
from hermes_memory.scoping import ScopeView
from hermes_memory.tier1.curated_store import CuratedStore
from hermes_memory.tier2 import Tier2
from hermes_memory.tier2.audit import visible_entries
from hermes_memory.tier2.chunks import CHUNKS_COLLECTION, ENTITIES_COLLECTION
from hermes_memory.tier2.entities import name_key

REDACTED = json.dumps({"redacted": "forget"})
_MATCH_FN = "hm_forget_match"
_MATCH_JSON_FN = "hm_forget_match_json"
_PLURAL = {"fact": "facts", "episode": "episodes", "event": "events", "relation": "relations"}


@dataclass
class ForgetPlan:
    """What a forget removes; ``counts()`` is what preview and result report (never any content)."""

    target: str
    terms: list[str] = field(default_factory=list)
    entities: set[str] = field(default_factory=set)
    facts: set[str] = field(default_factory=set)
    relations: set[str] = field(default_factory=set)
    events: set[str] = field(default_factory=set)
    episodes: set[str] = field(default_factory=set)
    chunks: set[str] = field(default_factory=set)
    ingest_ids: set[int] = field(default_factory=set)
    audit_ids: set[int] = field(default_factory=set)
    run_ids: set[int] = field(default_factory=set)
    curated: dict[str, list[str]] = field(default_factory=lambda: {"memory": [], "user": []})
    # Other names the target is mentioned under (shortened names, possessives, aliases given in the
    # text, related entities), for the preview; the caller may include them (``include_related``).
    related: list[dict[str, Any]] = field(default_factory=list)

    def counts(self) -> dict[str, Any]:
        return {
            "tier1": {store: len(entries) for store, entries in self.curated.items()},
            "tier2": {
                "facts": len(self.facts),
                "entities": len(self.entities),
                "relations": len(self.relations),
                "timeline_events": len(self.events),
                "episodes": len(self.episodes),
                "chunks": len(self.chunks),
                "ingest_queue": len(self.ingest_ids),
                "audit_redacted": len(self.audit_ids),
                "maintenance_runs_redacted": len(self.run_ids),
            },
            "tier3": {"chunk_vectors": len(self.chunks), "entity_vectors": len(self.entities)},
            "graph": {"nodes": len(self.entities), "edges": len(self.relations)},
        }

    def empty(self) -> bool:
        return not any(
            (self.entities, self.facts, self.relations, self.events, self.episodes, self.chunks,
             self.ingest_ids, *self.curated.values())
        )  # fmt: skip


def mention_pattern(terms: Iterable[str]) -> re.Pattern[str]:
    """One case-insensitive whole-word pattern for every term (terms may start/end with non-word chars)."""
    parts = sorted({t.strip() for t in terms if t.strip()}, key=len, reverse=True)
    if not parts:
        raise ValidationError("nothing to match: the name is empty")
    alternatives = "|".join(re.escape(p) for p in parts)
    return re.compile(rf"(?<!\w)(?:{alternatives})(?!\w)", re.IGNORECASE)


def _install(conn: sqlite3.Connection, pattern: re.Pattern[str] | None) -> None:
    def match(value: object) -> int:
        return int(pattern is not None and isinstance(value, str) and pattern.search(value) is not None)

    def match_json(value: object) -> int:
        # Audit diffs are JSON; match the decoded text so an escaped name (\u00e9) is found too.
        if not isinstance(value, str):
            return 0
        try:
            decoded = json.dumps(json.loads(value), ensure_ascii=False)
        except ValueError:
            decoded = value
        return match(decoded)

    conn.create_function(_MATCH_FN, 1, match, deterministic=True)
    conn.create_function(_MATCH_JSON_FN, 1, match_json, deterministic=True)


def _ids(conn: sqlite3.Connection, sql: str, params: Iterable[Any] = ()) -> set[Any]:
    return {row[0] for row in conn.execute(sql, tuple(params)).fetchall()}


def _table_exists(conn: sqlite3.Connection, name: str) -> bool:
    found = conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", (name,)).fetchone()
    return found is not None


def _j(values: Iterable[str]) -> str:
    return json.dumps(sorted(values))


def plan_entity(
    conn: sqlite3.Connection,
    tier2: Tier2,
    curated: CuratedStore | None,
    name: str,
    *,
    include: bool | Sequence[str] = False,
) -> ForgetPlan:
    """Everything that mentions ``name`` (and the aliases of the entities it names), read in ``conn``;
    ``plan.related`` lists other names it is mentioned under (``ops.mentions``), and ``include`` (True:
    all of them, or a list of their names) adds those to the plan.

    Raises ValidationError for an empty name or a name in ``include`` the preview does not list.
    """
    if not isinstance(name, str) or not name.strip():
        raise ValidationError("name must be a non-empty string")
    view = tier2.view
    scoped, sp = view.where("e.scope")
    seeds = _ids(
        conn,
        "SELECT a.entity_uuid FROM entity_aliases a JOIN entities e ON e.uuid = a.entity_uuid "
        f"WHERE a.alias_key = ? AND {scoped}",
        (name_key(name), *sp),
    )
    return _with_related(conn, view, curated, seeds, [name.strip()], include)


def _with_related(
    conn: sqlite3.Connection,
    view: ScopeView,
    curated: CuratedStore | None,
    seeds: set[str],
    names: list[str],
    include: bool | Sequence[str],
) -> ForgetPlan:
    plan = _plan_entities(conn, view, curated, seeds, names, target="entity")
    planned = {
        "episodes": plan.episodes, "facts": plan.facts, "timeline": plan.events, "entities": plan.entities,
    }  # fmt: skip
    found = mentions.related(conn, view, plan.terms, planned, lambda p: _install(conn, p), _MATCH_FN)
    chosen = _chosen(found, include)
    if chosen:
        extra_seeds = {e["uuid"] for c in chosen for e in c["entities"]}
        extra_terms = [t for c in chosen for t in c["terms"]]
        plan = _plan_entities(
            conn, view, curated, seeds | extra_seeds, [*names, *extra_terms], target="entity"
        )
    plan.related = [
        {"name": c["name"], "kind": c["kind"], "mentions": c["mentions"],
         "entities": [e["name"] for e in c["entities"]], "included": c in chosen}
        for c in found
    ]  # fmt: skip
    return plan


def _chosen(found: list[dict[str, Any]], include: bool | Sequence[str]) -> list[dict[str, Any]]:
    if include is True:
        return found
    if include is False:
        return []
    by_name = {c["name"].casefold(): c for c in found}
    unknown = [n for n in include if n.casefold() not in by_name]
    if unknown:
        listed = ", ".join(repr(c["name"]) for c in found) or "none"
        raise ValidationError(f"include_related names {unknown!r} are not among the related names ({listed})")
    return [by_name[n.casefold()] for n in dict.fromkeys(include)]


def _plan_entities(
    conn: sqlite3.Connection,
    view: ScopeView,
    curated: CuratedStore | None,
    seeds: set[str],
    names: list[str],
    *,
    target: str,
) -> ForgetPlan:
    # Only rows the view can read are planned: forgetting under one scope never touches another's.
    scoped, sp = view.where("scope")
    terms = list(names)
    for row in conn.execute(
        "SELECT name, aliases FROM entities WHERE uuid IN (SELECT value FROM json_each(?))", (_j(seeds),)
    ):
        terms.append(row["name"])
        terms.extend(str(a) for a in json.loads(row["aliases"] or "[]"))
    pattern = mention_pattern(terms)
    _install(conn, pattern)
    plan = ForgetPlan(target=target, terms=sorted(set(terms)))
    m = _MATCH_FN
    plan.entities = seeds | _ids(
        conn,
        f"SELECT uuid FROM entities WHERE {scoped} AND "
        f"{m}(name || ' ' || aliases || ' ' || coalesce(description, ''))",
        sp,
    )
    ents = _j(plan.entities)
    plan.facts = _ids(
        conn,
        f"SELECT uuid FROM facts WHERE {scoped} AND ({m}(content) OR {m}(coalesce(subject, ''))"
        f" OR {m}(coalesce(object, '')) OR uuid IN (SELECT fact_uuid FROM fact_entities"
        "   WHERE entity_uuid IN (SELECT value FROM json_each(?))))",
        (*sp, ents),
    )
    plan.relations = _ids(
        conn,
        f"SELECT uuid FROM relations WHERE {scoped} AND (from_entity_id IN (SELECT value FROM json_each(?))"
        " OR to_entity_id IN (SELECT value FROM json_each(?)))",
        (*sp, ents, ents),
    )
    plan.episodes = _ids(
        conn,
        f"SELECT uuid FROM episodes WHERE {scoped} AND "
        f"{m}(coalesce(speaker, '') || ' ' || text || ' ' || metadata)",
        sp,
    )
    _plan_common(conn, view, curated, plan, pattern)
    return plan


def _plan_common(
    conn: sqlite3.Connection,
    view: ScopeView,
    curated: CuratedStore | None,
    plan: ForgetPlan,
    pattern: re.Pattern[str] | None,
) -> None:
    m = _MATCH_FN
    scoped, sp = view.where("scope")
    plan.events |= _ids(
        conn,
        f"SELECT uuid FROM timeline WHERE {scoped} AND ({m}(title || ' ' || coalesce(description, ''))"
        " OR EXISTS (SELECT 1 FROM json_each(timeline.related_entities) je"
        "   WHERE je.value IN (SELECT value FROM json_each(?)))"
        " OR EXISTS (SELECT 1 FROM json_each(timeline.related_facts) jf"
        "   WHERE jf.value IN (SELECT value FROM json_each(?))))",
        (*sp, _j(plan.entities), _j(plan.facts)),
    )
    plan.chunks |= _ids(conn, f"SELECT uuid FROM chunks WHERE {scoped} AND {m}(text)", sp)
    _plan_links(conn, view, plan)
    mine, mp = _queued_in(view)
    plan.ingest_ids |= _ids(conn, f"SELECT id FROM ingest_queue WHERE {mine} AND {m}(payload)", mp)
    visible, vp = visible_entries(view)
    plan.audit_ids |= _ids(
        conn, f"SELECT id FROM memory_audit_log WHERE {visible} AND {_MATCH_JSON_FN}(diff)", vp
    )
    if view.admin and _table_exists(conn, "maintenance_runs"):
        # Run records are store-wide (counts only, no scope): a scoped forget leaves them alone.
        plan.run_ids |= _ids(
            conn,
            f"SELECT id FROM maintenance_runs WHERE {_MATCH_JSON_FN}(result) OR {m}(coalesce(error, ''))",
        )
    if curated is not None and pattern is not None:
        for store in ("memory", "user"):
            plan.curated[store] = [e for e in curated.entries(store) if pattern.search(e)]


def plan_uuid(
    conn: sqlite3.Connection,
    tier2: Tier2,
    curated: CuratedStore | None,
    uuid: str,
    *,
    include: bool | Sequence[str] = False,
) -> ForgetPlan:
    """What forgetting one record (fact, episode, timeline event, relation or entity) removes.

    An entity uuid forgets the entity by name (every mention; ``include`` as in ``plan_entity``).
    Raises ValidationError for an empty id,
    NotFoundError when no record has it.
    """
    if not isinstance(uuid, str) or not uuid.strip():
        raise ValidationError("id must be a non-empty string")
    uuid = uuid.strip()
    view = tier2.view
    scoped, sp = view.where("scope")
    row = conn.execute(f"SELECT name FROM entities WHERE uuid = ? AND {scoped}", (uuid, *sp)).fetchone()
    if row is not None:
        return _with_related(conn, view, curated, {uuid}, [row["name"]], include)
    plan = ForgetPlan(target="")
    kinds = (("facts", "fact"), ("episodes", "episode"), ("timeline", "event"), ("relations", "relation"))
    for table, kind in kinds:
        found = conn.execute(f"SELECT 1 FROM {table} WHERE uuid = ? AND {scoped}", (uuid, *sp)).fetchone()
        if found is None:
            continue
        plan.target = kind
        getattr(plan, _PLURAL[kind]).add(uuid)
        # The record's own chunks, windows and audit entries, found by their links — never by its text,
        # which other records may contain ("ok" is in "booked").
        _plan_links(conn, view, plan)
        _chosen([], include)  # only an entity has related names: naming some for a record is an error
        return plan
    raise NotFoundError(f"no fact, entity, episode, timeline event or relation has id {uuid!r}")


def _plan_links(conn: sqlite3.Connection, view: ScopeView, plan: ForgetPlan) -> None:
    """Add what belongs to the planned records by link: chunks whose source is one of them, the window
    chunk of the turn after each planned episode (it quotes the episode), audit entries about them."""
    scoped, sp = view.where("c.scope")
    sources = _j(plan.entities | plan.facts | plan.events | plan.episodes | plan.relations)
    plan.chunks |= _ids(
        conn,
        f"SELECT c.uuid FROM chunks c WHERE {scoped} AND c.source_uuid IN (SELECT value FROM json_each(?))",
        (*sp, sources),
    )
    plan.chunks |= _ids(
        conn,
        "SELECT c.uuid FROM json_each(?) j JOIN episodes e ON e.uuid = j.value"
        " JOIN episodes n ON n.id = (SELECT n2.id FROM episodes n2 WHERE n2.session_id = e.session_id"
        "   AND n2.scope = e.scope AND n2.id > e.id ORDER BY n2.id LIMIT 1)"
        f" JOIN chunks c ON c.source_uuid = n.uuid AND c.source_kind = 'episode_window' WHERE {scoped}",
        (_j(plan.episodes), *sp),
    )
    visible, vp = visible_entries(view)
    plan.audit_ids |= _ids(
        conn,
        f"SELECT id FROM memory_audit_log WHERE {visible}"
        " AND target_uuid IN (SELECT value FROM json_each(?))",
        (*vp, _j(plan.entities | plan.facts | plan.events | plan.episodes | plan.relations | plan.chunks)),
    )


def _queued_in(view: ScopeView) -> tuple[str, list[str]]:
    """SQL selecting the queued turns of the view (a turn's scope is in its payload)."""
    if view.admin:
        return "1 = 1", []
    marks = ", ".join("?" * len(view.readable))
    return f"coalesce(json_extract(payload, '$.scope'), 'default') IN ({marks})", list(view.readable)


def execute(conn: sqlite3.Connection, tier2: Tier2, plan: ForgetPlan, *, actor: str) -> None:
    """Remove the planned Tier 2 rows (and enqueue their vector deletes) inside the caller's transaction."""
    queue = tier2.embed_queue
    for chunk in sorted(plan.chunks):
        queue.enqueue(conn, CHUNKS_COLLECTION, chunk, "delete")
    for entity in sorted(plan.entities):
        queue.enqueue(conn, ENTITIES_COLLECTION, entity, "delete")
    deletes: list[tuple[str, str, set[Any]]] = [
        ("chunks", "uuid", plan.chunks),
        ("timeline", "uuid", plan.events),
        ("relations", "uuid", plan.relations),
        ("facts", "uuid", plan.facts),
        ("episodes", "uuid", plan.episodes),
        ("entities", "uuid", plan.entities),
        ("ingest_queue", "id", plan.ingest_ids),
    ]
    for table, column, values in deletes:
        if values:
            conn.execute(
                f"DELETE FROM {table} WHERE {column} IN (SELECT value FROM json_each(?))",
                (json.dumps(sorted(values)),),
            )
    # Superseded facts may point at a removed fact; the pointer is an id, but it would dangle.
    if plan.facts:
        conn.execute(
            "UPDATE facts SET superseded_by = NULL WHERE superseded_by IN (SELECT value FROM json_each(?))",
            (_j(plan.facts),),
        )
    if plan.audit_ids:
        conn.execute(
            "UPDATE memory_audit_log SET diff = ? WHERE id IN (SELECT value FROM json_each(?))",
            (REDACTED, json.dumps(sorted(plan.audit_ids))),
        )
    if plan.run_ids:
        conn.execute(
            "UPDATE maintenance_runs SET result = ?, error = NULL"
            " WHERE id IN (SELECT value FROM json_each(?))",
            (REDACTED, json.dumps(sorted(plan.run_ids))),
        )
    tier2.audit.record(
        conn, action="forget", tier="multi", actor=actor, target_uuid=None,
        diff={"target": plan.target, "counts": plan.counts()},
    )  # fmt: skip


Planner = Callable[[sqlite3.Connection], ForgetPlan]

__all__ = ["ForgetPlan", "Planner", "execute", "mention_pattern", "plan_entity", "plan_uuid"]
