"""Retiring what earlier releases learned from the AI assistant's own words (a data migration).

The write path no longer takes an assistant reply as evidence, nor makes the assistant a person of the
user's world; stores written before still hold both: facts about the assistant read from its own turns
("Hermes works at Siemens" from "From memory: I work at Siemens") and an entity such as
``Hermes (person)`` that the system prompt lists among the people who matter. ``retire`` runs once, in
the migration's transaction:

- a fact whose subject is the assistant (a name it spoke under) and whose every known source turn is
  one of its own is archived, its chunks leave search (their vectors are queued for deletion), and
  the audit log says why;
- the assistant's person entity is removed (its aliases, relations and fact links go with it) unless
  the user named it in a turn of their own, other than to address it ("My colleague Hermes ..." keeps
  it; "Hermes, remember ..." or "Thanks Hermes!" does not).

Facts the user's turns support, other entities and every turn stay as they are.
"""

from __future__ import annotations

import json
import re
import sqlite3
import time

from hermes_memory.tier2._util import normalise
from hermes_memory.tier2.chunks import CHUNKS_COLLECTION, ENTITIES_COLLECTION

ACTOR = "migration"
FACT_REASON = "a fact about the assistant read only from its own words"
ENTITY_REASON = "the assistant is no person of the user's world"
# Words that open an address ("Thanks Hermes", "Hey Hermes,").
_ADDRESS_OPENERS = re.compile(
    r"\b(?:hi|hey|hello|thanks|thank you|ok|okay|dear|yo|please)\W*$", re.IGNORECASE
)


def retire(conn: sqlite3.Connection) -> None:
    """Archive the facts about the assistant from its own turns and remove its person entity (see the
    module docstring), with an audit entry each, in the caller's transaction. Idempotent."""
    names = _assistant_names(conn)
    if not names:
        return
    at = time.time()
    for key in names:
        _retire_facts(conn, key, at)
        _remove_entities(conn, key, at)


def _assistant_names(conn: sqlite3.Connection) -> set[str]:
    rows = conn.execute(
        "SELECT DISTINCT speaker FROM episodes WHERE role = 'assistant' AND speaker IS NOT NULL"
    ).fetchall()
    return {normalise(row[0]) for row in rows if normalise(row[0])}


def _retire_facts(conn: sqlite3.Connection, key: str, at: float) -> None:
    # Every source turn known and the assistant's: a fact some user turn supports, or whose source was
    # forgotten, stays.
    rows = conn.execute(
        "SELECT f.id, f.uuid, f.scope, f.subject FROM facts f WHERE f.is_archived = 0 "
        "AND lower(trim(f.subject)) = ? AND EXISTS (SELECT 1 FROM fact_sources s WHERE s.fact_id = f.id) "
        "AND NOT EXISTS (SELECT 1 FROM fact_sources s LEFT JOIN episodes e ON e.uuid = s.episode_uuid "
        "                WHERE s.fact_id = f.id AND (e.role IS NULL OR e.role != 'assistant'))",
        (key,),
    ).fetchall()
    for fact_id, uuid, scope, subject in rows:
        if normalise(subject) != key:
            continue
        conn.execute("UPDATE facts SET is_archived = 1, updated_at = ? WHERE id = ?", (at, fact_id))
        chunks = conn.execute(
            "SELECT uuid FROM chunks WHERE source_kind = 'fact' AND source_uuid = ?", (uuid,)
        ).fetchall()
        for (chunk,) in chunks:
            _queue_delete(conn, CHUNKS_COLLECTION, chunk, at)
        conn.execute("DELETE FROM chunks WHERE source_kind = 'fact' AND source_uuid = ?", (uuid,))
        _audit(conn, "fact_delete", uuid, scope, {"soft": True, "reason": FACT_REASON}, at)


def _remove_entities(conn: sqlite3.Connection, key: str, at: float) -> None:
    rows = conn.execute(
        "SELECT uuid, name, scope FROM entities WHERE name_key = ? AND entity_type = 'person'", (key,)
    ).fetchall()
    for uuid, name, scope in rows:
        if _named_by_user(conn, name, scope):
            continue
        conn.execute("DELETE FROM entities WHERE uuid = ?", (uuid,))  # aliases, relations, links cascade
        _queue_delete(conn, ENTITIES_COLLECTION, uuid, at)
        _audit(conn, "entity_delete", uuid, scope, {"name": name, "reason": ENTITY_REASON}, at)


def _named_by_user(conn: sqlite3.Connection, name: str, scope: str) -> bool:
    """Whether a user turn of ``scope`` names ``name`` other than to address it."""
    pattern = re.compile(rf"(?<![\w'-]){re.escape(name)}(?![\w'-])", re.IGNORECASE)
    rows = conn.execute(
        "SELECT text FROM episodes WHERE role = 'user' AND scope = ? AND text LIKE ?",
        (scope, f"%{name}%"),
    )
    return any(_names_outside_address(text, pattern) for (text,) in rows)


def _names_outside_address(text: str, pattern: re.Pattern[str]) -> bool:
    for found in pattern.finditer(text):
        before, after = text[: found.start()].rstrip(), text[found.end() :].lstrip()
        opens = not before or before[-1] in ".!?\n" or _ADDRESS_OPENERS.search(before) is not None
        if opens and (not after or after[0] in ",!:?."):
            continue  # "Hermes, remember ...", "Thanks Hermes!"
        if before.endswith(",") and (not after or after[0] in ".!?"):
            continue  # "... for me, Hermes?"
        return True
    return False


def _queue_delete(conn: sqlite3.Connection, collection: str, item: str, at: float) -> None:
    # As ``EmbedQueue.enqueue``: a delete cancels a pending upsert of the same item.
    conn.execute(
        "DELETE FROM embed_queue WHERE collection = ? AND item_uuid = ? AND op = 'upsert'", (collection, item)
    )
    conn.execute(
        "INSERT INTO embed_queue(collection, item_uuid, op, enqueued_at) VALUES (?, ?, 'delete', ?) "
        "ON CONFLICT(collection, item_uuid, op) DO UPDATE SET enqueued_at = excluded.enqueued_at",
        (collection, item, at),
    )


def _audit(
    conn: sqlite3.Connection, action: str, target: str, scope: str, diff: dict[str, object], at: float
) -> None:
    conn.execute(
        "INSERT INTO memory_audit_log(timestamp, action, tier, actor, target_uuid, diff, success, scope) "
        "VALUES (?, ?, 'tier2', ?, ?, ?, 1, ?)",
        (at, action, ACTOR, target, json.dumps(diff), scope),
    )


__all__ = ["retire"]
