"""Migration 12 (issue 13, recall while the agent writes): every commit that changes a row recall reads
logs which rows (``recall_changes``), and recall's read cache drops those rows only — the turn written
and the one before it in its session, the facts written or reinforced, the turns whose superseded facts
changed — and keeps the rest; by this process or another. What cannot be told row by row (too many
changes, pruned ones, a turn moved to another session) starts the cache over."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_memory import MemoryAPI
from hermes_memory.recall import _reads
from hermes_memory.tier2 import SqliteDatabase, schema
from hermes_memory.tier2.episodes import EpisodeStore
from hermes_memory.tier2.facts import FactStore

T0 = 1_683_540_000.0  # 2023-05-08
HASHING: dict[str, Any] = {"tier3.embedding_model": "hashing", "tier3.backend": "memory"}
SESSION = [
    "I adopted a beagle puppy named Biscuit last spring.",
    "Biscuit the beagle sleeps on my bed every night.",
    "My beagle Biscuit loves the river walks.",
]


@pytest.fixture
def api(tmp_path: Path) -> Iterator[MemoryAPI]:
    mem = MemoryAPI(hermes_home=tmp_path, **HASHING)
    yield mem
    mem.close()


class _Spy:
    """Records the keys a store method is asked for (the rows recall reads from Tier 2)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, cls: type, name: str, arg: int = 0):
        self.asked: list[Any] = []
        real: Callable[..., Any] = getattr(cls, name)

        def spy(store: Any, *args: Any) -> Any:
            self.asked.extend(args[arg])
            return real(store, *args)

        monkeypatch.setattr(cls, name, spy)

    def take(self) -> set[Any]:
        asked, self.asked = set(self.asked), []
        return asked


def _ids(api: MemoryAPI) -> dict[str, int]:
    return {str(r["text"]): int(r["id"]) for r in api.tier2.db.query("SELECT id, text FROM episodes")}


def _remember(api: MemoryAPI, text: str, session: str, at: float) -> None:
    api.remember_message(text, session, at, speaker="Caroline")
    assert api.flush(60)["data"]["drained"]


def test_a_turn_written_between_two_recalls_is_all_the_next_one_reads_again(
    api: MemoryAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i, text in enumerate(SESSION):
        _remember(api, text, "s1", T0 + 60 * i)
    _remember(api, "The beagle show in Hamburg was great fun.", "s2", T0 + 600)
    rows = _Spy(monkeypatch, EpisodeStore, "recall_rows")
    turns = _Spy(monkeypatch, EpisodeStore, "turn_rows")
    first = [h["text"] for h in api.recall("beagle", tiers=["tier2"])["data"]["hits"]]
    assert set(SESSION) <= set(first)
    assert rows.take() and turns.take()
    api.recall("beagle", tiers=["tier2"])
    assert not rows.take() and not turns.take()  # nothing committed: everything kept
    new = "Biscuit the beagle learned to swim today."
    _remember(api, new, "s1", T0 + 300)
    hits = [h["text"] for h in api.recall("beagle", tiers=["tier2"])["data"]["hits"]]
    assert new in hits
    ids = _ids(api)
    # Read again: the new turn and the one before it in its session (its next turn moved); not the
    # other turns of that session, nor the other session's.
    assert rows.take() <= {ids[new], ids[SESSION[-1]]}
    assert turns.take() == {ids[new], ids[SESSION[-1]]}


def test_another_process_changing_a_turn_drops_that_turn_only(
    api: MemoryAPI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i, text in enumerate(SESSION):
        _remember(api, text, "s1", T0 + 60 * i)
    turns = _Spy(monkeypatch, EpisodeStore, "turn_rows")
    api.recall("beagle", tiers=["tier2"])
    turns.take()
    ids = _ids(api)
    other = SqliteDatabase(api.tier2.db.path)  # another process's connection: a verdict rescan, say
    try:
        other.execute("UPDATE episodes SET threat = 0 WHERE id = ?", (ids[SESSION[1]],))
    finally:
        other.close()
    api.recall("beagle", tiers=["tier2"])
    assert turns.take() == {ids[SESSION[1]]}  # its cached verdict would be stale: read again, alone


def test_a_fact_reinforced_is_read_again_and_the_others_are_kept(
    api: MemoryAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    facts = api.tier2.facts
    dog = facts.store("Caroline's beagle is called Biscuit", source_episodes=["t1"]).fact
    walk = facts.store("Caroline walks her beagle by the river", source_episodes=["t2"]).fact
    shown = _Spy(monkeypatch, FactStore, "get_many_checked")
    ranked = _Spy(monkeypatch, FactStore, "ranking_rows")
    assert {h["id"] for h in api.recall("beagle", tiers=["tier2"])["data"]["hits"]} == {
        f"fact:{dog.uuid}",
        f"fact:{walk.uuid}",
    }
    assert shown.take() == ranked.take() == {dog.uuid, walk.uuid}
    again = facts.store("Caroline's beagle is called Biscuit", source_episodes=["t3"])  # reinforced
    assert not again.created
    api.recall("beagle", tiers=["tier2"])
    assert shown.take() == ranked.take() == {dog.uuid}


def test_a_fact_superseded_after_a_recall_marks_its_turn_in_the_next(api: MemoryAPI) -> None:
    _remember(api, "I live in Hamburg now, near the harbour.", "s1", T0)
    turn = api.tier2.db.query("SELECT uuid FROM episodes")[0]["uuid"]
    facts = api.tier2.facts
    facts.store("User lives in Hamburg", subject="user", predicate="lives_in", object="Hamburg",
                source_episodes=[turn])  # fmt: skip
    before = api.recall("Hamburg harbour", tiers=["tier2"])["data"]["hits"]
    assert not any(h["metadata"].get("superseded_by") for h in before if h["kind"] == "episode")
    facts.store("User lives in Lisbon", subject="user", predicate="lives_in", object="Lisbon")
    after = api.recall("Hamburg harbour", tiers=["tier2"])["data"]["hits"]
    marked = [h for h in after if h["kind"] == "episode" and "Hamburg" in h["text"]]
    assert marked and marked[0]["metadata"].get("superseded_by")


def test_what_cannot_be_told_row_by_row_starts_over(api: MemoryAPI, monkeypatch: pytest.MonkeyPatch) -> None:
    for i, text in enumerate(SESSION):
        _remember(api, text, "s1", T0 + 60 * i)
    reads = _reads.RecallReads(api.tier2)
    first = reads.snapshot()
    api.tier2.facts.store("Caroline's beagle is called Biscuit")
    assert reads.snapshot() is first  # one fact: told row by row
    monkeypatch.setattr(_reads, "_MAX_CHANGES", 2)
    api.tier2.facts.store("Caroline walks her beagle by the river")
    api.tier2.facts.store("Caroline's beagle sleeps on her bed")
    api.tier2.facts.store("Caroline's beagle swims")
    second = reads.snapshot()
    assert second is not first  # more than _MAX_CHANGES rows
    ids = _ids(api)
    api.tier2.db.execute("UPDATE episodes SET session_id = 's9' WHERE id = ?", (ids[SESSION[0]],))
    assert reads.snapshot() is not second  # a turn moved to another session: its old neighbours too


def test_the_changes_log_tells_what_it_can(api: MemoryAPI) -> None:
    db = api.tier2.db
    start = schema.recall_generation(db)
    assert schema.recall_changes(db, start, 10) == (start, [])
    fact = api.tier2.facts.store("Caroline's beagle is called Biscuit").fact
    now, changes = schema.recall_changes(db, start, 10)
    assert now == start + 1 and changes == [("fact", fact.uuid)]
    assert schema.recall_changes(db, start, 0) == (now, None)  # more than the limit
    assert schema.recall_changes(db, now + 5, 10) == (now, None)  # another store's generation
    db.execute("DELETE FROM recall_changes")  # pruned
    assert schema.recall_changes(db, start, 10) == (now, None)


def test_the_log_keeps_only_the_newest_generations(api: MemoryAPI) -> None:
    db = api.tier2.db
    db.execute("UPDATE recall_generation SET n = 100000")
    db.execute(
        "INSERT INTO recall_changes(gen, kind, key) VALUES (10, 'fact', 'old'), (95000, 'fact', 'kept')"
    )
    api.tier2.facts.store("Caroline's beagle is called Biscuit")  # generation 100001: prunes <= 90001
    keys = {r["key"] for r in db.query("SELECT key FROM recall_changes")}
    assert "old" not in keys and "kept" in keys


def test_migration_12_logs_the_writes_after_it(tmp_path: Path) -> None:
    db = SqliteDatabase(tmp_path / "old.db")
    try:
        schema.migrate(db, schema.MIGRATIONS[:11])
        with db.atomic() as conn:
            conn.execute(
                "INSERT INTO facts(uuid, content, content_hash, source_type, created_at, updated_at, "
                "recorded_at, source_episodes) VALUES ('f0', 'old fact', 'h0', 'user', 0, 0, 0, ?)",
                (json.dumps(["t0"]),),
            )
        before = schema.recall_generation(db)
        assert schema.migrate(db, schema.MIGRATIONS[:12]) == [12]
        assert schema.recall_generation(db) == before
        assert schema.recall_changes(db, before - 1, 10) == (before, None)  # from before the log
        db.execute("UPDATE facts SET superseded_at = 5 WHERE uuid = 'f0'")
        now, changes = schema.recall_changes(db, before, 10)
        assert now == before + 1 and changes == [("fact", "f0"), ("source", "t0")]
    finally:
        db.close()


def test_a_row_read_while_a_change_is_applied_is_not_kept(api: MemoryAPI) -> None:
    snapshot = _reads.ReadsSnapshot(api.tier2, version=0)

    def load(keys: list[int]) -> dict[int, str]:
        snapshot.forget([("episode", k) for k in keys])  # the change lands while the row is read
        return {k: "as read" for k in keys}

    assert snapshot.turns([1, 2], load) == {1: "as read", 2: "as read"}
    assert snapshot.turns([1], lambda keys: {k: "read again" for k in keys}) == {1: "read again"}
