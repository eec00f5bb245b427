"""What recall keeps between recalls (issue 13): Tier 2 reads kept while nothing is committed
(``Database.data_version``), brought up to date after any commit, by this process or another one; and the
vectorised MMR order, equal to the pair-by-pair one it replaced."""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from hermes_memory import MemoryAPI
from hermes_memory.recall import _reads
from hermes_memory.recall.present import content_words
from hermes_memory.recall.scoring import WordBits, diversified
from hermes_memory.records import Hit
from hermes_memory.tier2 import SqliteDatabase

T0 = 1_683_540_000.0  # 2023-05-08
HASHING: dict[str, Any] = {"tier3.embedding_model": "hashing", "tier3.backend": "memory"}


@pytest.fixture
def api(tmp_path: Path) -> Iterator[MemoryAPI]:
    mem = MemoryAPI(hermes_home=tmp_path, **HASHING)
    yield mem
    mem.close()


def test_data_version_changes_with_every_commit_of_any_connection(tmp_path: Path) -> None:
    db = SqliteDatabase(tmp_path / "v.db")
    other = SqliteDatabase(tmp_path / "v.db")
    try:
        db.execute("CREATE TABLE t (x INTEGER)")
        seen = db.data_version()
        with db.reading():
            db.query("SELECT count(*) FROM t")
        assert db.data_version() == seen  # reads change nothing
        with db.atomic() as conn:  # this process's writer
            conn.execute("INSERT INTO t VALUES (1)")
        assert db.data_version() != seen
        seen = db.data_version()
        with other.atomic() as conn:  # another connection (as another process)
            conn.execute("INSERT INTO t VALUES (2)")
        assert db.data_version() != seen
        seen = db.data_version()
        db.execute("INSERT INTO t VALUES (3)")  # a single-statement write commits too
        assert db.data_version() != seen
    finally:
        other.close()
        db.close()


def test_a_snapshot_is_kept_until_something_is_committed(api: MemoryAPI) -> None:
    api.remember_message("I adopted a beagle puppy named Biscuit.", "s1", T0, speaker="Caroline")
    assert api.flush(60)["data"]["drained"]
    reads = _reads.RecallReads(api.tier2)
    first = reads.snapshot()
    seen = (first.version, first.generation)
    api.recall("beagle puppy")
    assert reads.snapshot() is first and (first.version, first.generation) == seen
    api.fact_store("Caroline's puppy is called Biscuit")
    assert reads.snapshot() is first  # kept, without the rows the commit changed (test_recall_changes)
    assert first.version != seen[0] and first.generation > seen[1]


def test_a_turn_appended_after_a_recall_is_its_neighbours_next(api: MemoryAPI, tmp_path: Path) -> None:
    """The first recall reads the strong turn as the last of its session (no next turn); a turn added
    after it, by this process or another one, is pulled in by the next recall."""
    api.remember_message("I adopted a beagle puppy named Biscuit last spring.", "s1", T0, speaker="Caroline")
    assert api.flush(60)["data"]["drained"]
    assert _turns(api, "beagle puppy") == ["I adopted a beagle puppy named Biscuit last spring."]
    walk = "We walk along the river every morning before work."
    api.remember_message(walk, "s1", T0 + 60, speaker="Caroline")
    assert api.flush(60)["data"]["drained"]
    assert walk in _turns(api, "beagle puppy")
    other = MemoryAPI(hermes_home=tmp_path, **HASHING)  # a second process on the same home
    try:
        other.remember_message("Then we have breakfast on the balcony.", "s1", T0 + 120, speaker="Caroline")
        assert other.flush(60)["data"]["drained"]
    finally:
        other.close()
    assert "Then we have breakfast on the balcony." in _turns(api, "walk along the river")


def _turns(api: MemoryAPI, query: str) -> list[str]:
    env = api.recall(query, tiers=["tier2"])
    assert env["success"], env["error"]
    return [h["text"] for h in env["data"]["hits"] if h["kind"] == "episode"]


def test_a_fact_that_expires_between_two_recalls_is_left_out(
    api: MemoryAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    fact = api.fact_store("Caroline's sister Ana visits until Friday", expires_at=time.time() + 3600)
    assert fact["success"], fact["error"]
    ids = [h["id"] for h in api.recall("sister Ana visits", tiers=["tier2"])["data"]["hits"]]
    assert ids == [f"fact:{fact['data']['uuid']}"]

    class Later:
        @staticmethod
        def time() -> float:
            return time.time() + 7200  # past its expiry, with nothing committed since the last recall

    monkeypatch.setattr(_reads, "time", Later)
    assert api.recall("sister Ana visits", tiers=["tier2"])["data"]["hits"] == []


def test_rows_without_a_change_log_are_kept_only_while_nothing_is_committed(api: MemoryAPI) -> None:
    """``settled_rows`` (events, entity cards, an entity's facts): kept by key while the version holds,
    read again after any commit; by key in the order asked, those the store does not find left out."""
    api.remember_message("I adopted a beagle puppy named Biscuit.", "s1", T0, speaker="Caroline")
    assert api.flush(60)["data"]["drained"]
    reads = _reads.RecallReads(api.tier2)
    asked: list[list[str]] = []

    def load(keys: list[str]) -> dict[str, str]:
        asked.append(keys)
        return {key: key.upper() for key in keys if key != "gone"}

    snapshot = reads.snapshot()
    assert snapshot.settled_rows("cards", ["b", "gone", "a", "b"], load) == {"b": "B", "a": "A"}
    assert snapshot.settled_rows("cards", ["a", "c"], load) == {"a": "A", "c": "C"}
    assert snapshot.settled_rows("events", ["a"], load) == {"a": "A"}  # each kind on its own
    assert asked == [["b", "gone", "a"], ["c"], ["a"]]
    api.fact_store("Caroline's puppy is called Biscuit")
    assert reads.snapshot() is snapshot
    assert snapshot.settled_rows("cards", ["a", "gone"], load) == {"a": "A"}
    assert asked[-1] == ["a", "gone"]  # read again: something was committed


def _diversify_pairwise(
    ranked: list[Hit],
    weight: float,
    limit: int,
    same_session: float = 0.0,
    caps: dict[str, int] | None = None,
) -> list[Hit]:
    """The MMR order as it was computed before, pair by pair: the reference for ``diversified``."""
    pool = ranked[: 3 * limit]
    words = [content_words(h.text) for h in pool]
    sessions = [h.metadata.get("session_id") for h in pool]
    overlap = [0.0] * len(pool)
    chosen: list[int] = []
    left = list(range(len(pool)))
    room = dict(caps) if caps is not None else None
    while left and len(chosen) < limit:
        open_left = [i for i in left if room is None or room.get(pool[i].tier, 0) > 0]
        if not open_left:
            break
        best = max(open_left, key=lambda i: pool[i].score - weight * overlap[i])
        chosen.append(best)
        left.remove(best)
        if room is not None:
            room[pool[best].tier] -= 1
        for i in left:
            common = len(words[i] & words[best])
            value = common / (len(words[i]) + len(words[best]) - common or 1)
            if sessions[best] is not None and sessions[i] == sessions[best]:
                value += same_session
            overlap[i] = max(overlap[i], value)
    out: list[Hit] = []
    for i in chosen:
        hit = pool[i]
        out.append(replace(hit, score=min(hit.score, out[-1].score)) if out else hit)
    return out


def _diversified(
    ranked: list[Hit], weight: float, limit: int, same_session: float, caps: dict[str, int] | None
) -> list[Hit]:
    """``diversified`` over recall's pool (the best ``3 * limit`` hits), its picks as hits."""
    pool = ranked[: 3 * limit]
    picked = diversified([h.text for h in pool], [h.score for h in pool],
                         [h.metadata.get("session_id") for h in pool], [h.tier for h in pool],
                         weight, limit, same_session, caps)  # fmt: skip
    return [replace(pool[i], score=score) for i, score in picked]


def test_the_mmr_order_equals_the_pairwise_one() -> None:
    rng = random.Random(13)
    vocabulary = [f"word{i}" for i in range(40)] + ["the", "a", "of", ""]
    for _ in range(300):
        # Scores rounded to few digits tie often: ties must break the same way.
        hits = [_random_hit(rng, i, vocabulary) for i in range(rng.randrange(0, 40))]
        hits.sort(key=lambda h: -h.score)
        for weight in (0.0, 0.4, 2.0):
            for limit in (1, 3, 10):
                for same in (0.0, 0.25):
                    for caps in (None, {"tier2": 2, "tier3": 4}):
                        expected = _diversify_pairwise(hits, weight, limit, same, caps)
                        assert _diversified(hits, weight, limit, same, caps) == expected


def test_word_bits_kept_across_calls_count_the_shared_words_also_after_starting_over() -> None:
    bits = WordBits(max_words=6, max_texts=4)  # small bounds: numbering starts over again and again
    rng = random.Random(5)
    vocabulary = [f"word{i}" for i in range(15)]
    for _ in range(50):
        texts = [" ".join(rng.choice(vocabulary) for _ in range(rng.randrange(0, 6))) for _ in range(5)]
        masks, sizes = bits.of(texts)
        for a, text_a in enumerate(texts):
            assert sizes[a] == len(content_words(text_a))
            for b, text_b in enumerate(texts):
                shared = len(content_words(text_a) & content_words(text_b))
                assert (masks[a] & masks[b]).bit_count() == shared


def _random_hit(rng: random.Random, i: int, vocabulary: list[str]) -> Hit:
    text = " ".join(rng.choice(vocabulary) for _ in range(rng.randrange(0, 12)))
    meta = {"session_id": rng.choice(["s1", "s2", "s3", None])}
    score = round(rng.random(), rng.choice([1, 2, 6]))
    return Hit(id=f"h{i}", score=score, text=text, tier=rng.choice(["tier2", "tier3"]), kind="episode",
               metadata=meta)  # fmt: skip


def test_recall_rows_come_by_id_then_by_uuid(api: MemoryAPI) -> None:
    for i in range(8):
        api.remember_message(f"Turn number {i} about gardening.", "s1", T0 + i, speaker="Caroline")
    assert api.flush(60)["data"]["drained"]
    episodes = api.tier2.episodes
    rows = episodes.recall_rows([5, 2, 7], [])
    assert [r[0] for r in rows] == [2, 5, 7]
    assert [(r[2], r[3]) for r in rows] == [(1, 3), (4, 6), (6, 8)]
    everything = episodes.recall_rows(list(range(1, 9)), [])
    uuids = [r[1] for r in everything]
    by_uuid = episodes.recall_rows([4], uuids[::-1])
    assert by_uuid[0][0] == 4 and [r[1] for r in by_uuid[1:]] == sorted(u for u in uuids if u != uuids[3])
    snapshot = _reads.ReadsSnapshot(api.tier2, 0)
    assert snapshot.episode_rows([4], uuids[::-1]) == by_uuid
    assert snapshot.episode_rows([4], uuids[::-1]) == by_uuid  # the second time from what it kept
