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
from hermes_memory.tier1.curated_store import CuratedStore
from hermes_memory.tier2 import Tier2
from hermes_memory.tier2.chunks import CHUNKS_COLLECTION, ENTITIES_COLLECTION
from hermes_memory.tier2.entities import name_key
from hermes_memory.tier2.mentions import MentionQueries, delete_planned

REDACTED = json.dumps({"redacted": "forget"})
# A record kind (recall's hit ids name it: "episode:<uuid>", "event:<uuid>") -> the table it lives in
# and its set in ForgetPlan.
_RECORDS = {
    "fact": ("facts", "facts"),
    "episode": ("episodes", "episodes"),
    "event": ("timeline", "events"),
    "relation": ("relations", "relations"),
    "chunk": ("chunks", "chunks"),
}


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
    # For the file of what the agent saw (``ops.seen_file``), beside ``terms``: the forgotten records'
    # own texts (a forget by id names no one), or the forgotten scope.
    texts: list[str] = field(default_factory=list)
    scope: str | None = None

    def seen_match(self) -> dict[str, Any]:
        """What the erasure scrubs from the file of what the agent saw (empty: nothing)."""
        match = {"terms": self.terms, "texts": self.texts, "scope": self.scope}
        return {k: v for k, v in match.items() if v}

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


# More stored turns than this in one forget is a large forget: the preview says so, and it needs an
# explicit extra confirmation (``confirm_large``; the CLI's --all-turns).
LARGE_TURNS = 5


def large_warning(plan: ForgetPlan) -> str | None:
    """What the preview of a large forget says (None for a small one)."""
    turns = len(plan.episodes)
    if turns <= LARGE_TURNS:
        return None
    return (
        f"this forget deletes {turns} stored turns (every turn whose words name it, with their facts): "
        f"more than {LARGE_TURNS}, so it needs an extra confirmation (confirm_large=true; the CLI's "
        "--all-turns)"
    )


def mention_pattern(terms: Iterable[str]) -> re.Pattern[str]:
    """One case-insensitive whole-word pattern for every term (terms may start/end with non-word chars)."""
    parts = sorted({t.strip() for t in terms if t.strip()}, key=len, reverse=True)
    if not parts:
        raise ValidationError("nothing to match: the name is empty")
    alternatives = "|".join(re.escape(p) for p in parts)
    return re.compile(rf"(?<!\w)(?:{alternatives})(?!\w)", re.IGNORECASE)


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
    q = MentionQueries(conn, tier2.view)
    seeds = q.entities_with_alias(name_key(name))
    return _with_related(q, curated, seeds, [name.strip()], include)


def _with_related(
    q: MentionQueries,
    curated: CuratedStore | None,
    seeds: set[str],
    names: list[str],
    include: bool | Sequence[str],
) -> ForgetPlan:
    plan = _plan_entities(q, curated, seeds, names, target="entity")
    planned = {
        "episodes": plan.episodes, "facts": plan.facts, "timeline": plan.events, "entities": plan.entities,
    }  # fmt: skip
    found = mentions.related(q, plan.terms, planned)
    chosen = _chosen(found, include)
    if chosen:
        extra_seeds = {e["uuid"] for c in chosen for e in c["entities"]}
        extra_terms = [t for c in chosen for t in c["terms"]]
        plan = _plan_entities(q, curated, seeds | extra_seeds, [*names, *extra_terms], target="entity")
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
    q: MentionQueries,
    curated: CuratedStore | None,
    seeds: set[str],
    names: list[str],
    *,
    target: str,
) -> ForgetPlan:
    # Only rows the view can read are planned: forgetting under one scope never touches another's.
    terms = [*names, *q.entity_names(seeds)]
    pattern = mention_pattern(terms)
    q.match(pattern)
    plan = ForgetPlan(target=target, terms=sorted(set(terms)))
    plan.entities = seeds | q.entities_mentioning()
    plan.facts = q.facts_mentioning(plan.entities)
    plan.relations = q.relations_of(plan.entities)
    plan.episodes = q.episodes_mentioning()
    _plan_common(q, curated, plan, pattern)
    return plan


def _plan_common(
    q: MentionQueries,
    curated: CuratedStore | None,
    plan: ForgetPlan,
    pattern: re.Pattern[str] | None,
) -> None:
    plan.events |= q.events_mentioning(plan.entities, plan.facts)
    plan.chunks |= q.chunks_mentioning()
    _plan_links(q, plan)
    plan.ingest_ids |= q.queued_mentioning()
    plan.audit_ids |= q.audit_mentioning()
    # Run records are store-wide (counts only, no scope): a scoped forget leaves them alone.
    plan.run_ids |= q.runs_mentioning()
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
    """What forgetting one record (fact, episode, timeline event, relation, entity or indexed chunk)
    removes. ``uuid`` is a bare uuid or a recall hit's id, which names the kind ("episode:<uuid>",
    "fact:<uuid>", "event:", "entity:", "relation:", "chunk:"); a named kind is the only one looked in.

    An entity uuid forgets the entity by name (every mention; ``include`` as in ``plan_entity``).
    Raises ValidationError for an empty id, an unknown kind or a curated entry's id (those are removed
    with the memory tool), NotFoundError when no record has it.
    """
    if not isinstance(uuid, str) or not uuid.strip():
        raise ValidationError("id must be a non-empty string")
    kind, uuid = _split_id(uuid.strip())
    q = MentionQueries(conn, tier2.view)
    if kind in (None, "entity"):
        name = q.entity_name(uuid)
        if name is not None:
            return _with_related(q, curated, {uuid}, [name], include)
    plan = ForgetPlan(target="")
    for candidate, (table, plural) in _RECORDS.items():
        if kind not in (None, candidate) or not q.has_record(table, uuid):
            continue
        plan.target = candidate
        getattr(plan, plural).add(uuid)
        plan.texts = q.record_texts(table, uuid)
        # The record's own chunks, windows and audit entries, found by their links — never by its text,
        # which other records may contain ("ok" is in "booked").
        _plan_links(q, plan)
        _chosen([], include)  # only an entity has related names: naming some for a record is an error
        return plan
    what = "fact, entity, episode, timeline event, relation or chunk" if kind is None else kind
    raise NotFoundError(f"no {what} has id {uuid!r}")


def _split_id(given: str) -> tuple[str | None, str]:
    """("episode", uuid) for a recall hit's "episode:<uuid>", (None, uuid) for a bare uuid."""
    kind, sep, rest = given.partition(":")
    if not sep:
        return None, given
    if kind == "curated":
        raise ValidationError(
            f"{given!r} is a curated entry (MEMORY.md/USER.md): remove it with the memory tool's remove"
        )
    if (kind != "entity" and kind not in _RECORDS) or not rest.strip():
        raise ValidationError(
            f"id {given!r}: expected a uuid or <kind>:<uuid> with kind one of "
            f"{', '.join(sorted([*_RECORDS, 'entity']))}"
        )
    return kind, rest.strip()


def _plan_links(q: MentionQueries, plan: ForgetPlan) -> None:
    """Add what belongs to the planned records by link: chunks whose source is one of them, the window
    chunk of the turn after each planned episode (it quotes the episode), audit entries about them."""
    plan.chunks |= q.chunks_of(plan.entities | plan.facts | plan.events | plan.episodes | plan.relations)
    plan.chunks |= q.window_chunks(plan.episodes)
    plan.audit_ids |= q.audit_about(
        plan.entities | plan.facts | plan.events | plan.episodes | plan.relations | plan.chunks
    )


def execute(conn: sqlite3.Connection, tier2: Tier2, plan: ForgetPlan, *, actor: str) -> None:
    """Remove the planned Tier 2 rows (and enqueue their vector deletes) inside the caller's transaction."""
    queue = tier2.embed_queue
    for chunk in sorted(plan.chunks):
        queue.enqueue(conn, CHUNKS_COLLECTION, chunk, "delete")
    for entity in sorted(plan.entities):
        queue.enqueue(conn, ENTITIES_COLLECTION, entity, "delete")
    delete_planned(
        conn, chunks=plan.chunks, events=plan.events, relations=plan.relations, facts=plan.facts,
        episodes=plan.episodes, entities=plan.entities, ingest_ids=plan.ingest_ids,
        audit_ids=plan.audit_ids, run_ids=plan.run_ids, redacted=REDACTED,
    )  # fmt: skip
    tier2.audit.record(
        conn, action="forget", tier="multi", actor=actor, target_uuid=None,
        diff={"target": plan.target, "counts": plan.counts()},
    )  # fmt: skip


Planner = Callable[[sqlite3.Connection], ForgetPlan]

__all__ = [
    "LARGE_TURNS", "ForgetPlan", "Planner", "execute", "large_warning", "mention_pattern", "plan_entity",
    "plan_uuid",
]  # fmt: skip
