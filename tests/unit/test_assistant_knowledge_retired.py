"""A store written before the assistant stopped being evidence: on open, the facts about the assistant
read only from its own turns are archived (audited, out of search) and its person entity is removed,
unless the user named it as a person of their own; everything else stays; a second open changes nothing.
"""

from __future__ import annotations

import json
from pathlib import Path

from hermes_memory.tier2 import Tier2
from hermes_memory.tier2.assistant_retire import retire

T0 = 1_700_000_000.0


def _old_store(
    path: Path, *, assistant: str = "Hermes", user_says: str = "I live in Lisbon."
) -> dict[str, str]:
    """What an earlier release wrote for one exchange, then the schema rolled back to before the fix."""
    t2 = Tier2.open(path)
    ids: dict[str, str] = {}
    try:
        with t2.db.atomic() as conn:
            user = t2.episodes.add(
                conn, session_id="s1", role="user", speaker="user", text=user_says, timestamp=T0
            )
            reply = t2.episodes.add(
                conn, session_id="s1", role="assistant", speaker=assistant,
                text="From memory: I work at Siemens as an engineer. I live in the cloud.", timestamp=T0 + 1,
            )  # fmt: skip
        ids["user_turn"], ids["reply"] = user.uuid, reply.uuid
        own = t2.facts.store(
            f"{assistant} works at Siemens", subject=assistant, predicate="works_at", object="Siemens",
            source_episodes=[reply.uuid], extractor="rules",
        )  # fmt: skip
        cloud = t2.facts.store(
            f"{assistant} lives in the cloud", subject=assistant, source_episodes=[reply.uuid]
        )
        said = t2.facts.store(
            "The user lives in Lisbon", subject="the user", predicate="lives_in", object="Lisbon",
            source_episodes=[user.uuid],
        )  # fmt: skip
        # the assistant repeating the user: not about the assistant, so not this migration's to judge
        echoed = t2.facts.store("The user likes tea", subject="the user", source_episodes=[reply.uuid])
        both = t2.facts.store(
            f"{assistant} is helpful", subject=assistant, source_episodes=[reply.uuid, user.uuid]
        )
        with t2.db.atomic() as conn:  # the fact's text in search, as Tier 3 indexed it
            t2.chunks.add(
                conn,
                [own.fact.content],
                source_kind="fact",
                source_type="fact",
                timestamp=T0,
                source_uuid=own.fact.uuid,
            )
        ids |= {"own": own.fact.uuid, "cloud": cloud.fact.uuid, "said": said.fact.uuid}
        ids |= {"echoed": echoed.fact.uuid, "both": both.fact.uuid}
        agent = t2.entities.ensure(assistant, "person").entity
        me = t2.entities.ensure("the user", "person").entity
        lisbon = t2.entities.ensure("Lisbon", "place").entity
        t2.relations.link(agent.uuid, me.uuid, "knows")
        t2.relations.link(me.uuid, lisbon.uuid, "lives_in")
        ids |= {"agent": agent.uuid, "me": me.uuid, "lisbon": lisbon.uuid}
        with t2.db.atomic() as conn:
            conn.execute("DELETE FROM memory_schema_version WHERE version >= 13")
    finally:
        t2.close()
    return ids


def _reopen(path: Path) -> Tier2:
    return Tier2.open(path)


def test_facts_about_the_assistant_from_its_own_turns_are_archived_with_an_audit_entry(
    tmp_path: Path,
) -> None:
    db = tmp_path / "tier2.db"
    ids = _old_store(db)
    t2 = _reopen(db)
    try:
        active = {s.fact.uuid for s in t2.facts.query(None, limit=100, touch=False)}
        assert ids["own"] not in active and ids["cloud"] not in active
        assert {ids["said"], ids["echoed"], ids["both"]} <= active  # a user turn supports it, or not about it
        archived = t2.db.query_one("SELECT is_archived FROM facts WHERE uuid = ?", (ids["own"],))
        assert archived is not None and archived["is_archived"] == 1  # archived, not deleted
        entries = t2.db.query(
            "SELECT action, actor, diff FROM memory_audit_log "
            "WHERE target_uuid IN (?, ?) AND actor = 'migration'",
            (ids["own"], ids["cloud"]),
        )
        assert [(e["action"], e["actor"]) for e in entries] == [("fact_delete", "migration")] * 2
        assert "assistant" in json.loads(entries[0]["diff"])["reason"]
        chunks = t2.db.query_one(
            "SELECT count(*) AS n FROM chunks WHERE source_kind = 'fact' AND source_uuid IN (?, ?)",
            (ids["own"], ids["cloud"]),
        )
        assert chunks is not None and chunks["n"] == 0  # out of keyword and meaning search
        queued = t2.db.query("SELECT collection, op FROM embed_queue WHERE collection = 'memory_chunks'")
        assert [(q["collection"], q["op"]) for q in queued] == [("memory_chunks", "delete")]  # its vector too
    finally:
        t2.close()


def test_the_assistant_is_no_longer_a_person_and_nothing_else_is_lost(tmp_path: Path) -> None:
    db = tmp_path / "tier2.db"
    ids = _old_store(db)
    t2 = _reopen(db)
    try:
        names = {(e.name, e.entity_type) for e in t2.entities.all()}
        assert ("Hermes", "person") not in names
        assert {("the user", "person"), ("Lisbon", "place")} <= names
        relations = t2.db.query("SELECT from_entity_id, to_entity_id, relation_type FROM relations")
        assert [(r["from_entity_id"], r["to_entity_id"], r["relation_type"]) for r in relations] == [
            (ids["me"], ids["lisbon"], "lives_in")
        ]
        turns = t2.db.query_one("SELECT count(*) AS n FROM episodes")
        assert turns is not None and turns["n"] == 2
        removed = t2.db.query_one(
            "SELECT action FROM memory_audit_log WHERE target_uuid = ? AND actor = 'migration'",
            (ids["agent"],),
        )
        assert removed is not None and removed["action"] == "entity_delete"
    finally:
        t2.close()


def test_a_person_the_user_named_stays_but_being_addressed_is_no_naming(tmp_path: Path) -> None:
    named = tmp_path / "named.db"
    _old_store(named, assistant="Iris", user_says="My neighbour Iris lends me her ladder.")
    addressed = tmp_path / "addressed.db"
    _old_store(addressed, assistant="Iris", user_says="Thanks Iris! Iris, remember that I moved.")
    for path, kept in ((named, True), (addressed, False)):
        t2 = _reopen(path)
        try:
            people = {e.name for e in t2.entities.all() if e.entity_type == "person"}
            assert ("Iris" in people) is kept, (path.name, people)
        finally:
            t2.close()


def test_a_second_open_changes_nothing(tmp_path: Path) -> None:
    db = tmp_path / "tier2.db"
    _old_store(db)
    _reopen(db).close()
    t2 = _reopen(db)
    try:
        before = t2.db.query_one("SELECT count(*) AS n FROM memory_audit_log")
        assert before is not None
        with t2.db.atomic() as conn:  # the migration's step again: nothing left to retire
            retire(conn)
        after = t2.db.query_one("SELECT count(*) AS n FROM memory_audit_log")
        assert after is not None and after["n"] == before["n"]
        assert t2.db.query_one("SELECT max(version) AS v FROM memory_schema_version")["v"] >= 13
    finally:
        t2.close()
