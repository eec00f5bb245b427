"""Migration 11 (issue 13, bounded recall at scale): ``fact_sources`` keeps each fact's source turns as
rows, so ``superseded_sources`` reads only the links of the turns asked about; ``recall_generation`` moves
with every commit that changes a row recall reads, and only with those, so recall's read cache survives
the background worker's access-count flushes and queue bookkeeping."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_memory import MemoryAPI
from hermes_memory.recall import _reads
from hermes_memory.tier2 import Database, schema

T0 = 1_683_540_000.0  # 2023-05-08
HASHING: dict[str, Any] = {"tier3.embedding_model": "hashing", "tier3.backend": "memory"}


@pytest.fixture
def api(tmp_path: Path) -> Iterator[MemoryAPI]:
    mem = MemoryAPI(hermes_home=tmp_path, **HASHING)
    yield mem
    mem.close()


def _links(db: Database) -> set[tuple[str, str]]:
    rows = db.query("SELECT s.episode_uuid, f.uuid FROM fact_sources s JOIN facts f ON f.id = s.fact_id")
    return {(str(r[0]), str(r[1])) for r in rows}


def test_fact_sources_follow_every_write_of_a_facts_source_turns(api: MemoryAPI) -> None:
    facts, db = api.tier2.facts, api.tier2.db
    first = facts.store("Caroline lives in Hamburg", source_episodes=["e1", "e2"]).fact
    second = facts.store("Caroline has a beagle", source_episodes=["e2"]).fact
    assert _links(db) == {("e1", first.uuid), ("e2", first.uuid), ("e2", second.uuid)}
    again = facts.store("Caroline lives in Hamburg", source_episodes=["e3"])  # merged: a new source turn
    assert not again.created
    assert ("e3", first.uuid) in _links(db)
    assert facts.delete(second.uuid, soft=False)
    assert _links(db) == {("e1", first.uuid), ("e2", first.uuid), ("e3", first.uuid)}


def test_migration_11_links_the_facts_written_before_it(tmp_path: Path) -> None:
    db = Database(tmp_path / "old.db")
    try:
        schema.migrate(db, schema.MIGRATIONS[:10])
        with db.atomic() as conn:
            for i, sources in enumerate((["a", "b"], [], ["b", 7])):
                conn.execute(
                    "INSERT INTO facts(uuid, content, content_hash, source_type, created_at, updated_at, "
                    "recorded_at, source_episodes) VALUES (?, ?, ?, 'user', 0, 0, 0, ?)",
                    (f"f{i}", f"fact {i}", f"h{i}", json.dumps(sources)),
                )
        assert schema.migrate(db) == [11]
        assert _links(db) == {("a", "f0"), ("b", "f0"), ("b", "f2")}  # only turn ids (text) are links
        assert schema.recall_generation(db) == 0
    finally:
        db.close()


def test_superseded_sources_reads_the_links_of_the_turns_asked_about(api: MemoryAPI) -> None:
    facts = api.tier2.facts
    hamburg = facts.store("User lives in Hamburg", subject="user", predicate="lives_in", object="Hamburg",
                          source_episodes=["t1", "t2"]).fact  # fmt: skip
    bremen = facts.store("User lives in Bremen", subject="user", predicate="lives_in", object="Bremen",
                         source_episodes=["t2"])  # fmt: skip
    assert bremen.superseded == (hamburg.uuid,)
    lisbon = facts.store("User lives in Lisbon", subject="user", predicate="lives_in", object="Lisbon",
                         source_episodes=["t3"])  # fmt: skip
    assert lisbon.superseded == (bremen.fact.uuid,)
    found = facts.superseded_sources(["t1", "t2", "t3", "nowhere"])
    assert set(found) == {"t1", "t2"}
    assert found["t1"].uuid == hamburg.uuid
    # t2 has two superseded facts: the most recently superseded one (Bremen, replaced by Lisbon).
    assert found["t2"].uuid == bremen.fact.uuid


def test_the_generation_moves_with_what_recall_reads_and_only_with_it(api: MemoryAPI) -> None:
    db = api.tier2.db
    api.remember_message("I adopted a beagle puppy named Biscuit.", "s1", T0, speaker="Caroline")
    assert api.flush(60)["data"]["drained"]
    fact = api.tier2.facts.store("Caroline's puppy is called Biscuit").fact
    seen = schema.recall_generation(db)
    version = db.data_version()
    api.tier2.facts.touch([fact.uuid])  # an access count: recall does not read it
    assert db.data_version() != version
    assert schema.recall_generation(db) == seen
    api.tier2.facts.note_recalled([fact.uuid])
    assert api.tier2.flush_accesses() == 1
    assert schema.recall_generation(db) == seen
    api.tier2.facts.store("Caroline walks Biscuit every morning")  # a fact: it does
    assert schema.recall_generation(db) > seen
    seen = schema.recall_generation(db)
    api.remember_message("We walk along the river.", "s1", T0 + 60, speaker="Caroline")  # a turn: it does
    assert api.flush(60)["data"]["drained"]
    assert schema.recall_generation(db) > seen


def test_a_snapshot_survives_a_commit_that_changes_nothing_recall_reads(api: MemoryAPI) -> None:
    api.remember_message("I adopted a beagle puppy named Biscuit.", "s1", T0, speaker="Caroline")
    assert api.flush(60)["data"]["drained"]
    fact = api.tier2.facts.store("Caroline's puppy is called Biscuit").fact
    reads = _reads.RecallReads(api.tier2)
    first = reads.snapshot()
    api.tier2.facts.touch([fact.uuid])
    assert reads.snapshot() is first
    api.tier2.facts.store("Caroline walks Biscuit every morning")
    assert reads.snapshot() is not first
