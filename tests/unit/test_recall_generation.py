"""Migration 11 (issue 13, bounded recall at scale): ``fact_sources`` keeps each fact's source turns as
rows, so ``superseded_sources`` reads only the links of the turns asked about; ``recall_generation`` moves
with every commit that changes a row recall reads, and only with those, so recall's read cache survives
the background worker's access-count flushes and queue bookkeeping."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from hermes_memory import MemoryAPI
from hermes_memory.recall import _reads, engine
from hermes_memory.tier2 import Database, SqliteDatabase, schema, search
from hermes_memory.tier2.facts import FactStore

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
    db = SqliteDatabase(tmp_path / "old.db")
    try:
        schema.migrate(db, schema.MIGRATIONS[:10])
        with db.atomic() as conn:
            for i, sources in enumerate((["a", "b"], [], ["b", 7])):
                conn.execute(
                    "INSERT INTO facts(uuid, content, content_hash, source_type, created_at, updated_at, "
                    "recorded_at, source_episodes) VALUES (?, ?, ?, 'user', 0, 0, 0, ?)",
                    (f"f{i}", f"fact {i}", f"h{i}", json.dumps(sources)),
                )
        assert schema.migrate(db, schema.MIGRATIONS[:11]) == [11]
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
    first_generation = first.generation
    api.tier2.facts.touch([fact.uuid])
    assert reads.snapshot() is first and first.generation == first_generation
    api.tier2.facts.store("Caroline walks Biscuit every morning")
    assert reads.snapshot().generation > first_generation


def test_a_common_term_is_ranked_over_the_newest_turns_only_a_rare_one_over_all(
    api: MemoryAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(12):
        api.remember_message(f"Another trip note number {i}.", "s1", T0 + i, speaker="Caroline")
    api.remember_message("The trip to Seoul was long.", "s1", T0 + 20, speaker="Caroline")  # row 13
    for i in range(12):
        api.remember_message(f"One more trip note number {i}.", "s1", T0 + 30 + i, speaker="Caroline")
    assert api.flush(60)["data"]["drained"]
    episodes, db = api.tier2.episodes, api.tier2.db
    assert search.window(db, "episodes_fts", "episodes", "trip seoul") is None  # 25 turns: all ranked
    exact = episodes.bm25_ranks("trip seoul", limit=50)
    assert len(exact) == 25
    monkeypatch.setattr(search, "RANKED_ROWS", 5)
    bounded = search.window(db, "episodes_fts", "episodes", "trip seoul")
    assert bounded is not None and bounded.rare == '"seoul"'
    assert bounded.floor == 25 - 5  # the newest 5 turns that match lie above it
    assert search.window(db, "episodes_fts", "episodes", "seoul") is None  # no common term
    ranked = episodes.bm25_ranks("trip seoul", limit=50)
    assert set(ranked) == {13, 21, 22, 23, 24, 25}  # the old rare match and the newest five
    assert next(iter(ranked)) == 13  # best first, as before
    for row_id in (21, 22, 23, 24, 25):
        assert ranked[row_id] == exact[row_id]  # every term counted over the window


def test_facts_at_scale_rank_the_same_window(api: MemoryAPI, monkeypatch: pytest.MonkeyPatch) -> None:
    facts = api.tier2.facts
    old = facts.store("User went on a trip to Seoul").fact
    for i in range(8):
        facts.store(f"User planned trip number {i}")
    exact = facts.bm25_scores("trip seoul", limit=20)
    monkeypatch.setattr(search, "RANKED_ROWS", 3)
    bounded = facts.bm25_scores("seoul trip", limit=20)  # (another query: the last window is kept)
    assert next(iter(bounded)) == next(iter(exact)) == old.uuid
    assert len(bounded) == 1 + 3 and set(bounded) < set(exact)


def test_at_scale_only_the_strongest_candidates_are_loaded(
    api: MemoryAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(30):
        api.remember_message(f"Gardening note {i}: basil in the garden.", f"s{i}", T0 + i, speaker="Caroline")
    api.remember_message("My garden tomatoes won the county fair prize.", "s99", T0 + 99, speaker="Caroline")
    assert api.flush(60)["data"]["drained"]
    tier2 = api.tier2
    loaded: list[int] = []
    rows_of = tier2.episodes.turn_rows

    def counting(ids: Sequence[int]) -> Any:
        loaded.extend(ids)
        return rows_of(ids)

    monkeypatch.setattr(tier2.episodes, "turn_rows", counting)
    settings = engine.RecallSettings(scale_candidates=3)
    small = engine.RecallEngine(tier2, None, None, None, settings)
    everything = small.recall("garden tomatoes prize", tiers=["tier2"])
    assert len(set(loaded)) == 31  # a small store: every candidate (and neighbour) is loaded
    loaded.clear()
    at_scale = dataclasses.replace(settings, scale_turns=10)  # the same store, "at scale" now
    large = engine.RecallEngine(tier2, None, None, None, at_scale)
    bounded = large.recall("garden tomatoes prize", tiers=["tier2"])
    assert len(set(loaded)) <= 3 * 3  # three candidates and their neighbours
    assert bounded[0].id == everything[0].id and bounded[0].text.startswith("My garden tomatoes")


def test_current_of_many_walks_every_chain_as_current_of_does(api: MemoryAPI) -> None:
    facts = api.tier2.facts

    def lives(city: str) -> Any:
        return facts.store(f"User lives in {city}", subject="user", predicate="lives_in", object=city)

    hamburg, bremen, lisbon = (lives(c).fact for c in ("Hamburg", "Bremen", "Lisbon"))
    pets = [facts.store(f"User has a {pet}", subject="user", predicate="has_pet", object=pet).fact
            for pet in ("cat", "dog")]  # fmt: skip
    assert facts.delete(pets[1].uuid)  # the chain from "cat" ends in an archived fact
    walked = [facts.get_many([u])[u] for u in (hamburg.uuid, bremen.uuid, lisbon.uuid, pets[0].uuid)]
    many = facts.current_of_many(walked)
    assert many == {f.uuid: facts.current_of(f) for f in walked}
    assert many[hamburg.uuid] is not None and many[hamburg.uuid].uuid == lisbon.uuid  # type: ignore[union-attr]
    assert many[lisbon.uuid] is None and many[pets[0].uuid] is None


def test_recall_walks_the_chains_of_replacements_in_one_read(
    api: MemoryAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    facts = api.tier2.facts
    moves = [facts.store(f"User lives in {city}", subject="user", predicate="lives_in", object=city).fact
             for city in ("Hamburg", "Bremen", "Kiel", "Porto", "Lisbon")]  # fmt: skip
    pets = [facts.store(f"User has a {pet}", subject="user", predicate="has_pet", object=pet).fact
            for pet in ("cat", "dog")]  # fmt: skip
    assert facts.delete(pets[1].uuid)
    walked = [facts.get_many([f.uuid])[f.uuid] for f in (*moves, pets[0])]
    asked = _asked_of(monkeypatch, "get_many_checked")
    reads = _reads.RecallReads(api.tier2).snapshot()
    for max_steps in (20, 2):
        assert reads.current_of_many(walked, max_steps=max_steps) == facts.current_of_many(
            walked, max_steps=max_steps
        )
    assert not asked  # every step read with the chains (a chain longer than ``max_steps`` too)
    assert reads.current_of_many(walked)[moves[0].uuid] == moves[-1]


def test_events_at_scale_are_ranked_over_the_same_window(
    api: MemoryAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Events (and every other ``bm25_uuid_scores`` store) rank a common word over the newest matching rows
    only, a rare one over all: an old event naming the rare word stays found, the middle ones drop."""
    timeline = api.tier2.timeline
    old = timeline.add("note", "Budget review for Orion", timestamp=T0)
    middle = [timeline.add("note", f"Budget review number {i}", timestamp=T0 + 10 + i) for i in range(6)]
    newest = [timeline.add("note", f"Budget review later {i}", timestamp=T0 + 40 + i) for i in range(3)]
    exact = timeline.bm25_scores("budget orion", limit=20)
    assert set(exact) == {old.uuid, *(e.uuid for e in middle + newest)}
    monkeypatch.setattr(search, "RANKED_ROWS", 3)
    bounded = timeline.bm25_scores("budget orion", limit=20)
    assert next(iter(bounded)) == next(iter(exact)) == old.uuid
    assert set(bounded) == {old.uuid, *(e.uuid for e in newest)}
    for event in newest:
        assert bounded[event.uuid] == exact[event.uuid]  # every term counted over the window


def test_a_turn_loaded_from_its_row_gives_the_episode_the_store_reads(api: MemoryAPI) -> None:
    from hermes_memory.recall.hits import Turn

    api.remember_message("Yes! Did you see the beagle show?", "s1", T0, speaker="Caroline",
                         metadata={"dia_id": "D1:3", "mood": ["glad", 2]})  # fmt: skip
    api.remember_message("I adopted a beagle named Biscuit.", "s1", T0 + 60, speaker="Melanie")
    assert api.flush(60)["data"]["drained"]
    episodes = api.tier2.episodes
    ids = [int(r[0]) for r in api.tier2.db.query("SELECT id FROM episodes ORDER BY id")]
    stored = episodes.by_ids(ids)
    for row in episodes.turn_rows(ids):
        turn = Turn.of_row(row)
        episode = stored[row[0]]
        # Built when first asked for, the same as the store's own read, and kept.
        assert turn.episode == episode and turn.episode is turn.episode
        eager = Turn.of_episode(episode, row[9])
        for name in ("uuid", "session_id", "role", "speaker", "text", "timestamp", "chatter", "question",
                     "plain", "speaker_key", "threat", "answers"):  # fmt: skip
            assert getattr(turn, name) == getattr(eager, name), name
        assert turn.hit == eager.hit
    assert stored[ids[0]].metadata["mood"] == ["glad", 2]


def test_superseded_statements_are_read_for_the_turns_shown_unless_asked_about_the_present(
    api: MemoryAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(6):
        api.remember_message(f"Our beagle walk number {i} went along the river.", "s1", T0 + 60 * i,
                             speaker="Caroline")  # fmt: skip
    api.remember_message("I live in Hamburg with my beagle.", "s1", T0 + 600, speaker="Caroline")
    assert api.flush(60)["data"]["drained"]
    found = api.tier2.db.query("SELECT uuid FROM episodes WHERE text LIKE '%Hamburg%'")
    hamburg = str(found[0][0])
    facts = api.tier2.facts
    facts.store("Caroline lives in Hamburg", subject="Caroline", predicate="lives_in", object="Hamburg",
                source_episodes=[hamburg])  # fmt: skip
    facts.store("Caroline lives in Lisbon", subject="Caroline", predicate="lives_in", object="Lisbon")
    asked = _asked_of(monkeypatch, "superseded_sources")
    hits = api.recall("beagle Hamburg", limit=2, tiers=["tier2"])["data"]["hits"]
    shown = {s for h in hits if h["kind"] == "episode" for s in h["source_ids"]}
    assert hamburg in shown and set(asked) == shown  # two turns read, of the seven loaded
    marked = next(h for h in hits if h["source_ids"] == [hamburg])
    assert marked["metadata"]["superseded_by"].startswith("Caroline lives in Lisbon")
    # About the present: a turn replaced on its topic is left out, so every turn loaded is read.
    asked.clear()
    now = api.recall("Where does Caroline live now with the beagle?", limit=2, tiers=["tier2"])
    assert all(h["source_ids"] != [hamburg] for h in now["data"]["hits"])
    every = {str(r[0]) for r in api.tier2.db.query("SELECT uuid FROM episodes")}
    assert len(every) == 7 and set(asked) | shown == every  # those not read just before are read now


def _asked_of(monkeypatch: pytest.MonkeyPatch, method: str) -> list[str]:
    """The uuids every call of ``FactStore.<method>`` is asked about from now on (it still answers)."""
    asked: list[str] = []
    real = getattr(FactStore, method)

    def spy(store: FactStore, uuids: Sequence[str]) -> Any:
        asked.extend(uuids)
        return real(store, uuids)

    monkeypatch.setattr(FactStore, method, spy)
    return asked
